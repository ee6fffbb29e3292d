"""Probe-set commands given a path they cannot write (a file for a folder, a folder for a file, a
read-only place) refuse before any work, never crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.paths import GOLDEN
from helpers.probeset_factory import cli_merged, write_base


def _findings(cfg: Path, *extra: str) -> tuple[int, list[dict]]:
    code, out = cli_merged("validate", "--config", str(cfg), "--format", "json", *extra)
    return code, json.loads(out)["findings"]


def test_an_out_path_that_is_a_file_is_refused_before_any_work(tmp_path):
    cfg = write_base(tmp_path)
    taken = tmp_path / "results.json"
    taken.write_text("{}", encoding="utf-8")
    for out in (taken, taken / "sub"):
        code, text = cli_merged("run", "--config", str(cfg), "--baseline", "none", "--out", str(out))
        assert code == 2, text
        assert "output folder" in text and "not a folder" in text and "unexpected error" not in text
        code, text = cli_merged("compare", str(taken), str(taken), "--config", str(cfg), "--out", str(out))
        assert code == 2 and "not a folder" in text, text
    assert taken.read_text(encoding="utf-8") == "{}"


def test_export_to_a_folder_is_refused_not_a_crash(tmp_path):
    cfg = write_base(tmp_path)
    code, out = cli_merged(
        "probes", "export", "--format", "csv", "--config", str(cfg), "-o", str(tmp_path / "data")
    )
    assert code == 2, out
    assert "--output" in out and "folder" in out and "unexpected error" not in out


def test_probes_build_refuses_unusable_paths_instead_of_crashing(tmp_path):
    taken = tmp_path / "afile"
    taken.write_text("", encoding="utf-8")
    code, out = cli_merged("probes", "build", "--out-dir", str(taken))
    assert code == 2 and "unexpected error" not in out and str(taken) in out, out
    code, out = cli_merged("probes", "build", "--grammar", str(tmp_path), "--out-dir", str(tmp_path / "o"))
    assert code == 2 and "unexpected error" not in out and "folder" in out, out


def test_a_manifest_path_that_is_a_folder_is_a_finding_and_seal_refuses(tmp_path):
    cfg = write_base(tmp_path)
    (tmp_path / "data/eval/MANIFEST.json").mkdir()
    code, findings = _findings(cfg)
    assert code == 2
    assert [(f["check"], f["file"]) for f in findings] == [("file-missing", "data/eval/MANIFEST.json")]
    assert "manifest:" in findings[0]["hint"]
    code, out = cli_merged("probes", "seal", "--config", str(cfg))
    assert code == 2 and "unexpected error" not in out, out


def test_seal_that_cannot_write_the_manifest_is_refused(tmp_path):
    cfg = write_base(tmp_path)
    (tmp_path / "afile").write_text("", encoding="utf-8")
    cfg.write_text(cfg.read_text(encoding="utf-8") + "manifest: afile/MANIFEST.json\n", encoding="utf-8")
    code, out = cli_merged("probes", "seal", "--config", str(cfg))
    assert code == 2 and "unexpected error" not in out and "MANIFEST.json" in out, out


@pytest.mark.integration
def test_baseline_update_that_cannot_write_is_refused(tmp_path):
    cfg = write_base(tmp_path)
    (tmp_path / "baselines").write_text("not a folder", encoding="utf-8")
    results = GOLDEN / "REPORT-fail.results.json"
    code, out = cli_merged(
        "baseline", "update", "--config", str(cfg), "--from-results", str(results), "--name", "t"
    )
    assert code == 2 and "unexpected error" not in out and "baselines" in out, out
