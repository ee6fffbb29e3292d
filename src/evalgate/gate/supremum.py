"""The exact test's p-value is a supremum over the disagreement: found here with a certificate.

gate/noninferiority.py needs sup over s in [delta, 1] of P_s((b, c) in R), where R = {b >= bmin(c)}
and every probe goes right -> wrong with p_b = (s + delta)/2, wrong -> right with p_c = (s - delta)/2
(the boundary of the null). Searching s on a grid misses narrow peaks (docs/gate.md, "The p-value
is the supremum"), and a missed peak makes the p-value too small, the test liberal. Here the
supremum is bracketed, never guessed.

Bernstein form. Put t = (s - delta)/(1 - delta) in [0, 1]. The boundary trinomial is the mixture
(1 - t) D0 + t D1 of D0 = (p_b, p_c, p_a) = (delta, 0, 1 - delta) and D1 = ((1 + delta)/2,
(1 - delta)/2, 0): each probe draws from D1 with chance t. Given that M probes drew from D1, the
chance of R, G(M), does not depend on t, so

    P(t) = sum_M G(M) B_M(t),   B_M(t) = C(n, M) t^M (1 - t)^(n - M),

a polynomial with coefficients in [0, 1]. Given M: c ~ Bin(M, (1 - delta)/2), the other M - c of
those probes are losses, and the n - M probes from D0 add b0 ~ Bin(n - M, delta) more; (b, c) is
in R iff b0 >= J(c) - M with J(c) = bmin(c) + c. `coefficients` computes G(M) for every M (from above:
where a binomial's far tail is cut off, the bound 1 or the tail's edge value stands in for it).

The certificate. With the values and slopes of P at t1 < t2 and K >= |P''| on [t1, t2], Taylor's
theorem from either end bounds P on the interval:

    P(t) <= P(t1) + P'(t1)(t - t1) + K (t - t1)^2 / 2,   P(t) <= P(t2) - P'(t2)(t2 - t) + K (t2 - t)^2 / 2.

K: P'' = sum_M (G(M) - g) B_M'' for any constant g (the B_M sum to 1), and sum_M |B_M''(t)| is at
most 4 n (n - 1) (B_M'' is n (n - 1) times a second difference of Bin(n - 2, t) probabilities) and
at most sqrt(2 n (n - 1)) / (t (1 - t)) (Cauchy-Schwarz: B_M'' / B_M = U^2 + U' with U the score
of Bin(n, t), whose variance is 2 n (n - 1) / (t (1 - t))^2). With g the middle of G's range over
the M that carry the interval's mass, K is half that range times the smaller bound, plus the far
M's share, bounded by their exact binomial tail. `bernstein_sup` bisects every interval whose bound
is above the best value found (times 1 + rtol) and stops when none is: the answer is then at least
the supremum and at most rtol above it, up to floating point, which the caller covers by rounding
up (gate/binomial.py states the error of each probability).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from evalgate.gate.binomial import binom_logpmf, binom_sf

EDGE = 12.0  # G's windows reach 12 sd + 12 past a mean; beyond, a Chernoff bound stands in
_EDGE_SD = 12.0  # the same for the windows of B_M(t); their cut-off mass is bounded alike
_CHUNK = 1 << 20  # elements per vectorised block when computing G
_LAYOUT_MAX = 4e6  # elements of a kept (n, delta, edge) table (32 MB); larger ones compute G in blocks
_START = 32  # intervals of the first grid in t
_MAX_ROUNDS = 64  # bisections; past that (or _MAX_INTERVALS) the bound itself is returned: valid,
_MAX_INTERVALS = 1 << 14  # only less tight


def _window(n: int, t: np.ndarray, t_hi: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Integer ranges [lo, hi] of M ~ Bin(n, t) holding all but a far tail, for t (or [t, t_hi])."""
    t_hi = t if t_hi is None else t_hi
    lo = np.floor(n * t - _EDGE_SD * np.sqrt(n * t * (1.0 - t)) - 12.0)
    hi = np.ceil(n * t_hi + _EDGE_SD * np.sqrt(n * t_hi * (1.0 - t_hi)) + 12.0)
    return np.clip(lo, 0, n).astype(np.int64), np.clip(hi, 0, n).astype(np.int64)


def _below(k: np.ndarray, n, p: np.ndarray) -> np.ndarray:
    """P(X <= k) for X ~ Bin(n, p), from the upper tail of n - X (no cancellation)."""
    k = np.asarray(k)
    return np.where(k < 0, 0.0, binom_sf(np.asarray(n) - k, n, 1.0 - np.asarray(p, dtype=np.float64)))


def _far_above(k, n, p) -> np.ndarray:
    """An upper bound on P(X >= k), X ~ Bin(n, p): Chernoff's exp(-n KL(k/n || p)) where k > np.

    For the tails past the windows, where only a bound is needed and an exact tail would cost a
    continued fraction each (Hoeffding 1963, JASA 58:13, eq. 2.1).
    """
    k, n, p = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (k, n, p)))
    x = np.where(n > 0, k / np.where(n > 0, n, 1.0), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.where(x > 0, x * np.log(x / p), 0.0) + np.where(
            x < 1, (1 - x) * np.log((1 - x) / (1 - p)), 0.0
        )
        bound = np.exp(-n * np.nan_to_num(kl, nan=np.inf, posinf=np.inf))
    return np.where(k <= 0, 1.0, np.where(k > n, 0.0, np.where(x <= p, 1.0, bound)))


def _far_below(k, n, p) -> np.ndarray:
    """An upper bound on P(X <= k), X ~ Bin(n, p) (the mirror of `_far_above`)."""
    k, n = np.asarray(k), np.asarray(n)
    return _far_above(n - k, n, 1.0 - np.asarray(p, dtype=np.float64))


def hull(bmin: np.ndarray, n: int) -> np.ndarray:
    """bmin with empty rows at n + 1 and made non-decreasing in c (its region only grows).

    Tango's region is already of that shape (tests/gate/test_noninferiority.py checks it); the hull
    guarantees J(c) = bmin(c) + c increases, which `coefficients` relies on.
    """
    c = np.arange(n + 1)
    b = np.where(bmin > n - c, n + 1, bmin).astype(np.int64)
    return np.minimum.accumulate(b[::-1])[::-1]


def coefficients(bmin: np.ndarray, n: int, delta: float, edge: float = EDGE) -> tuple[np.ndarray, float]:
    """(G, slack): G(M), M = 0..n, the Bernstein coefficients of the region's probability on the
    boundary, each the exact value or above it by at most `slack`.

    A binomial's far tail, beyond `edge` sd + `edge` from its mean, is replaced by a Chernoff bound
    and the D0 losses' survival below their window by 1; `slack` bounds what that adds to any
    G(M), hence to the polynomial (its weights sum to 1). A caller whose answer is not large
    against it asks again with a wider `edge` (gate/noninferiority.py). The tables that do not
    depend on the region are kept per (n, delta, edge) when small (`_layout`: the MDE's search
    asks for many regions of one slice size); larger slices are computed in blocks.
    """
    J = hull(bmin, n) + np.arange(n + 1)  # increasing; above n on empty rows (never reached)
    if keeps_tables(n, delta, edge):
        G, slack = _layout(n, delta, edge).coefficients(J)
        return np.clip(G, 0.0, 1.0), slack
    q0 = (1.0 - delta) / 2.0
    M_all = np.arange(n + 1)
    jl, jh = _survival_window(n - M_all, delta, edge)
    out, slack = np.empty(n + 1), 0.0
    rows = max(1, _CHUNK // (int(np.maximum(jh - jl + 1, 0).max(initial=0)) + 1))
    for start in range(0, n + 1, rows):
        part = slice(start, min(n + 1, start + rows))
        out[part], part_slack = _coefficients_block(J, n, delta, q0, M_all[part], jl[part], jh[part], edge)
        slack = max(slack, part_slack)
    return np.clip(out, 0.0, 1.0), slack


def _survival_window(m: np.ndarray, delta: float, edge: float) -> tuple[np.ndarray, np.ndarray]:
    """j-range where S(j) = P(Bin(m, delta) >= j) is computed; S = 1 below it (j <= 0 exactly)."""
    if delta <= 0:  # no D0 losses: S is 1 at j <= 0 and 0 above, nothing to tabulate
        return np.ones(len(m), dtype=np.int64), np.zeros(len(m), dtype=np.int64)
    sd = np.sqrt(m * delta * (1.0 - delta))
    jl = np.maximum(1, np.floor(m * delta - edge * sd - edge)).astype(np.int64)
    jh = np.minimum(m, np.ceil(m * delta + edge * sd + edge)).astype(np.int64)
    return jl, jh


def _survival(
    m: np.ndarray, delta: float, jl: np.ndarray, jh: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """S on jl..jh per row (padded, each value at most `top` above the exact one), the bound `top`
    on S just past the window, and the bound on P(Bin(m, delta) < jl) (S taken as 1 there)."""
    top = _far_above(jh + 1, m, delta)
    low = np.where(jl > 1, _far_below(jl - 1, m, delta), 0.0)
    width = max(1, int(np.maximum(jh - jl + 1, 0).max(initial=0)))
    pmf = _pmf_runs(m, delta, jl, width, last=jh)
    surv = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]
    surv += top[:, None]
    return surv, top, low


def _pmf_runs(
    n: np.ndarray, p: float, first: np.ndarray, width: int, last: np.ndarray | None = None
) -> np.ndarray:
    """Bin(n[r], p) probabilities of first[r], first[r] + 1, ... (width of them) per row r; 0 past
    n[r] and past last[r] when given.

    One log-pmf per row, then the running sum of log((n - k)/(k + 1) * p/(1 - p)): a third of the
    work of a log-pmf per element (this is most of G's cost on large slices).
    """
    k = first[:, None] + np.arange(width - 1)[None, :]
    stop = n[:, None] if last is None else np.minimum(n, last)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.log((n[:, None] - k) / (k + 1.0))
    step += math.log(p) - math.log1p(-p) if 0 < p < 1 else 0.0
    step[k >= stop] = -np.inf  # no NaN can arise: only -inf is ever added, never +inf
    logs = np.empty((len(first), width))
    logs[:, 0] = binom_logpmf(first, n, p)
    np.cumsum(step, axis=1, out=logs[:, 1:])
    logs[:, 1:] += logs[:, :1]
    if last is not None:
        logs[first > last, 0] = -np.inf
    return np.exp(logs, out=logs)


def _ragged(first: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, value) of every integer in first[r]..last[r] (empty where last < first)."""
    length = np.maximum(last - first + 1, 0)
    row = np.repeat(np.arange(len(first)), length)
    offset = np.concatenate(([0], np.cumsum(length)[:-1]))
    return row, np.repeat(first - offset, length) + np.arange(int(length.sum()))


def _c_window(M: np.ndarray, q0: float, edge: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The range [cl, ch] of c ~ Bin(M, q0) and Chernoff bounds on the mass below and above it."""
    sd = np.sqrt(M * q0 * (1.0 - q0))
    cl = np.clip(np.floor(M * q0 - edge * sd - edge), 0, M).astype(np.int64)
    ch = np.clip(np.ceil(M * q0 + edge * sd + edge), 0, M).astype(np.int64)
    below = np.where(cl > 0, _far_below(cl - 1, M, q0), 0.0)
    above = np.where(ch < M, _far_above(ch + 1, M, q0), 0.0)
    return cl, ch, below, above


def _coefficients_block(
    J: np.ndarray, n: int, delta: float, q0: float, M: np.ndarray, jl: np.ndarray, jh: np.ndarray, edge: float
) -> tuple[np.ndarray, float]:
    """G for the rows M, everything computed afresh (slices too large for a `_layout`), and slack."""
    surv, top, low = _survival(n - M, delta, jl, jh)
    cl, ch, below_cl, above_ch = _c_window(M, q0, edge)
    # c with J(c) - M < jl: survival 1 (an upper bound there); J(c) - M > jh: survival <= top.
    c_a = np.minimum(np.searchsorted(J, M + jl, side="left") - 1, M)
    c_b = np.maximum(np.minimum(np.searchsorted(J, M + jh, side="right") - 1, M), c_a)
    g = _below(c_a, M, np.full(len(M), q0)) + np.where(c_b < M, top, 0.0)
    # c in (c_a, c_b]: the survival table inside c's window, at most 1 (Chernoff mass) outside.
    g = g + np.where((c_b > c_a) & (c_a + 1 < cl), below_cl, 0.0)
    g = g + np.where((c_b > c_a) & (c_b > ch), above_ch, 0.0)
    first, last = np.maximum(c_a + 1, cl), np.minimum(c_b, ch)
    width = int((last - first + 1).max(initial=0))
    if width > 0:
        c = first[:, None] + np.arange(width)[None, :]
        live = c <= last[:, None]
        cc = np.where(live, c, first[:, None])
        at = np.clip(J[np.minimum(cc, n)] - M[:, None] - jl[:, None], 0, surv.shape[1] - 1)
        weight = _pmf_runs(M, q0, first, width) * np.take_along_axis(surv, at, axis=1)
        g = g + np.where(live, weight, 0.0).sum(axis=1)
    return g, float((low + top + below_cl + above_ch).max(initial=0.0))


def keeps_tables(n: int, delta: float, edge: float = EDGE) -> bool:
    """Whether `coefficients` keeps the region-free tables of (n, delta), making a repeat cheap."""
    c_width = 2.0 * (edge * math.sqrt(n / 4.0) + edge) + 1.0
    j_width = 2.0 * (edge * math.sqrt(n * delta * (1.0 - delta)) + edge) + 1.0 if delta > 0 else 1.0
    return (n + 1.0) * (c_width + j_width) <= _LAYOUT_MAX


class _Layout:
    """What G needs that does not depend on the region, for one (n, delta, edge).

    Per M: the window [cl, ch] of c ~ Bin(M, q0) with its pmf and running sums (and Chernoff bounds
    on the mass outside), and the D0 losses' survival table.
    """

    def __init__(self, n: int, delta: float, edge: float):
        self.n, self.q0 = n, (1.0 - delta) / 2.0
        M = np.arange(n + 1)
        self.M = M
        self.cl, self.ch, self.below_cl, self.above_ch = _c_window(M, self.q0, edge)
        width = int((self.ch - self.cl).max()) + 1
        self.pmf = _pmf_runs(M, self.q0, self.cl, width, last=self.ch)
        self.cdf = np.cumsum(self.pmf, axis=1)
        self.jl, self.jh = _survival_window(n - M, delta, edge)
        self.surv, self.top, low = _survival(n - M, delta, self.jl, self.jh)
        self.slack = low + self.top + self.below_cl + self.above_ch

    def coefficients(self, J: np.ndarray) -> tuple[np.ndarray, float]:
        M, cl, ch = self.M, self.cl, self.ch
        c_a = np.minimum(np.searchsorted(J, M + self.jl, side="left") - 1, M)
        c_b = np.maximum(np.minimum(np.searchsorted(J, M + self.jh, side="right") - 1, M), c_a)
        # P(c <= c_a): the running sum inside the window, Chernoff below it, 1 above it.
        inside = self.cdf[M, np.clip(c_a - cl, 0, self.cdf.shape[1] - 1)] + self.below_cl
        below = _far_below(c_a, M, self.q0)
        g = np.where(c_a < 0, 0.0, np.where(c_a < cl, below, np.where(c_a >= ch, 1.0, inside)))
        # c in (c_a, c_b]: survival from the table inside the c-window, at most 1 outside it.
        g = g + np.where((c_b > c_a) & (c_a + 1 < cl), self.below_cl, 0.0)
        g = g + np.where((c_b > c_a) & (c_b > ch), self.above_ch, 0.0)
        row, c = _ragged(np.maximum(c_a + 1, cl), np.minimum(c_b, ch))
        if len(c):
            weight = self.pmf[row, c - cl[row]] * self.surv[row, J[c] - M[row] - self.jl[row]]
            g = g + np.bincount(row, weights=weight, minlength=self.n + 1)
        slack = self.slack + np.where((c_a >= 0) & (c_a < cl), below, 0.0)
        return g + np.where(c_b < M, self.top, 0.0), float(slack.max(initial=0.0))


@lru_cache(maxsize=16)
def _layout(n: int, delta: float, edge: float) -> _Layout:
    return _Layout(n, delta, edge)


class _Basis:
    """The binomial weights B_M(t) (and those of degree n - 1, for P') at points t, windowed."""

    def __init__(self, n: int, t: np.ndarray):
        self.n = n
        self.lo, hi = _window(n, t)
        width = int((hi - self.lo).max(initial=0)) + 1
        k = self.lo[:, None] + np.arange(width)[None, :]
        self.k = np.minimum(k, n)
        self.w = np.where(k <= hi[:, None], np.exp(binom_logpmf(self.k, n, t[:, None])), 0.0)
        self.far = _far_below(self.lo - 1, n, t) + _far_above(hi + 1, n, t)
        if n > 0:
            self.ks = np.minimum(k, n - 1)
            self.wd = np.where(
                k <= np.minimum(hi, n - 1)[:, None], np.exp(binom_logpmf(self.ks, n - 1, t[:, None])), 0.0
            )
            self.far_d = _far_below(self.lo - 1, n - 1, t) + _far_above(hi + 1, n - 1, t)

    def evaluate(self, G: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """P(t) and P'(t) from the coefficients, each with a bound on what the cut-off tails add."""
        value = (self.w * G[self.k]).sum(axis=1)
        value_err = float(G.max(initial=0.0)) * self.far
        if self.n == 0:
            return value, np.zeros_like(value), value_err, np.zeros_like(value)
        dG = np.diff(G)
        slope = self.n * (self.wd * dG[self.ks]).sum(axis=1)
        return value, slope, value_err, self.n * float(np.abs(dG).max(initial=0.0)) * self.far_d


_GRID = np.linspace(0.0, 1.0, _START + 1)


@lru_cache(maxsize=64)
def _start_basis(n: int) -> _Basis:
    return _Basis(n, _GRID)


class _Ranges:
    """Range max and min of G over index intervals in O(1) each (a sparse table)."""

    def __init__(self, G: np.ndarray):
        self.top, self.bottom = [G], [G]
        span = 1
        while 2 * span <= len(G):
            self.top.append(np.maximum(self.top[-1][:-span], self.top[-1][span:]))
            self.bottom.append(np.minimum(self.bottom[-1][:-span], self.bottom[-1][span:]))
            span *= 2

    def __call__(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        level = np.floor(np.log2(b - a + 1)).astype(np.int64)
        top, bottom = np.empty(len(a)), np.empty(len(a))
        for lv in np.unique(level).tolist():
            pick = level == lv
            far = b[pick] - (1 << lv) + 1
            top[pick] = np.maximum(self.top[lv][a[pick]], self.top[lv][far])
            bottom[pick] = np.minimum(self.bottom[lv][a[pick]], self.bottom[lv][far])
        return top, bottom


def _curvature(G: np.ndarray, ranges: _Ranges, n: int, t1: np.ndarray, t2: np.ndarray) -> np.ndarray:
    """K >= |P''| on each [t1, t2] (module docstring)."""
    if n < 2:
        return np.zeros(len(t1))
    lo, hi = _window(n, t1, t2)
    top, bottom = ranges(lo, hi)
    spread, middle = top - bottom, (top + bottom) / 2.0
    v = np.minimum(t1 * (1.0 - t1), t2 * (1.0 - t2))
    total = 4.0 * n * (n - 1)
    with np.errstate(divide="ignore"):
        total_abs = np.minimum(
            np.where(v > 0, math.sqrt(2.0 * n * (n - 1)) / np.where(v > 0, v, 1.0), total), total
        )
    far = _far_below(lo - 1, n - 2, t1) + _far_above(hi - 1, n - 2, t2)
    far_gap = np.maximum(float(G.max()) - middle, middle)
    return spread / 2.0 * total_abs + far_gap * total * far


def bernstein_sup(
    G: np.ndarray, n: int, rtol: float = 1e-10, above: float | None = None
) -> tuple[float, bool]:
    """(U, certified): U >= max over [0, 1] of sum_M G(M) B_M(t), within rtol of it when certified.

    With `above`, stops as soon as the answer to "is the maximum above `above`?" is known: a value
    above it was found (U is that value) or every bound is at most `above` (U is the largest bound).
    """
    value, slope, value_err, slope_err = _start_basis(n).evaluate(G)
    ranges = _Ranges(G)
    best = float(value.max())
    lo, hi = _GRID[:-1], _GRID[1:]
    p1, p2, d1, d2 = value[:-1] + value_err[:-1], value[1:] + value_err[1:], slope[:-1], slope[1:]
    e1, e2 = slope_err[:-1], slope_err[1:]
    for _ in range(_MAX_ROUNDS + 1):
        if above is not None and best > above:
            return best, True
        bound = _interval_bound(p1, p2, d1 + e1, d2 - e2, _curvature(G, ranges, n, lo, hi), hi - lo)
        top = float(bound.max(initial=best))
        if above is not None and top <= above:
            return max(top, best), True
        open_ = bound > best * (1.0 + rtol)
        if not open_.any():
            return max(best, top), True
        if 2 * int(open_.sum()) > _MAX_INTERVALS:
            return max(best, top), False
        mid = (lo[open_] + hi[open_]) / 2.0
        v, s, ve, se = _Basis(n, mid).evaluate(G)
        best = max(best, float(v.max()))
        lo, hi = np.concatenate([lo[open_], mid]), np.concatenate([mid, hi[open_]])
        p1, p2 = np.concatenate([p1[open_], v + ve]), np.concatenate([v + ve, p2[open_]])
        d1, d2 = np.concatenate([d1[open_], s]), np.concatenate([s, d2[open_]])
        e1, e2 = np.concatenate([e1[open_], se]), np.concatenate([se, e2[open_]])
    bound = _interval_bound(p1, p2, d1 + e1, d2 - e2, _curvature(G, ranges, n, lo, hi), hi - lo)
    return max(best, float(bound.max(initial=best))), False


def _interval_bound(
    p1: np.ndarray, p2: np.ndarray, d1: np.ndarray, d2: np.ndarray, k: np.ndarray, h: np.ndarray
) -> np.ndarray:
    """max over x in [0, h] of min(f1(x), f2(x)), the two Taylor bounds of an interval of width h:
    f1 = p1 + d1 x + k x²/2 from its left end, f2 = p2 - d2 (h - x) + k (h - x)²/2 from its right.

    Both are convex, so the maximum of their minimum is at an end or where they cross; f1 - f2 is
    linear in x (the x² terms cancel), so they cross at most once.
    """

    def f1(x):
        return p1 + d1 * x + k * x * x / 2.0

    def f2(x):
        return p2 - d2 * (h - x) + k * (h - x) ** 2 / 2.0

    zero = np.zeros_like(h)
    gap0, gap_h = f1(zero) - f2(zero), f1(h) - f2(h)
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = np.where(gap0 != gap_h, gap0 / (gap0 - gap_h) * h, zero)
    cross = np.clip(np.nan_to_num(cross), 0.0, h)
    ends = np.maximum(np.minimum(f1(zero), f2(zero)), np.minimum(f1(h), f2(h)))
    return np.maximum(ends, np.minimum(f1(cross), f2(cross)))
