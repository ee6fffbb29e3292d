"""`probes export --output` never replaces a FIFO, a device or a symlink with a regular file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.probeset_factory import cli_merged, write_base


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    write_base(tmp_path / "repo")
    return tmp_path / "repo"


def _export(repo: Path, output: Path) -> tuple[int, str]:
    config = str(repo / "evalgate.yml")
    return cli_merged("probes", "export", "--config", config, "--format", "csv", "-o", str(output))


def test_a_fifo_output_is_refused_and_kept(repo, tmp_path):
    fifo = tmp_path / "out.csv"
    os.mkfifo(fifo)
    code, out = _export(repo, fifo)
    assert code == 2 and "FIFO" in out
    assert fifo.is_fifo()


def test_a_symlink_output_is_refused_and_its_target_untouched(repo, tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n", encoding="utf-8")
    link = tmp_path / "out.csv"
    link.symlink_to(target)
    code, out = _export(repo, link)
    assert code == 2 and "symbolic link" in out
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "keep me\n"


def test_a_device_output_is_refused_by_type(repo):
    code, out = _export(repo, Path("/dev/null"))
    assert code == 2 and "character device" in out
    assert Path("/dev/null").is_char_device()


def test_a_regular_file_output_is_replaced(repo, tmp_path):
    out_file = tmp_path / "out.csv"
    out_file.write_text("old\n", encoding="utf-8")
    code, out = _export(repo, out_file)
    assert code == 0, out
    assert out_file.read_text(encoding="utf-8").startswith("id,")
