"""`evalgate init --leak-policy / --leak-window`: the `leaks:` keys of evalgate.yml, set from the
first command, so a team whose training text overlaps its items can get past init (docs/suites.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from helpers.paths import REPO

DEMO = REPO / "data" / "checkpoints" / "demo"
SUBJECTS = ("astronomy", "biology", "chemistry", "geology")


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo checkpoint, 40 MMLU-style rows, and training text that shares a 5-word window
    with item 7 and holds every word of its question ("Geology asks which choice answers question
    number 7 today": a 6-word run in common, so a leak at window 5 and none at 8), and holds item 9
    verbatim."""
    root = tmp_path / "repo"
    shutil.copytree(DEMO, root / "checkpoints" / "demo")
    rows = [
        {
            "question": f"In {SUBJECTS[i % 4]}, which choice answers question number {i}?",
            "subject": SUBJECTS[i % 4],
            "choices": [f"first {i}", f"second {i}", f"third {i}", f"fourth {i}"],
            "answer": i % 4,
        }
        for i in range(40)
    ]
    write_jsonl(root / "mmlu.jsonl", rows)
    write_jsonl(
        root / "overlap.jsonl", [{"text": "Geology asks which choice answers question number 7 today."}]
    )
    write_jsonl(
        root / "verbatim.jsonl", [{"text": "In biology, which choice answers question number 9? second 9"}]
    )
    monkeypatch.chdir(root)
    return root


def init(cli, *more: str):
    return cli("init", "--suite", "quiz", "--items", "mmlu.jsonl", "--from", "mmlu",
               "--checkpoint", "checkpoints/demo", *more)  # fmt: skip


def config(repo: Path) -> dict:
    return yaml.safe_load((repo / "evalgate.yml").read_text(encoding="utf-8"))


def test_a_bad_leak_window_is_refused_naming_the_flag_before_anything_is_written(repo, cli):
    before = sorted(p.name for p in repo.iterdir())
    refused = init(cli, "--leak-window", "1")
    assert refused.code == 2
    assert "--leak-window 1: the n-gram window is 2 to 50 words" in refused.out + refused.err
    assert sorted(p.name for p in repo.iterdir()) == before
    assert init(cli, "--leak-policy", "ignore").code == 2  # argparse's choices


@pytest.mark.slow
def test_init_writes_the_leak_window_it_was_given_and_validates_with_it(repo, cli):
    refused = init(cli, "--train", "overlap.jsonl")
    assert refused.code == 2 and "[leak-ngram]" in refused.out
    done = init(cli, "--train", "overlap.jsonl", "--leak-window", "8")
    assert done.code == 0, done.out + done.err
    assert config(repo)["leaks"] == {"window": 8}
    checked = cli("validate")
    assert checked.code == 0 and "0 leaks (exact, 8-gram)" in checked.out


@pytest.mark.slow
def test_init_with_leak_policy_exclude_leaves_the_leaking_item_out(repo, cli):
    assert init(cli, "--train", "verbatim.jsonl").code == 2
    done = init(cli, "--train", "verbatim.jsonl", "--leak-policy", "exclude")
    assert done.code == 0, done.out + done.err
    assert config(repo)["leaks"] == {"policy": "exclude"}
    said = "leaks: 1 leaking item(s) left out of the gated series (leaks.policy: exclude): quiz-mmlu-00010"
    assert said in done.out
    checked = cli("validate", "--format", "json")
    doc = json.loads(checked.out)
    assert checked.code == 0
    assert [w["check"] for w in doc["warnings"] if w["check"].startswith("leak")] == ["leaks-excluded"]


@pytest.mark.slow
def test_init_with_leak_policy_exclude_warns_of_a_slice_value_left_empty(repo, cli):
    # every biology item is in the training text: under `exclude` the whole slice value drops out
    # of the gate, which validate and run warn of (slice-empty), and so must init
    rows = [json.loads(line) for line in (repo / "mmlu.jsonl").read_text(encoding="utf-8").splitlines()]
    lines = [
        {"text": f"{r['question']} {r['choices'][r['answer']]}"} for r in rows if r["subject"] == "biology"
    ]
    write_jsonl(repo / "biology.jsonl", lines)
    done = init(cli, "--train", "biology.jsonl", "--leak-policy", "exclude")
    assert done.code == 0, done.out + done.err
    (warning,) = [line for line in done.out.splitlines() if "[slice-empty]" in line]
    assert "biology" in warning
    checked = cli("validate", "--format", "json")
    said = [w["message"] for w in json.loads(checked.out)["warnings"] if w["check"] == "slice-empty"]
    assert said and said[0] in warning
