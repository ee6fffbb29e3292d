"""A p-value that underflows to 0 is printed as a bound, "p < 1e-300", never "p = 0" (issue 25 §4):
0 is not a probability anyone measured. results.json keeps the number."""

from __future__ import annotations

import json

import pytest
from helpers.factories import make_results
from helpers.gate_inputs import baseline_of, entries_of, write_json


def _with_sentences(doc: dict, nll: list[float]) -> dict:
    tokens = [5] * len(nll)
    total = sum(nll)
    doc["perplexity"] = {
        "value": 2.718281828 ** (total / sum(tokens)),
        "n_tokens": sum(tokens),
        "sentence_nll": nll,
        "sentence_tokens": tokens,
    }
    return doc


@pytest.mark.integration
def test_a_perplexity_regression_whose_p_underflows_says_p_below_a_bound(tmp_path, cli):
    entries = entries_of()
    # 1,200 sentences tripling their NLL: the betting test's wealth passes e^745, p underflows
    old = [10.0 + 0.01 * (i % 7) for i in range(1200)]
    new = [30.0 + 0.01 * (i % 5) for i in range(1200)]
    results = write_json(tmp_path / "results.json", _with_sentences(make_results(entries), new))
    base_doc = baseline_of(entries)
    base_doc["perplexity"] = _with_sentences({}, old)["perplexity"]
    base = write_json(tmp_path / "base.json", base_doc)
    got = cli("compare", results, base, "--out", tmp_path / "out")
    assert got.code == 1, got.err
    doc = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert doc["comparison"]["perplexity"]["p_value"] == 0.0  # the number, as computed
    (reason,) = [r for r in doc["reasons"] if "perplexity" in r]
    assert "p < 1e-300, Holm-adjusted < 1e-300, below alpha" in reason and "p = 0," not in reason
    report = (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8")
    assert "p = 0;" not in report and "p = 0," not in report and "p < 1e-300" in report


def test_p_is_a_bound_below_1e300_and_the_number_above():
    from evalgate.gate.stats import p_is

    assert p_is(0.0) == p_is(1e-310) == "< 1e-300"
    assert p_is(0.00316) == "= 0.00316" and p_is(2.4e-9, 2) == "= 2.4e-09" and p_is(1.0) == "= 1"
