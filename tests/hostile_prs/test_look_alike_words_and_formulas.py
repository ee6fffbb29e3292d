"""A word spelt mostly or wholly in Cyrillic or Greek look-alikes of Latin letters is refused in a
Latin-script prompt or candidate list, whatever the proportions; physics notation of Latin and
Greek letters (`ρgh`, `hν`) is accepted (probeset/scripts.py, docs/validate.md "Scripts and
look-alikes")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SUITE = """\
suites:
  quiz:
    kind: multiple-choice
    probes: [quiz/items.jsonl]
    slices: [topic]
test: null
baseline: none
"""


def write_items(root: Path, rows: list[tuple[str, list[str]]]) -> None:
    (root / "evalgate.yml").write_text(SUITE, encoding="utf-8")
    (root / "quiz").mkdir(exist_ok=True)
    recs = [
        {"id": f"q-{i:03d}", "prompt": prompt, "candidates": cands, "expected": cands[0],
         "slices": {"topic": "science"}}
        for i, (prompt, cands) in enumerate(rows)
    ]  # fmt: skip
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)
    (root / "quiz" / "items.jsonl").write_text(text, encoding="utf-8")


def confusable(cli) -> tuple[int, list[dict]]:
    got = cli("validate", "--format", "json")
    found = [f for f in json.loads(got.out)["findings"] if f["check"] == "confusable"]
    return got.code, found


@pytest.fixture
def suite_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("prompt", "word"),
    [
        ("Which city is the capital of Реru?", "Реru"),  # Cyrillic Р and е, half the word
        ("Which city is the сарitаl of Peru?", "сарitаl"),  # Cyrillic с а р а: most of the word
        ("Which city іѕ the capital of Peru?", "іѕ"),  # wholly Cyrillic, in a Latin question
        ("Which city is the capital of СНІLЕ?", "СНІLЕ"),  # four Cyrillic capitals and a Latin L
        ("Which city is the capital of Pαris?", "Pαris"),  # a Greek alpha in a Latin word
    ],
)
def test_a_prompt_word_mostly_or_wholly_of_look_alikes_is_refused(suite_dir, cli, prompt, word):
    """An author disguises a word of a Latin question as look-alike Cyrillic or Greek letters,
    most or all of them, so that it reads the same and is another string to every table."""
    write_items(suite_dir, [(prompt, ["Lima", "Quito", "Oslo"])])
    code, found = confusable(cli)
    assert code == 2 and len(found) == 1 and repr(word) in found[0]["message"], found
    assert (found[0]["file"], found[0]["line"], found[0]["probe_id"], found[0]["field"]) == (
        "quiz/items.jsonl", 1, "q-000", "prompt")  # fmt: skip
    assert found[0]["message"].count(" holds ") == 1, found[0]["message"]


@pytest.mark.parametrize("cand", ["Nіlе", "Оһіо"])  # Latin N with Cyrillic і, е; wholly Cyrillic
def test_a_candidate_mostly_or_wholly_of_look_alikes_is_refused(suite_dir, cli, cand):
    """A candidate beside Latin ones is spelt in look-alikes: it reads as the Latin word."""
    write_items(suite_dir, [("Which river is the longest in Africa?", [cand, "Amazon", "Danube"])])
    code, found = confusable(cli)
    assert code == 2 and len(found) == 1 and repr(cand) in found[0]["message"], found
    assert found[0]["field"] == "candidates"


def test_physics_notation_and_greek_or_russian_questions_are_accepted(suite_dir, cli):
    write_items(
        suite_dir,
        [
            ("Hydrostatic pressure: P = ρgh. What is ρ?", ["density", "depth", "gravity"]),
            ("Buoyant force: F = ρgV. Which quantity is V?", ["volume", "velocity", "voltage"]),
            (
                "A photon's energy is E = hν. Which formula gives the pressure of a column?",
                ["ρgh", "mgh", "hν"],
            ),
            ("Какая столица России?", ["Москва", "Париж", "Рим"]),
            ("Ποια είναι η πρωτεύουσα της Ελλάδας;", ["Αθήνα", "Σπάρτη", "Θήβα"]),
        ],
    )
    got = cli("validate", "--format", "json")
    assert got.code == 0, [f["message"] for f in json.loads(got.out)["findings"]]
