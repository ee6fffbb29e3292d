"""bench/gpu_check.sh --dry-run (issue 29, section 3): everything the GPU check does but the
device, on this CPU-only machine: the demo and demo-regressed on "both" devices, each device's
verdicts against its own demo run, every log-likelihood against the CPU's, and a Llama shape
(shrunk with EVALGATE_GPU_CHECK_SHAPE=tiny) through the loader and scorers/device.py's wrapper.
Without --dry-run, a machine with no CUDA device is told so (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers.paths import REPO

pytestmark = pytest.mark.slow
SCRIPT = REPO / "bench" / "gpu_check.sh"


def _run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHON": sys.executable, "EVALGATE_GPU_CHECK_SHAPE": "tiny",
            "EVALGATE_GPU_CHECK_REQUESTS": "48", **env}  # fmt: skip
    full.pop("GITHUB_ACTIONS", None)
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=REPO, env=full, capture_output=True, text=True,
                          timeout=1500)  # fmt: skip


def test_the_dry_run_checks_everything_but_the_device_and_passes():
    done = _run("--dry-run")
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-5000:]
    assert "gpu_check: ok (dry run" in done.stdout
    assert "cpu ('pass', 'fail'), cuda (dry run: cpu) ('pass', 'fail')" in done.stdout, done.stdout
    assert "demo: largest log-likelihood difference" in done.stdout
    assert "llama: largest log-likelihood difference" in done.stdout
    for line in ("demo demo            on cpu:", "llama on cuda (dry run: cpu):"):
        assert line in done.stdout, done.stdout  # the time of each step, on each device
    assert not list(REPO.glob(".evalgate-gpu-check-*")), "the check left its configurations behind"


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this machine has a CUDA device")
def test_without_a_cuda_device_the_real_check_refuses_to_run():
    done = _run()
    assert done.returncode == 2 and "sees no CUDA device" in done.stdout, done.stdout + done.stderr
