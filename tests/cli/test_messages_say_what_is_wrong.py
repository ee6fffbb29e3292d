"""Refusals that say what is wrong in the user's terms, once (issue 26): a character NFC replaces
named with both code points, an unmapped slice named once with the right grammar, and a slice
dimension name that breaks the name rule said as that rule, not as jsonschema's "not valid under
any of the given schemas"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SUITE = """\
suites:
  quiz:
    kind: multiple-choice
    probes: [quiz/items.jsonl]
    slices: {slices}
test: null
baseline: none
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quiz").mkdir()
    (tmp_path / "quiz" / "items.jsonl").write_bytes(b"")
    return tmp_path


def configure(repo: Path, slices: str = "[subject]") -> None:
    (repo / "evalgate.yml").write_text(SUITE.format(slices=slices), encoding="utf-8")


def test_a_character_nfc_replaces_is_named_with_what_it_becomes(repo, cli):
    configure(repo)
    item = {"id": "q-1", "prompt": "Which symbol is the ohm?", "candidates": ["\u2126", "V", "A"],
            "expected": "\u2126", "slices": {"subject": "physics"}}  # fmt: skip
    (repo / "quiz" / "items.jsonl").write_text(json.dumps(item) + "\n", encoding="utf-8")
    got = cli("validate", "--format", "json")
    assert got.code == 2
    (form,) = [f for f in json.loads(got.out)["findings"] if f["check"] == "text-form"]
    assert "U+2126 OHM SIGN" in form["message"] and "U+03A9 GREEK CAPITAL LETTER OMEGA" in form["message"]
    assert "combining mark" not in form["message"]


def test_an_unmapped_slice_is_named_once_with_its_one_row(repo, cli):
    configure(repo)
    row = {"id": "M1", "question": {"stem": "Which planet is red?", "choices": [
        {"text": "Mars", "label": "A"}, {"text": "Venus", "label": "B"}]}, "answerKey": "A"}  # fmt: skip
    (repo / "arc.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    got = cli("probes", "import", "arc.jsonl", "--suite", "quiz", "--from", "arc")
    assert got.code == 2
    assert "arc.jsonl: slices.subject: the suite declares this dimension" in got.out
    assert "slices.subject: slices.subject" not in got.out
    assert "(row 1 has no value)" in got.out


@pytest.mark.parametrize(
    ("slices", "said"),
    [
        ("{subject: null, Topic: null}", 'suites.quiz.slices: key "Topic" must match the pattern'),
        ("[subject, Topic]", 'suites.quiz.slices.1: value "Topic" must match the pattern'),
    ],
)
def test_a_dimension_name_that_breaks_the_rule_is_said_as_the_rule(repo, cli, slices, said):
    configure(repo, slices)
    got = cli("validate")
    assert got.code == 2
    assert said in got.out + got.err
    assert "is not valid under any of the given schemas" not in got.out + got.err
