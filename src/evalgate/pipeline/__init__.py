"""The run pipeline, shared by `run`, `baseline update`, `init`, `compare` and `merge`.

validate (refuse before any model is loaded) → load → score → perplexity → slices → compare →
verdict. This package wires the pure core to the edges; it holds no statistics and no rendering.
Here: finalize, rederive, the gate and its refusals before scoring, the refused results, and the
baseline a checkpoint gives (`baseline update`, and `init`'s first one). `scoring.py` scores a
validated probe set with an injected scorer; `root.py` is the composition root that owns a run.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalgate.config import GateConfig, default_config_dict
from evalgate.edges.files import bytes_record
from evalgate.edges.input_files import read_input
from evalgate.edges.inputs import read_checked
from evalgate.errors import EvalgateError, RefusedError
from evalgate.gate import results as results_mod
from evalgate.gate.baseline import BASELINE_KIND, baseline_from_results, replaced_document, validate_baseline
from evalgate.gate.holds import count_unscorable_as_wrong, hold_perplexity
from evalgate.gate.yardstick import check_gate_changes
from evalgate.paths import display_path as files_display_path
from evalgate.probeset_io import config_input, validate
from evalgate.progress import Progress
from evalgate.types import MULTIPLE_CHOICE, STATUS_DEPRECATED, STATUS_EXCLUDED, STATUS_SCORED


def display_path(cfg: GateConfig, path: Path) -> str:
    return files_display_path(cfg.root, path)


# The run-invariant fields `finalize` takes from a (partial) result; merge checks they agree.
BASE_KEYS = ("inputs", "checkpoint", "config", "manifest", "probe_set", "warnings")


def finalize(base: Mapping[str, Any], entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate the per-probe entries and assemble the results dict (verdict "pass", no gate).

    The one place a result is derived from its entries, used by a plain run and by `merge`, so a
    merged result is byte-identical to the unsharded one: entries are rounded before anything is
    computed from them, and the aggregation settings come from the pinned configuration.
    """
    from evalgate.gate.slices import aggregate
    from evalgate.scoring.ordinal import summarize

    pin = base["config"]
    z, review = pin["gate"]["z"], pin["report"]["review_entropy"]
    entries = results_mod.round_floats(entries)
    excluded = {e["id"] for e in entries if e["status"] == STATUS_EXCLUDED}
    aggregate_full = None
    if excluded:
        full = [
            {**e, "status": e["status_if_included"]} if e["status"] == STATUS_EXCLUDED else e for e in entries
        ]
        aggregate_full = aggregate(full, z, review_entropy=review)
    policy = pin["leaks"]["policy"]
    ordinal = summarize(entries, review)
    extra: dict[str, Any] = {}
    if ordinal:  # an "ordinal" section only when the run has ordinal probes (docs/ordinal.md)
        extra["ordinal"] = ordinal
    if base.get("suite_perplexity") is not None:  # only when a suite names its own test set
        extra["suite_perplexity"] = base["suite_perplexity"]
    return results_mod.assemble(
        verdict="pass",
        reasons=[],
        inputs=base["inputs"],
        checkpoint=base["checkpoint"],
        config_pin=pin,
        manifest=base["manifest"],
        probe_set=base["probe_set"],
        entries=entries,
        aggregate=aggregate(entries, z, review_entropy=review),
        perplexity=base["perplexity"],
        comparison=None,
        warnings=list(base["warnings"]),
        leaks=results_mod.leak_summary(entries, excluded, policy)
        if policy == "exclude" or excluded
        else None,
        aggregate_full=aggregate_full,
        extra=extra or None,
    )


# What `finalize` derives from the per-probe entries (and what a results file could carry stale).
DERIVED_KEYS = ("slices", "per_verb", "calibration", "counts", "ambiguous", "leaks", "slices_full", "ordinal")


def rederive(results: dict[str, Any], source: str, cfg: GateConfig) -> dict[str, Any]:
    """A results file read back (`compare`, `baseline update --from-results`) with every table
    derived from its per-probe entries recomputed by `finalize`, as the paired test pairs the
    entries: nothing that decides or states a number reads a `slices` table a hand may have
    edited (issue 25: a stale table passed a 90% floor on a run at 2.3%). The settings are the
    file's own pinned ones (`cfg` only fills those it lacks). A file whose tables did not match its
    entries carries a warning saying so; an honest file keeps its bytes.
    """
    config = dict(results.get("config") or {})
    pin = cfg.pin()
    for section, keys in (("gate", ("z",)), ("report", ("review_entropy",)), ("leaks", ("policy",))):
        own = config.get(section) if isinstance(config.get(section), dict) else {}
        config[section] = {**{k: pin[section][k] for k in keys}, **own}
    # only the derived tables are taken from `finalize`: the rest may be absent from a file
    base = {key: results.get(key) or {} for key in BASE_KEYS}
    base.update(config=config, perplexity=results.get("perplexity"), warnings=[])
    if results.get("suite_perplexity") is not None:
        base["suite_perplexity"] = results["suite_perplexity"]
    entries = [
        # an excluded entry's full-series status (`status_if_included`, pipeline/scoring.py); a file
        # without it counts the entry as it reads: scored when it has a right/wrong outcome
        {**e, "status_if_included": "scored" if isinstance(e.get("correct"), bool) else STATUS_EXCLUDED}
        if isinstance(e, dict) and e.get("status") == STATUS_EXCLUDED and e.get("status_if_included") is None
        else e
        for e in results["probes"]
    ]
    try:
        fresh = finalize(base, entries)
    except (KeyError, TypeError, ValueError) as exc:
        raise RefusedError(
            f"{source}: its per-probe entries cannot be aggregated ({type(exc).__name__}: {exc})",
            hint="pass a results.json written by `evalgate run` or `evalgate merge`, unedited",
        ) from None
    out = dict(results)
    differed = []
    for key in DERIVED_KEYS:
        if key in fresh:
            if results_mod.round_floats(out.get(key)) != fresh[key]:
                differed.append(key)
            out[key] = fresh[key]
        elif key in out:
            if out[key] not in ({}, [], None):  # an older file's empty section is no difference
                differed.append(key)
            del out[key]
    if differed:
        warning = {
            "check": "results-recomputed",
            "message": f"{source}: its {', '.join(differed)} did not match its per-probe entries; every "
            "number shown here is recomputed from the entries",
            "hint": "a results file edited by hand, or written by another version: gate the run's own "
            "results.json",
        }
        out["warnings"] = [*(out.get("warnings") or []), warning]
    return out


def gate(
    results: dict[str, Any],
    baseline: tuple[dict[str, Any], str, dict[str, Any]] | None,
    cfg: GateConfig,
    *,
    approve_gate_changes: bool = False,
    probe_files: Mapping[str, str] | None = None,
    base_inputs_changed: Sequence[str] = (),
    history: Any = None,
    baseline_update: bool = False,
    checked_before: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Compare with the baseline (if any) and set verdict + reasons.

    `checked_before`: the gate changes `refuse_before_scoring` found on this run (None when it
    did not look): they are not looked for again (gate/yardstick.check_gate_changes `known`).

    The baseline is the yardstick (gate/yardstick.py): a run that changes it (probes removed,
    deprecated or edited, another test set, template, grammar or training files, other rules, a
    lower manifest version) is refused unless `approve_gate_changes`; approved, it is gated on
    what it shares with the baseline and the changes are listed (docs/approval.md).
    """
    from evalgate.gate.compare import compare, inconclusive_reasons, regression_reasons

    # `evalgate compare` may re-gate a results.json that was gated before: the baseline it was
    # gated against then is no input of this verdict, and must not sit in the SHA-256 table.
    inputs = {
        k: v
        for k, v in results["inputs"].items()
        if v.get("role") not in ("baseline", "baseline-history", "baseline-anchor")
    }
    if baseline is None:
        # No baseline (`baseline: none`): a scoring run, not a gate. It passes unless a floor
        # fails, and the report says that nothing was compared (docs/gate.md, "Verdict").
        results = dict(results)
        results["inputs"] = inputs
        results["comparison"] = None
        results.pop("gate_changes_vs_baseline", None)  # a re-gated result's, from its old baseline
        floors = _with_floors(results, cfg, None)
        results["verdict"], results["reasons"] = ("fail", floors) if floors else ("pass", [])
        return results
    doc, shown, record = baseline
    changes, doc = _gate_changes(
        results, doc, shown, cfg, approve_gate_changes, probe_files, base_inputs_changed, checked_before
    )
    view, counted_wrong = count_unscorable_as_wrong(results, doc)
    comparison = compare(view, doc, cfg.gate, shown)
    if counted_wrong:
        comparison["counted_wrong"] = counted_wrong
    regressions = regression_reasons(comparison)
    _, reasons = hold_perplexity(results, doc, comparison, "fail" if regressions else "pass", regressions)
    results = dict(results)
    results["inputs"] = dict(sorted({**inputs, **record, **(history.inputs if history else {})}.items()))
    results["comparison"] = comparison
    results["gate_changes_vs_baseline"] = changes
    reasons = [*reasons, *_with_floors(results, cfg, doc)]
    drifted = _drift(
        results, history, baseline, cfg, baseline_update=baseline_update, approved=approve_gate_changes
    )
    undecided = inconclusive_reasons(comparison) if comparison.get("inconclusive") else []
    if drifted is not None:
        results["drift"] = drifted
        if drifted["status"] == "fail" and not drifted.get("approved"):
            reasons = [*reasons, *drifted["reasons"]]
        elif drifted["status"] in ("inconclusive", "not_comparable") and drifted.get("reasons"):
            undecided = [*undecided, *drifted["reasons"]]
    # fail dominates inconclusive, which dominates pass (docs/gate.md, "Verdict")
    if reasons:
        results["verdict"], results["reasons"] = "fail", reasons
    elif undecided:
        results["verdict"], results["reasons"] = "inconclusive", undecided
    else:
        results["verdict"], results["reasons"] = "pass", []
    return results_mod.round_floats(results)


def drift_of_update(results: dict[str, Any], cfg: GateConfig) -> dict[str, Any] | None:
    """The drift since the anchor of a run about to become the baseline (`baseline update
    --from-results`), against the configured baseline's history; None without a baseline, history
    or drift tolerance. Only shown: the refusal of an update past the drift tolerance is
    `run --verify-baseline`'s (docs/gate.md "Drift"), and this command writes what it is given."""
    from evalgate.probeset_io import load_baseline, load_history

    baseline = load_baseline(cfg)
    if baseline is None:
        return None
    history = load_history(cfg, baseline)
    return _drift(results, history, baseline, cfg, baseline_update=False, approved=False)


def _drift(
    results: dict[str, Any],
    history: Any,
    baseline: tuple[dict[str, Any], str, dict[str, Any]],
    cfg: GateConfig,
    *,
    baseline_update: bool,
    approved: bool,
) -> dict[str, Any] | None:
    """results.json's `drift` (gate/drift.py, docs/gate.md "Drift"); None (no key, results as
    before drift existed) when there is no history and no drift tolerance.

    A baseline-update run (`--verify-baseline`, the label's) whose checkpoint drifted beyond the
    tolerance since the anchor is refused (exit 2) unless a maintainer approved this head's gate
    changes (`--approve-gate-changes`, the label evalgate:approve-gate-change): the new baseline
    would carry the drift into every later comparison. Approved, the drift is shown, marked
    approved, and does not fail the run; any other run fails on it. An anchor that cannot be
    paired with the run (`not_comparable`) with the drift check on is the same for an update (its
    drift is unknown) and makes any other run inconclusive."""
    from evalgate.gate.drift import drift, drifting, trend
    from evalgate.gate.slice_order import slice_sort_key
    from evalgate.gate.slices import aggregate_slices

    if history is None and not cfg.gate.drift_on:
        return None
    anchor, shown, sha, since = None, None, None, 0
    if history is not None:
        anchor, shown = history.anchor, history.anchor_shown
        sha, since = history.history.anchor_sha256, history.history.updates_since_anchor
    elif baseline[0].get("kind") == BASELINE_KIND:
        # no history yet: the baseline is the first one, so it is the anchor (look 1)
        anchor, shown = baseline[0], baseline[1]
        sha = (baseline[2].get(shown) or {}).get("sha256")
    view = count_unscorable_as_wrong(results, anchor)[0] if anchor is not None else results
    out = drift(view, anchor, shown, sha, since, cfg.gate)
    # each regressed or drifting slice's accuracy over the last baselines (report/drift.py)
    keys = sorted(
        {*(results.get("comparison") or {}).get("regressed", []), *drifting(out)}, key=slice_sort_key
    )
    if keys:
        earlier = list(history.history.earlier) if history is not None else []
        current = (baseline[2].get(baseline[1]) or {}).get("sha256"), baseline[0].get("slices") or {}
        out["trend"] = trend(
            keys, earlier, current, aggregate_slices(results["probes"], cfg.gate.z), cfg.report.trend_window
        )
    if out["status"] == "fail" and baseline_update:
        if not approved:
            raise RefusedError(
                "this baseline update drifts beyond gate.drift_tolerance since the anchor "
                f"{shown}: " + "; ".join(r.split(": ", 1)[1] for r in out["reasons"]),
                hint="a maintainer accepts the drift by approving this head with the label "
                "evalgate:approve-gate-change; then mark the new baseline as the anchor "
                '(`evalgate baseline anchor --name NAME`, docs/gate.md "Drift")',
            )
        out["approved"] = True
    if out["status"] == "not_comparable" and cfg.gate.drift_on and baseline_update:
        # the drift of this update cannot be measured, so it cannot be shown to be within the
        # tolerance: the same approval as a drift past it (docs/gate.md "Drift")
        if not approved:
            raise RefusedError(
                "this baseline update cannot be checked against gate.drift_tolerance: " + out["reasons"][0],
                hint="a maintainer accepts the update unmeasured by approving this head with the label "
                "evalgate:approve-gate-change; then mark the new baseline as the anchor "
                '(`evalgate baseline anchor --name NAME`, docs/gate.md "Drift")',
            )
        out["approved"] = True
    return out


def exit_code(results: Mapping[str, Any], cfg: GateConfig, fail_on_inconclusive: bool = False) -> int:
    """The gate's exit code: 1 for a fail, and for an inconclusive verdict when `gate.inconclusive`
    is `fail` or the caller asks (`--fail-on-inconclusive`, the Action's `fail-on-inconclusive`);
    0 otherwise. Refusals never get here (exit 2, cli.py)."""
    from evalgate.errors import EXIT_PASS, EXIT_REGRESSION

    verdict = results.get("verdict")
    if verdict == "fail":
        return EXIT_REGRESSION
    if verdict == "inconclusive" and (fail_on_inconclusive or cfg.gate.inconclusive == "fail"):
        return EXIT_REGRESSION
    return EXIT_PASS


def _with_floors(results: dict[str, Any], cfg: GateConfig, baseline: Mapping[str, Any] | None) -> list[str]:
    """`gate.min_accuracy` (gate/floors.py): checked on the run, with a baseline or without, and
    with one also on the probes the baseline scored (new items cannot lift a slice over it).
    results.json has a "floors" section only when a floor is configured. Returns the reasons of
    the floors that failed.

    The accuracies are computed here from the per-probe entries, never read from the results'
    `slices` table: `evalgate compare` gates a results file that may have been edited by hand, and
    a stale table once passed a 90% floor on a run at 2.3% (issue 25)."""
    from evalgate.gate.floors import (
        chance_levels,
        check_floors,
        counted_per_slice,
        floor_reasons,
        shared_accuracy,
    )
    from evalgate.gate.slices import aggregate_slices
    from evalgate.gate.yardstick import baseline_outcomes

    results.pop("floors", None)  # a re-gated result's, from its old configuration
    if not cfg.gate.min_accuracy:
        return []
    shared, counted = None, None
    entries = results["probes"]
    if baseline is not None:
        # A probe the baseline scored that this run cannot score counts as wrong here too, as in
        # the paired comparison (gate/holds.py): otherwise a slice made unscorable (a special
        # token id set in the checkpoint's config) would pass its floor on the probes left.
        view, wrong = count_unscorable_as_wrong(results, baseline)
        if wrong:
            entries = view["probes"]
            counted = counted_per_slice(entries, {w["id"] for w in wrong})
        old = baseline_outcomes(baseline)
        held = {pid for pid, o in old.items() if isinstance(o, Mapping) and o.get("status") == STATUS_SCORED}
        shared = shared_accuracy(entries, held)
    slices = aggregate_slices(entries, cfg.gate.z)
    chance = chance_levels(entries)
    floors = check_floors(slices, cfg.gate.min_accuracy, chance, shared, counted)
    results["floors"] = floors
    return floor_reasons(floors)


def floors_failed(results: Mapping[str, Any], cfg: GateConfig) -> list[str]:
    """The reasons of the configured floors (`gate.min_accuracy`) a run is below, on its own
    probes (no baseline): what `baseline update` warns of, since every run gated against such a
    baseline fails its floors until a maintainer lowers them (docs/gate.md, "Floors from the first
    baseline")."""
    return _with_floors(dict(results), cfg, None)


def _gate_changes(
    results: dict[str, Any],
    baseline: dict[str, Any],
    shown: str,
    cfg: GateConfig,
    approved: bool,
    probe_files: Mapping[str, str] | None,
    base_inputs_changed: Sequence[str] = (),
    known: Sequence[Mapping[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """gate/yardstick.check_gate_changes with what the configuration knows: the built-in
    defaults a rule is compared with, and where the manifest (the probe lock) lives: with
    `suites:` each suite's own, never the run-wide default (docs/suites.md)."""
    suite_manifests = {s.name: display_path(cfg, cfg.path(s.manifest)) for s in cfg.suites}
    manifest = display_path(cfg, cfg.path(cfg.manifest))
    if len(cfg.suites) == 1:
        manifest = next(iter(suite_manifests.values()))
    elif cfg.suites:
        manifest = ", ".join(suite_manifests.values())  # a change no one suite owns names them all
    return check_gate_changes(
        results,
        baseline,
        shown,
        default_config_dict(),
        manifest,
        approved,
        probe_files,
        base_inputs_changed,
        suite_manifests,
        known,
    )


def refuse_before_scoring(
    cfg: GateConfig,
    outcome: Any,
    baseline: tuple[dict[str, Any], str, dict[str, Any]] | None,
    approved: bool,
    base_inputs_changed: Sequence[str] = (),
) -> list[dict[str, Any]] | None:
    """The gate-change check from the validated probe set, before any model is loaded: a run
    refused for changing its own gate costs no scoring. Returns the changes it found (none, or
    it raised), for `gate(checked_before=...)` to add only what the scored results alone show;
    None when it did not look (no baseline, or approved: `gate` then checks the scored results,
    which is all `compare` and `merge` have)."""
    if baseline is None or approved:
        return None
    inputs = {**outcome.inputs, **config_input(cfg)}
    checkpoint: dict[str, Any] = {}
    if cfg.loader:
        # The plugin's code is part of the yardstick: found and hashed here, before anything
        # imports it, so that a PR's plugin that differs from the baseline's never runs unapproved.
        from evalgate.edges.plugin_code import locate, repository_folders

        code = locate(cfg.loader, repository_folders(cfg.root))
        checkpoint = {"loader": cfg.loader, "loader_sha256": code.sha256}
        inputs.update(code.inputs(cfg.root))
    tests = [cfg.test, *(s.test for s in cfg.suites)]  # `test: null`: no perplexity
    for test in (cfg.path(t) for t in tests if t is not None):
        if os.path.lexists(test):  # a missing one is refused when it is read for the perplexity
            shown = display_path(cfg, test)
            data = read_checked(test, "test", "test set", roots=cfg.roots(), shown=shown)
            inputs[shown] = {**bytes_record(data), "role": "test"}
    probes = [
        {
            "id": p.id,
            "status": STATUS_DEPRECATED if p.deprecated else "scored",
            "content_hash": p.content_hash(),
            **({"suite": p.suite} if p.suite else {}),
        }
        for p in outcome.probes
    ]
    run = results_mod.round_floats(
        {
            "inputs": inputs,
            "checkpoint": checkpoint,
            "config": cfg.pin(),
            "manifest": {"probe_set_version": outcome.probe_set.get("version")},
            "probe_set": outcome.probe_set,
            "probes": probes,
        }
    )
    doc, shown, _ = baseline
    changes, _ = _gate_changes(
        run, doc, shown, cfg, False, {p.id: p.file for p in outcome.probes}, base_inputs_changed
    )
    return changes


def refuse_blind_clusters(
    cfg: GateConfig, outcome: Any, baseline: tuple[dict[str, Any], str, dict[str, Any]] | None
) -> None:
    """`gate.cluster` set: refused before any model is loaded when no gated slice has the clusters
    to ever reach its level (gate/compare.py, docs/gate.md "Clustered flips").

    Which slices are gated and how many clusters each holds is known from the probe set and the
    baseline alone: the shared probes are the live ones the baseline scored (one this run cannot
    score counts as wrong, gate/holds.py, so it stays shared). The comparison itself decides, on
    that structure with no outcome changed; any other refusal it would raise is left to the gate
    after scoring, which sees the real outcomes."""
    if baseline is None or not cfg.gate.cluster:
        return
    from evalgate.gate.compare import BlindClustersError, compare
    from evalgate.gate.yardstick import baseline_outcomes
    from evalgate.scoring.multiple_choice import entry_skeleton
    from evalgate.scoring.ordinal import is_ordinal

    doc, shown, _ = baseline
    old = baseline_outcomes(doc)
    entries = []
    for probe in outcome.probes:
        base = old.get(probe.id)
        if probe.deprecated or probe.id in outcome.excluded or not isinstance(base, Mapping):
            continue
        if base.get("status") != STATUS_SCORED or not isinstance(base.get("correct"), bool):
            continue
        entry = {
            **entry_skeleton(probe),
            "correct": base["correct"],
            "content_hash": base.get("content_hash"),
        }
        if not is_ordinal(entry):
            entries.append(entry)
    view = {"manifest": dict(doc.get("manifest") or {}), "probes": entries}
    try:
        compare(view, doc, cfg.gate, shown)
    except BlindClustersError:
        raise
    except EvalgateError:
        return


def refused_results(
    cfg: GateConfig | None,
    exc: EvalgateError,
    *,
    outcome: Any = None,
    extra_inputs: Mapping[str, Any] | None = None,
    gate_changes: str | None = None,
) -> dict[str, Any]:
    """The results dict for a refusal at any stage: every finding, every input read so far."""
    findings = [f.to_dict() for f in exc.findings]
    if not findings:
        entry = {"check": "refused", "message": exc.message}
        if exc.hint:
            entry["hint"] = exc.hint
        findings = [entry]
    inputs: dict[str, Any] = {}
    if outcome is not None:
        inputs.update(outcome.inputs)
    if extra_inputs:
        inputs.update(extra_inputs)
    if cfg is not None:
        with contextlib.suppress(OSError):
            inputs.update(config_input(cfg))
    results = results_mod.assemble_refused(
        reasons=[exc.message.splitlines()[0]],
        findings=findings,
        inputs=inputs,
        config_pin=cfg.pin() if cfg is not None else {},
        probe_set=getattr(outcome, "probe_set", None),
        warnings=[w.to_dict() for w in getattr(outcome, "warnings", ())],
        gate_changes=gate_changes,
        verb_forms=cfg is None or not cfg.suites or any(s.kind != MULTIPLE_CHOICE for s in cfg.suites),
    )
    if getattr(exc, "gate_changes", None):  # refused for changing its own gate (gate/yardstick.py)
        results["gate_changes_vs_baseline"] = results_mod.round_floats(exc.gate_changes)
    return results


def scored_accuracy(results: Mapping[str, Any]) -> float | None:
    overall = results.get("slices", {}).get("overall") or {}
    return overall.get("accuracy")


# ---------------------------------------------------------------------------------------------
# The baseline of a checkpoint (`baseline update`, `init`): the one file the gate trusts. It carries
# no wall-clock time, so rewriting it from the same inputs on the same commit changes no byte.


def git_commit(root: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and len(sha) == 40 else None


def pr_from_event() -> int | None:
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path:
        return None
    try:
        event = json.loads(read_input(Path(path), "event"))
    except (OSError, ValueError, RecursionError):  # not there, not a regular file, too big, not JSON
        return None
    if not isinstance(event, dict) or not isinstance(event.get("pull_request"), dict | None):
        return None
    number = (event.get("pull_request") or {}).get("number")
    return number if isinstance(number, int) else None


def baseline_home(cfg: GateConfig) -> Path:
    """The folder whose baselines/ receives the file: the configuration's folder, except when the
    embedded default borrowed the bundled demo's inputs (no evalgate.yml and no probe set where the
    command runs): then, like the other outputs, where the command runs, not inside the package or
    the image's read-only bundle."""
    cwd = Path.cwd()
    if cfg.source == "embedded default" and cfg.root.resolve() != cwd.resolve():
        return cwd
    return cfg.root


def configured_baseline_name(cfg: GateConfig) -> str | None:
    """NAME when the configuration's `baseline:` is baselines/NAME.json where `baseline update`
    writes (`baseline_home`), so that an update without --name replaces the baseline the gate
    reads (docs/gate.md); None otherwise."""
    if not cfg.baseline:
        return None
    path = cfg.path(cfg.baseline)
    if path.suffix != ".json" or path.parent.resolve() != (baseline_home(cfg) / "baselines").resolve():
        return None
    return path.stem


def baseline_name(given: str | None, checkpoint_path: str | None, configured: str | None = None) -> str:
    """--name, else the configured baseline's NAME (`configured_baseline_name`), else the
    checkpoint folder's name; refused unless it makes a plain file name."""
    name = given or configured or (Path(checkpoint_path).name if checkpoint_path else "") or "baseline"
    if not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        if given:
            raise RefusedError(f"--name {name!r}: use letters, digits, '-', '_' and '.' only")
        raise RefusedError(
            f"no --name given, and the checkpoint folder name {name!r} cannot name a baseline file",
            hint="pass --name NAME (letters, digits, '-', '_' and '.'): it writes baselines/NAME.json",
        )
    return name


def baseline_outcome(
    cfg: GateConfig, progress: Progress, *, contents: Mapping[Path, bytes] | None = None
) -> Any:
    """The probe set a baseline is scored on, validated (then `score` it).

    Updating the baseline is what accepts a deletion or a version set back, so those pass here.
    `contents` are would-be file contents (`init` scores the set it is about to write). Raises
    RefusedError carrying the findings when the set is invalid.
    """
    with progress.phase("validate probe set"):
        outcome = validate(cfg, contents=contents).with_approvable_as_warnings()
    if not outcome.ok:
        raise RefusedError(
            f"the probe set is invalid: {len(outcome.findings)} problem(s); no baseline written",
            findings=list(outcome.findings),
        )
    return outcome


def baseline_document(
    cfg: GateConfig, results: dict[str, Any], name: str, *, commit: str | None, pr: int | None
) -> tuple[Path, dict[str, Any]]:
    """(where the baseline goes, the document): baselines/NAME.json with the run's provenance."""
    home = baseline_home(cfg)
    provenance = {"git_commit": commit or git_commit(home), "pr_number": pr or pr_from_event()}
    doc = baseline_from_results(results, name, provenance)
    validate_baseline(doc, f"baselines/{name}.json")
    return home / "baselines" / f"{name}.json", doc


# ---------------------------------------------------------------------------------------------
# What the suite can see (`evalgate power`, and the sections of `validate` and `init`):
# gate/power.py's figures at the typical rates, with the configured baseline's accuracy per slice.


def perplexity_checks(cfg: GateConfig) -> int:
    """The perplexity checks a run of `cfg` makes (its `test:` and each suite's own): members of
    the gated slices' family (docs/gate.md, "Perplexity"), so the power figures count them."""
    return int(cfg.test is not None) + sum(1 for s in cfg.suites if s.test is not None)


def probe_set_power(
    cfg: GateConfig, outcome: Any, *, strict: bool, drop: float | None = None, needed: bool = True
) -> dict[str, Any]:
    """gate/power.py's document for a validated probe set (docs/gate.md, "What your suite can see").

    The configured baseline gives each slice's accuracy and the items the gate would pair. An
    unreadable one is a refusal when `strict` (`evalgate power`); for `validate`, whose business is
    the probe set, it is said in the document (`baseline_note`) and the figures go without it. A
    baseline that shares no probe with the set (another set's) pairs nothing: said the same way.
    """
    from evalgate.gate import power
    from evalgate.gate.yardstick import baseline_outcomes
    from evalgate.probeset_io import load_baseline

    note = None
    try:
        loaded = load_baseline(cfg)
    except EvalgateError as exc:
        if strict:
            raise
        loaded, note = None, f"{cfg.baseline}: {exc.message.splitlines()[0]}"
    outcomes = baseline_outcomes(loaded[0]) if loaded else None
    counts = power.probe_set_counts(outcome.probes, outcome.excluded, cfg.gate, outcomes)
    if loaded and not any(s.n for s in counts):
        note = f"{loaded[1]} shares no scored probe with this probe set"
        outcomes, loaded = None, None
        counts = power.probe_set_counts(outcome.probes, outcome.excluded, cfg.gate)
    shown = f"the baseline {loaded[1]}" if loaded else None
    drop = power.DEFAULT_DROP if drop is None else drop
    doc = power.power_table(
        counts, cfg.gate, drop=drop, reference=shown, needed=needed, perplexities=perplexity_checks(cfg)
    )
    if note:
        doc["baseline_note"] = note
    return power.with_floors(doc, counts, cfg.gate.z)


# ---------------------------------------------------------------------------------------------
# A baseline's history and anchor (gate/history.py, docs/gate.md "Drift"): written with the
# baseline, through the journal, so a reader sees the old three files or the new three.


def _history_files(target: Path) -> tuple[Path, Path]:
    from evalgate.gate.history import history_paths

    history, anchor = history_paths(target.name)
    return target.parent / history, target.parent / anchor


def _read_own(path: Path, what: str, shown: str) -> bytes | None:
    """A file of the baseline folder, or None when there is none (a link or a folder refused)."""
    if not os.path.lexists(path):
        return None
    return read_checked(path, "baseline", what, shown=shown)


def _verified_history(cfg: GateConfig, target: Path, baseline: bytes) -> Any:
    """The history beside `target`, verified against the baseline bytes `baseline`; an empty one
    when there is none. Refused when broken: a baseline is never written over a broken chain."""
    from evalgate.gate import history as hist

    history_path, anchor_path = _history_files(target)
    if history_path.parent.is_symlink() or (
        history_path.parent.exists() and not history_path.parent.is_dir()
    ):
        raise RefusedError(
            f"{display_path(cfg, history_path.parent)}: a symbolic link or not a folder: the history "
            "is not written through it",
            hint="make baselines/history a real folder (restore it from the default branch)",
        )
    shown = display_path(cfg, history_path)
    anchor_shown = display_path(cfg, anchor_path)
    data = _read_own(history_path, "baseline history", shown)
    anchor = _read_own(anchor_path, "baseline anchor", anchor_shown)
    if data is None:
        if anchor is not None:
            raise RefusedError(f"{anchor_shown}: an anchor without its history {shown}")
        return hist.History()
    history = hist.parse_history(data, shown)
    hist.verify(
        history,
        baseline_sha256=hist.sha256_hex(baseline),
        anchor=anchor,
        history_shown=shown,
        anchor_shown=anchor_shown,
        baseline_shown=display_path(cfg, target),
    )
    return history


def write_baseline(cfg: GateConfig, target: Path, doc: dict[str, Any]) -> str | None:
    """Write baselines/NAME.json; when it replaces another baseline, append the history line (and
    keep the replaced one as the anchor the first time), all or nothing (edges/journal.py).
    Returns what was added to the history, for the command's output; None when nothing was."""
    from evalgate.edges import journal
    from evalgate.edges.files import dump_json
    from evalgate.gate import history as hist

    new = dump_json(doc).encode()
    folder = target.parent
    journal.recover(folder)
    shown = display_path(cfg, target)
    old = _read_own(target, "baseline", shown)
    files: dict[Path, bytes] = {target: new}
    note = None
    if old is not None and old != new:
        old_doc = replaced_document(old, shown)
        history_path, anchor_path = _history_files(target)
        if old_doc is None and not os.path.lexists(history_path):
            note = f"{shown} held no valid baseline: no history line is written for it"
        else:
            # a history that does not chain to the file replaced is refused here, with its line
            history = _verified_history(cfg, target, old)
            if not history.records:  # the first replacement: the replaced baseline is the anchor
                files[anchor_path] = old
            files[history_path] = hist.after_update(history, doc["name"], old, old_doc, new)
            since = history.updates_since_anchor + 1
            note = (
                f"{display_path(cfg, history_path)}: update {since} since the anchor "
                f"{display_path(cfg, anchor_path)}"
            )
    folder.mkdir(parents=True, exist_ok=True)
    if len(files) > 1:
        _history_files(target)[0].parent.mkdir(exist_ok=True)
    journal.commit(folder, files)
    return note


def anchor_baseline(cfg: GateConfig, name: str) -> tuple[Path, bool]:
    """`evalgate baseline anchor`: mark baselines/NAME.json as the anchor drift is measured from
    (docs/gate.md, "Drift"). Returns (the anchor file, whether anything changed)."""
    from evalgate.edges import journal
    from evalgate.gate import history as hist

    target = baseline_home(cfg) / "baselines" / f"{name}.json"
    shown = display_path(cfg, target)
    journal.recover(target.parent)
    current = _read_own(target, "baseline", shown)
    if current is None:
        raise RefusedError(
            f"{shown}: baseline not found", hint="write it first with `evalgate baseline update --name NAME`"
        )
    from evalgate.edges.json_input import parse_json_object

    validate_baseline(parse_json_object(current, shown, "baseline"), shown)
    history = _verified_history(cfg, target, current)
    history_path, anchor_path = _history_files(target)
    if history.anchor_sha256 == hist.sha256_hex(current):
        return anchor_path, False
    history_path.parent.mkdir(exist_ok=True)
    lines = hist.appended(history, [hist.anchor_record(name, current)])
    journal.commit(target.parent, {history_path: lines, anchor_path: current})
    return anchor_path, True
