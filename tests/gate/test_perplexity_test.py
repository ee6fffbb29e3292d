"""The paired perplexity test (gate/perplexity_test.py): reference values, the null, pairing, gating."""

from __future__ import annotations

import json
import math
import random
from importlib import resources

import jsonschema
import pytest
from helpers.factories import make_entry, make_results, make_rules

from evalgate.gate.baseline import baseline_from_results, validate_baseline
from evalgate.gate.compare import compare, verdict
from evalgate.gate.perplexity_test import paired_nll_test, pairing_problem, sentence_record, t_isf, t_sf
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
    assert ppl["test"] == "paired-t-token-weighted" and ppl["status"] == "regressed"
    assert ppl["p_value"] < 1e-6 and ppl["ratio_low"] > 1.10 and ppl["n_sentences"] == 400
    status, reasons = verdict(cmp)
    assert status == "fail" and "paired test" in reasons[-1] and "p = " in reasons[-1]
    results["comparison"] = cmp
    report = render_report(results)
    assert "Paired test over 400 sentences" in report and "interval of the ratio" in report


def test_a_ratio_above_the_limit_within_noise_passes_the_gate():
    results, base = _pair(math.log(1.12), m=10, noise=0.5)
    cmp = compare(results, base, make_rules(), BASE)
    ppl = cmp["perplexity"]
    assert ppl["ratio"] > 1.10 and ppl["test"] == "paired-t-token-weighted"
    assert ppl["p_value"] >= 0.05 and ppl["status"] == "ok" and verdict(cmp)[0] == "pass"


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
