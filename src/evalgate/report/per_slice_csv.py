"""per_slice.csv: one row per slice, the same numbers as results.json, for spreadsheets and scripts.

Columns: slice, family, n, correct, accuracy, wilson_low, wilson_high; with a baseline also the
comparison's n_shared, baseline_accuracy, delta, p_value, p_adjusted, mde and status (empty for
slices the gate did not compare); under `leaks: exclude` also the full series (`*_full`). A run
with suites (docs/suites.md) adds `suite` after `family` when it has several, `chance` (mean 1/K)
after the interval when it has multiple-choice items, and `min_accuracy`, `floor_status` when
the configuration sets floors.
Floats are written with a fixed 6 decimals (p-values with 6 significant digits) and rows in one
fixed order, so the same results give the same bytes.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

import numpy as np

from evalgate.gate.document import ResultsDocument, Slice, SliceComparison
from evalgate.gate.slice_order import family, ordered, split_suite
from evalgate.report.suites import chance as suites_chance
from evalgate.report.suites import floors as suite_floors
from evalgate.report.suites import multi_suite

SLICE_COLUMNS = ("n", "correct", "accuracy", "wilson_low", "wilson_high")
COMPARISON_COLUMNS = ("n_shared", "baseline_accuracy", "delta", "p_value", "p_adjusted", "mde", "status")
FLOOR_COLUMNS = ("min_accuracy", "floor_status")
INT_COLUMNS = ("n", "correct", "n_shared", "n_full", "correct_full")
TEXT_COLUMNS = ("slice", "family", "suite", "status", "floor_status")
FLOAT_FORMAT = "%.6f"
P_COLUMNS = ("p_value", "p_adjusted")


def _cell(col: str, value: Any) -> str:
    """One field as text: empty when missing, counts as integers, p-values to 6 significant
    digits (p = 1.6e-13 must not read as 0.000000), other numbers to 6 decimals."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if col in TEXT_COLUMNS:
        return str(value)
    if col in INT_COLUMNS:
        return str(int(value))
    if col in P_COLUMNS:
        return f"{float(value):.6g}"
    # numpy's rounding (scale, round half to even, unscale), then + 0.0 so that -0.0000001
    # prints as 0.000000, never -0.000000; the bytes are those the pandas version wrote
    return FLOAT_FORMAT % (float(np.round(np.float64(value), 6)) + 0.0)


def per_slice_rows(results: ResultsDocument) -> tuple[list[str], list[dict[str, Any]]]:
    """The header and one mapping per slice, in the fixed slice order (values not yet formatted)."""
    slices = results["slices"]
    full: Mapping[str, Slice] | None = results.get("slices_full")
    comparison: Mapping[str, SliceComparison] | None = (results.get("comparison") or {}).get("slices")
    several = multi_suite(results)
    chance = suites_chance(results)
    floors = suite_floors(results)
    keys = set(slices) | set(comparison or {}) | set(full or {}) | set(floors)
    rows = []
    for key in ordered(keys):
        s = slices.get(key)  # each key may be missing from the others
        row: dict[str, Any] = {"slice": key, "family": family(key)}
        if several:
            row["suite"] = split_suite(key)[0]
        row.update({col: s.get(col) if s else None for col in SLICE_COLUMNS})
        if chance:
            row["chance"] = chance.get(key)
        if floors:
            floor = floors.get(key) or {}
            row.update(min_accuracy=floor.get("min_accuracy"), floor_status=floor.get("status"))
        if comparison is not None:
            c = comparison.get(key)
            row.update({col: c.get(col) if c else None for col in COMPARISON_COLUMNS})
        if full is not None:
            f = full.get(key)
            row.update({f"{col}_full": f.get(col) if f else None for col in SLICE_COLUMNS})
        rows.append(row)
    columns = ["slice", "family", *(["suite"] if several else []), *SLICE_COLUMNS]
    if chance:
        columns.append("chance")
    if floors:
        columns += FLOOR_COLUMNS
    if comparison is not None:
        columns += COMPARISON_COLUMNS
    if full is not None:
        columns += [f"{c}_full" for c in SLICE_COLUMNS]
    return columns, rows


def render_csv(results: ResultsDocument) -> str:
    """The CSV text (UTF-8, `\\n` line ends, header row always present; quoting as csv's default)."""
    columns, rows = per_slice_rows(results)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(col, row.get(col)) for col in columns])
    return out.getvalue()
