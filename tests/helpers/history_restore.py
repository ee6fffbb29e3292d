"""The gate workflow's restore step played on a baseline history (issue 25 §3).

A throwaway git repository whose `main` is the base and whose HEAD is the PR; the step's real
script (from eval-gate.yml or from the template `evalgate init` writes) run with bash; the venv of
the base's evalgate stood in by this interpreter. Used by the hostile-PR cases on the history and
the anchor a labelled PR may bring.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from evalgate.github.workflows import gate_workflow
from helpers.paths import REPO
from helpers.workflow_steps import commit, git, load, run_script, step

CONFIG = "baseline: baselines/m.json\n"
HISTORY, ANCHOR = "baselines/history/m.jsonl", "baselines/history/m.anchor.json"
INPUTS = f"evalgate.yml baselines/m.json {HISTORY} {ANCHOR}"
WORKFLOWS = ("eval-gate.yml", "init template")


def gate_workflow_doc(which: str) -> dict:
    """This repository's eval-gate.yml, or the one `init` writes for a pinned release."""
    if which == "eval-gate.yml":
        return load("eval-gate.yml")
    return yaml.safe_load(gate_workflow("acme/evalgate@" + "a" * 40))


def baseline(acc: float, tag: int | None = None) -> bytes:
    """A valid baseline (the shipped demo's, renamed m) with its overall accuracy set: the label's
    check recomputes the line `baseline update` writes, per-slice numbers included, and the
    command keeps those only of a valid baseline. `tag` tells apart two baselines of one accuracy."""
    doc = json.loads((REPO / "baselines" / "demo.json").read_bytes())
    doc["name"] = "m"
    doc["provenance"]["pr_number"] = tag
    doc["slices"]["overall"].update(correct=round(acc * doc["slices"]["overall"]["n"]), accuracy=acc)
    return (json.dumps(doc) + "\n").encode()


def write(root: Path, files: dict[str, bytes | None]) -> None:
    """Put `files` under `root`; None removes the file."""
    for rel, value in files.items():
        path = root / rel
        if path.exists():
            path.unlink()
        if value is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(value)


def restore(
    tmp_path: Path, workflow: dict, base: dict, pr: dict, *, approved: bool, scope: str = ""
) -> tuple[Path, list[str]]:
    """Run the restore step on a PR over `base`: (the workspace, the paths it listed as replaced).
    `scope`: shell run in place of history_scope (standing in for a bug or a crash of it)."""
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    work = tmp_path / "work"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    write(work, {"evalgate.yml": CONFIG.encode(), **base})
    base_sha = commit(work, "base")
    git("checkout", "-q", "-b", "pr", cwd=work)
    write(work, pr)
    commit(work, "pr")
    runner = tmp_path / "runner"
    (runner / "venv" / "bin").mkdir(parents=True)
    python = runner / "venv" / "bin" / "python"  # stands for the venv of the base's evalgate
    stand_in = f'case "$*" in *history_scope*) {scope} ;; esac\n' if scope else ""
    python.write_text(f'#!/bin/sh\n{stand_in}exec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    env = {
        "BASE_SHA": base_sha,
        "APPROVED": "true" if approved else "false",
        "VENV": str(runner / "venv"),
        "GATE_PATHS": "evalgate.yml baselines",
        "BASE_INPUTS": INPUTS,
        "GATE_CHANGES": str(runner / "changes.diff"),
        "REPLACED": str(runner / "replaced.txt"),
        "GITHUB_OUTPUT": str(runner / "output"),
        "RUNNER_TEMP": str(runner),
    }
    done = run_script(step(workflow, "the baselines from the base branch")["run"], work, env)
    assert done.returncode == 0, done.stderr
    return work, (runner / "replaced.txt").read_text(encoding="utf-8").split()
