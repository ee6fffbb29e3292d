"""The suite's tiers (README, "Tests"): every test lands in exactly one, by default, with no mark.

    fast         pure code and the fake scorer: no real model, no child process (no CLI in a
                 subprocess, no git, no docker), no simulation. `pytest -m fast`: the inner loop.
    structure    checks of the source itself (import layers, I/O boundaries, lint, types, docs
                 drift): tests/project/, `python -m tests.project`.
    stats        statistics simulations and enumerations (bench/ models, Westfall-Young,
                 cluster Monte Carlo, exact sizes): `pytest -m stats`.
    integration  whole runs: real models, the CLI over the shipped data, child processes (the
                 CLI, git, the workflows' scripts), docker: `pytest -m integration`; run last.

Plain `pytest` runs every tier (the README's command and `.ci/run`), integration last, as
pypa/build's tests/conftest.py sorts its integration tests.

How a test is placed, first rule that applies:
1. a tier's mark on the test, its class or its module (`pytestmark = pytest.mark.stats`);
2. its folder: tests/project/ is structure; e2e/, github/, hostile_prs/ and scorers/ are
   integration (they drive real models, git and the workflows' scripts);
3. the `slow` or `docker` mark: integration;
4. a fixture in REAL_MODEL_FIXTURES among the fixtures it takes, directly or through another
   fixture: integration;
5. otherwise fast.

A fast test is also held to it while it runs: constructing the real model's scorer
(`TorchScorer`, which every loader returns: Hugging Face, native, plugin), importing its module, or
starting a child process fails the test, in its fixtures' setup as in its body, and so does a body
that takes more than FAST_CPU_SECONDS of CPU (a simulation left in the fast tier), naming the rule
(tests/project/test_test_tiers.py shows that it does). So a new test that needs the real model and
was left in the fast tier fails at once instead of slowing the inner loop.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib.abc import MetaPathFinder
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

TIERS = ("fast", "structure", "stats", "integration")  # also the order plain `pytest` runs them in
STRUCTURE_DIRS = frozenset({"project"})
INTEGRATION_DIRS = frozenset({"e2e", "github", "hostile_prs", "scorers"})
INTEGRATION_MARKS = ("slow", "docker")
# Fixtures that load the real model or run the demo (a test taking one is integration). A fixture
# of this list that no longer exists fails tests/project/test_test_tiers.py.
REAL_MODEL_FIXTURES = frozenset({"demo_runs"})
REAL_MODEL_MODULE = "evalgate.scorers.torch_lm"
# Programs a library starts on its own, once per machine: matplotlib lists the fonts with fc-list
# when it builds its font cache. Anything else a fast test starts is refused.
LIBRARY_PROGRAMS = frozenset({"fc-list"})
# The most CPU one fast test's body may take. A fast test takes under 0.5 s on the 2-core machine
# the tiers were measured on, but the first fast tests of a session pay for every first import
# (matplotlib, jsonschema, numpy) and, in a clean clone, for compiling the bytecode of everything
# they import: 7.4 s for one test there, which failed CI at a 5 s limit. The simulations this
# catches take 14 s to minutes; a whole run over the shipped data belongs in the integration tier.
FAST_CPU_SECONDS = float(os.environ.get("EVALGATE_FAST_TEST_CPU_SECONDS", "20"))

MARKERS = {
    "fast": "pure code and the fake scorer, no real model, no child process (tests/helpers/tiers.py)",
    "structure": "checks of the source itself: layers, boundaries, lint, types, docs drift",
    "stats": "statistics simulations and enumerations; seconds to minutes",
    "integration": "whole runs: real models, the CLI over the shipped data, child processes, docker; last",
}


class FastTierViolation(AssertionError):
    """A fast-tier test did what only an integration test may."""


def tier_of(item: pytest.Item) -> str:
    marked = [tier for tier in TIERS if item.get_closest_marker(tier)]
    if len(marked) > 1:
        raise pytest.UsageError(f"{item.nodeid}: marked {' and '.join(marked)}; a test has one tier")
    if marked:
        return marked[0]
    try:
        folder = Path(str(item.path)).resolve().relative_to(TESTS).parts[0]
    except ValueError:
        folder = ""
    if folder in STRUCTURE_DIRS:
        return "structure"
    if folder in INTEGRATION_DIRS or any(item.get_closest_marker(m) for m in INTEGRATION_MARKS):
        return "integration"
    if REAL_MODEL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return "integration"
    return "fast"


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under `-m fast`, the folders whose every test is in another tier are not even imported (the
    real model's libraries load at their import): collecting them would cost the inner loop more
    than its tests. A fast mark on a test there is therefore never run by `-m fast`."""
    if config.getoption("markexpr", "") != "fast":
        return None
    folder = Path(collection_path)
    if folder.parent == TESTS and folder.name in STRUCTURE_DIRS | INTEGRATION_DIRS:
        return True
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its tier (before `-m` selects on it), then run the tiers in order."""
    order = {tier: rank for rank, tier in enumerate(TIERS)}
    ranks = {}
    for item in items:
        tier = tier_of(item)
        if not item.get_closest_marker(tier):
            item.add_marker(tier)
        ranks[item.nodeid] = order[tier]
    items.sort(key=lambda item: ranks[item.nodeid])  # stable: file order within a tier


# --- holding a fast test to its tier while it runs -------------------------------------------


def _refuse(what: str) -> FastTierViolation:
    return FastTierViolation(
        f"a fast-tier test {what}: mark it `pytest.mark.integration` (or take a fixture of "
        "REAL_MODEL_FIXTURES), or use the fake scorer (tests/helpers/tiers.py)"
    )


class _RefuseRealModelImport(MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == REAL_MODEL_MODULE:
            raise _refuse(f"imports the real model's scorer ({REAL_MODEL_MODULE})")
        return None


@contextlib.contextmanager
def held_to_the_fast_tier() -> Iterator[None]:
    """While inside: no real model's scorer is built or imported, and no child process starts."""
    patch = pytest.MonkeyPatch()
    finder = _RefuseRealModelImport()
    try:
        module = sys.modules.get(REAL_MODEL_MODULE)
        if module is not None:

            def refuse_model(*args, **kwargs):
                raise _refuse("loads the real model (TorchScorer)")

            patch.setattr(module.TorchScorer, "__init__", refuse_model)
        else:
            sys.meta_path.insert(0, finder)

        start = subprocess.Popen.__init__

        def refuse_process(self, args, *rest, **kwargs):
            program = args if isinstance(args, str | bytes | Path) else next(iter(args), "")
            if Path(str(program).split()[0] if program else "").name not in LIBRARY_PROGRAMS:
                raise _refuse(f"starts a child process ({args!r:.80})")
            start(self, args, *rest, **kwargs)

        patch.setattr(subprocess.Popen, "__init__", refuse_process)
        yield
    finally:
        patch.undo()
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(finder)


def _held(item: pytest.Item) -> contextlib.AbstractContextManager[None]:
    return held_to_the_fast_tier() if item.get_closest_marker("fast") else contextlib.nullcontext()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    with _held(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    with _held(item):
        start = time.process_time()
        result = yield
        spent = time.process_time() - start
        if log := os.environ.get("EVALGATE_TIER_CPU_LOG"):  # where the tiers' figures come from
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(f"{spent:.3f} {tier_of(item)} {item.nodeid}\n")
        if item.get_closest_marker("fast") and spent > FAST_CPU_SECONDS:
            raise FastTierViolation(
                f"a fast-tier test took {spent:.1f} s of CPU (at most {FAST_CPU_SECONDS:g}): "
                "a simulation or enumeration is a `pytest.mark.stats` test (tests/helpers/tiers.py)"
            )
        return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    with _held(item):
        return (yield)
