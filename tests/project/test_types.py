"""The pure packages that build and read results.json type-check: renderers read typed fields.

gate/document.py types the document (tests/gate/test_document_schema.py keeps it in step with the
schema); mypy checks that gate/, scoring/ and report/ use those types as declared, and that probeset/
(which builds the probes and the `probe_set` record) is typed as well. The files and
settings are pyproject.toml's `[tool.mypy]`, so a local `mypy` run and this test agree.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import REPO


def _mypy() -> str:
    beside = Path(sys.executable).with_name("mypy")
    found = str(beside) if beside.exists() else shutil.which("mypy")
    if not found:
        pytest.fail("mypy is not installed: it is part of the [test] extra")
    return found


def test_mypy_is_clean(tmp_path):
    # A fresh cache keeps the run independent of earlier ones (a cold run takes a few seconds).
    result = subprocess.run(
        [_mypy(), "--cache-dir", str(tmp_path / "mypy-cache")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "Success: no issues found" in result.stdout
