"""`probes deprecate` and `probes export` in a `suites:` project (docs/suites.md).

Both once read only the top-level `probes:` (the bundled data/eval set), so a suite's item was
"no probe ... in data/eval/probes.jsonl", although compare's lock refusal sends users to them.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml
from helpers.probeset_factory import EVAL, dump_jsonl, verb_forms_suite, write_base

ITEMS = [
    {"id": f"quiz-{i:03d}", "prompt": f"Which planet is number {i}?", "candidates": ["Mars", "Venus"],
     "expected": "Mars", "slices": {"subject": "astronomy"}}
    for i in range(3)
]  # fmt: skip


def write_jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dump_jsonl(rows))


def repo(tmp_path, cli):
    """The small verb-form set of tests/helpers/probeset_factory.py as suite `verbs`, beside `quiz`."""
    root = tmp_path / "repo"
    write_base(root)
    verbs = verb_forms_suite()
    quiz = {"kind": "multiple-choice", "probes": ["quiz/items.jsonl"], "slices": ["subject"]}
    config = {"suites": {"verbs": verbs, "quiz": quiz}, "test": None, "baseline": "none"}
    (root / "evalgate.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    write_jsonl(root / "quiz/items.jsonl", ITEMS)
    assert cli("probes", "seal", "--config", root / "evalgate.yml").code == 0
    return root


def lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_deprecate_finds_an_item_in_its_suite_and_seals_that_suite(tmp_path, cli):
    root = repo(tmp_path, cli)
    done = cli("probes", "deprecate", "quiz-001", "--config", root / "evalgate.yml")
    assert done.code == 0, done.out + done.err
    assert "deprecated quiz-001 at quiz/items.jsonl:2" in done.out
    assert "sealed quiz/MANIFEST.json" in done.out
    assert lines(root / "quiz/items.jsonl")[1] == {**ITEMS[1], "deprecated": True}
    assert cli("validate", "--config", root / "evalgate.yml").code == 0


@pytest.mark.integration
def test_deprecate_appends_an_item_replacement(tmp_path, cli):
    root = repo(tmp_path, cli)
    new = {**ITEMS[0], "id": "quiz-100", "prompt": "Which planet is red?"}
    write_jsonl(tmp_path / "new.jsonl", [new])
    done = cli("probes", "deprecate", "quiz-000", "--replacement", tmp_path / "new.jsonl",
               "--suite", "quiz", "--config", root / "evalgate.yml")  # fmt: skip
    assert done.code == 0, done.out + done.err
    assert "appended its replacement quiz-100 at quiz/items.jsonl:4" in done.out
    assert lines(root / "quiz/items.jsonl") == [{**ITEMS[0], "deprecated": True}, *ITEMS[1:], new]
    assert cli("validate", "--config", root / "evalgate.yml").code == 0


@pytest.mark.integration
def test_deprecate_finds_a_verb_form_probe_of_a_suite_and_names_every_suite_file_when_missing(tmp_path, cli):
    root = repo(tmp_path, cli)
    pid = lines(root / EVAL / "probes.jsonl")[0]["id"]
    done = cli("probes", "deprecate", pid, "--config", root / "evalgate.yml")
    assert done.code == 0, done.out + done.err
    assert "sealed data/eval/MANIFEST.json" in done.out
    missing = cli("probes", "deprecate", "quiz-01", "--config", root / "evalgate.yml")
    assert missing.code == 2
    assert "quiz/items.jsonl" in missing.err and "data/eval/probes.jsonl" in missing.err
    assert "did you mean" in missing.err
    other = cli("probes", "deprecate", "quiz-001", "--suite", "verbs", "--config", root / "evalgate.yml")
    assert other.code == 2 and "no probe with id 'quiz-001' in data/eval/" in other.err


def test_export_reads_every_suite_or_one(tmp_path, cli):
    root = repo(tmp_path, cli)
    every = cli("probes", "export", "--format", "jsonl", "--config", root / "evalgate.yml")
    assert every.code == 0, every.err
    ids = [json.loads(line)["id"] for line in every.out.splitlines()]
    assert ids[-3:] == ["quiz-000", "quiz-001", "quiz-002"] and len(ids) > 3
    one = cli("probes", "export", "--format", "csv", "--suite", "quiz", "--config", root / "evalgate.yml")
    assert one.code == 0, one.err
    rows = list(csv.DictReader(io.StringIO(one.out)))
    assert [r["id"] for r in rows] == ["quiz-000", "quiz-001", "quiz-002"]
    assert json.loads(rows[0]["slices"]) == {"subject": "astronomy"}
    assert json.loads(rows[0]["candidates"]) == ["Mars", "Venus"]
    mixed = cli("probes", "export", "--format", "csv", "--config", root / "evalgate.yml")
    assert mixed.code == 2 and "--suite NAME" in mixed.err
