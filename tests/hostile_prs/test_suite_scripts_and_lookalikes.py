"""Greek and Cyrillic letters are letters; a word or a slice value that *reads* like another is
refused (probeset/scripts.py, docs/validate.md "Scripts and look-alikes")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SUITE = """\
suites:
  quiz:
    kind: multiple-choice
    probes: [quiz/items.jsonl]
    slices: {dims}
test: null
baseline: none
"""


def write_suite(root: Path, rows: list[tuple[list[str], str, str]], dims: str = "[topic]") -> None:
    (root / "evalgate.yml").write_text(SUITE.format(dims=dims), encoding="utf-8")
    (root / "quiz").mkdir(exist_ok=True)
    recs = [
        {"id": f"q-{i:03d}", "prompt": f"Question number {i}?", "candidates": cands, "expected": cands[0],
         "slices": {"topic": topic}}
        for i, (cands, _, topic) in enumerate(rows)
    ]  # fmt: skip
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)
    (root / "quiz" / "items.jsonl").write_text(text, encoding="utf-8")


@pytest.fixture
def suite_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_greek_letters_in_maths_answers_and_whole_greek_or_cyrillic_suites_are_accepted(suite_dir, cli):
    rows = [
        (["2π", "π", "λ", "Ω"], "", "maths"),
        (["10 kΩ", "5 μm", "λmax", "πr²"], "", "physics"),
        (["Москва", "Париж", "Лондон", "Рим"], "", "география"),
        (["Αθήνα", "Σπάρτη", "Θήβα", "Κόρινθος"], "", "γεωγραφία"),
        (["ΔE = hν", "ΔH < 0", "E = mc²", "pH 7"], "", "physics"),
    ]
    write_suite(suite_dir, rows)
    got = cli("validate", "--format", "json")
    assert got.code == 0, got.out + got.err
    report = json.loads(got.out)
    assert not [f for f in report["findings"] if f["check"] == "confusable"]


@pytest.mark.parametrize(
    ("word", "letter"),
    [
        ("Mоscow", "U+043E CYRILLIC SMALL LETTER O"),  # a Latin word, one Cyrillic o
        ("Κilogram", "U+039A GREEK CAPITAL LETTER KAPPA"),  # a Latin word, one Greek capital kappa
        ("Мoсква", "U+006F LATIN SMALL LETTER O"),  # a Cyrillic word, one Latin o
        ("Αθηνа", "U+0430 CYRILLIC SMALL LETTER A"),  # a Greek word, one Cyrillic a
    ],
)
def test_a_word_mixing_scripts_through_a_look_alike_is_refused_naming_it(suite_dir, cli, word, letter):
    write_suite(suite_dir, [(["Paris", word, "Rome", "Oslo"], "", "geo")])
    got = cli("validate", "--format", "json")
    assert got.code == 2, got.out + got.err
    found = [f for f in json.loads(got.out)["findings"] if f["check"] == "confusable"]
    assert len(found) == 1 and letter in found[0]["message"], found
    assert (found[0]["file"], found[0]["line"], found[0]["probe_id"], found[0]["field"]) == (
        "quiz/items.jsonl", 1, "q-000", "candidates")  # fmt: skip


def test_two_candidates_that_differ_only_by_look_alikes_are_refused(suite_dir, cli):
    write_suite(suite_dir, [(["easy", "еаѕу", "hard", "none"], "", "geo")])  # the second is Cyrillic
    got = cli("validate", "--format", "json")
    assert got.code == 2, got.out + got.err
    found = [f for f in json.loads(got.out)["findings"] if f["check"] == "confusable"]
    assert any("items [0] and [1] read the same" in f["message"] for f in found), found


def test_slice_values_of_one_dimension_that_read_the_same_are_refused(suite_dir, cli):
    rows = [(["a", "b"], "", "easy"), (["c", "d"], "", "еаѕу"), (["e", "f"], "", "hard")]  # 2nd: Cyrillic
    write_suite(suite_dir, rows)
    got = cli("validate", "--format", "json")
    assert got.code == 2, got.out + got.err
    found = [f for f in json.loads(got.out)["findings"] if f["check"] == "slices"]
    assert [(f["line"], f["probe_id"], f["field"]) for f in found] == [(2, "q-001", "slices.topic")], found
    assert "reads the same as" in found[0]["message"]


def test_declared_slice_values_that_read_the_same_are_refused_in_the_config(suite_dir, cli):
    rows = [(["a", "b"], "", "easy"), (["c", "d"], "", "hard")]
    write_suite(suite_dir, rows, dims="{topic: [easy, еаѕу, hard]}")
    got = cli("validate")
    assert got.code == 2, got.out + got.err
    assert "suites.quiz.slices.topic" in got.err and "reads the same as" in got.err


@pytest.mark.parametrize(
    "cands",
    [
        ["8 μm", "8 mm", "8 cm"],  # Greek small mu beside Latin m: micro and milli
        ["η", "h", "τ"],  # efficiency, Planck's constant, time constant
        ["κ", "k", "c"],
        ["μ", "m", "k"],
        ["µ", "m", "k"],  # the micro sign, which NFKC makes a Greek mu
        ["в", "b", "т", "t", "н", "h"],  # Cyrillic small letters that do not look Latin
    ],
)
def test_small_greek_or_cyrillic_letters_beside_latin_ones_are_distinct_candidates(suite_dir, cli, cands):
    # the capital Κ looks like K; the small κ does not look like k: a look-alike is decided in the
    # letter's own case, never by folding the capital's pair onto the small letter
    write_suite(suite_dir, [(cands, "", "physics")])
    got = cli("validate", "--format", "json")
    assert got.code == 0, got.out + got.err
    assert not [f for f in json.loads(got.out)["findings"] if f["check"] == "confusable"]


@pytest.mark.parametrize("cands", [["Κ", "K", "c"], ["ΜΗ", "MH", "k"], ["Ка", "Ka", "c"]])
def test_capitals_that_look_latin_still_read_the_same(suite_dir, cli, cands):
    write_suite(suite_dir, [(cands, "", "physics")])
    got = cli("validate", "--format", "json")
    assert got.code == 2, got.out + got.err
    found = [f for f in json.loads(got.out)["findings"] if f["check"] == "confusable"]
    assert any("items [0] and [1] read the same" in f["message"] for f in found), found
