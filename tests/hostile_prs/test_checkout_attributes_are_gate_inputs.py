"""Hostile PR: a file that rewrites what a checkout writes, left unscored (review round 3).

The scope decision compares git objects; the gate reads checked-out files. `.gitattributes` (eol,
text, working-tree-encoding, ident, a filter such as Git LFS), `.lfsconfig` (where LFS objects come
from) and `.gitmodules` (what a submodule path holds) change those bytes without changing a blob
the gate reads. A PR that adds one was "not relevant": green without scoring, and every later
checkout of the merged tree fed the gate other bytes than the baseline's. A change to any of them,
in any folder, now makes the PR relevant: it is scored, and what it does to the bytes is judged.

The whole-job case plays eval-gate.yml (helpers/hostile_pr.py); the variants run the scope
decision the workflow runs, `python -P -m evalgate.edges.pr_scope`, on real git repositories
(helpers/pr_repo.py).
"""

from __future__ import annotations

import pytest
from helpers.hostile_pr import GitHubRepo
from helpers.pr_repo import DELETE, repo_with, scope

DEMO = "data/checkpoints/demo"


@pytest.mark.slow
def test_a_gitattributes_file_never_changes_the_bytes_a_later_gate_run_reads(github_repo: GitHubRepo):
    """A PR adds only `.gitattributes` (`data/checkpoints/demo/tokenizer.json text eol=crlf`): no
    blob the scope counted changed, so it passed without scoring; once merged, every checkout wrote
    the tokenizer with CRLF line ends, another SHA-256 than the baseline's, and every later honest
    PR was refused as a gate change. Now the PR itself is scored, and its `.gitattributes` is a
    gate change of its own (kind base_input), refused until a maintainer approves it
    (tests/hostile_prs/test_checkout_configuration_is_a_gate_change.py)."""

    def plant(tree) -> None:
        (tree / ".gitattributes").write_text(f"{DEMO}/tokenizer.json text eol=crlf\n")

    pr = github_repo.pull_request(plant, branch="attrs")
    job = github_repo.run_gate(pr)
    scope_step = job.step("scope")
    assert scope_step.outputs.get("relevant") == "true", job.explain()
    assert "'.gitattributes', which decides the bytes a checkout writes" in scope_step.log, job.explain()
    assert job.conclusion == "failure", job.explain()
    assert job.step("Gate").outputs.get("verdict") == "refused", job.explain()
    assert ".gitattributes" in job.summary, job.summary[-3000:]


BASE = {
    "evalgate.yml": "checkpoint: models/mine\nbaseline: baselines/mine.json\n",
    "baselines/mine.json": "{}\n",
    "models/mine/tokenizer.json": '{"model": {}}\n',
    "docs/notes.md": "notes\n",
}


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (".gitattributes", "models/mine/tokenizer.json text eol=crlf\n"),
        (".gitattributes", "* ident\n"),
        (".gitattributes", "*.jsonl working-tree-encoding=UTF-16\n"),
        (".gitattributes", "models/** filter=lfs diff=lfs merge=lfs -text\n"),
        ("models/.gitattributes", "mine/tokenizer.json text eol=crlf\n"),
        (
            "docs/.gitattributes",
            "*.md text eol=crlf\n",
        ),  # a folder the gate does not read: scored all the same
        (".GitAttributes", "* text eol=crlf\n"),  # what a case-insensitive checkout reads
        (".lfsconfig", "[lfs]\n\turl = https://lfs.attacker.example/acme/models\n"),
        (
            ".gitmodules",
            '[submodule "models/mine"]\n\tpath = models/mine\n\turl = https://example.invalid/w\n',
        ),
    ],
)
def test_a_file_that_decides_the_checked_out_bytes_makes_the_pr_relevant(tmp_path, path, text):
    work, sha = repo_with(tmp_path, BASE, {path: text})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.relevant, result.err
    assert f"the PR changes {path!r}, which decides the bytes a checkout writes" in result.err


@pytest.mark.parametrize("path", [".gitattributes", "models/.gitattributes", ".lfsconfig"])
def test_removing_or_editing_one_is_a_change_too(tmp_path, path):
    base = {**BASE, path: "models/** -text\n"}
    for n, pr in enumerate(({path: DELETE}, {path: "models/** text eol=lf\n"})):
        (tmp_path / str(n)).mkdir()
        work, sha = repo_with(tmp_path / str(n), base, pr)
        result = scope(work, sha)
        assert result.code == 0, result.err
        assert result.relevant, (pr, result.err)


def test_a_pr_that_changes_none_of_them_and_nothing_the_gate_reads_is_still_not_relevant(tmp_path):
    """The control: a file named like them but something else (`docs/gitattributes.md`)."""
    work, sha = repo_with(tmp_path, BASE, {"docs/gitattributes.md": "how we use attributes\n"})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert not result.relevant, result.err
