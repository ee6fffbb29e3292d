"""Two holes a run could slip through its gate by, closed around the paired comparison.

- A probe the baseline scored that this run cannot score (model_oov, ambiguous) would leave the
  pairing, and a slice could drop under `min_n` and stop being gated by becoming unscorable. It
  counts as wrong instead: `count_unscorable_as_wrong` gives `compare` a view of the run in which
  those probes are scored and wrong, and lists them (results.json `comparison.counted_wrong`).
  Deprecated probes (a gate change, see gate/yardstick.py) and probes a leak policy excluded (an
  approved rule) are not counted.
- A perplexity that is not finite, or missing where the baseline has one, cannot show that it
  did not regress: `perplexity_failure` fails the gate with the reason.

Pure: dicts in, dicts out (docs/gate.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from evalgate.gate.yardstick import baseline_outcomes
from evalgate.scoring.ordinal import is_ordinal
from evalgate.types import STATUS_DEPRECATED, STATUS_EXCLUDED, STATUS_SCORED

_LEFT_OUT = (STATUS_SCORED, STATUS_DEPRECATED, STATUS_EXCLUDED)


def _scored(outcome: Mapping[str, Any]) -> bool:
    return outcome.get("status") == STATUS_SCORED and isinstance(outcome.get("correct"), bool)


def count_unscorable_as_wrong(
    results: Mapping[str, Any], baseline: Mapping[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the run as `compare` should pair it, the probes counted wrong with their real status)."""
    old = baseline_outcomes(baseline)
    listed: list[dict[str, Any]] = []
    entries = []
    for e in results.get("probes") or []:
        base = old.get(e.get("id"), {})
        if e.get("status") not in _LEFT_OUT and not is_ordinal(e) and _scored(base):
            listed.append({"id": e["id"], "status": e["status"], "baseline_correct": base["correct"]})
            e = {**e, "status": STATUS_SCORED, "correct": False}
        entries.append(e)
    if not listed:
        return dict(results), []
    return {**results, "probes": entries}, listed


def _finite_positive(value: Any) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    )


def perplexity_failure(results: Mapping[str, Any], baseline: Mapping[str, Any]) -> str | None:
    """The reason the gate fails on perplexity alone, or None.

    Only when the baseline has a perplexity: a baseline without one gates no perplexity.
    A run over another test set or tokenizer is "not comparable" (gate/compare.py), but a value
    that is not a number is never a measurement.
    """
    return _failure(results.get("perplexity"), baseline.get("perplexity"), "perplexity")


def _failure(ppl: Any, base: Any, what: str) -> str | None:
    old = base.get("value") if isinstance(base, Mapping) else None
    if not _finite_positive(old):
        return None
    if not isinstance(ppl, Mapping) or (ppl.get("value") is None and not ppl.get("not_finite")):
        return (
            f"{what} missing from this run while the baseline has {old:.3f}: "
            "a run that measures no perplexity cannot show it did not regress"
        )
    value = ppl.get("value")
    if ppl.get("not_finite") or not _finite_positive(value):
        shown = ppl.get("not_finite") or value
        return (
            f"{what} is not a finite positive number ({shown}) while the baseline has {old:.3f}: "
            "the checkpoint's log-likelihoods overflow or are undefined on the test set"
        )
    return None


def hold_perplexity(
    results: Mapping[str, Any],
    baseline: Mapping[str, Any],
    comparison: dict[str, Any],
    outcome: str,
    reasons: list[str],
) -> tuple[str, list[str]]:
    """The verdict, failed when a perplexity is not finite or missing where the baseline has one
    (the run's, and with several suites each suite's own, docs/suites.md)."""
    reason = perplexity_failure(results, baseline)
    if reason is not None:
        ppl = dict(comparison.get("perplexity") or {})
        ppl.update(status="failed", reason=reason, ratio=None)
        comparison["perplexity"] = ppl
        outcome, reasons = "fail", [*reasons, reason]
    new, old = results.get("suite_perplexity"), baseline.get("suite_perplexity")
    if not isinstance(old, Mapping):
        return outcome, reasons
    new = new if isinstance(new, Mapping) else {}
    per_suite = dict(comparison.get("suite_perplexity") or {})
    for name in sorted(old):
        reason = _failure(new.get(name), old[name], f"{name}: perplexity")
        if reason is None:
            continue
        per_suite[name] = {**(per_suite.get(name) or {}), "status": "failed", "reason": reason, "ratio": None}
        outcome, reasons = "fail", [*reasons, reason]
    if per_suite:
        comparison["suite_perplexity"] = per_suite
    return outcome, reasons
