"""When the gate cannot decide: the `inconclusive` verdict's pieces (docs/gate.md, "Verdict").

A gate must never show a green check for what it could not see. Four cases make a run
inconclusive rather than a pass (a failure elsewhere still fails it):

- `low_power`: a gated slice whose observed drop is beyond its tolerance, which its test did not
  flag (not significant after the multiplicity adjustment), and which is low power (its MDE above
  `gate.mde_max`, or none). A floor (`gate.min_accuracy`) that held does not decide it: a floor
  makes a collapse fail, it cannot tell a real drop above it from noise; a broken floor fails.
- `too_small`: a slice under `gate.min_n` (so no test was run on it) whose observed drop is beyond
  its tolerance: the gate did not see it, floor or not, so it is named, not passed.
- `too_few_clusters`: the same, for a slice whose `gate.cluster` field gives it too few clusters to
  reach its level at all: with G clusters no sign-flip p-value is below 2^-G (1 / (draws + 1)
  beyond 16 clusters, gate/cluster.py), and a slice can turn a passing gate into a failing one
  only at the first Holm step, alpha / (gated slices): a later step is reached only after another
  slice has failed the gate already.
- `nothing_gated`: a baseline, but no slice was gated (every slice under `gate.min_n`, or nothing
  shared with the baseline) and no floor was checked.
- `perplexity_undecided`: a perplexity (the run's, or a suite's own test set's) whose betting
  test ran and did not flag it after the multiplicity adjustment, but whose observed ratio is
  beyond `gate.perplexity_max_ratio`: too few sentences to tell that increase from noise.

This module holds the numbers a reader needs to make such a slice decidable: how many items it
would need to catch the drop it shows (with the shipped test's exact power, gate/noninferiority.py,
or the Wilson rule's), and how many clusters its level asks for. Pure: no I/O.
"""

from __future__ import annotations

import math
from typing import Final

from evalgate.gate import cluster, noninferiority
from evalgate.gate.stats import TARGET_POWER, mde_wilson

LOW_POWER: Final = "low_power"
TOO_FEW_CLUSTERS: Final = "too_few_clusters"
NOTHING_GATED: Final = "nothing_gated"
PERPLEXITY_UNDECIDED: Final = "perplexity_undecided"
TOO_SMALL: Final = "too_small"

# `items_needed` stops here and says "more than": a drop barely above the tolerance needs tens of
# thousands of items, and each size tried costs the certified critical value of that size.
ITEMS_CAP = 10_000


def smallest_pvalue(n_clusters: int) -> float:
    """The smallest p-value the sign-flip test can give a slice of `n_clusters` clusters."""
    if n_clusters <= 0:
        return 1.0
    if n_clusters <= cluster.EXACT_MAX_CLUSTERS:
        return 2.0**-n_clusters
    return 1.0 / (cluster.DRAWS + 1)


def reaches(n_clusters: int, level: float) -> bool:
    """Can a slice of `n_clusters` clusters ever have a p-value below `level`?"""
    return smallest_pvalue(n_clusters) < level


def clusters_needed(level: float) -> int | None:
    """The fewest clusters whose smallest p-value is below `level`; None when no number of
    clusters reaches it (the Monte Carlo test's 1 / (draws + 1) is not below it either)."""
    for g in range(1, cluster.EXACT_MAX_CLUSTERS + 2):
        if reaches(g, level):
            return g
    return None


def items_needed(
    drop: float,
    *,
    n_now: int,
    tolerance: float,
    level: float,
    background: float,
    rule: str = "paired",
    baseline_accuracy: float | None = None,
    z: float = 1.96,
    design_effect: float | None = None,
) -> int | None:
    """About how many shared items a slice needs for its rule to catch a true drop of `drop` with
    power 0.8 (the MDE's target), at the level and disagreement of this comparison; None when more
    than `ITEMS_CAP` (a drop barely above the tolerance) or when no size does.

    The exact power saws up and down with n, so this is the first size found on a ladder of sizes
    above `n_now` and bisected to within 2%: "about", as docs/gate.md's table D says. With a design
    effect (gate.cluster) the paired power is that of n / design effect independent probes.
    """
    if not drop > tolerance or n_now < 1:
        return None
    deff = design_effect if design_effect and design_effect > 1 else 1.0

    def enough(n: int) -> bool:
        if rule == "wilson":
            if baseline_accuracy is None:
                return False
            found = mde_wilson(n, baseline_accuracy, z, tolerance)
            return found is not None and found <= drop
        n_eff = max(1, int(n / deff))
        return noninferiority.power(n_eff, tolerance, level, drop, background) >= TARGET_POWER

    if enough(n_now):
        return n_now
    # Sizes tried first: a ladder shared by every slice (x sqrt 2 steps), so that the certified
    # critical values behind them are computed once per comparison (noninferiority's caches).
    lo = n_now
    for hi in _LADDER:
        if hi <= n_now:
            continue
        if enough(hi):
            break
        lo = hi
    else:
        return None
    while hi - lo > max(1, math.ceil(lo / 50)):
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    return hi


_LADDER = tuple(sorted({min(ITEMS_CAP, math.ceil(16 * 2 ** (k / 2))) for k in range(0, 24)}))
