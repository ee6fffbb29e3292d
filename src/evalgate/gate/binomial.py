"""Binomial tail probabilities in floating point, vectorised, with a checked error bound.

The exact McNemar p-value used to sum big integers (quadratic in the number of discordant
probes: seconds at 100k); the non-inferiority test needs millions of binomial tails. Both use
the identity P(X >= k) = I_p(k, n - k + 1) for X ~ Bin(n, p) (Abramowitz & Stegun 26.5.24 with
6.6.2), and the regularised incomplete beta I_x(a, b) is evaluated by its continued fraction
(A&S 26.5.8) with the modified Lentz algorithm (Press et al., Numerical Recipes, 3rd ed., 6.4).
The fraction converges in O(sqrt(max(a, b))) steps, so one tail costs O(sqrt(n)), not O(n).

Error bound: each fraction is iterated until every relative step is below 1e-15; the prefactor
x^a (1-x)^b / B(a, b) comes from `math.lgamma`, whose absolute error grows with its argument
(about 1e-16 * n log n). The relative error of a tail is therefore below 1e-12 for n up to
10^4, below 1e-9 up to 10^5 and below 1e-7 up to 10^7; tests/gate/test_noninferiority.py checks the
bound at 2,000 and 20,000 against exact rational sums. A fraction that does not converge raises instead of
returning a wrong number.
"""

from __future__ import annotations

import math

import numpy as np

_TINY = 1e-300
_STEP_EPS = 1e-15
_lgamma_any = np.vectorize(math.lgamma, otypes=[np.float64])
_LGAMMA_TABLE = np.array([math.inf, 0.0])  # math.lgamma(k) for k = 0, 1, ...; grown on demand


def _lgamma(x) -> np.ndarray:
    """math.lgamma element-wise. Every argument of a binomial coefficient is an integer, so those
    come from a table of math.lgamma's own values (the same bits, without a Python call per
    element: np.vectorize was a third of a gate's run time)."""
    global _LGAMMA_TABLE
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0 or not (np.all(x >= 1.0) and np.all(x < 2.0**31) and np.all(x == np.floor(x))):
        return _lgamma_any(x)
    top = int(x.max())
    if top >= len(_LGAMMA_TABLE):
        size = max(top + 1, 2 * len(_LGAMMA_TABLE))
        grown = np.empty(size, dtype=np.float64)
        grown[: len(_LGAMMA_TABLE)] = _LGAMMA_TABLE
        grown[len(_LGAMMA_TABLE) :] = [math.lgamma(k) for k in range(len(_LGAMMA_TABLE), size)]
        _LGAMMA_TABLE = grown
    return _LGAMMA_TABLE[x.astype(np.int64)]


def _betacf(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The continued fraction of I_x(a, b) (Numerical Recipes `betacf`), element-wise."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = np.where(np.abs(d) < _TINY, _TINY, d)
    d = 1.0 / d
    h = d.copy()
    done = np.zeros(x.shape, dtype=bool)
    # The number of steps needed grows like sqrt(max(a, b)); the cap only stops a runaway loop.
    max_steps = int(50 + 10 * math.sqrt(float(np.max(np.maximum(a, b), initial=1.0))))
    for m in range(1, max_steps + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        c = 1.0 + aa / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1.0 / d
        h = np.where(done, h, h * d * c)
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        c = 1.0 + aa / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1.0 / d
        step = d * c
        # An element is frozen once converged: later steps of a finished fraction only add noise.
        h = np.where(done, h, h * step)
        done |= np.abs(step - 1.0) < _STEP_EPS
        if done.all():
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge in {max_steps} steps")


def betainc(a, b, x) -> np.ndarray:
    """Regularised incomplete beta I_x(a, b) for a, b > 0, 0 <= x <= 1 (broadcast arrays)."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, x)))
    out = np.where(x <= 0.0, 0.0, 1.0)
    inner = (x > 0.0) & (x < 1.0)
    if not inner.any():
        return out
    a, b, x = a[inner], b[inner], x[inner]
    log_front = _lgamma(a + b) - _lgamma(a) - _lgamma(b) + a * np.log(x) + b * np.log1p(-x)
    front = np.exp(log_front)
    # The fraction converges fast for x < (a + 1) / (a + b + 2); above it use the symmetry
    # I_x(a, b) = 1 - I_{1-x}(b, a) (A&S 26.5.2).
    direct = x < (a + 1.0) / (a + b + 2.0)
    # Where the prefactor underflows the term is below 1e-300: 0 directly, 1 through the symmetry.
    # The fraction is only evaluated where it matters (and it converges there).
    val = np.where(direct, 0.0, 1.0)
    live = front > 0.0
    one = direct & live
    if one.any():
        val[one] = front[one] * _betacf(a[one], b[one], x[one]) / a[one]
    other = ~direct & live
    if other.any():
        val[other] = 1.0 - front[other] * _betacf(b[other], a[other], 1.0 - x[other]) / b[other]
    out = out.astype(np.float64)
    out[inner] = np.clip(val, 0.0, 1.0)
    return out


def binom_sf(k, n, p) -> np.ndarray:
    """P(X >= k) for X ~ Bin(n, p), element-wise over broadcast integer k, n and float p."""
    k, n, p = np.broadcast_arrays(np.asarray(k), np.asarray(n), np.asarray(p, dtype=np.float64))
    k = k.astype(np.int64)
    n = n.astype(np.int64)
    out = np.where(k <= 0, 1.0, 0.0)
    mid = (k >= 1) & (k <= n)
    if mid.any():
        km, nm, pm = k[mid], n[mid], p[mid]
        out[mid] = betainc(km.astype(np.float64), (nm - km + 1).astype(np.float64), pm)
    return out


def _log_factorial(k: np.ndarray) -> np.ndarray:
    """log k! for an int64 array of k >= 0, straight from the `_lgamma` table (same bits)."""
    top = int(k.max(initial=0)) + 1
    if top >= len(_LGAMMA_TABLE):
        _lgamma(np.array([float(top)]))  # grows the table
    return _LGAMMA_TABLE[k + 1]


def binom_logpmf(k, n, p) -> np.ndarray:
    """log P(X = k) for X ~ Bin(n, p), element-wise over broadcast integer k, n and float p.

    -inf outside 0 <= k <= n and where the probability is 0 (p = 0 or 1 with k inside); the
    coefficient comes from the same table as the tails' `_lgamma`, so it carries their error bound.
    """
    k, n, p = np.broadcast_arrays(np.asarray(k), np.asarray(n), np.asarray(p, dtype=np.float64))
    k = k.astype(np.int64)
    n = n.astype(np.int64)
    inside = (k >= 0) & (k <= n)
    kk = np.where(inside, k, 0)
    rest = np.where(inside, n - k, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lp, lq = np.log(p), np.log1p(-p)
        terms = np.where(kk > 0, kk * lp, 0.0) + np.where(rest > 0, rest * lq, 0.0)
    coef = _log_factorial(kk + rest) - _log_factorial(kk) - _log_factorial(rest)
    return np.where(inside, coef + terms, -np.inf)


def relative_error_bound(n: int) -> float:
    """The bound above on the relative error of one tail or probability of Bin(n, .)."""
    return 1e-12 if n <= 10**4 else 1e-9 if n <= 10**5 else 1e-7


def binom_sf_scalar(k: int, n: int, p: float) -> float:
    """Scalar `binom_sf`."""
    return float(binom_sf(k, n, p))
