"""Importing a second benchmark format (docs/suites.md, "Importing what you already have"): a
constant slice value for every row, a wrong `--from` named with the preset the file reads as,
and one mapping problem said once with the rows it affects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CONFIG = """\
suites:
  quiz:
    kind: multiple-choice
    probes: [quiz/items.jsonl]
    slices: [subject]
test: null
baseline: none
"""


def arc_rows(n: int) -> list[dict]:
    return [{"id": f"arc-{i}", "question": f"Which gas do plants take in, case {i}?",
             "choices": {"text": ["CO2", "O2", "N2", "He"], "label": ["A", "B", "C", "D"]}, "answerKey": "A"}
            for i in range(n)]  # fmt: skip


def mmlu_rows(n: int) -> list[dict]:
    return [{"question": f"What is {i} plus {i}?", "subject": "math", "choices": ["1", "2", "3", str(2 * i)],
             "answer": 3} for i in range(4, 4 + n)]  # fmt: skip


@pytest.fixture
def suite(tmp_path, monkeypatch):
    (tmp_path / "quiz").mkdir()
    (tmp_path / "quiz" / "items.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "evalgate.yml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(root: Path, name: str, rows: list[dict], array: bool = False) -> str:
    text = json.dumps(rows, indent=1) if array else "".join(json.dumps(r) + "\n" for r in rows)
    (root / name).write_text(text, encoding="utf-8")
    return name


def items(root: Path) -> list[dict]:
    return [json.loads(x) for x in (root / "quiz" / "items.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("spec", ["const:science=slices.subject", "slices.subject=const:science"])
def test_a_constant_slice_value_is_given_to_every_row(suite, cli, spec):
    got = cli("probes", "import", write(suite, "arc.jsonl", arc_rows(3)), "--suite", "quiz", "--from", "arc",
              "--map", spec)  # fmt: skip
    assert got.code == 0, got.out + got.err
    assert [i["slices"] for i in items(suite)] == [{"subject": "science"}] * 3


def test_a_value_written_as_a_target_is_refused_with_the_constant_spelling(suite, cli):
    got = cli("probes", "import", write(suite, "arc.jsonl", arc_rows(3)), "--suite", "quiz", "--from", "arc",
              "--map", "slices.subject=science")  # fmt: skip
    assert got.code == 2, got.out + got.err
    assert "write const:science=slices.subject" in got.err


def test_a_wrong_from_names_the_preset_the_file_reads_as(suite, cli):
    got = cli(
        "probes", "import", write(suite, "mmlu.jsonl", mmlu_rows(5)), "--suite", "quiz", "--from", "arc"
    )
    assert got.code == 2, got.out + got.err
    assert "not the --from arc layout; they read as --from mmlu" in got.out + got.err
    got = cli("probes", "import", write(suite, "arc.jsonl", arc_rows(5)), "--suite", "quiz", "--from", "mmlu")
    assert got.code == 2 and "they read as --from arc" in got.out + got.err


@pytest.mark.parametrize("array", [False, True])
def test_one_mapping_problem_is_said_once_with_its_rows(suite, cli, array):
    name = write(suite, "arc.json" if array else "arc.jsonl", arc_rows(49), array=array)
    got = cli("probes", "import", name, "--suite", "quiz", "--from", "arc")
    assert got.code == 2, got.out + got.err
    errors = [line for line in (got.out + got.err).splitlines() if line.strip().startswith("error:")]
    assert len(errors) == 1, errors
    word = "elements" if array else "rows"
    assert "no column maps to it" in errors[0] and f"({word} 1-49, 49 in all have no value)" in errors[0]


def test_the_same_row_problem_on_many_rows_is_one_line_naming_them(suite, cli):
    rows = mmlu_rows(30)
    for r in rows[10:]:
        r["answer"] = 9  # out of range on rows 11-30
    got = cli("probes", "import", write(suite, "mmlu.jsonl", rows), "--suite", "quiz", "--from", "mmlu")
    assert got.code == 2, got.out + got.err
    errors = [
        line for line in (got.out + got.err).splitlines() if "error:" in line and "[import-answer]" in line
    ]
    assert len(errors) == 1 and "(rows 11-30, 20 in all)" in errors[0], errors
