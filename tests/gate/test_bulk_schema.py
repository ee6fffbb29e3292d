"""Schema validation of many records (gate/bulk_schema.py): the same verdict and the same errors as
jsonschema on the whole document, the per-probe records checked by a compiled predicate (issue 25
§4: schema validation took 155 s of a 100,000-probe compare)."""

from __future__ import annotations

import copy
import json
import random

import jsonschema
import pytest
from helpers.factories import make_entry, make_results
from helpers.gate_inputs import baseline_of, entries_of, write_json

from evalgate.gate.baseline import _baseline_validator
from evalgate.gate.bulk_schema import BulkValidator
from evalgate.gate.results import _results_validator
from evalgate.schemas import schema

VALUES = [None, True, False, 0, 1, 1.0, 1.5, -3, "", "x", "scored", [], [1], {}, {"text": "a"}]


def _errors(validator, doc) -> list[tuple[list[str], str, str]]:
    return sorted(
        (list(map(str, e.absolute_path)), e.message, str(e.validator)) for e in validator.iter_errors(doc)
    )


def _results_doc(n: int = 40) -> dict:
    return make_results([make_entry(f"p{i:03d}", i % 3 != 0, language=("en", "es")[i % 2]) for i in range(n)])


def test_the_compiled_check_is_used_for_both_shipped_schemas():
    assert _results_validator().check is not None and _baseline_validator().check is not None


def test_a_valid_results_file_has_no_errors_either_way():
    doc = _results_doc()
    full = jsonschema.Draft202012Validator(schema("results"))
    assert _errors(full, doc) == _errors(_results_validator(), doc) == []


@pytest.mark.parametrize("seed", range(6))
def test_random_corruptions_give_jsonschemas_own_errors(seed):
    rng = random.Random(seed)
    doc = _results_doc()
    full = jsonschema.Draft202012Validator(schema("results"))
    for _ in range(12):  # fields of probes and of their candidates set to any JSON value, or dropped
        probe = rng.choice(doc["probes"])
        target = rng.choice([probe, rng.choice(probe["candidates"])]) if probe.get("candidates") else probe
        key = rng.choice([*target, "tie", "extra"])
        if rng.random() < 0.2:
            target.pop(key, None)
        else:
            target[key] = copy.deepcopy(rng.choice(VALUES))
    if seed % 2:
        doc["verdict"] = "maybe"  # and one error outside the probes
    want = _errors(full, doc)
    assert want and _errors(_results_validator(), doc) == want


def test_the_predicate_agrees_with_jsonschema_on_single_records():
    record_schema = schema("results")["properties"]["probes"]["items"]
    reference = jsonschema.Draft202012Validator(record_schema)
    check = _results_validator().check
    rng = random.Random(25)
    base = _results_doc(4)["probes"][1]
    for _ in range(400):
        record = copy.deepcopy(base)
        for _ in range(rng.randint(1, 3)):
            key = rng.choice([*record, "tie", "other"])
            record[key] = copy.deepcopy(rng.choice(VALUES))
        assert check(record) == reference.is_valid(record), record


def test_a_corrupted_baseline_outcome_gives_the_same_problems():
    doc = baseline_of(entries_of())
    some = sorted(doc["outcomes"])
    doc["outcomes"][some[3]]["content_hash"] = "abc"
    doc["outcomes"][some[5]]["status"] = "maybe"
    doc["outcomes"][some[7]]["extra"] = 1
    doc["outcomes"]["bad id\n"] = dict(doc["outcomes"][some[0]])
    full = jsonschema.Draft202012Validator(schema("baseline"))
    assert _errors(full, doc) == _errors(_baseline_validator(), doc) != []


def test_a_schema_with_an_unknown_keyword_falls_back_to_jsonschema_whole():
    shaped = {
        "type": "object",
        "properties": {"rows": {"type": "array", "items": {"type": "object", "minProperties": 2}}},
    }
    validator = BulkValidator(shaped, ("properties", "rows", "items"))
    assert validator.check is None
    doc = {"rows": [{"a": 1, "b": 2}, {"a": 1}]}
    assert _errors(validator, doc) == _errors(jsonschema.Draft202012Validator(shaped), doc) != []


@pytest.mark.slow
def test_a_100k_probe_compare_names_the_corrupted_probes_field(tmp_path, cli):
    entries = [make_entry(f"p{i:06d}", i % 5 != 0, language=("en", "es")[i % 2]) for i in range(100_000)]
    doc = make_results(entries)
    base = write_json(tmp_path / "baseline.json", baseline_of(entries))
    doc["probes"][73_456]["correct"] = "yes"
    results = tmp_path / "results.json"
    results.write_text(json.dumps(doc), encoding="utf-8")
    got = cli("compare", str(results), base, "--out", tmp_path / "out")
    assert got.code == 2, got.err
    assert (
        str(results) in got.err and "probes/73456/correct: 'yes' is not of type 'boolean', 'null'" in got.err
    )
