"""Where the tests find the repository, the golden files and the probe-set fixtures.

One definition, so a test file can move between the folders of tests/ without its paths changing.
"""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
GOLDEN = TESTS / "golden"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
