"""The comment and baseline-update workflows keep PR code away from write tokens (docs/approval.md):
their YAML structure, and the push step run for real against throwaway git repositories. The
hostile cases against the same workflows are in tests/hostile_prs/test_privileged_workflows.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers.paths import REPO

WORKFLOWS = REPO / ".github" / "workflows"


def load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def triggers(wf: dict) -> dict:
    return wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as True


def step(job: dict, name_part: str) -> dict:
    return next(s for s in job["steps"] if name_part in s.get("name", ""))


def writes(job: dict) -> set[str]:
    return {scope for scope, level in (job.get("permissions") or {}).items() if level == "write"}


def checkouts(job: dict) -> list[dict]:
    return [s for s in job.get("steps", []) if "actions/checkout" in s.get("uses", "")]


# -- eval-gate-comment.yml --------------------------------------------------------------------------


def test_the_comment_workflow_never_touches_pr_code_and_renders_from_results():
    wf = load("eval-gate-comment.yml")
    assert triggers(wf)["workflow_run"] == {
        "workflows": [load("eval-gate.yml")["name"]],
        "types": ["completed"],
    }
    (job,) = wf["jobs"].values()
    assert job["permissions"] == {"contents": "read", "pull-requests": "write", "actions": "read"}
    # The gate's own file, by path (a name is anyone's), for a pull_request run.
    assert "workflow_run.path == '.github/workflows/eval-gate.yml'" in job["if"]
    assert "workflow_run.event == 'pull_request'" in job["if"]
    text = yaml.safe_dump(wf)
    assert "REPORT.md" not in text.replace("its REPORT.md", "")
    assert "pull_requests" not in text  # the PR never comes from the event's (or artifact's) numbers
    # The one checkout is this workflow's own commit (no ref: github.sha, the default branch).
    (co,) = checkouts(job)
    assert co["with"] == {"path": "trusted", "lfs": False, "persist-credentials": False}
    install = step(job, "Install")["run"]
    assert "--require-hashes --only-binary=:all:" in install
    assert "-r trusted/docker/requirements-workflow.txt" in install
    assert "--no-deps --no-build-isolation ./trusted" in install and "git+" not in install
    post = step(job, "Post")
    env = post["env"]
    # Provenance and the PR's identity come from the workflow_run event, not the artifact.
    assert env["HEAD_SHA"] == "${{ github.event.workflow_run.head_sha }}"
    assert env["HEAD_REPO"] == "${{ github.event.workflow_run.head_repository.full_name }}"
    assert env["HEAD_BRANCH"] == "${{ github.event.workflow_run.head_branch }}"
    assert env["RUN_URL"] == "${{ github.event.workflow_run.html_url }}"
    assert env["CONCLUSION"] == "${{ github.event.workflow_run.conclusion }}"
    assert "${{" not in post["run"]  # event text reaches the shell only through env
    argv = post["run"].split()
    assert argv[:3] == ["PYTHONSAFEPATH=1", '"$VENV/bin/evalgate"', "comment"]
    for flag in ("--sha", "--head-repo", "--head-branch", "--run-url", "--conclusion", "--report"):
        assert flag in argv


def test_a_gate_run_without_a_report_posts_nothing_and_does_not_fail():
    # eval-gate.yml uploads no artifact when the PR changed nothing the gate reads
    job = load("eval-gate-comment.yml")["jobs"]["comment"]
    download = step(job, "Download the report")
    post = step(job, "Post or update the sticky comment")
    assert download.get("continue-on-error") is True and download.get("id")
    assert post.get("if") == f"steps.{download['id']}.outcome == 'success'"


# -- the baseline update: update-baseline.yml asks, update-baseline-apply.yml does ------------------


def test_the_baseline_request_holds_no_write_token_and_checks_with_the_base_commit():
    wf = load("update-baseline.yml")
    assert triggers(wf) == {"pull_request": {"types": ["labeled"]}}
    jobs = wf["jobs"]
    assert set(jobs) == {"refuse-fork", "check"}
    assert all(not writes(job) for job in jobs.values())
    assert "secrets." not in yaml.safe_dump(wf)
    for name in ("check", "refuse-fork"):
        assert "evalgate:update-baseline" in jobs[name]["if"]
    assert "head.repo.full_name == github.repository" in jobs["check"]["if"]
    assert "head.repo.full_name != github.repository" in jobs["refuse-fork"]["if"]
    (co,) = checkouts(jobs["check"])
    assert (
        co["with"]["ref"] == "${{ github.event.pull_request.base.sha }}" and co["with"]["path"] == "trusted"
    )
    assert co["with"]["persist-credentials"] is False
    check = step(jobs["check"], "approve")
    assert (
        '"$VENV/bin/evalgate" approval' in check["run"] and "--label evalgate:update-baseline" in check["run"]
    )
    assert check["env"]["SHA"] == "${{ github.event.pull_request.head.sha }}"


def test_the_baseline_update_jobs_split_scoring_from_writing():
    wf = load("update-baseline-apply.yml")
    assert triggers(wf) == {"workflow_run": {"workflows": ["update-baseline"], "types": ["completed"]}}
    jobs = wf["jobs"]
    assert jobs["check"]["permissions"] == {
        "contents": "read",
        "pull-requests": "read",
        "issues": "read",
        "actions": "read",
    }
    for part in (
        "workflow_run.conclusion == 'success'",
        "workflow_run.event == 'pull_request'",
        "workflow_run.path == '.github/workflows/update-baseline.yml'",
        "workflow_run.head_repository.full_name == github.repository",
    ):
        assert part in jobs["check"]["if"], part
    assert jobs["score"]["permissions"] == {"contents": "read"} and jobs["score"]["needs"] == "check"
    assert "environment" not in jobs["score"] and "secrets." not in yaml.safe_dump(jobs["score"])
    assert writes(jobs["push"]) == {"contents", "pull-requests"} and jobs["push"]["needs"] == [
        "check",
        "score",
    ]
    assert jobs["push"]["environment"] == "baseline-push"
    # Every checkout leaves no credentials behind for later steps (or PR code) to use.
    for name, job in jobs.items():
        for co in checkouts(job):
            assert co["with"]["persist-credentials"] is False, name
    # Trusted code is this workflow's own commit (the default branch: no ref), in `trusted`.
    for name in ("check", "score", "push"):
        trusted = [co for co in checkouts(jobs[name]) if co["with"]["path"] == "trusted"]
        assert len(trusted) == 1 and "ref" not in trusted[0]["with"], name


def test_the_image_comes_from_the_default_branch_and_the_labelled_sha_is_scored():
    score = load("update-baseline-apply.yml")["jobs"]["score"]
    trusted, pr = checkouts(score)
    assert trusted["with"]["path"] == "trusted" and "ref" not in trusted["with"]
    assert pr["with"]["ref"] == "${{ github.event.workflow_run.head_sha }}" and pr["with"]["lfs"] is True
    build = step(score, "Build")["run"]
    assert build.split()[-1] == "trusted" and "-f trusted/docker/Dockerfile" in build
    assert "--iidfile" in build and " -t " not in build
    run = step(score, "Regenerate")["run"]
    assert "--network none" in run and '"$image" baseline update' in run and "/pr:/work" in run
    assert step(score, "Regenerate")["env"]["PR"] == "${{ needs.check.outputs.pr }}"


def test_the_push_job_runs_no_hooks_and_leases_the_labelled_sha():
    push = load("update-baseline-apply.yml")["jobs"]["push"]
    labelled = [co for co in checkouts(push) if co["with"]["path"] == "pr"]
    assert labelled[0]["with"]["ref"] == "${{ github.event.workflow_run.head_sha }}"
    commit = step(push, "Commit and push")
    assert commit["working-directory"] == "pr"
    assert commit["env"]["PUSH_TOKEN"] == "${{ secrets.EVALGATE_PUSH_TOKEN || github.token }}"
    script = commit["run"]
    git_lines = [ln for ln in script.splitlines() if re.match(r"\s*git -c", ln)]
    assert git_lines and all("core.hooksPath=/dev/null" in ln for ln in git_lines)
    assert '--force-with-lease="refs/heads/$HEAD_REF:$LABELLED_SHA"' in script
    assert not any(
        s.get("uses", "").startswith("./") or re.search(r"\bdocker (run|build)\b", s.get("run", ""))
        for s in push["steps"]
    )
    # The approval is asked again, right before the push, with the same script as `check`.
    jobs = load("update-baseline-apply.yml")["jobs"]
    assert step(push, "does the label approve")["run"] == step(jobs["check"], "does the label approve")["run"]
    names = [s.get("name", "") for s in push["steps"]]
    assert names.index("Which run, which PR, and does the label approve its head?") < names.index(
        "Commit and push the baseline to the PR branch"
    )


def test_a_push_voids_the_approval_labels():
    job = load("void-labels.yml")["jobs"]["void-labels-on-push"]
    types = ["synchronize", "reopened", "edited"]
    assert triggers(load("void-labels.yml")) == {"pull_request": {"types": types}}
    assert writes(job) == {"pull-requests"}
    script = step(job, "Remove")["run"]
    assert "evalgate:update-baseline" in script and "evalgate:approve-gate-change" in script


# -- the push step, run for real --------------------------------------------------------------------


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def labelled(tmp_path) -> tuple[Path, Path, str]:
    """(a checkout of the labelled commit, the new baselines folder, the labelled SHA)."""
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    origin = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(origin), cwd=tmp_path)
    seed = tmp_path / "seed"
    git("init", "-q", "-b", "pr", str(seed), cwd=tmp_path)
    (seed / "baselines").mkdir()
    (seed / "baselines" / "demo.json").write_text('{"accuracy": 0.9}\n', encoding="utf-8")
    git("add", ".", cwd=seed)
    git("commit", "-q", "-m", "pr", cwd=seed)
    git("push", "-q", str(origin), "pr", cwd=seed)
    sha = git("rev-parse", "HEAD", cwd=seed).strip()
    work = tmp_path / "work"
    git("clone", "-q", "-b", "pr", str(origin), str(work), cwd=tmp_path)
    # A hook that would run PR-controlled code if hooks were on.
    hook = work / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho HOOK-RAN > /dev/stderr\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)
    (work / ".git" / "hooks" / "pre-push").write_bytes(hook.read_bytes())
    (work / ".git" / "hooks" / "pre-push").chmod(0o755)
    new = tmp_path / "new"
    new.mkdir()
    (new / "demo.json").write_text('{"accuracy": 0.5}\n', encoding="utf-8")
    (new / "evil.sh").write_text("echo hi\n", encoding="utf-8")
    (new / "link.json").symlink_to(tmp_path / "seed" / "baselines" / "demo.json")
    return work, new, sha


def push_step(work: Path, new: Path, sha: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = step(load("update-baseline-apply.yml")["jobs"]["push"], "Commit and push")["run"]
    env = {
        **os.environ,
        "NEW_BASELINES": str(new),
        "HEAD_REF": "pr",
        "LABELLED_SHA": sha,
        "APPROVER": "maint",
        "SERVER_URL": "https://github.com",
        "PUSH_TOKEN": "",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
    }
    return subprocess.run(
        ["bash", "-e", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=60
    )


def test_the_baseline_is_pushed_without_hooks_and_only_regular_json(labelled, tmp_path):
    work, new, sha = labelled
    result = push_step(work, new, sha, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "HOOK-RAN" not in result.stderr
    origin = tmp_path / "origin.git"
    assert git("show", "pr:baselines/demo.json", cwd=origin) == '{"accuracy": 0.5}\n'
    files = git("ls-tree", "--name-only", "pr", "baselines/", cwd=origin).split()
    assert files == ["baselines/demo.json"]  # no symlink, no script
    assert "approved by @maint" in git("log", "-1", "--format=%s", "pr", cwd=origin)


def test_a_commit_pushed_after_the_label_is_never_overwritten(labelled, tmp_path):
    work, new, sha = labelled
    other = tmp_path / "other"
    git("clone", "-q", "-b", "pr", str(tmp_path / "origin.git"), str(other), cwd=tmp_path)
    (other / "late.txt").write_text("pushed after the label\n", encoding="utf-8")
    git("add", ".", cwd=other)
    git("commit", "-q", "-m", "late", cwd=other)
    git("push", "-q", "origin", "pr", cwd=other)
    late = git("rev-parse", "HEAD", cwd=other).strip()
    git("fetch", "-q", "origin", cwd=work)  # the lease must hold even when the runner's ref is fresh
    result = push_step(work, new, sha, tmp_path)
    assert result.returncode != 0
    assert git("rev-parse", "pr", cwd=tmp_path / "origin.git").strip() == late


def test_the_push_step_refuses_a_checkout_that_is_not_the_labelled_sha(labelled, tmp_path):
    work, new, _ = labelled
    result = push_step(work, new, "cd" * 20, tmp_path)
    assert result.returncode != 0
    assert git("show", "pr:baselines/demo.json", cwd=tmp_path / "origin.git") == '{"accuracy": 0.9}\n'
