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

import dataclasses
import hashlib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from evalgate import safe_yaml
from evalgate.config import CONFIG_FILENAME, GateConfig, SuiteConfig, default_config_text, load_config
from evalgate.edges.files import atomic_write_bytes, atomic_write_json, bytes_record, dump_json
from evalgate.edges.input_files import NotRegularFile, TooLarge, read_input
from evalgate.edges.inputs import check_input, input_problem, read_checked
from evalgate.edges.journal import commit, recover_set, refuse_unfinished_update
from evalgate.edges.json_input import parse_json_object
from evalgate.errors import EvalgateError, RefusedError
from evalgate.gate import results as results_mod
from evalgate.gate.baseline import validate_baseline
from evalgate.paths import allowed_roots, display_path
from evalgate.probeset.authoring import default_destinations, probe_line
from evalgate.probeset.configured_files import same_file_findings
from evalgate.probeset.corpus import read_sentences
from evalgate.probeset.coverage import checked_coverage, coverage_matrix, reason_code_findings
from evalgate.probeset.grammar import Grammar, grammar_from_dict
from evalgate.probeset.import_map import (
    PRESETS,
    ImportMap,
    array_element_lines,
    convert,
    parse_map,
    preset_guess,
    read_rows,
)
from evalgate.probeset.item_import import ItemPlan, paired_rows, plan_items
from evalgate.probeset.items import (
    answer_position_warning,
    confusable_slice_values,
    item_coverage,
    item_coverage_findings,
    items_from_records,
    read_item_file,
    unscored_warnings,
)
from evalgate.probeset.jsonl import Record, parse_jsonl
from evalgate.probeset.leaks import LeakIndex, find_leaks, leak_detectors, leak_policy
from evalgate.probeset.manifest import SEALABLE_CHECKS, ProbeFile, seal
from evalgate.probeset.manifest_file import check_manifest_file, unsealed_warning
from evalgate.probeset.normalize import normalize
from evalgate.probeset.outcome import ValidationOutcome, probe_set_record
from evalgate.probeset.probe_file import read_probe_file
from evalgate.probeset.prompt_template import check_template
from evalgate.probeset.records import duplicate_ids, probes_from_records, twins
from evalgate.probeset.sealed_history import baseline_findings
from evalgate.scoring.multiple_choice import render
from evalgate.types import Finding, Probe, sha256_text

if TYPE_CHECKING:
    from evalgate.synth.lexicon import Lexicon

MANIFEST_NAME = "MANIFEST.json"
ITEM_TEMPLATE = "{prompt}"  # a multiple-choice suite without `template:` scores the prompt as it is

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
    if not path.exists() and path.resolve() not in col.contents:  # `init` seals before it writes
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
    *,
    items: bool = False,
    template: str | None = None,
) -> list[Finding]:
    paths = [cfg.path(p) for p in (train_files if train_files else cfg.train)]
    wanted = cfg.leaks.detectors
    if items:
        # the template detector masks every word but the verb table's forms; a multiple-choice
        # suite has no such table, so it runs the exact and n-gram detectors (docs/suites.md)
        wanted = tuple(d for d in wanted if d != "template")
    detectors, skipped = leak_detectors(wanted, bool(paths), items or grammar is not None)
    col.warnings.extend(skipped)
    if detectors is None:
        return []
    keep = grammar.all_forms() if grammar is not None else set()
    # an item suite's index remembers the sentences of every word, so a window is judged against
    # every sentence that may identify the item (probeset/leaks.py, `_asks`)
    index = LeakIndex(keep, window=cfg.leaks.window, detectors=detectors, by_word=items)
    for path in paths:
        data = col.read(path, "train", "training file")
        if data is None:
            continue
        shown = col.show(path)
        sentences, found = read_sentences(data, shown)
        col.findings.extend(found)
        index.add_all(shown, sentences)
    return find_leaks(probes, index, _renderer(template))


def _renderer(template: str | None) -> Callable[[Probe], tuple[str, str] | None] | None:
    """The scorer's rendering (scoring/multiple_choice.render) for the leak detectors, which check
    what the model reads as well as the filled prompt (docs/validate.md, "Leaks"); None where the
    template adds nothing or could not be read (its own finding says so)."""
    if template is None or template.removesuffix("\n") == "{prompt}":
        return None

    def rendered(probe: Probe) -> tuple[str, str] | None:
        try:
            return render(template, probe)
        except RefusedError:  # a prompt without its blank: refused by its own finding
            return None

    return rendered


def _baseline_findings(
    cfg: GateConfig,
    col: _Collector,
    probes: Sequence[Probe],
    seen: set[str] | None,
    manifest_version: str | None,
    manifest_shown: str,
) -> list[Finding]:
    """What the configured baseline remembers of the sealed set (probeset/sealed_history.py),
    for a suite's view against that suite's own recorded version,
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
    suite = cfg.suite.name if cfg.suite is not None else None
    return baseline_findings(
        data,
        col.show(path),
        col.findings,
        probes,
        seen,
        manifest_version,
        manifest_shown,
        suite,
        len(cfg.suites) == 1,
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
    data = read_checked(path, "config", "configuration", shown=cfg.source)
    return {display_path(cfg.root, path): {**bytes_record(data), "role": "config"}}


def load_baseline(cfg: GateConfig) -> tuple[dict[str, Any], str, dict[str, Any]] | None:
    """The baseline document, its display path and its input record; None for `--baseline none`.

    Accepts a baseline file or another results.json (then it is converted to a baseline view by
    `compare`). Loaded before the model so a missing or broken baseline refuses cheaply.
    """
    if cfg.baseline is None:
        return None
    path = cfg.path(cfg.baseline)
    check_input(path, cfg.roots(), "baseline", cfg.baseline)
    if not os.path.lexists(path):
        raise RefusedError(
            f"{cfg.baseline}: baseline not found",
            hint="create it with `evalgate baseline update --name NAME`, or run with `--baseline none`",
        )
    refuse_unfinished_update(path.parent, cfg.baseline)
    # one read: the document parsed is the one hashed (a folder, a FIFO or a link to a device
    # is refused here by what it is)
    data = read_checked(path, "baseline", "baseline", roots=cfg.roots(), shown=cfg.baseline)
    doc = parse_json_object(data, path, "baseline")
    if "probes" in doc and isinstance(doc.get("probes"), list):
        results_mod.validate_results(doc, str(cfg.baseline))
    else:
        validate_baseline(doc, str(cfg.baseline))
    shown = display_path(cfg.root, path)
    return doc, shown, {shown: {**bytes_record(data), "role": "baseline"}}


@dataclass(frozen=True)
class BaselineHistory:
    """A configured baseline's verified history and anchor (gate/history.py, docs/gate.md
    "Drift"); `inputs` are their records for results.json's SHA-256 table."""

    history: Any  # gate.history.History
    anchor: dict[str, Any]
    anchor_shown: str
    inputs: dict[str, Any]


def load_history(
    cfg: GateConfig, baseline: tuple[dict[str, Any], str, dict[str, Any]] | None
) -> BaselineHistory | None:
    """The history beside the configured baseline file, verified: its chain, its last line naming
    the baseline read, its anchor file the one it names. None when the baseline has none (no
    drift check). A broken or rewritten history is refused (exit 2, file, line and field named).

    Read like the baseline, from where the baseline is (the workflow restores both from the base
    commit, docs/approval.md)."""
    from evalgate.gate import history as hist

    if baseline is None or cfg.baseline is None:
        return None
    doc, shown, record = baseline
    if "probes" in doc and isinstance(doc.get("probes"), list):
        return None  # a results file as the baseline (compare): it has no history
    history_rel, anchor_rel = hist.history_paths(str(cfg.baseline))
    paths = {"history": cfg.path(history_rel), "anchor": cfg.path(anchor_rel)}
    present = {k: os.path.lexists(p) for k, p in paths.items()}
    shown_of = {k: display_path(cfg.root, p) for k, p in paths.items()}
    if not any(present.values()):
        return None
    if not present["history"]:
        raise RefusedError(
            f"{shown_of['anchor']}: an anchor without its history {shown_of['history']}",
            hint="restore baselines/history from the default branch: the history is append-only",
        )
    inputs: dict[str, Any] = {}
    read: dict[str, bytes] = {}
    # beside the baseline: inside the repository's roots, or the folder of a baseline the operator
    # named on the command line (its own history, followed by no link out of it)
    roots = [*cfg.roots(), cfg.path(cfg.baseline).parent.resolve()]
    for key, what in (("history", "baseline history"), ("anchor", "baseline anchor")):
        if not present[key]:
            continue
        check_input(paths[key], roots, what, shown_of[key])
        read[key] = read_checked(paths[key], "baseline", what, roots=roots, shown=shown_of[key])
        inputs[shown_of[key]] = {**bytes_record(read[key]), "role": f"baseline-{key}"}
    history = hist.parse_history(read["history"], shown_of["history"])
    hist.verify(
        history,
        baseline_sha256=record[shown]["sha256"],
        anchor=read.get("anchor"),
        history_shown=shown_of["history"],
        anchor_shown=shown_of["anchor"],
        baseline_shown=shown,
    )
    anchor = parse_json_object(read["anchor"], paths["anchor"], "baseline anchor")
    validate_baseline(anchor, shown_of["anchor"])
    return BaselineHistory(history, anchor, shown_of["anchor"], inputs)


def read_test_sentences(cfg: GateConfig) -> tuple[list[str], dict[str, dict[str, Any]]]:
    path = cfg.path(cfg.test)
    shown = display_path(cfg.root, path)
    check_input(path, cfg.roots(), "test set", shown)
    if not os.path.lexists(path):
        raise RefusedError(f"{shown}: test set not found", hint="set `test:` in evalgate.yml or pass --test")
    data = read_checked(path, "test", "test set", roots=cfg.roots(), shown=shown)
    sentences, findings = read_sentences(data, shown)
    if findings:
        raise RefusedError(
            f"{shown}: the test set cannot be read: " + "; ".join(f.message for f in findings[:5]),
            findings=findings,
        )
    if not sentences:
        raise RefusedError(f"{shown}: the test set holds no sentence")
    return [s for _, s in sentences], {shown: {**bytes_record(data), "role": "test"}}


def validate(
    cfg: GateConfig,
    probe_files: Sequence[str] | None = None,
    train_files: Sequence[str] | None = None,
    *,
    contents: Mapping[Path, bytes] | None = None,
    other_leaks: Sequence[Finding] = (),
) -> ValidationOutcome:
    """Run every check on the probe set named by `cfg` (or the files given) and collect the results.

    `contents` replaces the bytes of some files (path -> would-be bytes) without touching the disk.
    `other_leaks`: this suite's items found in another suite's training files (_cross_suite_leaks),
    ruled on under `leaks.policy` with its own leaks.
    """
    if cfg.suites and cfg.suite is None:
        return _validate_suites(cfg, contents)
    # Probe files named on the command line: their folder holds the manifest read with them.
    explicit = [*(probe_files or ()), *(Path(p).parent for p in probe_files or ()), *(train_files or ())]
    col = _Collector(cfg.root, contents, allowed_roots(cfg.root, [*cfg.explicit_paths, *explicit]))
    for role, names in (("probe", probe_files or cfg.probes), ("training", train_files or cfg.train)):
        col.findings.extend(same_file_findings(role, [(str(p), cfg.path(p).resolve()) for p in names]))
    suite = cfg.suite
    items = suite is not None and cfg.is_items
    grammar = None if items else _load_grammar(cfg, col)
    tag = suite.name if suite is not None and len(cfg.suites) > 1 else None
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
        got = read_item_file(data, shown, suite.dims, tag) if items else read_probe_file(data, shown, grammar)
        all_parsed &= got.parsed
        unreadable += got.unreadable
        col.findings.extend(got.findings)
        probes.extend(got.probes)
        stand_ins.extend(got.stand_ins)
        ids.extend(got.ids)
        sha = col.inputs[shown]["sha256"]
        files.append((path, ProbeFile(shown, shown, sha, len(got.probes))))
    col.findings.extend(duplicate_ids(ids))
    if items:
        col.findings.extend(confusable_slice_values(probes))
    if not items:
        col.findings.extend(reason_code_findings(probes, cfg.coverage.adversarial_categories))
    if tag is not None:  # a verb-form probe of one suite among several carries its suite's name
        probes = [p if p.suite else dataclasses.replace(p, suite=tag) for p in probes]
    col.warnings.extend(twins(probes))
    if items and suite is not None and suite.template is None:
        template: str | None = ITEM_TEMPLATE  # docs/suites.md: the prompt as it is
    else:
        template = _load_template(cfg, col)

    seen = {pid for _, _, pid in ids} if all_read and all_parsed else None
    manifest_file = manifest_path(cfg, probe_files)
    manifest_shown = col.show(manifest_file)
    version = _check_manifest(manifest_file, col, files, probes, seen, read)

    # a subset of the set cannot show a deletion: one suite's view leaves it to _validate_suites
    deletion_seen = seen if not probe_files and suite is None else None
    col.findings.extend(_baseline_findings(cfg, col, probes, deletion_seen, version, manifest_shown))

    leaks = _leaks(cfg, col, grammar, probes + stand_ins, train_files, items=items, template=template)
    leaks = [*leaks, *other_leaks]
    excluded, refused, left_out = leak_policy(cfg.leaks.policy, leaks)
    col.findings.extend(refused)
    col.warnings.extend(left_out)
    if not refused:  # excluded: each is still named, with the other suite's file and line
        col.warnings.extend(other_leaks)

    complete = all_read and not unreadable  # a file or a record we could not read hides probes
    if items and suite is not None:
        matrix = item_coverage(probes, suite.dims, suite.min_per_value, excluded)
        if complete:
            col.findings.extend(item_coverage_findings(matrix, [f.display for _, f in files], suite.name))
        col.warnings.extend(answer_position_warning(probes, [f.display for _, f in files], suite.name))
        col.warnings.extend(
            unscored_warnings(
                probes, suite.dims, suite.min_per_value, excluded, [f.display for _, f in files], suite.name
            )
        )
    else:
        matrix = coverage_matrix(probes, cfg.coverage, grammar, excluded)
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
        complete=seen is not None,
    )


def _of_suite(warning: Finding, name: str) -> Finding:
    """A warning that names no file ("no training files are configured") says which suite it is of."""
    if warning.file:
        return warning
    return dataclasses.replace(warning, message=f"suite {name}: {warning.message}")


def cross_checked_by(cfg: GateConfig, suite: SuiteConfig) -> list[str]:
    """The other suites whose training files a suite's items were checked against (leaks between
    suites, `_cross_suite_leaks`): none where leak detection is off or there is one suite."""
    if len(cfg.suites) < 2 or not [d for d in cfg.leaks.detectors if d != "template"]:
        return []
    return [o.name for o in cfg.suites if o.name != suite.name and o.train]


def _no_train_of_its_own(cfg: GateConfig, warning: Finding, suite: SuiteConfig) -> Finding:
    """A suite with no training files of its own whose items were still checked against the other
    suites': the warning says so, rather than that leak detection was skipped (docs/suites.md)."""
    others = cross_checked_by(cfg, suite)
    if warning.check != "leaks-skipped" or suite.train or not others or warning.file:
        return warning
    return dataclasses.replace(
        warning,
        message="it names no training files of its own: its items were checked only against the "
        f"training files of suite {', '.join(others)} (leaks between suites)",
        hint="name the suite's own training material under its `train:` in evalgate.yml",
    )


def _cross_suite_leaks(
    cfg: GateConfig,
    contents: Mapping[Path, bytes] | None,
    parts: Sequence[tuple[SuiteConfig, ValidationOutcome]],
) -> dict[str, list[Finding]]:
    """suite -> its items found in another suite's training files (`leak-cross-suite`).

    The checkpoint that a run scores learned from every suite's training material, so an item of
    `geo` verbatim in the training file of `k8s` is as much a leak as one in its own. Each suite's
    own files are checked by its own validation; another suite's files are checked here with the
    exact and n-gram detectors, and the suite's validation rules on both under `leaks.policy`
    (refused, or excluded and named in the warnings; docs/suites.md).
    """
    detectors = [d for d in cfg.leaks.detectors if d != "template"]
    if len(parts) < 2 or not detectors:
        return {}
    scratch = _Collector(cfg.root, contents, cfg.roots())  # read errors are each suite's own findings
    out: dict[str, list[Finding]] = {}
    for owner, _ in parts:
        paths = [cfg.path(t) for t in owner.train]
        index = LeakIndex(set(), window=cfg.leaks.window, detectors=detectors, by_word=True)
        read = []
        for path in paths:
            data = scratch.read(path, "train", "training file")
            if data is not None:
                shown = scratch.show(path)
                index.add_all(shown, read_sentences(data, shown)[0])
                read.append(path.resolve())
        if not read:
            continue
        for suite, part in parts:
            own = {cfg.path(t).resolve() for t in suite.train}
            if suite.name == owner.name or set(read) <= own:
                continue  # its own training files: checked (and ruled on) by its own validation
            for f in find_leaks(part.probes, index, _renderer(part.template)):
                out.setdefault(suite.name, []).append(
                    dataclasses.replace(
                        f,
                        check="leak-cross-suite",
                        message=f"suite {suite.name}: {f.message}, a training file of suite {owner.name}: "
                        "the checkpoint scored on both learned from it",
                        hint="take the sentence out of that training file, or rewrite the item (if it "
                        "was sealed: deprecate it and add a replacement with a new id)",
                    )
                )
    return out


def _validate_suites(cfg: GateConfig, contents: Mapping[Path, bytes] | None) -> ValidationOutcome:
    """Every suite validated on its own (its files, template, manifest, leaks, coverage), then
    what only the whole run can check: ids unique across suites and probes deleted since the
    baseline (docs/suites.md). One outcome, every finding of every suite."""
    parts = [(s, validate(cfg.for_suite(s), contents=contents)) for s in cfg.suites]
    cross = _cross_suite_leaks(cfg, contents, parts)
    if cross:  # validated again with them: refused, or excluded before coverage is counted
        parts = [
            (
                s,
                validate(cfg.for_suite(s), contents=contents, other_leaks=cross[s.name])
                if s.name in cross
                else part,
            )
            for s, part in parts
        ]
    col = _Collector(cfg.root, contents, cfg.roots())
    probes: list[Probe] = []
    excluded: set[str] = set()
    for s, part in parts:
        probes += part.probes
        col.findings += part.findings
        col.warnings += [
            _of_suite(_no_train_of_its_own(cfg, w, s), s.name) if cfg.multi_suite else w
            for w in part.warnings
        ]
        col.inputs.update(part.inputs)
        excluded |= part.excluded
    # compared normalised, as within one suite (probeset/records.duplicate_ids, docs/items.md):
    # GEO-0001 and geo-0001 name one item on a case-insensitive file system and to a reader
    first: dict[str, Probe] = {}
    for p in probes:
        key = normalize(p.id)
        if key in first and first[key].suite != p.suite:
            q = first[key]
            one = "ids that differ only in case or spacing are one id"
            same = "" if q.id == p.id else f" as '{q.id}' ({one})"
            col.findings.append(
                Finding(
                    "duplicate-id",
                    f"id '{p.id}' is already used at {q.file}:{q.line}{same} (suite {q.suite}): ids are "
                    "unique across every suite",
                    p.file,
                    p.line,
                    p.id,
                    "id",
                    "give one of the two a new id",
                    evidence={"first": f"{q.file}:{q.line}", "again": f"{p.file}:{p.line}"},
                )
            )
        first.setdefault(key, p)
    complete = all(part.complete for _, part in parts)
    seen = {p.id for p in probes} if complete else None
    col.findings.extend(_baseline_findings(cfg, col, probes, seen, None, ""))
    templates = {s.name: part.template for s, part in parts}
    multi = cfg.multi_suite
    if multi:
        probe_set: dict[str, Any] = {
            "version": None,
            "digest": sha256_text(",".join(part.probe_set["digest"] for _, part in parts)),
            "files": {k: v for _, part in parts for k, v in part.probe_set["files"].items()},
            "n_generated": sum(part.probe_set["n_generated"] for _, part in parts),
            "n_hand": sum(part.probe_set["n_hand"] for _, part in parts),
            "suites": {s.name: {"kind": s.kind, **part.probe_set} for s, part in parts},
        }
    else:
        probe_set = parts[0][1].probe_set
    return ValidationOutcome(
        probes=tuple(probes),
        findings=tuple(col.findings),
        warnings=tuple(col.warnings),
        leaks=tuple(f for _, part in parts for f in part.leaks),
        excluded=frozenset(excluded),
        coverage={s.name: part.coverage for s, part in parts} if multi else parts[0][1].coverage,
        inputs=col.inputs,
        probe_set=probe_set,
        template=parts[0][1].template,
        templates=templates,
    )


# ---------------------------------------------------------------------------------------------
# Editing and sealing the probe set (`probes import`, `probes deprecate`, `probes seal`), and
# reading the verb table with its lexicon (`probes build`, `corpus build`). The commands share
# these; they never import each other (tests/project/test_command_boundaries.py).
#
# An edit is all or nothing: the would-be bytes of every touched file are validated from memory
# (`check_change`), then written atomically with the manifest re-sealed last (`write_and_seal`).

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
        return parse_grammar(read_input(cfg.path(cfg.grammar), "grammar").decode("utf-8"), cfg.grammar)
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
    """The probe files as they are; a multiple-choice suite's view reads them as items."""
    recover_set(cfg)  # a change a killed run left half-done: finished or dropped first
    suite = cfg.suite if cfg.is_items else None
    grammar = None if suite is not None else _grammar_if_readable(cfg)
    tag = suite.name if suite is not None and len(cfg.suites) > 1 else None
    files, ids, probes = [], [], []
    for path in probe_paths(cfg, None):
        shown = display_path(cfg.root, path)
        # a file not there yet is one the edit creates; anything else there is read as an input
        data = (
            read_checked(path, "probes", "probe file", roots=cfg.roots(), shown=shown)
            if os.path.lexists(path)
            else None
        )
        records = parse_jsonl(data, shown)[0] if data and data.strip() else []
        if suite is not None:
            parsed, _, file_ids = items_from_records(records, shown, suite.dims, tag)
        else:
            parsed, _, file_ids = probes_from_records(records, shown, grammar)
        files.append(SetFile(path, shown, data, records))
        ids += [(shown, line, pid) for line, pid in file_ids]
        probes += parsed
    return ProbeSet(files, ids, probes, grammar)


def read_edit_input(name: str) -> bytes:
    """The bytes of a file handed to an edit (the import file, a replacement probe)."""
    # named on the command line (the operator's choice): any folder, but a bounded regular file
    return read_checked(Path(name), "import", "file", hint="check the path (relative to where you run)")


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


@dataclass(frozen=True)
class Staged:
    """The would-be bytes of each touched probe file, and where each added line came from."""

    contents: dict[Path, bytes]
    origin: dict[tuple[str, int], tuple[str, int]]  # (probe file, line) -> (import file, row)
    first_line: dict[str, int]  # probe file -> line of its first added probe


def stage(probe_set: ProbeSet, additions: Mapping[str, Sequence[tuple[int, Probe]]], source: str) -> Staged:
    staged = Staged({}, {}, {})
    for dest, added in additions.items():
        target = next(f for f in probe_set.files if f.display == dest)
        data, first = appended(target.data, [probe_line(p) for _, p in added])
        staged.contents[target.path] = data
        staged.first_line[dest] = first
        staged.origin.update({(dest, first + i): (source, row) for i, (row, _) in enumerate(added)})
    return staged


def other_suite_ids(cfg: GateConfig) -> list[tuple[str, int, str, str]]:
    """(file, line, id, suite) of every record of the suites other than the view's: ids are unique
    across every suite (docs/suites.md). A file that cannot be read is the validator's to report."""
    out: list[tuple[str, int, str, str]] = []
    for other in cfg.suites:
        if cfg.suite is not None and other.name == cfg.suite.name:
            continue
        for path in probe_paths(cfg.for_suite(other), None):
            shown = display_path(cfg.root, path)
            try:
                data = read_input(path, "probes") if os.path.lexists(path) else b""
            except OSError:
                continue  # validation of that suite names what is wrong with it
            records = parse_jsonl(data, shown)[0] if data.strip() else []
            out += [(shown, n, r["id"], other.name) for n, r in records if isinstance(r.get("id"), str)]
    return out


def import_mapping(preset: str | None, spec: str | None) -> ImportMap | None:
    """--from and --map as one mapping (--map's pieces over the preset's); None: the rows are items."""
    if preset is None and spec is None:
        return None
    base = PRESETS[preset] if preset else None
    if spec is None:
        return base
    try:
        return parse_map(spec, base)
    except ValueError as exc:
        raise RefusedError(str(exc)) from None


def read_import_rows(
    data: bytes, source: str, mapping: ImportMap | None, suite: SuiteConfig
) -> tuple[list[tuple[int, dict[str, Any]]], list[Finding], int, set[int]]:
    """(row, item record) pairs, the findings of reading (and mapping) the rows, how many were
    read, and the rows named after their row number (no id of their own).

    Without a mapping the file holds items already (JSONL, docs/suites.md); with one it is a
    benchmark's export (JSONL, a JSON array or CSV: probeset/import_map.py), its rows made items
    whose ids without their own start with the suite's name.
    """
    # A file with no rows (empty, blank lines, a byte-order mark alone, a CSV header alone) adds
    # nothing and is no fault: the import changes nothing and exits 0 (docs/authoring.md, "Import").
    no_rows = ("jsonl-empty", "csv-empty")
    if mapping is None:
        if source.lower().endswith(".csv"):
            raise RefusedError(
                f"{source}: a CSV file is not in the item format (one JSON item per line)",
                hint="say which column is which: --from mmlu|arc|hellaswag, or --map "
                "question=prompt,choices=candidates,answer=expected",
            )
        records, found = parse_jsonl(data, source, allow_blank=True, what="row")
        found = [f for f in found if f.check != "jsonl-bom" and f.check not in no_rows]
        rows = {n for n, _ in records} | {f.line for f in found if f.line is not None}
        # A benchmark's export given without --from: say which preset reads it, once, first.
        not_items = [r for _, r in records[:5] if isinstance(r, dict) and "prompt" not in r]
        if not_items and (guess := preset_guess(list(records), "")):
            found.insert(
                0,
                Finding(
                    "import-preset",
                    f"the rows are not items (no `prompt`, `candidates`, `expected`); they read as "
                    f"--from {' or --from '.join(guess)}",
                    source,
                    hint=f"import with --from {guess[0]} (docs/suites.md, the presets' table)",
                ),
            )
        return list(records), found, len(rows), set()
    rows_read, found = read_rows(data, source)
    if not rows_read and not data.removeprefix(b"\xef\xbb\xbf").strip(b" \t\r\n"):
        return [], [], 0, set()  # an empty file of any format: no header to check either
    found = [f for f in found if f.check not in no_rows]
    made, converted = convert(
        rows_read, mapping, file=source, id_prefix=import_id_prefix(suite.name, source), dims=list(suite.dims)
    )
    n = len({n for n, _ in rows_read} | {f.line for f in found if f.line is not None})
    paired = paired_rows(rows_read, made, converted)
    missing = sorted({f.field for f in converted if f.check == "import-missing" and f.field})
    if missing and mapping.name in PRESETS and (guess := preset_guess(rows_read, mapping.name)):
        converted.insert(
            0,
            Finding(
                "import-preset",
                f"the rows have no {', '.join(missing)}: not the --from {mapping.name} layout; they read as "
                f"--from {' or --from '.join(guess)}",
                source,
                hint=f"import with --from {guess[0]} (docs/suites.md, the presets' table)",
            ),
        )
    # the ids convert made from row numbers: SUITE-STEM-ROW (import_id_prefix), the pattern
    # compared here too, so a clash with an earlier import of a same-stem file gets the right hint
    prefix = import_id_prefix(suite.name, source)
    named = {row for row, rec in paired if rec["id"] == f"{prefix}-{row:05d}"}
    return paired, [*found, *converted], n, named


@dataclass(frozen=True)
class ItemImport:
    """Rows imported into a multiple-choice suite: checked in both passes, staged, not written."""

    plan: ItemPlan
    dest: str  # the probe file the items go to
    staged: Staged
    checked: Checked | None  # None: nothing to add
    source: str = ""  # the import file, as findings name it
    # a JSON array's element (its row number) -> the line it starts on (import_map.array_element_lines)
    element_lines: Mapping[int, int] = dataclasses.field(default_factory=dict)

    def _on_rows(self) -> list[Finding]:
        on_rows = self.checked.on_rows if self.checked else []
        return sorted([*self.plan.problems, *on_rows], key=lambda f: f.line or 0)

    @property
    def problems(self) -> list[Finding]:
        """Every blocking problem on a row of the import file (both passes), at its line: a JSON
        array's row is an element, shown at the line it starts on and named by its number.

        One problem is said once: the same message on several rows is one finding naming the rows
        (`choices.text: missing (rows 1-49)`), and a dimension no column maps to is the mapping's
        finding alone, naming the rows it leaves without a value."""
        return [self._located(f) for f in self._grouped(self._on_rows())]

    def _grouped(self, findings: list[Finding]) -> list[Finding]:
        word = "element" if self.element_lines else "row"
        unmapped = {
            f.field: f
            for f in findings
            if f.file == self.source and f.line is None and f.check == "import-slice-unmapped"
        }
        groups: dict[tuple[Any, ...], list[Finding]] = {}
        order: list[tuple[Any, ...] | Finding] = []
        for f in findings:
            if f.file != self.source or f.line is None:
                order.append(f)
                continue
            if f.check == "slices" and f.field in unmapped and f.message.startswith("missing the suite's"):
                key: tuple[Any, ...] = ("unmapped", f.field)
            else:
                key = (f.check, f.field, f.message, f.hint)
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append(f)
        out = []
        for entry in order:
            if isinstance(entry, Finding):
                if entry.field in unmapped and entry is unmapped[entry.field]:
                    rows = [g.line for g in groups.get(("unmapped", entry.field), []) if g.line is not None]
                    if rows:
                        entry = dataclasses.replace(
                            entry,
                            message=f"{entry.message} ({_rows_said(rows, word)} "
                            f"{'has' if len(set(rows)) == 1 else 'have'} no value)",
                        )
                out.append(entry)
                continue
            members = groups[entry]
            if entry[0] == "unmapped":
                continue  # said by the mapping's finding
            if len(members) == 1:
                out.append(members[0])
                continue
            rows = [g.line for g in members if g.line is not None]
            first = members[0]
            out.append(
                dataclasses.replace(
                    first,
                    probe_id=None,
                    message=f"{first.message} ({_rows_said(rows, word)})",
                    evidence={**first.evidence, "rows": rows},
                )
            )
        return out

    @property
    def bad_rows(self) -> list[int]:
        """The rows of the import file with a problem (a JSON array's: element numbers)."""
        return sorted({f.line for f in self._on_rows() if f.file == self.source and f.line is not None})

    def _located(self, f: Finding) -> Finding:
        if f.file != self.source or f.line not in self.element_lines:
            return f
        if "rows" in f.evidence:  # a grouped finding names its elements already
            return dataclasses.replace(f, line=self.element_lines[f.line])
        return dataclasses.replace(
            f,
            line=self.element_lines[f.line],
            message=f"element {f.line}: {f.message}",
            evidence={**f.evidence, "element": f.line},
        )

    @property
    def on_set(self) -> list[Finding]:
        return self.checked.on_set if self.checked else []


def _rows_said(rows: Sequence[int], word: str) -> str:
    """`rows 1-49, 49 in all`, `rows 3, 7`: the rows one problem is on, runs folded (linear)."""
    rows = sorted(set(rows))
    runs: list[str] = []
    start = prev = rows[0]
    for r in [*rows[1:], None]:
        if r is not None and r == prev + 1:
            prev = r
            continue
        runs.append(str(start) if start == prev else f"{start}-{prev}")
        if r is not None:
            start = prev = r
    shown = ", ".join(runs[:10]) + (f", ... ({len(runs) - 10} more runs)" if len(runs) > 10 else "")
    count = f", {len(rows)} in all" if len(rows) > 2 else ""
    return f"{word}{'s' if len(rows) > 1 else ''} {shown}{count}"


def import_id_prefix(suite: str, source: str) -> str:
    """The ids of imported rows without their own: SUITE-FILESTEM-00042, so the rows of two
    exports (mmlu_test.jsonl, mmlu_val.jsonl) never collide (docs/suites.md)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(source).stem).strip("-._")[:40] or "rows"
    return f"{suite}-{stem}"


def import_items(
    view: GateConfig,
    source: str,
    data: bytes,
    mapping: ImportMap | None,
    into: str | None = None,
    *,
    allow_twins: bool = False,
) -> ItemImport:
    """Pass 1 (probeset/item_import.py) and pass 2 (`check_change` on the suite's view) of an
    import into the multiple-choice suite `view` reads; nothing is written (`write_and_seal`)."""
    suite = view.suite
    assert suite is not None and view.is_items, "import_items takes a multiple-choice suite's view"
    probe_set = read_set(view)
    records, found, n, named = read_import_rows(data, source, mapping, suite)
    plan = plan_items(
        records,
        source,
        dims=suite.dims,
        suite=suite.name if len(view.suites) > 1 else None,
        existing=probe_set.probes,
        existing_ids=probe_set.ids,
        other_ids=other_suite_ids(view),
        read_findings=found,
        rows=n,
        named=named,
        allow_twins=allow_twins,
    )
    dest = into or probe_set.files[0].display
    staged = stage(probe_set, {dest: plan.additions} if plan.additions else {}, source)
    # Pass 2 also runs when some rows failed pass 1, so one refusal names every bad row.
    checked = check_change(view, staged.contents, staged.origin) if staged.contents else None
    lines = array_element_lines(data) if mapping is not None and not source.lower().endswith(".csv") else {}
    return ItemImport(plan, dest, staged, checked, source, lines)


def sealed_manifest(
    cfg: GateConfig, outcome: ValidationOutcome, probe_files: Sequence[str] | None, bump: str
) -> tuple[Path, dict[str, Any] | None, dict[str, Any]]:
    """(manifest path, the manifest now on disk or None, the manifest sealing `outcome` gives)."""
    path = manifest_path(cfg, probe_files)
    previous = (
        parse_json_object(read_checked(path, "manifest", "manifest", roots=cfg.roots()), path, "manifest")
        if os.path.lexists(path)
        else None
    )
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


def read_yaml(path: Path, what: str, parse: Callable[[str], Any] = safe_yaml.load) -> Any:
    """A YAML file the generators read (verb table, lexicon); every failure a located refusal."""
    if not os.path.lexists(path):
        raise RefusedError(f"{path}: {what} not found", hint="run from the repository root")
    data = read_checked(path, "grammar", what)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RefusedError(f"{path}: {what} is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        return parse(text)
    except yaml.YAMLError as exc:
        where, problem = safe_yaml.located(str(path), exc)
        raise RefusedError(f"{where}: {what} is not valid YAML ({problem})") from None
    except RecursionError:
        raise RefusedError(f"{path}: {what} is nested too deeply") from None


def load_grammar_and_lexicon(grammar_path: Path) -> tuple[Grammar, Lexicon]:
    """The verb table and the lexicon beside it (synth/lexicon.py), for the generators."""
    from evalgate.synth.lexicon import lexicon_from_dict

    grammar = read_yaml(grammar_path, "verb table", lambda text: parse_grammar(text, str(grammar_path)))
    lexicon_path = grammar_path.with_name(LEXICON_FILENAME)
    lexicon = lexicon_from_dict(read_yaml(lexicon_path, "lexicon"), grammar, str(lexicon_path))
    return grammar, lexicon
