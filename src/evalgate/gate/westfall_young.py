"""Westfall–Young step-down min-P across the gated slices (`gate.multiplicity: westfall-young`).

Holm treats the gated slices as unrelated, but they share probes: `overall` holds every probe,
`language:es` and `tense:past_simple` overlap, and so on. Westfall & Young (1993, "Resampling-
based multiple testing", Wiley, Algorithm 2.8, step-down min-P) use the joint null distribution of
the p-values instead, so a family of nested slices pays for the dependence it really has rather
than for m unrelated tests (docs/gate.md, "Multiplicity").

The null. Each slice tests the non-inferiority null H0: true drop <= its tolerance
(gate/noninferiority.py), not "no change", so sign flips are not the null. The joint null used
here is the least favourable configuration of that family at the boundary: every probe
independently goes right -> wrong with p_b and wrong -> right with p_c, p_b - p_c = tau_i, with
a common disagreement s = p_b + p_c over a grid in [tau, 1] and the supremum taken over s, in the
manner of the marginal test's Suissa-Shuster p-value. Raising p_b with p_c fixed only raises every
slice's b, so the boundary is where the null is least favourable. One draw per probe feeds every
slice that holds it, which is where the dependence (and the power) comes from. tau_i is the
largest tolerance among the gated slices holding probe i: with one tolerance (the default) every
slice sits exactly on its boundary; with per-slice tolerances (gate.tolerances) a slice whose
probes also sit in a looser slice is drawn beyond its boundary, which is conservative.

The statistic. min-P balances the slices by their p-values. The exact p-value (noninferiority.
pvalue) costs tens of milliseconds per outcome, too slow for thousands of draws, so each draw's
p-value is read from a table of the same exact unconditional p-value over every outcome (b, c) of
the slice, maximised over a fixed grid of s (`_table`; equal to the marginal p-value up to the
grid). Any fixed monotone map of a slice's statistic gives a valid step-down procedure; this one
is the exact p-value to within the grid. The steps go in the order of the marginal p-values (any
order is valid when the critical values shrink with the set tested, as min-P's do), and the
adjusted p-value is never below the marginal one.

The draws. The joint distribution depends only on which probes each slice holds and on the
tolerances, never on the outcomes, so it is computed once per slice structure. It is exact
(enumerating every outcome of every group of probes that share their slices) when that support is
small, and otherwise drawn: `_DRAWS` draws per s with common random numbers across s, seeded from
the structure, so the same inputs give the same numbers (results.json is deterministic).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from evalgate.gate.binomial import binom_sf
from evalgate.gate.noninferiority import score_z
from evalgate.gate.stats import holm

# Grid of the disagreement s for the joint supremum; the tables use a twice finer grid that
# contains it, so a family of one slice reproduces its table value.
_GRID = 25
_TABLE_GRID = 2 * _GRID - 1
_DRAWS = 4096  # per grid point; the estimate of a tail near 0.05 has a standard error ~0.0034
_EXACT_LIMIT = 60_000  # joint outcomes enumerated exactly below this many
_WINDOW_SD = 9.0  # outcomes beyond mean +- 9 sd (+ 12) carry < 1e-18 of the mass
_CHUNK_BYTES = 64 * 2**20  # the draws' per-probe arrays held at once (`_draw_chunk`)
# The most the boundary draws may hold (`estimated_bytes`); a family that would need more is
# adjusted by Holm instead, which is never less conservative (docs/gate.md, "Multiplicity").
MEMORY_BOUND = 2**30  # 1 GiB
METHOD = "westfall-young"


def adjustment_name(comparison: Mapping[str, Any] | None) -> str:
    """The adjustment a comparison used, for humans: "Holm" unless it records Westfall–Young
    (results.json's comparison.multiplicity; absent means Holm, as before the key existed) and
    did not fall back to Holm (comparison.multiplicity_fallback, `too_large`)."""
    doc = comparison or {}
    return (
        "Westfall–Young"
        if doc.get("multiplicity") == METHOD and not doc.get("multiplicity_fallback")
        else "Holm"
    )


def null_kind(tolerances: Mapping[str, float]) -> Literal["sign-flip", "boundary"]:
    """The joint null `adjust` uses for these gated slices: "sign-flip" when there are several
    and every one has tolerance 0 (the "no change" null, exact given which probes changed),
    otherwise "boundary" (the least favourable point of the non-inferiority null). A family of
    one slice needs no adjustment: its own exact unconditional test is kept."""
    several = len(tolerances) > 1
    return "sign-flip" if several and all(float(t) == 0.0 for t in tolerances.values()) else "boundary"


def _log_factorials(n: int) -> np.ndarray:
    """log k! for k = 0..n."""
    return np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))))


def _seeded(structure: Any) -> np.random.Generator:
    """Draws seeded from what they depend on, so the same inputs give the same results.json."""
    digest = hashlib.sha256(repr(structure).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def _grid(tau: float, points: int) -> np.ndarray:
    # Denser near s = tau, where small slices find their least favourable point (as
    # noninferiority._sup_on_boundary does).
    return tau + (1.0 - tau) * np.linspace(0.0, 1.0, points) ** 2


def _offsets(n: int) -> np.ndarray:
    """Start of row c in the triangle {(b, c): b + c <= n} stored row by row."""
    c = np.arange(n + 2, dtype=np.int64)
    return c * (n + 1) - c * (c - 1) // 2


def _triangle(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every outcome (b, c) with b + c <= n."""
    c = np.repeat(np.arange(n + 1), np.arange(n + 1, 0, -1))
    return np.arange(len(c)) - _offsets(n)[c], c


def _xlogy(x: np.ndarray, p: float) -> np.ndarray:
    if p <= 0.0:
        return np.where(x > 0, -np.inf, 0.0)
    return x * math.log(p)


def _window(n: int, p: float) -> tuple[int, int]:
    half = _WINDOW_SD * math.sqrt(n * p * (1.0 - p)) + 12
    return max(0, math.floor(n * p - half)), min(n, math.ceil(n * p + half))


def _draw_chunk(n_probes: int, n_grid: int, n_groups: int) -> int:
    """Draws per chunk: the uniforms, two first-index arrays, their bin indices and histogram
    (about 40 bytes per draw and probe, 4 per draw, grid point and group) within `_CHUNK_BYTES`."""
    per_draw = 40 * n_probes + 8 * (n_grid + 1) * n_groups
    return max(1, min(_DRAWS, _CHUNK_BYTES // per_draw))


def _table_windows(n: int, tau: float) -> list[tuple[float, float, tuple[int, int], tuple[int, int]]]:
    """Per table grid point: p_b, p_c and the windows of b and c that carry its mass."""
    out = []
    for s in _grid(tau, _TABLE_GRID):
        p_b, p_c = (s + tau) / 2.0, (s - tau) / 2.0
        if p_b > 0.0:
            out.append((p_b, p_c, _window(n, p_b), _window(n, p_c)))
    return out


def _table_bytes(n: int, tau: float) -> tuple[int, int]:
    """An upper bound on what `_PTable(n, tau)` keeps (two float64 per outcome of each window)
    and on the most its construction holds at once besides (about ten 8-byte arrays over the
    largest window)."""
    sizes = [(bh - bl + 1) * (ch - cl + 1) for _, _, (bl, bh), (cl, ch) in _table_windows(n, tau)]
    return 16 * sum(sizes), 80 * max(sizes, default=0)


def estimated_bytes(sizes: Sequence[int], taus: Sequence[float], n_probes: int) -> int:
    """An upper bound on the memory the boundary draws of one family hold at their peak: every
    slice's p-value table (`_PTable`, one per distinct size and tolerance), the largest one's
    construction, a chunk of draws (`_CHUNK_BYTES`), the per-slice counts and p-values of every
    draw at every grid point, and the probe-by-slice incidence and its groups. Computed from the
    sizes alone, before anything is allocated: `adjust` falls back to Holm above
    `MEMORY_BOUND` (docs/gate.md, "Multiplicity")."""
    kept, building = 0, 0
    for n, tau in sorted(set(zip(sizes, (float(t) for t in taus), strict=True))):
        keep, build = _table_bytes(int(n), tau)
        kept, building = kept + keep, max(building, build)
    m = len(sizes)
    draws = 4 * _GRID * _DRAWS * m * 8  # b, c, their p-values and a look-up's temporaries
    structure = n_probes * (m + 1) * 8 * 6  # incidence, pattern, its unique rows and inverse
    return kept + building + _CHUNK_BYTES + 8 * (_GRID + 1) * _DRAWS * 8 + draws + structure


class _PTable:
    """The exact unconditional p-value of any outcome (b, c) of an n-probe slice.

    max over the table grid of s of P_s(Z >= z(b, c)) (Tango's Z, gate/noninferiority.py); 1.0
    where Z <= 0, as noninferiority.pvalue. The marginal p-value refines the grid around its
    maximum, so it is at least this value. Per grid point the outcomes that carry mass (the
    window of both counts) are sorted by Z once; a query is a binary search.
    """

    def __init__(self, n: int, tau: float):
        self.n, self.tau = n, tau
        lf = _log_factorials(n)
        self.levels: list[tuple[np.ndarray, np.ndarray]] = []
        # Z only over each level's window (never the whole triangle of (n + 1)(n + 2) / 2
        # outcomes: 5 GB at 10,000 probes); elementwise, so the same numbers
        for p_b, p_c, (b_lo, b_hi), (c_lo, c_hi) in _table_windows(n, tau):
            s = p_b + p_c
            grid_b, grid_c = np.meshgrid(np.arange(b_lo, b_hi + 1), np.arange(c_lo, c_hi + 1))
            bb, cc = grid_b.ravel(), grid_c.ravel()
            ok = bb + cc <= n
            bb, cc = bb[ok], cc[ok]
            z = score_z(bb, cc, n, tau)
            pos = z > 0
            bb, cc, z = bb[pos], cc[pos], z[pos]
            with np.errstate(divide="ignore", invalid="ignore"):
                lp = lf[n] - lf[bb] - lf[cc] - lf[n - bb - cc]
                lp = lp + _xlogy(bb, p_b) + _xlogy(cc, p_c) + _xlogy(n - bb - cc, 1.0 - s)
            order = np.argsort(z, kind="stable")[::-1]
            self.levels.append((-z[order], np.cumsum(np.exp(lp[order]))))

    def __call__(self, b, c) -> np.ndarray:
        b = np.asarray(b, dtype=np.int64)
        c = np.asarray(c, dtype=np.int64)
        flat = (c * (self.n + 1) + b).ravel()
        uniq, back = np.unique(flat, return_inverse=True)
        ub, uc = uniq % (self.n + 1), uniq // (self.n + 1)
        z = score_z(ub, uc, self.n, self.tau)
        best = np.zeros(len(uniq))
        for neg_z, cum in self.levels:
            # every outcome with Z >= z (ties included) is in the tail
            k = np.searchsorted(neg_z, -z, side="right")
            best = np.maximum(best, np.where(k > 0, cum[np.maximum(k - 1, 0)], 0.0))
        out = np.where(z > 0, np.minimum(1.0, best), 1.0)
        return out[back.reshape(-1)].reshape(b.shape)


@lru_cache(maxsize=64)
def _table(n: int, tau: float) -> _PTable:
    return _PTable(n, tau)


class _Null:
    """The joint null of one slice structure: every slice's p-value in every null outcome.

    `g[j]` (grid point j) holds the p-values, one column per slice, of the outcomes whose
    probabilities are `w[j]` (exact) or of `_DRAWS` equally likely draws.
    """

    def __init__(self, members: tuple[tuple[int, ...], ...], taus: tuple[float, ...], n_probes: int):
        m = len(members)
        incidence = np.zeros((m, n_probes), dtype=bool)
        for k, ids in enumerate(members):
            incidence[k, list(ids)] = True
        tau_probe = np.zeros(n_probes)
        for k in range(m):
            tau_probe[incidence[k]] = np.maximum(tau_probe[incidence[k]], taus[k])
        self.sizes = [len(ids) for ids in members]
        self.tables = [_table(len(ids), taus[k]) for k, ids in enumerate(members)]
        self.grid = _grid(float(min(taus)), _GRID)
        # Probes that sit in the same slices, with the same tolerance, are exchangeable: groups.
        pattern = np.vstack([incidence, tau_probe[None, :]]).T
        groups, inverse, counts = np.unique(pattern, axis=0, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
        support = math.prod((int(k) + 1) * (int(k) + 2) // 2 for k in counts)
        self.exact = support <= _EXACT_LIMIT
        if self.exact:
            self._enumerate(groups[:, :m].T.astype(np.int64), groups[:, m], counts)
        else:
            self._draw(incidence, inverse, groups[:, :m].T.astype(np.int64), groups[:, m], members, taus)

    def _lookup(self, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return np.stack([t(b[..., k], c[..., k]) for k, t in enumerate(self.tables)], axis=-1)

    def _enumerate(self, group_slices: np.ndarray, group_tau: np.ndarray, counts: np.ndarray) -> None:
        per_group = [_triangle(int(n_a)) for n_a in counts]
        shape = [len(bb) for bb, _ in per_group]
        grids = np.indices(shape).reshape(len(shape), -1)
        b_g = np.stack([per_group[a][0][grids[a]] for a in range(len(shape))])  # groups x outcomes
        c_g = np.stack([per_group[a][1][grids[a]] for a in range(len(shape))])
        b = (group_slices @ b_g).T  # outcomes x slices
        c = (group_slices @ c_g).T
        self.g = [self._lookup(b, c)]
        lf = _log_factorials(int(counts.max()))
        weights = []
        for s in self.grid:
            logw = np.zeros(b_g.shape[1])
            for a, n_a in enumerate(counts):
                n_a = int(n_a)
                p_c = max(0.0, (s - group_tau[a]) / 2.0)
                p_b = min(1.0, p_c + group_tau[a])
                bb, cc = b_g[a], c_g[a]
                with np.errstate(divide="ignore", invalid="ignore"):
                    lw = lf[n_a] - lf[bb] - lf[cc] - lf[n_a - bb - cc]
                    lw = lw + _xlogy(bb, p_b) + _xlogy(cc, p_c) + _xlogy(n_a - bb - cc, 1.0 - p_b - p_c)
                logw += lw
            weights.append(np.exp(logw))
        self.w: np.ndarray | None = np.array(weights)

    def _draw(self, incidence, group_of, group_slices, group_tau, members, taus) -> None:
        """`_DRAWS` draws per grid point, the same uniforms at every s (common random numbers).

        Probe i goes right -> wrong at grid point j when u_i < p_b(s_j), and changes at all when
        u_i < p_b(s_j) + p_c(s_j); both bounds grow with s, so a probe's outcome over the whole
        grid is fixed by the first grid index where each bound passes u_i. Counting those indices
        per group of probes that share their slices gives every slice's (b, c) at every s at once.
        """
        rng = _seeded((members, taus))
        n_groups, n_grid, n_probes = len(group_tau), len(self.grid), incidence.shape[1]
        tau_probe = group_tau[group_of]
        weights = group_slices.T.astype(np.float32)  # groups x slices
        bounds = []
        for tau in np.unique(tau_probe):
            p_c = np.maximum(0.0, (self.grid - tau) / 2.0)
            p_b = np.minimum(1.0, p_c + tau)
            bounds.append((np.flatnonzero(tau_probe == tau), p_b, np.minimum(1.0, p_b + p_c)))
        b = np.zeros((n_grid, _DRAWS, len(members)), dtype=np.int64)
        c = np.zeros((n_grid, _DRAWS, len(members)), dtype=np.int64)
        # In chunks of draws, so that the draws x probes arrays stay within `_CHUNK_BYTES` (the
        # uniforms come from one stream in the same order: the same numbers as all at once).
        chunk = _draw_chunk(n_probes, n_grid, n_groups)
        for start in range(0, _DRAWS, chunk):
            size = min(chunk, _DRAWS - start)
            u = rng.random((size, n_probes))
            first_b = np.zeros((size, n_probes), dtype=np.int64)
            first_any = np.zeros((size, n_probes), dtype=np.int64)
            for cols, p_b, p_any in bounds:
                first_b[:, cols] = np.searchsorted(p_b, u[:, cols], side="right")
                first_any[:, cols] = np.searchsorted(p_any, u[:, cols], side="right")
            del u
            # bin index (draw, first grid index, group): a histogram whose rows times the groups'
            # slice memberships give each slice's count of probes per first index
            base = np.arange(size)[:, None] * ((n_grid + 1) * n_groups) + group_of[None, :]
            bins = size * (n_grid + 1) * n_groups

            def per_slice(first: np.ndarray, base=base, bins=bins, size=size) -> np.ndarray:
                hist = np.bincount((base + first * n_groups).ravel(), minlength=bins).astype(np.float32)
                per = hist.reshape(size * (n_grid + 1), n_groups) @ weights  # exact: counts < 2**24
                per = np.cumsum(per.reshape(size, n_grid + 1, -1), axis=1)[
                    :, :n_grid
                ]  # draws x grid x slices
                return np.rint(per.transpose(1, 0, 2)).astype(np.int64)

            b_part = per_slice(first_b)
            b[:, start : start + size] = b_part
            c[:, start : start + size] = per_slice(first_any) - b_part
        # One table look-up per slice for every grid point at once (the tables are the cost).
        self.g = list(self._lookup(b, c))
        self.w = None

    def first_step(self, thresholds: np.ndarray) -> np.ndarray:
        """sup over s of P(the smallest p-value of the whole family <= t), for an array of t:
        the first step's tail, the one that decides whether anything is rejected at all."""
        t = np.asarray(thresholds, dtype=np.float64)
        best = np.zeros(t.shape)
        for j_s, g in enumerate(self.g if self.w is None else self.g * len(self.w)):
            least = g.min(axis=1)
            order = np.argsort(least, kind="stable")
            weight = np.full(len(least), 1.0 / len(least)) if self.w is None else self.w[j_s]
            cum = np.concatenate(([0.0], np.cumsum(weight[order])))
            best = np.maximum(best, cum[np.searchsorted(least[order], t, side="right")])
        return best

    def tail(self, order: Sequence[int], thresholds: np.ndarray) -> np.ndarray:
        """sup over s of P(min over slices order[j:] of p <= thresholds[j]), for every step j."""

        def hits(g: np.ndarray) -> np.ndarray:
            suffix_min = np.minimum.accumulate(g[:, list(order)][:, ::-1], axis=1)[:, ::-1]
            return (suffix_min <= thresholds[None, :]).astype(np.float64)

        if self.w is not None:  # exact: one set of outcomes, weighted at every grid point
            return (self.w @ hits(self.g[0])).max(axis=0)
        return np.max([hits(g).mean(axis=0) for g in self.g], axis=0)


@lru_cache(maxsize=8)
def _null(members: tuple[tuple[int, ...], ...], taus: tuple[float, ...], n_probes: int) -> _Null:
    return _Null(members, taus, n_probes)


def too_large(
    members: Mapping[str, Sequence[str]], tolerances: Mapping[str, float], flips: Mapping[str, int] | None
) -> str | None:
    """Why the boundary draws of this family would hold more than `MEMORY_BOUND`, or None.

    Such a family (tens of thousands of probes: the tables grow with each slice's size) is
    adjusted by Holm instead. Holm is what the draws' values are capped at, so it is never less
    conservative, and it holds the family's error at alpha whatever the dependence
    (docs/gate.md, "Multiplicity"). The sign-flip null at tolerance 0 holds no tables: never."""
    if len(members) < 2 or (flips is not None and null_kind(tolerances) == "sign-flip"):
        return None
    n_probes = len({i for ids in members.values() for i in ids})
    keys = list(members)
    need = estimated_bytes([len(members[k]) for k in keys], [float(tolerances[k]) for k in keys], n_probes)
    if need <= MEMORY_BOUND:
        return None
    return (
        f"Westfall-Young's boundary draws over {n_probes:,} probes would hold about "
        f"{need / 2**20:,.0f} MiB, above its {MEMORY_BOUND / 2**20:,.0f} MiB bound: adjusted by Holm"
    )


def adjust(
    pvalues: Mapping[str, float],
    members: Mapping[str, Sequence[str]],
    counts: Mapping[str, tuple[int, int]],
    tolerances: Mapping[str, float],
    flips: Mapping[str, int] | None = None,
) -> dict[str, float]:
    """Westfall–Young step-down min-P adjusted p-values, keys in the input order.

    `pvalues`: each gated slice's marginal p-value (noninferiority.pvalue); `members`: its shared
    probe ids; `counts`: its (b, c); `tolerances`: its tolerance; `flips`: each shared probe's
    change (+1 right -> wrong, -1 wrong -> right, 0 none), needed for the sign-flip null. With
    several slices all at tolerance 0 and `flips` given, the null is the sign flips of the
    discordant probes (`_flip_adjust`); otherwise the boundary draws below. Adjusted values are
    never below the raw value and at most 1. With the boundary draws they are no larger than
    Holm's up to sampling error and monotone in the order of the raw ones (ties by key, as
    gate/stats.holm); with sign flips they are at most the larger of the raw value and Holm's of
    the conditional p-values, monotone in the order of those. The conditional p-value is coarser
    than the raw one when few probes changed, so with few, disjoint slices sign flips can adjust
    more than Holm of the raw values would (docs/gate.md, "Multiplicity").
    """
    keys = list(pvalues)
    if not keys:
        return {}
    if flips is not None and null_kind(tolerances) == "sign-flip":
        return _flip_adjust(pvalues, members, flips)
    if too_large(members, tolerances, flips):
        return holm(pvalues)  # never less conservative than the draws (`too_large`)
    order_keys = sorted(keys, key=lambda k: (pvalues[k], k))
    raw = np.array([pvalues[k] for k in order_keys])
    live = raw < 1.0
    adjusted = np.ones(len(keys))
    if live.any():
        probes = sorted({i for k in keys for i in members[k]})
        index = {p: i for i, p in enumerate(probes)}
        # The structure is keyed in a canonical order, so the same slices give the same draws.
        canon = sorted(keys)
        struct = tuple(tuple(sorted(index[i] for i in members[k])) for k in canon)
        null = _null(struct, tuple(float(tolerances[k]) for k in canon), len(probes))
        pos = {k: i for i, k in enumerate(canon)}
        observed = np.array([float(null.tables[pos[k]](counts[k][0], counts[k][1])) for k in order_keys])
        tails = null.tail([pos[k] for k in order_keys], observed)
        adjusted = np.maximum.accumulate(np.maximum(tails, raw))
        # The exact min-P value is at most Holm's (Bonferroni's inequality at every step, each
        # slice's p-value being valid under every null point), so a larger estimate is sampling
        # error of the draws (the supremum over s of noisy tails leans upwards): cap it there.
        bound = holm(pvalues)
        adjusted = np.minimum(adjusted, np.array([bound[k] for k in order_keys]))
        adjusted = np.where(np.maximum.accumulate(~live), 1.0, np.minimum(1.0, adjusted))
    out = dict(zip(order_keys, adjusted.tolist(), strict=True))
    return {k: out[k] for k in keys}


# --- the sign-flip null at tolerance 0 --------------------------------------------------------

_FLIP_DRAWS = 20_000  # a tail near 0.05 estimated with standard error ~0.0015
_FLIP_CHUNK = 2_000  # draws held at once


def _flip_tables(d: np.ndarray) -> list[np.ndarray]:
    """Per slice with d discordant probes: P(Bin(d, 1/2) >= b) for b = 0..d, the exact
    conditional (McNemar) p-value of b losses among them."""
    return [binom_sf(np.arange(int(n) + 1), int(n), 0.5) for n in d]


def _flip_adjust(
    pvalues: Mapping[str, float], members: Mapping[str, Sequence[str]], flips: Mapping[str, int]
) -> dict[str, float]:
    """Westfall–Young step-down min-P under the sign-flip null of "no change" (tolerance 0).

    Conditional on which probes changed, "no change" makes every discordant probe's direction a
    fair coin, independently (the conditional null of McNemar's test, for all slices at once):
    the joint null of every slice's loss count is exact, with no nuisance parameter to take a
    supremum over. Slices with few discordant probes cannot reach a small p-value under it, so
    they cost the family nothing; that, and the nesting of the slices, is where it gains on Holm
    and on the boundary draws (docs/gate.md, "Multiplicity"; bench/gate_power.py table H). Each
    slice's statistic is its conditional p-value; discordant probes that share their slices form
    groups whose loss counts are independent binomials: summed exactly when their joint outcomes
    are few, else `_FLIP_DRAWS` seeded draws. Valid for any fixed ordering of the steps (the
    tails shrink with the set tested); it steps in the order of the conditional p-values.
    """
    keys = list(pvalues)
    canon = sorted(keys)
    disc = sorted({i for k in keys for i in members[k] if flips.get(i, 0) != 0})
    if not disc:  # nothing changed: no slice can show a drop
        return dict.fromkeys(keys, 1.0)
    index = {p: j for j, p in enumerate(disc)}
    incidence = np.zeros((len(canon), len(disc)), dtype=np.int64)
    for k, key in enumerate(canon):
        cols = [index[i] for i in members[key] if i in index]
        incidence[k, cols] = 1
    sign = np.array([1 if flips[i] > 0 else 0 for i in disc], dtype=np.int64)
    d = incidence.sum(axis=1)
    b = incidence @ sign
    tables = _flip_tables(d)
    cond = np.array([tables[k][b[k]] for k in range(len(canon))])
    groups, counts = np.unique(incidence.T, axis=0, return_counts=True)
    group_slices = groups.T  # slices x groups
    support = math.prod(int(n) + 1 for n in counts)
    order = sorted(range(len(canon)), key=lambda k: (cond[k], pvalues[canon[k]], canon[k]))
    # "at least as extreme" with a relative margin, so the observed outcome counts as extreme as
    # itself whatever the rounding of the table values
    thresholds = cond[order] * (1 + 1e-12)

    def hits(losses: np.ndarray) -> np.ndarray:
        """Per outcome (column of `losses`, slices x outcomes): does the smallest p-value of the
        slices from step j on reach step j's observed one, for every step j."""
        null_p = np.stack([tables[k][losses[k]] for k in order], axis=1)  # outcomes x steps
        suffix_min = np.minimum.accumulate(null_p[:, ::-1], axis=1)[:, ::-1]
        return suffix_min <= thresholds[None, :]

    if support <= _EXACT_LIMIT:
        grids = np.indices([int(n) + 1 for n in counts]).reshape(len(counts), -1)  # groups x outcomes
        lf = _log_factorials(int(counts.max()))
        logw = np.zeros(grids.shape[1])
        for a, n in enumerate(counts):
            x = grids[a]
            logw += lf[n] - lf[x] - lf[n - x] - n * math.log(2.0)
        tails = np.exp(logw) @ hits(group_slices @ grids)
    else:
        rng = _seeded((canon, groups.tolist(), counts.tolist()))
        # in chunks: a family of thousands of groups would otherwise hold groups x draws at once
        count = np.zeros(len(order))
        group_slices32 = group_slices.astype(np.int32)
        for start in range(0, _FLIP_DRAWS, _FLIP_CHUNK):
            size = min(_FLIP_CHUNK, _FLIP_DRAWS - start)
            draws = rng.binomial(counts[:, None], 0.5, size=(len(counts), size)).astype(np.int32)
            count += hits(group_slices32 @ draws).sum(axis=0)
        # the observed outcome is one of the equally likely ones: (1 + hits) / (1 + draws) keeps
        # a drawn tail a valid p-value whatever the draws (as gate/cluster.py's sign-flip test)
        tails = (1.0 + count) / (1.0 + _FLIP_DRAWS)
    adjusted = np.maximum.accumulate(tails)
    # Bonferroni at every step bounds the exact min-P value by Holm's of the same conditional
    # p-values: a larger estimate is sampling error of the draws.
    bound = holm({canon[k]: float(cond[k]) for k in range(len(canon))})
    adjusted = np.minimum(adjusted, np.array([bound[canon[k]] for k in order]))
    raw = np.array([pvalues[canon[k]] for k in order])
    # never below the slice's own exact test, and 1 for a slice whose drop is not positive
    adjusted = np.maximum.accumulate(np.maximum(adjusted, raw))
    adjusted = np.where(raw >= 1.0, 1.0, np.minimum(1.0, adjusted))
    out = {canon[k]: float(v) for k, v in zip(order, adjusted, strict=True)}
    return {k: out[k] for k in keys}


def with_others(within: Mapping[str, float], others: Mapping[str, float]) -> dict[str, float]:
    """Westfall–Young-adjusted slice p-values (`within`) joined in one family with other tests'
    p-values (`others`: the perplexity checks, whose dependence on the slices is unknown).

    Bonferroni between the blocks, weighted by their sizes: with m slices and k others, the
    slices' block is tested at alpha * m / (m + k) (its Westfall–Young values scaled by
    (m + k) / m) and each other test at alpha / (m + k), so by the union bound the family's
    error is at most alpha whatever the dependence (docs/gate.md, "Multiplicity"). Never below
    the values it is given; without others, `within` itself.
    """
    if not others:
        return dict(within)
    total = len(within) + len(others)
    out = {k: min(1.0, float(v) * total / len(within)) for k, v in within.items()} if within else {}
    out.update({k: min(1.0, float(p) * total) for k, p in others.items()})
    return out
