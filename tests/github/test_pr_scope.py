"""eval-gate.yml's "Decide what the gate has to do" step, run for real against throwaway git
repositories: the job always runs (no paths filter), passes quickly when the PR changes nothing the
gate reads, and refuses the first PR that adds evalgate instead of gating it against the demo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.paths import REPO


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


CONFIG = "checkpoint: models/mine\nbaseline: baselines/mine.json\n"
BASE = {
    "evalgate.yml": CONFIG,
    "baselines/mine.json": "{}\n",
    "README.md": "hi\n",
    "models/mine/w.txt": "1\n",
}


def repo_with(tmp_path: Path, base: dict[str, str], pr: dict[str, str]) -> tuple[Path, str]:
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    work = tmp_path / "work"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    write(work, base)
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "base", cwd=work)
    sha = git("rev-parse", "HEAD", cwd=work).strip()
    git("checkout", "-q", "-b", "pr", cwd=work)
    write(work, pr)
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "pr", cwd=work)
    return work, sha


def decide(tmp_path: Path, work: Path, base_sha: str) -> tuple[subprocess.CompletedProcess[str], str, str]:
    wf = yaml.safe_load((REPO / ".github" / "workflows" / "eval-gate.yml").read_text(encoding="utf-8"))
    script = next(s for s in wf["jobs"]["gate"]["steps"] if s.get("id") == "scope")["run"]
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"  # stands for the venv holding the trusted evalgate
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    output, summary = tmp_path / "output", tmp_path / "summary"
    output.write_text("", encoding="utf-8")
    summary.write_text("", encoding="utf-8")
    env = {**os.environ, "VENV": str(venv), "BASE_SHA": base_sha}
    env.update(GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(summary))
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return result, output.read_text(encoding="utf-8"), summary.read_text(encoding="utf-8")


def test_a_pr_that_changes_nothing_the_gate_reads_passes_quickly(tmp_path):
    work, base = repo_with(tmp_path, BASE, {"README.md": "changed\n", "src/app.py": "x = 1\n"})
    result, output, _ = decide(tmp_path, work, base)
    assert result.returncode == 0, result.stderr
    assert output.splitlines()[0] == "relevant=false"
    assert "nothing the gate reads changed" in result.stderr


@pytest.mark.parametrize(
    "changed",
    [
        "models/mine/w.txt",  # the checkpoint wherever evalgate.yml says it lives
        "baselines/mine.json",
        "evalgate.yml",
        "data/eval/probes.jsonl",
        "data/corpus/test.jsonl",
        "data/grammar/verbs.yaml",
    ],
)
def test_a_pr_that_changes_what_the_gate_reads_is_gated(tmp_path, changed):
    work, base = repo_with(tmp_path, BASE, {changed: "changed\n"})
    result, output, _ = decide(tmp_path, work, base)
    assert result.returncode == 0, result.stderr
    assert output.splitlines()[0] == "relevant=true"
    assert repr(changed) in result.stderr


def test_a_prs_own_config_cannot_hide_or_inject_paths(tmp_path):
    # The PR moves its checkpoint (the new path counts too) and tries to smuggle an output line.
    hostile = 'checkpoint: elsewhere/ckpt\ntest: "x\\nrelevant=false"\n'
    work, base = repo_with(tmp_path, BASE, {"evalgate.yml": hostile, "elsewhere/ckpt/w.txt": "2\n"})
    result, output, _ = decide(tmp_path, work, base)
    assert result.returncode == 0, result.stderr
    lines = output.splitlines()
    assert lines[0] == "relevant=true" and len(lines) == 2
    assert "elsewhere/ckpt" in lines[1].split() and "relevant=false" not in lines[1]


SUITES = (
    "suites:\n"
    "  k8s:\n"
    "    kind: multiple-choice\n"
    "    probes: [evalgate/k8s/items.jsonl]\n"
    "    train: [notes/train.jsonl]\n"
    "  docs:\n"
    "    kind: multiple-choice\n"
    "    probes: [evalgate/docs/items.jsonl]\n"
    "    test: notes/docs-text.jsonl\n"
    "test: null\n"
)


@pytest.mark.parametrize(
    "changed",
    ["evalgate/k8s/items.jsonl", "evalgate/k8s/MANIFEST.json", "notes/train.jsonl", "notes/docs-text.jsonl"],
)
def test_a_pr_that_changes_a_suites_files_is_gated(tmp_path, changed):
    base = {**BASE, "evalgate.yml": CONFIG + SUITES}
    work, sha = repo_with(tmp_path, base, {changed: "changed\n"})
    result, output, _ = decide(tmp_path, work, sha)
    assert result.returncode == 0, result.stderr
    assert output.splitlines()[0] == "relevant=true"
    assert changed in output.splitlines()[1].split()


@pytest.mark.parametrize(
    ("base", "why"),
    [
        ({"README.md": "hi\n"}, "evalgate.yml is missing"),
        ({"evalgate.yml": CONFIG, "README.md": "hi\n"}, "baselines/mine.json is missing"),
    ],
)
def test_the_first_pr_adding_evalgate_is_refused_with_the_bootstrap_steps(tmp_path, base, why):
    work, sha = repo_with(tmp_path, base, BASE)
    result, output, summary = decide(tmp_path, work, sha)
    assert result.returncode == 2
    assert "no baseline on the base branch yet" in result.stderr and why in result.stderr
    assert "evalgate baseline update" in result.stderr and "required status check" in result.stderr
    assert "no baseline on the base branch yet" in summary
    assert output == ""  # never `relevant=...`: the gate must not run against the bundled demo
