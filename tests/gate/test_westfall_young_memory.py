"""Westfall–Young's boundary draws hold bounded memory (issue 25 §4, "Large suites"): no table
over every outcome of a slice, draws in chunks, and above `MEMORY_BOUND` a fallback to Holm that
the comparison records (gate/westfall_young.py, docs/gate.md "Multiplicity")."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from test_westfall_young import _demo_like, _family, _rules, _run

from evalgate.gate import westfall_young
from evalgate.gate.compare import compare, verdict
from evalgate.gate.stats import holm


def _flips(n: int, seed: int = 1) -> dict[str, str]:
    rng = np.random.default_rng(seed)
    out = {}
    for i, u in enumerate(rng.random(n)):
        if u < 0.06:
            out[f"p{i}"] = "rw"
        elif u < 0.10:
            out[f"p{i}"] = "wr"
    return out


def _peak(fn) -> tuple[object, int]:
    """fn()'s result and the most memory it held at once (numpy's buffers included), with the
    module's caches empty so every table is built."""
    westfall_young._table.cache_clear()
    westfall_young._null.cache_clear()
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        westfall_young._table.cache_clear()
        westfall_young._null.cache_clear()


@pytest.mark.slow
@pytest.mark.stats
def test_the_boundary_draws_hold_at_most_their_estimate_and_far_less_than_a_full_table():
    # 3,000 probes in 11 nested slices: before, the overall slice's table alone spanned all
    # 4.5 million outcomes (b, c) and the draws 4096 x 3,000 at once: 758 MiB at the peak.
    n = 3000
    members = _demo_like(0, n)
    raw, counts, tols = _family(members, _flips(n))
    adjusted, peak = _peak(lambda: westfall_young.adjust(raw, members, counts, tols))
    keys = list(members)
    bound = westfall_young.estimated_bytes([len(members[k]) for k in keys], [tols[k] for k in keys], n)
    assert peak <= bound <= westfall_young.MEMORY_BOUND
    assert peak <= 400 * 2**20, f"{peak / 2**20:.0f} MiB"
    assert any(v < 1.0 for v in adjusted.values())  # the draws ran: no fallback here
    assert all(adjusted[k] <= holm(raw)[k] + 1e-12 for k in keys)


def test_the_estimate_grows_linearly_with_the_probes():
    def estimate(n: int) -> int:
        members = _demo_like(0, n)
        return westfall_young.estimated_bytes([len(v) for v in members.values()], [0.02] * len(members), n)

    small, double, quadruple = estimate(5_000), estimate(10_000), estimate(20_000)
    # quadratic tables would multiply it by 4 and 16
    assert double < 2.2 * small and quadruple < 2.2 * double


@pytest.mark.stats
def test_a_family_beyond_the_bound_is_adjusted_by_holm_without_building_anything():
    # 20,000 probes: before, 19.3 GB. Now the estimate is above the bound, so `adjust` gives
    # Holm's values (never less conservative) and allocates next to nothing.
    n = 20_000
    members = _demo_like(0, n)
    flips = _flips(n)
    raw, counts, tols = _family(members, flips)
    why = westfall_young.too_large(members, tols, None)
    assert why is not None and "adjusted by Holm" in why and "20,000 probes" in why
    adjusted, peak = _peak(lambda: westfall_young.adjust(raw, members, counts, tols))
    assert adjusted == holm(raw)
    assert peak < 16 * 2**20, f"{peak / 2**20:.0f} MiB"


def test_the_sign_flip_null_needs_no_fallback():
    members = _demo_like(0, 20_000)
    assert westfall_young.too_large(members, dict.fromkeys(members, 0.0), {"p0": 1}) is None


def test_compare_records_the_fallback_and_names_holm(monkeypatch):
    monkeypatch.setattr(westfall_young, "MEMORY_BOUND", 1)  # every family is "too large"
    correct = [i % 4 != 0 for i in range(240)]
    new = _run([c and i % 3 != 0 for i, c in enumerate(correct)])
    base = _run(correct)
    cmp = compare(new, base, _rules(multiplicity="westfall-young"), "baselines/demo.json")
    assert cmp["multiplicity"] == "westfall-young" and "multiplicity_null" not in cmp
    assert "above its 0 MiB bound: adjusted by Holm" in cmp["multiplicity_fallback"]
    gated = [k for k, r in cmp["slices"].items() if r["gated"]]
    want = holm({k: cmp["slices"][k]["p_value"] for k in gated})
    assert {k: cmp["slices"][k]["p_adjusted"] for k in gated} == pytest.approx(want)
    status, reasons = verdict(cmp)
    assert status == "fail" and all("Holm-adjusted" in r for r in reasons if "p " in r)
