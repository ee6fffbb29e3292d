"""REPORT.md's yardstick sections (docs/approval.md): "What this PR changes in its own gate" opens the
report whenever results.json lists gate changes; probes counted wrong are listed.

Golden file: tests/golden/REPORT-gate-changes.md (regenerate with
`UPDATE_GOLDEN=1 pytest tests/report/test_report_yardstick.py` and review the diff).
"""

from __future__ import annotations

import copy
import os

import pytest
from helpers.paths import GOLDEN
from helpers.report_factories import fake_run, refused_run

from evalgate.gate.results import validate_results
from evalgate.report.full_report import MARKER_PREFIX, render_report

GOLDEN = GOLDEN / "REPORT-gate-changes.md"
HEADING = "## What this PR changes in its own gate"
CHANGES = [
    {"kind": "probe_deprecated", "key": "probe-en-go-past-3sg-001", "old": "scored", "new": "deprecated",
     "file": "data/eval/probes.jsonl"},
    {"kind": "probe_removed", "key": "probe-en-eat-pp-1sg-001", "old": "scored", "new": None,
     "file": "data/eval/MANIFEST.json"},
    {"kind": "test_set", "key": "data/corpus/test.jsonl", "old": "1" * 64, "new": "2" * 64,
     "file": "data/corpus/test.jsonl"},
    {"kind": "config_rule", "key": "gate.slices", "old": ["overall", "language"], "new": ["overall"],
     "file": "evalgate.yml"},
]  # fmt: skip


def _approved() -> dict:
    results = fake_run()
    results["gate_changes_vs_baseline"] = copy.deepcopy(CHANGES)
    results["comparison"]["counted_wrong"] = [
        {"id": "probe-es-comer-past-3sg-001", "status": "model_oov", "baseline_correct": True}
    ]
    return results


def test_golden_report_with_approved_gate_changes():
    results = _approved()
    validate_results(results, "approved")
    text = render_report(results)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8"), "review, then UPDATE_GOLDEN=1"
    assert text.startswith(HEADING) and "**Approved**" in text
    assert text.index(HEADING) < text.index("## ❌") < text.index("This pull request changes the gate itself")
    assert "| probe deprecated" in text and "sha256 111111111111…" in text
    assert "\\[overall, language\\]" in text
    assert "### Probes this run could not score (counted wrong)" in text
    assert "probe-es-comer-past-3sg-001" in text.replace("\\_", "_")


def test_refused_report_says_what_approves_it():
    results = refused_run()
    results["gate_changes_vs_baseline"] = copy.deepcopy(CHANGES)
    validate_results(results, "refused")
    text = render_report(results)
    assert text.startswith(HEADING) and "Not approved" in text and "evalgate:approve-gate-change" in text


@pytest.mark.integration
def test_no_gate_change_no_section():
    for results in (fake_run(), {**fake_run(), "gate_changes_vs_baseline": []}):
        assert HEADING not in render_report(results)


@pytest.mark.integration
def test_a_long_change_list_is_shortened_not_dropped():
    results = _approved()
    results["gate_changes_vs_baseline"] = [
        {**CHANGES[0], "key": f"probe-en-go-past-3sg-{i:04d}"} for i in range(3000)
    ]
    text = render_report(results, max_chars=30000)
    assert text.startswith(HEADING) and text.count(MARKER_PREFIX) == 1
    assert "of 3,000 gate changes" in text and "gate_changes_vs_baseline" in text
