"""gate/power.py: the power of the shipped test against a fixed baseline, the MDE, the items a slice
needs and init's floors, checked against independent computations (docs/gate.md, "What your suite
can see").

The power sum is checked against brute force over every outcome (b, c) with the test's own p-value
(`noninferiority.pvalue`, the certified supremum), not through the critical value and rejection
region gate/power.py reads; the items needed against docs/gate.md's table D.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalgate.gate import noninferiority as ni
from evalgate.gate import power
from evalgate.gate.binomial import binom_logpmf
from evalgate.gate.rules import GateRules
from evalgate.gate.stats import wilson_interval

TOL = 0.02


def brute_force_power(n: int, correct: int, level: float, drop: float, disagreement: float) -> float:
    """Sum over every (b, c) of P(b) P(c) [p-value <= level], the baseline's outcomes fixed."""
    a = correct / n
    h = min(disagreement / 2, a, 1 - a)
    q_b, q_c = min(1.0, (h + drop) / a), (h / (1 - a) if correct < n else 0.0)
    pb = np.exp(binom_logpmf(np.arange(correct + 1), correct, np.full(correct + 1, q_b)))
    pc = np.exp(binom_logpmf(np.arange(n - correct + 1), n - correct, np.full(n - correct + 1, q_c)))
    total = 0.0
    for c in range(n - correct + 1):
        for b in range(correct + 1):
            if pb[b] * pc[c] > 1e-15 and ni.pvalue(b, c, n, TOL) <= level:
                total += pb[b] * pc[c]
    return total


@pytest.mark.parametrize(
    ("correct", "drop", "disagreement"),
    [(23, 0.30, 0.10), (23, 0.10, 0.20), (34, 0.25, 0.10), (35, 0.20, 0.05), (12, 0.20, 0.10)],
)
@pytest.mark.stats
def test_power_against_a_fixed_baseline_is_the_sum_over_every_outcome(correct, drop, disagreement):
    level = 0.05 / 5
    got = power.power_given_baseline(35, correct, TOL, level, drop, disagreement)
    assert got == pytest.approx(brute_force_power(35, correct, level, drop, disagreement), abs=1e-9)


def test_the_mde_is_where_the_exact_power_crosses_eighty_percent():
    for correct in (23, 34, 35):
        mde = power.mde_given_baseline(35, correct, TOL, 0.01, 0.10)
        assert mde is not None
        assert power.power_given_baseline(35, correct, TOL, 0.01, mde, 0.10) >= 0.8
        assert power.power_given_baseline(35, correct, TOL, 0.01, mde - 2e-4, 0.10) < 0.8
    # a slice at 34% cannot drop far enough (to its 5% of flips back) to be seen on 35 items
    assert power.mde_given_baseline(35, 12, TOL, 0.01, 0.10) is None


def test_equally_good_checkpoints_flip_only_what_the_baseline_leaves_room_for():
    # a slice at 98% has 2% of its items to gain on: 10% disagreement is 2% each way there
    assert power.background(50, 49, 0.10) == pytest.approx(0.02)
    assert power.background(50, 25, 0.10) == pytest.approx(0.05)
    assert power.background(35, 35, 0.20) == 0.0
    # so at a perfect baseline the MDE does not depend on the assumed disagreement
    assert len({power.mde_given_baseline(35, 35, TOL, 0.01, s) for s in (0.05, 0.10, 0.20)}) == 1


@pytest.mark.stats
def test_items_needed_are_docs_table_d():
    """docs/gate.md table D (the bench's bisection over noninferiority.mde): 66, 141, 212 probes
    alone and 135, 283, 416 under Holm over 15 slices, at 0, 5 and 10% disagreement."""
    for level, want in ((0.05, (66, 141, 212)), (0.05 / 15, (135, 283, 416))):
        setting = power.Setting("paired", level, 1.96)
        assert tuple(power.items_needed(None, TOL, s, 0.10, setting) for s in (0.0, 0.05, 0.10)) == want


@pytest.mark.stats
def test_items_needed_is_the_first_size_that_reaches_the_power_with_a_baseline():
    setting = power.Setting("paired", 0.01, 1.96)
    n = power.items_needed(23 / 35, TOL, 0.10, 0.10, setting)
    assert n is not None
    k = int(23 / 35 * n + 0.5)
    assert power.power_given_baseline(n, k, TOL, 0.01, 0.10, 0.10) >= 0.8
    k1 = int(23 / 35 * (n - 1) + 0.5)
    assert power.power_given_baseline(n - 1, k1, TOL, 0.01, 0.10, 0.10) < 0.8
    # a drop within the tolerance is what the test lets through: no size sees it
    assert power.items_needed(0.9, TOL, 0.10, 0.02, setting) is None


def _rules(**kw) -> GateRules:
    base = dict(
        rule="paired",
        alpha=0.05,
        tolerance=TOL,
        min_n=20,
        mde_max=0.10,
        assumed_disagreement=0.05,
        z=1.96,
        perplexity_max_ratio=1.1,
        slices=("overall", "subject"),
    )
    return GateRules(**{**base, **kw})


def _entries(per: dict[str, tuple[int, int]]) -> list[dict]:
    out = []
    for subject, (n, right) in per.items():
        for i in range(n):
            out.append(
                {
                    "id": f"{subject}-{i}",
                    "status": "scored",
                    "correct": i < right,
                    "slices": {"subject": subject},
                    "candidates": [{"text": t} for t in "abcd"],
                }
            )
    return out


def test_the_table_gates_what_the_gate_would_and_uses_each_slices_baseline():
    entries = _entries({"geography": (35, 23), "history": (35, 34), "art": (10, 10)})
    rules = _rules(tolerances=(("subject:history", 0.05),))
    counts = power.slice_counts(entries, rules, {e["id"]: e for e in entries})
    doc = power.power_table(counts, rules, needed=False)
    rows = {r["slice"]: r for r in doc["slices"]}
    assert doc["gated"] == 3 and doc["level"] == pytest.approx(0.05 / 3)
    assert (
        not rows["subject:art"]["gated"] and rows["subject:art"]["not_gated"] == "10 item(s), under min_n 20"
    )
    geo = rows["subject:geography"]
    assert geo["baseline_accuracy"] == pytest.approx(23 / 35) and geo["chance"] == pytest.approx(0.25)
    assert [x["mde"] for x in geo["at"]] == [
        power.mde_given_baseline(35, 23, TOL, 0.05 / 3, s) for s in power.TYPICAL_DISAGREEMENTS
    ]
    assert rows["subject:history"]["tolerance"] == 0.05
    assert rows["subject:history"]["at"][1]["mde"] == power.mde_given_baseline(35, 34, 0.05, 0.05 / 3, 0.10)
    assert geo["low_power"] and "items_needed" not in geo["at"][0]


def test_a_clustered_slice_with_too_few_clusters_cannot_fail():
    entries = _entries({"geography": (35, 23)})
    for i, e in enumerate(entries):
        e["slices"]["unit"] = f"u{i % 5}"
    rules = _rules(cluster="unit")
    counts = power.slice_counts(entries, rules, {e["id"]: e for e in entries})
    doc = power.power_table(counts, rules, needed=False)
    geo = next(r for r in doc["slices"] if r["slice"] == "subject:geography")
    # 5 clusters: no sign-flip p-value below 2^-5 = 0.031, above the level 0.025 of 2 gated slices
    assert geo["clusters"] == 5 and "2^-5" in geo["cannot_fail"]
    assert all(x["mde"] is None for x in geo["at"]) and geo["low_power"]


def test_init_floor_is_the_wilson_lower_bound_minus_the_tolerance_rounded_down():
    # issue 25's geography: 23 of 35 right (65.7%)
    low = wilson_interval(23, 35, 1.96)[0]
    assert power.suggested_floor(35, 23, TOL, 0.25, 1.96) == math.floor(100 * (low - TOL)) / 100 == 0.47
    # the checkpoint that fell to 40% (14 of 35) is below it; the baseline is far above it
    assert 14 / 35 < 0.47 < 23 / 35
    # never within reach of guessing: 12 of 35 (34%) against chance 25% gets none
    assert power.suggested_floor(35, 12, TOL, 0.25, 1.96) is None
    assert power.guess_ceiling(0.25, 35, 1.96) == pytest.approx(0.25 + 1.96 * math.sqrt(0.25 * 0.75 / 35))


@pytest.mark.stats
def test_floors_go_to_the_low_power_slices_only():
    entries = _entries({"geography": (35, 23), "history": (400, 380), "art": (10, 10)})
    rules = _rules()
    counts = power.slice_counts(entries, rules, {e["id"]: e for e in entries})
    doc = power.power_table(counts, rules, needed=False)
    found = power.floors(doc, counts, 1.96)
    # history's 400 items see a 10-point drop; geography's 35 do not; art is not gated at all
    assert set(found) == {"subject:geography", "subject:art"}
    assert found["subject:geography"]["floor"] == 0.47
    low = wilson_interval(10, 10, 1.96)[0]
    assert found["subject:art"]["floor"] == math.floor(100 * (low - TOL)) / 100
