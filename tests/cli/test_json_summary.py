"""`--format json` of `compare` (and `run`, same printer) carries the PR comment's numbers: every
gated slice with baseline, new, Wilson, delta, p and MDE, which ones the comment shows, and the
verdict. Keys are added to the summary; none is renamed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.paths import GOLDEN

from evalgate.cli import main

GOLDEN = GOLDEN / "REPORT-fail.results.json"
KEYS = {"slice", "n", "baseline", "new", "wilson_low", "wilson_high", "delta", "p_value", "p_adjusted", "mde"}


def compare_json(tmp_path: Path, capsys, baseline: Path) -> tuple[int, dict]:
    code = main(["compare", str(GOLDEN), str(baseline), "--format", "json", "--out", str(tmp_path / "out")])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.integration
def test_a_regression_prints_the_comment_table_and_the_verdict(tmp_path, capsys):
    doc = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for probe in doc["probes"]:
        if probe.get("language") == "es":
            probe["correct"] = True  # the baseline got every Spanish probe right
    base = tmp_path / "base.json"
    base.write_text(json.dumps(doc), encoding="utf-8")
    code, out = compare_json(tmp_path, capsys, base)
    assert code == 1 and out["verdict"] == "fail"
    assert {"verdict", "accuracy", "reasons", "findings", "warnings", "out"} <= set(out)  # kept
    written = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    compared = written["comparison"]["slices"]
    assert {r["slice"] for r in out["slices"]} == set(compared)
    for row in out["slices"]:
        assert set(row) >= KEYS
        c = compared[row["slice"]]
        assert (row["baseline"], row["new"], row["delta"], row["mde"]) == (
            c["baseline_accuracy"],
            c["accuracy"],
            c["delta"],
            c["mde"],
        )
        assert row["status"] == c["status"]
    assert out["comment_slices"]["kind"] == "regressed"
    assert "language:es" in out["comment_slices"]["slices"]
    assert set(out["comment_slices"]["slices"]) == {
        k for k, c in compared.items() if c["status"] == "regressed"
    }


@pytest.mark.integration
def test_a_pass_names_the_slices_closest_to_the_line(tmp_path, capsys):
    code, out = compare_json(tmp_path, capsys, GOLDEN)  # a results.json against itself
    assert code == 0 and out["verdict"] == "pass"
    assert out["comment_slices"]["kind"] == "closest" and len(out["comment_slices"]["slices"]) == 3
    assert all(r["delta"] == 0.0 for r in out["slices"])
