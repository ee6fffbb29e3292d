"""`evalgate --help` and `evalgate validate` import no torch, pandas or matplotlib (issue 15):
a probe-only check on a runner starts in a fraction of a second, not after loading torch."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers.paths import REPO

HEAVY = ("torch", "pandas", "matplotlib", "transformers")


def imported(*args: str) -> set[str]:
    """Top-level packages a real `python -X importtime -m evalgate ARGS` imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "evalgate", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "src")},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    assert "evalgate" in names  # the probe works: it sees evalgate's own imports
    return names


@pytest.mark.integration
@pytest.mark.parametrize("args", [("--help",), ("validate",), ("run", "--help")])
def test_help_and_validate_import_no_heavy_library(args):
    assert not set(HEAVY) & imported(*args)
