"""`evalgate power`, `validate` and `init` take a slice's level in the family the gate adjusts in:
the gated slices and the perplexity checks (docs/gate.md, "What your suite can see", "Perplexity").

Before, they took alpha / (gated slices) while the gate tests at alpha / (gated slices + tested
perplexities): every MDE and items-needed figure was optimistic.
"""

from __future__ import annotations

import math

import pytest
from helpers.factories import make_entry, make_results, make_rules

from evalgate.gate import power
from evalgate.gate.baseline import baseline_from_results
from evalgate.gate.compare import compare
from evalgate.gate.perplexity_test import sentence_record


def _entries() -> list[dict]:
    return [make_entry(f"p-{i:03d}", i % 5 != 0, language=("en", "es")[i % 2]) for i in range(300)]


def _with_sentences(doc: dict) -> dict:
    tok = [10] * 40
    nll = [30.0 + (i % 3) for i in range(40)]
    doc["perplexity"].update(sentence_record(nll, tok))
    doc["perplexity"]["value"] = math.exp(sum(nll) / sum(tok))
    return doc


@pytest.mark.stats
def test_the_power_level_and_mde_are_those_the_gate_tests_a_slice_at():
    rules = make_rules()
    entries = _entries()
    base = baseline_from_results(_with_sentences(make_results(entries)), "demo", {"git_commit": None})
    comparison = compare(_with_sentences(make_results(entries)), base, rules, "baselines/demo.json")
    assert comparison["perplexity"]["test"] == "betting-nll-ratio"  # in the family
    gated = [k for k, r in comparison["slices"].items() if r["gated"]]
    assert comparison["mde_level"] == pytest.approx(rules.alpha / (len(gated) + 1))

    counts = power.slice_counts(entries, rules)
    doc = power.power_table(counts, rules, needed=False, perplexities=1)
    assert doc["gated"] == len(gated) and doc["perplexities"] == 1
    assert doc["level"] == comparison["mde_level"]
    # a rerun disagrees on nothing, so the gate's MDE is at gate.assumed_disagreement (5%): the
    # power table's no-baseline figure at 5% is the gate's own, slice by slice
    assert comparison["mde_disagreement"] == 0.05
    table = {r["slice"]: r for r in doc["slices"]}
    for key in gated:
        at5 = next(a for a in table[key]["at"] if a["disagreement"] == 0.05)
        assert at5["mde"] == comparison["slices"][key]["mde"], key
    assert any("perplexity check" in a for a in doc["assumptions"])
