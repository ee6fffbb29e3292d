"""The MDEs of a comparison are computed once per distinct (n, tolerance, level, disagreement), and
a large slice's critical value is certified once, not twice (issue 25 §4: MDEs took 142 s of a
100,000-probe compare)."""

from __future__ import annotations

import pytest
from helpers.factories import make_entry, make_results, make_rules

from evalgate.gate import noninferiority
from evalgate.gate.baseline import baseline_from_results
from evalgate.gate.compare import compare


@pytest.mark.stats
def test_one_mde_per_distinct_key_however_many_slices_share_it():
    # 2 languages x 3 persons x 5 tenses, 600 probes: the two languages share their size, the
    # five tenses theirs, the three persons theirs
    tenses = ("present_simple", "past_simple", "future_simple", "present_perfect", "past_participle")
    entries = [
        make_entry(
            f"p{i:04d}",
            i % 4 != 0,
            language=("en", "es")[i % 2],
            tense=tenses[i % 5],
            person=("1sg", "3sg", "3pl")[i % 3],
        )
        for i in range(600)
    ]
    new = [dict(e, correct=e["correct"] and i % 7 != 1) for i, e in enumerate(entries)]
    base = baseline_from_results(make_results(entries), "demo", {"git_commit": None})
    noninferiority.mde.cache_clear()
    cmp = compare(make_results(new), base, make_rules(), "baselines/demo.json")
    rows = [r for r in cmp["slices"].values() if r["n_shared"]]
    keys = {
        (r["n_shared"], r.get("tolerance", 0.02), cmp["mde_level"], cmp["mde_disagreement"]) for r in rows
    }
    assert len(rows) > len(keys)  # slices do share keys here
    assert noninferiority.mde.cache_info().misses == len(keys)


@pytest.mark.stats
def test_a_large_slices_critical_value_is_certified_once_when_the_hint_holds(monkeypatch):
    calls = []
    real = noninferiority._within

    def counted(z, n, delta, level):
        calls.append(z)
        return real(z, n, delta, level)

    monkeypatch.setattr(noninferiority, "_within", counted)
    noninferiority.critical_z.cache_clear()
    z = noninferiority.critical_z(5000, 0.02, 0.05 / 16)
    assert z is not None and len(calls) == 1  # before: the top outcome's certificate too
