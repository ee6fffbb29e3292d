"""Wiring of the yardstick rules into the gate (pipeline.gate): the edge side of gate/yardstick.py
and gate/holds.py.

It knows where things live (the configuration file, the manifest, each probe's file, the built-in
default configuration) and turns gate changes into the exit-2 refusal that names each one and
what approves it (docs/approval.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalgate.config import GateConfig, default_config_dict
from evalgate.edges.files import file_record
from evalgate.errors import RefusedError
from evalgate.gate.holds import count_unscorable_as_wrong, perplexity_failure
from evalgate.gate.results import round_floats
from evalgate.gate.yardstick import WHAT, approved_baseline, baseline_outcomes, gate_changes, shown_value
from evalgate.paths import display_path
from evalgate.types import STATUS_DEPRECATED, Finding

APPROVAL_LABEL = "evalgate:approve-gate-change"
APPROVAL_HINT = (
    f"a maintainer approves them by labelling the pull request `{APPROVAL_LABEL}`, which makes the "
    "workflow run `evalgate run --approve-gate-changes` (docs/approval.md); otherwise undo them"
)
_PROBE_KINDS = ("probe_removed", "probe_deprecated", "probe_changed")


class GateChangesRefused(RefusedError):
    """The run changes what it is gated with, and nobody approved it."""

    def __init__(self, changes: list[dict[str, Any]], baseline: str):
        findings = [_finding(c) for c in changes]
        super().__init__(
            f"this run changes its own gate: {len(changes)} gate change(s) since baseline {baseline}, "
            "not approved; every change is listed above",
            hint=APPROVAL_HINT,
            findings=findings,
        )
        self.gate_changes = changes


def _finding(change: Mapping[str, Any]) -> Finding:
    probe = change["kind"] in _PROBE_KINDS
    return Finding(
        check="gate-change",
        # file, probe id and key are the finding's location; the message says what and old -> new
        message=f"{WHAT.get(change['kind'], change['kind'])} since the baseline: "
        f"{shown_value(change.get('old'))} -> {shown_value(change.get('new'))}",
        file=change.get("file"),
        probe_id=change["key"] if probe else None,
        field=None
        if probe or change["kind"] in ("test_set", "template", "grammar", "training_file")
        else change["key"],
        hint=APPROVAL_HINT,
    )


def check_gate_changes(
    results: dict[str, Any],
    baseline: dict[str, Any],
    shown: str,
    cfg: GateConfig,
    approved: bool,
    probe_files: Mapping[str, str] | None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(the gate changes since the baseline, the baseline to gate against); refused when there
    are changes and `approved` is false."""
    if _disjoint(results, baseline):
        # Another probe set's baseline: compare refuses it as such ("shares no scored probe"),
        # which says more than listing every probe as removed.
        return [], baseline
    config_file = next(
        (p for p, rec in sorted((results.get("inputs") or {}).items()) if rec.get("role") == "config"), None
    )
    changes = gate_changes(
        baseline,
        results,
        default_config_dict(),
        probe_files=probe_files,
        config_file=config_file,
        manifest_file=display_path(cfg.root, cfg.path(cfg.manifest)),
    )
    if changes and not approved:
        raise GateChangesRefused(changes, shown)
    return changes, approved_baseline(baseline, changes) if changes else baseline


def _disjoint(results: Mapping[str, Any], baseline: Mapping[str, Any]) -> bool:
    old = baseline_outcomes(baseline)
    new = {e.get("id") for e in results.get("probes") or [] if isinstance(e, Mapping)}
    return bool(old) and bool(new) and not (new & set(old))


def refuse_before_scoring(
    cfg: GateConfig, outcome: Any, baseline: tuple[dict[str, Any], str, dict[str, Any]] | None, approved: bool
) -> None:
    """The same check from the validated probe set, before any model is loaded: a run refused for
    changing its own gate costs no scoring. (`gate` checks again on the scored results, which is
    what `compare` and `merge` have.)"""
    if baseline is None or approved:
        return
    from evalgate.pipeline import config_input

    inputs = {**outcome.inputs, **config_input(cfg)}
    test = cfg.path(cfg.test)
    if test.is_file():
        inputs[display_path(cfg.root, test)] = {**file_record(test), "role": "test"}
    probes = [
        {
            "id": p.id,
            "status": STATUS_DEPRECATED if p.deprecated else "scored",
            "content_hash": p.content_hash(),
        }
        for p in outcome.probes
    ]
    run = round_floats(
        {
            "inputs": inputs,
            "config": cfg.pin(),
            "manifest": {"probe_set_version": outcome.probe_set.get("version")},
            "probes": probes,
        }
    )
    doc, shown, _ = baseline
    check_gate_changes(run, doc, shown, cfg, False, {p.id: p.file for p in outcome.probes})


def paired_view(results: dict[str, Any], baseline: dict[str, Any]) -> tuple[dict[str, Any], list[dict]]:
    return count_unscorable_as_wrong(results, baseline)


def hold_perplexity(
    results: Mapping[str, Any],
    baseline: Mapping[str, Any],
    comparison: dict[str, Any],
    outcome: str,
    reasons: list[str],
) -> tuple[str, list[str]]:
    """The verdict, failed when the perplexity is not finite or missing where the baseline has one."""
    reason = perplexity_failure(results, baseline)
    if reason is None:
        return outcome, reasons
    ppl = dict(comparison.get("perplexity") or {})
    ppl.update(status="failed", reason=reason, ratio=None)
    comparison["perplexity"] = ppl
    return "fail", [*reasons, reason]
