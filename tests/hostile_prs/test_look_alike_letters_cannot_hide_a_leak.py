"""A look-alike letter of another script cannot hide a verbatim leak (probeset/scripts.py,
probeset/leaks.py; docs/validate.md "Scripts and look-alikes").

The PR brings items; the training file is the project's. Whatever the PR spells with Cyrillic or
Greek look-alikes is refused where it mixes scripts in a word, and folded to its Latin reading by
the leak detectors where it does not, so the copy in the training data is still found.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SUITE = """\
suites:
  quiz:
    kind: multiple-choice
    probes: [quiz/items.jsonl]
    slices: [subject]
    train: [train.txt]
test: null
baseline: none
"""

TRAIN = "Which city is the capital of Russia? Moscow\nУчитель спросил: Какая столица России? Москва.\n"


def write_items(root: Path, *rows: tuple[str, list[str]]) -> None:
    (root / "quiz").mkdir(exist_ok=True)
    recs = [
        {"id": f"q-{i:03d}", "prompt": prompt, "candidates": cands, "expected": cands[0],
         "slices": {"subject": "geo"}}
        for i, (prompt, cands) in enumerate(rows, start=1)
    ]  # fmt: skip
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)
    (root / "quiz" / "items.jsonl").write_text(text, encoding="utf-8")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evalgate.yml").write_text(SUITE, encoding="utf-8")
    (tmp_path / "train.txt").write_text(TRAIN, encoding="utf-8")
    return tmp_path


def findings(cli) -> tuple[int, list[dict]]:
    got = cli("validate", "--format", "json")
    return got.code, json.loads(got.out)["findings"]


def test_a_cyrillic_letter_inside_a_question_word_is_refused_naming_it(project, cli):
    """Attack: the question of a training sentence is copied with one Cyrillic `а` in `capital`,
    so that the exact and n-gram detectors no longer meet it and the leak passes as a new item."""
    write_items(project, ("Which city is the cаpital of Russia?", ["Moscow", "Kyiv", "Minsk"]))
    code, found = findings(cli)
    assert code == 2
    refused = [f for f in found if f["check"] == "confusable"]
    assert [(f["file"], f["line"], f["probe_id"], f["field"]) for f in refused] == [
        ("quiz/items.jsonl", 1, "q-001", "prompt")
    ], found
    assert "U+0430 CYRILLIC SMALL LETTER A" in refused[0]["message"] and "'cаpital'" in refused[0]["message"]
    # and the leak is found through the look-alike all the same
    assert [f["check"] for f in found if f["check"].startswith("leak-")] == ["leak-exact"], found


def test_a_whole_word_of_look_alikes_is_folded_by_the_leak_check(project, cli):
    """Attack: a word written wholly in Cyrillic look-alikes (`іѕ`: no word mixes scripts) makes
    the copied question a different string; the leak check reads it as the Latin `is`."""
    write_items(project, ("Which city іѕ the capital of Russia?", ["Moscow", "Kyiv", "Minsk"]))
    code, found = findings(cli)
    assert code == 2
    leaks = [f for f in found if f["check"].startswith("leak-")]
    assert [(f["check"], f["probe_id"], f["evidence"]["train_line"]) for f in leaks] == [
        ("leak-exact", "q-001", 1)
    ], found


def test_the_import_of_a_look_alike_question_is_refused_and_changes_nothing(project, cli):
    """Attack: the same item arrives through `probes import` from an MMLU-style export."""
    write_items(project, ("Which river flows through Cairo?", ["Nile", "Amazon", "Volga"]))
    before = (project / "quiz" / "items.jsonl").read_bytes()
    row = {"question": "Which city is the cаpital of Russia?", "choices": ["Moscow", "Kyiv", "Minsk"],
           "answer": 0, "subject": "geo"}  # fmt: skip
    (project / "new.jsonl").write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    got = cli("probes", "import", "new.jsonl", "--suite", "quiz", "--from", "mmlu")
    assert got.code == 2, got.out + got.err
    assert "[confusable]" in got.out + got.err and "prompt" in got.out + got.err
    assert (project / "quiz" / "items.jsonl").read_bytes() == before


@pytest.mark.parametrize(
    "prompt",
    [
        "What is 2π radians in degrees?",
        "Which Greek letter, λ or μ, denotes wavelength?",
        "Какая река течёт через Каир?",
        "Ποιο είναι το σύμβολο του μήκους κύματος;",
        "Is a 10 kΩ resistor larger than a 4.7 kΩ one?",
    ],
)
def test_greek_cyrillic_and_maths_questions_are_accepted(project, cli, prompt):
    write_items(project, (prompt, ["360", "180", "90"]))
    code, found = findings(cli)
    assert code == 0, found
    assert not [f for f in found if f["check"] == "confusable"]


def test_a_russian_question_still_meets_its_russian_copy(project, cli):
    # both sides are folded alike: a question wholly in Cyrillic keeps meeting its own copy
    write_items(project, ("Какая столица России?", ["Москва", "Киев", "Минск"]))
    code, found = findings(cli)
    assert code == 2
    leaks = [f for f in found if f["check"].startswith("leak-")]
    assert [(f["check"], f["evidence"]["train_line"]) for f in leaks] == [("leak-exact", 2)], found
