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


def allow_shipped_data(monkeypatch) -> None:
    """A test whose configuration lives in a temporary folder and names this repository's data/
    (the demo checkpoint, the corpus): reading there is the operator's choice, said as an operator
    says it. The source checkout is no allowed root of its own (paths.allowed_roots)."""
    monkeypatch.setenv("EVALGATE_ALLOWED_ROOTS", str(REPO / "data"))
