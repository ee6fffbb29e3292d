"""Drift since the anchor: the run compared with the anchor baseline, not only with the last one.

A gate that compares each run with the last baseline lets a model lose 1.9 points per update
under a 2-point tolerance, each update moving the baseline down (issue 25 §3). Every run with an
anchor (gate/history.py) is therefore also compared with the anchor, slice by slice, under
`gate.drift_tolerance`, by the same paired test, the same multiplicity adjustment and the same
verdict rules as the comparison with the baseline (gate/compare.py): a slice whose drop beyond
its drift tolerance is significant fails; one that is beyond it but undecided and low power is
inconclusive.

Repeated looks. The anchor is looked at again after every baseline update, and a test repeated at
a fixed alpha would, over many looks, fail by chance with a probability approaching 1. The k-th
look since the anchor (k = the baseline updates since the anchor, plus one) tests at

    alpha_k = alpha * 6 / (pi^2 * k^2),

so the sum over all looks is alpha * (6 / pi^2) * sum 1/k^2 = alpha (the Basel sum): by the union
bound, the probability that any look since the anchor fails a model that did not drift beyond the
tolerance is at most alpha, however many updates follow (alpha spending over a countable sequence
of looks; docs/gate.md "Drift"). Runs of the same look (every PR between two updates) share that
look's alpha_k: they test the same anchor against checkpoints of one baseline period, and a
maintainer's re-run of one look is not a new look. Marking a new anchor starts the sequence again.

Pure: the comparison and the history come in, results.json's `drift` object goes out.
"""

from __future__ import annotations

import dataclasses
import decimal
import math
from collections.abc import Mapping
from typing import Any

from evalgate.errors import EvalgateError
from evalgate.gate import inconclusive
from evalgate.gate.compare import compare, inconclusive_reasons, regression_reasons
from evalgate.gate.rules import GateRules

SPENDING = "alpha * 6 / (pi^2 * k^2)"
# A slice a per-slice drift map does not name is in the comparison (so the family is the same)
# but can never exceed this tolerance: it is not checked for drift.
UNCHECKED = 1.0
_ROW_KEYS = (
    "n_shared",
    "baseline_accuracy",
    "accuracy",
    "delta",
    "b",
    "c",
    "p_value",
    "p_adjusted",
    "mde",
    "underpowered",
    "gated",
    "status",
)


def look_alpha(alpha: float, look: int) -> float:
    """The level of the `look`-th look since the anchor (1-based): the looks' levels sum to alpha."""
    if look < 1:
        raise ValueError("looks are counted from 1")
    # 7 significant digits, as results.json keeps every float, so the level tested is the one
    # shown; rounded down, so the looks' levels never add up to more than alpha
    exact = decimal.Decimal(alpha * 6.0 / (math.pi**2 * look * look))
    digits = exact.adjusted() - 6
    return float(exact.quantize(decimal.Decimal(1).scaleb(digits), rounding=decimal.ROUND_DOWN))


def drift_rules(rules: GateRules, look: int) -> GateRules:
    """The gate's rules for the drift comparison: the drift tolerances, the look's alpha, and no
    floors (a floor is checked on the run, once, pipeline.gate)."""
    tolerance = rules.drift_tolerance if rules.drift_tolerance is not None else UNCHECKED
    return dataclasses.replace(
        rules,
        alpha=look_alpha(rules.alpha, look),
        tolerance=tolerance,
        tolerances=rules.drift_tolerances,
        min_accuracy=(),
    )


def comparable_to_anchor(
    results: Mapping[str, Any], anchor: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """(the run without the probes edited since the anchor, their ids). The baseline comparison
    refuses a probe changed under its id; an anchor is older than the approved changes since, so
    a probe whose content it does not know is left out of the drift comparison, and counted."""
    outcomes = anchor.get("outcomes") or {}
    keep, changed = [], []
    for e in results["probes"]:
        old = outcomes.get(e["id"]) if isinstance(outcomes, Mapping) else None
        theirs = old.get("content_hash") if isinstance(old, Mapping) else None
        if theirs and e.get("content_hash") and theirs != e["content_hash"]:
            changed.append(e["id"])
        else:
            keep.append(e)
    return {**results, "probes": keep}, changed


def not_measured(anchor_shown: str | None, why: str, name: str) -> str:
    """The reason a run whose drift check is on but cannot pair the anchor is inconclusive."""
    return (
        f"drift since the anchor {anchor_shown} could not be measured ({why}); a maintainer restores "
        f"the drift check by marking the current baseline as the anchor (`evalgate baseline anchor "
        f'--name {name}`, under the label evalgate:update-baseline, docs/gate.md "Drift")'
    )


def drift(
    results: Mapping[str, Any],
    anchor: dict[str, Any] | None,
    anchor_shown: str | None,
    anchor_sha256: str | None,
    updates_since_anchor: int,
    rules: GateRules,
) -> dict[str, Any]:
    """results.json's `drift`: the status (`pass`, `fail`, `inconclusive`, `off` without a drift
    tolerance, `no_anchor` without a history, `not_comparable` when the anchor cannot be paired),
    the look, its alpha and each checked slice's change since the anchor. `not_comparable` with
    the drift check on carries `reasons`: the run is inconclusive (pipeline.gate)."""
    look = updates_since_anchor + 1
    out: dict[str, Any] = {"status": "off"}
    if anchor is not None:
        out.update(
            anchor=anchor_shown, anchor_sha256=anchor_sha256, updates_since_anchor=updates_since_anchor
        )
    if not rules.drift_on:
        return out
    out["tolerance"] = rules.drift_tolerance
    if rules.drift_tolerances:
        out["tolerances"] = dict(rules.drift_tolerances)
    if anchor is None:
        out["status"] = "no_anchor"
        return out
    applied = drift_rules(rules, look)
    out.update(look=look, alpha=applied.alpha, alpha_total=rules.alpha, spending=SPENDING)
    view, changed = comparable_to_anchor(results, anchor)
    if changed:
        out["n_changed_since_anchor"] = len(changed)
    try:
        comparison = compare(dict(view), anchor, applied, str(anchor_shown))
    except EvalgateError as exc:
        # Never a green check for what the gate could not see (docs/gate.md "Drift"): a drift
        # check that is on but cannot pair the anchor leaves the run inconclusive, not passed on
        # the baseline alone (one re-sealed template byte would otherwise switch it off).
        out["status"] = "not_comparable"
        out["reason"] = exc.message.splitlines()[0]
        out["reasons"] = [not_measured(anchor_shown, out["reason"], str(anchor.get("name") or "NAME"))]
        return out
    named = dict(rules.drift_tolerances)
    checked = [
        k
        for k, r in comparison["slices"].items()
        if r["gated"] and (rules.drift_tolerance is not None or k in named)
    ]
    rows = {}
    for key in checked:
        row: Mapping[str, Any] = comparison["slices"][key]
        rows[key] = {
            ("anchor_accuracy" if k == "baseline_accuracy" else k): row[k] for k in _ROW_KEYS if k in row
        }
        rows[key]["tolerance"] = row.get("tolerance", applied.tolerance)
    out["n_paired"] = comparison["n_paired"]
    out["slices"] = rows
    out["regressed"] = [k for k in comparison["regressed"] if k in rows]
    # the slices' entries and nothing_gated: the drift guard gates accuracy, never perplexity
    undecided = [
        e
        for e in comparison.get("inconclusive") or []
        if e.get("slice") in rows or (e.get("slice") is None and e.get("why") == inconclusive.NOTHING_GATED)
    ]
    if undecided:
        out["inconclusive"] = undecided
    shown = {**comparison, "slices": comparison["slices"], "inconclusive": undecided}
    prefix = f"drift since the anchor (look {look}, alpha {applied.alpha:.3g}): "
    if out["regressed"]:
        out["status"] = "fail"
        out["reasons"] = [
            prefix + r for r in regression_reasons({**shown, "perplexity": {}, "suite_perplexity": {}})
        ]
    elif undecided:
        out["status"] = "inconclusive"
        out["reasons"] = [prefix + r for r in inconclusive_reasons(shown)]
    else:
        out["status"] = "pass"
    return out


TREND_N = 8  # baselines shown in a trend (the last N), then this run: `report.trend_window`'s default


def drifting(out: Mapping[str, Any]) -> list[str]:
    """The slices of a `drift` object that drifted: beyond their drift tolerance, decided or not."""
    rows = out.get("slices") or {}
    return [
        k
        for k, r in rows.items()
        if r.get("status") in ("regressed", "inconclusive")
        or (isinstance(r.get("delta"), int | float) and -r["delta"] > r.get("tolerance", UNCHECKED))
    ]


def trend(
    keys: list[str],
    earlier: list[tuple[str, Mapping[str, Any]]],
    baseline: tuple[str | None, Mapping[str, Any]],
    run: Mapping[str, Any],
    n: int = TREND_N,
) -> dict[str, list[dict[str, Any]]]:
    """Each slice's accuracy over the last `n` baselines (the history's replaced ones, then the
    current one), oldest first, and this run last (`sha256` "run"). `earlier` and `baseline` are
    (SHA-256, per-slice numbers); `run` is the run's `slices`."""
    series = [*earlier, baseline][-n:]
    out: dict[str, list[dict[str, Any]]] = {}
    for key in keys:
        points = []
        for sha, slices in series:
            row = slices.get(key) if isinstance(slices, Mapping) else None
            row = row if isinstance(row, Mapping) else {}
            points.append({"sha256": str(sha), "accuracy": row.get("accuracy"), "n": row.get("n")})
        found = run.get(key)
        mine: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        points.append({"sha256": "run", "accuracy": mine.get("accuracy"), "n": mine.get("n")})
        out[key] = points
    return out
