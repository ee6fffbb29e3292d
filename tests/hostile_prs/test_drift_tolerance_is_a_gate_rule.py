"""Hostile PR: the drift check switched off or loosened by the pull request's own evalgate.yml
(issue 25 §3). `gate.drift_tolerance` is pinned into the baseline like every gate rule, so a run
whose configuration drops or widens it changes its own gate: refused (exit 2) unless a maintainer
approved the change (docs/approval.md). Real CLI (`compare`), real files."""

from __future__ import annotations

import json

import pytest
from helpers.factories import make_entry, make_results
from helpers.paths import REPO

from evalgate.gate.results import round_floats

LINE = "  # drift_tolerance: 0.03 "


def _results(tmp_path, right: int, drift: float):
    entries = [make_entry(f"p-{i:03d}", i < right, language=("en", "es")[i % 2]) for i in range(300)]
    doc = make_results(entries)
    doc["config"]["gate"]["drift_tolerance"] = drift
    path = tmp_path / f"r{right}.json"
    path.write_text(json.dumps(round_floats(doc)), encoding="utf-8")
    return path


@pytest.mark.parametrize("drift", [None, "0.5"])
def test_a_pr_that_drops_or_widens_the_drift_tolerance_is_refused(tmp_path, cli, monkeypatch, drift):
    """Attack: the PR's evalgate.yml removes `gate.drift_tolerance` (or sets it to 50 points), so
    the drift its checkpoint carries since the anchor is never checked."""
    monkeypatch.chdir(tmp_path)
    text = (REPO / "evalgate.yml").read_text(encoding="utf-8")
    base = text.replace(LINE, "  drift_tolerance: 0.03".ljust(len(LINE)))
    (tmp_path / "evalgate.yml").write_text(base, encoding="utf-8")
    made = cli("baseline", "update", "--from-results", _results(tmp_path, 290, 0.03), "--name", "m")
    assert made.code == 0, made.err
    pr = text if drift is None else text.replace(LINE, f"  drift_tolerance: {drift}".ljust(len(LINE)))
    (tmp_path / "evalgate.yml").write_text(pr, encoding="utf-8")
    results = _results(tmp_path, 250, 0.03)
    got = cli("compare", results, "baselines/m.json", "--out", tmp_path / "out")
    assert got.code == 2
    assert "gate.drift_tolerance" in got.out + got.err
