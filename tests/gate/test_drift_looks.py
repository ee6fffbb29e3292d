"""gate/drift.py: the k-th look since the anchor tests at alpha * 6 / (pi^2 k^2), so all looks
together spend at most alpha; the drift comparison is the baseline comparison's, with the drift
tolerances (docs/gate.md, "Drift")."""

from __future__ import annotations

import math

import pytest
from helpers.factories import make_entry, make_results, make_rules
from helpers.gate_inputs import baseline_of

from evalgate.gate.drift import drift, drifting, look_alpha, trend


@pytest.mark.integration
def test_the_looks_levels_add_up_to_at_most_alpha():
    alpha = 0.05
    assert [look_alpha(alpha, k) for k in (1, 2, 3, 4)] == pytest.approx(
        [0.03039635, 0.007599088, 0.003377372, 0.001899772], rel=1e-9
    )
    spent = math.fsum(look_alpha(alpha, k) for k in range(1, 200_001))
    assert spent <= alpha  # the Basel sum: alpha * (6 / pi^2) * sum 1/k^2 < alpha
    assert spent > alpha * (1 - 1e-4)  # and little is wasted (the tail past 200,000 looks, the rounding)
    with pytest.raises(ValueError):
        look_alpha(alpha, 0)


def _run(es_right: int, n: int = 400) -> dict:
    entries = [make_entry(f"en-{i:03d}", i % 20 != 0, language="en") for i in range(n)]
    entries += [make_entry(f"es-{i:03d}", i >= n - es_right, language="es") for i in range(n)]
    return make_results(entries)


ANCHOR = baseline_of(_run(380)["probes"])  # 95% on both languages


def test_drift_is_off_without_a_tolerance_and_without_an_anchor_it_says_so():
    assert drift(_run(300), ANCHOR, "a.json", "f" * 64, 2, make_rules())["status"] == "off"
    no_anchor = drift(_run(300), None, None, None, 0, make_rules(drift_tolerance=0.03))
    assert no_anchor == {"status": "no_anchor", "tolerance": 0.03}


@pytest.mark.integration
def test_a_significant_drop_past_the_drift_tolerance_fails_at_the_looks_level():
    rules = make_rules(drift_tolerance=0.03)
    out = drift(_run(340), ANCHOR, "a.json", "f" * 64, 3, rules)  # es: 95% -> 85%
    assert out["status"] == "fail" and out["regressed"] == ["language:es"]
    assert out["look"] == 4 and out["alpha"] == look_alpha(0.05, 4)
    assert out["slices"]["language:es"]["anchor_accuracy"] == pytest.approx(0.95)
    assert out["reasons"][0].startswith("drift since the anchor (look 4, alpha 0.0019): language:es")
    assert "language:es" in drifting(out)
    # the same drop within a wider drift tolerance passes
    assert (
        drift(_run(340), ANCHOR, "a.json", "f" * 64, 3, make_rules(drift_tolerance=0.12))["status"] == "pass"
    )


@pytest.mark.integration
def test_a_per_slice_map_checks_only_the_slices_it_names():
    rules = make_rules(drift_tolerances=(("language:en", 0.03),))
    out = drift(_run(340), ANCHOR, "a.json", "f" * 64, 0, rules)
    assert list(out["slices"]) == ["language:en"] and out["status"] == "pass"
    assert out["tolerance"] is None and out["tolerances"] == {"language:en": 0.03}


@pytest.mark.integration
def test_a_probe_edited_since_the_anchor_is_left_out_not_refused():
    run = _run(380)
    edited = make_entry("es-000", True, language="es", prompt="Ella ___ en la oficina.")
    run["probes"] = [edited if e["id"] == "es-000" else e for e in run["probes"]]
    out = drift(run, ANCHOR, "a.json", "f" * 64, 0, make_rules(drift_tolerance=0.03))
    assert out["status"] == "pass" and out["n_changed_since_anchor"] == 1
    assert out["slices"]["language:es"]["n_shared"] == 399


def test_an_anchor_of_another_probe_set_is_not_comparable():
    other = baseline_of([make_entry(f"x-{i}", True) for i in range(50)])
    out = drift(_run(380), other, "a.json", "f" * 64, 0, make_rules(drift_tolerance=0.03))
    assert out["status"] == "not_comparable" and "shares no scored probe" in out["reason"]


def test_a_trend_is_the_last_baselines_then_this_run():
    earlier = [
        (f"{i}" * 64, {"language:es": {"n": 100, "correct": 95 - i, "accuracy": (95 - i) / 100}})
        for i in range(9)
    ]
    got = trend(["language:es"], earlier, ("c" * 64, {"language:es": {"accuracy": 0.85, "n": 100}}), {})
    points = got["language:es"]
    assert len(points) == 9 and points[-1] == {"sha256": "run", "accuracy": None, "n": None}
    assert [p["accuracy"] for p in points[:-1]] == [0.93, 0.92, 0.91, 0.9, 0.89, 0.88, 0.87, 0.85]
