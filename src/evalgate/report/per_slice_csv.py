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

from collections.abc import Mapping
from typing import Any

import pandas as pd

from evalgate.gate.document import ResultsDocument, Slice, SliceComparison
from evalgate.gate.slice_order import family, ordered, split_suite
from evalgate.report.suites import chance as suites_chance
from evalgate.report.suites import floors as suite_floors
from evalgate.report.suites import multi_suite

SLICE_COLUMNS = ("n", "correct", "accuracy", "wilson_low", "wilson_high")
COMPARISON_COLUMNS = ("n_shared", "baseline_accuracy", "delta", "p_value", "p_adjusted", "mde", "status")
FLOOR_COLUMNS = ("min_accuracy", "floor_status")
INT_COLUMNS = ("n", "correct", "n_shared", "n_full", "correct_full")
FLOAT_FORMAT = "%.6f"
P_COLUMNS = ("p_value", "p_adjusted")


def per_slice_frame(results: ResultsDocument) -> pd.DataFrame:
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
    frame = pd.DataFrame(rows, columns=columns)
    for col in columns:
        if col in INT_COLUMNS:
            # nullable integers: a missing count stays empty instead of turning the column into floats
            frame[col] = frame[col].astype("Int64")
        elif col in P_COLUMNS:
            # significant digits, not decimals: p = 1.6e-13 must not read as 0.000000
            frame[col] = [None if pd.isna(v) else f"{float(v):.6g}" for v in frame[col]]
        elif col not in ("slice", "family", "suite", "status", "floor_status"):
            # round first and add 0.0 so that -0.0000001 prints as 0.000000, never -0.000000
            frame[col] = frame[col].astype("float64").round(6) + 0.0
    return frame


def render_csv(results: ResultsDocument) -> str:
    """The CSV text (UTF-8, `\\n` line ends, header row always present)."""
    return per_slice_frame(results).to_csv(index=False, float_format=FLOAT_FORMAT, lineterminator="\n")
