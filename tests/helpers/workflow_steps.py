"""The workflows' real `run:` scripts, taken from the YAML and run with bash in a throwaway git
repository, as a runner runs them (`bash -e`, the step's env, GITHUB_OUTPUT and RUNNER_TEMP files)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from helpers.paths import REPO

WORKFLOWS = REPO / ".github" / "workflows"
# The venv that runs the tests has evalgate installed: it plays the workflow's `$VENV` (the base
# commit's evalgate, installed by the job's first step).
VENV = Path(sys.executable).parent.parent


def load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def steps(wf: dict) -> list[dict]:
    return [s for job in wf["jobs"].values() for s in job.get("steps", [])]


def step(wf: dict, name_part: str) -> dict:
    return next(s for s in steps(wf) if name_part in s.get("name", ""))


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    done = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return done.stdout


def commit(repo: Path, message: str) -> str:
    git("add", "-A", ".", cwd=repo)
    git("commit", "-q", "--allow-empty", "-m", message, cwd=repo)
    return git("rev-parse", "HEAD", cwd=repo).strip()


def run_script(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A `run:` step as GitHub runs it (`bash --noprofile --norc -eo pipefail`), its env over ours."""
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def outputs(path: Path) -> dict[str, str]:
    """The `name=value` lines a step appended to GITHUB_OUTPUT."""
    if not path.exists():
        return {}
    return dict(line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines() if "=" in line)
