"""The disagreement the paired MDEs assume (issue 25 §4; docs/gate.md, "Minimum detectable effect").

It used to be the whole run's observed disagreement: 0 for a rerun of the same checkpoint (an MDE
no other checkpoint's churn would honour) and, on a real regression, the regression's own flips
(every slice low power because it regressed). Now it is the flips that are not the excess,
2 * min(right -> wrong, wrong -> right) / paired, never below `gate.assumed_disagreement`.
"""

from __future__ import annotations

import json

import pytest
from helpers.factories import make_entry, make_results
from helpers.gate_inputs import baseline_of, entries_of, write_json
from helpers.paths import REPO

from evalgate.gate import noninferiority


def _gate(tmp_path, cli, old: list[dict], new: list[dict], *config: str) -> dict:
    results = write_json(tmp_path / "results.json", make_results(new))
    base = write_json(tmp_path / "base.json", baseline_of(old))
    got = cli("compare", *config, results, base, "--out", tmp_path / "out")
    assert got.code in (0, 1), got.err
    return json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["comparison"]


def _flipped(old: list[dict], lose: int, gain: int) -> list[dict]:
    """`old` with its first `lose` right entries wrong and its first `gain` wrong entries right."""
    right = [e["id"] for e in old if e["correct"]][:lose]
    wrong = [e["id"] for e in old if not e["correct"]][:gain]
    return [
        make_entry(
            e["id"], (e["correct"] and e["id"] not in right) or e["id"] in wrong, language=e["language"]
        )
        for e in old
    ]


@pytest.mark.stats
def test_a_rerun_of_the_same_checkpoint_assumes_the_configured_disagreement_not_zero(tmp_path, cli):
    entries = entries_of()
    comparison = _gate(tmp_path, cli, entries, entries)
    assert comparison["mde_disagreement"] == 0.05  # gate.assumed_disagreement, not the observed 0
    overall = comparison["slices"]["overall"]
    assert overall["mde"] == noninferiority.mde(120, 0.02, comparison["mde_level"], 0.05)


@pytest.mark.stats
def test_a_regressions_own_flips_do_not_make_every_slice_low_power(tmp_path, cli):
    old = entries_of(n=600)
    new = _flipped(old, lose=60, gain=6)  # 11% disagreement, 9 points lost
    comparison = _gate(tmp_path, cli, old, new)
    # the background is the flips that are not the loss: 2 * 6 / 600 = 2%, so the floor of 5%
    assert comparison["mde_disagreement"] == 0.05
    assert comparison["slices"]["overall"]["underpowered"] is False
    assert comparison["slices"]["overall"]["status"] == "regressed"


@pytest.mark.stats
def test_churn_both_ways_is_measured_and_the_floor_is_configurable(tmp_path, cli):
    old = entries_of(n=600)
    new = _flipped(old, lose=60, gain=60)  # 20% disagreement, no change in accuracy
    assert _gate(tmp_path, cli, old, new)["mde_disagreement"] == pytest.approx(0.20)
    cfg = tmp_path / "gate.yml"
    text = (REPO / "evalgate.yml").read_text(encoding="utf-8")
    cfg.write_text(text.replace("assumed_disagreement: 0.05", "assumed_disagreement: 0.3"), encoding="utf-8")
    raised = _gate(tmp_path, cli, old, new, "--config", str(cfg), "--approve-gate-changes")
    assert raised["mde_disagreement"] == pytest.approx(0.3)
