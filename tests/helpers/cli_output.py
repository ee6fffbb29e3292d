"""Reading what the command line printed."""

from __future__ import annotations

import json

import pytest


def json_stdout(capsys: pytest.CaptureFixture[str]) -> dict:
    out = capsys.readouterr().out
    return json.loads(out)  # the whole of stdout is one JSON document
