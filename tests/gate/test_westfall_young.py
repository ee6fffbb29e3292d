"""gate.multiplicity: westfall-young, step-down min-P over the gated slices' shared probes
(gate/westfall_young.py, docs/gate.md "Multiplicity")."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from evalgate.config import GateRules, default_config_dict, load_config
from evalgate.gate import noninferiority, westfall_young
from evalgate.gate.compare import compare, verdict
from evalgate.gate.slices import aggregate_slices
from evalgate.gate.stats import holm

TOL = 0.02


def _family(members: dict[str, list[str]], flips: dict[str, str], tol: float = TOL):
    """Raw p-values, counts and tolerances of slices whose probes flipped as `flips` says
    (probe id -> "rw" right -> wrong, "wr" wrong -> right; others unchanged)."""
    counts = {
        k: (sum(flips.get(i) == "rw" for i in ids), sum(flips.get(i) == "wr" for i in ids))
        for k, ids in members.items()
    }
    raw = {k: noninferiority.pvalue(*counts[k], len(ids), tol) for k, ids in members.items()}
    return raw, counts, {k: tol for k in members}


def _demo_like(seed: int = 0, n: int = 300) -> dict[str, list[str]]:
    """overall, 2 languages, 5 tenses, 3 persons over n probes: nested and crossed slices."""
    rng = np.random.default_rng(seed)
    lang, tense, person = rng.integers(2, size=n), rng.integers(5, size=n), rng.integers(3, size=n)
    out = {"overall": [f"p{i}" for i in range(n)]}
    for name, arr, k in (("language", lang, 2), ("tense", tense, 5), ("person", person, 3)):
        for v in range(k):
            out[f"{name}:{v}"] = [f"p{i}" for i in np.flatnonzero(arr == v)]
    return out


@pytest.mark.stats
@pytest.mark.parametrize(("n", "b", "c"), [(60, 9, 1), (600, 40, 8)])
def test_a_single_slice_gets_its_marginal_p_value(n, b, c):
    ids = [f"p{i}" for i in range(n)]
    raw = noninferiority.pvalue(b, c, n, TOL)
    got = westfall_young.adjust({"overall": raw}, {"overall": ids}, {"overall": (b, c)}, {"overall": TOL})
    assert got == {"overall": raw}


def test_identical_slices_pay_nothing_for_their_copies_while_holm_pays_threefold():
    ids = [f"p{i}" for i in range(100)]
    members = {"overall": ids, "category:core": ids, "language:en": ids}
    raw, counts, tols = _family(members, {**dict.fromkeys(ids[:10], "rw"), ids[10]: "wr"})
    got = westfall_young.adjust(raw, members, counts, tols)
    assert got == raw  # one test three times is one test
    assert all(got[k] < holm(raw)[k] for k in members)
    assert holm(raw)["overall"] == pytest.approx(3 * raw["overall"])


@pytest.mark.stats
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_adjusted_p_values_are_monotone_at_least_raw_at_most_holm(seed):
    members = _demo_like(seed)
    rng = np.random.default_rng(seed)
    flips = {}
    for i in range(300):
        u = rng.random()
        flips[f"p{i}"] = "rw" if u < 0.06 + 0.08 * (i % 2) else ("wr" if u < 0.1 + 0.08 * (i % 2) else None)
    raw, counts, tols = _family(members, flips)
    got = westfall_young.adjust(raw, members, counts, tols)
    assert list(got) == list(raw)  # keys in the input order
    bound = holm(raw)
    order = sorted(raw, key=lambda k: (raw[k], k))
    assert [got[k] for k in order] == sorted(got[k] for k in order)
    for k in raw:
        assert raw[k] <= got[k] <= bound[k] <= 1.0
        if raw[k] == 1.0:
            assert got[k] == 1.0
    assert any(got[k] < bound[k] for k in raw if bound[k] < 1.0)  # the dependence pays off


@pytest.mark.stats
def test_same_inputs_give_the_same_numbers_in_any_key_order():
    members = _demo_like(5, n=400)  # large enough to be drawn, not enumerated
    flips = {f"p{i}": ("rw" if i % 9 == 0 else "wr" if i % 23 == 0 else None) for i in range(400)}
    raw, counts, tols = _family(members, flips)
    first = westfall_young.adjust(raw, members, counts, tols)
    westfall_young._null.cache_clear()
    again = westfall_young.adjust(raw, members, counts, tols)
    reordered = dict(reversed(list(raw.items())))
    westfall_young._null.cache_clear()
    other_order = westfall_young.adjust(reordered, members, counts, tols)
    assert first == again
    assert {k: other_order[k] for k in first} == first


def _brute_force(members, raw, counts, tol):
    """Every outcome of every probe (3^N), at every grid point of s: the step-down min-P by hand."""
    probes = sorted({i for ids in members.values() for i in ids})
    outcomes = np.array(list(itertools.product(range(3), repeat=len(probes))))  # 0 rw, 1 wr, 2 same
    order = sorted(raw, key=lambda k: (raw[k], k))
    g = {}
    for k in order:
        cols = [probes.index(i) for i in members[k]]
        table = westfall_young._table(len(cols), tol)
        g[k] = table((outcomes[:, cols] == 0).sum(axis=1), (outcomes[:, cols] == 1).sum(axis=1))
    observed = {k: float(westfall_young._table(len(members[k]), tol)(*counts[k])) for k in order}
    best = np.zeros(len(order))
    for s in westfall_young._grid(tol, westfall_young._GRID):
        p = np.array([(s + tol) / 2, (s - tol) / 2, 1 - s])
        weight = p[outcomes].prod(axis=1)
        for j, key in enumerate(order):
            least = np.min([g[k] for k in order[j:]], axis=0)
            best[j] = max(best[j], float(weight[least <= observed[key]].sum()))
    steps = np.maximum.accumulate(np.maximum(best, [raw[k] for k in order]))
    bound = holm(raw)
    return {k: min(float(v), bound[k]) for k, v in zip(order, steps, strict=True)}


@pytest.mark.stats
def test_a_small_case_agrees_with_brute_force_enumeration_and_the_draws_come_close(monkeypatch):
    members = {
        "overall": [f"p{i}" for i in range(7)],
        "a": ["p0", "p1", "p2", "p3"],
        "b": ["p3", "p4", "p5", "p6"],
    }
    flips = {"p0": "rw", "p1": "rw", "p4": "rw"}
    raw, counts, tols = _family(members, flips)
    expected = _brute_force(members, raw, counts, TOL)
    assert westfall_young.adjust(raw, members, counts, tols) == pytest.approx(expected, rel=1e-9)
    assert expected["overall"] < holm(raw)["overall"]
    monkeypatch.setattr(westfall_young, "_EXACT_LIMIT", 0)  # the same family, drawn
    westfall_young._null.cache_clear()
    drawn = westfall_young.adjust(raw, members, counts, tols)
    westfall_young._null.cache_clear()
    for k in members:
        assert drawn[k] == pytest.approx(expected[k], abs=0.02)


def test_the_table_p_value_matches_the_marginal_test():
    for n, b, c in [(30, 5, 0), (120, 14, 3), (645, 40, 9)]:
        marginal = noninferiority.pvalue(b, c, n, TOL)
        table = float(westfall_young._table(n, TOL)(b, c))
        assert table <= marginal <= table * 1.01


def _rules(**overrides) -> GateRules:
    gate = default_config_dict()["gate"]
    return dataclasses.replace(GateRules(**{**gate, "slices": tuple(gate["slices"])}), **overrides)


def _run(correct: list[bool]) -> dict:
    probes = [
        {
            "id": f"p{i:03d}",
            "status": "scored",
            "language": "es" if i < 60 else "en",
            "verb": "v",
            "regularity": "regular",
            "tense": ("present_simple", "past_simple")[i % 2],
            "person": "1sg",
            "category": "core",
            "label": "correct",
            "content_hash": f"{i:064x}",
        }
        for i in range(len(correct))
    ]
    slices = aggregate_slices([{**p, "correct": True} for p in probes], 1.96)
    entries = [{**p, "correct": ok} for p, ok in zip(probes, correct, strict=True)]
    manifest = {k: "x" for k in ("method", "normalization", "template_sha256", "dtype", "scoring_version")}
    return {"manifest": manifest, "probes": entries, "slices": slices, "perplexity": None}


@pytest.mark.stats
def test_compare_records_the_method_and_the_report_reason_names_it():
    base = [True] * 200
    new = [not (i < 60 and i % 5 == 0) for i in range(200)]  # 12 of 60 Spanish probes wrong
    holm_cmp = compare(_run(new), _run(base), _rules(), "b")
    wy_cmp = compare(_run(new), _run(base), _rules(multiplicity="westfall-young"), "b")
    assert "multiplicity" not in holm_cmp  # unset: the results keep their bytes
    assert wy_cmp["multiplicity"] == "westfall-young"
    assert compare(_run(new), _run(base), _rules(multiplicity="holm"), "b")["multiplicity"] == "holm"
    es_h, es_w = holm_cmp["slices"]["language:es"], wy_cmp["slices"]["language:es"]
    assert es_w["p_value"] == es_h["p_value"] <= es_w["p_adjusted"] < es_h["p_adjusted"]
    status, reasons = verdict(wy_cmp)
    assert status == "fail" and any("Westfall–Young-adjusted" in r for r in reasons)
    assert all("Holm" not in r for r in reasons)
    assert any("Holm-adjusted" in r for r in verdict(holm_cmp)[1])


def test_the_option_is_pinned_only_when_set_so_a_pr_changing_it_is_a_gate_change(tmp_path):
    from evalgate.gate.yardstick import flat_rules

    unset = load_config(cwd=tmp_path).pin()
    assert "multiplicity" not in unset["gate"]
    (tmp_path / "evalgate.yml").write_text("gate:\n  multiplicity: westfall-young\n", encoding="utf-8")
    cfg = load_config(cwd=tmp_path)
    assert cfg.gate.multiplicity == "westfall-young"
    assert cfg.pin()["gate"]["multiplicity"] == "westfall-young"
    from evalgate.gate import yardstick

    changes = yardstick._rule_changes(
        flat_rules(unset), flat_rules(cfg.pin()), flat_rules(default_config_dict()), "evalgate.yml"
    )
    assert [(c["kind"], c["key"], c["old"], c["new"]) for c in changes] == [
        ("config_rule", "gate.multiplicity", None, "westfall-young")
    ]
    (tmp_path / "evalgate.yml").write_text("gate:\n  multiplicity: bonferroni\n", encoding="utf-8")
    with pytest.raises(Exception, match="multiplicity"):
        load_config(cwd=tmp_path)


@pytest.mark.stats
def test_the_report_table_heads_its_adjusted_column_with_the_method():
    from evalgate.report.sections import gated_table

    base = [True] * 200
    new = [not (i < 60 and i % 5 == 0) for i in range(200)]
    heads = {}
    for method in (None, "westfall-young"):
        cmp = compare(_run(new), _run(base), _rules(multiplicity=method), "b")
        doc = {**_run(new), "config": {"gate": default_config_dict()["gate"]}, "comparison": cmp}
        heads[method] = gated_table(doc).text
    assert "p (Holm)" in heads[None] and "Holm-adjusted across" in heads[None]
    assert "p (Westfall–Young)" in heads["westfall-young"]
    assert "Westfall–Young-adjusted across" in heads["westfall-young"]
    assert "Holm" not in heads["westfall-young"]


@pytest.mark.stats
def test_slices_with_their_own_tolerance_are_drawn_at_or_beyond_their_boundary():
    members = _demo_like(7, n=200)
    flips = {f"p{i}": ("rw" if i % 8 == 0 else "wr" if i % 31 == 0 else None) for i in range(200)}
    raw, counts, _ = _family(members, flips)
    tols = {k: (0.05 if k.startswith("tense:") else TOL) for k in members}
    raw = {k: noninferiority.pvalue(*counts[k], len(members[k]), tols[k]) for k in members}
    got = westfall_young.adjust(raw, members, counts, tols)
    bound = holm(raw)
    assert all(raw[k] <= got[k] <= bound[k] for k in raw)


# --- tolerance 0: the sign-flip null ------------------------------------------------------------


def _signed(flips: dict[str, str]) -> dict[str, int]:
    return {i: {"rw": 1, "wr": -1}.get(f, 0) for i, f in flips.items()}


def _flip_brute_force(raw, members, signed):
    """Step-down min-P over every sign pattern of the discordant probes, by hand: the statistic
    is each slice's exact conditional p-value P(Bin(d, 1/2) >= b), the steps go in its order."""
    from math import comb

    def cond(b: int, d: int) -> float:
        return sum(comb(d, x) for x in range(b, d + 1)) / 2**d

    disc = [i for i in sorted(signed) if signed[i]]
    keys = sorted(members)
    d = {k: sum(1 for i in members[k] if signed.get(i)) for k in keys}
    obs = {k: cond(sum(1 for i in members[k] if signed.get(i) == 1), d[k]) for k in keys}
    patterns = []
    for signs in itertools.product((0, 1), repeat=len(disc)):
        lost = {i for i, s in zip(disc, signs, strict=True) if s}
        patterns.append({k: cond(sum(1 for i in members[k] if i in lost), d[k]) for k in keys})
    order = sorted(keys, key=lambda k: (obs[k], raw[k], k))
    out, running = {}, 0.0
    for j, k in enumerate(order):
        tail = sum(min(p[r] for r in order[j:]) <= obs[k] * (1 + 1e-12) for p in patterns) / len(patterns)
        running = max(running, tail, raw[k])
        out[k] = 1.0 if raw[k] >= 1.0 else min(1.0, running)
    return out


@pytest.mark.stats
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_at_tolerance_0_the_adjustment_is_the_sign_flip_step_down_over_every_pattern(seed):
    rng = np.random.default_rng(seed)
    ids = [f"p{i}" for i in range(40)]
    members = {"overall": ids, "a": ids[:15], "b": ids[10:28], "c": ids[25:], "d": ids[::3]}
    changes = rng.choice(["rw", "rw", "wr", None, None, None, None], size=len(ids))
    flips = {i: (str(f) if f else None) for i, f in zip(ids, changes, strict=True)}
    raw, counts, tols = _family(members, flips, tol=0.0)
    got = westfall_young.adjust(raw, members, counts, tols, _signed(flips))
    assert got == pytest.approx(_flip_brute_force(raw, members, _signed(flips)), rel=1e-9)
    assert westfall_young.null_kind(tols) == "sign-flip"
    # the boundary draws take over as soon as one slice has a tolerance, or without the flips
    assert westfall_young.null_kind({**tols, "a": 0.01}) == "boundary"
    assert westfall_young.adjust(raw, members, counts, tols) != got


@pytest.mark.stats
def test_the_sign_flip_null_keeps_the_family_wise_rate_over_every_pattern():
    """Under "no change", given which probes changed, every sign pattern is equally likely:
    summing over all of them gives the exact family-wise false-alarm rate."""
    ids = [f"p{i}" for i in range(60)]
    members = {"overall": ids, "a": ids[:20], "b": ids[20:40], "c": ids[40:], "front": ids[:30]}
    disc = [ids[i] for i in (0, 3, 7, 12, 21, 25, 33, 41, 44, 50, 52, 58)]
    any_adjusted = any_raw = 0
    for signs in itertools.product(("rw", "wr"), repeat=len(disc)):
        flips = dict(zip(disc, signs, strict=True))
        raw, counts, tols = _family(members, flips, tol=0.0)
        got = westfall_young.adjust(raw, members, counts, tols, _signed(flips))
        any_adjusted += min(got.values()) < 0.05
        any_raw += min(raw.values()) < 0.05
    patterns = 2 ** len(disc)
    assert any_adjusted / patterns <= 0.05
    assert any_raw / patterns > 0.05  # unadjusted, the same family would break the promise


@pytest.mark.stats
def test_drawn_sign_flips_agree_with_the_exact_sum(monkeypatch):
    members = _demo_like(3, n=240)
    flips = {f"p{i}": ("rw" if i % 9 == 0 else "wr" if i % 23 == 0 else None) for i in range(240)}
    raw, counts, tols = _family(members, flips, tol=0.0)
    signed = _signed(flips)
    exact = westfall_young.adjust(raw, members, counts, tols, signed)
    monkeypatch.setattr(westfall_young, "_EXACT_LIMIT", 0)
    drawn = westfall_young.adjust(raw, members, counts, tols, signed)
    assert drawn == westfall_young.adjust(raw, members, counts, tols, signed)  # seeded
    assert all(abs(drawn[k] - exact[k]) < 0.01 for k in exact)
    assert any(exact[k] < 0.05 for k in exact)


@pytest.mark.stats
def test_at_tolerance_0_a_drop_holm_misses_is_caught_and_the_null_is_recorded():
    base = [i not in (60, 61) for i in range(200)]  # two English probes were wrong and now are right
    new = [not (i < 36 and i % 6 == 0) for i in range(200)]  # 6 of 60 Spanish probes go wrong
    zero = {"tolerance": 0.0}
    holm_cmp = compare(_run(new), _run(base), _rules(**zero), "b")
    flip_cmp = compare(_run(new), _run(base), _rules(multiplicity="westfall-young", **zero), "b")
    es_h, es_f = holm_cmp["slices"]["language:es"], flip_cmp["slices"]["language:es"]
    assert es_f["p_value"] == es_h["p_value"] <= es_f["p_adjusted"] < 0.05 <= es_h["p_adjusted"]
    assert flip_cmp["multiplicity_null"] == "sign-flip" and "multiplicity_null" not in holm_cmp
    assert "language:es" in flip_cmp["regressed"] and "language:es" not in holm_cmp["regressed"]
    bounded = compare(_run(new), _run(base), _rules(multiplicity="westfall-young"), "b")
    assert bounded["multiplicity_null"] == "boundary"
    # one gated slice is its own exact test: nothing adjusted, no null to name
    alone = compare(
        _run(new), _run(base), _rules(multiplicity="westfall-young", slices=("overall",), **zero), "b"
    )
    assert "multiplicity_null" not in alone
    assert alone["slices"]["overall"]["p_adjusted"] == alone["slices"]["overall"]["p_value"]
