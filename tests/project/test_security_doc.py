"""docs/security.md names the test that covers each threat: every one of them must exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers.paths import REPO

NAMED = re.compile(r"tests/((?:\w+/)*test_\w+\.py)::(test_\w+)")


def defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


def test_every_test_named_in_the_security_page_exists():
    named = NAMED.findall((REPO / "docs" / "security.md").read_text(encoding="utf-8"))
    assert len(named) >= 20
    missing = []
    for file, name in named:
        path = REPO / "tests" / file
        if not path.is_file() or name not in defined_tests(path):
            missing.append(f"tests/{file}::{name}")
    assert not missing, f"docs/security.md names tests that do not exist: {missing}"
