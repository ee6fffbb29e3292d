"""A suite's own held-out text: perplexity measured, gated and reported per suite (docs/suites.md).

Real demo checkpoints: `demo-regressed` has a clearly higher perplexity on English sentences than
`demo`, so a suite whose test set is demo sentences regresses on it while the other suite, with no
test set of its own, is gated on accuracy only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.items import write_items
from helpers.paths import REPO, allow_shipped_data

DEMO = REPO / "data" / "checkpoints" / "demo"
REGRESSED = REPO / "data" / "checkpoints" / "demo-regressed"


TWO = """\
suites:
  quiz:
    kind: multiple-choice
    probes: [quiz/items.jsonl]
    slices: [topic]
    test: quiz/text.jsonl
  trivia:
    kind: multiple-choice
    probes: [trivia/items.jsonl]
    slices: [topic]
test: null
gate: {{perplexity_max_ratio: 1.02}}  # 300 sentences: a tight limit makes the regressed model's rise clear
baseline: {baseline}
checkpoint: {checkpoint}
"""


ONE = """\
suites:
  quiz:
    kind: multiple-choice
    probes: [quiz/items.jsonl]
    slices: [topic]
    test: quiz/text.jsonl
baseline: none
checkpoint: {checkpoint}
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    write_items(tmp_path / "quiz" / "items.jsonl", "quiz", 20, 1, ("one", "two"))
    write_items(tmp_path / "trivia" / "items.jsonl", "trivia", 20, 2, ("one", "two"))
    demo_text = (REPO / "data" / "corpus" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    (tmp_path / "quiz" / "text.jsonl").write_text("\n".join(demo_text[:300]) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    allow_shipped_data(monkeypatch)
    return tmp_path


def _config(root: Path, baseline: str = "none", checkpoint: Path = DEMO, text: str = TWO) -> None:
    text = text.format(baseline=baseline, checkpoint=checkpoint)
    (root / "evalgate.yml").write_text(text, encoding="utf-8")


def _results(root: Path) -> dict:
    return json.loads((root / "out" / "results.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_a_suites_own_test_set_is_measured_gated_and_reported_per_suite(project, cli):
    _config(project)
    got = cli("run", "--out", "out")
    assert got.code == 0, got.err
    res = _results(project)
    assert res["perplexity"] is None  # the run-wide `test: null`
    quiz = res["suite_perplexity"]["quiz"]
    assert set(res["suite_perplexity"]) == {"quiz"}
    assert quiz["file"] == "quiz/text.jsonl" and len(quiz["sentence_nll"]) == 300 and quiz["value"] > 1
    assert res["inputs"]["quiz/text.jsonl"]["role"] == "test"
    assert quiz["test_sha256"] == res["inputs"]["quiz/text.jsonl"]["sha256"]
    assert res["config"]["suites"]["quiz"]["test"] == "quiz/text.jsonl"
    assert "test" not in res["config"]["suites"]["trivia"]  # pinned only when given

    _config(project, baseline="baselines/main.json")
    assert cli("baseline", "update", "--name", "main").code == 0
    base = json.loads((project / "baselines" / "main.json").read_text(encoding="utf-8"))
    assert base["suite_perplexity"]["quiz"]["value"] == quiz["value"]

    got = cli("run", "--out", "out")
    assert got.code == 0, got.err
    assert _results(project)["comparison"]["suite_perplexity"]["quiz"]["status"] == "ok"

    _config(project, baseline="baselines/main.json", checkpoint=REGRESSED)
    got = cli("run", "--out", "out")
    res = _results(project)
    comp = res["comparison"]["suite_perplexity"]["quiz"]
    assert got.code == 1, got.err
    assert comp["status"] == "regressed" and comp["ratio"] > comp["max_ratio"] and comp["p_value"] < 0.05
    assert any(r.startswith("quiz: perplexity rose") for r in res["reasons"]), res["reasons"]
    report = (project / "out" / "REPORT.md").read_text(encoding="utf-8")
    assert "— regressed: quiz perplexity (×1." in report.splitlines()[0]
    row = next(line for line in report.splitlines() if line.startswith("| quiz "))
    assert "quiz/text.jsonl" in row and "4.0" in row and "1.02" in row and "❌ regressed" in row
    assert "The run-wide `test:` is null: only the suites' own held-out test sets are measured." in report
    assert "No test set of their own (`test: null` or none): trivia." in report


@pytest.mark.slow
def test_dropping_or_swapping_a_suites_test_set_changes_its_gate(project, cli):
    _config(project, baseline="baselines/main.json")
    assert cli("baseline", "update", "--name", "main").code == 0
    _config(project, baseline="baselines/main.json", text=TWO.replace("    test: quiz/text.jsonl\n", ""))
    got = cli("run", "--out", "out")
    assert got.code == 2, got.err
    assert "held-out test set changed" in got.out + got.err and "quiz/text.jsonl" in got.out + got.err
    # approved, the missing measurement still fails: it cannot show it did not regress
    got = cli("run", "--out", "out", "--approve-gate-changes")
    assert got.code == 1, got.err
    assert any("quiz: perplexity missing from this run" in r for r in _results(project)["reasons"])

    lines = (project / "quiz" / "text.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (project / "quiz" / "text.jsonl").write_text("".join(lines[:-1]), encoding="utf-8")
    _config(project, baseline="baselines/main.json")
    got = cli("run", "--out", "out")
    assert got.code == 2, got.err
    assert "held-out test set changed" in got.out + got.err


def test_one_suites_test_is_the_runs_and_cannot_be_set_twice(project, cli):
    one = ONE.format(checkpoint=DEMO)
    (project / "evalgate.yml").write_text(one + "test: null\n", encoding="utf-8")
    got = cli("validate")
    assert got.code == 2
    assert "test: suite quiz names its own `test:`" in got.out + got.err
    (project / "evalgate.yml").write_text(one, encoding="utf-8")
    assert cli("validate").code == 0
    got = cli("run", "--test", "quiz/text.jsonl")
    assert got.code == 2
    assert "--test: suite(s) quiz in evalgate.yml name their own `test:`" in got.out + got.err


@pytest.mark.slow
def test_one_suites_test_set_is_the_runs_perplexity(project, cli):
    one = ONE.format(checkpoint=DEMO)
    (project / "evalgate.yml").write_text(one, encoding="utf-8")
    got = cli("run", "--out", "out")
    assert got.code == 0, got.err
    res = _results(project)
    assert "suite_perplexity" not in res
    assert res["perplexity"]["file"] == "quiz/text.jsonl" and len(res["perplexity"]["sentence_nll"]) == 300


@pytest.mark.slow
def test_sharded_runs_merge_the_suites_perplexity_into_the_unsharded_bytes(project, cli):
    _config(project)
    assert cli("run", "--out", "whole").code == 0
    for i in (1, 2):
        assert cli("run", "--shard", f"{i}/2", "--out", f"s{i}").code == 0
    parts = [project / f"s{i}" / "results.json" for i in (1, 2)]
    assert cli("merge", *parts, "--out", "merged").code == 0
    for name in ("results.json", "REPORT.md"):
        assert (project / "merged" / name).read_bytes() == (project / "whole" / name).read_bytes(), name
