"""The gate's plain statistics: Wilson, Holm, the wilson rule's MDE, ECE, entropy summaries.

The paired rule's test, power and MDE are gate/noninferiority.py's. Here, for reference only: the
exact conditional McNemar p-value of "no change" (results.json's `p_mcnemar`) and the power and
MDE of the rule the gate used before issue 14 (McNemar p < alpha and a drop above the tolerance),
which bench/gate_power.py prints beside the shipped test's.

Pure functions, no I/O. Every function handles its empty case explicitly (n = 0, no discordant
pairs, no items) instead of dividing by zero; the sources of the formulas are cited where used.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np

from evalgate.gate.binomial import binom_sf_scalar

# Background disagreement between two equally good checkpoints: the fraction of probes whose
# outcome differs although accuracy does not change (half flip each way). The paired MDE needs it
# because a paired test's power depends on the discordant pairs, not only on the drop; the gate
# estimates it from the flips that are not a regression's own and never goes below the configured
# `gate.assumed_disagreement` (gate/power.py, `background_disagreement`). It only decides which slices
# are "low power": the false-alarm guarantee of the paired rule does not depend on it.
ASSUMED_DISAGREEMENT = 0.05
TARGET_POWER = 0.8
# Accuracy differences are ratios of small integers; this keeps "a drop of exactly the tolerance"
# from counting as exceeding it through float rounding (0.1 - 0.08 = 0.020000000000000004).
_EPS = 1e-9


# The smallest p-value printed as a number. A p-value computed in floating point can underflow to
# 0 (a perplexity test over thousands of sentences, a huge slice): 0 is not a probability anyone
# measured, so it prints as a bound (docs/gate.md); results.json keeps the number.
P_FLOOR = 1e-300


def p_is(p: float, digits: int = 3) -> str:
    """ "= 0.00316", or "< 1e-300" for a p-value below that (underflow included): never "= 0"."""
    if not p >= P_FLOOR:
        return f"< {P_FLOOR:.0e}"
    return f"= {p:.{digits}g}"


def exceeds(drop: float, tolerance: float) -> bool:
    """True when `drop` is strictly larger than `tolerance` (a drop equal to it is tolerated)."""
    return drop > tolerance + _EPS


def wilson_interval(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials.

    Wilson, E. B. (1927), "Probable inference, the law of succession, and statistical inference",
    JASA 22:209-212; the form below is eq. (3) of Newcombe, R. G. (1998), "Two-sided confidence
    intervals for the single proportion", Statistics in Medicine 17:857-872:

        centre = (p + z²/2n) / (1 + z²/n),   half = z √(p(1-p)/n + z²/4n²) / (1 + z²/n)

    Unlike the normal (Wald) interval it never collapses to a point at 0/n or n/n. n = 0 carries
    no information, so the interval is the whole range (0, 1); callers that report accuracy show
    null there instead.
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"wilson_interval needs 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # At the boundaries the bound is exactly 0 or 1 algebraically; say so instead of leaving
    # a 1e-17 rounding residue in a results file.
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return (lo, hi)


def binom_sf_half(k: int, n: int) -> float:
    """P(X >= k) for X ~ Bin(n, 1/2) in floating point, O(sqrt(n)) (gate/binomial.py states and
    tests its error bound; the big-integer sum it replaces took seconds at 100k discordant pairs)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return binom_sf_scalar(k, n, 0.5)


def mcnemar_exact_one_sided(b: int, c: int) -> float:
    """Exact one-sided McNemar test that the new run is worse (results.json's `p_mcnemar`, for
    reference: the gate's p-value is gate/noninferiority.py's).

    b = probes the baseline got right and the new run wrong, c = wrong -> right. Under "no change"
    each discordant pair is equally likely to go either way, so b | b + c ~ Bin(b + c, 1/2) and
    p = P(X >= b). No discordant pairs: no evidence at all, p = 1.0.
    """
    if b < 0 or c < 0:
        raise ValueError(f"mcnemar needs counts >= 0, got b={b}, c={c}")
    if b + c == 0:
        return 1.0
    return binom_sf_half(b, b + c)


def holm(pvalues: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values (Holm, S. 1979, Scand. J. Statist. 6:65-70).

    Sorted ascending, p_(i) becomes max_{j <= i} min(1, (m - j + 1) p_(j)): monotone in the raw
    order and capped at 1, so "adjusted < alpha" is Holm's procedure at level alpha (the same
    numbers as R's p.adjust(method = "holm")). Ties are ordered by key, so the result is
    deterministic. Keys come back in the input order.
    """
    m = len(pvalues)
    order = sorted(pvalues, key=lambda key: (pvalues[key], key))
    adjusted: dict[str, float] = {}
    running = 0.0
    for rank, key in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[key]))
        adjusted[key] = running
    return {key: adjusted[key] for key in pvalues}


# --- minimum detectable effect -------------------------------------------------------------
# The paired rule's MDE is noninferiority.mde (the shipped test). `mcnemar_rule_*` below are the
# rule the gate used before issue 14, kept only so bench/gate_power.py can print it beside the
# shipped test; docs/gate.md's tables and MDEs must not come from them.


def _log_factorials(n: int) -> np.ndarray:
    return np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))))


def _binom_pmf(n: int, p: float, lf: np.ndarray) -> np.ndarray:
    """The whole Bin(n, p) pmf, k = 0..n, from log-factorials (no scipy)."""
    k = np.arange(n + 1)
    if p <= 0.0:
        return (k == 0).astype(np.float64)
    if p >= 1.0:
        return (k == n).astype(np.float64)
    logpmf = lf[n] - lf[k] - lf[n - k] + k * math.log(p) + (n - k) * math.log1p(-p)
    return np.exp(logpmf)


@lru_cache(maxsize=4096)
def _mcnemar_rule_bmin(c: int, n: int, alpha: float, tolerance: float) -> int:
    """Smallest b the old McNemar rule flags when c probes went wrong -> right (n + 1 if none).

    Both conditions (McNemar p < alpha, drop (b - c)/n > tolerance) only get easier as b grows
    with c fixed, so the rejection region is b >= bmin(c).
    """
    for b in range(c + 1, n - c + 1):
        if exceeds((b - c) / n, tolerance) and mcnemar_exact_one_sided(b, c) < alpha:
            return b
    return n + 1


def mcnemar_rule_power(n: int, drop: float, alpha: float, tolerance: float, background: float) -> float:
    """Exact power of the old McNemar rule at a true drop (model of `mcnemar_rule_mde`)."""
    h = background / 2
    lf = _log_factorials(n)
    pmf_c = _binom_pmf(n, h, lf)
    q = min(1.0, (h + drop) / (1.0 - h))  # P(right -> wrong | not wrong -> right)
    power = 0.0
    for c in np.flatnonzero(pmf_c > 1e-12):
        bmin = _mcnemar_rule_bmin(int(c), n, alpha, tolerance)
        m = n - int(c)
        if bmin <= m:
            power += pmf_c[c] * float(_binom_pmf(m, q, lf)[bmin:].sum())
    return power


def _wilson_kmax(n: int, baseline: float, z: float, tolerance: float) -> int:
    """Largest new correct count K the Wilson rule flags (-1 if none).

    The rule fires when wilson_high(K) + tolerance < baseline, and the upper bound grows with K.
    """
    kmax = -1
    for k in range(n + 1):
        if baseline > wilson_interval(k, n, z)[1] + tolerance:
            kmax = k
        else:
            break
    return kmax


def _smallest_drop(power_at, d_max: float, target: float) -> float | None:
    """Bisection for the smallest drop with power >= target; power grows with the drop."""
    if d_max <= 0 or power_at(d_max) < target:
        return None
    lo, hi = 0.0, d_max
    while hi - lo > 1e-4:
        mid = (lo + hi) / 2
        if power_at(mid) >= target:
            hi = mid
        else:
            lo = mid
    return round(hi, 4)


def mcnemar_rule_mde(
    n: int,
    alpha: float,
    tolerance: float,
    baseline: float = 1.0,
    background: float = ASSUMED_DISAGREEMENT,
    power: float = TARGET_POWER,
) -> float | None:
    """Smallest accuracy drop the old McNemar rule flags with probability `power` on n probes.

    Model (the usual one for McNemar power, Connor 1987, Biometrics 43:207-211): each probe is
    independently discordant; it goes wrong -> right with probability h = background / 2 and
    right -> wrong with h + drop, so the expected drop is `drop` and two equally good
    checkpoints still disagree on `background` of the probes. The power is exact, not the normal
    approximation: sum over c ~ Bin(n, h) of P(b >= bmin(c)), where b | c ~ Bin(n - c, (h +
    drop)/(1 - h)) and bmin(c) is the smallest b that the rule flags (one-sided exact McNemar
    p < alpha and (b - c)/n > tolerance). That rule's null is "no change", not the tolerance: it
    flags a slice whose true drop is the tolerance up to half of the time, which is why the gate
    replaced it (bench/gate_power.py, table E). A drop cannot exceed the baseline accuracy; None when
    that drop is not detected with the target power.
    """
    mde = _mcnemar_rule_mde(n, alpha, tolerance, background, power)
    return None if mde is None or mde > baseline else mde


@lru_cache(maxsize=1024)
def _mcnemar_rule_mde(
    n: int, alpha: float, tolerance: float, background: float, power: float
) -> float | None:
    if n <= 0:
        return None
    return _smallest_drop(
        lambda d: mcnemar_rule_power(n, d, alpha, tolerance, background), 1.0 - background, power
    )


@lru_cache(maxsize=4096)
def mde_wilson(
    n: int, baseline: float, z: float, tolerance: float, power: float = TARGET_POWER
) -> float | None:
    """Smallest drop the Wilson rule flags with probability `power` on n shared probes.

    Model: the baseline accuracy is taken as a fixed number (that is how the rule uses it) and
    the new run's correct count is K ~ Bin(n, baseline - drop); the rule fires when the
    baseline lies above K's Wilson upper bound plus the tolerance. Exact binomial sum; None
    when no drop down to accuracy 0 reaches the target power.
    """
    if n <= 0:
        return None
    kmax = _wilson_kmax(n, baseline, z, tolerance)
    if kmax < 0:
        return None
    lf = _log_factorials(n)

    def power_at(drop: float) -> float:
        return float(_binom_pmf(n, max(0.0, baseline - drop), lf)[: kmax + 1].sum())

    return _smallest_drop(power_at, baseline, power)


# --- calibration and entropy ---------------------------------------------------------------


def expected_calibration_error(
    conf: Sequence[float], correct: Sequence[bool], n_bins: int = 10
) -> tuple[float | None, list[dict]]:
    """ECE over equal-width confidence bins, with the reliability table it is computed from.

    ECE = sum_b (n_b / N) |accuracy_b - mean confidence_b| (Naeini, Cooper & Hauskrecht 2015;
    Guo et al. 2017, "On calibration of modern neural networks", eq. 3). Bin i holds
    confidences in [i/B, (i+1)/B), the last bin also 1.0. Empty bins are listed with n = 0 and
    nulls. No items: ECE is None.
    """
    if len(conf) != len(correct):
        raise ValueError("conf and correct must have the same length")
    members: list[list[int]] = [[] for _ in range(n_bins)]
    for i, c in enumerate(conf):
        members[min(int(c * n_bins), n_bins - 1)].append(i)
    bins, ece, total = [], 0.0, len(conf)
    for b, idx in enumerate(members):
        row: dict = {"lo": b / n_bins, "hi": (b + 1) / n_bins, "n": len(idx)}
        if idx:
            mean_conf = math.fsum(conf[i] for i in idx) / len(idx)
            acc = sum(1 for i in idx if correct[i]) / len(idx)
            row.update(mean_confidence=mean_conf, accuracy=acc, gap=acc - mean_conf)
            ece += len(idx) / total * abs(acc - mean_conf)
        else:
            row.update(mean_confidence=None, accuracy=None, gap=None)
        bins.append(row)
    return (ece if total else None), bins


def entropy_summary(values: Sequence[float]) -> dict:
    """n, mean, median, min and max of a list of entropies (nulls when empty)."""
    if not values:
        return {"n": 0, "mean": None, "median": None, "min": None, "max": None}
    ordered = sorted(values)
    mid = len(ordered) // 2
    median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    return {
        "n": len(ordered),
        "mean": math.fsum(ordered) / len(ordered),
        "median": median,
        "min": ordered[0],
        "max": ordered[-1],
    }
