"""A copy of this repository's gate inputs in a temporary folder, for the hostile-PR tests: each
test plays the pull request that changed one file in it, then runs the real CLI there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.paths import REPO


def make_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copytree(REPO / "data", repo / "data")
    shutil.copytree(REPO / "baselines", repo / "baselines")
    shutil.copy(REPO / "evalgate.yml", repo / "evalgate.yml")
    monkeypatch.chdir(repo)
    # The source checkout is an allowed root (the bundled demo): point it elsewhere so the
    # copy's files are judged on their own.
    monkeypatch.setenv("EVALGATE_HOME", str(repo))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return repo


def results(repo: Path, out: str = "evalgate-out") -> dict:
    return json.loads((repo / out / "results.json").read_text(encoding="utf-8"))


def workflow_command_lines(text: str) -> list[str]:
    """Lines a GitHub runner would obey (split at CR and LF; leading whitespace ignored)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [ln for ln in lines if ln.lstrip().startswith("::")]


# The installed console script, as a workflow runs it: a separate process (a hostile plugin
# cannot touch the test's own evalgate, a hang is a timeout), and, unlike `python -m`, it does
# not put the working folder on sys.path.
EVALGATE = Path(sys.executable).parent / "evalgate"


def run_evalgate(
    repo: Path, *args: str | Path, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`evalgate ARGS` in `repo` as a pull request's checkout: the copy is the bundled root, no
    GitHub Actions environment, `env` on top. Raises subprocess.TimeoutExpired past `timeout`."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "EVALGATE_"))}
    env = {**base, "EVALGATE_HOME": str(repo), **(env or {})}
    return subprocess.run(
        [str(EVALGATE), *map(str, args)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
