"""Import does bounded work and refuses cleanly (docs/validate.md, "Bounded work"): a JSON
array's element lines in one pass, a huge candidate list checked in linear time, a 5,001-digit
answer index refused (exit 2, never 3), and the right hint for same-stem exports. The speed itself
is measured by bench/validate.py (a 100,000-row import), never timed here: the machine is shared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalgate.probeset.import_map import array_element_lines
from evalgate.probeset.items import read_item_file

CONFIG = """\
suites:
  quiz:
    kind: multiple-choice
    probes: [quiz/items.jsonl]
    slices: [subject]
test: null
baseline: none
"""


def test_json_array_element_lines_are_found_in_one_pass():
    row = {"question": "Question about something fairly long here?", "subject": "x",
           "choices": ["alpha", "beta", "gamma", "delta"], "answer": 1}  # fmt: skip
    rows = [row] * 15000
    data = json.dumps(rows, indent=1).encode()
    lines = array_element_lines(data)
    assert lines[1] == 2 and lines[2] == 13 and lines[15000] == 1 + 11 * 14999 + 1


@pytest.mark.parametrize(
    "candidates", [["x"] * 30000, [1, "a", None, {"k": 1}] * 7500], ids=["all-same", "mixed-types"]
)
def test_a_huge_candidate_list_is_refused_in_linear_time(candidates):
    rec = {
        "id": "big",
        "prompt": "Which one?",
        "candidates": candidates,
        "expected": "x",
        "slices": {"t": "a"},
    }
    got = read_item_file((json.dumps(rec) + "\n").encode(), "items.jsonl", {"t": None}, None)
    said = [f.message for f in got.findings if f.field == "candidates"]
    assert any(f"has {len(candidates)} items, at most 26 allowed" in m for m in said), said


@pytest.fixture
def suite(tmp_path, monkeypatch):
    (tmp_path / "quiz").mkdir()
    (tmp_path / "quiz" / "items.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "evalgate.yml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("name", ["big.jsonl", "big.csv"])
def test_a_5001_digit_answer_index_is_a_clean_refusal(suite, cli, name):
    big = "9" * 5001
    if name.endswith(".csv"):
        text = f'question,subject,choices,answer\n"Q one?",m,"[""a"",""b""]",{big}\n'
    else:
        text = json.dumps({"question": "Q one?", "subject": "m", "choices": ["a", "b"], "answer": big}) + "\n"
    (suite / name).write_text(text, encoding="utf-8")
    got = cli("probes", "import", name, "--suite", "quiz", "--from", "mmlu")
    assert got.code == 2, got.out + got.err
    assert "answer: index '9999" in got.out and "but only 2 choices" in got.out


def test_same_stem_exports_from_two_folders_get_the_row_number_hint(suite, cli):
    def export(folder: str, word: str) -> str:
        path = suite / folder / "mmlu.jsonl"
        path.parent.mkdir()
        rows = [{"question": f"{word} question {i}?", "subject": "m", "choices": ["a", "b"], "answer": 0}
                for i in range(2)]  # fmt: skip
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return str(Path(folder) / "mmlu.jsonl")

    assert cli("probes", "import", export("val", "First"), "--suite", "quiz", "--from", "mmlu").code == 0
    got = cli("probes", "import", export("test", "Second"), "--suite", "quiz", "--from", "mmlu")
    assert got.code == 2, got.out + got.err
    assert "was named after its row number, like a row of an earlier import" in got.out
    assert "would change that item" not in got.out
