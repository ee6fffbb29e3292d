"""report/drift.py: the drift section of REPORT.md and the PR comment, with a sparkline per trend
(docs/gate.md, "Drift")."""

from __future__ import annotations

import pytest
from helpers.factories import make_entry, make_results, make_rules
from helpers.gate_inputs import baseline_of

from evalgate.gate.compare import compare
from evalgate.gate.drift import drift, trend
from evalgate.gate.results import round_floats
from evalgate.report.comment import render_comment
from evalgate.report.drift import sparkline
from evalgate.report.full_report import render_report


def test_a_sparkline_spans_the_series_lowest_to_highest():
    assert sparkline([0.95, 0.931, 0.912, 0.893, 0.874]) == "█▆▅▃▁"
    assert sparkline([0.9, 0.9, 0.9]) == "▄▄▄"
    assert sparkline([0.9, None, 0.8]) == "█ ▁"
    assert sparkline([None]) == ""


def _results(es_right: int) -> dict:
    n = 400
    entries = [make_entry(f"en-{i:03d}", i % 20 != 0, language="en") for i in range(n)]
    entries += [make_entry(f"es-{i:03d}", i >= n - es_right, language="es") for i in range(n)]
    return make_results(entries)


@pytest.mark.integration
def test_a_drifting_slice_is_named_in_the_headline_and_its_trend_drawn_in_the_comment():
    anchor = baseline_of(_results(380)["probes"])
    baseline = baseline_of(_results(348)["probes"])
    res = _results(340)
    rules = make_rules(drift_tolerance=0.03)
    res["comparison"] = compare(res, baseline, rules, "baselines/m.json")
    out = drift(res, anchor, "baselines/history/m.anchor.json", "a" * 64, 3, rules)
    earlier = [
        ("1" * 64, {"language:es": {"accuracy": 0.95}}),
        ("2" * 64, {"language:es": {"accuracy": 0.93}}),
    ]
    out["trend"] = trend(["language:es"], earlier, ("3" * 64, baseline["slices"]), res["slices"])
    res.update(drift=out, verdict="fail", reasons=out["reasons"])
    res = round_floats(res)
    report = render_report(res)
    assert (
        report.splitlines()[0] == "## ❌ evalgate: fail — drifted since the anchor: language:es (-10.0 pts)"
    )
    assert "### Drift since the anchor" in report and "look 4 since the anchor" in report
    assert "| language:es" in report and "❌ drifted" in report
    comment = render_comment(res)
    assert "Drifted beyond `gate.drift_tolerance` since the anchor: language:es (-10.0 pts)" in comment
    assert "- language:es: `█▇▂▁` 95.0% → 93.0% → 87.0% → 85.0%" in comment
