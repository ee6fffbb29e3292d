"""A cloze's blank is three ASCII underscores: what reads as a blank but is not one is refused,
never scored as a question, and a cloze with no words is refused (docs/suites.md, "Kind
`multiple-choice`")."""

from __future__ import annotations

import json

import pytest

from evalgate.probeset.items import read_item_file

DIMS = {"topic": None}


def findings(prompt: str) -> list:
    rec = {"id": "c-1", "prompt": prompt, "candidates": ["Ingress", "Secret"], "expected": "Ingress",
           "slices": {"topic": "net"}}  # fmt: skip
    got = read_item_file((json.dumps(rec, ensure_ascii=False) + "\n").encode(), "items.jsonl", DIMS, None)
    return [f for f in got.findings if f.check == "blank"]


@pytest.mark.parametrize(
    ("prompt", "named"),
    [
        ("A ＿＿＿ routes external traffic.", "U+FF3F FULLWIDTH LOW LINE"),
        ("A ‗‗‗ routes external traffic.", "U+2017 DOUBLE LOW LINE"),
        ("A __ routes external traffic.", "'__'"),
        ("A ˍˍˍ routes external traffic.", "U+02CD MODIFIER LETTER LOW MACRON"),
        ("A ▁▁▁ routes external traffic.", "U+2581 LOWER ONE EIGHTH BLOCK"),
        ("A _＿_ routes external traffic.", "U+FF3F FULLWIDTH LOW LINE"),
        ("A ﹏﹏ routes external traffic.", "U+FE4F WAVY LOW LINE"),
    ],
)
def test_a_look_alike_blank_is_refused_with_the_characters_named(prompt, named):
    (found,) = findings(prompt)
    assert named in found.message and "three ASCII underscores ___" in found.message
    assert (found.file, found.line, found.probe_id, found.field) == ("items.jsonl", 1, "c-1", "prompt")


@pytest.mark.parametrize("prompt", ["___", "___.", "  ___ ?", "(___)"])
def test_a_cloze_with_no_words_is_refused(prompt):
    (found,) = findings(prompt)
    assert "no words around its blank" in found.message


@pytest.mark.parametrize(
    "prompt",
    [
        "A ___ routes external traffic.",
        "What does __init__ do in a Python class?",
        "Which token does ▁the stand for in SentencePiece?",
        "Which snake_case name is valid?",
    ],
)
def test_real_clozes_and_questions_with_underscores_are_accepted(prompt):
    assert findings(prompt) == []
