"""The gate workflow's trusted steps run evalgate from a venv holding docker/requirements-workflow.txt
alone (hash-pinned, no torch): the scope decision and `evalgate fetch` must import nothing else.
`evalgate.config` reads the gate's rules, which import numpy (gate/cluster.py): without numpy in
that file both steps crashed on a real runner (exit 1 and 3)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import distribution
from pathlib import Path

import pytest
from helpers.file_standin import FileServer, tls_certificate
from helpers.paths import REPO

WORKFLOW_REQUIREMENTS = REPO / "docker" / "requirements-workflow.txt"


def _names() -> list[str]:
    lines = [
        ln for ln in WORKFLOW_REQUIREMENTS.read_text(encoding="utf-8").splitlines() if ln and ln[0] != "#"
    ]
    return [re.split("==", ln, maxsplit=1)[0] for ln in lines if not ln.startswith("setuptools")]


def _only(site: Path, names: list[str]) -> Path:
    """A folder holding exactly these installed distributions (links to their files)."""
    site.mkdir()
    for name in names:
        for top in {f.parts[0] for f in distribution(name).files or [] if f.parts[0] != ".."}:
            src = Path(str(distribution(name).locate_file(top)))
            if src.exists() and not (site / top).exists():
                (site / top).symlink_to(src)
    return site


def test_the_scope_check_and_fetch_run_with_the_workflow_requirements_alone(tmp_path):
    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed")
    cert, key = tls_certificate(tmp_path)
    data = b"weights"
    server = FileServer(cert, key).start()
    try:
        url = server.serve("/w", data)
        repo = tmp_path / "repo"
        (repo / "checkpoints").mkdir(parents=True)
        (repo / "evalgate.yml").write_text("checkpoint: checkpoints/current.json\n", encoding="utf-8")
        ref = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "url": url}
        doc = {"kind": "evalgate-checkpoint-reference", "schema_version": 1, "files": {"w.safetensors": ref}}
        (repo / "checkpoints" / "current.json").write_text(json.dumps(doc), encoding="utf-8")
        env = {
            "PATH": os.environ["PATH"],
            "PYTHONPATH": f"{_only(tmp_path / 'site', _names())}{os.pathsep}{REPO / 'src'}",
            "SSL_CERT_FILE": str(cert),
            "HOME": str(tmp_path / "home"),
        }
        # -S: no site-packages at all; only the listed distributions and evalgate's source.
        scope = subprocess.run(
            [sys.executable, "-S", "-m", "evalgate.edges.pr_scope", "--help"],
            env=env, cwd=repo, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert scope.returncode == 0, scope.stderr[-2000:]
        fetched = subprocess.run(
            [sys.executable, "-S", "-m", "evalgate", "fetch", "--cache", str(tmp_path / "cache")],
            env=env, cwd=repo, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert fetched.returncode == 0, fetched.stderr[-2000:]
        assert f"fetched-bytes={len(data)}" in fetched.stdout
    finally:
        server.stop()
