"""Per-slice aggregation of scored probes: accuracy with Wilson bounds, per-verb counts, calibration.

Input: the results.json per-probe entries (docs/ARCHITECTURE.md, "per-probe entry"). Output: the
results.json "slices", "per_verb", "calibration", "counts" and "ambiguous" objects.

What counts where (docs/gate.md, "Slices of one run"):
- A slice's `n` is always the number of probes its accuracy is computed from: entries with
  status "scored". `accuracy`, `wilson_low`, `wilson_high` are null when n == 0, so no tool ever
  reads 0 of 0 (or 0 of 7 unscored) as 0%.
- Ambiguous probes have no single right answer: they are counted in `n_ambiguous` of every slice
  they belong to, never in `n`. `label:ambiguous` therefore has n = 0 and null accuracy, and
  carries `n_ambiguous` with the entropies that describe those probes instead
  (`mean_entropy`, `mean_entropy_norm`).
- model_oov and leak-excluded probes are counted apart (`n_model_oov`, `n_excluded`).
- Deprecated probes are retired: in `counts` only, in no slice and no per-verb cell.
- Ordinal probes (`kind: ordinal`, docs/ordinal.md) are scale judgements, not verb-form choices: in
  `counts` only here; scoring/ordinal.py gives their own numbers (results.json "ordinal").
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from evalgate.gate.slice_order import FAMILIES, slice_sort_key
from evalgate.gate.stats import entropy_summary, expected_calibration_error, wilson_interval
from evalgate.scoring.ordinal import is_ordinal
from evalgate.types import (
    DEFAULT_REVIEW_ENTROPY,
    STATUS_AMBIGUOUS,
    STATUS_DEPRECATED,
    STATUS_EXCLUDED,
    STATUS_OOV,
    STATUS_SCORED,
    STATUSES,
)

# The families a per-probe entry counts in, in report order (gate/slice_order.py: one order).
_ENTRY_FAMILIES = tuple(f for f in FAMILIES if f != "overall")
_STATUS_FIELD = {STATUS_AMBIGUOUS: "n_ambiguous", STATUS_OOV: "n_model_oov", STATUS_EXCLUDED: "n_excluded"}

DEFAULT_CONFIDENT_ENTROPY = 0.5  # a wrong answer below this normalised entropy is a confident error


def slice_keys(entry: dict[str, Any]) -> list[str]:
    """The slices a per-probe entry counts in, `overall` first (same keys as `Probe.slices`).

    Empty for an ordinal probe: a scale judgement is not a verb-form choice, so it is reported
    apart (scoring/ordinal.py, results.json "ordinal") and never enters an accuracy or a gate.
    """
    if is_ordinal(entry):
        return []
    keys = ["overall"]
    # With several suites (docs/suites.md) a probe also counts in its suite's slices, named
    # "SUITE/overall" and "SUITE/dim:value"; `overall` stays the whole run.
    suite = entry.get("suite")
    prefix = f"{suite}/" if suite else ""
    if suite:
        keys.append(f"{suite}/overall")
    dims = entry.get("slices")
    if isinstance(dims, dict):  # a multiple-choice item: the dimensions its suite declares
        keys += [f"{prefix}{dim}:{value}" for dim, value in dims.items()]
        return keys
    for family in _ENTRY_FAMILIES:
        value = entry.get(family)
        if value:
            keys.append(f"{prefix}{family}:{value}")
    return keys


def slice_stat(n: int, correct: int, z: float) -> dict[str, Any]:
    """{n, correct, accuracy, wilson_low, wilson_high}; the last three null when n == 0."""
    if n == 0:
        return {"n": 0, "correct": 0, "accuracy": None, "wilson_low": None, "wilson_high": None}
    lo, hi = wilson_interval(correct, n, z)
    return {"n": n, "correct": correct, "accuracy": correct / n, "wilson_low": lo, "wilson_high": hi}


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _is_correct(entry: dict[str, Any]) -> bool:
    if not isinstance(entry.get("correct"), bool):
        raise ValueError(f"probe {entry.get('id')}: a scored entry needs a boolean 'correct'")
    return entry["correct"]


def _live(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    for e in entries:
        if e.get("status") not in STATUSES:
            raise ValueError(f"probe {e.get('id')}: unknown status {e.get('status')!r}")
    return [e for e in entries if e["status"] != STATUS_DEPRECATED]


def _form(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The live verb-form entries: ordinal probes have their own section (scoring/ordinal.py)."""
    return [e for e in _live(entries) if not is_ordinal(e)]


def aggregate_slices(entries: list[dict[str, Any]], z: float) -> dict[str, dict[str, Any]]:
    """results.json "slices": every slice that holds at least one non-deprecated probe."""
    tally: dict[str, dict[str, Any]] = {}
    for e in _live(entries):
        for key in slice_keys(e):
            t = tally.setdefault(
                key, {"n": 0, "correct": 0, "n_ambiguous": 0, "n_model_oov": 0, "n_excluded": 0, "H": []}
            )
            if e["status"] == STATUS_SCORED:
                t["n"] += 1
                t["correct"] += _is_correct(e)
            else:
                t[_STATUS_FIELD[e["status"]]] += 1
                if e["status"] == STATUS_AMBIGUOUS and e.get("entropy") is not None:
                    t["H"].append((e["entropy"], e.get("entropy_norm")))
    out: dict[str, dict[str, Any]] = {}
    for key in sorted(tally, key=slice_sort_key):
        t = tally[key]
        row = slice_stat(t["n"], t["correct"], z)
        row.update(n_ambiguous=t["n_ambiguous"], n_model_oov=t["n_model_oov"], n_excluded=t["n_excluded"])
        if key.rpartition("/")[2] == "label:ambiguous":  # "verbs/label:ambiguous" of a suite too
            row["mean_entropy"] = _mean([h for h, _ in t["H"]])
            row["mean_entropy_norm"] = _mean([hn for _, hn in t["H"] if hn is not None])
        out[key] = row
    return out


def aggregate_per_verb(entries: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """{"en:go": {"n", "correct"}}: raw counts of scored probes, no intervals (cells of 2-4, docs/gate.md)."""
    cells: dict[str, dict[str, int]] = {}
    for e in _form(entries):
        if "verb" not in e:
            continue  # a multiple-choice item has no verb (docs/suites.md)
        cell = cells.setdefault(f"{e.get('language')}:{e.get('verb')}", {"n": 0, "correct": 0})
        if e["status"] == STATUS_SCORED:
            cell["n"] += 1
            cell["correct"] += _is_correct(e)
    return {key: cells[key] for key in sorted(cells)}


def calibration(
    entries: list[dict[str, Any]],
    *,
    review_entropy: float = DEFAULT_REVIEW_ENTROPY,
    confident_entropy: float = DEFAULT_CONFIDENT_ENTROPY,
    n_bins: int = 10,
) -> dict[str, Any]:
    """ECE + reliability table over scored probes; confident errors vs high-entropy items (docs/gate.md).

    `confident_errors`: wrong answers with entropy_norm < confident_entropy, most confident first
    (the model is sure and wrong: a knowledge gap, not ambiguity). `high_entropy`: scored probes
    above review_entropy, most uncertain first ("needs human review": maybe the probe itself is
    ambiguous). `entropy` summarises entropy_norm for right answers, wrong answers and ambiguous
    probes: ambiguous items should sit high, confident errors low.
    """
    live = _form(entries)
    scored = [e for e in live if e["status"] == STATUS_SCORED and e.get("confidence") is not None]
    ece, bins = expected_calibration_error(
        [e["confidence"] for e in scored], [_is_correct(e) for e in scored], n_bins
    )

    def hn(some: Iterable[dict[str, Any]]) -> list[tuple[dict[str, Any], float]]:
        """The entries that have a normalised entropy, each with it."""
        return [(e, h) for e in some if (h := e.get("entropy_norm")) is not None]

    wrong = hn(e for e in scored if not e["correct"])
    confident = sorted(
        ((e, h) for e, h in wrong if h < confident_entropy), key=lambda eh: (eh[1], eh[0]["id"])
    )
    unsure = sorted(
        ((e, h) for e, h in hn(scored) if h > review_entropy), key=lambda eh: (-eh[1], eh[0]["id"])
    )
    ambiguous = hn(e for e in live if e["status"] == STATUS_AMBIGUOUS)
    return {
        "ece": ece,
        "n": len(scored),
        "bins": bins,
        "confident_entropy": confident_entropy,
        "review_entropy": review_entropy,
        "confident_errors": [e["id"] for e, _ in confident],
        "high_entropy": [e["id"] for e, _ in unsure],
        "entropy": {
            "correct": entropy_summary([h for e, h in hn(scored) if e["correct"]]),
            "wrong": entropy_summary([h for _, h in wrong]),
            "ambiguous": entropy_summary([h for _, h in ambiguous]),
        },
    }


def aggregate(
    entries: list[dict[str, Any]],
    z: float,
    *,
    review_entropy: float = DEFAULT_REVIEW_ENTROPY,
    confident_entropy: float = DEFAULT_CONFIDENT_ENTROPY,
    n_bins: int = 10,
) -> dict[str, Any]:
    """Everything results.json derives from the per-probe entries.

    Returns {"slices", "per_verb", "calibration", "counts", "ambiguous"}; `counts` has one number
    per status plus the total, `ambiguous` lists each ambiguous probe with its entropies.
    """
    counts = {status: 0 for status in STATUSES}
    for e in _live(entries):
        counts[e["status"]] += 1
    counts[STATUS_DEPRECATED] = sum(1 for e in entries if e["status"] == STATUS_DEPRECATED)
    counts["total"] = len(entries)
    return {
        "slices": aggregate_slices(entries, z),
        "per_verb": aggregate_per_verb(entries),
        "calibration": calibration(
            entries, review_entropy=review_entropy, confident_entropy=confident_entropy, n_bins=n_bins
        ),
        "counts": counts,
        "ambiguous": [
            {"id": e["id"], "entropy": e.get("entropy"), "entropy_norm": e.get("entropy_norm")}
            for e in entries
            if e["status"] == STATUS_AMBIGUOUS and not is_ordinal(e)
        ],
    }
