"""The edge that reads the configured files: the probe set for validation, the baseline, the test set.

Nothing here decides what is wrong (probeset/ does, on bytes); this module reads each file once
(regular files only, each under its byte cap: edges/input_files.py, edges/inputs.py), records it
as an input, turns a missing or unreadable file into a finding, parses the YAML grammar table
(safe_yaml.py), and hands the bytes to probeset/ in order: probe files (probeset/probe_file.py),
duplicate ids and twins, prompt template (probeset/prompt_template.py), sealed manifest and
probe lock (probeset/manifest_file.py), what the baseline remembers (probeset/sealed_history.py),
leaks against the training files, coverage. Every problem lands in one `ValidationOutcome`
(probeset/outcome.py), so `evalgate validate` and `evalgate run` report all of them at once.
`run` and `compare` read the baseline, the test set and the configuration's own record here too.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from evalgate import safe_yaml
from evalgate.config import CONFIG_FILENAME, GateConfig, default_config_text
from evalgate.edges.files import file_record
from evalgate.edges.input_files import NotRegularFile, TooLarge, read_input
from evalgate.edges.inputs import check_input, input_problem
from evalgate.edges.json_input import load_json_file
from evalgate.errors import EvalgateError, RefusedError
from evalgate.gate import results as results_mod
from evalgate.gate.baseline import validate_baseline
from evalgate.paths import allowed_roots, display_path
from evalgate.probeset.configured_files import same_file_findings
from evalgate.probeset.corpus import read_sentences
from evalgate.probeset.coverage import checked_coverage, coverage_matrix, reason_code_findings
from evalgate.probeset.grammar import Grammar, grammar_from_dict
from evalgate.probeset.leaks import LeakIndex, find_leaks, leak_detectors, leak_policy
from evalgate.probeset.manifest import ProbeFile
from evalgate.probeset.manifest_file import check_manifest_file, unsealed_warning
from evalgate.probeset.outcome import ValidationOutcome, probe_set_record
from evalgate.probeset.probe_file import read_probe_file
from evalgate.probeset.prompt_template import check_template
from evalgate.probeset.records import duplicate_ids, twins
from evalgate.probeset.sealed_history import baseline_findings
from evalgate.types import Finding, Probe, sha256_text

MANIFEST_NAME = "MANIFEST.json"
# libyaml's safe loader when present: the same safe subset, ~10x faster on the 300-line verb table.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_MISSING_HINTS = {
    "probes": "check the path (--probes, or `probes:` in evalgate.yml); `evalgate probes build` writes the "
    "shipped set",
    "train": "check the path (--train, or `train:` in evalgate.yml); `train: []` skips leak detection",
    "template": "check `template:` in evalgate.yml; the file holds the prompt template with {prompt} once",
    "grammar": "check `grammar:` in evalgate.yml (the verb table, data/grammar/verbs.yaml)",
    "manifest": "check `manifest:` in evalgate.yml: it names a file, which `evalgate probes seal` writes",
}


def probe_paths(cfg: GateConfig, probe_files: Sequence[str] | None) -> list[Path]:
    """The probe files, each once: a file named twice would read as every id used twice."""
    paths = [cfg.path(p) for p in (probe_files if probe_files else cfg.probes)]
    first: dict[Path, Path] = {}
    for p in paths:
        first.setdefault(p.resolve(), p)
    return list(first.values())


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

    def read_shown(self, path: Path, role: str, what: str) -> tuple[bytes, str] | None:
        """`read`, with the name findings give the file; None when it was not read."""
        data = self.read(path, role, what)
        return None if data is None else (data, self.show(path))

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


def parse_grammar(text: str, source: str) -> Grammar:
    """The verb table (the one reader): YAML without aliases or repeated keys, then its schema.

    Raises `yaml.YAMLError` (`safe_yaml.DuplicateKey` for a verb written twice), `RefusedError`
    for a table its schema refuses, `RecursionError` for one nested too deeply.
    """
    return grammar_from_dict(safe_yaml.load(text, safe_yaml.FastUniqueKeyLoader), source)


def _load_grammar(cfg: GateConfig, col: _Collector) -> Grammar | None:
    got = col.read_shown(cfg.path(cfg.grammar), "grammar", "grammar table")
    if got is None:
        return None
    data, shown = got
    try:
        return parse_grammar(data.decode("utf-8"), shown)
    except safe_yaml.DuplicateKey as exc:
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
    got = col.read_shown(cfg.path(cfg.template), "template", "prompt template")
    if got is None:
        return None
    text, found = check_template(*got)
    col.findings.extend(found)
    return text


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
        col.warnings.append(unsealed_warning(shown))
        return None
    data = col.read(path, "manifest", "manifest")
    if data is None:
        return None
    keyed = [ProbeFile(manifest_key(path, p), f.display, f.sha256, f.cases) for p, f in files]
    version, found, warned = check_manifest_file(data, shown, keyed, probes, seen, contents)
    col.findings.extend(found)
    col.warnings.extend(warned)
    return version


def _leaks(
    cfg: GateConfig,
    col: _Collector,
    grammar: Grammar | None,
    probes: Sequence[Probe],
    train_files: Sequence[str] | None,
) -> list[Finding]:
    paths = [cfg.path(p) for p in (train_files if train_files else cfg.train)]
    detectors, skipped = leak_detectors(cfg.leaks.detectors, bool(paths), grammar is not None)
    col.warnings.extend(skipped)
    if detectors is None:
        return []
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


def _baseline_findings(
    cfg: GateConfig,
    col: _Collector,
    probes: Sequence[Probe],
    seen: set[str] | None,
    manifest_version: str | None,
    manifest_shown: str,
) -> list[Finding]:
    """What the configured baseline remembers of the sealed set (probeset/sealed_history.py),
    checked even when the manifest was deleted or re-sealed. A baseline that is missing or
    unreadable is left to `run`, which reports it."""
    if cfg.baseline is None:
        return []
    path = cfg.path(cfg.baseline)
    if col.roots and input_problem(path, col.roots):
        return []  # outside the repository or not a regular file: `run` refuses it, naming why
    try:
        data = read_input(path, "baseline")
    except OSError:
        return []
    return baseline_findings(
        data, col.show(path), col.findings, probes, seen, manifest_version, manifest_shown
    )


def config_input(cfg: GateConfig) -> dict[str, dict[str, Any]]:
    """The configuration as an input: its file, or the embedded default's text."""
    if cfg.source == "embedded default":
        text = default_config_text()
        return {
            f"{CONFIG_FILENAME} (embedded default)": {
                "sha256": sha256_text(text),
                "bytes": len(text.encode("utf-8")),
                "role": "config",
            }
        }
    path = Path(cfg.source)
    path = path if path.is_absolute() else cfg.root / path.name
    return {display_path(cfg.root, path): {**file_record(path), "role": "config"}}


def load_baseline(cfg: GateConfig) -> tuple[dict[str, Any], str, dict[str, Any]] | None:
    """The baseline document, its display path and its input record; None for `--baseline none`.

    Accepts a baseline file or another results.json (then it is converted to a baseline view by
    `compare`). Loaded before the model so a missing or broken baseline refuses cheaply.
    """
    if cfg.baseline is None:
        return None
    path = cfg.path(cfg.baseline)
    check_input(path, cfg.roots(), "baseline", cfg.baseline)
    if not path.is_file():
        raise RefusedError(
            f"{cfg.baseline}: baseline not found",
            hint="create it with `evalgate baseline update --name NAME`, or run with `--baseline none`",
        )
    doc = load_json_file(path, "baseline")
    if "probes" in doc and isinstance(doc.get("probes"), list):
        results_mod.validate_results(doc, str(cfg.baseline))
    else:
        validate_baseline(doc, str(cfg.baseline))
    shown = display_path(cfg.root, path)
    return doc, shown, {shown: {**file_record(path), "role": "baseline"}}


def read_test_sentences(cfg: GateConfig) -> tuple[list[str], dict[str, dict[str, Any]]]:
    path = cfg.path(cfg.test)
    shown = display_path(cfg.root, path)
    check_input(path, cfg.roots(), "test set", shown)
    if not path.is_file():
        raise RefusedError(f"{shown}: test set not found", hint="set `test:` in evalgate.yml or pass --test")
    sentences, findings = read_sentences(path.read_bytes(), shown)
    if findings:
        raise RefusedError(
            f"{shown}: the test set cannot be read: " + "; ".join(f.message for f in findings[:5]),
            findings=findings,
        )
    if not sentences:
        raise RefusedError(f"{shown}: the test set holds no sentence")
    return [s for _, s in sentences], {shown: {**file_record(path), "role": "test"}}


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
        col.findings.extend(same_file_findings(role, [(str(p), cfg.path(p).resolve()) for p in names]))
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
        got = read_probe_file(data, shown, grammar)
        all_parsed &= got.parsed
        unreadable += got.unreadable
        col.findings.extend(got.findings)
        probes.extend(got.probes)
        stand_ins.extend(got.stand_ins)
        ids.extend(got.ids)
        sha = col.inputs[shown]["sha256"]
        files.append((path, ProbeFile(shown, shown, sha, len(got.probes))))
    col.findings.extend(duplicate_ids(ids))
    col.findings.extend(reason_code_findings(probes, cfg.coverage.adversarial_categories))
    col.warnings.extend(twins(probes))
    template = _load_template(cfg, col)

    seen = {pid for _, _, pid in ids} if all_read and all_parsed else None
    manifest_file = manifest_path(cfg, probe_files)
    manifest_shown = col.show(manifest_file)
    version = _check_manifest(manifest_file, col, files, probes, seen, read)

    deletion_seen = seen if not probe_files else None  # a subset of the set cannot show a deletion
    col.findings.extend(_baseline_findings(cfg, col, probes, deletion_seen, version, manifest_shown))

    leaks = _leaks(cfg, col, grammar, probes + stand_ins, train_files)
    excluded, refused, left_out = leak_policy(cfg.leaks.policy, leaks)
    col.findings.extend(refused)
    col.warnings.extend(left_out)

    matrix = coverage_matrix(probes, cfg.coverage, grammar, excluded)
    complete = all_read and not unreadable  # a file or a record we could not read hides probes
    found, skipped = checked_coverage(
        matrix, [f.display for _, f in files], probes, excluded, complete, unreadable
    )
    col.findings.extend(found)
    col.warnings.extend(skipped)
    probe_set = probe_set_record(version, probes, [f for _, f in files], matrix if complete else None)
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
