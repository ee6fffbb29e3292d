"""A committed update journal makes the pull request relevant, wherever it sits.

Attack (attack3): `run` and `validate` refuse a probe set or baseline folder holding
`.evalgate-journal.json` (edges/journal.py, `refuse_unfinished_update`). The scope
decision (github/pr_scope.py) counted that file only inside a folder that is itself a gate input,
so with a baseline kept at `eval/baseline.json` or a manifest at `evals/MANIFEST.json` (both
supported layouts) the PR adding it was "not relevant", passed unscored, and once merged every
later gate run was refused until someone deleted it by hand. Defence: any changed path named
`.evalgate-journal.json` or `.NAME.evalgate-new` (in any folder) makes the PR relevant, so the gate
runs and refuses it; and `validate` refuses a journal beside the baseline as `run` does.
"""

from __future__ import annotations

import json

import pytest
from helpers.pr_repo import repo_with, scope

JOURNAL = ".evalgate-journal.json"


def journal(target: str) -> str:
    return json.dumps({"replace": [{"target": target, "staged": f".{target}.evalgate-new"}]}) + "\n"


@pytest.mark.parametrize(
    ("base", "pr"),
    [
        (
            {
                "evalgate.yml": "checkpoint: models/mine\nbaseline: eval/baseline.json\n",
                "eval/baseline.json": "{}\n",
            },
            {f"eval/{JOURNAL}": journal("baseline.json"), "eval/.baseline.json.evalgate-new": "{}\n"},
        ),
        (
            {
                "evalgate.yml": "checkpoint: models/mine\nbaseline: baselines/mine.json\n"
                "probes: [evals/items.jsonl]\nmanifest: evals/MANIFEST.json\n",
                "baselines/mine.json": "{}\n",
                "evals/items.jsonl": "{}\n",
                "evals/MANIFEST.json": "{}\n",
            },
            {f"evals/{JOURNAL}": journal("items.jsonl"), "evals/.items.jsonl.evalgate-new": "{}\n"},
        ),
    ],
    ids=["beside-a-baseline-outside-baselines", "beside-a-manifest-outside-data-eval"],
)
def test_a_journal_beside_a_gate_input_makes_the_pr_relevant(tmp_path, base, pr):
    work, sha = repo_with(tmp_path, base, pr)
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.relevant, "a journal every later gate run refuses is merged unscored"


@pytest.mark.parametrize(
    "added",
    [
        {f"anywhere/deep/{JOURNAL}": "{}\n"},
        {"anywhere/.baseline.json.evalgate-new": "{}\n"},
        {"eval/.Evalgate-Journal.json": "{}\n"},
    ],
    ids=["journal-in-any-folder", "staged-file-alone", "journal-in-other-case"],
)
def test_a_journal_file_in_any_folder_makes_the_pr_relevant(tmp_path, added):
    base = {
        "evalgate.yml": "checkpoint: models/mine\nbaseline: eval/baseline.json\n",
        "eval/baseline.json": "{}\n",
    }
    work, sha = repo_with(tmp_path, base, added)
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.relevant, ("a journal file merged unscored", added)
    assert "unfinished update" in result.err, result.err


def test_validate_refuses_a_journal_beside_the_baseline_as_run_does(tmp_path, monkeypatch, cli):
    from helpers.hostile_repo import make_repo

    repo = make_repo(tmp_path, monkeypatch)
    assert cli("validate").code == 0
    (repo / "baselines" / JOURNAL).write_text(journal("demo.json"), encoding="utf-8")
    got = cli("validate")
    assert got.code == 2 and "unfinished baseline update" in got.err, (got.code, got.err[-600:])
    got = cli("run", "--checkpoint", "data/checkpoints/demo", "--out", tmp_path / "out")
    assert got.code == 2 and "unfinished baseline update" in got.err, (got.code, got.err[-600:])
