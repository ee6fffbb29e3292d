"""Shared fixtures. Tests are offline: a guard refuses any socket connection beyond loopback."""

from __future__ import annotations

import shutil
import socket
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from helpers.network import OFFLINE_ENV, guarded_connect, guarded_connect_ex, guarded_sendto
from helpers.paths import REPO

# The tiers (fast, structure, stats, integration): every test is marked with one and plain `pytest`
# runs them in that order; a fast test is held to its tier while it runs (helpers/tiers.py).
from helpers.tiers import (  # noqa: F401  (hooks: pytest finds them by name in this module)
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_ignore_collect,
    pytest_runtest_call,
    pytest_runtest_setup,
    pytest_runtest_teardown,
)


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from the repository's root, as a user in a checkout does, and not inside GitHub Actions
    even when the suite runs there (`GITHUB_ACTIONS` switches the console's output). A module asks
    for it with `pytestmark = pytest.mark.usefixtures("in_repo")`."""
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


# --- the network guard ------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every connection made in the test process goes to loopback or is refused.

    `socket.create_connection`, urllib and http.client all end in `socket.connect`, so patching it
    covers them; a datagram's `sendto` is checked the same way. Child processes (the Action's
    shell steps, `python -c`) are not patched: they inherit HF_HUB_OFFLINE=1 and
    TRANSFORMERS_OFFLINE=1, so the model hub's libraries in them never try to download.
    """
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket.socket, "sendto", guarded_sendto)
    for name, value in OFFLINE_ENV.items():
        monkeypatch.setenv(name, value)


# --- the command line, in-process -------------------------------------------------------------


class CliResult(NamedTuple):
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run `evalgate ARGS...` in this process: (exit code, stdout, stderr), the streams apart.

    Whatever the test printed before is dropped, so `out` and `err` hold this command's alone.
    """

    from evalgate.cli import main

    def run(*argv: str | Path) -> CliResult:
        capsys.readouterr()
        code = main([str(a) for a in argv])
        cap = capsys.readouterr()
        return CliResult(code, cap.out, cap.err)

    return run


# --- the shipped demo, scored once per session ------------------------------------------------


class DemoRun(NamedTuple):
    code: int
    out: Path  # this test's own copy of the run's output folder


@pytest.fixture(scope="session")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., DemoRun]:
    """`evalgate ARGS... --out DIR` (a run: the default command) from the repository's root, on its
    shipped demo.

    Each distinct ARGS is scored once per session and every test that asks gets its own copy of
    the outputs, so a test may write there. Sharing is safe because a run is deterministic
    (byte-identical results.json, tests/e2e/test_gate_run.py) and nothing a test does reaches the
    cached folder. Taking this fixture makes a test an integration test (helpers/tiers.py).
    """
    from evalgate.cli import main

    done: dict[tuple[str, ...], tuple[int, Path]] = {}

    def run(*args: str | Path) -> DemoRun:
        key = tuple(str(a) for a in args)
        if key not in done:
            out = tmp_path_factory.mktemp("demo-run") / "out"
            with pytest.MonkeyPatch.context() as patch:
                patch.chdir(REPO)
                patch.delenv("GITHUB_ACTIONS", raising=False)
                patch.setattr(socket.socket, "connect", guarded_connect)
                patch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
                patch.setattr(socket.socket, "sendto", guarded_sendto)
                for name, value in OFFLINE_ENV.items():
                    patch.setenv(name, value)
                done[key] = (main([*key, "--out", str(out)]), out)
        code, out = done[key]
        mine = tmp_path_factory.mktemp("demo-copy") / "out"
        shutil.copytree(out, mine)
        return DemoRun(code, mine)

    return run
