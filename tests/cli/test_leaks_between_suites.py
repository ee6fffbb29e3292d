"""An item of one suite in another suite's training file is a leak under `leaks.policy`
(docs/suites.md): the run scores both suites with one checkpoint, which learned from every suite's
training material."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from helpers.fake_scorer import FakeScorer, use_scorer
from helpers.paths import REPO, allow_shipped_data
from helpers.probeset_factory import dump_jsonl

CHECKPOINT = REPO / "data" / "checkpoints" / "demo"


QUESTIONS = {
    "quiz": [
        (
            "Which gas do plants take in for photosynthesis?",
            ["carbon dioxide", "oxygen", "helium"],
            "biology",
        ),
        ("Which organ pumps blood through the body?", ["heart", "liver", "lung"], "biology"),
        ("What is the boiling point of water at sea level in Celsius?", ["100", "90", "80"], "physics"),
        (
            "Which force keeps the planets in orbit around the Sun?",
            ["gravity", "magnetism", "friction"],
            "physics",
        ),
        ("Which metal is liquid at room temperature?", ["mercury", "iron", "zinc"], "chemistry"),
    ],
    "trivia": [
        ("Who painted the Mona Lisa?", ["Leonardo da Vinci", "Rembrandt", "Monet"], "art"),
        ("Which instrument has 88 keys?", ["piano", "violin", "flute"], "music"),
        ("In which country were the first Olympic Games held?", ["Greece", "Italy", "Egypt"], "history"),
        ("Which composer wrote the Moonlight Sonata?", ["Beethoven", "Mozart", "Bach"], "music"),
        ("Which city was once called Constantinople?", ["Istanbul", "Athens", "Rome"], "history"),
    ],
}


def two_suites(root: Path) -> Path:
    """Suites `quiz` (with a training file of ordinary text) and `trivia` (its own template)."""
    for name, rows in QUESTIONS.items():
        (root / name).mkdir(parents=True)
        recs = [
            {"id": f"{name}-{i:03d}", "prompt": q, "candidates": c, "expected": c[0], "slices": {"topic": t}}
            for i, (q, c, t) in enumerate(rows)
        ]
        (root / name / "items.jsonl").write_bytes(dump_jsonl(recs))
    (root / "trivia/prompt.txt").write_text("Question: {prompt}\nAnswer:\n", encoding="utf-8")
    (root / "quiz/train.jsonl").write_bytes(
        dump_jsonl([{"text": "The garden behind the old stone house floods every spring."}])
    )
    (root / "trivia/train.jsonl").write_bytes(dump_jsonl([{"text": "Clouds drift over the river."}]))
    suite = {"kind": "multiple-choice", "slices": ["topic"], "coverage": {"min_per_value": 1}}
    config = {
        "suites": {
            "quiz": {**suite, "probes": ["quiz/items.jsonl"], "train": ["quiz/train.jsonl"]},
            "trivia": {
                **suite,
                "probes": ["trivia/items.jsonl"],
                "template": "trivia/prompt.txt",
                "train": ["trivia/train.jsonl"],
            },
        },
        "test": None,
        "baseline": "none",
        "checkpoint": str(CHECKPOINT),
    }
    plain = json.loads(json.dumps(config))  # no shared objects: no YAML anchors
    (root / "evalgate.yml").write_text(yaml.safe_dump(plain, sort_keys=False), encoding="utf-8")
    return root


def plant(root: Path, suite: str, text: str) -> None:
    with (root / suite / "train.jsonl").open("ab") as fh:
        fh.write(dump_jsonl([{"text": text}]))


def item(root: Path, name: str, i: int) -> dict:
    return json.loads((root / name / "items.jsonl").read_text(encoding="utf-8").splitlines()[i])


def cross(doc: dict, key: str = "warnings") -> list[tuple[str, int]]:
    return [
        (w["probe_id"], w["evidence"]["train_line"]) for w in doc[key] if w["check"] == "leak-cross-suite"
    ]


def set_policy(root: Path, policy: str) -> None:
    with (root / "evalgate.yml").open("a", encoding="utf-8") as fh:
        fh.write(f"leaks: {{policy: {policy}}}\n")


def plant_both(root: Path) -> None:
    trivia = item(root, "trivia", 2)
    quiz = item(root, "quiz", 4)
    plant(root, "quiz", f"{trivia['prompt']} {trivia['expected']}")  # trivia-002 verbatim
    plant(root, "trivia", f"Question: {quiz['prompt']}\nAnswer: {quiz['expected']}")  # quiz-004 rendered


def test_an_item_in_another_suites_training_file_is_refused_naming_both(tmp_path, cli):
    """Under `leaks.policy: refuse` (the default) a leak is a leak whichever suite's training file
    holds it: refused, as one in the suite's own file is (it was once only a warning)."""
    root = two_suites(tmp_path)
    plant_both(root)
    done = cli("validate", "--format", "json", "--config", root / "evalgate.yml")
    doc = json.loads(done.out)
    assert done.code == 2, done.out + done.err
    assert sorted(cross(doc, "findings")) == [("quiz-004", 2), ("trivia-002", 2)]
    assert {f["check"] for f in doc["findings"]} == {"leak-cross-suite"}  # each suite's own files are clean
    assert cross(doc) == []
    text = {w["probe_id"]: w["message"] for w in doc["findings"]}
    assert text["trivia-002"].startswith("suite trivia: the filled prompt")
    assert (
        "quiz/train.jsonl:2" in text["trivia-002"] and "a training file of suite quiz" in text["trivia-002"]
    )
    assert (
        "trivia/train.jsonl:2" in text["quiz-004"] and "a training file of suite trivia" in text["quiz-004"]
    )

    shown = cli("validate", "--config", root / "evalgate.yml")
    assert shown.code == 2 and "[leak-cross-suite]" in shown.out


def test_under_exclude_a_cross_suite_leak_is_left_out_and_warned(tmp_path, cli):
    root = two_suites(tmp_path)
    plant_both(root)
    set_policy(root, "exclude")
    done = cli("validate", "--format", "json", "--config", root / "evalgate.yml")
    doc = json.loads(done.out)
    assert done.code == 0 and doc["findings"] == [], done.out + done.err
    assert sorted(cross(doc)) == [("quiz-004", 2), ("trivia-002", 2)]
    assert any(w["check"] == "leaks-excluded" for w in doc["warnings"])


@pytest.mark.slow
def test_the_run_leaves_the_cross_suite_leak_out_and_carries_it_into_its_results(tmp_path, monkeypatch, cli):
    root = two_suites(tmp_path)
    trivia = item(root, "trivia", 2)
    plant(root, "quiz", f"{trivia['prompt']} {trivia['expected']}")
    set_policy(root, "exclude")
    monkeypatch.chdir(root)
    allow_shipped_data(monkeypatch)
    use_scorer(monkeypatch, FakeScorer(default=-1.0))  # what is excluded is the gate's, not the model's
    done = cli("run", "--out", "out")
    assert done.code in (0, 1), done.err
    res = json.loads((root / "out/results.json").read_text(encoding="utf-8"))
    assert cross(res) == [("trivia-002", 2)]
    assert next(e for e in res["probes"] if e["id"] == "trivia-002")["status"] == "excluded"


@pytest.mark.slow
def test_the_run_refuses_a_cross_suite_leak_under_refuse(tmp_path, monkeypatch, cli):
    root = two_suites(tmp_path)
    trivia = item(root, "trivia", 2)
    plant(root, "quiz", f"{trivia['prompt']} {trivia['expected']}")
    monkeypatch.chdir(root)
    allow_shipped_data(monkeypatch)
    done = cli("run", "--out", "out")
    assert done.code == 2, done.out + done.err
    assert "leak-cross-suite" in done.out + done.err and "quiz/train.jsonl:2" in done.out + done.err


def test_a_suite_without_training_files_is_said_to_be_checked_against_the_others(tmp_path, cli):
    """Suite trivia names no training files, and one of its items is in quiz's: its summary says
    what it was checked against and what was left out, never "not checked"."""
    root = two_suites(tmp_path)
    config = yaml.safe_load((root / "evalgate.yml").read_text(encoding="utf-8"))
    del config["suites"]["trivia"]["train"]
    (root / "evalgate.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    trivia = item(root, "trivia", 2)
    plant(root, "quiz", f"{trivia['prompt']} {trivia['expected']}")
    set_policy(root, "exclude")
    done = cli("validate", "--config", root / "evalgate.yml")
    assert done.code == 0, done.out + done.err
    said = [
        line
        for line in done.out.splitlines()
        if "leaks:    not checked" in line or "detection was skipped" in line
    ]
    assert said == [], said
    (summary,) = [
        line for line in done.out.splitlines() if line.strip().startswith("leaks:    1 leaks, checked")
    ]
    assert summary.strip() == (
        "leaks:    1 leaks, checked only against the training files of suite quiz (it names none); "
        "1 leaking item(s) excluded"
    )
    assert "suite trivia: it names no training files of its own" in done.out, done.out
