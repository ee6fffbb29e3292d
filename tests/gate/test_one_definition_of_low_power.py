"""Every tool says the same "low power" for the same slice, n and level (issue 25).

Before, `compare` judged a slice at its MDE at the background disagreement
max(2 * min(lost, won) / paired, gate.assumed_disagreement), while `init` (which slices get
floors), `validate` and `evalgate power` judged at a fixed 10% and `power --against` at each
slice's raw (b + c) / n: init wrote a floor for a slice calling it low power that compare, on a
rerun of the same checkpoint, called not low power. Now all of them ask gate/power.py's `judge`
(docs/gate.md, "Minimum detectable effect").
"""

from __future__ import annotations

import pytest
from helpers.factories import make_entry, make_results, make_rules

from evalgate.gate import power
from evalgate.gate.baseline import baseline_from_results
from evalgate.gate.compare import compare

# category slices of many sizes, so that some have an MDE between the one at 5% disagreement
# (gate.assumed_disagreement) and the one at 10%: there the two definitions disagreed
SIZES = {"c040": 40, "c150": 150, "c210": 210, "c260": 260, "c330": 330, "c420": 420, "c900": 900}


def _entries(flip_every: int | None = None) -> list[dict]:
    out = []
    i = 0
    for category, n in SIZES.items():
        for j in range(n):
            right = j % 5 != 0
            if flip_every and j % flip_every == 1:
                right = not right
            out.append(
                make_entry(f"{category}-{j:04d}", right, language=("en", "es")[i % 2], category=category)
            )
            i += 1
    return out


def _gated(comparison: dict) -> dict[str, dict]:
    return {k: r for k, r in comparison["slices"].items() if r["gated"]}


@pytest.mark.stats
def test_init_and_power_call_low_power_exactly_the_slices_compare_marks_underpowered_on_a_rerun():
    rules = make_rules()
    entries = _entries()
    base = baseline_from_results(make_results(entries), "demo", {"git_commit": None})
    comparison = compare(make_results(entries), base, rules, "baselines/demo.json")
    gated = _gated(comparison)
    underpowered = {k for k, r in gated.items() if r["underpowered"]}

    # init's table: the first baseline's own outcomes as the reference (commands/init.py `_power`)
    reference = {e["id"]: e for e in entries}
    counts = power.slice_counts(entries, rules, reference)
    doc = power.power_table(counts, rules, reference="the first baseline", needed=False)
    rows = {r["slice"]: r for r in doc["slices"] if r["gated"]}
    assert set(rows) == set(gated)
    assert doc["level"] == comparison["mde_level"]
    # the slices the two tools disagreed on exist in this suite: the test can see a flip
    assert underpowered and set(gated) - underpowered
    assert {k for k, r in rows.items() if r["low_power"]} == underpowered
    for key, row in rows.items():
        assert row["mde"] == gated[key]["mde"], key
    # init's floors go to exactly those slices (the ones not gated aside: compare gates none there)
    floors = power.floors(doc, counts, rules.z)
    assert {k for k in floors if k in rows} == underpowered

    # `evalgate power` / `validate` without a baseline: the same set at the same n and level
    plain = power.power_table(power.slice_counts(entries, rules), rules, needed=False)
    assert {r["slice"] for r in plain["slices"] if r["gated"] and r["low_power"]} == underpowered


@pytest.mark.stats
def test_power_against_a_second_checkpoint_judges_at_the_background_compare_measures():
    """`power --against B` measured each slice at its raw (b + c) / n: churn both ways between
    two runs must give the slices compare marks underpowered for those same two runs."""
    rules = make_rules()
    before, after = _entries(), _entries(flip_every=4)  # flips both ways: 2 * min(lost, won) = 10%
    base = baseline_from_results(make_results(before), "demo", {"git_commit": None})
    comparison = compare(make_results(after), base, rules, "baselines/demo.json")
    assert comparison["mde_disagreement"] > rules.assumed_disagreement
    gated = _gated(comparison)

    reference = {e["id"]: e for e in before}
    counts = power.slice_counts(after, rules, reference, measured=True)
    h = power.measured_background(after, reference, rules.assumed_disagreement)
    assert h == comparison["mde_disagreement"]
    doc = power.power_table(counts, rules, measured=True, needed=False, background=h)
    rows = {r["slice"]: r for r in doc["slices"] if r["gated"]}
    assert set(rows) == set(gated)
    assert {k for k, r in rows.items() if r["low_power"]} == {
        k for k, r in gated.items() if r["underpowered"]
    }
    for key, row in rows.items():
        assert row["mde"] == gated[key]["mde"], key
    assert doc["reference_disagreement"] == h


@pytest.mark.stats
def test_wilson_rule_low_power_is_the_same_in_power_and_compare():
    rules = make_rules(rule="wilson")
    entries = _entries()
    base = baseline_from_results(make_results(entries), "demo", {"git_commit": None})
    gated = _gated(compare(make_results(entries), base, rules, "baselines/demo.json"))
    counts = power.slice_counts(entries, rules, {e["id"]: e for e in entries})
    rows = {r["slice"]: r for r in power.power_table(counts, rules, needed=False)["slices"] if r["gated"]}
    assert {k for k, r in rows.items() if r["low_power"]} == {
        k for k, r in gated.items() if r["underpowered"]
    }
    for key, row in rows.items():
        assert row["mde"] == gated[key]["mde"], key
