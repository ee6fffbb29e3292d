"""The fast tier holds what it promises: a test in it that loads the real model, takes a fixture
that does, or starts a child process fails, naming the rule (tests/helpers/tiers.py).

Checked on a real pytest run in a child process over test files written here, with the suite's
tier plugin, so what is checked is what `pytest -m fast` does to a new test file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from helpers.paths import REPO, TESTS
from helpers.tiers import INTEGRATION_DIRS, REAL_MODEL_FIXTURES, STRUCTURE_DIRS, TIERS

DEMO = REPO / "data" / "checkpoints" / "demo"

# Collected alongside the scorer's tests, the real model's module is already imported when a
# fast test runs; a fast test must still not build the model, in its body or through a fixture.
LOADED_FIRST = f"""
import subprocess
import sys
from pathlib import Path

import pytest

import evalgate.scorers.torch_lm  # imported at collection, as tests/scorers/ do
from evalgate.scorers.loaders import load_scorer

DEMO = Path({str(DEMO)!r})


def demo_scorer():
    return load_scorer(DEMO, None, root=DEMO.parent)


@pytest.fixture
def real_model():
    return demo_scorer()


def test_body_loads_the_model():
    demo_scorer()


def test_takes_a_fixture_that_loads_the_model(real_model):
    pass


def test_starts_a_child_process():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_pure_code():
    assert sorted([2, 1]) == [1, 2]


@pytest.mark.integration
def test_integration_loads_the_model(real_model):
    assert real_model is not None
"""

# Run alone, nothing has imported the real model's module yet: importing it is refused too.
NOT_YET_LOADED = """
def test_imports_the_model_lazily():
    from evalgate.scorers.loaders import load_scorer
    from evalgate.scorers.torch_lm import TorchScorer
"""


def _run_pytest(
    tmp_path: Path, *files: tuple[str, str], args: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> str:
    for name, text in files:
        (tmp_path / name).write_text(text, encoding="utf-8")
    path = os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "helpers.tiers", "-p", "no:cacheprovider", "-q", "-rA",
         *args, *(name for name, _ in files)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return done.stdout + done.stderr


def _outcomes(output: str) -> dict[str, str]:
    return {m[2]: m[1] for m in re.finditer(r"^(PASSED|FAILED|ERROR) \S+::(\w+)", output, re.M)}


def test_a_fast_test_that_loads_the_real_model_or_starts_a_process_fails(tmp_path):
    output = _run_pytest(tmp_path, ("test_loaded_first.py", LOADED_FIRST))
    assert _outcomes(output) == {
        "test_body_loads_the_model": "FAILED",
        "test_takes_a_fixture_that_loads_the_model": "ERROR",
        "test_starts_a_child_process": "FAILED",
        "test_pure_code": "PASSED",
        "test_integration_loads_the_model": "PASSED",
    }, output
    assert "a fast-tier test loads the real model (TorchScorer)" in output
    assert "a fast-tier test starts a child process" in output


def test_a_fast_test_that_imports_the_real_model_fails(tmp_path):
    output = _run_pytest(tmp_path, ("test_not_yet_loaded.py", NOT_YET_LOADED))
    assert _outcomes(output) == {"test_imports_the_model_lazily": "FAILED"}, output
    assert "imports the real model's scorer (evalgate.scorers.torch_lm)" in output


SIMULATION = """
import time

import pytest


def test_simulates():
    end = time.process_time() + 1.0
    while time.process_time() < end:
        pass


@pytest.mark.stats
def test_simulates_in_the_stats_tier():
    end = time.process_time() + 1.0
    while time.process_time() < end:
        pass
"""


def test_a_fast_test_that_takes_more_than_its_cpu_fails(tmp_path):
    # The ceiling is lowered for the check (10 s by default), so that it costs a second, not ten.
    limit = {"EVALGATE_FAST_TEST_CPU_SECONDS": "0.5"}
    output = _run_pytest(tmp_path, ("test_simulation.py", SIMULATION), env=limit)
    assert _outcomes(output) == {"test_simulates": "FAILED", "test_simulates_in_the_stats_tier": "PASSED"}
    assert re.search(r"a fast-tier test took \d+\.\d s of CPU \(at most 0\.5\)", output), output


def test_the_integration_tier_runs_last_and_m_fast_leaves_it_out(tmp_path):
    output = _run_pytest(
        tmp_path, ("test_loaded_first.py", LOADED_FIRST), args=("--collect-only", "-m", "fast")
    )
    assert "test_integration_loads_the_model" not in output, output
    assert "4/5 tests collected (1 deselected)" in output, output
    everything = _run_pytest(tmp_path, ("test_order.py", ORDER), args=("--collect-only",))
    listed = re.findall(r"^test_order.py::(\w+)$", everything, re.M)
    assert listed == ["test_fast", "test_structure", "test_stats", "test_integration"], everything


ORDER = """
import pytest

@pytest.mark.integration
def test_integration(): pass

@pytest.mark.stats
def test_stats(): pass

@pytest.mark.structure
def test_structure(): pass

def test_fast(): pass
"""


def test_every_folder_and_fixture_the_tiers_name_exists():
    # A renamed folder or fixture would silently move its tests into the fast tier.
    folders = {p.name for p in TESTS.iterdir() if p.is_dir()}
    assert folders >= (STRUCTURE_DIRS | INTEGRATION_DIRS)
    sources = "\n".join(p.read_text(encoding="utf-8") for p in TESTS.rglob("*.py"))
    missing = [f for f in sorted(REAL_MODEL_FIXTURES) if not re.search(rf"^\s*def {f}\(", sources, re.M)]
    assert not missing, f"REAL_MODEL_FIXTURES names fixtures no test defines: {missing}"
    assert TIERS[-1] == "integration"
