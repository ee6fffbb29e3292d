"""The tree stays ruff-clean (lint and format), so CI catches what a local run forgot."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import REPO


def _ruff() -> str:
    beside = Path(sys.executable).with_name("ruff")
    found = str(beside) if beside.exists() else shutil.which("ruff")
    if not found:
        pytest.fail("ruff is not installed: it is part of the [test] extra")
    return found


@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]], ids=["check", "format"])
def test_ruff_is_clean(args):
    result = subprocess.run([_ruff(), *args], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def _zizmor() -> str | None:
    beside = Path(sys.executable).with_name("zizmor")
    return str(beside) if beside.exists() else shutil.which("zizmor")


def test_zizmor_findings_are_all_justified():
    """Every finding of `zizmor --offline` is listed, with its reason, in docs/security.md."""
    zizmor = _zizmor()
    if zizmor is None:
        pytest.skip("zizmor is not installed (pip install zizmor; part of the [test] extra)")
    result = subprocess.run(
        [zizmor, "--offline", "--format", "json", ".github/workflows", "action.yml"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode in (0, 10, 11, 12, 13, 14), result.stderr[-2000:]  # 1x: findings
    findings = {
        (f["ident"], Path(loc["symbolic"]["key"]["Local"]["verbatim_path"]).name)
        for f in json.loads(result.stdout)
        for loc in f["locations"][:1]
    }
    page = (REPO / "docs" / "security.md").read_text(encoding="utf-8")
    justified = set(re.findall(r"^\| `([\w-]+)` \| `([\w.-]+)` \| \S", page, re.M))
    assert findings <= justified, f"zizmor findings not justified in docs/security.md: {findings - justified}"
