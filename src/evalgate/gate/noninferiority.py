"""The gate's per-slice test: exact unconditional non-inferiority on paired right/wrong outcomes.

The promise in docs/gate.md is "drops up to the tolerance are never a regression", so the null
hypothesis is H0: p_b - p_c <= tolerance, where p_b is the chance a probe goes right -> wrong and
p_c wrong -> right (the true accuracy drop is p_b - p_c). McNemar's null "no change" made a
slice with a true drop of exactly the tolerance fail up to half of the time (docs/gate.md).

Statistic: Tango's score statistic for a difference of paired proportions (Tango 1998,
"Equivalence test and confidence interval for the difference in proportions for the
paired-sample design", Statistics in Medicine 17:891-908, eq. 3):

    Z = (b - c - n d) / sqrt(n (2 p~_c + d (1 - d)))

with p~_c the maximum-likelihood p_c under p_b - p_c = d (the root of a quadratic, Tango's
eq. 4). Its distribution depends on the nuisance parameter s = p_b + p_c (the disagreement), so
the p-value is unconditional in the manner of Suissa & Shuster (1991, "The 2 x 2 matched-pairs
trial: exact unconditional design and analysis", Biometrics 47:361-372): the largest probability
of a statistic at least as extreme as the observed one over every null configuration. Raising
p_b with p_c fixed only makes b larger, so that supremum lies on the boundary p_b - p_c = d,
a one-parameter family in s. gate/supremum.py finds it with a certificate (a grid search missed
narrow peaks and made the test liberal: docs/gate.md, "The p-value is the supremum"); the
p-value is never below it. `region_prob` evaluates one point directly, a sum over c of
Bin(n, p_c)(c) * P(Bin(n - c, p_b / (1 - p_c)) >= b_min(c)) with the tails from gate/binomial.py,
for the power and MDE. tests/gate/test_exact_pvalue_is_the_supremum.py checks the exact size of
the test at every slice size from 20 to 400 probes.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from evalgate.gate import supremum
from evalgate.gate.binomial import _lgamma, binom_logpmf, binom_sf, relative_error_bound

_RTOL = 1e-10  # the search stops when no interval can hold a value this much above the best found
_GRID = 40  # `_grid_above`: coarse points in s; two refinements of 12 points follow around the best
_REFINE = 12
_EDGE_DECIDE = 9.0  # `_supremum`'s first window for a level decision on a large slice
_WINDOW_SD = 9.0  # c outside mean +- 9 sd (+ 12) carries < 1e-18 of the mass


def score_z(b, c, n: int, delta: float) -> np.ndarray:
    """Tango's Z for H0: p_b - p_c <= delta (large = evidence of a drop beyond delta)."""
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    a2 = 2.0 * n
    bq = -b - c + (2.0 * n - b + c) * delta
    cq = -c * delta * (1.0 - delta)
    p_c = (-bq + np.sqrt(np.maximum(bq * bq - 4.0 * a2 * cq, 0.0))) / (2.0 * a2)
    var = n * (2.0 * p_c + delta * (1.0 - delta))
    num = b - c - n * delta
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, num / np.sqrt(np.where(var > 0, var, 1.0)), np.where(num > 0, np.inf, 0.0))
    return z


@lru_cache(maxsize=256)
def _bmin_table(z_crit: float, n: int, delta: float) -> np.ndarray:
    """For c = 0..n, the smallest b (0..n-c) with Z(b, c) >= z_crit; n - c + 1 when none.

    Z grows with b for fixed c (tests check it), so the region {Z >= z} is {b >= b_min(c)}: a
    bisection per c, started from the b where Z would be z_crit (`_bmin_guess`) and bracketed
    by the two b beside it, so most rows take two evaluations of Z instead of log2(n) on a large
    slice. The guess only places the bracket: every row ends where the bisection over 0..n-c+1
    ends (tests/gate/test_noninferiority.py compares the two).
    """
    c = np.arange(n + 1)
    lo = np.zeros(n + 1, dtype=np.int64)
    hi = n - c + 1
    guess = np.clip(_bmin_guess(z_crit, n, delta, c), 0, n - c)
    ok = score_z(guess, c, n, delta) >= z_crit
    hi = np.where(ok, guess, hi)
    lo = np.where(ok, lo, guess + 1)
    side = np.where(ok, guess - 1, guess + 1)  # the other end of the bracket: one b away
    inside = (side >= lo) & (side < hi)
    ok = score_z(np.clip(side, 0, n - c), c, n, delta) >= z_crit
    hi = np.where(inside & ok, side, hi)
    lo = np.where(inside & ~ok, side + 1, lo)
    rows = np.flatnonzero(lo < hi)
    while len(rows):  # the rows the guess missed by more than one: bisect them alone
        mid = (lo[rows] + hi[rows]) // 2
        ok = score_z(np.minimum(mid, n - rows), rows, n, delta) >= z_crit
        hi[rows] = np.where(ok, mid, hi[rows])
        lo[rows] = np.where(ok, lo[rows], mid + 1)
        rows = rows[lo[rows] < hi[rows]]
    return lo


def _bmin_guess(z_crit: float, n: int, delta: float, c: np.ndarray) -> np.ndarray:
    """Where Z(b, c) = z_crit for real b: b = c + n delta + z_crit sqrt(n (2 p~_c + delta (1 -
    delta))), p~_c (Tango's restricted estimate, `score_z`) taken at the previous b, twice."""
    if not math.isfinite(z_crit):
        return np.zeros(len(c), dtype=np.int64)
    cf = c.astype(np.float64)
    b = cf + n * delta
    for _ in range(3):
        bq = -b - cf + (2.0 * n - b + cf) * delta
        cq = -cf * delta * (1.0 - delta)
        p_c = (-bq + np.sqrt(np.maximum(bq * bq - 8.0 * n * cq, 0.0))) / (4.0 * n)
        b = cf + n * delta + z_crit * np.sqrt(np.maximum(n * (2.0 * p_c + delta * (1.0 - delta)), 0.0))
    return np.ceil(np.clip(b, -1.0, n + 1.0)).astype(np.int64)


def _log_pmf(k: np.ndarray, n: int, p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        lp = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), -np.inf)
        lq = np.where(p < 1, np.log1p(-np.where(p < 1, p, 0.0)), -np.inf)
        term_k = np.where(k > 0, k * lp, 0.0)
        term_nk = np.where(n - k > 0, (n - k) * lq, 0.0)
    return _lgamma(n + 1.0) - _lgamma(k + 1.0) - _lgamma(n - k + 1.0) + term_k + term_nk


def region_prob(bmin: np.ndarray, n: int, p_b, p_c) -> np.ndarray:
    """P((b, c) in {b >= bmin(c)}) under the trinomial (p_b, p_c), for arrays of (p_b, p_c)."""
    p_b = np.atleast_1d(np.asarray(p_b, dtype=np.float64))
    p_c = np.atleast_1d(np.asarray(p_c, dtype=np.float64))
    mean, sd = n * p_c, np.sqrt(n * p_c * (1.0 - p_c))
    lo = np.clip(np.floor(mean - _WINDOW_SD * sd - 12), 0, n).astype(np.int64)
    hi = np.clip(np.ceil(mean + _WINDOW_SD * sd + 12), 0, n).astype(np.int64)
    width = int((hi - lo).max()) + 1
    c = lo[:, None] + np.arange(width)[None, :]
    inside = c <= hi[:, None]
    c = np.minimum(c, n)
    weight = np.where(inside, np.exp(_log_pmf(c, n, p_c[:, None])), 0.0)
    q = np.where(p_c < 1, p_b / np.where(p_c < 1, 1.0 - p_c, 1.0), 0.0)
    q = np.clip(q, 0.0, 1.0)[:, None]
    tail = binom_sf(bmin[c], n - c, np.broadcast_to(q, c.shape))
    return (weight * tail).sum(axis=1)


def region_prob_by_steps(bmin: np.ndarray, n: int, p_b, p_c) -> np.ndarray:
    """`region_prob` without a continued fraction per c: the same sum over the same windows of c,
    each tail T(c) = P(Bin(n - c, q) >= B(c)) built from the window's last one by adding, c by c,
    T(c) - T(c + 1) = q Bin(n - c - 1, q)(B(c + 1) - 1) + the Bin(n - c, q) probabilities of
    B(c) .. B(c + 1) - 1 (B: the region's hull, non-decreasing in c, gate/supremum.py).

    Every term is a probability added, never subtracted, so the error stays that of the log-pmfs
    (gate/binomial.py's bound; tests/gate/test_noninferiority.py compares it with `region_prob`),
    at O(1) work per c instead of a fraction of O(sqrt(n)) steps: `_grid_above` evaluates
    thousands of points on a large slice (docs/gate.md, "What it costs").
    """
    p_b = np.atleast_1d(np.asarray(p_b, dtype=np.float64))
    p_c = np.atleast_1d(np.asarray(p_c, dtype=np.float64))
    B = np.append(supremum.hull(bmin, n), n + 1)  # B(n + 1): no outcome has c = n + 1
    mean, sd = n * p_c, np.sqrt(n * p_c * (1.0 - p_c))
    lo = np.clip(np.floor(mean - _WINDOW_SD * sd - 12), 0, n).astype(np.int64)
    hi = np.clip(np.ceil(mean + _WINDOW_SD * sd + 12), 0, n).astype(np.int64)
    width = int((hi - lo).max()) + 1
    c = lo[:, None] + np.arange(width)[None, :]
    inside = c <= hi[:, None]
    c = np.minimum(c, n)
    q = np.clip(np.where(p_c < 1, p_b / np.where(p_c < 1, 1.0 - p_c, 1.0), 0.0), 0.0, 1.0)
    qc = np.broadcast_to(q[:, None], c.shape)
    weight = np.where(inside, np.exp(binom_logpmf(c, n, np.broadcast_to(p_c[:, None], c.shape))), 0.0)
    step = inside & (c < hi[:, None])  # T(c) - T(c + 1) for c below the window's last
    after = B[c + 1]
    diff = np.where(step, qc * np.exp(binom_logpmf(after - 1, n - c - 1, qc)), 0.0)
    first, last = B[c], np.minimum(after - 1, n - c)  # b past n - c has probability 0
    length = np.where(step, np.maximum(last - first + 1, 0), 0).ravel()
    total = int(length.sum())
    if total:
        cell = np.repeat(np.arange(length.size), length)
        start = np.concatenate(([0], np.cumsum(length)[:-1]))
        b = np.repeat(first.ravel() - start, length) + np.arange(total)
        pmf = np.exp(binom_logpmf(b, (n - c).ravel()[cell], np.repeat(q, width)[cell]))
        diff += np.bincount(cell, weights=pmf, minlength=length.size).reshape(diff.shape)
    # T from the window's last c down: a running sum of non-negative steps onto the exact last tail
    tail = np.cumsum(diff[:, ::-1], axis=1)[:, ::-1] + binom_sf(B[hi], n - hi, q)[:, None]
    return (weight * tail).sum(axis=1)


def _supremum(z_crit: float, n: int, delta: float, above: float | None = None) -> tuple[float, bool]:
    """sup over s in [delta, 1] of P_s(Z >= z_crit) on the boundary p_b - p_c = delta, from above.

    gate/supremum.py brackets it (Bernstein form in the disagreement, a certified bound between
    evaluated points); the result is rounded up by the floating-point error of its probabilities
    (gate/binomial.py), so it is never below the supremum, and at most a relative 1e-9 above it.
    Binomial tails cut off far from their means are bounded, not dropped; when that bound is not
    small against the answer (p-values far below 1e-20), the windows widen until it is.
    """
    bmin = _bmin_table(z_crit, n, delta)
    edge = supremum.EDGE
    if above is not None and above >= 1e-4 and not supremum.keeps_tables(n, delta):
        # "Within a level of 1e-4 or more?" needs a slack under 1e-16: windows of 9 sd (slack
        # about 1e-17 on 50,000 probes) do, at three quarters of 12 sd's cost on a large slice.
        # The slack is checked below all the same, and widened when it is not small enough.
        edge = _EDGE_DECIDE
    while True:
        G, slack = supremum.coefficients(bmin, n, delta, edge)
        found, certified = supremum.bernstein_sup(G, n, rtol=_RTOL, above=above)
        scale = found if above is None else max(found, above)
        if slack <= 1e-12 * scale or edge >= 4096:
            return min(1.0, found * (1.0 + 8.0 * relative_error_bound(n))), certified
        edge *= 2.0


@lru_cache(maxsize=65536)
def tail_sup(z_crit: float, n: int, delta: float) -> float:
    """sup over the null of P(Z >= z_crit): the p-value of an observed Z = z_crit."""
    if n <= 0:
        return 1.0
    return _supremum(z_crit, n, delta)[0]


@lru_cache(maxsize=65536)
def _within(z_crit: float, n: int, delta: float, level: float) -> bool:
    """Is tail_sup(z_crit, n, delta) <= level? Decided with as little search as the answer needs."""
    if n <= 0:
        return level >= 1.0
    inflate = 1.0 + 8.0 * relative_error_bound(n)
    found, certified = _supremum(z_crit, n, delta, above=level / inflate)
    # An undecided search counts as above the level: the region only shrinks, never liberal.
    return certified and found <= level


def _grid_above(z_crit: float, n: int, delta: float, level: float) -> bool:
    """True if P_s(Z >= z_crit) exceeds `level` at some s of a coarse grid refined twice around
    its maximum: then the supremum does too (a proof). False proves nothing: the search may have
    missed a peak (this was the gate's p-value before the supremum was certified)."""
    bmin = _bmin_table(z_crit, n, delta)

    def at(s: np.ndarray) -> np.ndarray:
        return region_prob_by_steps(bmin, n, (s + delta) / 2.0, (s - delta) / 2.0)

    # The disagreement where the last search of this slice size peaked first: the peak barely
    # moves between the nearby z of one bisection, so a z above the level is usually shown so by
    # one point instead of the coarse grid's 40 (a value at one s is a proof all the same).
    peak = _PEAKS.get((n, delta))
    if peak is not None and float(at(np.array([peak]))[0]) > level:
        return True
    s = delta + (1.0 - delta) * np.linspace(0.0, 1.0, _GRID) ** 2
    vals = at(s)
    for _ in range(2):
        if float(vals.max()) > level:
            _PEAKS[(n, delta)] = float(s[int(vals.argmax())])
            return True
        i = int(vals.argmax())
        s = np.linspace(s[max(i - 1, 0)], s[min(i + 1, len(s) - 1)], _REFINE)
        vals = at(s)
    _PEAKS[(n, delta)] = float(s[int(vals.argmax())])
    return float(vals.max()) > level


# `_grid_above`'s last peak per (n, delta): a starting point only, never part of an answer
# (critical_z certifies whatever the search returns, and the critical value is unique).
_PEAKS: dict[tuple[int, float], float] = {}


def pvalue(b: int, c: int, n: int, delta: float) -> float:
    """Exact unconditional p-value of H0: true drop <= delta, given b right->wrong, c wrong->right.

    1.0 when the observed drop (b - c)/n is not above delta: such a slice shows no evidence of a
    drop beyond the tolerance, and the test (which rejects only for large Z) never fires there.
    """
    if not (b >= 0 and c >= 0 and b + c <= n):
        raise ValueError(f"noninferiority needs 0 <= b, c and b + c <= n, got b={b}, c={c}, n={n}")
    z = float(score_z(b, c, n, delta))
    if not z > 0:
        return 1.0
    # Inclusive of ties in floating point: a hair lower z keeps every outcome with the same
    # statistic inside the region, which can only make the p-value larger (never liberal).
    return tail_sup(z - 1e-12 * max(1.0, abs(z)), n, delta)


@lru_cache(maxsize=4096)
def critical_z(n: int, delta: float, level: float) -> float | None:
    """Smallest z whose p-value is <= level (the test rejects iff Z >= it); None if no outcome does.

    Bisection on z, every step deciding "p-value <= level?" with a certificate (`_within`). On
    slices too large for gate/supremum.py's kept tables a certified step costs seconds, so there
    the search first runs on `_grid_above` (a value above the level is a proof, a value below it
    only a hint) and only its answer is certified; should the hint be wrong, the certified search
    continues above it. Either way the answer is the certified one.
    """
    z_top = float(score_z(n, 0, n, delta))
    if not z_top > 0:
        return None
    if supremum.keeps_tables(n, delta):
        if not _within(z_top - 1e-12 * z_top, n, delta, level):
            return None
        return _bisect(n, delta, 0.0, z_top, lambda z: _within(z, n, delta, level))
    hint = _bisect(
        n, delta, *_grid_bracket(n, delta, level, z_top), lambda z: not _grid_above(z, n, delta, level)
    )
    # A hint within the level proves the top is too (its region is a subset of the hint's), so
    # the top's certificate, seconds on a large slice, is only needed when the hint fails.
    if hint < z_top and _within(hint, n, delta, level):
        return hint
    if not _within(z_top - 1e-12 * z_top, n, delta, level):
        return None
    return _bisect(n, delta, hint, z_top, lambda z: _within(z, n, delta, level))


def _grid_bracket(n: int, delta: float, level: float, z_top: float) -> tuple[float, float]:
    """Where the grid search starts: [lo, hi] with lo above the level on the grid (a proof) or 0,
    and hi within it on the grid or z_top, as the bisection over [0, z_top] keeps them.

    Tango's Z is asymptotically N(0, 1) on the boundary, so the crossing is near the normal
    quantile of 1 - level: the bracket quantile +- 0.5, each end checked (and left at 0 or z_top
    when its check fails), spares the bisection the steps from [0, z_top] (about sqrt(n) wide)
    down to a width of 1, each a grid search of up to 64 points on a large slice.
    """
    zq = normal_quantile(1.0 - level)
    lo, hi = 0.0, z_top
    if 0.0 < zq - 0.5 < z_top and _grid_above(zq - 0.5, n, delta, level):
        lo = zq - 0.5
    if lo < zq + 0.5 < z_top and not _grid_above(zq + 0.5, n, delta, level):
        hi = zq + 0.5
    return lo, hi


def _bisect(n: int, delta: float, lo: float, hi: float, within) -> float:
    """Narrow [lo, hi] (lo above the level, hi within it) to one attainable value of Z."""
    while hi - lo > 1e-7 * max(1.0, hi) and not _one_value_apart(lo, hi, n, delta):
        mid = (lo + hi) / 2
        if within(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _one_value_apart(lo: float, hi: float, n: int, delta: float) -> bool:
    """True when the outcomes in {Z >= lo} but not in {Z >= hi} all share one value of Z.

    The statistic is discrete: once only one attainable value lies in [lo, hi), every z in
    (that value, hi] gives the same rejection region, so bisecting further cannot change the
    region `critical_z` selects (nor any power computed from it). Stopping there takes about
    half the steps of bisecting to 1e-7.
    """
    low, high = _bmin_table(lo, n, delta), _bmin_table(hi, n, delta)
    extra = np.maximum(high - low, 0)
    if int(extra.sum()) > 64:
        return False
    c = np.repeat(np.arange(n + 1), extra)
    b = np.concatenate([np.arange(low[i], high[i]) for i in np.flatnonzero(extra)]) if len(c) else c
    z = score_z(b, c, n, delta)
    return bool(len(z)) and float(z.max() - z.min()) <= 1e-12 * max(1.0, abs(float(z.max())))


def power(n: int, delta: float, level: float, drop: float, background: float) -> float:
    """Exact power at a true drop when equally good checkpoints disagree on `background`.

    Model as in gate/stats.py's MDE: p_c = background/2, p_b = background/2 + drop.
    """
    z = critical_z(n, delta, level)
    if z is None:
        return 0.0
    p_c = background / 2.0
    p_b = min(1.0 - p_c, p_c + drop)
    return float(region_prob(_bmin_table(z, n, delta), n, p_b, p_c)[0])


@lru_cache(maxsize=4096)
def mde(n: int, delta: float, level: float, background: float, target: float = 0.8) -> float | None:
    """Smallest true drop detected with probability `target` at `level` (None: not even the largest)."""
    if n <= 0:
        return None
    top = 1.0 - background / 2.0
    if power(n, delta, level, top, background) < target:
        return None
    lo, hi = 0.0, top
    while hi - lo > 1e-4:
        mid = (lo + hi) / 2
        if power(n, delta, level, mid, background) >= target:
            hi = mid
        else:
            lo = mid
    return round(hi, 4)


def normal_quantile(p: float) -> float:
    """Phi^{-1}(p) by bisection on math.erfc (used for interval ends, no scipy in the core)."""
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(-mid / math.sqrt(2)) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
