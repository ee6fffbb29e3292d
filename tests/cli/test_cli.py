from __future__ import annotations

import subprocess
import sys

import pytest

from evalgate import __version__
from evalgate.cli import _normalise_argv, main


def test_run_is_the_default_command():
    assert _normalise_argv([]) == ["run"]
    assert _normalise_argv(["--checkpoint", "x"]) == ["run", "--checkpoint", "x"]
    assert _normalise_argv(["validate"]) == ["validate"]
    assert _normalise_argv(["--version"]) == ["--version"]


def test_version_and_help(capsys):
    assert main(["--version"]) == 0
    assert __version__ in capsys.readouterr().out
    for cmd in (
        ["--help"],
        ["run", "--help"],
        ["validate", "--help"],
        ["baseline", "update", "--help"],
        ["compare", "--help"],
        ["comment", "--help"],
        ["probes", "build", "--help"],
    ):
        assert main(cmd) == 0, cmd


def test_usage_error_exits_2(capsys):
    assert main(["validate", "--format", "xml"]) == 2


@pytest.mark.integration
def test_python_dash_m():
    out = subprocess.run([sys.executable, "-m", "evalgate", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and __version__ in out.stdout
