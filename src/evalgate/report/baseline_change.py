"""An accepted baseline change as Markdown: per slice, the old baseline -> the new one.

The rows come from gate/baseline_diff.py, which reads them out of the gate-changes diff; this
module only draws them (the report and the PR comment both show it), so the gate package never
imports the report's Markdown helpers.
"""

from __future__ import annotations

from evalgate.gate.baseline_diff import Change
from evalgate.gate.slice_order import ordered
from evalgate.report.markdown import Md, code, pct, points, table

MAX_ROWS = 40


def change_table(change: Change, max_rows: int = MAX_ROWS) -> Md:
    """Markdown: "`baselines/x.json`: accepted change (old baseline -> new)" and a table."""
    keys = ordered(change.slices)
    rows = []
    for key in keys[:max_rows]:
        old, new = change.slices[key]
        delta = None if old is None or new is None else new - old
        rows.append([key, pct(old), pct(new), points(delta)])
    head = f"{code(change.path)}: accepted change per slice (old baseline → new)"
    if not rows:
        return Md(f"{head}: no slice accuracy changed.")
    parts = [head, table(["slice", "old baseline", "new", "Δ pts"], rows, "lrrr")]
    if len(keys) > max_rows:
        parts.append(f"… and {len(keys) - max_rows:,} more slices.")
    return Md("\n\n".join(parts))
