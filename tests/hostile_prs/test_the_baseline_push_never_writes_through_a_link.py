"""Hostile PR: the baseline push job writes through a link of the labelled commit (review round 3).

update-baseline-apply.yml's `push` job (the one that holds EVALGATE_PUSH_TOKEN) checks the
labelled commit out again and put the new baselines into it; its `score` job packed
`pr/baselines/`. A PR whose `baselines/demo.json` is a symbolic link to a file of the runner had
`cp` overwrite that file; one whose `baselines` folder is a link had `cd pr/baselines` pack the
runner's files. Now a linked (or non-folder) `baselines` and a linked (or non-regular) baseline
file are refused with an error naming them, and the new baselines go into the index as git
objects, never through a checked-out path.

Each case runs the steps' real scripts with bash, from this repository's workflow and from the
template `evalgate init` writes, on real git checkouts.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers.hostile_pr import attackers_evalgate, git
from helpers.workflow_steps import load

from evalgate.github.workflows import update_baseline_apply_workflow

PIN = "acme/evalgate@" + "a" * 40
VICTIM_TEXT = "the runner's own file\n"


def workflow(name: str) -> dict:
    if name == "update-baseline-apply.yml":
        return load(name)
    return yaml.safe_load(update_baseline_apply_workflow(PIN, "demo"))


@pytest.fixture(params=["update-baseline-apply.yml", "init template"])
def apply_wf(request) -> dict:
    return workflow(request.param)


def script(wf: dict, job: str, name_part: str) -> str:
    return next(s for s in wf["jobs"][job]["steps"] if name_part in s.get("name", ""))["run"]


def labelled_commit(tmp_path: Path, origin_template: Path, plant) -> tuple[Path, str]:
    """A clone of the gate's repository whose HEAD is the labelled commit `plant` made."""
    src = tmp_path / "src"
    git("clone", "-q", str(origin_template), str(src), cwd=tmp_path)
    plant(src)
    git("add", "-A", cwd=src)
    git("commit", "-q", "-m", "the labelled commit", cwd=src, who="mallory")
    return src, git("rev-parse", "HEAD", cwd=src)


def pack(wf: dict, score_ws: Path, temp: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script(wf, "score", "Pack the baselines")],
        cwd=score_ws,
        env={**os.environ, "RUNNER_TEMP": str(temp)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def push(wf: dict, checkout: Path, new: Path, sha: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script(wf, "push", "Commit and push")],
        cwd=checkout,
        env={
            **os.environ,
            "NEW_BASELINES": str(new),
            "HEAD_REF": "feature",
            "LABELLED_SHA": sha,
            "APPROVER": "maria",
            "SERVER_URL": "https://github.com",
            "PUSH_TOKEN": "",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )


def checkout_again(src: Path, sha: str, where: Path) -> Path:
    """The push job's `actions/checkout` of the labelled commit (path: pr)."""
    git("clone", "-q", str(src), str(where), cwd=where.parent)
    git("checkout", "-q", "--detach", sha, cwd=where)
    return where


@pytest.mark.slow
def test_the_baseline_push_job_never_writes_through_a_link_of_the_pr(apply_wf, tmp_path, origin_template):
    """The labelled commit holds `baselines/demo.json` as a link to a file of the runner. The score
    job's `baseline update` replaced the link with the new baseline, which the pack step took; the
    push job checked the commit out again (the link is back) and ran `cp -- NEW.json baselines/`:
    cp followed the link and overwrote the runner's file, then found nothing to commit."""
    victim = tmp_path / "runner-home" / "victim.conf"
    victim.parent.mkdir()
    victim.write_text(VICTIM_TEXT)

    def plant(tree: Path) -> None:
        (tree / "baselines" / "demo.json").unlink()
        (tree / "baselines" / "demo.json").symlink_to(victim)

    src, sha = labelled_commit(tmp_path, origin_template, plant)
    temp = tmp_path / "temp"
    temp.mkdir()
    # score: the labelled commit, `evalgate baseline update` (the image's command), the pack step
    score_ws = tmp_path / "score"
    score_ws.mkdir()
    git("clone", "-q", str(src), str(score_ws / "pr"), cwd=tmp_path)
    made = attackers_evalgate(score_ws / "pr", "baseline", "update", "--pr", "7", "--commit", sha)
    assert made.returncode == 0, made.stderr
    packed = pack(apply_wf, score_ws, temp)
    assert packed.returncode == 0, packed.stderr
    new = tmp_path / "new-baselines"
    new.mkdir()
    subprocess.run(["tar", "-xf", str(temp / "evalgate-baseline.tar"), "-C", str(new)], check=True)
    assert (new / "demo.json").is_file()
    # push: the labelled commit checked out again, then "Commit and push the baseline to the PR branch"
    (tmp_path / "push").mkdir()
    done = push(apply_wf, checkout_again(src, sha, tmp_path / "push" / "pr"), new, sha, tmp_path)
    assert victim.read_text() == VICTIM_TEXT, done.stdout + done.stderr
    assert done.returncode == 2, done.stdout + done.stderr
    assert "baselines/demo.json in the labelled commit is a symbolic link" in done.stdout


def test_a_linked_baselines_folder_is_neither_packed_nor_written_through(apply_wf, tmp_path):
    """The labelled commit's `baselines` is a link to a folder of the runner: the pack step would
    `cd` into it and pack the runner's *.json; the push step would copy into it."""
    runner_dir = tmp_path / "runner-home"
    runner_dir.mkdir()
    (runner_dir / "credentials.json").write_text('{"token": "secret"}\n')
    repo = tmp_path / "score" / "pr"
    repo.mkdir(parents=True)
    git("init", "-q", "-b", "feature", cwd=repo)
    (repo / "evalgate.yml").write_text("baseline: baselines/demo.json\n")
    (repo / "baselines").symlink_to(runner_dir)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "linked baselines", cwd=repo, who="mallory")
    sha = git("rev-parse", "HEAD", cwd=repo)
    temp = tmp_path / "temp"
    temp.mkdir()
    packed = pack(apply_wf, tmp_path / "score", temp)
    assert packed.returncode == 2, packed.stdout + packed.stderr
    assert "baselines in the labelled commit is a symbolic link or not a folder" in packed.stdout
    assert not (temp / "evalgate-baseline.tar").exists()

    new = tmp_path / "new"
    new.mkdir()
    (new / "demo.json").write_text('{"accuracy": 0.5}\n')
    done = push(apply_wf, repo, new, sha, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "baselines in the labelled commit is a symbolic link or not a folder" in done.stdout
    assert sorted(p.name for p in runner_dir.iterdir()) == ["credentials.json"]


def test_a_regular_baseline_is_committed_from_git_objects(apply_wf, tmp_path):
    """The control: a real folder and file. The new baseline is committed (as a regular file
    whatever the PR's attributes say) and the checked-out file is left as the commit had it."""
    origin = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "feature", str(origin), cwd=tmp_path)
    repo = tmp_path / "pr"
    repo.mkdir()
    git("init", "-q", "-b", "feature", cwd=repo)
    (repo / "baselines").mkdir()
    (repo / "baselines" / "demo.json").write_text('{"accuracy": 0.9}\n')
    (repo / ".gitattributes").write_text("baselines/*.json text eol=crlf\n")  # no filter applies
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "pr", cwd=repo, who="mallory")
    git("remote", "add", "origin", str(origin), cwd=repo)
    git("push", "-q", "origin", "feature", cwd=repo)
    sha = git("rev-parse", "HEAD", cwd=repo)
    new = tmp_path / "new"
    new.mkdir()
    (new / "demo.json").write_text('{"accuracy": 0.5}\n')
    (new / "other.json").write_text("{}\n")
    done = push(apply_wf, repo, new, sha, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert git("show", "feature:baselines/demo.json", cwd=origin) == '{"accuracy": 0.5}'
    assert git("cat-file", "-p", "feature:baselines/other.json", cwd=origin) == "{}"
    modes = git("ls-tree", "feature", "baselines/", cwd=origin).split("\n")
    assert all(line.startswith("100644 blob") for line in modes), modes
