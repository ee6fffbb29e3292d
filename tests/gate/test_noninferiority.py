"""The gate's per-slice test keeps its promise: a true drop equal to the tolerance is flagged at
most alpha of the time, checked by enumerating every outcome (gate/noninferiority.py)."""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import pytest

from evalgate.gate import noninferiority as ni
from evalgate.gate.binomial import binom_sf
from evalgate.gate.stats import mcnemar_exact_one_sided


def _exact_sf(k: int, n: int, p: Fraction) -> float:
    return float(sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1)))


@pytest.mark.parametrize(
    ("k", "n", "p"),
    [(3, 20, "1/8"), (40, 300, "1/10"), (290, 300, "9/10"), (530, 1000, "1/2"), (1200, 2000, "3/5")],
)
def test_binomial_tail_matches_exact_rational_sum(k, n, p):
    exact = _exact_sf(k, n, Fraction(p))
    assert float(binom_sf(k, n, float(Fraction(p)))) == pytest.approx(exact, rel=1e-12)


def test_binomial_tail_error_bound_at_20k():
    # Tail of Bin(20000, 1/2) in exact integers (term by term), against the float path.
    n, k = 20_000, 10_150
    term, total = math.comb(n, k), 0
    for i in range(k, n + 1):
        total += term
        term = term * (n - i) // (i + 1)
    assert float(binom_sf(k, n, 0.5)) == pytest.approx(float(Fraction(total, 1 << n)), rel=1e-10)


def test_mcnemar_with_100k_discordant_probes_is_fast():
    start = time.perf_counter()
    p = mcnemar_exact_one_sided(50_300, 49_700)
    assert time.perf_counter() - start < 0.5
    assert 0.02 < p < 0.04  # z = 600 / sqrt(100000) = 1.897, one-sided normal 0.0289


@pytest.mark.stats
def test_noninferiority_pvalue_with_100k_discordant_probes_is_fast():
    start = time.perf_counter()
    p = ni.pvalue(50_600, 49_400, 100_000, 0.002)
    assert time.perf_counter() - start < 10
    # Tango's Z here is (1200 - 200) / sqrt(100000 (2 p~ + 0.002 * 0.998)) ~ 3.16: normal tail 0.0008.
    assert 0.0005 < p < 0.002


def test_score_statistic_is_mcnemars_z_at_zero_tolerance():
    # Published form of McNemar's statistic (McNemar 1947): (b - c) / sqrt(b + c).
    for b, c in [(10, 3), (7, 7), (30, 1)]:
        assert float(ni.score_z(b, c, 100, 0.0)) == pytest.approx((b - c) / math.sqrt(b + c), rel=1e-12)


@pytest.mark.parametrize("delta", [0.0, 0.02, 0.1])
def test_score_statistic_grows_with_b(delta):
    n = 80
    for c in range(0, n + 1, 7):
        z = ni.score_z(np.arange(0, n - c + 1), c, n, delta)
        assert np.all(np.diff(z) > 0)


def _trinomial_size(region: list[tuple[int, int]], n: int, delta: float, s_grid: np.ndarray) -> np.ndarray:
    b = np.array([r[0] for r in region])
    c = np.array([r[1] for r in region])
    logc = np.array(
        [
            math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(y + 1) - math.lgamma(n - x - y + 1)
            for x, y in region
        ]
    )
    sizes = []
    for s in s_grid:
        pb, pc = (s + delta) / 2, (s - delta) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            lp = logc + b * math.log(pb) + np.where(c > 0, c * math.log(pc) if pc > 0 else -np.inf, 0.0)
            rest = n - b - c
            lp = lp + np.where(rest > 0, rest * math.log1p(-s) if s < 1 else -np.inf, 0.0)
        sizes.append(float(np.exp(lp).sum()))
    return np.array(sizes)


@pytest.mark.stats
@pytest.mark.parametrize(("n", "delta"), [(30, 0.02), (40, 0.0), (60, 0.02)])
def test_size_at_drop_equal_to_tolerance_is_at_most_alpha_by_enumeration(n, delta):
    alpha = 0.05
    region = [(b, c) for c in range(n + 1) for b in range(n - c + 1) if ni.pvalue(b, c, n, delta) <= alpha]
    assert region  # the test can fire at all
    # Every null configuration on the boundary p_b - p_c = delta, on a grid far finer than the
    # one the p-value searches; the worst case must stay at or below alpha.
    s_grid = delta + (1 - delta) * np.linspace(0, 1, 3001)[1:]
    worst = _trinomial_size(region, n, delta, s_grid).max()
    assert worst <= alpha + 1e-12
    assert worst > 0.02  # and the test is not trivially conservative


@pytest.mark.stats
def test_a_true_drop_at_the_tolerance_is_not_flagged_like_mcnemar_flagged_it():
    # 2,000 probes, true drop 2 points with 10% disagreement: McNemar ("no change") flags such
    # a slice about half of the time; the non-inferiority test at most 5%.
    rng = np.random.default_rng(0)
    n, hits_ni, hits_mc = 2000, 0, 0
    counts = rng.multinomial(n, [0.06, 0.04, 0.90], size=60)
    for b, c, _ in counts:
        hits_ni += ni.pvalue(int(b), int(c), n, 0.02) < 0.05
        hits_mc += mcnemar_exact_one_sided(int(b), int(c)) < 0.05 and (b - c) / n > 0.02
    assert hits_ni <= 6 and hits_mc >= 18


def test_power_and_mde_at_sixty_probes():
    # A 10-point drop on 60 probes at 5% disagreement: the exact power of this test (the
    # Neyman-Pearson ceiling under this null is about 0.52, docs/gate.md).
    assert ni.power(60, 0.02, 0.05, 0.10, 0.05) == pytest.approx(0.512, abs=0.005)
    alone, in_gate = ni.mde(60, 0.02, 0.05, 0.05), ni.mde(60, 0.02, 0.05 / 15, 0.05)
    assert alone is not None and in_gate is not None and alone < in_gate
    assert ni.mde(60, 0.02, 0.05, 0.20) > alone  # more disagreement, larger MDE


@pytest.mark.stats
@pytest.mark.parametrize(("n", "level"), [(20, 0.05), (30, 0.0033), (45, 0.01)])
def test_the_critical_region_is_the_smallest_attainable_one_within_level(n, level):
    # critical_z stops bisecting once one attainable value of Z separates its bracket: the region
    # it selects must be the one a search over every attainable value finds
    from evalgate.gate.noninferiority import _bmin_table, critical_z, score_z, tail_sup

    b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1))
    ok = b + c <= n
    zs = np.unique(score_z(b[ok], c[ok], n, 0.02))
    zs = zs[zs > 0]
    first = next(z for z in zs if tail_sup(float(z) - 1e-12 * float(z), n, 0.02) <= level)
    got = critical_z(n, 0.02, level)
    assert np.array_equal(
        _bmin_table(got, n, 0.02), _bmin_table(float(first) - 1e-12 * float(first), n, 0.02)
    )


@pytest.mark.parametrize(
    ("n", "delta", "z"),
    [(1, 0.0, 0.5), (7, 0.3, 0.2), (40, 0.0, 1.7), (161, 0.02, 2.1), (500, 0.05, 2.9), (2_000, 0.02, 3.1)],
)
def test_the_stepwise_region_probability_is_the_sum_of_binomial_tails(n, delta, z):
    # `_grid_above` sums the region's probability by adding tails' differences c by c
    # (region_prob_by_steps); it must give what the direct sum of continued-fraction tails gives,
    # from s = delta (no wins: one c) to s = 1 (no ties: rows empty from the middle on).
    bmin = ni._bmin_table(z, n, delta)
    s = delta + (1.0 - delta) * np.linspace(0.0, 1.0, 41) ** 2
    direct = ni.region_prob(bmin, n, (s + delta) / 2.0, (s - delta) / 2.0)
    stepwise = ni.region_prob_by_steps(bmin, n, (s + delta) / 2.0, (s - delta) / 2.0)
    np.testing.assert_allclose(stepwise, direct, rtol=1e-11, atol=1e-300)
    assert direct.max() > 1e-3  # regions that carry probability, not a comparison of zeros


def test_the_stepwise_region_probability_matches_the_trinomial_enumeration():
    # Against every outcome's exact trinomial probability (fractions), on a 60-probe slice.
    n, delta, z = 60, 0.02, 1.4
    bmin = ni._bmin_table(z, n, delta)
    d = Fraction(delta)
    for t in (Fraction(0), Fraction(1, 10), Fraction(1, 2), Fraction(49, 50), Fraction(1)):
        s = d + t * (1 - d)
        pb, pc = (s + d) / 2, (s - d) / 2
        exact = sum(
            Fraction(math.factorial(n), math.factorial(b) * math.factorial(c) * math.factorial(n - b - c))
            * pb**b
            * pc**c
            * (1 - pb - pc) ** (n - b - c)
            for c in range(n + 1)
            for b in range(int(bmin[c]), n - c + 1)
        )
        got = float(ni.region_prob_by_steps(bmin, n, float(pb), float(pc))[0])
        assert got == pytest.approx(float(exact), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("n", [1, 5, 61, 300, 20_000])
@pytest.mark.parametrize("delta", [0.0, 0.02, 0.3])
def test_the_region_table_is_the_smallest_b_whose_statistic_reaches_z(n, delta):
    # _bmin_table starts its search where Z would be z and brackets it: every row must still be
    # the smallest b in 0..n-c with Z(b, c) >= z (n - c + 1 when none), found here by bisecting
    # each row over its whole range
    c = np.arange(n + 1)
    for z in (-1.0, 0.0, 0.4, 1.7, 2.9, 6.0, math.inf):
        lo, hi = np.zeros(n + 1, dtype=np.int64), n - c + 1
        while (lo < hi).any():
            mid = (lo + hi) // 2
            ok = (ni.score_z(np.minimum(mid, n - c), c, n, delta) >= z) & (lo < hi)
            hi, lo = np.where(ok, mid, hi), np.where(~ok & (lo < hi), mid + 1, lo)
        assert np.array_equal(ni._bmin_table(z, n, delta), lo), (z, n, delta)
