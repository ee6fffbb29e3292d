"""`evalgate validate` checks an item for leaks as the model reads it (docs/validate.md, "Leaks"):
the suite's template rendered around it, and its question alone inside a longer training line."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from helpers.probeset_factory import dump_jsonl


def quiz_repo(root: Path, train: list[str], template: str | None = None) -> Path:
    """A one-suite repository: short question items, a training file of `train` lines."""
    (root / "quiz").mkdir(parents=True)
    rows = [
        ("geo-001", "Capital of Peru?", "Lima", ["Lima", "Quito", "Bogota"]),
        ("geo-002", "Capital of Chile?", "Santiago", ["Santiago", "Lima", "Quito"]),
        ("geo-003", "Largest ocean?", "Pacific", ["Pacific", "Atlantic", "Indian"]),
    ]
    (root / "quiz/items.jsonl").write_bytes(
        dump_jsonl(
            [
                {"id": i, "prompt": q, "candidates": c, "expected": a, "slices": {"topic": "geo"}}
                for i, q, a, c in rows
            ]
        )
    )
    (root / "quiz/train.jsonl").write_bytes(dump_jsonl([{"text": t} for t in train]))
    suite = {
        "kind": "multiple-choice",
        "probes": ["quiz/items.jsonl"],
        "slices": ["topic"],
        "train": ["quiz/train.jsonl"],
        "coverage": {"min_per_value": 1},
    }
    if template is not None:
        (root / "quiz/prompt.txt").write_text(template, encoding="utf-8")
        suite["template"] = "quiz/prompt.txt"
    config = {"suites": {"quiz": suite}, "test": None, "baseline": "none"}
    (root / "evalgate.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return root


ORDINARY = ["Lima is a large city on the Pacific coast.", "The Andes run along the west of South America."]


def leaks(cli, root: Path) -> tuple[int, list[dict]]:
    done = cli("validate", "--format", "json", "--config", root / "evalgate.yml")
    doc = json.loads(done.out)
    return done.code, [f for f in doc["findings"] if f["check"].startswith("leak-")]


def test_a_training_line_holding_the_rendered_item_is_a_leak(tmp_path, cli):
    """The template puts `Question:`/`Answer:` around the prompt: a training line holding exactly that
    text is what the model would read, and a leak though the filled prompt alone is not in it."""
    rendered = "Question: Capital of Peru?\nAnswer: Lima"
    root = quiz_repo(tmp_path / "repo", [*ORDINARY, rendered], template="Question: {prompt}\nAnswer:\n")
    code, found = leaks(cli, root)
    assert code == 2
    assert [(f["probe_id"], f["check"], f["evidence"]["train_line"]) for f in found] == [
        ("geo-001", "leak-exact", 3)
    ]
    assert "the rendered prompt 'Question: Capital of Peru?\\nAnswer: Lima' equals" in found[0]["message"]

    # without the template the same items pass against the ordinary lines
    clean = quiz_repo(tmp_path / "clean", ORDINARY, template="Question: {prompt}\nAnswer:\n")
    assert leaks(cli, clean) == (0, [])


def test_a_short_question_inside_a_longer_training_line_is_a_leak(tmp_path, cli):
    """A question ends in "?": copied as one sentence of a longer line, with or without its answer
    after it, it is no clause of the filled text, and too short for the n-gram window."""
    lines = [
        *ORDINARY,
        "Pub quiz, round two. Capital of Chile? Write it down before the bell.",
        "Warm-up: largest ocean? Pacific, obviously.",
    ]
    root = quiz_repo(tmp_path / "repo", lines)
    code, found = leaks(cli, root)
    assert code == 2
    assert sorted((f["probe_id"], f["evidence"]["train_line"]) for f in found) == [
        ("geo-002", 3),
        ("geo-003", 4),
    ]
    assert all(f["check"] == "leak-exact" for f in found)
    # a line that only mentions the words ("the capital of Peru, Lima,") is no question of its own
    mention = quiz_repo(tmp_path / "mention", [*ORDINARY, "The capital of Peru, Lima, lies near the sea."])
    assert leaks(cli, mention) == (0, [])
