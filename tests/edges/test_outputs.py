"""write_outputs: every file, the same bytes on re-run, refused runs, schema bugs, atomicity."""

from __future__ import annotations

import json
import os

import pytest
from helpers.report_factories import fake_run, no_baseline_run, refused_run

import evalgate.edges.files as files_mod
from evalgate.config import ReportConfig
from evalgate.edges import outputs
from evalgate.edges.outputs import ResultsSchemaError, write_outputs
from evalgate.report.full_report import MARKER_PREFIX, render_report

ALL = ["REPORT.md", "badge.json", "badge.svg", "per_slice.csv", "per_slice.png", "results.json"]


def listing(folder) -> list[str]:
    return sorted(os.listdir(folder))


@pytest.mark.integration
def test_all_files_written_and_identical_on_rerun(tmp_path):
    results = fake_run()
    paths = write_outputs(
        results, tmp_path / "a", ReportConfig(max_chars=65000, max_flipped=50, review_entropy=0.8)
    )
    assert sorted(paths) == ALL and listing(tmp_path / "a") == ALL
    assert list(paths)[-1] == "results.json"  # written last
    assert json.loads((tmp_path / "a" / "results.json").read_text("utf-8")) == results
    assert (tmp_path / "a" / "REPORT.md").read_text("utf-8") == render_report(results)
    assert json.loads((tmp_path / "a" / "badge.json").read_text("utf-8"))["message"].startswith("fail · ")
    assert (tmp_path / "a" / "per_slice.csv").read_text("utf-8").startswith("slice,family,n,")
    write_outputs(fake_run(), tmp_path / "b", None)
    for name in ALL:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


@pytest.mark.integration
def test_report_settings_are_applied(tmp_path):
    write_outputs(fake_run(), tmp_path, ReportConfig(max_chars=65000, max_flipped=3, review_entropy=0.8))
    report = (tmp_path / "REPORT.md").read_text("utf-8")
    assert "_Showing 3 of 14 probes that flipped right → wrong" in report


@pytest.mark.integration
def test_refused_run_writes_report_badges_and_results_only(tmp_path):
    write_outputs(no_baseline_run(), tmp_path, None)
    assert listing(tmp_path) == ALL
    paths = write_outputs(refused_run(), tmp_path, None)
    assert sorted(paths) == ["REPORT.md", "badge.json", "badge.svg", "results.json"]
    # the earlier run's picture and table are gone: they would be read as this run's
    assert listing(tmp_path) == ["REPORT.md", "badge.json", "badge.svg", "results.json"]
    assert json.loads((tmp_path / "results.json").read_text("utf-8"))["verdict"] == "refused"
    assert (tmp_path / "REPORT.md").read_text("utf-8").startswith("## ⛔ evalgate: refused")
    assert json.loads((tmp_path / "badge.json").read_text("utf-8"))["color"] == "lightgrey"


def test_schema_failure_is_a_bug_and_writes_nothing(tmp_path):
    bad = fake_run()
    del bad["slices"]
    with pytest.raises(ResultsSchemaError, match="slices"):
        write_outputs(bad, tmp_path / "out", None)
    assert not (tmp_path / "out").exists()


@pytest.mark.integration
def test_render_failure_leaves_earlier_outputs_untouched(tmp_path, monkeypatch):
    write_outputs(no_baseline_run(), tmp_path, None)
    before = {name: (tmp_path / name).read_bytes() for name in ALL}

    def broken(results):
        raise RuntimeError("matplotlib exploded")

    import evalgate.edges.plot as plot

    monkeypatch.setattr(plot, "render_png", broken)
    with pytest.raises(RuntimeError, match="exploded"):
        write_outputs(fake_run(), tmp_path, None)
    assert {name: (tmp_path / name).read_bytes() for name in ALL} == before


@pytest.mark.integration
def test_crash_mid_write_leaves_no_partial_file_and_the_earlier_results(tmp_path, monkeypatch):
    write_outputs(no_baseline_run(), tmp_path, None)
    old_results = (tmp_path / "results.json").read_bytes()
    old_png = (tmp_path / "per_slice.png").read_bytes()
    real_replace = os.replace

    def replace(src, dst):
        if str(dst).endswith("per_slice.png"):
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(files_mod.os, "replace", replace)
    with pytest.raises(OSError, match="No space"):
        write_outputs(fake_run(), tmp_path, None)
    assert listing(tmp_path) == ALL  # no temporary file left behind
    assert (tmp_path / "results.json").read_bytes() == old_results
    assert (tmp_path / "per_slice.png").read_bytes() == old_png
    # the files written before the crash are whole new files, never a prefix
    report = (tmp_path / "REPORT.md").read_text("utf-8")
    assert report.startswith("## ❌") and report.rstrip().endswith("-->") and MARKER_PREFIX in report


@pytest.mark.integration
def test_outputs_module_declares_results_last():
    files = outputs.render_outputs(no_baseline_run())
    assert list(files) == [
        "REPORT.md",
        "badge.json",
        "badge.svg",
        "per_slice.csv",
        "per_slice.png",
        "results.json",
    ]
