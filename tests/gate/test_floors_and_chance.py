"""Absolute floors and chance levels (gate/floors.py, docs/suites.md "Thresholds")."""

from __future__ import annotations

import pytest

from evalgate.gate.floors import chance_levels, check_floors, floor_reasons, shared_accuracy
from evalgate.gate.rules import GateRules
from evalgate.gate.slices import slice_keys


def entry(pid: str, k: int, correct: bool, suite: str | None = None, **dims: str) -> dict:
    e = {
        "id": pid,
        "status": "scored",
        "correct": correct,
        "candidates": [{"text": str(i)} for i in range(k)],
        "slices": dims,
        "kind": "choice",
    }
    if suite:
        e["suite"] = suite
    return e


def test_chance_is_the_mean_of_one_over_k_per_slice():
    entries = [
        entry("a", 2, True, topic="x"),
        entry("b", 4, False, topic="x"),
        entry("c", 4, True, topic="y"),
    ]
    chance = chance_levels(entries)
    assert chance["overall"] == pytest.approx((0.5 + 0.25 + 0.25) / 3)
    assert chance["topic:x"] == pytest.approx(0.375)
    assert chance["topic:y"] == pytest.approx(0.25)


def test_slice_keys_carry_the_suite_name_only_when_the_run_has_several():
    assert slice_keys(entry("a", 2, True, topic="x")) == ["overall", "topic:x"]
    assert slice_keys(entry("a", 2, True, suite="k8s", topic="x")) == [
        "overall",
        "k8s/overall",
        "k8s/topic:x",
    ]
    verb = {
        "id": "v",
        "status": "scored",
        "kind": "form",
        "language": "en",
        "tense": "future",
        "suite": "verbs",
    }
    assert slice_keys(verb) == ["overall", "verbs/overall", "verbs/language:en", "verbs/tense:future"]


def test_a_slice_below_its_floor_fails_and_a_floor_on_a_missing_slice_fails_too():
    slices = {
        "overall": {"n": 100, "accuracy": 0.27},
        "k8s/overall": {"n": 60, "accuracy": 0.8},
        "k8s/topic:net": {"n": 30, "accuracy": 0.4},
    }
    floors = check_floors(
        slices, [("overall", 0.5), ("k8s/*", 0.5), ("k8s/topic:storage", 0.6)], {"overall": 0.25}
    )
    assert {k: f["status"] for k, f in floors.items()} == {
        "overall": "below",
        "k8s/overall": "ok",
        "k8s/topic:net": "below",
        "k8s/topic:storage": "missing",
    }
    reasons = floor_reasons(floors)
    assert reasons[0].startswith("k8s/topic:net: accuracy 40.0% on 30 items is below the floor")
    whole = "overall: accuracy 27.0% on 100 items is below the floor gate.min_accuracy 50.0% (chance 25.0%)"
    assert whole in reasons
    assert any("k8s/topic:storage" in r and "no scored item" in r for r in reasons)
    assert len(reasons) == 3


@pytest.mark.parametrize("order", [1, -1])
def test_a_slices_own_floor_beats_its_suites_whatever_the_order(order):
    slices = {"k8s/overall": {"n": 60, "accuracy": 0.98}, "k8s/topic:net": {"n": 30, "accuracy": 0.7}}
    written = [("k8s/*", 0.5), ("k8s/overall", 0.99)][::order]
    floors = check_floors(slices, written, {})
    assert floors["k8s/overall"]["min_accuracy"] == 0.99 and floors["k8s/overall"]["status"] == "below"
    assert floors["k8s/topic:net"]["min_accuracy"] == 0.5


def test_new_items_cannot_lift_a_slice_over_its_floor():
    # 15 items the baseline holds, 4 right; a PR adds 60 items its checkpoint answers right
    old = [entry(f"o{i}", 4, i < 4, topic="currency") for i in range(15)]
    new = [entry(f"n{i}", 4, True, topic="currency") for i in range(60)]
    slices = {"topic:currency": {"n": 75, "accuracy": 64 / 75}}
    shared = shared_accuracy(old + new, {e["id"] for e in old})
    assert shared["topic:currency"] == {"accuracy": 4 / 15, "n": 15}
    floors = check_floors(slices, [("topic:currency", 0.8)], {}, shared)
    row = floors["topic:currency"]
    assert row["status"] == "below" and row["accuracy"] == pytest.approx(64 / 75) and row["shared_n"] == 15
    (reason,) = floor_reasons(floors)
    assert "26.7% on the 15 items the baseline also scored (85.3% with the 60 new ones)" in reason
    # without a baseline the floor is checked on every item
    assert check_floors(slices, [("topic:currency", 0.8)], {})["topic:currency"]["status"] == "ok"


def test_a_slice_gated_with_its_own_tolerance_else_its_suites_else_the_runs():
    rules = GateRules(
        rule="paired", alpha=0.05, tolerance=0.02, min_n=20, mde_max=0.1, assumed_disagreement=0.05,
        z=1.96, perplexity_max_ratio=1.1, slices=("overall",),
        tolerances=(("k8s/topic:net", 0.1), ("k8s/*", 0.05)),
    )  # fmt: skip
    assert rules.tolerance_for("k8s/topic:net") == 0.1
    assert rules.tolerance_for("k8s/topic:storage") == 0.05
    assert rules.tolerance_for("verbs/overall") == 0.02
    assert rules.tolerance_for("overall") == 0.02
