"""A slice dimension named `overall` would be the whole suite's slice too: refused when the
configuration is read, file and field named, never a crash of `run` (docs/suites.md)."""

from __future__ import annotations

import json

import pytest
from helpers.paths import REPO, allow_shipped_data


@pytest.mark.parametrize("slices", ["[overall]", "[topic, overall]", "{overall: [easy, hard]}"])
def test_a_dimension_named_overall_is_refused_by_validate_and_run(tmp_path, monkeypatch, cli, slices):
    (tmp_path / "quiz").mkdir()
    dims = {"overall": "easy", "topic": "geo"}
    recs = [
        {"id": f"q-{i}", "prompt": f"Question {i}?", "candidates": ["a", "b"], "expected": "a",
         "slices": {d: v for d, v in dims.items() if d in slices}}
        for i in range(4)
    ]  # fmt: skip
    (tmp_path / "quiz" / "items.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8"
    )
    (tmp_path / "evalgate.yml").write_text(
        f"suites:\n  quiz:\n    kind: multiple-choice\n    probes: [quiz/items.jsonl]\n    slices: {slices}\n"
        f"test: null\nbaseline: none\ncheckpoint: {REPO / 'data' / 'checkpoints' / 'demo'}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    allow_shipped_data(monkeypatch)
    for command in (["validate"], ["run", "--out", "out"]):
        got = cli(*command)
        assert got.code == 2, (command, got.out, got.err)
        assert "evalgate.yml: suites.quiz.slices: 'overall' is reserved" in got.err
