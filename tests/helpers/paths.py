"""Where the tests find the repository, the golden files and the probe-set fixtures.

One definition, so a test file can move between the folders of tests/ without its paths changing.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
GOLDEN = TESTS / "golden"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def bench_module(name: str) -> ModuleType:
    """A benchmark script of bench/ as a module, so a test checks the very model it prints."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
