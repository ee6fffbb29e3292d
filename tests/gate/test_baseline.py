"""Baseline documents: schema round-trip, byte-identical rewrites, every problem listed."""

from __future__ import annotations

import copy
import json
import random

import pytest
from helpers.factories import make_entry, make_results

from evalgate.errors import RefusedError
from evalgate.gate.baseline import baseline_from_results, dump_baseline, validate_baseline

PROV = {"git_commit": "0123456789abcdef0123456789abcdef01234567", "pr_number": 42}


def _results():
    return make_results(
        [
            make_entry("p-1", True),
            make_entry("p-2", False, language="es"),
            make_entry("p-3", True, label="ambiguous", status="ambiguous"),
            make_entry("p-4", None, status="deprecated"),
            make_entry("p-5", None, status="model_oov"),
        ]
    )


def test_baseline_round_trips_through_its_schema(tmp_path):
    doc = baseline_from_results(_results(), "demo", PROV)
    path = tmp_path / "demo.json"
    path.write_text(dump_baseline(doc), encoding="utf-8")
    back = json.loads(path.read_text(encoding="utf-8"))
    validate_baseline(back, str(path))
    assert back == doc


def test_baseline_holds_outcomes_lock_and_pins():
    results = _results()
    doc = baseline_from_results(results, "demo", PROV)
    assert list(doc["outcomes"]) == ["p-1", "p-2", "p-3", "p-4", "p-5"]
    assert doc["outcomes"]["p-1"] == {
        "status": "scored",
        "correct": True,
        "pred": "works",
        "content_hash": results["probes"][0]["content_hash"],
    }
    assert doc["outcomes"]["p-4"]["status"] == "deprecated"  # retired ids stay locked
    assert doc["outcomes"]["p-4"]["content_hash"] == results["probes"][3]["content_hash"]
    assert doc["probe_set"]["files"] == {
        "data/eval/adversarial.jsonl": "2" * 64,
        "data/eval/probes.jsonl": "1" * 64,
    }
    assert doc["probe_set"]["digest"] == results["manifest"]["probe_set_digest"]
    assert doc["checkpoint"] == {
        "sha256": "c" * 64,
        "path": "data/checkpoints/demo",
        "format": "native",
        "files": {"data/checkpoints/demo/model.safetensors": "3" * 64},
    }
    assert doc["config"] == results["config"] and doc["manifest"] == results["manifest"]
    assert doc["slices"] == results["slices"] and doc["perplexity"] == {"value": 12.5, "n_tokens": 4567}
    assert doc["provenance"] == PROV


def test_same_input_gives_byte_identical_baseline():
    results = _results()
    first = dump_baseline(baseline_from_results(results, "demo", PROV))
    shuffled = copy.deepcopy(results)
    random.Random(1).shuffle(shuffled["probes"])
    shuffled = dict(reversed(list(shuffled.items())))
    second = dump_baseline(baseline_from_results(shuffled, "demo", dict(reversed(list(PROV.items())))))
    assert first.encode("utf-8") == second.encode("utf-8")
    assert first.endswith("}\n") and "time" not in json.loads(first)["provenance"]


def test_building_a_baseline_does_not_modify_the_results():
    results = _results()
    before = json.dumps(results, sort_keys=True)
    doc = baseline_from_results(results, "demo", PROV)
    doc["slices"]["overall"]["n"] = 999
    doc["manifest"]["dtype"] = "x"
    assert json.dumps(results, sort_keys=True) == before


def test_invalid_baseline_lists_every_problem():
    doc = baseline_from_results(_results(), "demo", PROV)
    doc["outcomes"]["p-1"]["status"] = "skipped"
    doc["outcomes"]["p-2"]["content_hash"] = "not-a-hash"
    doc["provenance"]["pr_number"] = 0
    doc["extra"] = True
    del doc["perplexity"]
    with pytest.raises(RefusedError) as exc:
        validate_baseline(doc, "baselines/demo.json")
    msg = exc.value.message
    assert msg.startswith("baselines/demo.json is not a valid evalgate baseline (5 problem(s))")
    for needle in (
        "outcomes.p-1.status",
        "outcomes.p-2.content_hash",
        "provenance.pr_number",
        "extra",
        "perplexity",
    ):
        assert needle in msg
    assert "evalgate baseline update" in exc.value.hint


def test_a_results_file_is_not_a_baseline_document():
    with pytest.raises(RefusedError, match="kind"):
        validate_baseline(_results(), "evalgate-out/results.json")
