"""The numbers a verdict's headline states, the same for REPORT.md, the PR comment and the console.

Like with like (issue 25): with a baseline, the headline's "before → after" pair is the overall
accuracy on the probes both runs scored (the comparison's `overall` row, as every gated slice is
compared), never this run's accuracy over every probe beside the baseline's over its own: new
items answered well or badly would move one side only. The run's own accuracy is computed from
its per-probe entries, not read from the `slices` table (a results file read back may carry a
stale one). The undecided slices are named with the numbers a reader needs (docs/gate.md,
"Verdict"). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalgate.gate.results import round_floats
from evalgate.scoring.ordinal import is_ordinal
from evalgate.types import STATUS_SCORED


@dataclass(frozen=True)
class Overall:
    accuracy: float | None  # on the shared probes when `baseline` is set, else on every scored probe
    baseline: float | None  # the baseline's accuracy on the same probes; None without a comparison
    n: int  # the probes `accuracy` is over
    all_accuracy: float | None  # this run on every scored probe (new ones included)
    all_n: int


def run_accuracy(results: Mapping[str, Any]) -> tuple[float | None, int]:
    """(accuracy, n) over this run's scored entries, as `slices.overall` counts and rounds them."""
    right = n = 0
    for e in results.get("probes") or []:
        # type() first: an isinstance against the Mapping ABC per entry was seconds at 100,000
        entry = type(e) is dict or isinstance(e, Mapping)
        if entry and e.get("status") == STATUS_SCORED and not is_ordinal(e):
            n += 1
            right += e.get("correct") is True
    return (round_floats(right / n) if n else None), n


def overall(results: Mapping[str, Any]) -> Overall:
    acc, n = run_accuracy(results)
    row = ((results.get("comparison") or {}).get("slices") or {}).get("overall")
    if isinstance(row, Mapping) and isinstance(row.get("n_shared"), int) and row["n_shared"] > 0:
        return Overall(row.get("accuracy"), row.get("baseline_accuracy"), row["n_shared"], acc, n)
    return Overall(acc, None, n, acc, n)


def pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def overall_text(results: Mapping[str, Any]) -> str:
    """ "overall 32.4% (baseline 31.4%) on the 500 probes both runs scored; 34.0% on all 540" or
    "overall 97.7%" (no comparison). Plain text: the callers escape or format it."""
    o = overall(results)
    if o.baseline is None:
        return f"overall {pct(o.accuracy)}"
    text = f"overall {pct(o.accuracy)} (baseline {pct(o.baseline)}) on the {o.n:,} probes both runs scored"
    if o.all_n != o.n:
        text += f"; {pct(o.all_accuracy)} on all {o.all_n:,} this run scored"
    return text


def undecided(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """`comparison.inconclusive`, each entry as read (the schema checked it), then the drift's
    (gate/drift.py), its slice named "drift SLICE"."""
    entries = (results.get("comparison") or {}).get("inconclusive") or []
    out = [dict(e) for e in entries if isinstance(e, Mapping)]
    drift = results.get("drift") or {}
    for e in drift.get("inconclusive") or [] if drift.get("status") == "inconclusive" else []:
        if isinstance(e, Mapping):
            name = f"drift {e.get('slice')}" if e.get("slice") else "drift"
            out.append({**e, "slice": name})
    return out


def drifted_names(results: Mapping[str, Any]) -> list[str]:
    """The slices that drifted beyond gate.drift_tolerance since the anchor: "language:es (-5.7 pts)"."""
    drift = results.get("drift") or {}
    if drift.get("status") != "fail":
        return []
    rows = drift.get("slices") or {}
    return [f"{k} ({points((rows.get(k) or {}).get('delta'))} pts)" for k in drift.get("regressed") or []]


def points(x: Any) -> str:
    """Signed percentage points: "-25.7"."""
    return f"{100 * x:+.1f}" if isinstance(x, int | float) and not isinstance(x, bool) else "?"


def adjustment_label(comparison: Mapping[str, Any] | None) -> str:
    """The multiplicity adjustment a comparison used, for a column header: "Holm" unless it
    records Westfall–Young and did not fall back (as gate/westfall_young.adjustment_name says;
    repeated here so that the comment job, which installs no numpy, does not import that module)."""
    doc = comparison or {}
    if doc.get("multiplicity") == "westfall-young" and not doc.get("multiplicity_fallback"):
        return "Westfall–Young"
    return "Holm"


def undecided_names(results: Mapping[str, Any]) -> list[str]:
    """Each undecided slice in a few words: "topic:geography (-25.7 pts on 35, MDE 37.9 pts)",
    "overall (-95.4 pts on 618; 5 clusters, needs 9)", "nothing was gated (…)". Plain text."""
    out = []
    for e in undecided(results):
        why, drop, n = e.get("why"), e.get("drop"), e.get("n")
        moved = f"{points(-drop if isinstance(drop, int | float) else None)} pts"
        if why == "nothing_gated":
            largest = e.get("largest_n", 0)
            out.append(
                f"nothing was gated (no slice shares gate.min_n = {e.get('min_n')} probes with the baseline; "
                f"the largest shares {largest})"
            )
        elif why == "perplexity_undecided":
            ratio, limit = e.get("ratio"), e.get("max_ratio")
            shown = f"×{ratio:.3f}" if isinstance(ratio, int | float) else "?"
            allowed = f", limit ×{limit:.2f}" if isinstance(limit, int | float) else ""
            name = f"{e['suite']}: perplexity" if e.get("suite") else "perplexity"
            out.append(f"{name} ({shown} on {n} sentences{allowed})")
        elif why == "too_small":
            # under gate.min_n: not tested at all (gate/inconclusive.py)
            out.append(f"{e.get('slice')} ({moved} on {n}, under gate.min_n = {e.get('min_n')}, not tested)")
        elif why == "too_few_clusters":
            needed = e.get("clusters_needed")
            need = f", needs {needed}" if needed else ""
            out.append(f"{e.get('slice')} ({moved} on {n}; {e.get('n_clusters')} clusters{need})")
        else:
            mde = e.get("mde")
            power = f"MDE {100 * mde:.1f} pts" if isinstance(mde, int | float) else "no MDE"
            out.append(f"{e.get('slice')} ({moved} on {n}, {power})")
    drift = results.get("drift") or {}
    if drift.get("status") == "not_comparable" and drift.get("reasons"):
        out.append(f"drift since the anchor could not be measured ({drift.get('reason')})")
    return out
