"""Throwaway git repositories holding a base commit and a pull request on top, and the scope
decision run on them for real: `python -P -m evalgate.edges.pr_scope`, the module entry the
eval-gate workflow runs with the base branch's evalgate (github/pr_scope.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest


class Link(str):
    """A symbolic link to this target, in the files of `write`."""


DELETE = None  # in the files of `write`: remove the path


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def write(root: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        path = root / rel
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
        if text is None:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, Link):
            path.symlink_to(str(text))
        else:
            path.write_text(text, encoding="utf-8")


def repo_with(tmp_path: Path, base: dict[str, str | None], pr: dict[str, str | None]) -> tuple[Path, str]:
    """A repository whose `main` holds `base` and whose checked-out branch `pr` changes `pr` on
    top; returns (its folder, the base commit)."""
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    work = tmp_path / "work"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    git("config", "core.symlinks", "true", cwd=work)
    write(work, base)
    git("add", "-A", ".", cwd=work)
    git("commit", "-q", "-m", "base", cwd=work)
    sha = git("rev-parse", "HEAD", cwd=work).strip()
    git("checkout", "-q", "-b", "pr", cwd=work)
    write(work, pr)
    git("add", "-A", ".", cwd=work)
    git("commit", "-q", "--allow-empty", "-m", "pr", cwd=work)
    return work, sha


class Scope(NamedTuple):
    code: int
    outputs: dict[str, str]  # GITHUB_OUTPUT name -> value
    lines: list[str]
    err: str

    @property
    def relevant(self) -> bool:
        assert self.outputs["relevant"] in ("true", "false"), self
        return self.outputs["relevant"] == "true"

    @property
    def gate_paths(self) -> list[str]:
        return self.outputs["gate-paths"].split()

    @property
    def checkpoint_paths(self) -> list[str]:
        return self.outputs["checkpoint-paths"].split()

    @property
    def read_paths(self) -> list[str]:
        """Everything the gate reads: its inputs and the checkpoint it judges."""
        return self.gate_paths + self.checkpoint_paths

    @property
    def base_inputs(self) -> list[str]:
        return self.outputs["base-inputs"].split()


def scope(work: Path, base_sha: str) -> Scope:
    """The scope decision for the PR checked out in `work`, as the workflow runs it."""
    result = subprocess.run(
        [sys.executable, "-P", "-m", "evalgate.edges.pr_scope", "--base", base_sha],
        cwd=work,
        env={**os.environ, "PYTHONSAFEPATH": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = result.stdout.splitlines()
    outputs = dict(line.partition("=")[::2] for line in lines)
    return Scope(result.returncode, outputs, lines, result.stderr)
