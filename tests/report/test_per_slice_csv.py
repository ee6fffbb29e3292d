"""per_slice.csv: one row per slice, comparison and full-series columns, fixed float format."""

from __future__ import annotations

import csv
import io

import pytest
from helpers.report_factories import fake_run, no_baseline_run

from evalgate.gate.slice_order import ordered
from evalgate.report.per_slice_csv import render_csv


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_one_row_per_slice_with_its_numbers():
    results = no_baseline_run()
    text = render_csv(results)
    table = rows(text)
    assert [r["slice"] for r in table] == ordered(results["slices"])
    assert list(table[0]) == ["slice", "family", "n", "correct", "accuracy", "wilson_low", "wilson_high"]
    for r in table:
        s = results["slices"][r["slice"]]
        assert int(r["n"]) == s["n"] and int(r["correct"]) == s["correct"]
        if s["accuracy"] is None:
            assert r["accuracy"] == r["wilson_low"] == ""
        else:
            assert r["accuracy"] == f"{s['accuracy']:.6f}" and r["wilson_high"] == f"{s['wilson_high']:.6f}"
    assert text.endswith("\n") and "\r" not in text


def test_comparison_and_full_series_columns():
    results = fake_run()
    table = rows(render_csv(results))
    header = list(table[0])
    for col in ("baseline_accuracy", "delta", "p_value", "p_adjusted", "mde", "status", "n_shared"):
        assert col in header
    assert "accuracy_full" in header and "n_full" in header  # leaks: exclude
    by_slice = {r["slice"]: r for r in table}
    es = results["comparison"]["slices"]["language:es"]
    assert by_slice["language:es"]["status"] == "regressed"
    assert by_slice["language:es"]["delta"] == f"{es['delta']:.6f}"
    assert by_slice["language:es"]["n_shared"] == str(es["n_shared"])
    assert by_slice["label:correct"]["status"] == ""  # not a gated family: no comparison
    assert int(by_slice["overall"]["n_full"]) == results["slices_full"]["overall"]["n"]


@pytest.mark.integration
def test_same_results_same_bytes():
    assert render_csv(fake_run()) == render_csv(fake_run())


def test_empty_slices_still_have_a_header():
    assert render_csv({"slices": {}}) == "slice,family,n,correct,accuracy,wilson_low,wilson_high\n"


def test_tiny_p_values_keep_their_significant_digits():
    results = fake_run()
    row = next(iter(results["comparison"]["slices"].values()))
    row["p_value"], row["p_adjusted"] = 1.6e-13, 0.0123456789
    parsed = list(csv.DictReader(io.StringIO(render_csv(results))))
    first = next(r for r in parsed if r["p_value"] == "1.6e-13")
    assert first["p_adjusted"] == "0.0123457"
