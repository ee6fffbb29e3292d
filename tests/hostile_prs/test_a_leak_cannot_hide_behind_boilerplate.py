"""Hostile PR: a training file that copies an item's question and answer behind many sentences
sharing its opening words (issue 26, second outside review).

The leak index once remembered only the first 17 training sentences per 5-word window: a PR's
training file with 17 or more "Which city is the capital of X? ..." lines before the real copy
passed `evalgate init`/`validate` with 0 leaks. Every sentence holding the window is a candidate
now (probeset/leaks.py, docs/validate.md "Leaks"). Played through the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.paths import REPO

COUNTRIES = "Chile Ecuador Bolivia Brazil Norway Sweden Finland Spain Italy Greece Egypt Kenya".split()


@pytest.mark.parametrize("decoys", [0, 40])
def test_a_copied_question_behind_many_look_alike_sentences_is_a_leak(
    tmp_path: Path, monkeypatch, cli, decoys
):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(REPO / "data" / "checkpoints" / "demo", tmp_path / "checkpoints" / "demo")
    peru = {"question": "Which city is the capital of Peru?", "choices": ["Lima", "Quito", "Bogota"]}
    ocean = {"question": "Which ocean is the largest?", "choices": ["Pacific", "Atlantic"]}
    rows = [{**row, "answer": 0, "subject": "geo"} for row in (peru, ocean)]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    lines = [
        f"Which city is the capital of {COUNTRIES[i % len(COUNTRIES)]}? Ask your teacher."
        for i in range(decoys)
    ]
    lines.append("Which city is the capital of the Andean nation of Peru? Lima, of course.")
    (tmp_path / "train.jsonl").write_text(
        "".join(json.dumps({"text": t}) + "\n" for t in lines), encoding="utf-8"
    )
    done = cli("init", "--suite", "quiz", "--items", "items.jsonl", "--from", "mmlu",
               "--checkpoint", "checkpoints/demo", "--train", "train.jsonl",
               "--action", "acme/evalgate@" + "a" * 40)  # fmt: skip
    assert done.code == 2, done.out + done.err
    assert "leak" in (done.out + done.err) and not (tmp_path / "evalgate.yml").exists()
