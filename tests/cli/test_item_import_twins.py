"""Twins in a multiple-choice suite (docs/authoring.md): `probes import` refuses an item that
repeats another's prompt and candidates unless `--allow-twins`, then lists them; `init` takes
them and says so; "Which of the following is true?" over other options is no twin."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from helpers.paths import REPO

CONFIG = """\
suites:
  quiz:
    kind: multiple-choice
    probes: [quiz/items.jsonl]
    slices: [topic]
test: null
baseline: none
"""


def item(i: int, prompt: str, cands: list[str]) -> dict:
    return {"id": f"q-{i:03d}", "prompt": prompt, "candidates": cands, "expected": cands[0],
            "slices": {"topic": "geo"}}  # fmt: skip


def jsonl(path: Path, recs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


@pytest.fixture
def suite(tmp_path, monkeypatch):
    (tmp_path / "quiz").mkdir()
    jsonl(tmp_path / "quiz" / "items.jsonl", [item(1, "Which river is longest?", ["Nile", "Volga", "Rhine"])])
    (tmp_path / "evalgate.yml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def new_rows(root: Path) -> Path:
    return jsonl(root / "new.jsonl", [
        item(2, "which  river is LONGEST?", ["Volga", "Nile", "Rhine"]),  # twin of q-001
        item(3, "Which of the following is true?", ["Oslo is in Norway", "Oslo is in Peru"]),
        item(4, "Which of the following is true?", ["Lima is in Peru", "Lima is in Chad"]),  # not a twin
        item(5, "Which sea is saltiest?", ["Dead Sea", "Red Sea"]),
        item(6, "Which sea is saltiest?", ["Red Sea", "Dead Sea"]),  # twin of row 4 (q-005)
    ])  # fmt: skip


def test_import_refuses_twins_naming_each_row_and_the_item_it_repeats(suite, cli):
    before = (suite / "quiz" / "items.jsonl").read_bytes()
    new_rows(suite)
    got = cli("probes", "import", "new.jsonl", "--suite", "quiz")
    assert got.code == 2, got.out + got.err
    found = re.findall(r"error: new\.jsonl:(\d+): (q-\d+): prompt: (.*) \[twin\]", got.out + got.err)
    assert [(int(line), pid) for line, pid, _ in found] == [(1, "q-002"), (5, "q-006")], got.out
    assert (
        "repeat item q-001's (quiz/items.jsonl:1)" in found[0][2] and "q-005's (new.jsonl:4)" in found[1][2]
    )
    assert (suite / "quiz" / "items.jsonl").read_bytes() == before  # nothing imported


def test_import_with_allow_twins_adds_them_and_lists_them(suite, cli):
    got = cli("probes", "import", new_rows(suite), "--suite", "quiz", "--allow-twins")
    assert got.code == 0, got.out + got.err
    assert "accepted with --allow-twins: 2 twin(s)" in got.out
    assert "q-002" in got.out and "q-006" in got.out
    assert len((suite / "quiz" / "items.jsonl").read_text(encoding="utf-8").splitlines()) == 6
    warned = json.loads(cli("validate", "--format", "json").out)["warnings"]
    assert sorted(w["probe_id"] for w in warned if w["check"] == "twin") == ["q-002", "q-006"]


@pytest.mark.slow
def test_init_imports_twins_and_lists_them(tmp_path, monkeypatch, cli):
    root = tmp_path / "repo"
    shutil.copytree(REPO / "data" / "checkpoints" / "demo", root / "checkpoints" / "demo")
    rows = [{"question": f"Which choice answers question number {i}?", "subject": "astronomy",
             "choices": [f"a{i}", f"b{i}", f"c{i}", f"d{i}"], "answer": 0} for i in range(12)]  # fmt: skip
    rows.append(dict(rows[3]))  # a twin of row 4
    jsonl(root / "mmlu.jsonl", rows)
    monkeypatch.chdir(root)
    got = cli(
        "init",
        "--suite",
        "quiz",
        "--items",
        "mmlu.jsonl",
        "--from",
        "mmlu",
        "--checkpoint",
        "checkpoints/demo",
    )
    assert got.code == 0, got.out + got.err
    assert "warning: 1 item(s) of mmlu.jsonl repeat another item's prompt and candidates" in got.out
    assert "mmlu.jsonl:13:" in got.out
