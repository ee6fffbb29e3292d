"""The gate's statistics against published and independently computed values."""

from __future__ import annotations

import random

import pytest

from evalgate.gate.stats import (
    binom_sf_half,
    entropy_summary,
    exceeds,
    expected_calibration_error,
    holm,
    mcnemar_exact_one_sided,
    mcnemar_rule_mde,
    mde_wilson,
    wilson_interval,
)

Z975 = 1.959963984540054  # scipy.stats.norm.ppf(0.975), what statsmodels uses


def test_wilson_at_boundary():
    # docs/gate.md: (0.0, something small) at 0/n and (something near 1, 1.0) at n/n, where the
    # normal approximation would collapse to a point.
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and 0.0 < hi < 0.3
    lo, hi = wilson_interval(10, 10)
    assert 0.7 < lo < 1.0 and hi == 1.0
    assert wilson_interval(0, 10)[1] == pytest.approx(1 - wilson_interval(10, 10)[0], abs=1e-15)


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [
        # Newcombe (1998), Statistics in Medicine 17:857-872, Table II, method 3 (score, no CC)
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_matches_newcombe_table(k, n, lo, hi):
    got = wilson_interval(k, n, 1.96)
    assert got == (pytest.approx(lo, abs=5e-5), pytest.approx(hi, abs=5e-5))


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [  # statsmodels.stats.proportion.proportion_confint(k, n, method="wilson"), computed once
        (81, 263, 0.2552885198782742, 0.36620957698280004),
        (7, 60, 0.0576772064005603, 0.22178788024170865),
        (1, 29, 0.006113214292762667, 0.17175521879320294),
    ],
)
def test_wilson_matches_statsmodels(k, n, lo, hi):
    got = wilson_interval(k, n, Z975)
    assert got == (pytest.approx(lo, rel=1e-12), pytest.approx(hi, rel=1e-12))


def test_wilson_empty_and_invalid():
    assert wilson_interval(0, 0) == (0.0, 1.0)  # no data: nothing is excluded
    with pytest.raises(ValueError):
        wilson_interval(5, 4)
    with pytest.raises(ValueError):
        wilson_interval(-1, 4)


def test_wilson_is_symmetric_and_contains_the_estimate():
    for n in (1, 7, 30, 61):
        for k in range(n + 1):
            lo, hi = wilson_interval(k, n)
            assert 0.0 <= lo <= k / n <= hi <= 1.0
            lo2, hi2 = wilson_interval(n - k, n)
            assert lo == pytest.approx(1 - hi2, abs=1e-12) and hi == pytest.approx(1 - lo2, abs=1e-12)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [  # scipy.stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue, computed once
        (5, 0, 0.03125),
        (9, 3, 0.072998046875),
        (10, 2, 0.019287109375),
        (3, 3, 0.65625),
        (60, 40, 0.028443966820490392),
        (130, 95, 0.011598753419842657),
        (1, 0, 0.5),
        (0, 4, 1.0),
    ],
)
def test_mcnemar_matches_scipy(b, c, p):
    assert mcnemar_exact_one_sided(b, c) == pytest.approx(p, rel=1e-12)


def test_mcnemar_without_discordant_pairs_is_one():
    assert mcnemar_exact_one_sided(0, 0) == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact_one_sided(-1, 2)


def test_binomial_tail_for_large_n():
    assert binom_sf_half(1000, 1000) == pytest.approx(2.0**-1000, rel=1e-12)
    assert binom_sf_half(0, 3000) == 1.0 and binom_sf_half(3001, 3000) == 0.0
    # P(X >= k) + P(X >= n - k + 1) = 1 by the symmetry of Bin(n, 1/2)
    for k in (1, 700, 1400, 1501, 2999):
        assert binom_sf_half(k, 3000) + binom_sf_half(3001 - k, 3000) == pytest.approx(1.0, abs=1e-13)
    assert binom_sf_half(1501, 3000) < 0.5 < binom_sf_half(1500, 3000)


@pytest.mark.parametrize(
    ("raw", "adjusted"),
    [  # statsmodels.stats.multitest.multipletests(raw, method="holm")[1], computed once
        ([0.01, 0.04, 0.03, 0.005], [0.03, 0.06, 0.06, 0.02]),
        ([0.2, 0.001, 0.04, 0.03, 0.5, 0.012], [0.4, 0.006, 0.12, 0.12, 0.5, 0.06]),
        ([0.6, 0.7], [1.0, 1.0]),
    ],
)
def test_holm_matches_statsmodels(raw, adjusted):
    keys = [f"slice{i}" for i in range(len(raw))]
    got = holm(dict(zip(keys, raw, strict=True)))
    assert list(got) == keys  # input order kept
    assert [got[k] for k in keys] == pytest.approx(adjusted, rel=1e-12)


def test_holm_is_monotone_capped_and_deterministic_on_ties():
    rng = random.Random(4)
    raw = {f"s{i}": rng.choice([0.001, 0.01, 0.02, 0.02, 0.3, 0.9]) for i in range(15)}
    adj = holm(raw)
    ordered = sorted(raw, key=lambda k: (raw[k], k))
    values = [adj[k] for k in ordered]
    assert values == sorted(values) and all(raw[k] <= adj[k] <= 1.0 for k in raw)
    assert holm({}) == {} and holm({"only": 0.03}) == {"only": 0.03}


def test_exceeds_treats_a_drop_equal_to_the_tolerance_as_tolerated():
    assert not exceeds(0.1 - 0.08, 0.02)  # 0.020000000000000004 in floats
    assert exceeds(0.03, 0.02) and not exceeds(0.0, 0.0)


def _simulated_power_mcnemar_rule(n, drop, alpha, tol, background, reps, seed):
    rng = random.Random(seed)
    h = background / 2
    hits = 0
    for _ in range(reps):
        b = c = 0
        for _ in range(n):
            u = rng.random()
            if u < h:
                c += 1
            elif u < 2 * h + drop:
                b += 1
        if mcnemar_exact_one_sided(b, c) < alpha and exceeds((b - c) / n, tol):
            hits += 1
    return hits / reps


@pytest.mark.stats
def test_old_mcnemar_rule_mde_has_the_stated_power_in_simulation():
    n, alpha, tol, bg = 80, 0.05, 0.02, 0.10
    mde = mcnemar_rule_mde(n, alpha, tol, 1.0, bg)
    assert 0.10 < mde < 0.25
    at_mde = _simulated_power_mcnemar_rule(n, mde, alpha, tol, bg, 3000, seed=1)
    below = _simulated_power_mcnemar_rule(n, mde - 0.05, alpha, tol, bg, 3000, seed=2)
    assert at_mde == pytest.approx(0.8, abs=0.03)
    assert below < 0.7


def test_wilson_mde_has_the_stated_power_in_simulation():
    n, base, z, tol = 100, 0.8, 1.96, 0.02
    mde = mde_wilson(n, base, z, tol)
    rng = random.Random(3)
    hits = 0
    for _ in range(3000):
        k = sum(rng.random() < base - mde for _ in range(n))
        hits += base > wilson_interval(k, n, z)[1] + tol
    assert hits / 3000 == pytest.approx(0.8, abs=0.03)


@pytest.mark.stats
def test_mde_shrinks_with_n_and_is_none_when_undetectable():
    paired = [mcnemar_rule_mde(n, 0.05, 0.02) for n in (30, 60, 120, 500)]
    wilson = [mde_wilson(n, 0.8, 1.96, 0.02) for n in (30, 60, 120, 500)]
    assert paired == sorted(paired, reverse=True) and wilson == sorted(wilson, reverse=True)
    assert mcnemar_rule_mde(3, 0.05, 0.02) is None  # 3 probes can never give p < 0.05
    assert mcnemar_rule_mde(0, 0.05, 0.02) is None and mde_wilson(0, 0.8, 1.96, 0.02) is None
    assert mde_wilson(20, 0.05, 1.96, 0.02) is None  # nothing to lose below 5% accuracy


def test_ece_and_reliability_table():
    ece, bins = expected_calibration_error([0.95, 0.95, 0.55, 0.55, 1.0], [True, False, True, True, True])
    assert len(bins) == 10 and [b["n"] for b in bins] == [0, 0, 0, 0, 0, 2, 0, 0, 0, 3]
    assert bins[5]["accuracy"] == 1.0 and bins[5]["mean_confidence"] == pytest.approx(0.55)
    assert bins[9]["accuracy"] == pytest.approx(2 / 3) and bins[9]["mean_confidence"] == pytest.approx(
        2.9 / 3
    )
    assert bins[0] == {"lo": 0.0, "hi": 0.1, "n": 0, "mean_confidence": None, "accuracy": None, "gap": None}
    # (2/5)|1 - 0.55| + (3/5)|2/3 - 2.9/3|
    assert ece == pytest.approx(0.4 * 0.45 + 0.6 * (2.9 / 3 - 2 / 3))
    ece_empty, bins_empty = expected_calibration_error([], [])
    assert ece_empty is None and all(b["n"] == 0 for b in bins_empty)


def test_perfectly_calibrated_bins_give_zero_ece():
    conf = [0.75] * 4 + [0.25] * 4
    correct = [True, True, True, False, True, False, False, False]
    assert expected_calibration_error(conf, correct)[0] == pytest.approx(0.0)


def test_entropy_summary():
    assert entropy_summary([]) == {"n": 0, "mean": None, "median": None, "min": None, "max": None}
    s = entropy_summary([0.9, 0.1, 0.5, 0.3])
    assert s == {"n": 4, "mean": pytest.approx(0.45), "median": pytest.approx(0.4), "min": 0.1, "max": 0.9}
