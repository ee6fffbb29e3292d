"""The Action's outputs describe this run only, never files an earlier run left in the output folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

from test_action_entry import fake_run, parse_github_output

from evalgate.gate.results import assemble_refused
from evalgate.github.action import main


def leave_an_old_pass(out: Path) -> None:
    out.mkdir(parents=True)
    doc = assemble_refused(reasons=[], findings=[], inputs={}, config_pin={})
    doc.update(verdict="pass", slices={"overall": {"n": 10, "correct": 9, "accuracy": 0.9}})
    (out / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    (out / "REPORT.md").write_text("## ✅ evalgate: pass (an old run)\n", encoding="utf-8")
    for name in ("results.json", "REPORT.md"):
        os.utime(out / name, (1_600_000_000, 1_600_000_000))  # a run from long ago


def test_a_run_that_wrote_nothing_does_not_report_the_previous_runs_pass(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    leave_an_old_pass(tmp_path / "evalgate-out")
    output, summary = tmp_path / "output.txt", tmp_path / "summary.md"
    env = {"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary), "INPUT_CONFIG": "nowhere.yml"}

    assert main(env) == 2  # the real CLI: a missing config stops before any output is written

    # report-path empty: action.yml's comment step is skipped rather than posting the old report
    assert parse_github_output(output.read_text(encoding="utf-8")) == {
        "verdict": "refused",
        "accuracy": "",
        "report-path": "",
    }
    assert "an old run" not in summary.read_text(encoding="utf-8")


def test_a_run_that_rewrote_its_outputs_is_reported(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    leave_an_old_pass(tmp_path / "evalgate-out")
    output = tmp_path / "output.txt"
    assert main({"GITHUB_OUTPUT": str(output)}, run=fake_run("fail", 1, accuracy=0.5)) == 1
    parsed = parse_github_output(output.read_text(encoding="utf-8"))
    assert parsed == {
        "verdict": "fail",
        "accuracy": "0.5",
        "report-path": str(Path("evalgate-out/REPORT.md")),
    }


def test_files_rewritten_identically_within_the_clock_tick_still_count(tmp_path, monkeypatch):
    """A fast run rewriting the same bytes in place may keep every stamp: recent files are trusted."""
    monkeypatch.chdir(tmp_path)
    output = tmp_path / "output.txt"
    for _ in range(2):
        output.write_text("", encoding="utf-8")
        assert main({"GITHUB_OUTPUT": str(output)}, run=fake_run("fail", 1, accuracy=0.5)) == 1
        assert parse_github_output(output.read_text(encoding="utf-8"))["accuracy"] == "0.5"
