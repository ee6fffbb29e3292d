"""`python -m tests.project`: the structure checks as one lint command (README, "Tests").

Every check of the source itself (import layers and package ranks, I/O boundaries, command
boundaries, ruff, mypy, docs drift) lives in tests/project/; each rule is one test that lists every
offender at once. This runs them all, the same tests plain `pytest` runs, and exits non-zero if any
rule is broken. Extra arguments go to pytest (`python -m tests.project -x`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", str(HERE), *sys.argv[1:]]))
