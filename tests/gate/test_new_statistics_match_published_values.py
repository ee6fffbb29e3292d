"""Issue 14's statistics reproduce values printed in the literature (docs/gate.md, "Reference values").

Each case is a published table whose result was computed by someone else with another program:
the gate's code has to land on the printed digits, not on a number we derived ourselves.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalgate.gate import cluster, noninferiority
from evalgate.gate.binomial import binom_sf
from evalgate.gate.stats import mcnemar_exact_one_sided

Z975 = 1.959963984540054

# Cavo et al. (2012), complete response before and after consolidation therapy, the worked paired
# example of Fagerland, Lydersen & Laake (2014, Statistics in Medicine 33:2850-2875; and their
# 2017 book, chapter 8): 59 / 6 / 16 / 80, so 16 pairs moved one way and 6 the other, n = 161.
CAVO_B, CAVO_C, CAVO_N = 16, 6, 161
# The gamma of the Berger & Boos step those authors add to every exact unconditional P-value
# they print (their default). Their program (the R package contingencytables, the book's code)
# maximises over 1,000 equally spaced disagreements inside the 1 - gamma Clopper-Pearson interval
# of the disagreement and adds gamma; the gate maximises over the whole range, with a certificate
# (gate/supremum.py), and adds nothing (docs/gate.md, "Reference values").
BERGER_BOOS_GAMMA = 1e-4


def _clopper_pearson(x: int, n: int, level: float) -> tuple[float, float]:
    """The exact 1 - level interval of a proportion, level/2 in each tail (Clopper & Pearson 1934)."""

    def root(inside, lo: float, hi: float) -> float:
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if inside(mid) else (mid, hi)
        return (lo + hi) / 2

    lower = 0.0 if x == 0 else root(lambda p: float(binom_sf(x, n, p)) >= level / 2, 0.0, 1.0)
    upper = 1.0 if x == n else root(lambda p: float(binom_sf(x + 1, n, p)) > 1 - level / 2, 0.0, 1.0)
    return lower, upper


def _berger_boos(b: int, c: int, n: int, gamma: float = BERGER_BOOS_GAMMA) -> tuple[float, float]:
    """Their two-sided P-value, computed their way from our region probabilities; and the
    disagreement where their maximum lies. At tolerance 0 Tango's Z is McNemar's Z and the null is
    symmetric in b and c, so the two-sided region is twice the one-sided one at every disagreement."""
    lower, upper = _clopper_pearson(b + c, n, gamma)
    z = float(noninferiority.score_z(b, c, n, 0.0))
    bmin = noninferiority._bmin_table(z - 1e-12 * z, n, 0.0)
    s = np.linspace(lower, upper, 1000)
    values = noninferiority.region_prob(bmin, n, s / 2, s / 2)
    return 2 * float(values.max()) + gamma, float(s[values.argmax()])


def _root(f, lo: float, hi: float) -> float:
    flo = f(lo)
    for _ in range(200):
        mid = (lo + hi) / 2
        if (f(mid) > 0) == (flo > 0):
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def test_tango_score_interval_matches_the_published_cavo_interval():
    # Published: Tango asymptotic score 95% CI for p12 - p21 = -0.0621 is (-0.1240, -0.0054).
    # Our orientation counts b (right -> wrong) first, so the interval for the drop is mirrored.
    def z(d: float) -> float:
        return float(noninferiority.score_z(CAVO_B, CAVO_C, CAVO_N, d))

    lower = _root(lambda d: z(d) - Z975, -0.5, (CAVO_B - CAVO_C) / CAVO_N)
    upper = _root(lambda d: z(d) + Z975, (CAVO_B - CAVO_C) / CAVO_N, 0.9)
    assert round(lower, 4) == 0.0054
    assert round(upper, 4) == 0.1240


@pytest.mark.stats
def test_exact_unconditional_pvalue_matches_the_published_cavo_value():
    # Published: McNemar exact unconditional test (Suissa-Shuster with McNemar's statistic,
    # two-sided) P = 0.034053, with Berger & Boos's restriction and gamma. Their computation on our
    # region probabilities lands on the printed digits.
    published, argmax = _berger_boos(CAVO_B, CAVO_C, CAVO_N)
    assert round(published, 6) == 0.034053
    # The gate's p-value is the supremum over every disagreement: it peaks at s = 0.98, outside
    # their interval (0.053 to 0.267), so it is larger than their maximum: 0.0171020 one-sided,
    # 0.0342041 two-sided; their method with gamma = 0 (a 1,000-point grid over [0, 1]) gives
    # 0.034204 too, its grid coming within 3e-7 of the peak.
    p = noninferiority.pvalue(CAVO_B, CAVO_C, CAVO_N, 0.0)
    assert round(p, 7) == 0.0171020 and round(2 * p, 6) == 0.034204
    assert 2 * p > published - BERGER_BOOS_GAMMA and 0.05 < argmax < 0.27


def test_exact_unconditional_pvalue_matches_the_published_small_table():
    # Published: the table floor(Cavo / 10) = 5 / 0 / 1 / 8 (n = 14) gives P = 0.542071.
    published, _ = _berger_boos(1, 0, 14)
    assert round(published, 6) == 0.542071
    # Here the supremum lies inside their interval; the gate's finer maximisation finds a hair more.
    p = noninferiority.pvalue(1, 0, 14, 0.0)
    assert round(2 * p + BERGER_BOOS_GAMMA, 6) == 0.542072
    assert 0 <= 2 * p + BERGER_BOOS_GAMMA - published < 2e-6


def test_exact_conditional_mcnemar_matches_the_published_cavo_value():
    # Published: McNemar exact conditional test P = 0.052479 (two-sided, twice the binomial tail).
    assert round(2 * mcnemar_exact_one_sided(CAVO_B, CAVO_C), 6) == 0.052479


# Darwin's Zea mays, as Fisher analysed them (The Design of Experiments, 1935, section 21): the
# height differences, crossed minus self-fertilised, of 15 pairs in eighths of an inch. Of the
# 2^15 = 32,768 ways to attach signs, 863 give a total at least the observed 314.
DARWIN = [49, -67, 8, 16, 6, 23, 28, 41, 14, 29, 56, 24, 75, 60, -48]


def test_cluster_signflip_reproduces_fishers_randomisation_test():
    out = cluster.signflip_pvalue(np.array(DARWIN, dtype=float), seed_key="darwin")
    assert out["cluster_test"] == cluster.TEST_EXACT and out["cluster_draws"] == 32768
    assert out["p_value"] * 32768 == 863
    assert out["p_value"] == pytest.approx(0.02634, abs=1e-5)


# Shrout & Fleiss (1979), "Intraclass correlations: uses in assessing rater reliability",
# Psychological Bulletin 86:420-428, Table 2: six targets each rated by four judges. Their
# Table 3 prints the one-way ANOVA: between-targets mean square 11.24, within 6.26, and
# ICC(1,1) = .17.
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]


def test_anova_icc_matches_shrout_and_fleiss():
    values = [v for row in SHROUT_FLEISS for v in row]
    labels = [i for i, row in enumerate(SHROUT_FLEISS) for _ in row]
    icc, p = cluster.anova(values, labels)
    assert round(icc, 2) == 0.17
    # Their mean squares give the estimate to the printed rounding.
    bms, wms = 11.24, 6.26
    assert icc == pytest.approx((bms - wms) / (bms + 3 * wms), abs=5e-4)
    # The F test's p-value against the F(5, 18) density integrated numerically (midpoint rule
    # out to 200, beyond which the tail is below 1e-12), not through our incomplete beta.
    f_stat = (4 * sum((sum(r) / 4 - sum(values) / 24) ** 2 for r in SHROUT_FLEISS) / 5) / (
        sum((x - sum(r) / 4) ** 2 for r in SHROUT_FLEISS for x in r) / 18
    )
    assert f_stat == pytest.approx(bms / wms, abs=0.01)
    d1, d2 = 5, 18
    log_k = (
        math.lgamma((d1 + d2) / 2) - math.lgamma(d1 / 2) - math.lgamma(d2 / 2) + d1 / 2 * math.log(d1 / d2)
    )
    steps, top = 100_000, 200.0
    h = (top - f_stat) / steps
    xs = f_stat + (np.arange(steps) + 0.5) * h
    tail = float(
        np.sum(np.exp(log_k + (d1 / 2 - 1) * np.log(xs) - (d1 + d2) / 2 * np.log1p(d1 * xs / d2))) * h
    )
    assert p == pytest.approx(tail, abs=1e-6)
