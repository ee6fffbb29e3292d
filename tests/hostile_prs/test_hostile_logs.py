"""Names a pull request controls (tensor names, file names, probe ids) cannot write workflow
commands into the log: every line evalgate prints is escaped, whatever the data."""

from __future__ import annotations

import io
import json
import os
import re

import pytest
import safetensors.torch
import torch
from helpers.hostile_repo import make_repo, results, workflow_command_lines

from evalgate.console import SafeStream, safe_line

INJECTED = "x\n::stop-commands::t0ken\n::add-mask::secret\r::error::fake pass"
OURS = re.compile(r"::(error|warning|notice)( [^:]*)?::")


@pytest.fixture
def repo(tmp_path, monkeypatch):
    repo = make_repo(tmp_path, monkeypatch)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")  # our own annotations are printed too
    return repo


def assert_no_injected_command(text: str) -> None:
    for line in workflow_command_lines(text):
        assert OURS.match(line.lstrip()), line  # only evalgate's annotations start with ::
        assert not line.lstrip().startswith("::error::fake")  # the data stays inside our message


def test_a_tensor_name_cannot_write_workflow_commands(repo, cli):
    weights = repo / "data" / "checkpoints" / "demo" / "model.safetensors"
    state = safetensors.torch.load_file(weights)
    state[INJECTED] = torch.zeros(1)
    safetensors.torch.save_file(state, weights)
    code, out, err = cli("run", "--baseline", "none")
    assert code == 2
    assert "unexpected tensor" in err
    assert_no_injected_command(out + err)
    assert not any(ln.lstrip().startswith("::stop-commands") for ln in (out + err).splitlines())
    assert results(repo)["verdict"] == "refused"


def test_a_file_name_cannot_write_workflow_commands(repo, cli):
    os.mkfifo(repo / "data" / "checkpoints" / "demo" / INJECTED.replace("\r", ""))
    code, out, err = cli("run", "--baseline", "none")
    assert code == 2
    assert "not a regular file" in err
    assert_no_injected_command(out + err)


def test_a_probe_id_cannot_write_workflow_commands(repo, cli):
    path = repo / "data" / "eval" / "ordinal.jsonl"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": INJECTED, "prompt": INJECTED}) + "\n")
    code, out, err = cli("validate", "--format", "text")
    assert code == 2
    assert_no_injected_command(out + err)
    code, out, err = cli("validate", "--format", "github")
    assert code == 2
    assert_no_injected_command(out + err)


def test_safe_stream_holds_a_line_start_split_across_writes():
    raw = io.StringIO()
    stream = SafeStream(raw)
    for piece in ("  :", ":stop-commands", "::t\n", "ok ::x\r", ":", "", ":add-mask::y\n"):
        stream.write(piece)
    stream.close_line()
    assert workflow_command_lines(raw.getvalue()) == []
    assert safe_line("a\n ::x\r::y") == "a\n \\::x\r\\::y"
    assert "##[" not in safe_line("say ##[set-output name=v]1")
