"""Per-slice aggregation on known predictions (docs/gate.md, "Slices of one run")."""

from __future__ import annotations

import json
import math
import random
from importlib import resources

import jsonschema
import pytest
from helpers.factories import make_entry, make_results

from evalgate.gate.slices import aggregate, slice_keys
from evalgate.gate.stats import wilson_interval
from evalgate.types import Probe


def _entries():
    irregular = {"regularity": "irregular", "tense": "past_simple"}
    return [
        make_entry("p-en-1", True),
        make_entry("p-en-2", False),
        make_entry("p-en-3", True, margin=0.1),  # barely decided: high entropy
        make_entry("p-es-4", True, language="es", verb="ir", person="1sg", **irregular),
        make_entry("p-es-5", False, language="es", verb="ir", person="1sg", label="incorrect", **irregular),
        make_entry(
            "a-6", False, verb="go", category="adversarial", reason_code="PAST-IRREG", margin=5.0, **irregular
        ),
        make_entry("a-7", True, verb="go", category="adversarial", reason_code="PAST-IRREG", **irregular),
        make_entry("amb-8", True, label="ambiguous", status="ambiguous", margin=0.0),
        make_entry("oov-9", None, language="es", status="model_oov"),
        make_entry("dep-10", None, verb="walk", tense="future", status="deprecated"),
        make_entry("exc-11", None, status="excluded"),
    ]


def test_slice_aggregation():
    agg = aggregate(_entries(), 1.96)
    s = agg["slices"]
    assert list(s) == [
        "overall",
        "language:en",
        "language:es",
        "regularity:regular",
        "regularity:irregular",
        "tense:present_simple",
        "tense:past_simple",
        "person:1sg",
        "person:3sg",
        "category:core",
        "category:adversarial",
        "reason_code:PAST-IRREG",
        "label:correct",
        "label:incorrect",
        "label:ambiguous",
    ]  # no tense:future: its only probe is deprecated
    lo, hi = wilson_interval(4, 7, 1.96)
    assert s["overall"] == {
        "n": 7,
        "correct": 4,
        "accuracy": 4 / 7,
        "wilson_low": lo,
        "wilson_high": hi,
        "n_ambiguous": 1,
        "n_model_oov": 1,
        "n_excluded": 1,
    }
    counts = {k: (v["n"], v["correct"]) for k, v in s.items()}
    assert counts == {
        "overall": (7, 4),
        "language:en": (5, 3),
        "language:es": (2, 1),
        "regularity:regular": (3, 2),
        "regularity:irregular": (4, 2),
        "tense:present_simple": (3, 2),
        "tense:past_simple": (4, 2),
        "person:1sg": (2, 1),
        "person:3sg": (5, 3),
        "category:core": (5, 3),
        "category:adversarial": (2, 1),
        "reason_code:PAST-IRREG": (2, 1),
        "label:correct": (6, 4),
        "label:incorrect": (1, 0),
        "label:ambiguous": (0, 0),
    }
    assert s["language:en"]["accuracy"] == pytest.approx(0.6)
    assert (s["language:en"]["n_ambiguous"], s["language:en"]["n_excluded"]) == (1, 1)
    assert (s["language:es"]["n_model_oov"], s["language:es"]["n_ambiguous"]) == (1, 0)


def test_ambiguous_probes_are_reported_apart_with_their_entropy():
    agg = aggregate(_entries(), 1.96)
    amb = agg["slices"]["label:ambiguous"]
    assert (
        amb["n"] == 0 and amb["accuracy"] is None and amb["wilson_low"] is None and amb["wilson_high"] is None
    )
    assert amb["n_ambiguous"] == 1
    assert amb["mean_entropy"] == pytest.approx(math.log(2)) and amb["mean_entropy_norm"] == pytest.approx(
        1.0
    )
    assert agg["ambiguous"] == [{"id": "amb-8", "entropy": pytest.approx(math.log(2)), "entropy_norm": 1.0}]
    assert agg["counts"] == {
        "scored": 7,
        "ambiguous": 1,
        "model_oov": 1,
        "deprecated": 1,
        "excluded": 1,
        "total": 11,
    }


def test_per_verb_counts_are_raw_and_skip_deprecated():
    per_verb = aggregate(_entries(), 1.96)["per_verb"]
    assert per_verb == {
        "en:go": {"n": 2, "correct": 1},
        "en:work": {"n": 3, "correct": 2},
        "es:ir": {"n": 2, "correct": 1},
        "es:trabajar": {"n": 0, "correct": 0},  # its only probe is model_oov
    }


def test_calibration_separates_confident_errors_from_high_entropy():
    cal = aggregate(_entries(), 1.96)["calibration"]
    assert cal["confident_errors"] == ["a-6"]  # wrong with a 5-nat margin; p-en-2 is wrong but unsure
    assert cal["high_entropy"] == ["p-en-3"]
    assert cal["n"] == 7 and sum(b["n"] for b in cal["bins"]) == 7
    assert cal["entropy"]["wrong"]["n"] == 3 and cal["entropy"]["correct"]["n"] == 4
    assert cal["entropy"]["ambiguous"]["mean"] == pytest.approx(1.0)
    assert cal["entropy"]["wrong"]["min"] < 0.1 < cal["entropy"]["correct"]["max"]
    assert 0.0 <= cal["ece"] <= 1.0


def test_empty_slice_has_null_accuracy():
    agg = aggregate([make_entry("oov-1", None, status="model_oov")], 1.96)
    assert agg["slices"]["overall"] == {
        "n": 0,
        "correct": 0,
        "accuracy": None,
        "wilson_low": None,
        "wilson_high": None,
        "n_ambiguous": 0,
        "n_model_oov": 1,
        "n_excluded": 0,
    }
    assert agg["calibration"]["ece"] is None and agg["calibration"]["confident_errors"] == []


def test_order_of_entries_does_not_change_slices():
    entries = _entries()
    shuffled = entries[:]
    random.Random(7).shuffle(shuffled)
    a, b = aggregate(entries, 1.96), aggregate(shuffled, 1.96)
    assert json.dumps(a["slices"]) == json.dumps(b["slices"])
    assert json.dumps(a["per_verb"]) == json.dumps(b["per_verb"])


def test_slice_keys_agree_with_probe_slices():
    e = make_entry("a-6", False, category="adversarial", reason_code="PAST-IRREG")
    probe = Probe.from_record(
        {k: e[k] for k in e if k in Probe.__dataclass_fields__ and k != "id"} | {"id": "a-6"}
    )
    assert set(slice_keys(e)) == set(probe.slices()) and slice_keys(e)[0] == "overall"


def test_invalid_entries_are_programming_errors():
    with pytest.raises(ValueError, match="p-1"):
        aggregate([{**make_entry("p-1", True), "correct": None}], 1.96)
    with pytest.raises(ValueError, match="unknown status"):
        aggregate([{**make_entry("p-2", True), "status": "skipped"}], 1.96)


def test_factory_results_validate_against_the_results_schema():
    schema = json.loads(resources.files("evalgate").joinpath("schemas", "results.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(make_results(_entries()))
