"""`gate.cluster`: the paired test over whole clusters stays at alpha when flips are correlated.

gate/cluster.py, docs/gate.md "Clustered flips" (issue 14, point 2).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from helpers.factories import make_results, make_rules
from helpers.paths import bench_module

from evalgate.config import default_config_dict, load_config
from evalgate.errors import ConfigError
from evalgate.gate import cluster
from evalgate.gate.compare import compare, verdict
from evalgate.gate.slices import aggregate_slices
from evalgate.gate.yardstick import gate_changes
from evalgate.report.sections import gated_table
from evalgate.schemas import schema

# --- the p-value ------------------------------------------------------------------------------


def _brute_force(d: list[float]) -> float:
    total = sum(d)
    if total <= 0:
        return 1.0
    hits = sum(
        1
        for signs in itertools.product((1, -1), repeat=len(d))
        if sum(s * x for s, x in zip(signs, d, strict=True)) >= total - 1e-12
    )
    return hits / 2 ** len(d)


@pytest.mark.parametrize(
    "flips, labels, tol",
    [
        ([1, 1, 0, 1, 0, 0, -1, 1, 1, 0, 1, 0], list("aabbccddeeff"), 0.02),
        ([1, 1, 1, 1, 0, 0, 0, 1, -1, 0], list("aaaabbbcde"), 0.0),
        ([1, 0, 1, 0, 1, 0, 1, 1], list("abcdefgh"), 0.1),
        ([1, -1, 0, 0], list("aabb"), 0.0),  # no drop: p = 1
    ],
)
@pytest.mark.stats
def test_clustered_pvalue_equals_a_brute_force_enumeration_of_signs(flips, labels, tol):
    d, sizes = cluster.cluster_sums(flips, labels, tol)
    # D_j = b_j - c_j - n_j * tol, per cluster in order of first appearance
    expect = {}
    for x, lab in zip(flips, labels, strict=True):
        expect[lab] = expect.get(lab, 0.0) + x - tol
    assert d.tolist() == pytest.approx(list(expect.values()))
    assert sizes.sum() == len(flips)
    got = cluster.signflip_pvalue(d, seed_key="t")
    assert got["cluster_test"] == "sign-flip-exact" and got["cluster_draws"] == 2 ** len(d)
    assert got["p_value"] == pytest.approx(_brute_force(d.tolist()), abs=1e-15)


@pytest.mark.stats
def test_many_clusters_use_seeded_draws_close_to_the_exact_value_and_always_the_same():
    rng = np.random.default_rng(7)
    d = rng.normal(0.25, 1.0, 18)  # 18 > 16 clusters: drawn; 2^18 sign vectors as the reference
    exact = float((cluster._all_signs(18) @ d >= d.sum() - 1e-9 * np.abs(d).sum()).mean())
    assert cluster.signflip_pvalue(d[:16], seed_key="overall")["cluster_test"] == "sign-flip-exact"
    a = cluster.signflip_pvalue(d, seed_key="overall")
    b = cluster.signflip_pvalue(d, seed_key="overall")
    other = cluster.signflip_pvalue(d, seed_key="language:es")
    assert a == b  # deterministic: the signs come from the inputs
    assert a["cluster_test"] == "sign-flip-monte-carlo" and a["cluster_draws"] == cluster.DRAWS
    sd = math.sqrt(exact * (1 - exact) / cluster.DRAWS)
    assert abs(a["p_value"] - exact) < 5 * sd + 2 / cluster.DRAWS
    assert abs(other["p_value"] - exact) < 5 * sd + 2 / cluster.DRAWS


# --- size at a true drop equal to the tolerance, by exact enumeration ---------------------------


def _cluster_outcomes(m: int, p_b: float, p_c: float, k: float) -> tuple[np.ndarray, np.ndarray]:
    """(D-less) (b, c) outcomes of one cluster of m probes and their probabilities, under a
    correlated model: the cluster is 'worse' (p_b(1+k), p_c(1-k)) or 'better' (p_b(1-k),
    p_c(1+k)) with probability 1/2 each, so its probes' flips share a direction."""

    def trinomial(pb: float, pc: float) -> dict[tuple[int, int], float]:
        return {
            (b, c): math.comb(m, b) * math.comb(m - b, c) * pb**b * pc**c * (1 - pb - pc) ** (m - b - c)
            for b in range(m + 1)
            for c in range(m + 1 - b)
        }

    worse, better = trinomial(p_b * (1 + k), p_c * (1 - k)), trinomial(p_b * (1 - k), p_c * (1 + k))
    keys = list(worse)
    return np.array(keys), np.array([(worse[x] + better[x]) / 2 for x in keys])


def _exact_size(g: int, m: int, tol: float, s: float, k: float, alpha: float) -> float:
    keys, probs = _cluster_outcomes(m, (s + tol) / 2, (s - tol) / 2, k)
    dvals = keys[:, 0] - keys[:, 1] - m * tol
    combos = np.array(list(itertools.product(range(len(keys)), repeat=g)))
    d, weight = dvals[combos], probs[combos].prod(axis=1)
    total = d.sum(axis=1)
    slack = 1e-9 * np.maximum(1.0, np.abs(d).sum(axis=1))
    hits = (d @ cluster._all_signs(g).T >= (total - slack)[:, None]).sum(axis=1)
    p = np.where(total > slack, hits / 2**g, 1.0)
    # the same numbers as the module's own function on a few of the outcomes
    for i in (0, len(d) // 3, len(d) - 1):
        assert p[i] == cluster.signflip_pvalue(d[i], seed_key="x")["p_value"]
    return float(weight[p <= alpha].sum())


@pytest.mark.stats
@pytest.mark.parametrize("tol", [0.02, 0.05])
@pytest.mark.parametrize("k", [0.0, 0.9])
def test_clustered_size_at_a_drop_equal_to_the_tolerance_is_at_most_alpha_by_enumeration(tol, k):
    # 6 clusters of 2 probes: every outcome of every cluster, weighted by its probability, with
    # the disagreement s across its range; k = 0.9 makes a cluster's flips go the same way.
    # (bench/gate_power.py and docs/gate.md give 3-probe clusters and larger tolerances.)
    sizes = [_exact_size(6, 2, tol, s, k, 0.05) for s in (tol + 0.01, 0.2, 0.5, 0.8, 0.95)]
    assert max(sizes) <= 0.05
    assert max(sizes) > 0  # the test can reject at all


# --- correlated flips through the real compare() ------------------------------------------------


def _sim_probes(n_verbs: int, per_verb: int) -> list[dict]:
    return [
        {
            "id": f"p{v:02d}-{i:02d}",
            "status": "scored",
            "language": ("en", "es")[v % 2],
            "verb": f"v{v}",
            "regularity": "regular",
            "tense": "present_simple",
            "person": "3sg",
            "category": "core",
            "label": "correct",
            "content_hash": f"{v * 100 + i:064x}",
        }
        for v in range(n_verbs)
        for i in range(per_verb)
    ]


# the correlated-flip model of bench/gate_power.py (table I), so the test and the bench agree
correlated_flips = bench_module("gate_power").correlated_flips


def _pair(probes: list[dict], flips: np.ndarray, rng) -> tuple[dict, dict]:
    base_ok = np.where(flips == 1, True, np.where(flips == -1, False, rng.random(len(flips)) < 0.75))
    new_ok = np.where(flips == 0, base_ok, ~base_ok)
    manifest = {k: "x" for k in ("method", "normalization", "template_sha256", "dtype", "scoring_version")}

    def doc(ok):
        entries = [{**p, "correct": bool(o)} for p, o in zip(probes, ok.tolist(), strict=True)]
        return {"manifest": manifest, "probes": entries, "slices": aggregate_slices(entries, 1.96)}

    return doc(new_ok), doc(base_ok)


@pytest.mark.stats
def test_correlated_flips_make_the_per_probe_test_liberal_and_the_clustered_one_not():
    rng = np.random.default_rng(14)
    probes = _sim_probes(40, 15)
    plain = make_rules(slices=("overall",))
    clustered = dataclasses.replace(plain, cluster="verb")
    reps, alarms_plain, alarms_clustered, warned = 120, 0, 0, 0
    for _ in range(reps):
        flips = correlated_flips(rng, 0.10, plain.tolerance, 0.25, n_verbs=40, per_verb=15)
        new, old = _pair(probes, flips, rng)
        a = compare(new, old, plain, "sim")
        b = compare(new, old, clustered, "sim")
        alarms_plain += bool(a["regressed"])
        alarms_clustered += bool(b["regressed"])
        warned += "warning" in a.get("cluster", {})
    # a true drop of exactly the tolerance, flips shared within a verb (design effect 4.5):
    assert alarms_plain / reps > 0.15
    assert alarms_clustered / reps <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)
    assert warned / reps > 0.5
    # the last run's report says so, unclustered with the warning, clustered with the test used
    shown = gated_table({**new, "config": {"gate": {}}, "comparison": a}).text
    assert "Correlated flips" in shown and "`gate.cluster: verb`" in shown
    shown = gated_table({**new, "config": {"gate": {}}, "comparison": b}).text
    assert "**Clustered by verb**" in shown and "| clusters |" in shown.replace("  ", "")


def test_independent_flips_add_no_cluster_key_unless_the_gate_clusters():
    rng = np.random.default_rng(3)
    probes = _sim_probes(20, 15)
    flips = correlated_flips(rng, 0.10, 0.0, 0.0, n_verbs=20, per_verb=15)
    new, old = _pair(probes, flips, rng)
    plain = make_rules()
    out = compare(new, old, plain, "sim")
    summary = cluster.summary(
        "verb", flips.tolist(), [cluster.cluster_label(p, "verb") for p in probes], configured=False
    )
    assert summary["design_effect"] is not None and summary["design_effect"] <= cluster.WARN_DESIGN_EFFECT
    assert "cluster" not in out  # the unset option changes no byte when flips are not correlated
    assert all("p_unclustered" not in row for row in out["slices"].values())
    got = compare(new, old, dataclasses.replace(plain, cluster="verb"), "sim")
    assert got["cluster"]["field"] == "verb" and got["cluster"]["clustered"] is True
    assert got["cluster"]["n_clusters"] == 20 and "warning" not in got["cluster"]
    row = got["slices"]["overall"]
    assert row["n_clusters"] == 20 and row["cluster_test"] == "sign-flip-monte-carlo"
    assert row["p_unclustered"] == out["slices"]["overall"]["p_value"]
    es = got["slices"]["language:es"]
    assert es["n_clusters"] == 10 and es["cluster_test"] == "sign-flip-exact" and es["cluster_draws"] == 1024


def test_a_clustered_comparison_matches_the_results_schema_and_names_the_test_in_its_reason():
    rng = np.random.default_rng(5)
    probes = _sim_probes(20, 15)
    flips = correlated_flips(rng, 0.05, 0.0, 0.0, n_verbs=20, per_verb=15)
    flips.reshape(20, 15)[:, :6] = 1  # every verb loses 6 of its 15 forms: a drop no cluster hides
    new, old = _pair(probes, flips, rng)
    got = compare(new, old, make_rules(cluster="verb"), "sim")
    sub = schema("results")["properties"]["comparison"]
    jsonschema.validate(got, sub)
    status, reasons = verdict(got)
    assert status == "fail"
    assert any("sign-flip test over 20 verb clusters" in r for r in reasons)


def test_icc_is_the_anova_estimator():
    # Two clusters of two, values (1, 1) and (0, 0): all variation between clusters, rho = 1.
    assert cluster.icc_anova([1, 1, 0, 0], ["a", "a", "b", "b"]) == pytest.approx(1.0)
    # (1, 0) and (1, 0): all within, MSB = 0, rho = -MSW / ((n0 - 1) MSW) = -1 / (n0 - 1) = -1.
    assert cluster.icc_anova([1, 0, 1, 0], ["a", "a", "b", "b"]) == pytest.approx(-1.0)
    # A one-way layout of 3 groups of 3 (means 2, 4, 6): MSB = 24 / 2, MSW = 6 / 6, n0 = 3,
    # so rho = (12 - 1) / (12 + 2 * 1).
    values = [1, 2, 3, 3, 4, 5, 5, 6, 7]
    assert cluster.icc_anova(values, list("aaabbbccc")) == pytest.approx(11 / 14)
    # F = 12 on (2, 6) degrees of freedom: P(F >= 12) = (1 + 2 * 12 / 6) ** -3 exactly
    assert cluster.anova(values, list("aaabbbccc"))[1] == pytest.approx(5.0**-3, rel=1e-9)
    assert cluster.icc_anova([0, 0, 0], ["a", "a", "b"]) is None  # nothing flipped
    assert cluster.weighted_cluster_size(list("aaab")) == pytest.approx((9 + 1) / 4)


def test_verb_clusters_are_per_language_and_probes_without_the_field_stand_alone():
    assert cluster.cluster_label({"id": "x", "language": "es", "verb": "ir"}, "verb") == "/verb=es:ir"
    assert cluster.cluster_label({"id": "q1", "suite": "quiz", "slices": {"topic": "net"}}, "topic") == (
        "quiz/topic=net"
    )
    assert cluster.cluster_label({"id": "q2", "suite": "quiz", "slices": {}}, "topic") == "quiz/#q2"


# --- configuration ------------------------------------------------------------------------------


def _config(tmp_path: Path, text: str):
    path = tmp_path / "evalgate.yml"
    path.write_text(text, encoding="utf-8")
    return load_config(path, cwd=tmp_path)


def test_an_unknown_cluster_field_is_refused_naming_the_field(tmp_path):
    with pytest.raises(ConfigError) as err:
        _config(tmp_path, "gate:\n  cluster: verbb\n")
    assert "gate.cluster" in str(err.value) and "'verbb'" in str(err.value)
    assert "did you mean 'verb'" in str(err.value)
    with pytest.raises(ConfigError, match=r"needs gate\.rule: paired"):
        _config(tmp_path, "gate:\n  rule: wilson\n  cluster: verb\n")


def test_a_multiple_choice_suite_clusters_by_a_declared_dimension(tmp_path):
    text = (
        "suites:\n  quiz:\n    kind: multiple-choice\n    probes: items.jsonl\n    slices: [topic]\ngate:\n"
    )
    assert _config(tmp_path, text + "  cluster: topic\n").gate.cluster == "topic"
    with pytest.raises(ConfigError, match=r"unknown cluster field 'verb'.*carry topic"):
        _config(tmp_path, text + "  cluster: verb\n")


def test_the_cluster_option_is_pinned_only_when_set_and_changing_it_is_a_gate_change(tmp_path):
    unset = _config(tmp_path, "gate:\n  tolerance: 0.02\n")
    assert "cluster" not in unset.pin()["gate"]  # existing baselines keep their pinned rules
    clustered = _config(tmp_path, "gate:\n  cluster: verb\n")
    assert clustered.pin()["gate"]["cluster"] == "verb"
    defaults = default_config_dict()
    base = make_results([])
    base["config"] = unset.pin()
    run = make_results([])
    run["config"] = clustered.pin()
    changes = gate_changes(base, run, defaults)
    assert [(c["kind"], c["key"], c["old"], c["new"]) for c in changes] == [
        ("config_rule", "gate.cluster", None, "verb")
    ]
    # and back: a PR that drops the clustering weakens the gate, also a change
    assert [c["key"] for c in gate_changes(run, base, defaults)] == ["gate.cluster"]


@pytest.mark.stats
def test_clustered_mdes_count_effective_probes_not_probes():
    # flips shared within a verb: each verb holds fewer independent probes than it counts, so the
    # clustered gate's MDE (and its "low power" mark) uses n / design effect
    rng = np.random.default_rng(21)
    probes = _sim_probes(40, 15)
    flips = correlated_flips(rng, 0.10, 0.0, 0.5, n_verbs=40, per_verb=15)
    new, old = _pair(probes, flips, rng)
    plain = make_rules(slices=("overall",))
    per_probe = compare(new, old, plain, "sim")
    got = compare(new, old, dataclasses.replace(plain, cluster="verb"), "sim")
    deff = got["cluster"]["design_effect"]
    assert deff > 1.5 and got["mde_design_effect"] == pytest.approx(deff, abs=1e-4)
    assert "mde_design_effect" not in per_probe
    assert got["slices"]["overall"]["mde"] > per_probe["slices"]["overall"]["mde"]
    jsonschema.validate(got, schema("results")["properties"]["comparison"])
