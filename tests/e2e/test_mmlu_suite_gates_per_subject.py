"""An MMLU-style export gated per subject, end to end through the real CLI and real models
(issue 13, "Must show"; docs/suites.md).

The rows are the shipped verb-form probes written in the shape of an MMLU export (`question`,
`choices`, `answer` index, `subject`), with the tense as the subject: the shipped demo model
knows them, and the shipped regressed model lost its irregular past tenses. So the suite gates per
subject with real checkpoints: the demo passes its own baseline, the regressed model fails naming
the subject it lost.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from helpers.paths import REPO, allow_shipped_data

DEMO = REPO / "data" / "checkpoints" / "demo"
REGRESSED = REPO / "data" / "checkpoints" / "demo-regressed"

CONFIG = f"""\
suites:
  verbs:
    kind: multiple-choice
    probes: [evals/verbs/items.jsonl]
    slices: [subject]
    train: [corpus/train.jsonl]
    coverage: {{min_per_value: 30}}
test: null
baseline: baselines/verbs.json
checkpoint: {DEMO}
"""


def mmlu_rows() -> list[dict]:
    rows = []
    for line in (REPO / "data" / "eval" / "probes.jsonl").read_text(encoding="utf-8").splitlines():
        p = json.loads(line)
        if p["label"] != "correct" or p.get("kind", "form") != "form":
            continue
        rows.append(
            {
                "question": p["prompt"],
                "subject": p["tense"],
                "choices": p["candidates"],
                "answer": p["candidates"].index(p["expected"]),
            }
        )
    return rows


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "out" not in p.parts
    }


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / "corpus").mkdir()
    shutil.copy(REPO / "data" / "corpus" / "train.jsonl", tmp_path / "corpus" / "train.jsonl")
    (tmp_path / "evals" / "verbs").mkdir(parents=True)
    (tmp_path / "evalgate.yml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    allow_shipped_data(monkeypatch)  # the checkpoints are the repository's, named by the operator
    return tmp_path


@pytest.mark.slow
def test_an_mmlu_export_imports_and_gates_per_subject(repo, cli):
    rows = mmlu_rows()
    assert len(rows) >= 300
    export = write_rows(repo / "export.jsonl", rows)
    got = cli("probes", "import", str(export), "--suite", "verbs", "--from", "mmlu")
    assert got.code == 0, got.out + got.err
    items = [json.loads(x) for x in (repo / "evals/verbs/items.jsonl").read_text().splitlines()]
    assert len(items) == len(rows) and items[0]["slices"] == {"subject": rows[0]["subject"]}
    assert (repo / "evals/verbs/MANIFEST.json").is_file()

    assert cli("baseline", "update", "--name", "verbs").code == 0
    got = cli("run", "--out", "out")
    assert got.code == 0, got.err
    res = json.loads((repo / "out" / "results.json").read_text(encoding="utf-8"))
    assert res["verdict"] == "pass"
    gated = {k for k, r in res["comparison"]["slices"].items() if r["gated"]}
    assert {"overall", "subject:past_simple", "subject:future", "subject:present_simple"} <= gated

    got = cli("run", "--checkpoint", str(REGRESSED), "--out", "out")
    assert got.code == 1
    res = json.loads((repo / "out" / "results.json").read_text(encoding="utf-8"))
    assert "subject:past_simple" in res["comparison"]["regressed"]
    assert any(r.startswith("subject:past_simple: accuracy") for r in res["reasons"])
    assert "subject:future" not in res["comparison"]["regressed"]


def test_a_bad_row_among_good_ones_changes_nothing(repo, cli):
    rows = mmlu_rows()
    rows[57] = {**rows[57], "answer": 9}
    export = write_rows(repo / "export.jsonl", rows)
    before = snapshot(repo)
    got = cli("probes", "import", str(export), "--suite", "verbs", "--from", "mmlu")
    assert got.code == 2
    assert snapshot(repo) == before
    assert "export.jsonl:58" in got.out + got.err and "answer" in got.out + got.err


def test_an_item_leaked_into_the_suites_training_file_is_refused_naming_the_line(repo, cli):
    rows = mmlu_rows()
    train = (repo / "corpus" / "train.jsonl").read_text(encoding="utf-8").splitlines()
    line = 1234
    sentence = json.loads(train[line - 1])["text"]
    words = sentence.split(" ")
    question = " ".join(["___", *words[1:]])
    rows.append({"question": question, "subject": "future", "choices": [words[0], "Nobody"], "answer": 0})
    export = write_rows(repo / "export.jsonl", rows)
    before = snapshot(repo)
    got = cli("probes", "import", str(export), "--suite", "verbs", "--from", "mmlu")
    assert got.code == 2
    assert snapshot(repo) == before
    text = got.out + got.err
    assert f"corpus/train.jsonl:{line}" in text and "leak" in text
