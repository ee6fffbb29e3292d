"""Hostile PR: a pull request into a branch its author prepared is gated by that branch (review round 3).

The gate takes its code, configuration and baseline from the PR's base commit. Only the default
branch's are the repository's yardstick: a PR into any other branch (a `staging` a writer pushed
with a baseline measured on the regressed model, an old release branch with an older gate) is
refused (exit 2) before anything of that branch is checked out or run, with the instruction to
retarget it; retargeting (`edited`) runs the gate again. Played with the whole `gate` job
(helpers/hostile_pr.py) and with the step's script from eval-gate.yml and the init template.
"""

from __future__ import annotations

import subprocess

import pytest
import yaml
from helpers.hostile_pr import REGRESSED, GitHubRepo, attackers_evalgate, git, swap_in_regressed
from helpers.workflow_steps import load, run_script, step

from evalgate.github.workflows import gate_workflow

STEP = "Refuse a pull request into a branch other than the default one"


@pytest.fixture(scope="module")
def regressed_baseline(tmp_path_factory, origin_template) -> bytes:
    """baselines/demo.json as the regressed checkpoint writes it (scored once per module)."""
    tree = tmp_path_factory.mktemp("regressed-baseline") / "tree"
    subprocess.run(["git", "clone", "-q", str(origin_template), str(tree)], check=True)
    run = attackers_evalgate(tree, "run", "--checkpoint", REGRESSED, "--baseline", "none", "--out", "out")
    assert run.returncode == 0, run.stderr
    made = attackers_evalgate(
        tree, "baseline", "update", "--from-results", "out/results.json", "--name", "demo"
    )
    assert made.returncode == 0, made.stderr
    return (tree / "baselines" / "demo.json").read_bytes()


@pytest.mark.slow
def test_a_pr_into_a_branch_other_than_the_default_is_not_gated_by_that_branch(
    github_repo: GitHubRepo, regressed_baseline: bytes
):
    """A writer pushes a branch `staging` (main plus a baseline measured on the regressed model)
    and opens the PR that swaps in the regressed weights with `staging` as its base. eval-gate.yml
    took the trusted code, configuration and baseline from `pull_request.base.sha`, whatever branch
    that is: the regressed checkpoint passed, and the green `gate` check sat on the PR's head."""
    clone = github_repo.clone("mallory-staging")
    git("checkout", "-q", "-b", "staging", "origin/main", cwd=clone)
    staging = github_repo.commit(
        clone,
        lambda tree: (tree / "baselines" / "demo.json").write_bytes(regressed_baseline),
        "staging: refresh the baseline",
        "mallory",
    )
    git("push", "-q", "origin", "HEAD:refs/heads/staging", cwd=clone)
    github_repo.base_sha = staging  # the PR's base: staging, not main
    pr = github_repo.pull_request(swap_in_regressed, branch="feature")
    github_repo.api.pulls[pr.number].base_ref = "staging"
    job = github_repo.run_gate(pr)
    assert job.conclusion == "failure", job.explain()
    assert job.step("Gate").outputs.get("verdict") != "pass", job.explain()
    refusal = job.step(STEP)
    assert refusal.outcome == "failure", job.explain()
    assert "Retarget the pull request at 'main'" in refusal.log, refusal.log
    # Nothing of the staging branch ran: no install, no scope decision, no scoring.
    assert all(s.outcome == "skipped" for s in job.steps[job.steps.index(refusal) + 1 :]), job.explain()


PIN = "acme/evalgate@" + "a" * 40


def workflows() -> dict[str, dict]:
    return {"eval-gate.yml": load("eval-gate.yml"), "init template": yaml.safe_load(gate_workflow(PIN))}


@pytest.mark.parametrize("name", ["eval-gate.yml", "init template"])
@pytest.mark.parametrize(
    ("base_ref", "default", "refused"),
    [
        ("main", "main", False),
        ("staging", "main", True),
        ("release/1.x", "main", True),
        ("Main", "main", True),  # branch names are case-sensitive
        ("main", "", True),  # an event without the default branch: nothing to compare with
        ("50%off", "main", True),
    ],
)
def test_the_gate_refuses_any_base_but_the_default_branch_before_anything_runs(
    tmp_path, name, base_ref, default, refused
):
    wf = workflows()[name]
    first = wf["jobs"]["gate"]["steps"][0]
    assert first.get("name") == STEP, (
        "the refusal is the job's first step: nothing of the base runs before it"
    )
    summary = tmp_path / "summary.md"
    done = run_script(
        step(wf, STEP)["run"],
        tmp_path,
        {"BASE_REF": base_ref, "DEFAULT_BRANCH": default, "GITHUB_STEP_SUMMARY": str(summary)},
    )
    if not refused:
        assert done.returncode == 0, done.stderr
        assert done.stdout == "" and not summary.exists()
        return
    assert done.returncode == 2, done.stdout + done.stderr
    line = done.stdout.strip()
    assert line.startswith("::error title=evalgate::") and line.count("\n") == 0, line
    assert "Retarget the pull request at" in line, line
    assert "%" not in line.replace("%25", ""), "a % in a branch name is escaped in the workflow command"
    assert "evalgate: refused:" in summary.read_text()


@pytest.mark.parametrize("name", ["eval-gate.yml", "init template"])
def test_retargeting_a_pr_runs_the_whole_gate_again(name):
    """`edited` (a new title, body or base) starts the gate; it is never skipped by a job-level
    `if:` (a skipped job reports success to a required check), and the concurrency group keeps one
    run per PR, the newest."""
    wf = workflows()[name]
    on = wf.get("on", wf.get(True))
    assert set(on) == {"pull_request"}
    assert "edited" in on["pull_request"]["types"]
    assert {"opened", "synchronize", "reopened"} <= set(on["pull_request"]["types"])
    assert "if" not in wf["jobs"]["gate"]
    assert wf["concurrency"] == {
        "group": "eval-gate-${{ github.event.pull_request.number }}",
        "cancel-in-progress": True,
    }
