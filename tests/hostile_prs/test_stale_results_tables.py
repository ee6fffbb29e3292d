"""A results file whose tables say something its per-probe entries do not (issue 25 §4).

`evalgate compare RESULTS BASELINE` gates a results.json read back, and `baseline update
--from-results` makes a baseline of one: a hand can edit the `slices` table without touching the
entries the paired test pairs. Every number that decides or is stated (floors, the headline, the
console line, the candidate slices, the baseline's tables) is recomputed from the entries.
"""

from __future__ import annotations

import json

import pytest
from helpers.factories import make_entry, make_results
from helpers.gate_inputs import baseline_of, write_json
from helpers.paths import REPO

from evalgate.gate.results import round_floats


def _entries(right: int, n: int = 300) -> list[dict]:
    return [make_entry(f"p-{i:03d}", i < right, language=("en", "es")[i % 2]) for i in range(n)]


def _config(tmp_path, gate_lines: str) -> str:
    cfg = tmp_path / "gate.yml"
    text = (REPO / "evalgate.yml").read_text(encoding="utf-8")
    cfg.write_text(text.replace("gate:\n", "gate:\n" + gate_lines, 1), encoding="utf-8")
    return str(cfg)


def test_a_stale_slices_table_cannot_pass_a_floor_on_a_run_at_2_percent(tmp_path, cli):
    """The results file says 97.7% overall, its probes say 2.3%: a 90% floor must fail it, and the
    headline and console must state 2.3% (the demo's 97.7% -> 2.3%, as the audit found)."""
    good, bad = _entries(293), _entries(7)  # 97.7% and 2.3% of 300
    doc = make_results(bad)
    doc["slices"] = make_results(good)["slices"]  # the hand-edited table
    results = write_json(tmp_path / "results.json", doc)
    base = write_json(tmp_path / "base.json", baseline_of(bad))  # even against itself
    cfg = _config(tmp_path, "  min_accuracy: {overall: 0.9}\n")
    got = cli("compare", "--config", cfg, "--approve-gate-changes", results, base, "--out", tmp_path / "out")
    assert got.code == 1, got.out + got.err
    out = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert out["verdict"] == "fail"
    assert out["floors"]["overall"]["accuracy"] == pytest.approx(7 / 300, rel=1e-6)
    assert out["slices"]["overall"]["accuracy"] == pytest.approx(
        7 / 300, rel=1e-6
    )  # the table itself, recomputed
    assert any(w["check"] == "results-recomputed" for w in out["warnings"])
    assert "results-recomputed" in got.err
    assert "overall 2.3% (baseline 2.3%)" in got.out and "97.7%" not in got.out
    report = (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8")
    assert "97.7%" not in report.split("\n\n", 1)[0]
    # an honest file, re-gated under another Wilson z, matches its own entries: no warning
    honest = write_json(tmp_path / "honest.json", make_results(round_floats(bad)))  # as `run` writes it
    (tmp_path / "gate.yml").write_text(
        (tmp_path / "gate.yml").read_text(encoding="utf-8").replace("z: 1.96", "z: 2.58"), encoding="utf-8"
    )
    got = cli("compare", "--config", cfg, "--approve-gate-changes", honest, base, "--out", tmp_path / "o2")
    assert got.code == 1 and "results-recomputed" not in got.err


def test_a_slice_dropped_from_both_tables_is_gated_all_the_same(tmp_path, cli):
    """Both files' tables lose `language:es`, whose probes all went wrong: the slice is still a
    candidate (it comes from the entries), gated, and fails."""
    old = _entries(300, n=120)
    new = [make_entry(e["id"], e["language"] == "en", language=e["language"]) for e in old]
    doc, base_doc = make_results(new), make_results(old)
    for d in (doc, base_doc):
        d["slices"].pop("language:es")
    results = write_json(tmp_path / "results.json", doc)
    base = write_json(tmp_path / "base.json", base_doc)  # a results.json as the baseline
    got = cli("compare", results, base, "--out", tmp_path / "out")
    assert got.code == 1, got.out + got.err
    out = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert out["comparison"]["slices"]["language:es"]["status"] == "regressed"
    assert "language:es" in out["comparison"]["regressed"]


def test_a_baseline_made_from_a_stale_results_file_keeps_the_entries_numbers(tmp_path, cli, monkeypatch):
    """`baseline update --from-results`: the baseline's `slices` are the entries', not the table's."""
    monkeypatch.chdir(tmp_path)
    doc = make_results(_entries(7))
    doc["slices"] = make_results(_entries(293))["slices"]
    results = write_json(tmp_path / "results.json", doc)
    got = cli("baseline", "update", "--from-results", results, "--name", "stale", "--commit", "0" * 40)
    assert got.code == 0, got.err
    written = json.loads((tmp_path / "baselines" / "stale.json").read_text(encoding="utf-8"))
    assert written["slices"]["overall"]["accuracy"] == pytest.approx(7 / 300, rel=1e-6)
    assert "(overall accuracy 2.3%)" in got.out
