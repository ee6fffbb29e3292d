"""The Action runs the installed gate, never an `evalgate/` package a PR commits to its workspace.

`python -m evalgate.github.action` with the workspace as working folder puts that folder first on
sys.path: a decoy package there replaced the gate and reported a pass. The entry is now the
`evalgate action` console script, and the image sets PYTHONSAFEPATH=1 (docker/smoke.sh checks the
same in the image, with the decoy mounted at /work).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.paths import REPO

REGRESSED = REPO / "data" / "checkpoints" / "demo-regressed"
EVALGATE = Path(sys.executable).with_name("evalgate")

DECOY = """import os, sys
out = os.environ.get("GITHUB_OUTPUT")
if out:
    open(out, "a").write("verdict=pass\\n")
print("DECOY GATE RAN")
sys.stdout.flush()
os._exit(0)
"""


@pytest.fixture
def workspace(tmp_path) -> Path:
    """A PR's workspace: the regressed demo checkpoint and a decoy `evalgate` package at the root."""
    ws = tmp_path / "workspace"
    for rel in ("__init__.py", "__main__.py", "cli.py", "edges/__init__.py", "edges/action.py",
                "github/__init__.py", "github/action.py", "commands/__init__.py", "commands/action.py",
                "commands/run.py"):  # fmt: skip
        path = ws / "evalgate" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(DECOY, encoding="utf-8")
    shutil.copytree(REGRESSED, ws / "ckpt" / "demo-regressed")
    return ws


def entry_env(ws: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "PYTHON"))}
    env.update(GITHUB_OUTPUT=str(ws.parent / "output"), INPUT_CHECKPOINT="ckpt/demo-regressed", **extra)
    return env


def run(args: list[str], ws: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = entry_env(ws, **extra)
    return subprocess.run(args, cwd=ws, env=env, capture_output=True, text=True, timeout=900)


def test_action_yml_runs_the_console_script_entry():
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    gate = next(s for s in action["runs"]["steps"] if s.get("id") == "gate")
    assert '"$IMAGE" action ||' in gate["run"]
    assert "-m evalgate" not in gate["run"] and "--entrypoint" not in gate["run"]
    dockerfile = (REPO / "docker" / "Dockerfile").read_text(encoding="utf-8")
    assert "ENV PATH=/opt/venv/bin:$PATH \\\n    PYTHONSAFEPATH=1" in dockerfile


@pytest.mark.slow
def test_a_decoy_package_in_the_workspace_cannot_replace_the_gate(workspace):
    result = run([str(EVALGATE), "action"], workspace)
    assert "DECOY GATE RAN" not in result.stdout
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    output = (workspace.parent / "output").read_text(encoding="utf-8")
    assert "verdict=pass" not in output and "\nfail\n" in output


@pytest.mark.slow
def test_the_module_entry_with_pythonsafepath_ignores_the_decoy(workspace):
    # The compatibility entry, as the image runs it (PYTHONSAFEPATH=1). A bad input makes the real
    # entry refuse at once (exit 2); the decoy would exit 0 with verdict=pass.
    args = [sys.executable, "-m", "evalgate.github.action"]
    safe = run(args, workspace, PYTHONSAFEPATH="1", INPUT_FAIL_ON_REGRESSION="perhaps")
    assert "DECOY GATE RAN" not in safe.stdout and safe.returncode == 2, safe.stdout + safe.stderr
    assert "fail-on-regression" in safe.stdout
    # The threat is real: without it the workspace's package is what runs.
    unsafe = run(args, workspace, INPUT_FAIL_ON_REGRESSION="perhaps")
    assert "DECOY GATE RAN" in unsafe.stdout and unsafe.returncode == 0
