"""Drift since the anchor (results.json `drift`, gate/drift.py): the REPORT.md section and the PR
comment's part, with each regressed or drifting slice's trend over the last baselines.

Pure: the results dict in, markdown out. Every string from the results goes through `inline` or a
table cell (report/markdown.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalgate.gate.document import ResultsDocument
from evalgate.gate.slice_order import ordered
from evalgate.report.budget import Section
from evalgate.report.headline import adjustment_label
from evalgate.report.markdown import Md, count, doc, inline, pct, points, pvalue, size_points, table

STATUS = {
    "ok": "✅ within",
    "regressed": "❌ drifted",
    "inconclusive": "⚠️ inconclusive",
    "too_small": "⚪ too small",
    "new": "🆕 new",
}
BARS = "▁▂▃▄▅▆▇█"
MAX_COMMENT_ROWS = 8


def sparkline(values: Sequence[float | None]) -> str:
    """One block per value, scaled between the series' lowest and highest ("▇▆▅▃▁"); a gap for a
    value that is not known; a flat series is a flat line."""
    known = [v for v in values if isinstance(v, int | float)]
    if not known:
        return ""
    lo, hi = min(known), max(known)
    out = []
    for v in values:
        if not isinstance(v, int | float):
            out.append(" ")
        elif hi == lo:
            out.append(BARS[3])
        else:
            out.append(BARS[min(len(BARS) - 1, int((v - lo) / (hi - lo) * (len(BARS) - 1) + 0.5))])
    return "".join(out)


def _head(drift: Mapping[str, Any]) -> str:
    status = drift.get("status")
    anchor = drift.get("anchor")
    since = drift.get("updates_since_anchor")
    where = f"anchor {inline(anchor)}" if anchor else "no anchor"
    if isinstance(since, int):
        where += f", {since} baseline update(s) since"
    if status == "off":
        return (
            f"Drift check: off (`gate.drift_tolerance` is not set); {where}. Each run is compared with "
            "the last baseline only."
        )
    if status == "no_anchor":
        return "Drift check: no anchor to compare with (the baseline is a results file, not a baseline)."
    if status == "not_comparable":
        return f"Drift check: not made, {where}: {inline(drift.get('reason'), 300)}."
    tol = drift.get("tolerance")
    tolerance = f"tolerance {pct(tol)}" if isinstance(tol, int | float) else "per-slice tolerances"
    alpha, total = drift.get("alpha"), drift.get("alpha_total")
    look = drift.get("look")
    text = (
        f"Compared with the {where}, under the drift {tolerance}: look {look} since the anchor, tested "
        f"at alpha {alpha:.3g} = {total} × 6 / (π² × {look}²), so all looks since the anchor together "
        f"stay within alpha ({doc('docs/gate.md', 'Drift', 'drift')})."
        if isinstance(alpha, float) and isinstance(look, int)
        else f"Compared with the {where}."
    )
    if drift.get("approved"):
        text += " The drift beyond the tolerance was approved (evalgate:approve-gate-change)."
    if drift.get("n_changed_since_anchor"):
        text += f" {drift['n_changed_since_anchor']:,} probe(s) edited since the anchor are left out."
    return text


def _rows(drift: Mapping[str, Any], keys: Sequence[str]) -> list[list[Any]]:
    rows = drift.get("slices") or {}
    out = []
    for key in keys:
        r = rows[key]
        out.append(
            [
                key,
                count(r.get("n_shared")),
                pct(r.get("anchor_accuracy")),
                pct(r.get("accuracy")),
                points(r.get("delta")),
                pct(r.get("tolerance")),
                pvalue(r.get("p_adjusted") if r.get("p_adjusted") is not None else r.get("p_value")),
                size_points(r.get("mde")),
                Md(STATUS.get(str(r.get("status")), inline(r.get("status")))),
            ]
        )
    return out


HEADERS = ["slice", "n", "anchor", "now", "Δ pts", "drift tol.", "p (Holm)", "MDE pts", "status"]


def _headers(results: ResultsDocument) -> list[str]:
    """The table's headers: the p shown is the adjusted one where there is one (`_rows`), and the
    drift comparison adjusts as the baseline comparison does (gate/drift.py), so its column says
    which adjustment, as the slices' table does (issue 25)."""
    return [f"p ({adjustment_label(results.get('comparison'))})" if h == "p (Holm)" else h for h in HEADERS]


def trend_lines(results: ResultsDocument, *, spark: bool) -> list[str]:
    """One line per slice of `drift.trend`: the accuracies, oldest baseline first, this run last."""
    drift: Mapping[str, Any] = results.get("drift") or {}
    trend: Mapping[str, Any] = drift.get("trend") or {}
    out = []
    for key in ordered(trend):
        points_ = trend[key]
        values = [p.get("accuracy") for p in points_]
        shown = " → ".join(str(pct(v)) for v in values)
        line = f"- {inline(key)}: "
        if spark:
            line += f"`{sparkline(values)}` "
        out.append(line + f"{shown} (last {len(values) - 1} baseline(s), then this run)")
    return out


def section(results: ResultsDocument) -> Section | None:
    """REPORT.md's "Drift since the anchor": every checked slice, and the trends."""
    drift: Mapping[str, Any] | None = results.get("drift")
    if not drift:
        return None
    parts = ["### Drift since the anchor", _head(drift)]
    keys = ordered(drift.get("slices") or {})
    if keys:
        parts.append(table(_headers(results), _rows(drift, keys), "lrrrrrrrl"))
    lines = trend_lines(results, spark=True)
    if lines:
        parts.append("Trend of each regressed or drifting slice:\n\n" + "\n".join(lines))
    return Section("\n\n".join(parts), essential=True)


def comment(results: ResultsDocument) -> str:
    """The PR comment's part: the drift's status, the slices beyond or near their drift tolerance
    (all of them on a baseline update's run), and the sparklines."""
    drift: Mapping[str, Any] | None = results.get("drift")
    if not drift:
        return ""
    status = drift.get("status")
    if status in ("off", "no_anchor", "not_comparable") and not (drift.get("trend") or {}):
        return ""
    parts = ["### Drift since the anchor", _head(drift)]
    rows = drift.get("slices") or {}
    keys = sorted(ordered(rows), key=lambda k: _order(rows[k]))[:MAX_COMMENT_ROWS]
    if keys:
        parts.append(table(_headers(results), _rows(drift, keys), "lrrrrrrrl"))
    lines = trend_lines(results, spark=True)
    if lines:
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _order(row: Mapping[str, Any]) -> tuple[int, float]:
    rank = {"regressed": 0, "inconclusive": 1}.get(str(row.get("status")), 2)
    delta = row.get("delta")
    return rank, delta if isinstance(delta, int | float) else 0.0
