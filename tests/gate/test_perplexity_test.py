"""The paired perplexity test (gate/perplexity_test.py): reference values, the null, pairing, gating.

The gate's test is the betting test; the paired t-test it replaced is kept for the bench and keeps
its reference tests here (Student's sleep data)."""

from __future__ import annotations

import itertools
import json
import math
import random
from importlib import resources
from statistics import NormalDist

import jsonschema
import numpy as np
import pytest
from helpers.factories import make_entry, make_results, make_rules

from evalgate.gate.baseline import baseline_from_results, validate_baseline
from evalgate.gate.compare import compare, verdict
from evalgate.gate.perplexity_test import (
    betting_test,
    paired_nll_test,
    pairing_problem,
    sentence_record,
    t_isf,
    t_sf,
)
from evalgate.gate.stats import holm
from evalgate.report.full_report import render_report

BASE = "baselines/demo.json"

# Student (1908) / Cushny & Peebles: extra hours of sleep under two drugs, the same 10 patients.
# R's `t.test(extra ~ group, data = sleep, paired = TRUE)` prints t = -4.0621, df = 9,
# p-value = 0.002833, 95 percent confidence interval -2.4598858 -0.7001142, mean difference -1.58.
SLEEP_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]


def test_equal_weights_reproduce_the_published_paired_t_test():
    # One token per "sentence" makes the token-weighted test the plain paired t-test; ratio 1 is
    # the "no change" null, and alpha 0.025 makes the interval the two-sided 95% one.
    res = paired_nll_test(SLEEP_2, SLEEP_1, [1] * 10, max_ratio=1.0, alpha=0.025)
    assert res["nll_increase"] == pytest.approx(1.58, abs=1e-12)
    assert 2 * res["p_value"] == pytest.approx(0.002833, abs=5e-7)
    assert math.log(res["ratio_low"]) == pytest.approx(0.7001142, abs=5e-7)
    assert math.log(res["ratio_high"]) == pytest.approx(2.4598858, abs=5e-7)
    assert res["interval_level"] == pytest.approx(0.95) and res["n_sentences"] == 10


@pytest.mark.parametrize(
    ("t", "df", "upper_tail"),
    [  # textbook t-table critical values: P(T > t) for the tabulated t
        (1.812, 10, 0.05),
        (2.228, 10, 0.025),
        (2.764, 10, 0.01),
        (1.645, 10**7, 0.05),
        (12.706, 1, 0.025),
    ],
)
@pytest.mark.stats
def test_t_tail_agrees_with_the_t_table(t, df, upper_tail):
    assert t_sf(t, df) == pytest.approx(upper_tail, abs=5e-5)
    assert t_isf(upper_tail, df) == pytest.approx(t, abs=2e-3)
    assert t_sf(-t, df) == pytest.approx(1 - upper_tail, abs=5e-5)


def test_t_tail_agrees_with_the_closed_form_at_one_and_two_degrees_of_freedom():
    for t in (-3.0, -0.5, 0.0, 0.7, 4.0, 30.0):
        assert t_sf(t, 1) == pytest.approx(0.5 - math.atan(t) / math.pi, abs=1e-12)  # Cauchy
        assert t_sf(t, 2) == pytest.approx(0.5 - t / (2 * math.sqrt(2 + t * t)), abs=1e-12)


def _sentences(m, seed, shift, noise=0.3):
    """m sentences of 5-40 tokens; the new run's per-token NLL is the old one's + shift + noise."""
    rng = random.Random(seed)
    tokens = [rng.randint(5, 40) for _ in range(m)]
    old = [n * rng.uniform(2.0, 4.0) for n in tokens]
    new = [o + n * (shift + rng.gauss(0, noise)) for o, n in zip(old, tokens, strict=True)]
    return new, old, tokens


def test_the_interval_brackets_the_observed_ratio_and_the_test_matches_it():
    new, old, tok = _sentences(300, 1, math.log(1.18), noise=0.1)
    res = paired_nll_test(new, old, tok, 1.10, 0.05)
    ratio = math.exp((sum(new) - sum(old)) / sum(tok))
    assert res["ratio_low"] < ratio < res["ratio_high"]
    assert res["p_value"] < 1e-6 and res["regressed"] and res["ratio_low"] > 1.10
    # an increase inside the tolerance never fails, however many sentences
    within = paired_nll_test(*_sentences(2000, 2, math.log(1.05)), 1.10, 0.05)
    assert within["p_value"] > 0.5 and not within["regressed"] and within["ratio_low"] < 1.10


@pytest.mark.stats
def test_size_at_the_tolerance_is_about_alpha():
    # True per-token increase exactly log(1.10): the test must not fail much more than alpha.
    fails = sum(
        paired_nll_test(*_sentences(60, seed, math.log(1.10), noise=1.0), 1.10, 0.05)["regressed"]
        for seed in range(400)
    )
    assert fails / 400 < 0.08  # alpha 0.05 plus binomial noise (sd 0.011)


def _noisy(shift, m=10, n=10, spread=0.5):
    """m sentences of n tokens whose per-token increase alternates shift ± spread."""
    old = [n * 3.0] * m
    new = [o + n * (shift + (spread if i % 2 else -spread)) for i, o in enumerate(old)]
    return new, old, [n] * m


def test_an_observed_ratio_above_the_limit_but_within_noise_passes():
    # Few, noisy sentences: x1.12 observed is not evidence of a true increase above x1.10 ...
    res = paired_nll_test(*_noisy(math.log(1.12)), 1.10, 0.05)
    assert math.exp(res["nll_increase"]) == pytest.approx(1.12)
    assert not res["regressed"] and res["p_value"] > 0.3 and res["ratio_low"] < 1.10 < res["ratio_high"]
    # ... while the same x1.12 over many quiet sentences is
    quiet = paired_nll_test(*_noisy(math.log(1.12), m=2000, spread=0.05), 1.10, 0.05)
    assert quiet["regressed"] and quiet["p_value"] < 1e-9


def test_no_noise_decides_by_the_sign_alone():
    tok = [3, 4, 5]
    old = [n * 2.0 for n in tok]
    up = paired_nll_test([n * (2.0 + math.log(1.2)) for n in tok], old, tok, 1.10, 0.05)
    same = paired_nll_test(old, old, tok, 1.10, 0.05)
    assert up["p_value"] < 1e-12 and up["regressed"] and same["p_value"] == 1.0 and not same["regressed"]


def test_sentence_record_is_rounded_and_only_when_finite():
    assert sentence_record([1.234567891, 2.0], [3, 4]) == {
        "sentence_nll": [1.2346, 2.0],
        "sentence_tokens": [3, 4],
    }
    assert sentence_record([1.0, math.inf], [3, 4]) == {} and sentence_record([], []) == {}
    assert (
        json.dumps(sentence_record([-0.0, 0.0], [1, 1]))
        == '{"sentence_nll": [0.0, 0.0], "sentence_tokens": [1, 1]}'
    )


@pytest.mark.parametrize(
    ("new", "said"),
    [
        ({"value": 1.0}, "this run records no per-sentence NLLs"),
        ({"sentence_nll": [1.0, 2.0, 3.0], "sentence_tokens": [1, 2, 3]}, "different numbers of sentences"),
        ({"sentence_nll": [1.0, 2.0], "sentence_tokens": [2, 1]}, "token counts differ"),
        ({"sentence_nll": [1.0, "x"], "sentence_tokens": [1, 2]}, "not all finite numbers"),
        ({"sentence_nll": [1.0, 2.0], "sentence_tokens": [1, True]}, "not all non-negative integers"),
        # a negative NLL would let the betting test's wealth go below 0 (z < -1): refused
        ({"sentence_nll": [1.0, -2.0], "sentence_tokens": [1, 2]}, "NLLs are not all non-negative"),
    ],
)
def test_sentences_that_do_not_pair_are_named(new, said):
    old = {"sentence_nll": [1.0, 2.0], "sentence_tokens": [1, 2]}
    assert said in pairing_problem(new, old)
    assert pairing_problem(old, dict(old)) is None


def _entries():
    return [make_entry(f"p{i:03d}", correct=i % 3 != 0, language="en" if i % 2 else "es") for i in range(80)]


def _with_sentences(results, new_nll, tokens):
    results["perplexity"].update(sentence_record(new_nll, tokens))
    results["perplexity"]["value"] = math.exp(sum(new_nll) / sum(tokens))
    return results


def _pair(shift, m=400, noise=None):
    new, old, tok = _sentences(m, 5, shift, 0.1) if noise is None else _noisy(shift, m, spread=noise)
    entries = _entries()
    results = _with_sentences(make_results(entries), new, tok)
    base = baseline_from_results(
        _with_sentences(make_results(entries), old, tok), "demo", {"git_commit": "a" * 40}
    )
    return results, base


def _comparison_schema():
    schema = json.loads(resources.files("evalgate.schemas").joinpath("results.schema.json").read_text())
    return schema["properties"]["comparison"]["properties"]["perplexity"]


def test_compare_gates_perplexity_with_the_paired_test_and_says_so():
    results, base = _pair(math.log(1.18))
    validate_baseline(base, BASE)  # the baseline schema accepts the per-sentence record
    cmp = compare(results, base, make_rules(), BASE)
    ppl = cmp["perplexity"]
    jsonschema.validate(ppl, _comparison_schema())
    assert ppl["test"] == "betting-nll-ratio" and ppl["status"] == "regressed"
    assert ppl["p_value"] < 1e-3 and ppl["p_adjusted"] < 0.01 and ppl["n_sentences"] == 400
    assert ppl["ratio_low"] is None and ppl["interval_level"] is None
    status, reasons = verdict(cmp)
    assert status == "fail" and "paired test" in reasons[-1] and "Holm-adjusted" in reasons[-1]
    results["comparison"] = cmp
    report = render_report(results)
    assert "Paired test over 400 sentences" in report and "adjusted with the gated slices" in report


def _inconclusive_schema():
    schema = json.loads(resources.files("evalgate.schemas").joinpath("results.schema.json").read_text())
    return schema["properties"]["comparison"]["properties"]["inconclusive"]


def test_a_ratio_above_the_limit_the_betting_test_cannot_decide_is_inconclusive_not_ok():
    # Ten noisy sentences at x1.12 against a x1.10 limit: the test cannot tell the increase from
    # sentence noise, so the gate cannot say it is within the limit either (docs/gate.md, "Verdict").
    results, base = _pair(math.log(1.12), m=10, noise=0.5)
    cmp = compare(results, base, make_rules(), BASE)
    ppl = cmp["perplexity"]
    assert ppl["ratio"] > 1.10 and ppl["test"] == "betting-nll-ratio"
    assert ppl["p_adjusted"] >= 0.05 and ppl["status"] == "inconclusive"
    jsonschema.validate(ppl, _comparison_schema())
    jsonschema.validate(cmp["inconclusive"], _inconclusive_schema())
    (entry,) = cmp["inconclusive"]
    assert entry["why"] == "perplexity_undecided" and entry["slice"] is None and "suite" not in entry
    assert entry["n"] == 10 and entry["ratio"] == ppl["ratio"] and entry["max_ratio"] == 1.10
    assert entry["p_adjusted"] == ppl["p_adjusted"]
    status, reasons = verdict(cmp)
    assert status == "inconclusive" and len(reasons) == 1
    assert "perplexity rose" in reasons[0] and "over 10 sentences" in reasons[0]
    assert "undecided" in reasons[0] and "limit ×1.10" in reasons[0]
    results["comparison"], results["verdict"], results["reasons"] = cmp, status, reasons
    report = render_report(results)
    head = report.split("\n\n", 1)[0]
    assert "inconclusive" in head and "perplexity (×1.1" in head and "on 10 sentences" in head
    assert "⚠️ inconclusive" in report  # the perplexity table's status


def test_an_undecided_perplexity_within_its_limit_passes():
    # Noise hides nothing here: the observed ratio is inside the limit, so no increase went unjudged.
    results, base = _pair(math.log(1.08), m=10, noise=0.5)
    cmp = compare(results, base, make_rules(), BASE)
    ppl = cmp["perplexity"]
    assert ppl["ratio"] < 1.10 and ppl["p_adjusted"] >= 0.05
    assert ppl["status"] == "ok" and "inconclusive" not in cmp and verdict(cmp)[0] == "pass"


def test_a_suites_undecided_perplexity_is_inconclusive_by_name():
    results, base = _pair(math.log(1.0))
    new, old, tok = _noisy(math.log(1.15), m=8, spread=0.6)
    record = {"file": "quiz/text.jsonl", "test_sha256": "d" * 64, "n_tokens": sum(tok)}
    results["suite_perplexity"] = {
        "quiz": {**record, "value": math.exp(sum(new) / sum(tok)), **sentence_record(new, tok)}
    }
    base["suite_perplexity"] = {
        "quiz": {**record, "value": math.exp(sum(old) / sum(tok)), **sentence_record(old, tok)}
    }
    cmp = compare(results, base, make_rules(), BASE)
    quiz = cmp["suite_perplexity"]["quiz"]
    assert quiz["ratio"] > 1.10 and quiz["status"] == "inconclusive"
    assert cmp["perplexity"]["status"] == "ok"
    (entry,) = cmp["inconclusive"]
    assert entry["why"] == "perplexity_undecided" and entry["suite"] == "quiz" and entry["n"] == 8
    status, reasons = verdict(cmp)
    assert status == "inconclusive" and reasons[0].startswith("quiz: perplexity rose")


def test_an_older_baseline_without_sentence_nlls_falls_back_to_the_ratio_with_a_note():
    results, base = _pair(math.log(1.18))
    for key in ("sentence_nll", "sentence_tokens"):
        del base["perplexity"][key]
    cmp = compare(results, base, make_rules(), BASE)
    ppl = cmp["perplexity"]
    jsonschema.validate(ppl, _comparison_schema())
    assert ppl["test"] == "ratio" and ppl["status"] == "regressed" and "p_value" not in ppl
    assert ppl["note"] == "the baseline records no per-sentence NLLs: gated by the ratio alone"
    results["comparison"] = cmp
    assert "the baseline records no per-sentence NLLs" in render_report(results)


def test_a_baseline_with_malformed_sentence_nlls_is_refused_by_its_schema():
    from evalgate.errors import RefusedError

    _, base = _pair(math.log(1.18), m=20)
    base["perplexity"]["sentence_nll"][3] = -1.0
    base["perplexity"]["sentence_tokens"][4] = "seven"
    with pytest.raises(RefusedError) as err:
        validate_baseline(base, BASE)
    text = str(err.value)
    assert "perplexity.sentence_nll.3" in text and "perplexity.sentence_tokens.4" in text


# --- the betting test -------------------------------------------------------------------------


def _reference_betting_p(new, old, tokens, max_ratio):
    """The betting test written out loop by loop (gate/perplexity_test.py's docstring): aGRAPA
    bets from the earlier sentences, one pseudo-sentence at z = 0 with variance 1/4, bets in
    [0, 0.9], p = 1 / the largest wealth."""
    zs, log_wealth, best = [], 0.0, 0.0
    for a, b, n in zip(new, old, tokens, strict=True):
        t = b + n * math.log(max_ratio)
        z = a / t - 1 if t > 0 else 0.0
        k = len(zs)
        mean = sum(zs) / (k + 1)
        var = max((0.25 + sum(x * x for x in zs) - (k + 1) * mean * mean) / (k + 1), 1e-12)
        bet = min(0.9, max(0.0, mean / (var + mean * mean)))
        log_wealth += math.log1p(bet * z)
        best = max(best, log_wealth)
        zs.append(z)
    return math.exp(-best)


def test_betting_test_matches_the_procedure_written_out():
    new, old, tok = _sentences(50, 11, math.log(1.2), noise=0.5)
    res = betting_test(new, old, tok, 1.10)
    assert res["p_value"] == pytest.approx(_reference_betting_p(new, old, tok, 1.10), rel=1e-9)
    assert res["test"] == "betting-nll-ratio" and res["n_sentences"] == 50
    assert res["nll_increase"] == pytest.approx((sum(new) - sum(old)) / sum(tok), rel=1e-12)


def test_betting_test_wealth_in_closed_form():
    # Every sentence 20% above its tolerated NLL: z = 0.2 throughout. The first bet sees only the
    # pseudo-sentence: mean 0, bet 0. The second: mean 0.2 / 2 = 0.1, variance (0.25 + 0.04 -
    # 2 * 0.01) / 2 = 0.135, bet 0.1 / 0.145. From the third on mean / (var + mean^2) > 0.9, so
    # every bet is clipped at 0.9: the wealth is (1 + 0.2 * 0.1 / 0.145) * 1.18 ** 10.
    tok = [10] * 12
    old = [30.0] * 12
    new = [1.2 * (30.0 + 10 * math.log(1.1))] * 12
    res = betting_test(new, old, tok, 1.10)
    assert res["p_value"] == pytest.approx(1 / ((1 + 0.2 * 0.1 / 0.145) * 1.18**10), rel=1e-9)
    # no change at all: z < 0 everywhere, nothing is bet, p = 1
    assert betting_test(old, old, tok, 1.10)["p_value"] == 1.0


@pytest.mark.slow
@pytest.mark.stats
def test_betting_test_holds_its_size_exactly_on_the_least_favourable_two_point_null():
    # The null that a bound of -1 allows and that makes an increase look real most often: a
    # sentence's NLL drops to 0 (z = -1) with probability q and rises to z = q / (1 - q)
    # otherwise, mean exactly 0. Every one of the 2 ** 14 outcomes is enumerated: the exact
    # probability that p < alpha is at most alpha, for several q.
    m, alpha, tok = 14, 0.05, [10] * 14
    old = [30.0] * m
    tolerated = 30.0 + 10 * math.log(1.1)
    for q in (0.02, 0.05, 0.1, 0.2, 0.4):
        up = q / (1 - q)
        size = 0.0
        for drops in itertools.product((False, True), repeat=m):
            new = [0.0 if d else tolerated * (1 + up) for d in drops]
            if betting_test(new, old, tok, 1.10)["p_value"] < alpha:
                k = sum(drops)
                size += q**k * (1 - q) ** (m - k)
        assert size <= alpha, (q, size)


def _left_skewed(rng, m, shift=0.0, sigma=1.0, scale=0.05):
    """m sentences whose per-token NLL change is log(1.10) + shift minus a lognormal(sigma)
    excess: left-skewed, mean exactly log(1.10) + shift. The lognormal is truncated where the new
    NLL would go below 0 (a real NLL never does) and its mean recomputed for the truncation."""
    tok = rng.integers(5, 41, m)
    per = rng.uniform(2.0, 4.0, m)
    cap = 40.0  # the change stays above -(2 + log 1.1) / scale: the new NLL stays positive
    draws = rng.lognormal(0.0, sigma, m)
    while (draws > cap).any():
        draws[draws > cap] = rng.lognormal(0.0, sigma, int((draws > cap).sum()))
    nd = NormalDist()
    mean = math.exp(sigma**2 / 2) * nd.cdf((math.log(cap) - sigma**2) / sigma) / nd.cdf(math.log(cap) / sigma)
    change = math.log(1.10) + shift - scale * (draws - mean)
    return list(tok * (per + change)), list(tok * per), [int(n) for n in tok]


def _gate_fails_perplexity(new, old, tok):
    entries = _entries()
    results = _with_sentences(make_results(entries), new, tok)
    base = baseline_from_results(
        _with_sentences(make_results(entries), old, tok), "demo", {"git_commit": "a" * 40}
    )
    return compare(results, base, make_rules(), BASE)["perplexity"]["status"] == "regressed"


@pytest.mark.slow
@pytest.mark.stats
def test_the_gate_holds_its_perplexity_size_under_left_skewed_differences():
    # The audit's case (issue 25): 30 sentences whose per-sentence change is left-skewed
    # (lognormal sigma 1), true ratio exactly the limit. The paired t-test failed such runs
    # about 16% of the time; the gate must stay at or below alpha (0.05, plus noise: sd 0.011).
    rng = np.random.default_rng(25)
    fails = sum(_gate_fails_perplexity(*_left_skewed(rng, 30)) for _ in range(400))
    assert fails / 400 <= 0.07


def test_the_betting_test_sees_a_large_increase_and_more_with_more_sentences():
    rng = np.random.default_rng(7)
    assert betting_test(*_left_skewed(rng, 400, shift=math.log(1.3 / 1.1)), 1.10)["p_value"] < 1e-6
    assert betting_test(*_left_skewed(rng, 2000, shift=math.log(1.15 / 1.1)), 1.10)["p_value"] < 1e-6
    assert betting_test(*_left_skewed(rng, 2000), 1.10)["p_value"] > 0.05


def test_perplexity_is_adjusted_in_one_holm_family_with_the_gated_slices():
    # A perplexity p-value below alpha but above alpha / (family size) does not fail: the
    # perplexity is one more member of the slices' Holm family, and the slices pay for it too.
    results, base = _pair(math.log(1.18), m=400)
    cmp = compare(results, base, make_rules(), BASE)
    gated = [k for k, r in cmp["slices"].items() if r["gated"]]
    family = len(gated) + 1
    assert cmp["mde_level"] == pytest.approx(0.05 / family)
    raw = {k: cmp["slices"][k]["p_value"] for k in gated} | {"ppl": cmp["perplexity"]["p_value"]}
    want = holm(raw)
    assert cmp["perplexity"]["p_adjusted"] == pytest.approx(want["ppl"], rel=1e-12)
    for k in gated:
        assert cmp["slices"][k]["p_adjusted"] == pytest.approx(want[k], rel=1e-12)


def test_a_perplexity_significant_alone_but_not_in_the_family_does_not_fail(monkeypatch):
    from evalgate.gate import perplexity_test

    results, base = _pair(math.log(1.18), m=400)
    real = perplexity_test.betting_test
    monkeypatch.setattr(perplexity_test, "betting_test", lambda *a: {**real(*a), "p_value": 0.03})
    cmp = compare(results, base, make_rules(), BASE)
    ppl = cmp["perplexity"]
    # not a regression in the family; but x1.18 observed against x1.10 is then undecided, not ok
    assert ppl["p_value"] == 0.03 and ppl["p_adjusted"] > 0.05 and ppl["status"] == "inconclusive"
    assert verdict(cmp)[0] == "inconclusive"


def test_westfall_young_joins_the_perplexity_by_bonferroni_between_blocks():
    results, base = _pair(math.log(1.18), m=400)
    cmp = compare(results, base, make_rules(multiplicity="westfall-young"), BASE)
    wy_alone = compare(results | {"perplexity": None}, base, make_rules(multiplicity="westfall-young"), BASE)
    gated = [k for k, r in cmp["slices"].items() if r["gated"]]
    m = len(gated)
    for k in gated:
        alone = wy_alone["slices"][k]["p_adjusted"]
        assert cmp["slices"][k]["p_adjusted"] == pytest.approx(min(1.0, alone * (m + 1) / m), rel=1e-12)
    assert cmp["perplexity"]["p_adjusted"] == pytest.approx(min(1.0, cmp["perplexity"]["p_value"] * (m + 1)))
