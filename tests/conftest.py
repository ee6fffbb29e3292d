"""Shared fixtures. Tests are offline: a guard refuses any socket connection beyond loopback."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from helpers.network import OFFLINE_ENV, guarded_connect, guarded_connect_ex, guarded_sendto
from helpers.paths import REPO


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
