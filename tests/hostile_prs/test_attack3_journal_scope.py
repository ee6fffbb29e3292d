"""Attack round (attack3): a journal the gate never looks at before the merge.

`run`, `validate` (probeset_io.refuse_unfinished_update, edges/journal.refuse_pending) refuse a set
or a baseline folder holding `.evalgate-journal.json`. The scope decision (github/pr_scope.py)
does not count that file as a gate input when the folder it sits in is not itself one (a baseline
kept at `eval/baseline.json`, a manifest at `evals/MANIFEST.json`, both supported layouts): the
PR that adds it is "not relevant", passes unscored, and once merged every later gate run (every
PR, the badge) is refused (exit 2) until someone deletes it by hand.
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


def test_a_merged_gitattributes_never_breaks_the_history_of_later_checkouts(tmp_path, monkeypatch, cli):
    """Attack: a PR adds `.gitattributes` with `baselines/** text eol=crlf`. It is scored (a
    checkout file), and its run passes: the restore step writes the baseline and its history from
    git's blobs, raw. Once merged, every plain checkout writes baselines/demo.json with CRLF: the
    baseline's SHA-256 is no longer the one the history's last line names, and the history check
    refuses (exit 2) every honest run that reads a checkout: update-baseline-apply.yml's `baseline
    update` (the label flow can never write a baseline again), badge.yml's run on main, a
    maintainer's local `run`/`validate`."""
    import shutil as sh

    from helpers.hostile_repo import make_repo
    from helpers.workflow_steps import commit, git

    if not sh.which("git"):
        pytest.skip("git is not installed")
    repo = make_repo(tmp_path, monkeypatch)
    got = cli("baseline", "anchor", "--name", "demo")  # the default branch has a history
    assert got.code == 0, got.err
    git("init", "-q", "-b", "main", cwd=repo)
    commit(repo, "main with a history")
    assert cli("validate").code == 0
    (repo / ".gitattributes").write_text("baselines/** text eol=crlf\n", encoding="utf-8")
    commit(repo, "the PR: normalise line endings")
    git("rm", "-q", "-r", "--cached", "baselines", cwd=repo)
    sh.rmtree(repo / "baselines")
    git("checkout", "HEAD", "--", "baselines", cwd=repo)  # a fresh checkout, as actions/checkout writes it
    assert b"\r\n" in (repo / "baselines" / "demo.json").read_bytes()
    got = cli("validate")
    assert got.code == 0, ("an honest run refused after a merged .gitattributes", got.code, got.err[-400:])
