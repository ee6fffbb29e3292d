"""Two ways out of the gate that are closed (issue 10 §3, docs/approval.md), through `evalgate compare`
on real results files:

- probes the baseline scored that this run cannot score (model_oov, ambiguous) count as wrong and
  are listed, so a language slice cannot leave the gate by becoming unscorable;
- a perplexity that is not finite, or missing where the baseline has one, fails the gate.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from helpers.paths import GOLDEN

from evalgate.cli import main
from evalgate.gate.results import validate_results

GOLDEN = GOLDEN / "REPORT-fail.results.json"


@pytest.fixture
def pair(tmp_path, monkeypatch):
    """(baseline results, new results): the same run, every Spanish probe right in the baseline."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    base = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for e in base["probes"]:
        if e["language"] == "es" and e["status"] == "scored":
            e["correct"] = True
    return base, copy.deepcopy(base)


def _compare(tmp_path: Path, base: dict, new: dict) -> tuple[int, dict, str]:
    (tmp_path / "base.json").write_text(json.dumps(base), encoding="utf-8")
    (tmp_path / "new.json").write_text(json.dumps(new), encoding="utf-8")
    out = tmp_path / "out"
    code = main(["compare", str(tmp_path / "new.json"), str(tmp_path / "base.json"), "--out", str(out)])
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    validate_results(doc, "results.json")
    return code, doc, (out / "REPORT.md").read_text(encoding="utf-8")


@pytest.mark.integration
def test_the_same_run_passes(tmp_path, pair):
    code, doc, _ = _compare(tmp_path, *pair)
    assert code == 0 and doc["gate_changes_vs_baseline"] == []
    assert "counted_wrong" not in doc["comparison"]


@pytest.mark.integration
@pytest.mark.parametrize("status", ["model_oov", "ambiguous"])
def test_a_language_that_became_unscorable_counts_wrong_and_fails(tmp_path, pair, status):
    base, new = pair
    lost = []
    for e in new["probes"]:
        if e["language"] == "es" and e["status"] == "scored":
            e.update(status=status, correct=None, pred=None)
            lost.append(e["id"])
    assert len(lost) > 20  # more than gate.min_n: ungated, the slice would have left the gate
    code, doc, report = _compare(tmp_path, base, new)
    assert code == 1 and doc["verdict"] == "fail"
    row = doc["comparison"]["slices"]["language:es"]
    assert (row["status"], row["n_shared"], row["accuracy"]) == ("regressed", len(lost), 0.0)
    assert [i["id"] for i in doc["comparison"]["counted_wrong"]] == lost
    assert {i["status"] for i in doc["comparison"]["counted_wrong"]} == {status}
    assert any(r.startswith("language:es") for r in doc["reasons"])
    assert "### Probes this run could not score (counted wrong)" in report
    assert lost[0].replace("_", "\\_") in report or lost[0] in report


@pytest.mark.integration
@pytest.mark.parametrize(
    ("perplexity", "said"),
    [
        ({"value": None, "n_tokens": 4567, "file": "data/corpus/test.jsonl", "not_finite": "nan"}, "(nan)"),
        ({"value": None, "n_tokens": 4567, "file": "data/corpus/test.jsonl", "not_finite": "inf"}, "(inf)"),
        (None, "perplexity missing from this run"),
    ],
)
def test_a_perplexity_not_finite_or_missing_fails(tmp_path, pair, perplexity, said):
    base, new = pair
    new["perplexity"] = perplexity
    code, doc, report = _compare(tmp_path, base, new)
    assert code == 1 and doc["verdict"] == "fail"
    assert doc["comparison"]["perplexity"]["status"] == "failed"
    assert [r for r in doc["reasons"] if said in r and "baseline has 14.200" in r]
    assert "❌ failed" in report


@pytest.mark.integration
def test_without_a_baseline_perplexity_there_is_nothing_to_fail(tmp_path, pair):
    base, new = pair
    base["perplexity"] = None
    new["perplexity"] = None
    code, doc, _ = _compare(tmp_path, base, new)
    assert code == 0 and doc["comparison"]["perplexity"]["status"] == "missing"
