"""Every import arrow points down, and no module imports itself back (docs/ARCHITECTURE.md).

The import graph of src/evalgate is built statically from the source (ast), imports inside
functions included, since a lazy import is an arrow all the same; imports under
`if TYPE_CHECKING:` are left out, since they never run. The layers, lowest first:

    0 pure        types, errors, release, schemas/ (package data), probeset/, scoring/, gate/,
                  report/, synth/
                  (no torch, no file, no network: tests/project/test_import_boundary.py)
    1 foundation  console (every printed line, one console per --format, and `clean`),
                  progress (the bar or phase lines on stderr), safe_yaml (the one YAML parser,
                  which cleans what it quotes with console.clean), paths (allowed roots, display
                  names), config (parses evalgate.yml)
    2 edges       edges/, scorers/, github/: reading, writing, hashing, the model, GitHub
    3 wiring      probeset_io (reads the configured files, hands bytes to probeset/), pipeline
                  (validate -> load -> score -> gate)
    4 commands    commands/: one module per sub-command
    5 entry       cli, __main__, the package itself

A module may import from its own layer or a lower one, never a higher one, and the graph has no
cycle. `config` sits below the edges so that they can import it (edges/inputs checks against
paths.allowed_roots, github/pr_scope reads the default configuration) while it imports none of
them. The one arrow up is listed in `UPWARD`, with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers.paths import REPO

SRC = REPO / "src" / "evalgate"

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "pure",
        ("types", "errors", "release", "schemas", "probeset", "scoring", "gate", "report", "synth"),
    ),
    ("foundation", ("console", "progress", "safe_yaml", "paths", "config")),
    ("edges", ("edges", "scorers", "github")),
    ("wiring", ("probeset_io", "pipeline")),
    ("commands", ("commands",)),
    ("entry", ("cli", "__main__", "")),
)

# Arrows up (and the cycle each closes), each with why it is not a layering fault.
UPWARD = {
    # `evalgate action` runs the whole CLI in-process (`python -m evalgate.github.action` is the
    # Action's entry point too): the entry imports the CLI it wraps, lazily, when called.
    ("evalgate.github.action", "evalgate.cli"),
}


def _name(path: Path) -> str:
    parts = ["evalgate", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(SRC.rglob("*.py"))}


def layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for rank, (_, tops) in enumerate(LAYERS):
        if top in tops:
            return rank
    raise AssertionError(f"{module} is in no layer: add its top-level name to LAYERS")


def _type_checking_only(tree: ast.AST) -> set[ast.AST]:
    """The import nodes under `if TYPE_CHECKING:` (they never run)."""
    skipped: set[ast.AST] = set()
    for node in ast.walk(tree):
        test = getattr(node, "test", None)
        if isinstance(node, ast.If) and (
            (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
        ):
            for inner in node.body:
                skipped.update(ast.walk(inner))
    return skipped


def _resolve(name: str) -> str | None:
    """The evalgate module an imported name lives in (a package's module, or the package)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str) -> set[str]:
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_only(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from evalgate.gate import results` imports the module evalgate.gate.results
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            if target == "evalgate" or target.startswith("evalgate."):
                resolved = _resolve(target)
                if resolved and resolved != module:
                    found.add(resolved)
    # `from evalgate.gate import results` also names the package evalgate.gate; a package's
    # __init__ runs first, but only the most specific module imported is an arrow.
    return {m for m in found if not any(o.startswith(m + ".") for o in found)}


GRAPH = {module: imports_of(module) for module in MODULES}


def test_every_module_is_in_a_layer():
    for module in MODULES:
        layer(module)


def test_the_graph_sees_lazy_imports():
    # The check is worth something only if an import inside a function is an arrow too.
    assert "evalgate.scorers.hf_loader" in GRAPH["evalgate.scorers.loaders"]
    assert "evalgate.gate.results" in GRAPH["evalgate.pipeline"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_from_a_higher_layer(module):
    up = [
        f"{target} ({LAYERS[layer(target)][0]})"
        for target in sorted(GRAPH[module])
        if layer(target) > layer(module) and (module, target) not in UPWARD
    ]
    assert not up, f"{module} ({LAYERS[layer(module)][0]}) imports upward: {', '.join(up)}"


def test_upward_exceptions_still_exist():
    # An exception that no longer matches anything would silently allow a new arrow later.
    for module, target in UPWARD:
        assert target in GRAPH[module], f"{module} no longer imports {target}: drop it from UPWARD"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_no_import_cycle():
    graph = {m: {t for t in targets if (m, t) not in UPWARD} for m, targets in GRAPH.items()}
    assert not _cycles(graph), f"import cycles: {_cycles(graph)}"


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
