"""`suites:` in evalgate.yml, end to end on the real demo checkpoint (docs/suites.md).

Items here are not verb forms, so the demo model scores them near chance: exactly the checkpoint
a floor must stop. Runs take a few seconds each (a real model, no perplexity: `test: null`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.items import write_items
from helpers.paths import REPO, allow_shipped_data

from evalgate.config import load_config

CHECKPOINT = REPO / "data" / "checkpoints" / "demo"
TOPICS = ("astronomy", "biology", "chemistry")


def config(tmp_path: Path, text: str) -> Path:
    (tmp_path / "evalgate.yml").write_text(text, encoding="utf-8")
    return tmp_path


TWO_SUITES = f"""\
suites:
  quiz:
    kind: multiple-choice
    probes: [quiz/items.jsonl]
    slices: [topic]
    coverage: {{min_per_value: 5}}
    gate: {{min_accuracy: 0.6}}
  trivia:
    kind: multiple-choice
    probes: [trivia/items.jsonl]
    template: trivia/prompt.txt
    slices: {{topic: [astronomy, biology, chemistry]}}
test: null
baseline: none
checkpoint: {CHECKPOINT}
"""


@pytest.fixture
def two_suites(tmp_path, monkeypatch):
    write_items(tmp_path / "quiz" / "items.jsonl", "quiz", 45, 1)
    write_items(tmp_path / "trivia" / "items.jsonl", "trivia", 30, 2)
    (tmp_path / "trivia" / "prompt.txt").write_text("Question: {prompt}\nAnswer:\n", encoding="utf-8")
    monkeypatch.chdir(config(tmp_path, TWO_SUITES))
    allow_shipped_data(monkeypatch)
    return tmp_path


@pytest.mark.slow
def test_two_suites_score_with_their_own_templates_slice_keys_and_floor(two_suites, cli):
    got = cli("run", "--out", "out")
    assert got.code == 1, got.err  # the floor fails: the model guesses
    res = json.loads((two_suites / "out" / "results.json").read_text(encoding="utf-8"))
    keys = set(res["slices"])
    assert {
        "overall",
        "quiz/overall",
        "trivia/overall",
        "quiz/topic:biology",
        "trivia/topic:chemistry",
    } <= keys
    assert res["slices"]["overall"]["n"] == 75  # the whole run
    assert res["slices"]["quiz/overall"]["n"] == 45
    assert res["perplexity"] is None and res["manifest"]["test_sha256"] is None
    by_id = {e["id"]: e for e in res["probes"]}
    # each suite's own template: a question is followed by " " + candidate
    assert by_id["trivia-000"]["context"].startswith("Question: Which word")
    assert by_id["trivia-000"]["context"].endswith("Answer:")
    assert by_id["quiz-000"]["context"] == "Which word goes with question 0 of set quiz?"
    assert all(c["continuation"].startswith(" ") for c in by_id["quiz-000"]["candidates"])
    assert by_id["quiz-000"]["suite"] == "quiz" and by_id["quiz-000"]["slices"] == {"topic": "astronomy"}
    # the suite's floor applies to the suite's overall, with the chance level in the reason
    floor = res["floors"]["quiz/overall"]
    assert floor["status"] == "below" and floor["chance"] == pytest.approx(0.25)
    assert any(r.startswith("quiz/overall: accuracy") and "gate.min_accuracy 60.0% (chance 25.0%)" in r
               for r in res["reasons"])  # fmt: skip
    assert res["config"]["gate"]["slices"][:3] == ["overall", "quiz/overall", "quiz/topic"]
    assert set(res["config"]["suites"]) == {"quiz", "trivia"}
    assert "probes" not in res["config"]  # each suite names its own files


@pytest.mark.slow
def test_weakening_a_suites_rule_against_its_baseline_is_a_gate_change(two_suites, cli):
    text = TWO_SUITES.replace("baseline: none", "baseline: baselines/quiz.json")
    config(two_suites, text)
    assert cli("baseline", "update", "--name", "quiz").code == 0
    for old, new, key in (
        ("min_accuracy: 0.6", "min_accuracy: 0.1", "gate.min_accuracy"),
        ("min_per_value: 5", "min_per_value: 0", "suites.quiz.coverage.min_per_value"),
        ("min_accuracy: 0.6}", "min_accuracy: 0.6, slices: [overall]}", "gate.slices"),
        ("min_accuracy: 0.6}", "min_accuracy: 0.6, min_n: 5}", "suites.quiz.gate.min_n"),
    ):
        config(two_suites, text.replace(old, new))
        got = cli("run", "--out", "out")
        assert got.code == 2, (key, got.err)
        assert f"{key}: gate/scoring rule changed since the baseline" in got.out + got.err


def test_a_suites_own_min_n_gates_its_slices_only(two_suites):
    # Several suites: quiz gates slices of 100 shared probes or more, trivia keeps the run's 20.
    # (It used to lower or ignore: the smaller of the two became every suite's.)
    config(
        two_suites, TWO_SUITES.replace("gate: {min_accuracy: 0.6}", "gate: {min_accuracy: 0.6, min_n: 100}")
    )
    rules = load_config().gate
    assert rules.min_n == 20
    assert rules.min_n_for("quiz/overall") == rules.min_n_for("quiz/topic:biology") == 100
    assert rules.min_n_for("trivia/overall") == rules.min_n_for("overall") == 20
    assert "min_ns" not in load_config().pin()["gate"]
    assert load_config().pin()["suites"]["quiz"]["gate"]["min_n"] == 100


def test_ids_are_unique_across_suites(two_suites, cli):
    write_items(two_suites / "trivia" / "items.jsonl", "quiz", 30, 2)  # the same ids as quiz's first 30
    got = cli("validate")
    assert got.code == 2
    assert "id 'quiz-000' is already used at quiz/items.jsonl:1 (suite quiz)" in got.out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("probes: [x.jsonl]\n", "probes: with `suites:` every suite names its own probes"),
        (
            "  more:\n    kind: multiple-choice\n    probes: [a.jsonl]\n    coverage: {per_tense: 3}\n",
            "suites.more.coverage.per_tense: a verb-forms rule",
        ),
        (
            "  more:\n    kind: multiple-choice\n    probes: [a.jsonl]\n    slices: [topic]\n"
            "    gate: {slices: [topik]}\n",
            "suites.more.gate.slices: 'topik' is not a declared dimension",
        ),
        ("  more:\n    kind: essay\n    probes: [a.jsonl]\n", "suites.more.kind"),
        (
            "  more:\n    kind: multiple-choice\n    probes: [a.jsonl]\n    slices: [Topic]\n",
            "suites.more.slices",
        ),
    ],
)
def test_a_suite_the_configuration_cannot_hold_is_refused_naming_the_key(
    tmp_path, monkeypatch, cli, extra, message
):
    text = TWO_SUITES.replace("test: null\n", "").replace("baseline: none\n", "")
    nested = extra.startswith("  ")  # a suite of its own, else a top-level key
    text = text.replace("suites:\n", "suites:\n" + extra) if nested else extra + text
    monkeypatch.chdir(config(tmp_path, text))
    got = cli("validate")
    assert got.code == 2
    assert message in got.out + got.err


def _baselined(two_suites: Path, cli) -> str:
    text = TWO_SUITES.replace("baseline: none", "baseline: baselines/quiz.json")
    config(two_suites, text)
    assert cli("baseline", "update", "--name", "quiz").code == 0
    return text


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


@pytest.mark.slow
def test_moving_an_item_to_another_suite_is_a_gate_change(two_suites, cli):
    # in the other suite it is scored through another template, tolerance and floor
    _baselined(two_suites, cli)
    quiz, trivia = two_suites / "quiz" / "items.jsonl", two_suites / "trivia" / "items.jsonl"
    moved = _lines(quiz)[0]
    quiz.write_text("".join(_lines(quiz)[1:]), encoding="utf-8")
    trivia.write_text("".join(_lines(trivia)) + moved, encoding="utf-8")
    got = cli("run", "--out", "out")
    assert got.code == 2, got.err
    assert "quiz-000" in got.out + got.err and "suite quiz -> suite trivia" in got.out + got.err


@pytest.mark.slow
def test_two_suites_swapping_training_files_is_a_gate_change(two_suites, cli):
    # the same bytes under the other suite's name would switch that suite's leak detection
    (two_suites / "quiz" / "train.jsonl").write_text('{"text": "Rivers run to the sea."}\n', encoding="utf-8")
    (two_suites / "trivia" / "train.jsonl").write_text('{"text": "Clouds carry rain."}\n', encoding="utf-8")
    text = TWO_SUITES.replace("slices: [topic]\n", "slices: [topic]\n    train: [quiz/train.jsonl]\n")
    text = text.replace(
        "    template: trivia/prompt.txt\n",
        "    template: trivia/prompt.txt\n    train: [trivia/train.jsonl]\n",
    )
    config(two_suites, text.replace("baseline: none", "baseline: baselines/quiz.json"))
    assert cli("baseline", "update", "--name", "quiz").code == 0
    a, b = (
        (two_suites / "quiz" / "train.jsonl").read_bytes(),
        (two_suites / "trivia" / "train.jsonl").read_bytes(),
    )
    (two_suites / "quiz" / "train.jsonl").write_bytes(b)
    (two_suites / "trivia" / "train.jsonl").write_bytes(a)
    got = cli("run", "--out", "out")
    assert got.code == 2, got.err
    assert "training file (leak detection) changed" in got.out + got.err


@pytest.mark.slow
def test_a_suite_with_every_item_retired_scores_the_others(two_suites, cli):
    text = TWO_SUITES.replace("baseline: none", "baseline: baselines/quiz.json")
    text = text.replace("biology, chemistry]}\n", "biology, chemistry]}\n    coverage: {min_per_value: 0}\n")
    config(two_suites, text)
    assert cli("baseline", "update", "--name", "quiz").code == 0
    trivia = two_suites / "trivia" / "items.jsonl"
    retired = [json.dumps({**json.loads(line), "deprecated": True}) + "\n" for line in _lines(trivia)]
    trivia.write_text("".join(retired), encoding="utf-8")
    assert cli("run", "--out", "out").code == 2  # retiring probes is a gate change
    got = cli("run", "--out", "out", "--approve-gate-changes")
    assert got.code == 1, got.err  # approved: scored and gated (the quiz floor still fails)
    res = json.loads((two_suites / "out" / "results.json").read_text(encoding="utf-8"))
    assert res["counts"]["deprecated"] == 30 and res["slices"]["quiz/overall"]["n"] == 45


def test_two_suites_cannot_share_one_manifest(tmp_path, monkeypatch, cli):
    text = TWO_SUITES.replace("probes: [trivia/items.jsonl]", "probes: [quiz/more.jsonl]")
    monkeypatch.chdir(config(tmp_path, text))
    got = cli("validate")
    assert got.code == 2
    assert "suites.trivia.manifest: quiz/MANIFEST.json is suite quiz's manifest too" in got.out + got.err


@pytest.mark.slow
def test_sharded_suite_runs_merge_into_the_unsharded_bytes(two_suites, cli):
    assert cli("run", "--out", "whole").code == 1
    for i in (1, 2, 3):
        assert cli("run", "--shard", f"{i}/3", "--out", f"s{i}").code in (0, 1)
    parts = [two_suites / f"s{i}" / "results.json" for i in (1, 2, 3)]
    assert cli("merge", *parts, "--out", "merged").code == 1
    for name in ("results.json", "REPORT.md"):
        assert (two_suites / "merged" / name).read_bytes() == (two_suites / "whole" / name).read_bytes(), name


def test_ids_differing_only_in_case_across_suites_are_one_id(two_suites, cli):
    """docs/items.md: ids are compared normalised, within a suite and across suites alike."""
    trivia = two_suites / "trivia" / "items.jsonl"
    lines = trivia.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('"trivia-001"', '"QUIZ-000"')
    trivia.write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = cli("validate")
    assert got.code == 2, got.out + got.err
    assert (
        "trivia/items.jsonl:2: QUIZ-000: id: id 'QUIZ-000' is already used at quiz/items.jsonl:1 as "
        "'quiz-000' (ids that differ only in case or spacing are one id) (suite quiz)"
    ) in got.out
