"""Hostile PR: the bot vouches for a verdict the PR's own workflow produced (review round 3).

A `pull_request` run executes the workflow file of the PR's merge commit, so a PR that rewrites
.github/workflows/eval-gate.yml runs a gate of its own making, under exactly the path and event
eval-gate-comment.yml checks, and can upload an earlier passing results.json naming its head. The
comment job (`evalgate comment`, holding a write token) now asks the API what the run's head
changes against the PR's base, which must be the default branch: a head that changes the gate's
workflow or action (`.github/`, `action.yml`, `docker/`), a PR into another branch, or an answer
cut or unavailable gets a comment that says the run carries no verdict and what decides instead.

The whole-job cases play the PR's gate run and then eval-gate-comment.yml's `comment` job (the
default branch's file) with the repository stand-in answering from the real git objects
(helpers/hostile_pr.py, helpers/workflow_runner.py); the variants run `evalgate comment` against
the GitHub stand-in on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.github_standin import FakeGitHub
from helpers.hostile_pr import GitHubRepo, PullRequest, git, swap_in_regressed
from helpers.paths import GOLDEN

from evalgate.cli import main
from evalgate.github.sticky import BOT_LOGIN

FORGED_GATE = """\
name: eval-gate
on:
  pull_request:
    types: [opened, synchronize, reopened, labeled, unlabeled]
permissions: {}
jobs:
  gate:
    runs-on: ubuntu-24.04
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          persist-credentials: false
      - name: Gate
        env:
          HEAD_SHA: ${{ github.event.pull_request.head.sha }}
        run: |
          mkdir -p "$RUNNER_TEMP/r"
          cp .ci/results.json "$RUNNER_TEMP/r/results.json"
          printf '{"head_sha": "%s"}\\n' "$HEAD_SHA" > "$RUNNER_TEMP/r/head.json"
      - name: Upload the report
        uses: actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2
        with:
          name: evalgate-report
          path: |
            ${{ runner.temp }}/r/results.json
            ${{ runner.temp }}/r/head.json
"""


@pytest.fixture(scope="module")
def good_results(tmp_path_factory, origin_template) -> bytes:
    """results.json of a real, passing run of the good checkpoint (any clone can make one)."""
    tree = tmp_path_factory.mktemp("good-results") / "tree"
    subprocess.run(["git", "clone", "-q", str(origin_template), str(tree)], check=True)
    run = subprocess.run(
        [sys.executable, "-m", "evalgate", "run", "--out", "out"],
        cwd=tree,
        capture_output=True,
        text=True,
        env={**os.environ, "EVALGATE_HOME": str(tree), "PYTHONSAFEPATH": "1"},
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    return (tree / "out" / "results.json").read_bytes()


def play_comment_job(github_repo: GitHubRepo, pr: PullRequest, gate_run_id: int):
    """eval-gate-comment.yml's `comment` job (the default branch's file) for the gate run."""
    from helpers.workflow_runner import Runner

    run = next(r for r in github_repo.api.runs if r["id"] == gate_run_id)
    workspace = github_repo.root / f"ws-comment-{gate_run_id}"
    git("clone", "-q", str(github_repo.origin), str(workspace), cwd=github_repo.root)
    event = {
        "action": "completed",
        "workflow_run": {
            **run,
            "path": ".github/workflows/eval-gate.yml",
            "event": "pull_request",
            "conclusion": "success",
            "repository": {"full_name": "acme/models"},
            "head_repository": {"full_name": "acme/models"},
        },
        "repository": {"full_name": "acme/models", "default_branch": "main"},
    }
    runner = Runner(
        github_repo.root / f"runner-comment-{gate_run_id}",
        repository="acme/models",
        event_name="workflow_run",
        event=event,
        sha=git("rev-parse", "HEAD", cwd=workspace),
        ref="refs/heads/main",
        api_url=github_repo.api.url,
        sources={"acme/models": github_repo.origin},
        run_id=gate_run_id + 100000,
        actor="mallory",
    )
    wf = workspace / ".github" / "workflows" / "eval-gate-comment.yml"
    return runner.run_job(wf, "comment", workspace)


@pytest.mark.slow
def test_the_bot_never_posts_a_verdict_from_a_run_of_the_prs_own_gate_workflow(
    github_repo: GitHubRepo, good_results: bytes
):
    """The PR swaps in the regressed weights and rewrites eval-gate.yml to upload a results.json of
    an earlier passing run of the good model (schema-valid, head.json naming this head). The
    comment job rendered it: the bot's sticky comment said "pass" for the regressed checkpoint,
    with the run link and conclusion as its provenance."""

    def attack(tree: Path) -> None:
        swap_in_regressed(tree)
        (tree / ".ci").mkdir()
        (tree / ".ci" / "results.json").write_bytes(good_results)
        (tree / ".github" / "workflows" / "eval-gate.yml").write_text(FORGED_GATE)

    pr = github_repo.pull_request(attack)
    gate = github_repo.run_gate(pr)
    assert gate.conclusion == "success", gate.explain()  # the PR's own workflow: green, as on GitHub
    job = play_comment_job(github_repo, pr, github_repo.api.runs[-1]["id"])
    assert job.conclusion == "success", job.explain()
    (body,) = [c["body"] for c in github_repo.api.comments.get(pr.number, [])]
    assert "evalgate: pass" not in body and "verdict=pass" not in body, body
    assert "## ⚠️ evalgate: no verdict from this run" in body, body
    assert "`.github/workflows/eval-gate.yml`" in body and "required" in body, body
    assert body.rstrip().endswith("<!-- evalgate:report verdict=none -->"), body


@pytest.mark.slow
def test_the_bot_still_posts_the_verdict_of_the_default_branchs_workflow(github_repo: GitHubRepo):
    """The control: a PR that swaps in the regressed weights and leaves the gate alone gets the
    gate's own verdict, fail, from the same comment job."""
    pr = github_repo.pull_request(swap_in_regressed)
    gate = github_repo.run_gate(pr)
    assert gate.conclusion == "failure", gate.explain()
    job = play_comment_job(github_repo, pr, github_repo.api.runs[-1]["id"])
    assert job.conclusion == "success", job.explain()
    (body,) = [c["body"] for c in github_repo.api.comments.get(pr.number, [])]
    assert "## ❌ evalgate: fail" in body and body.rstrip().endswith("verdict=fail -->"), body


# -- the variants, through `evalgate comment` and the GitHub stand-in --------------------------------

GH_REPO = "octo/gate"
SHA = "ab" * 20
PR = 13


def passing_results() -> dict:
    doc = json.loads((GOLDEN / "REPORT-fail.results.json").read_text(encoding="utf-8"))
    doc["verdict"] = "pass"  # schema-valid: what a PR's own workflow can upload
    return doc


@pytest.fixture
def gh(tmp_path, monkeypatch):
    server = FakeGitHub().start()
    server.compare_files = {}
    server.pulls = [
        {
            "number": PR,
            "state": "open",
            "head": {"sha": SHA, "ref": "feature", "repo": {"full_name": GH_REPO}},
        }
    ]
    event = {
        "workflow_run": {
            "head_sha": SHA,
            "html_url": "https://github.com/octo/gate/actions/runs/4242",
            "conclusion": "success",
            "head_branch": "feature",
            "head_repository": {"full_name": GH_REPO},
        }
    }
    (tmp_path / "event.json").write_text(json.dumps(event), encoding="utf-8")
    for key, value in {
        "GITHUB_TOKEN": "ghs-installation",
        "GITHUB_REPOSITORY": GH_REPO,
        "GITHUB_API_URL": server.url,
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }.items():
        monkeypatch.setenv(key, value)
    folder = tmp_path / "artifact"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(passing_results()), encoding="utf-8")
    (folder / "head.json").write_text(json.dumps({"head_sha": SHA}), encoding="utf-8")
    server.artifact = folder
    yield server
    server.stop()


def comment(gh: FakeGitHub) -> str:
    assert main(["comment", "--report", str(gh.artifact), "--sha", SHA]) == 0
    (mine,) = gh.by(PR, BOT_LOGIN)
    return mine["body"]


def files(*names: str) -> list[dict]:
    return [{"filename": n, "status": "modified"} for n in names]


@pytest.mark.parametrize(
    ("changed", "shown"),
    [
        (files(".github/workflows/eval-gate.yml"), ".github/workflows/eval-gate.yml"),
        (files("data/x.bin", ".github/workflows/other.yml"), ".github/workflows/other.yml"),
        (files(".github/actions/setup/action.yml"), ".github/actions/setup/action.yml"),
        (files(".github/CODEOWNERS"), ".github/CODEOWNERS"),
        (files("action.yml"), "action.yml"),
        (files("docker/Dockerfile"), "docker/Dockerfile"),
        (files(".GitHub/workflows/eval-gate.yml"), ".GitHub/workflows/eval-gate.yml"),
        ([{"filename": "x.yml", "previous_filename": ".github/workflows/a.yml"}], ".github/workflows/a.yml"),
    ],
)  # fmt: skip
def test_a_head_that_changes_the_gates_workflow_or_action_gets_no_verdict(gh, changed, shown):
    gh.compare_files[SHA] = changed
    body = comment(gh)
    assert "evalgate: pass" not in body and "verdict=none -->" in body, body
    assert "no verdict from this run" in body and f"`{shown}`" in body, body
    asked = [p for m, p in gh.log if "/compare/" in p]
    assert asked and asked[0].endswith(f"/compare/main...{SHA}"), gh.log


@pytest.mark.parametrize(
    "case", ["compare-unavailable", "compare-cut-at-300", "no-files", "pr-unavailable", "another-base"]
)
def test_what_cannot_be_told_gets_no_verdict(gh, case):
    if case == "compare-unavailable":
        gh.compare_files[SHA] = None
    elif case == "compare-cut-at-300":
        gh.compare_files[SHA] = files(*(f"data/items/{i}.jsonl" for i in range(300)))
    elif case == "no-files":
        gh.fail("GET", r"/compare/", 200, body={"status": "ahead"})
    elif case == "pr-unavailable":
        gh.fail("GET", rf"/pulls/{PR}$", 404)
    else:
        gh.pulls[0]["base"] = {"ref": "staging"}
    body = comment(gh)
    assert "evalgate: pass" not in body and "verdict=none -->" in body, body
    if case == "another-base":
        assert "targets the branch `staging`, not the default branch `main`" in body, body


def test_a_head_that_leaves_the_gate_alone_gets_its_verdict(gh):
    gh.compare_files[SHA] = files("data/checkpoints/demo/model.safetensors", "docs/github.md")
    body = comment(gh)
    assert "## ✅ evalgate: pass" in body and body.rstrip().endswith("verdict=pass -->"), body
