"""The validation edge: read every file the configuration names, run every core check, collect.

Nothing here decides what is wrong (core/ does); this module only reads bytes, turns a missing
or unreadable file into a finding, and puts the pieces together in order: probe files (JSONL,
schema, semantics, duplicate ids, twins), prompt template, sealed manifest and probe lock,
leaks against the training files, coverage. Every problem lands in one `ValidationOutcome`, so
`evalgate validate` and `evalgate run` report all of them at once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evalgate import safe_yaml
from evalgate.config import GateConfig
from evalgate.edges.files import display_path
from evalgate.edges.input_files import NotRegularFile, TooLarge, read_input
from evalgate.edges.inputs import allowed_roots, input_problem
from evalgate.errors import EvalgateError
from evalgate.probeset.corpus import read_sentences
from evalgate.probeset.coverage import coverage_findings, coverage_matrix, reason_code_findings
from evalgate.probeset.encoding import utf16_kind, utf16_message
from evalgate.probeset.grammar import Grammar, grammar_from_dict
from evalgate.probeset.jsonl import parse_jsonl
from evalgate.probeset.leaks import LeakIndex, find_leaks
from evalgate.probeset.manifest import (
    ProbeFile,
    check_manifest,
    manifest_problems,
    probe_set_digest,
)
from evalgate.probeset.records import duplicate_ids, expected_category, probes_from_records, record_id, twins
from evalgate.report.coverage_table import coverage_rows
from evalgate.types import BLANK, Finding, Probe
from evalgate.validation_baseline import baseline_findings

MANIFEST_NAME = "MANIFEST.json"
# libyaml's safe loader when present: the same safe subset, ~10x faster on the 300-line verb table.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
TEMPLATE_SLOT = "{prompt}"

_MISSING_HINTS = {
    "probes": "check the path (--probes, or `probes:` in evalgate.yml); `evalgate probes build` writes the "
    "shipped set",
    "train": "check the path (--train, or `train:` in evalgate.yml); `train: []` skips leak detection",
    "template": "check `template:` in evalgate.yml; the file holds the prompt template with {prompt} once",
    "grammar": "check `grammar:` in evalgate.yml (the verb table, data/grammar/verbs.yaml)",
    "manifest": "check `manifest:` in evalgate.yml: it names a file, which `evalgate probes seal` writes",
}


# Findings that are gate changes against the baseline (docs/approval.md), not defects of the set.
APPROVABLE_CHECKS = frozenset({"deleted-since-baseline", "manifest-version-back"})


@dataclass(frozen=True)
class ValidationOutcome:
    probes: tuple[Probe, ...]  # every parsed probe, deprecated included, in file order
    findings: tuple[Finding, ...]  # blocking failures; empty = ok
    warnings: tuple[Finding, ...]  # non-blocking (unsealed set, twins, ...)
    leaks: tuple[Finding, ...]  # every leak finding (also in findings unless leaks.policy == "exclude")
    excluded: frozenset[str]  # ids left out under leaks.policy == "exclude"
    coverage: dict  # the matrix, JSON-able
    inputs: dict[str, dict]  # display path -> {"sha256", "bytes", "role"} for every file read
    probe_set: dict  # {"version", "digest", "files": {path: {"sha256", "cases"}}, "n_generated", "n_hand"}
    template: str | None  # the prompt template text, validated (None when missing or invalid)

    @property
    def ok(self) -> bool:
        return not self.findings

    def with_approvable_as_warnings(self) -> ValidationOutcome:
        """The outcome with the gate changes a maintainer can approve moved to the warnings.

        `validate` refuses a probe deleted since the baseline and a manifest version set back;
        `run` leaves them to the gate-change check against the baseline, which refuses them
        unless approved and names what approves them (docs/approval.md); `probes seal` and
        `baseline update` record them as they are.
        """
        moved = tuple(f for f in self.findings if f.check in APPROVABLE_CHECKS)
        if not moved:
            return self
        kept = tuple(f for f in self.findings if f.check not in APPROVABLE_CHECKS)
        return dataclasses.replace(self, findings=kept, warnings=(*self.warnings, *moved))


def probe_paths(cfg: GateConfig, probe_files: Sequence[str] | None) -> list[Path]:
    """The probe files, each once: a file named twice would read as every id used twice."""
    paths = [cfg.path(p) for p in (probe_files if probe_files else cfg.probes)]
    first: dict[Path, Path] = {}
    for p in paths:
        first.setdefault(p.resolve(), p)
    return list(first.values())


def same_file_findings(role: str, named: Sequence[tuple[str, Path]]) -> list[Finding]:
    """Configured names that resolve to a file another name already names (a symlink, `a/../a`).

    Each configured file counts once, as itself: read once under two names, the first file's
    probes would silently be dropped (docs/probes.md, "Configured files").
    """
    first: dict[Path, str] = {}
    out = []
    for b, p in named:  # as configured: a display path would show the symlink's target
        key = p.resolve()
        if key in first:
            a = first[key]
            same = "is listed twice" if a == b else f"and {a} are the same file ({key})"
            out.append(
                Finding(
                    "file-twice",
                    f"the {role} file {b} {same}: every configured file must be a file of its own",
                    b,
                    hint=f"list each {role} file once; if one was replaced by a symlink to another, restore "
                    "it from version control",
                )
            )
        else:
            first[key] = b
    return out


def manifest_path(cfg: GateConfig, probe_files: Sequence[str] | None) -> Path:
    """The configured manifest; for explicit probe files elsewhere, MANIFEST.json beside the first."""
    configured = cfg.path(cfg.manifest)
    if probe_files:
        first = probe_paths(cfg, probe_files)[0]
        if first.parent.resolve() != configured.parent.resolve():
            return first.parent / MANIFEST_NAME
    return configured


def manifest_key(manifest: Path, probe_file: Path) -> str:
    """A probe file's name in the manifest: relative to the manifest's folder, so sets can move."""
    return Path(os.path.relpath(probe_file.resolve(), manifest.parent.resolve())).as_posix()


class _Collector:
    """Reads files once, records them as inputs, and turns I/O failures into findings."""

    def __init__(
        self, root: Path, contents: Mapping[Path, bytes] | None = None, roots: Sequence[Path] | None = None
    ):
        self.root = root
        # Where inputs may resolve (edges/inputs.py): a symlink out of the repository is refused.
        self.roots = tuple(roots) if roots is not None else allowed_roots(root)
        # Would-be file contents (resolved path -> bytes): `probes import`/`deprecate` validate
        # the result of a change before writing it.
        self.contents = {p.resolve(): b for p, b in (contents or {}).items()}
        self.inputs: dict[str, dict[str, Any]] = {}
        self.findings: list[Finding] = []
        self.warnings: list[Finding] = []

    def show(self, path: Path) -> str:
        return display_path(self.root, path)

    def read(self, path: Path, role: str, what: str) -> bytes | None:
        shown = self.show(path)
        refused = None if path.resolve() in self.contents else input_problem(path, self.roots)
        try:
            if refused:
                raise _Unreadable(refused)
            data = (
                self.contents[path.resolve()] if path.resolve() in self.contents else read_input(path, role)
            )
        except _Unreadable as exc:
            problem = f"{what}: {exc}"
        except NotRegularFile as exc:
            problem = f"the {what} is {exc.kind}, not a regular file"
            if exc.kind == "a directory":
                problem = f"{what} is a directory, not a file"
        except TooLarge as exc:
            problem = (
                f"the {what} is larger than the {exc.cap // (1 << 20)} MiB evalgate reads for a {role} file "
                f"({exc.size:,} bytes or more): not read"
            )
        except FileNotFoundError:
            problem = f"{what} not found"
            if not Path(shown).is_absolute() and Path(shown).exists():
                # Shown relative to the config's folder, and a file by that name exists where the
                # command runs (`--config other/evalgate.yml`): say where it was looked for.
                problem += (
                    f" (looked for {path.absolute()}; paths in a configuration are relative to its folder)"
                )
        except IsADirectoryError:
            problem = f"{what} is a directory, not a file"
        except OSError as exc:
            problem = f"cannot read the {what}: {exc.strerror or exc}"
        else:
            self.inputs[shown] = {
                "sha256": hashlib.sha256(data).hexdigest(),
                "bytes": len(data),
                "role": role,
            }
            return data
        self.findings.append(Finding("file-missing", problem, shown, hint=_MISSING_HINTS.get(role)))
        return None


class _Unreadable(Exception):
    """A file that is not read at all: outside the repository, not a regular file, too big."""


class _RepeatedKey(ValueError):
    def __init__(self, key: Any, first: int, again: int):
        super().__init__(key)
        self.key, self.first, self.again = key, first, again


class _GrammarLoader(_YAML_LOADER):  # type: ignore[misc,valid-type]
    """YAML keeps the last of two equal keys silently: a verb written twice would hide its first entry."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, str | int | float | bool):
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise _RepeatedKey(key, seen[key], line)
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


def _load_grammar(cfg: GateConfig, col: _Collector) -> Grammar | None:
    path = cfg.path(cfg.grammar)
    data = col.read(path, "grammar", "grammar table")
    if data is None:
        return None
    shown = col.show(path)
    try:
        return grammar_from_dict(safe_yaml.load(data.decode("utf-8"), _GrammarLoader), shown)
    except _RepeatedKey as exc:
        message = (
            f"'{exc.key}' appears twice (lines {exc.first} and {exc.again}); YAML would keep the last one"
        )
        col.findings.append(Finding("grammar", message, shown, exc.again, hint="keep one of the two entries"))
    except yaml.YAMLError as exc:
        problem, line = safe_yaml.describe(exc)
        # the problem, not PyYAML's whole report (kilobytes of context on a long line)
        problem = problem if len(problem) <= 200 else problem[:199] + "…"
        col.findings.append(Finding("grammar", f"cannot read the grammar table: {problem}", shown, line))
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        msg = f"cannot read the grammar table: byte {exc.start + 1} is not valid UTF-8"
        col.findings.append(Finding("grammar", msg, shown, line))
    except RecursionError:
        col.findings.append(Finding("grammar", "cannot read the grammar table: nested too deeply", shown))
    except EvalgateError as exc:
        col.findings.append(Finding("grammar", exc.message, shown, hint=_MISSING_HINTS["grammar"]))
    return None


def _load_template(cfg: GateConfig, col: _Collector) -> str | None:
    path = cfg.path(cfg.template)
    data = col.read(path, "template", "prompt template")
    if data is None:
        return None
    shown = col.show(path)
    if kind := utf16_kind(data):
        message = utf16_message(kind, data.startswith((b"\xff\xfe", b"\xfe\xff")))
        col.findings.append(Finding("template", message, shown, 1, hint="save the template as UTF-8"))
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        msg = f"byte {exc.start + 1} is not valid UTF-8"
        col.findings.append(Finding("template", msg, shown, line, hint="save the template as UTF-8"))
        return None
    odd = [
        (i, what)
        for i, what in (
            (text.find("\ufeff"), "a byte-order mark (U+FEFF)"),
            (text.find("\r"), "a carriage return (CRLF line endings)"),
            (
                next((i for i, ch in enumerate(text) if unicodedata.category(ch) == "Cf"), -1),
                "an invisible character",
            ),
        )
        if i >= 0
    ]
    if odd:
        at, what = min(odd)
        col.findings.append(
            Finding(
                "template",
                f"the prompt template holds {what}: the model would read it around every prompt",
                shown,
                text.count("\n", 0, at) + 1,
                hint="save the template as UTF-8 without a byte-order mark, with LF line endings (add "
                "`*.txt text eol=lf` to .gitattributes if git converts them)",
            )
        )
        return None
    n = text.count(TEMPLATE_SLOT)
    if n != 1:
        col.findings.append(
            Finding(
                "template",
                f"the prompt template must contain {TEMPLATE_SLOT} exactly once (found {n})",
                shown,
                hint=f"write the template with a single {TEMPLATE_SLOT} where each probe's prompt goes",
            )
        )
        return None
    if BLANK in text:
        line = text[: text.index(BLANK)].count("\n") + 1
        col.findings.append(
            Finding(
                "template",
                f"the prompt template contains {BLANK} itself; only the prompt may hold the blank",
                shown,
                line,
                hint=f"remove the {BLANK} from the template: each probe's prompt brings its own blank",
            )
        )
        return None
    return text


# Edits that change a file's bytes but no record (an editor or git's core.autocrlf): name them, so
# the user knows re-sealing is safe.
_FORMAT_ONLY: tuple[tuple[str, Any], ...] = (
    ("CRLF line endings (git core.autocrlf?); the sealed file had LF", lambda b: b.replace(b"\r\n", b"\n")),
    ("a byte-order mark was added", lambda b: b.removeprefix(b"\xef\xbb\xbf")),
    ("the final newline was removed", lambda b: b + b"\n"),
    ("blank lines were added at the end", lambda b: b.rstrip(b"\n") + b"\n"),
    ("whitespace was added at line ends", lambda b: b"\n".join(x.rstrip() for x in b.split(b"\n"))),
)


def _format_only(data: bytes, sealed_sha: str) -> str | None:
    for what, undo in _FORMAT_ONLY:
        if hashlib.sha256(undo(data)).hexdigest() == sealed_sha:
            return what
    return None


def _locate_in_manifest(
    f: Finding, shown: str, text: str, doc: dict, contents: Mapping[str, bytes]
) -> Finding:
    """A line for findings about the manifest's own entries; the cause of a formatting-only change."""
    if f.check in ("lock-removed", "manifest-lock-edited") and f.file == shown and f.probe_id:
        needle = json.dumps(f.probe_id) + ":"
        lock_at = text.find('"lock":')
        at = text.find(needle, max(lock_at, 0))
        if at >= 0:
            return dataclasses.replace(f, line=text.count("\n", 0, at) + 1)
    if f.check == "manifest-file-changed" and f.file in contents:
        what = _format_only(contents[f.file], f.evidence.get("sealed", ""))
        if what:
            message = f"{f.message}: only the formatting changed ({what}), every probe reads the same"
            hint = (
                "restore the file's formatting, or re-seal with `evalgate probes seal` (the probes are "
                "unchanged)"
            )
            return dataclasses.replace(f, message=message, hint=hint, line=1)
    return f


class _TwiceInManifest(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _strict_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A lock entry given twice (the old hash, then a forged one) must not resolve to the last."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _TwiceInManifest(key)
        out[key] = value
    return out


def _check_manifest(
    path: Path,
    col: _Collector,
    files: list[tuple[Path, ProbeFile]],
    probes: list[Probe],
    seen: set[str] | None,
    contents: Mapping[str, bytes],
) -> str | None:
    """Check the seal and the lock; the sealed version, or None for an unsealed/invalid manifest."""
    shown = col.show(path)
    if not path.exists():
        col.warnings.append(
            Finding(
                "manifest-missing",
                "the probe set is not sealed (no manifest at this path): version and probe lock not checked",
                shown,
                hint="seal it with `evalgate probes seal` once the set is final",
            )
        )
        return None
    data = col.read(path, "manifest", "manifest")
    if data is None:
        return None
    try:
        doc = json.loads(data.decode("utf-8"), object_pairs_hook=_strict_object)
        problems = manifest_problems(doc)
    except _TwiceInManifest as exc:
        problems = [f'key "{exc.key}" appears twice in one object (JSON keeps the last one silently)']
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        problems = [f"not valid JSON ({exc})"]
    if problems:
        col.findings.append(
            Finding(
                "manifest-invalid",
                "the sealed manifest cannot be read: " + "; ".join(problems[:5]),
                shown,
                hint="restore it from version control (it holds the probe lock); deleting it forgets "
                "every sealed probe",
            )
        )
        return None
    keyed = [ProbeFile(manifest_key(path, p), f.display, f.sha256, f.cases) for p, f in files]
    found, warned = check_manifest(doc, shown, keyed, probes, seen)
    text = data.decode("utf-8")
    found = [_locate_in_manifest(f, shown, text, doc, contents) for f in found]
    col.findings.extend(found)
    col.warnings.extend(warned)
    return doc["version"]


def _leaks(
    cfg: GateConfig,
    col: _Collector,
    grammar: Grammar | None,
    probes: Sequence[Probe],
    train_files: Sequence[str] | None,
) -> list[Finding]:
    if not cfg.leaks.detectors:
        col.warnings.append(
            Finding(
                "leaks-skipped",
                "leak detection is off (leaks.detectors is empty in the configuration)",
                hint="name detectors to check for leaks: `leaks: {detectors: [exact, template, ngram]}`",
            )
        )
        return []
    paths = [cfg.path(p) for p in (train_files if train_files else cfg.train)]
    if not paths:
        col.warnings.append(
            Finding(
                "leaks-skipped",
                "no training files are configured: leak detection was skipped",
                hint="name the training material under `train:` in evalgate.yml or with --train",
            )
        )
        return []
    detectors = list(cfg.leaks.detectors)
    if grammar is None and "template" in detectors:
        # without the verb table every verb form would be masked as a noun: a flood of false leaks
        detectors.remove("template")
        col.warnings.append(
            Finding(
                "leaks-skipped",
                "the template leak detector was skipped: it keeps verb forms, which come from the grammar "
                "table, and that could not be read",
                hint="fix the grammar table (see its finding); the exact and n-gram detectors ran",
            )
        )
    keep = grammar.all_forms() if grammar is not None else set()
    index = LeakIndex(keep, window=cfg.leaks.window, detectors=detectors)
    for path in paths:
        data = col.read(path, "train", "training file")
        if data is None:
            continue
        shown = col.show(path)
        sentences, found = read_sentences(data, shown)
        col.findings.extend(found)
        index.add_all(shown, sentences)
    return find_leaks(probes, index)


def _leak_stand_ins(records: Sequence[tuple[int, dict]], parsed: Sequence[Probe], shown: str) -> list[Probe]:
    """Records the schema refused whose prompt and expected still read as text.

    The leak detectors only need those two, so a leak is reported in the same run as the schema
    error instead of after it is fixed. The stand-in is used for nothing else.
    """
    done = {p.line for p in parsed}
    out = []
    for line, rec in records:
        prompt, expected = rec.get("prompt"), rec.get("expected")
        if line in done or rec.get("deprecated") is True:
            continue
        if isinstance(prompt, str) and isinstance(expected, str):
            blank = dict.fromkeys(
                ("language", "verb", "regularity", "tense", "person", "label", "category"), ""
            )
            pid = record_id(rec) or ""
            out.append(
                Probe(pid, **blank, prompt=prompt, candidates=(), expected=expected, file=shown, line=line)
            )
    return out


def validate(
    cfg: GateConfig,
    probe_files: Sequence[str] | None = None,
    train_files: Sequence[str] | None = None,
    *,
    contents: Mapping[Path, bytes] | None = None,
) -> ValidationOutcome:
    """Run every check on the probe set named by `cfg` (or the files given) and collect the results.

    `contents` replaces the bytes of some files (path -> would-be bytes) without touching the disk.
    """
    # Probe files named on the command line: their folder holds the manifest read with them.
    explicit = [*(probe_files or ()), *(Path(p).parent for p in probe_files or ()), *(train_files or ())]
    col = _Collector(cfg.root, contents, allowed_roots(cfg.root, [*cfg.explicit_paths, *explicit]))
    for role, names in (("probe", probe_files or cfg.probes), ("training", train_files or cfg.train)):
        col.findings.extend(same_file_findings(role, [(str(p), cfg.path(p)) for p in names]))
    grammar = _load_grammar(cfg, col)
    probes: list[Probe] = []
    ids: list[tuple[str, int, str]] = []
    files: list[tuple[Path, ProbeFile]] = []
    read: dict[str, bytes] = {}  # display path -> bytes of each probe file
    stand_ins: list[Probe] = []  # schema-invalid records the leak detectors still read
    all_read, all_parsed, unreadable = True, True, 0
    for path in probe_paths(cfg, probe_files):
        data = col.read(path, "probes", "probe file")
        if data is None:
            all_read = False
            continue
        shown = col.show(path)
        read[shown] = data
        records, found = parse_jsonl(data, shown)
        all_parsed &= all(f.check == "jsonl-bom" for f in found)
        parsed, semantic, file_ids = probes_from_records(records, shown, grammar)
        all_parsed &= len(file_ids) == len(records)  # a record without a readable id hides one
        unreadable += len({f.line for f in found if f.check != "jsonl-bom"}) + len(records) - len(parsed)
        col.findings.extend(sorted(found + semantic, key=lambda f: f.line or 0))
        probes.extend(parsed)
        stand_ins.extend(_leak_stand_ins(records, parsed, shown))
        ids.extend((shown, line, pid) for line, pid in file_ids)
        sha = col.inputs[shown]["sha256"]
        files.append((path, ProbeFile(shown, shown, sha, len(parsed))))
    col.findings.extend(duplicate_ids(ids))
    col.findings.extend(reason_code_findings(probes, cfg.coverage.adversarial_categories))
    col.warnings.extend(twins(probes))
    template = _load_template(cfg, col)

    seen = {pid for _, _, pid in ids} if all_read and all_parsed else None
    manifest_file = manifest_path(cfg, probe_files)
    manifest_shown = col.show(manifest_file)
    version = _check_manifest(manifest_file, col, files, probes, seen, read)

    deletion_seen = seen if not probe_files else None  # a subset of the set cannot show a deletion
    col.findings.extend(
        baseline_findings(
            cfg, col.show, col.findings, probes, deletion_seen, version, manifest_shown, col.roots
        )
    )

    leaks = _leaks(cfg, col, grammar, probes + stand_ins, train_files)
    excluded: frozenset[str] = frozenset()
    if cfg.leaks.policy == "exclude":
        excluded = frozenset(f.probe_id for f in leaks if f.probe_id)
        if excluded:
            col.warnings.append(
                Finding(
                    "leaks-excluded",
                    f"{len(excluded)} leaking probe(s) left out (leaks.policy: exclude); the gate reads "
                    "the strict subset",
                    hint="the report shows both series; fix the leaks to score the whole set",
                )
            )
    else:
        col.findings.extend(leaks)

    matrix = coverage_matrix(probes, cfg.coverage, grammar, excluded)
    if not all_read or unreadable:  # a file or a record we could not read hides probes: cells would lie
        col.warnings.append(
            Finding(
                "coverage-skipped",
                f"coverage not checked: {unreadable} probe record(s) could not be read"
                if unreadable
                else "coverage not checked: a probe file could not be read",
                hint="fix the problems above; coverage is checked on a readable set",
            )
        )
    else:
        core_file = next((f.display for _, f in files if expected_category(f.display) == "core"), None)
        adv_file = next((f.display for _, f in files if expected_category(f.display) == "adversarial"), None)
        scored = [p for p in probes if not p.deprecated and p.id not in excluded]
        retired = [p for p in probes if p.deprecated or p.id in excluded]
        col.findings.extend(coverage_findings(matrix, core_file, adv_file, scored, retired))

    live = [p for p in probes if not p.deprecated]
    probe_set = {
        "version": version,
        "digest": probe_set_digest(probes),
        "files": {f.display: {"sha256": f.sha256, "cases": f.cases} for _, f in files},
        "n_generated": sum(p.source == "generated" for p in live),
        "n_hand": sum(p.source == "hand" for p in live),
    }
    if all_read and not unreadable:  # the matrix shown in REPORT.md (report/coverage.py)
        probe_set["coverage"] = coverage_rows(matrix)
    return ValidationOutcome(
        probes=tuple(probes),
        findings=tuple(col.findings),
        warnings=tuple(col.warnings),
        leaks=tuple(leaks),
        excluded=excluded,
        coverage=matrix,
        inputs=col.inputs,
        probe_set=probe_set,
        template=template,
    )


# ---------------------------------------------------------------------------------------------
# Editing and sealing the probe set (`probes import`, `probes deprecate`, `probes seal`), and
# reading the verb table with its lexicon (`probes build`, `corpus build`). The commands share
# these; they never import each other (tests/test_command_boundaries.py).
#
# An edit is all or nothing: the would-be bytes of every touched file are validated from memory
# (`check_change`), then written atomically with the manifest re-sealed last (`write_and_seal`).

from typing import TYPE_CHECKING  # noqa: E402

from evalgate.config import load_config  # noqa: E402
from evalgate.edges.files import atomic_write_bytes, atomic_write_json, dump_json  # noqa: E402
from evalgate.edges.journal import commit, recover_set  # noqa: E402
from evalgate.errors import RefusedError  # noqa: E402
from evalgate.probeset.authoring import default_destinations  # noqa: E402
from evalgate.probeset.jsonl import Record  # noqa: E402
from evalgate.probeset.manifest import SEALABLE_CHECKS, seal  # noqa: E402

if TYPE_CHECKING:
    from evalgate.synth.lexicon import Lexicon

LEXICON_FILENAME = "lexicon.yaml"  # read from the grammar table's folder


@dataclass(frozen=True)
class SetFile:
    """One probe file of the configuration as it is on disk now (`data` None: not there yet)."""

    path: Path
    display: str
    data: bytes | None
    records: list[Record]


@dataclass(frozen=True)
class ProbeSet:
    files: list[SetFile]
    ids: list[tuple[str, int, str]]  # (file, line, id) of every record, in file order
    probes: list[Probe]
    grammar: Grammar | None

    def file_of(self, path: Path) -> SetFile | None:
        return next((f for f in self.files if f.path.resolve() == path.resolve()), None)

    def destinations(self) -> dict[tuple[str, str], str]:
        return default_destinations([f.display for f in self.files])


def _grammar_if_readable(cfg: GateConfig) -> Grammar | None:
    # A missing or broken table is the validator's to report (pass 2); the rows skip verb checks.
    try:
        data = safe_yaml.load(cfg.path(cfg.grammar).read_text(encoding="utf-8"))
        return grammar_from_dict(data, cfg.grammar)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, EvalgateError, RecursionError):
        return None


def editable_config(path: str | None) -> GateConfig:
    """The configuration of the set to change; never the bundled demo the embedded default falls back to."""
    cfg = load_config(path)
    if path is None and cfg.source == "embedded default" and cfg.root.resolve() != Path.cwd().resolve():
        raise RefusedError(
            f"no evalgate.yml here, and the embedded default reads the bundled demo set in {cfg.root}, "
            "which this command does not change",
            hint="run it in your repository (beside its evalgate.yml), or name one with --config",
        )
    return cfg


def read_set(cfg: GateConfig) -> ProbeSet:
    recover_set(cfg)  # a change a killed run left half-done: finished or dropped first
    grammar = _grammar_if_readable(cfg)
    files, ids, probes = [], [], []
    for path in probe_paths(cfg, None):
        shown = display_path(cfg.root, path)
        try:
            data = path.read_bytes() if path.is_file() else None
        except OSError as exc:
            raise RefusedError(f"{shown}: cannot read the probe file: {exc.strerror or exc}") from None
        records = parse_jsonl(data, shown)[0] if data and data.strip() else []
        parsed, _, file_ids = probes_from_records(records, shown, grammar)
        files.append(SetFile(path, shown, data, records))
        ids += [(shown, line, pid) for line, pid in file_ids]
        probes += parsed
    return ProbeSet(files, ids, probes, grammar)


def read_edit_input(name: str) -> bytes:
    """The bytes of a file handed to an edit (the import file, a replacement probe)."""
    try:
        return Path(name).read_bytes()
    except FileNotFoundError:
        raise RefusedError(
            f"{name}: file not found", hint="check the path (relative to where you run)"
        ) from None
    except OSError as exc:
        raise RefusedError(f"{name}: cannot read it: {exc.strerror or exc}") from None


def appended(data: bytes | None, lines: Sequence[str]) -> tuple[bytes, int]:
    """The file with `lines` added at its end, and the line number of the first one."""
    data = data if data and data.strip() else b""
    eol = b"\r\n" if b"\r\n" in data else b"\n"
    if data and not data.endswith(b"\n"):
        data += eol
    return data + b"".join(line.encode("utf-8") + eol for line in lines), data.count(b"\n") + 1


@dataclass(frozen=True)
class Checked:
    outcome: ValidationOutcome
    on_rows: list[Finding]  # blocking findings on added lines, moved onto their rows
    on_set: list[Finding]  # blocking findings of the set as a whole


def check_change(
    cfg: GateConfig, contents: Mapping[Path, bytes], origin: Mapping[tuple[str, int], tuple[str, int]]
) -> Checked:
    """Validate the would-be set; `origin` maps (probe file, line) of an added line to (source, row)."""
    outcome = validate(cfg, contents=contents)
    # The same as `probes seal` refuses: everything but "the files changed since the last seal".
    blocking = [f for f in outcome.findings if f.check not in SEALABLE_CHECKS]
    blocking += [w for w in outcome.warnings if w.check == "manifest-partial"]
    on_rows, on_set = [], []
    for f in blocking:
        where = origin.get((f.file or "", f.line or 0))
        if where is None:
            on_set.append(f)
        else:
            on_rows.append(dataclasses.replace(f, file=where[0], line=where[1]))
    return Checked(outcome, on_rows, on_set)


def sealed_manifest(
    cfg: GateConfig, outcome: ValidationOutcome, probe_files: Sequence[str] | None, bump: str
) -> tuple[Path, dict[str, Any] | None, dict[str, Any]]:
    """(manifest path, the manifest now on disk or None, the manifest sealing `outcome` gives)."""
    path = manifest_path(cfg, probe_files)
    previous = json.loads(path.read_bytes().decode("utf-8")) if path.is_file() else None
    files = []
    for p in probe_paths(cfg, probe_files):
        shown = display_path(cfg.root, p)
        entry = outcome.probe_set["files"][shown]
        files.append(ProbeFile(manifest_key(path, p), shown, entry["sha256"], entry["cases"]))
    return path, previous, seal(previous, files, list(outcome.probes), bump)


def write_and_seal(
    cfg: GateConfig, contents: Mapping[Path, bytes], outcome: ValidationOutcome, bump: str
) -> str:
    """Write the files atomically, the manifest last; say what the seal did."""
    path, previous, new = sealed_manifest(cfg, outcome, None, bump)
    shown = display_path(cfg.root, path)
    written: list[str] = []
    folder = path.parent
    try:
        if all(Path(t).parent.resolve() == folder.resolve() for t in contents):
            # The probe files and the manifest change together or not at all (edges/journal.py).
            commit(folder, {**contents, path: dump_json(new).encode("utf-8")})
        else:  # probe files outside the manifest's folder: one file at a time, manifest last
            for target, data in contents.items():
                atomic_write_bytes(target, data)
                written.append(display_path(cfg.root, target))
            atomic_write_json(path, new)
    except OSError as exc:
        done = f"; already written: {', '.join(written)}" if written else "; nothing was changed"
        raise RefusedError(
            f"cannot write {exc.filename or 'a probe file'}: {exc.strerror or exc}{done}",
            hint="make the files writable; after a partial write, `evalgate probes seal` finishes the job",
        ) from None
    if previous is None:
        change = f"version {new['version']} (first seal)"
    else:
        change = f"version {previous['version']} -> {new['version']} ({bump})"
    return f"sealed {shown}: {change}; {new['n_probes']} probes, {len(new['lock'])} ids locked"


def read_yaml(path: Path, what: str) -> Any:
    """A YAML file the generators read (verb table, lexicon); every failure a located refusal."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RefusedError(f"{path}: {what} not found", hint="run from the repository root") from None
    except IsADirectoryError:
        raise RefusedError(f"{path}: {what} is a folder, not a file", hint="name the YAML file") from None
    except OSError as exc:
        raise RefusedError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise RefusedError(f"{path}: {what} is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        return safe_yaml.load(text)
    except yaml.YAMLError as exc:
        problem, line = safe_yaml.describe(exc)
        where = f":{line}" if line is not None else ""
        raise RefusedError(f"{path}{where}: {what} is not valid YAML ({problem})") from None
    except RecursionError:
        raise RefusedError(f"{path}: {what} is nested too deeply") from None


def load_grammar_and_lexicon(grammar_path: Path) -> tuple[Grammar, Lexicon]:
    """The verb table and the lexicon beside it (synth/lexicon.py), for the generators."""
    from evalgate.synth.lexicon import lexicon_from_dict

    grammar = grammar_from_dict(read_yaml(grammar_path, "verb table"), str(grammar_path))
    lexicon_path = grammar_path.with_name(LEXICON_FILENAME)
    lexicon = lexicon_from_dict(read_yaml(lexicon_path, "lexicon"), grammar, str(lexicon_path))
    return grammar, lexicon
