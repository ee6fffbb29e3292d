"""An earlier REPORT.md (or one the pull request committed into the output folder) never passes
for this run's, and a symlinked output folder or file is never written through."""

from __future__ import annotations

import sys

import pytest
from helpers.hostile_repo import make_repo

OUTPUTS = ("REPORT.md", "results.json", "per_slice.csv", "per_slice.png", "badge.json", "badge.svg")


@pytest.fixture
def repo(tmp_path, monkeypatch):
    repo = make_repo(tmp_path, monkeypatch)
    (repo / "boom_loader.py").write_text(
        "class Boom(BaseException):\n    pass\n\ndef load(path):\n    raise Boom('killed')\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(repo))
    yield repo
    sys.modules.pop("boom_loader", None)


def test_a_run_that_stops_early_leaves_no_earlier_report(repo, cli):
    out = repo / "evalgate-out"
    out.mkdir()
    for name in OUTPUTS:
        (out / name).write_text("verdict: PASS (committed by the pull request)\n", encoding="utf-8")
    (out / ".REPORT.md.abc123.tmp").write_text("half", encoding="utf-8")
    (out / "notes.txt").write_text("not ours\n", encoding="utf-8")
    code, _, _ = cli("run", "--loader", "boom_loader:load", "--baseline", "none")
    assert code == 3  # stopped before any output of its own
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_a_symlinked_output_folder_is_refused(repo, tmp_path, cli):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / "evalgate-out").symlink_to(elsewhere)
    code, _, err = cli("run", "--baseline", "none")
    assert code == 2
    assert "symbolic link" in err
    assert list(elsewhere.iterdir()) == []


def test_a_symlinked_output_file_is_refused(repo, tmp_path, cli):
    target = tmp_path / "victim.md"
    target.write_text("keep me\n", encoding="utf-8")
    (repo / "evalgate-out").mkdir()
    (repo / "evalgate-out" / "REPORT.md").symlink_to(target)
    code, _, err = cli("compare", "baselines/demo.json", "baselines/demo.json")
    assert code == 2
    assert "REPORT.md" in err and "symbolic link" in err
    assert target.read_text(encoding="utf-8") == "keep me\n"
