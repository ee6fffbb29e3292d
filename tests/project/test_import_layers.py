"""Every import arrow points down, and no module imports itself back (docs/ARCHITECTURE.md).

The import graph of src/evalgate is built statically from the source (ast), imports inside
functions included, since a lazy import is an arrow all the same; imports under
`if TYPE_CHECKING:` count too: a type names what a module depends on as much as a call does, and
a type-only cycle is a cycle of the design (the synth builder's was one). The layers, lowest first:

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
cycle. Inside the pure layer the packages are ranked too, in the order a run's data flows:

    foundations (types, errors, release, schemas) -> probe set (probeset/) -> scoring (scoring/),
    probe generation (synth/) -> gate (gate/, the results document included) -> report (report/)

A pure module imports its own package or one ranked below it; two packages of one rank never
import each other. Over the whole source the packages form no cycle (an arrow between two modules
is an arrow between their packages), so a package can be read, and moved, without its siblings.

`config` sits below the edges so that they can import it (edges/inputs checks against
paths.allowed_roots, github/pr_scope reads the default configuration) while it imports none of
them. The one arrow up is listed in `UPWARD`, with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

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

# The pure packages' ranks, lowest first (the docstring's chain).
PURE_RANKS: tuple[tuple[str, ...], ...] = (
    ("types", "errors", "release", "schemas"),
    ("probeset",),
    ("scoring", "synth"),
    ("gate",),
    ("report",),
)

# Modules that are entry points kept at an old address: each only starts the entry it names, so it
# is ranked with the entries and is no arrow between its folder and the entry's.
SHIMS = {
    # `python -m evalgate.edges.pr_scope` / `.action`: workflows written before 0.2 still run them.
    "evalgate.edges.pr_scope",
    "evalgate.edges.action",
}

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
    if module in SHIMS:
        return len(LAYERS) - 1
    top = module.split(".")[1] if "." in module else ""
    for rank, (_, tops) in enumerate(LAYERS):
        if top in tops:
            return rank
    raise AssertionError(f"{module} is in no layer: add its top-level name to LAYERS")


def _resolve(name: str) -> str | None:
    """The evalgate module an imported name lives in (a package's module, or the package)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str) -> set[str]:
    path = MODULES[module]
    return imports_of_source(module, path.read_text(encoding="utf-8"), path.name == "__init__.py")


def imports_of_source(module: str, source: str, is_package: bool = False) -> set[str]:
    """The evalgate modules `source` (the text of `module`) imports, lazily or for types only."""
    tree = ast.parse(source)
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
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


def test_the_graph_sees_lazy_and_type_only_imports():
    # The check is worth something only if an import inside a function, or one made for a type
    # annotation alone, is an arrow too.
    assert "evalgate.scorers.hf_loader" in GRAPH["evalgate.scorers.loaders"]
    assert "evalgate.gate.results" in GRAPH["evalgate.pipeline"]
    assert "evalgate.gate.document" in imports_of_source(
        "evalgate.scoring.x",
        "if TYPE_CHECKING:\n    from evalgate.gate.document import Ordinal\n",
    )


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every arrow from a module to a higher layer, not listed in UPWARD."""
    return [
        f"{module} ({LAYERS[layer(module)][0]}) -> {target} ({LAYERS[layer(target)][0]})"
        for module in sorted(graph)
        for target in sorted(graph[module])
        if layer(target) > layer(module) and (module, target) not in UPWARD
    ]


def test_no_import_from_a_higher_layer():
    up = upward_imports(GRAPH)
    assert not up, "imports upward:\n" + "\n".join(up)


def package(module: str) -> str:
    """The package a module belongs to: `evalgate.gate` for evalgate.gate.stats, the module itself
    for a top-level module (evalgate.pipeline)."""
    parts = module.split(".")
    if len(parts) > 1 and (SRC / parts[1]).is_dir():
        return ".".join(parts[:2])
    return module


def pure_rank(module: str) -> int | None:
    top = package(module).removeprefix("evalgate.")
    return next((rank for rank, names in enumerate(PURE_RANKS) if top in names), None)


def unranked_pure_packages() -> list[str]:
    pure = set(LAYERS[0][1])
    ranked = {name for names in PURE_RANKS for name in names}
    return sorted(pure ^ ranked)


def pure_rank_faults(graph: dict[str, set[str]]) -> list[str]:
    """Every arrow in the pure layer to a package ranked above, or to a sibling of the same rank."""
    out = []
    for module in sorted(graph):
        rank = pure_rank(module)
        if rank is None:
            continue
        for target in sorted(graph[module]):
            target_rank = pure_rank(target)
            if target_rank is None or package(target) == package(module):
                continue
            if target_rank > rank:
                out.append(f"{module} -> {target}: {package(target)} is ranked above {package(module)}")
            elif target_rank == rank:
                out.append(f"{module} -> {target}: {package(target)} and {package(module)} are siblings")
    return out


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        if module in SHIMS:
            continue
        packages.setdefault(package(module), set()).update(
            package(t) for t in targets if package(t) != package(module) and (module, t) not in UPWARD
        )
    return packages


def test_every_pure_package_is_ranked():
    assert not unranked_pure_packages(), f"rank these in PURE_RANKS: {unranked_pure_packages()}"


def test_pure_packages_import_only_down_the_chain():
    faults = pure_rank_faults(GRAPH)
    assert not faults, "\n".join(faults)


def test_no_package_cycle():
    cycles = _cycles(package_graph(GRAPH))
    assert not cycles, f"package cycles: {cycles}"


def test_the_package_rules_see_the_cycles_they_forbid():
    # Each arrow below was in the source before the pure packages were ranked; each still fails.
    graph = {
        "evalgate.gate.baseline_diff": {"evalgate.report.markdown"},
        "evalgate.report.comment": {"evalgate.gate.baseline_diff"},
        "evalgate.report.markdown": set(),
        "evalgate.probeset.outcome": {"evalgate.report.coverage_table"},
        "evalgate.report.coverage_table": set(),
        "evalgate.probeset.records": {"evalgate.scoring.ordinal"},
        "evalgate.scoring.ordinal": {"evalgate.gate.document"},
        "evalgate.gate.document": set(),
    }
    assert [fault.partition(":")[0] for fault in pure_rank_faults(graph)] == [
        "evalgate.gate.baseline_diff -> evalgate.report.markdown",
        "evalgate.probeset.outcome -> evalgate.report.coverage_table",
        "evalgate.probeset.records -> evalgate.scoring.ordinal",
        "evalgate.scoring.ordinal -> evalgate.gate.document",
    ]
    assert ["evalgate.gate", "evalgate.report"] in _cycles(package_graph(graph))
    # the synth builder's cycle was made of a type-only import: the graph now holds such arrows
    synth = {
        "evalgate.synth.probes": {"evalgate.synth.adversarial"},
        "evalgate.synth.adversarial": imports_of_source(
            "evalgate.synth.adversarial",
            "if TYPE_CHECKING:\n    from evalgate.synth.probes import _Builder\n",
        ),
    }
    assert _cycles(synth) == [["evalgate.synth.adversarial", "evalgate.synth.probes"]]


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
