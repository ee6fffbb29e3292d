"""The baseline is the yardstick: what a run is gated with, recorded in the baseline and diffed.

A pull request must not pass by changing what it is judged with (docs/approval.md). A baseline
therefore records its yardstick: the SHA-256 of the held-out test set, the template, the grammar
table and the training files used for leak detection, every rule of evalgate.yml that decides a
verdict (scoring, gate, leak and coverage rules), the probe set's manifest version and, with a
`loader:` plugin, the plugin's spec and the SHA-256 of its code (`loader`); the per-probe content
hashes and statuses are the baseline's `outcomes`. A run computes the same record from its own
results (the edge hashed the files; see pipeline/scoring.py) and `gate_changes` lists every difference as
a record:

    {"kind": "probe_deprecated", "key": "<probe id>", "old": "scored", "new": "deprecated",
     "file": "data/eval/probes.jsonl"}

Adding probes is not a change (they are scored, shown, and gated once a baseline holds them);
removing, deprecating or editing one is. A rule an older baseline does not record is compared
with the built-in default, so setting a rule that did not exist then is a change too. Pure: the
caller passes the documents and the default configuration.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any, get_args

from evalgate.errors import RefusedError
from evalgate.gate.document import GateChangeKind
from evalgate.types import STATUS_DEPRECATED, Finding

YARDSTICK_VERSION = 1
# evalgate.yml sections whose keys decide a verdict. report.* only shapes the report, and
# scoring.batch_size / scoring.threads / scoring.max_positions do not move a number (docs/scoring.md).
RULE_SECTIONS = ("scoring", "gate", "leaks", "coverage")
NOT_RULES = frozenset({"scoring.batch_size", "scoring.threads", "scoring.max_positions"})
# Input roles (results.json `inputs`) whose content is part of the yardstick.
FILE_ROLES = {"test": "test", "template": "template", "grammar": "grammar", "train": "train"}
# The order changes are listed in: the probes first (what the attack of docs/approval.md used).
KINDS: tuple[str, ...] = get_args(GateChangeKind)
WHAT = {
    "base_input": "changed by this PR, gated with the base commit's copy",
    "probe_removed": "probe removed",
    "probe_deprecated": "probe deprecated",
    "probe_changed": "probe content changed",
    "loader": "model-loading plugin code changed",
    "test_set": "held-out test set changed",
    "tokenizer": "tokenizer changed, so perplexity can no longer be compared",
    "template": "prompt template changed",
    "grammar": "grammar table changed",
    "training_file": "training file (leak detection) changed",
    "coverage_rule": "coverage rule changed",
    "config_rule": "gate/scoring rule changed",
    "manifest_version": "manifest version went down",
}
_FILE_KIND = {"test": "test_set", "template": "template", "grammar": "grammar", "train": "training_file"}


# Rules recorded since the suites' file paths became part of the yardstick (flat_rules).
_RECORDED_SINCE_PATHS = re.compile(r"(?:test|suites\.[^.]+\.(?:template|grammar|train|test))\Z")


def flat_rules(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """{"gate.alpha": 0.05, ...}: the verdict-deciding keys of a (pinned) configuration."""
    out: dict[str, Any] = {}
    for section in RULE_SECTIONS:
        values = (config or {}).get(section)
        if not isinstance(values, Mapping):
            continue
        for key, value in values.items():
            dotted = f"{section}.{key}"
            if dotted not in NOT_RULES:
                out[dotted] = list(value) if isinstance(value, list | tuple) else value
    # A suite's own rules (docs/suites.md): its kind, declared slices and coverage minimums, and
    # which of the files belongs to it. Its gate overrides are folded into `gate.*` already. The
    # files' bytes are inputs, hashed by path; the paths here keep two suites (or a suite and the
    # run) from swapping their test sets, templates or training files unseen.
    suites = (config or {}).get("suites")
    if isinstance(suites, Mapping):
        out["test"] = (config or {}).get("test")
        for name, suite in suites.items():
            if not isinstance(suite, Mapping):
                continue
            for key in ("kind", "slices", "template", "grammar", "train", "test"):
                if key in suite:
                    value = suite[key]
                    out[f"suites.{name}.{key}"] = list(value) if isinstance(value, list | tuple) else value
            # the one gate override not folded into `gate.*` (GateRules.min_ns)
            if "min_n" in (suite.get("gate") or {}):
                out[f"suites.{name}.gate.min_n"] = suite["gate"]["min_n"]
            for key, value in (suite.get("coverage") or {}).items():
                plain = list(value) if isinstance(value, list | tuple) else value
                out[f"suites.{name}.coverage.{key}"] = plain
    return dict(sorted(out.items()))


def yardstick_of(results: Mapping[str, Any]) -> dict[str, Any]:
    """The yardstick record of a results dict (a run's, or a results.json used as a baseline)."""
    inputs = results.get("inputs") or {}
    record: dict[str, Any] = {"version": YARDSTICK_VERSION}
    for role, name in FILE_ROLES.items():
        record[name] = {
            path: rec["sha256"]
            for path, rec in sorted(inputs.items())
            if isinstance(rec, Mapping) and rec.get("role") == role and isinstance(rec.get("sha256"), str)
        }
    record["rules"] = flat_rules(results.get("config"))
    record["manifest_version"] = (results.get("manifest") or {}).get("probe_set_version")
    suites = (results.get("probe_set") or {}).get("suites")
    if isinstance(suites, Mapping):  # only a run with several suites has them
        record["suite_versions"] = {
            name: s.get("version") for name, s in sorted(suites.items()) if isinstance(s, Mapping)
        }
    checkpoint = results.get("checkpoint") or {}
    if isinstance(checkpoint, Mapping) and checkpoint.get("loader"):
        # only with a `loader:` plugin: the code that loads the model decides the verdict too
        # (edges/plugin_code.py); absent otherwise, so a run without one keeps its bytes
        record["loader"] = {"spec": checkpoint["loader"], "sha256": checkpoint.get("loader_sha256")}
    return record


def baseline_yardstick(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The yardstick a baseline was measured with.

    A baseline document written since the record exists carries it; a results.json used as the
    baseline has its inputs; an older baseline document has its configuration and manifest (the
    test set and template hashes are in the manifest; grammar and training files are unknown,
    and an unknown file is not compared).
    """
    if isinstance(doc.get("yardstick"), Mapping):
        return dict(doc["yardstick"])
    if isinstance(doc.get("probes"), list):
        return yardstick_of(doc)
    manifest = doc.get("manifest") or {}
    config = doc.get("config") or {}
    record: dict[str, Any] = {"version": 0, "grammar": None, "train": None}
    for name, key, sha in (("test", "test", "test_sha256"), ("template", "template", "template_sha256")):
        path, digest = config.get(key), manifest.get(sha)
        record[name] = {str(path or name): digest} if isinstance(digest, str) else None
    record["rules"] = flat_rules(config)
    record["manifest_version"] = manifest.get("probe_set_version")
    return record


def baseline_outcomes(doc: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """id -> {status, correct, content_hash} of a baseline document or a results.json."""
    if isinstance(doc.get("outcomes"), Mapping):
        return dict(doc["outcomes"])
    return {e["id"]: e for e in doc.get("probes") or [] if isinstance(e, Mapping) and "id" in e}


def _only_suite(doc: Mapping[str, Any]) -> str | None:
    """The name of a run's only suite: its items carry no suite name (docs/suites.md), and they
    are the same items when a second suite joins and names them."""
    suites = (doc.get("config") or {}).get("suites")
    return str(next(iter(suites))) if isinstance(suites, Mapping) and len(suites) == 1 else None


def _probe_changes(
    base: Mapping[str, Mapping[str, Any]],
    entries: list[Mapping[str, Any]],
    probe_files: Mapping[str, str],
    manifest_file: str | None,
    suite_manifests: Mapping[str, str],
    only: tuple[str | None, str | None] = (None, None),
) -> list[dict[str, Any]]:
    """`only`: (the baseline's, this run's) `_only_suite`, the suite of an entry that names none."""
    new = {e["id"]: e for e in entries}
    out = []
    for pid, old in sorted(base.items()):
        old_status = old.get("status")
        entry = new.get(pid)
        if entry is None:
            # A probe the baseline already retired left the gate then; deleting it now changes nothing.
            if old_status != STATUS_DEPRECATED:
                lock = suite_manifests.get(str(old.get("suite")), manifest_file)  # its suite's lock
                out.append(_change("probe_removed", pid, old_status, None, lock))
            continue
        where = probe_files.get(pid) or suite_manifests.get(str(old.get("suite")), manifest_file)
        if entry.get("status") == STATUS_DEPRECATED and old_status != STATUS_DEPRECATED:
            out.append(_change("probe_deprecated", pid, old_status, STATUS_DEPRECATED, where))
        old_hash, new_hash = old.get("content_hash"), entry.get("content_hash")
        if old_hash and new_hash and old_hash != new_hash:
            out.append(_change("probe_changed", pid, old_hash, new_hash, where))
        elif (old.get("suite") or only[0]) != (entry.get("suite") or only[1]):
            # Moved to another suite: its template, tolerance, floors and gated slices are that
            # suite's now, so it measures something else (docs/suites.md).
            out.append(_change("probe_changed", pid, _suite(old), _suite(entry), where))
    return out


def _suite(outcome: Mapping[str, Any]) -> str:
    return f"suite {outcome['suite']}" if outcome.get("suite") else "(no suite)"


def _file_changes(
    kind: str, old: Mapping[str, str] | None, new: Mapping[str, str], by_path: bool = False
) -> list[dict[str, Any]]:
    if old is None:  # not recorded by an older baseline
        return []
    if not by_path and sorted(old.values()) == sorted(new.values()):
        # The same bytes under another name measure the same; with several suites a file
        # belongs to its suite, and two suites swapping training files is a change.
        return []
    out = []
    for path in sorted(set(old) | set(new)):
        if old.get(path) != new.get(path):
            out.append(_change(kind, path, old.get(path), new.get(path), path))
    return out


def _tokenizer_change(baseline: Mapping[str, Any], results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A new tokenizer where the baseline measured a perplexity: the perplexity gate (the run's
    and every suite's) then compares nothing, so the run has switched one of its checks off.
    The tokenizer belongs to the checkpoint, which a pull request may change, but one byte of
    whitespace in tokenizer.json did it too (an outside review): switching a check off is for a
    maintainer to approve (docs/approval.md)."""
    old = (baseline.get("manifest") or {}).get("tokenizer_sha256")
    new = (results.get("manifest") or {}).get("tokenizer_sha256")
    if not (isinstance(old, str) and isinstance(new, str)) or old == new:
        return []
    measured = [baseline.get("perplexity"), *((baseline.get("suite_perplexity") or {}).values())]
    if not any(isinstance(p, Mapping) and isinstance(p.get("value"), int | float) for p in measured):
        return []
    where = (results.get("checkpoint") or {}).get("path")
    return [_change("tokenizer", "tokenizer_sha256", old, new, where if isinstance(where, str) else None)]


LOADER_UNRECORDED = (
    "the baseline records no model-loading plugin code (it was written before evalgate recorded "
    "it, or without a plugin): renew it from the base branch with `evalgate baseline update "
    "--name NAME` (the label `evalgate:update-baseline`), or have a maintainer approve this run"
)


def _loader_change(
    old: Mapping[str, Any] | None, new: Mapping[str, Any] | None, results: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """A plugin whose spec or code differs from the baseline's, or one the baseline does not
    record: its code decides the verdict, so only a maintainer may change it. A run without a
    plugin (the built-in loaders, evalgate's own code) changes nothing here."""
    if not new or (old and dict(old) == dict(new)):
        return []
    inputs = results.get("inputs") or {}
    loader_files = sorted(
        path for path, rec in inputs.items() if isinstance(rec, Mapping) and rec.get("role") == "loader"
    )
    where = _common_folder(loader_files) if loader_files else None
    return [_change("loader", str(new.get("spec")), dict(old) if old else None, dict(new), where)]


def _common_folder(paths: list[str]) -> str:
    """The package folder (`pkg/`) of a plugin's files, or its one module file."""
    if len(paths) == 1 and "/" not in paths[0]:
        return paths[0]
    parts = [p.split("/") for p in paths]
    common = []
    for names in zip(*parts, strict=False):
        if len(set(names)) != 1:
            break
        common.append(names[0])
    if len(paths) == 1:
        return paths[0]
    return "/".join(common) + "/" if common else paths[0]


def _rule_changes(
    old: Mapping[str, Any], new: Mapping[str, Any], defaults: Mapping[str, Any], config_file: str | None
) -> list[dict[str, Any]]:
    out = []
    for key in sorted(set(old) | set(new) | set(defaults)):
        if key not in old and _RECORDED_SINCE_PATHS.match(key):
            # A baseline written before the suites' paths were recorded does not know them: not
            # a change (a swap shows once the baseline is renewed). New records always hold the
            # run's `test` and each suite's template, grammar and train; a suite's own `test`
            # only when it has one, and adding one adds a check, it removes none.
            continue
        before, after = old.get(key, defaults.get(key)), new.get(key, defaults.get(key))
        # which families are gated decides the verdict; their order (suites or dimensions written
        # in another order) only orders the report
        lists = isinstance(before, list) and isinstance(after, list)
        if key == "gate.slices" and lists and sorted(map(str, before)) == sorted(map(str, after)):
            continue
        if before != after:
            kind = "coverage_rule" if key.startswith("coverage.") else "config_rule"
            out.append(_change(kind, key, before, after, config_file))
    return out


def _version(text: Any) -> tuple[int, ...] | None:
    try:
        return tuple(int(p) for p in str(text).split("."))
    except ValueError:
        return None


def _change(kind: str, key: str, old: Any, new: Any, file: str | None) -> dict[str, Any]:
    return {"kind": kind, "key": key, "old": old, "new": new, "file": file}


def gate_changes(
    baseline: Mapping[str, Any],
    results: Mapping[str, Any],
    defaults: Mapping[str, Any],
    *,
    probe_files: Mapping[str, str] | None = None,
    config_file: str | None = None,
    manifest_file: str | None = None,
    base_inputs_changed: Sequence[str] = (),
    suite_manifests: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Every way this run's yardstick differs from the baseline's, in a fixed order.

    `defaults` is the built-in default configuration (evalgate.yml's shape), `probe_files` maps
    a probe id to the file it was read from, `config_file`/`manifest_file` name where a rule
    and the lock live (shown to the reviewer; never read here). `base_inputs_changed` are the
    files the PR changed that the workflow replaced with the base commit's (the configuration, the
    baseline): gated with the base's copy now, they would take effect once merged, unjudged, so
    each is a change that needs a maintainer's approval (docs/security.md).
    """
    old, new = baseline_yardstick(baseline), yardstick_of(results)
    changes = [
        _change("base_input", path, "the base commit's", "this PR's", path)
        for path in sorted(set(base_inputs_changed))
    ]
    changes += _probe_changes(
        baseline_outcomes(baseline),
        results.get("probes") or [],
        probe_files or {},
        manifest_file,
        suite_manifests or {},
        (_only_suite(baseline), _only_suite(results)),
    )
    changes += _loader_change(old.get("loader"), new.get("loader"), results)
    changes += _tokenizer_change(baseline, results)
    by_path = len((results.get("config") or {}).get("suites") or {}) > 1
    for role, name in FILE_ROLES.items():
        changes += _file_changes(_FILE_KIND[role], old.get(name), new[name], by_path)
    changes += _rule_changes(old.get("rules") or {}, new["rules"], flat_rules(defaults), config_file)
    changes += _version_changes(old, new, manifest_file, suite_manifests or {})
    return sorted(changes, key=lambda c: KINDS.index(c["kind"]))


def _suite_versions(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """suite -> manifest version of a yardstick record; None without `suites:`. A record of one
    suite keeps the set's version only (`manifest_version`), its name in the suite's rules."""
    if isinstance(record.get("suite_versions"), Mapping):
        return dict(record["suite_versions"])
    names = {key.split(".")[1] for key in record.get("rules") or {} if key.startswith("suites.")}
    if len(names) == 1:
        return {names.pop(): record.get("manifest_version")}
    return None


def _went_down(was: Any, now: Any) -> bool:
    v_old, v_new = _version(was), _version(now)
    return was is not None and (now is None or (v_old is not None and v_new is not None and v_new < v_old))


def _version_changes(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    manifest_file: str | None,
    suite_manifests: Mapping[str, str],
) -> list[dict[str, Any]]:
    """A manifest version that went back, named in the manifest file it is sealed in: the set's,
    or with `suites:` on both sides each suite's own (docs/suites.md). A suite added since the
    baseline has no version to keep; one baseline of one suite and a run of two compare that suite."""
    old_suites, new_suites = _suite_versions(old), _suite_versions(new)
    if old_suites is None or new_suites is None:
        before, after = old.get("manifest_version"), new["manifest_version"]
        return (
            [_change("manifest_version", "version", before, after, manifest_file)]
            if _went_down(before, after)
            else []
        )
    several = len(old_suites) > 1 or len(new_suites) > 1
    out = []
    for suite, was in sorted(old_suites.items()):
        now = new_suites.get(suite)
        if _went_down(was, now):
            key = f"{suite} version" if several else "version"
            out.append(_change("manifest_version", key, was, now, suite_manifests.get(suite, manifest_file)))
    return out


def shown_value(value: Any) -> str:
    """A value as a reviewer reads it: hashes shortened, lists inline, absent as (none)."""
    if value is None:
        return "(none)"
    if isinstance(value, Mapping) and "spec" in value:  # a plugin's record
        digest = value.get("sha256")
        return f"{value['spec']} ({shown_value(digest) if digest else 'code not hashed'})"
    if isinstance(value, str) and len(value) == 64 and all(ch in "0123456789abcdef" for ch in value):
        return f"sha256 {value[:12]}…"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def describe(change: Mapping[str, Any]) -> str:
    """One line: what changed, old -> new, and in which file."""
    what = WHAT.get(str(change.get("kind")), str(change.get("kind")))
    where = f" ({change['file']})" if change.get("file") and change.get("file") != change.get("key") else ""
    old, new = shown_value(change.get("old")), shown_value(change.get("new"))
    if change.get("kind") == "loader" and change.get("old") is None:
        return f"{what}: {change.get('key')}{where}: {LOADER_UNRECORDED}; this run: {new}"
    if change.get("kind") == "base_input":
        return f"{change.get('key')}: {BASE_INPUT_CHANGED}"
    return f"{what}: {change.get('key')}{where}: {old} -> {new}"


def approved_baseline(baseline: Mapping[str, Any], changes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The baseline as the approved yardstick: a probe whose content changed is a new probe now
    (its old outcome measured something else), so it leaves the pairing. Removed and deprecated
    probes leave the comparison by themselves; file and rule changes are the run's own."""
    changed = {c["key"] for c in changes if c["kind"] == "probe_changed"}
    doc = copy.deepcopy(dict(baseline))
    if not changed:
        return doc
    if isinstance(doc.get("outcomes"), dict):
        doc["outcomes"] = {k: v for k, v in doc["outcomes"].items() if k not in changed}
    elif isinstance(doc.get("probes"), list):
        doc["probes"] = [e for e in doc["probes"] if not (isinstance(e, Mapping) and e.get("id") in changed)]
    return doc


# --- refusing an unapproved change (docs/approval.md) ---------------------------------------

APPROVAL_LABEL = "evalgate:approve-gate-change"
APPROVAL_HINT = (
    f"a maintainer approves them by labelling the pull request `{APPROVAL_LABEL}`, which makes the "
    "workflow run `evalgate run --approve-gate-changes` (docs/approval.md); otherwise undo them"
)
_PROBE_KINDS = ("probe_removed", "probe_deprecated", "probe_changed")
_FILE_CHANGE_KINDS = ("base_input", "test_set", "tokenizer", "template", "grammar", "training_file", "loader")
BASE_INPUT_CHANGED = (
    "this PR changes a file the gate takes from the base commit (the configuration or the "
    "baseline): this run was gated with the base's copy, and the PR's would take effect unjudged "
    "once merged"
)


class GateChangesRefused(RefusedError):
    """The run changes what it is gated with, and nobody approved it."""

    def __init__(self, changes: list[dict[str, Any]], baseline: str):
        findings = [change_finding(c) for c in changes]
        super().__init__(
            f"this run changes its own gate: {len(changes)} gate change(s) since baseline {baseline}, "
            "not approved; every change is listed above",
            hint=APPROVAL_HINT,
            findings=findings,
        )
        self.gate_changes = changes


def change_finding(change: Mapping[str, Any]) -> Finding:
    """A gate change as the finding of the exit-2 refusal that names it and what approves it."""
    probe = change["kind"] in _PROBE_KINDS
    message = (
        f"{WHAT.get(change['kind'], change['kind'])} since the baseline: "
        f"{shown_value(change.get('old'))} -> {shown_value(change.get('new'))}"
    )
    if change["kind"] == "loader" and change.get("old") is None:
        message = f"model-loading plugin {shown_value(change.get('new'))}: {LOADER_UNRECORDED}"
    if change["kind"] == "base_input":
        message = BASE_INPUT_CHANGED
    return Finding(
        check="gate-change",
        # file, probe id and key are the finding's location; the message says what and old -> new
        message=message,
        file=change.get("file"),
        probe_id=change["key"] if probe else None,
        field=None if probe or change["kind"] in _FILE_CHANGE_KINDS else change["key"],
        hint=APPROVAL_HINT,
    )


def check_gate_changes(
    results: dict[str, Any],
    baseline: dict[str, Any],
    shown: str,
    defaults: Mapping[str, Any],
    manifest_file: str,
    approved: bool,
    probe_files: Mapping[str, str] | None,
    base_inputs_changed: Sequence[str] = (),
    suite_manifests: Mapping[str, str] | None = None,
    known: Sequence[Mapping[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(the gate changes since the baseline, the baseline to gate against); `GateChangesRefused`
    when there are changes and `approved` is false. `defaults` is the built-in configuration,
    `manifest_file` the manifest's display path, `suite_manifests` each suite's (`suites:`).

    `known`: the changes already found on the same run before it was scored (`run` checks the
    probe set, files, rules and plugin code before any model is loaded): only what the scored
    results alone can show (the tokenizer) is added, so each change is looked for once."""
    if _disjoint(results, baseline) and not base_inputs_changed:
        # Another probe set's baseline: compare refuses it as such ("shares no scored probe"),
        # which says more than listing every probe as removed.
        return [], baseline
    if known is not None:
        found = [dict(c) for c in known] + _tokenizer_change(baseline, results)
        changes = sorted(found, key=lambda c: KINDS.index(c["kind"]))
    else:
        config_file = next(
            (p for p, rec in sorted((results.get("inputs") or {}).items()) if rec.get("role") == "config"),
            None,
        )
        changes = gate_changes(
            baseline,
            results,
            defaults,
            probe_files=probe_files,
            config_file=config_file,
            manifest_file=manifest_file,
            base_inputs_changed=base_inputs_changed,
            suite_manifests=suite_manifests,
        )
    if changes and not approved:
        raise GateChangesRefused(changes, shown)
    return changes, approved_baseline(baseline, changes) if changes else baseline


def _disjoint(results: Mapping[str, Any], baseline: Mapping[str, Any]) -> bool:
    old = baseline_outcomes(baseline)
    new = {e.get("id") for e in results.get("probes") or [] if isinstance(e, Mapping)}
    return bool(old) and bool(new) and not (new & set(old))
