"""The pure packages import no torch, no network, no files, no environment (docs/ARCHITECTURE.md).

Checked statically on the source, every module of every subfolder, so a lazy import inside a
function is caught too, and a new subfolder cannot slip past the check.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers.paths import REPO

SRC = REPO / "src" / "evalgate"
PURE_PACKAGES = ("schemas", "probeset", "scoring", "gate", "report", "synth")
PURE_MODULES = [
    *sorted(p for pkg in PURE_PACKAGES for p in (SRC / pkg).rglob("*.py")),
    SRC / "types.py",
    SRC / "errors.py",
]

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
    "evalgate.probeset_io",
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


def test_every_pure_package_is_checked():
    # A package listed but missing (renamed, moved) would make the parametrised test vacuous.
    for pkg in PURE_PACKAGES:
        assert list((SRC / pkg).rglob("*.py")), f"{pkg}/ holds no module: rename PURE_PACKAGES too"


@pytest.mark.parametrize("path", PURE_MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_pure_module_imports_no_io(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = [m for m in _modules(tree) if any(m == f or m.startswith(f + ".") for f in FORBIDDEN_MODULES)]
    assert not bad, f"{path.name} imports {bad}: I/O belongs in edges/, github/ or scorers/"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in FORBIDDEN_CALLS, f"{path.name}:{node.lineno} calls {node.func.id}()"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            assert (node.value.id, node.attr) not in FORBIDDEN_ATTRS, (
                f"{path.name}:{node.lineno} uses {node.value.id}.{node.attr}"
            )
