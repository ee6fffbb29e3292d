"""The core is pure: no torch, no network, no files, no environment (docs/ARCHITECTURE.md).

Checked statically on the source, so a lazy import inside a function is caught too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "src" / "evalgate" / "core"

FORBIDDEN_MODULES = {
    "torch",
    "transformers",
    "safetensors",
    "tokenizers",
    "urllib",
    "http",
    "socket",
    "requests",
    "subprocess",
    "shutil",
    "tempfile",
    "matplotlib",
    "evalgate.edges",
    "evalgate.scorers",
    "evalgate.validation",
    "evalgate.pipeline",
    "evalgate.commands",
}
FORBIDDEN_CALLS = {"open", "print", "input"}
FORBIDDEN_ATTRS = {("os", "environ"), ("os", "getenv"), ("sys", "stdout"), ("sys", "stderr")}


def _modules(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


@pytest.mark.parametrize("path", sorted(CORE.glob("*.py")), ids=lambda p: p.name)
def test_core_module_is_pure(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = [m for m in _modules(tree) if any(m == f or m.startswith(f + ".") for f in FORBIDDEN_MODULES)]
    assert not bad, f"{path.name} imports {bad}: I/O belongs in edges/ or scorers/"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in FORBIDDEN_CALLS, f"{path.name}:{node.lineno} calls {node.func.id}()"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            assert (node.value.id, node.attr) not in FORBIDDEN_ATTRS, (
                f"{path.name}:{node.lineno} uses {node.value.id}.{node.attr}"
            )
