"""Every gate outcome on realistic per-probe results: compare() and verdict()."""

from __future__ import annotations

import copy
import json
from importlib import resources

import jsonschema
import pytest
from helpers.factories import make_entry, make_results, make_rules

from evalgate.errors import NotComparableError, RefusedError
from evalgate.gate.baseline import baseline_from_results
from evalgate.gate.compare import compare, verdict
from evalgate.types import TENSES

BASE = "baselines/demo.json"


def _entries(n_en=160, n_es=160, prefix="p"):
    """Core probes spread evenly over tense and person; 4 in 5 right in the baseline."""
    out = []
    for lang, count in (("en", n_en), ("es", n_es)):
        for i in range(count):
            out.append(
                make_entry(
                    f"{prefix}-{lang}-{i:03d}",
                    i % 5 != 0,
                    language=lang,
                    regularity=("regular", "irregular")[i % 2],
                    tense=TENSES[(i + i // 5) % 5],
                    person=("1sg", "2sg", "3sg")[i % 3],
                )
            )
    return out


def _flip(entries, ids, correct):
    """The same probes, with the given ids now answered right (True) or wrong (False)."""
    out = []
    for e in entries:
        if e["id"] in ids:
            e = make_entry(
                e["id"],
                correct,
                language=e["language"],
                verb=e["verb"],
                regularity=e["regularity"],
                tense=e["tense"],
                person=e["person"],
                category=e["category"],
                label=e["label"],
                reason_code=e["reason_code"],
            )
        out.append(e)
    return out


def _baseline(entries, **kw):
    return baseline_from_results(
        make_results(entries, **kw), "demo", {"git_commit": "a" * 40, "pr_number": 7}
    )


def _es_drop_en_gain(entries, k=30):
    """k Spanish probes go right -> wrong while k English ones go wrong -> right: overall unchanged."""
    es_right = [e["id"] for e in entries if e["language"] == "es" and e["correct"]]
    en_wrong = [e["id"] for e in entries if e["language"] == "en" and not e["correct"]]
    step = len(es_right) // k
    worse = _flip(entries, set(es_right[::step][:k]), False)
    return _flip(worse, set(en_wrong[:k]), True)


@pytest.mark.integration
def test_identical_run_passes_and_reports_every_gated_slice():
    entries = _entries()
    cmp = compare(make_results(entries), _baseline(entries), make_rules(), BASE)
    assert verdict(cmp) == ("pass", [])
    assert cmp["baseline"] == BASE and cmp["baseline_name"] == "demo" and cmp["rule"] == "paired"
    assert cmp["n_paired"] == 320 and cmp["regressed"] == []
    assert list(cmp["slices"])[:3] == ["overall", "language:en", "language:es"]
    assert not any(k.startswith(("label:", "reason_code:")) for k in cmp["slices"])  # not in rules.slices
    overall = cmp["slices"]["overall"]
    assert overall["status"] == "ok" and overall["gated"] and overall["delta"] == 0.0
    assert (overall["b"], overall["c"], overall["p_value"]) == (0, 0, 1.0)
    assert cmp["flipped"] == {"right_to_wrong": [], "wrong_to_right": []}
    assert cmp["perplexity"]["status"] == "ok" and cmp["perplexity"]["ratio"] == 1.0


def test_fail_on_exactly_one_slice_names_it():
    base = _entries()
    new = _es_drop_en_gain(base)
    cmp = compare(make_results(new), _baseline(base), make_rules(), BASE)
    assert cmp["regressed"] == ["language:es"]
    es = cmp["slices"]["language:es"]
    assert (es["n_shared"], es["b"], es["c"]) == (160, 30, 0)
    assert es["baseline_accuracy"] == 0.8 and es["accuracy"] == pytest.approx(98 / 160)
    assert es["delta"] == pytest.approx(-30 / 160)
    assert es["p_mcnemar"] == pytest.approx(2.0**-30, rel=1e-12) and es["p_value"] <= es["p_adjusted"] < 0.05
    assert cmp["slices"]["overall"]["status"] == "ok" and cmp["slices"]["language:en"]["status"] == "ok"
    status, reasons = verdict(cmp)
    assert status == "fail" and len(reasons) == 1
    assert reasons[0].startswith("language:es: accuracy 80.0% → 61.3% (-18.8 points) on 160 shared probes")
    assert "30 right → wrong vs 0 wrong → right" in reasons[0]
    assert len(cmp["flipped"]["right_to_wrong"]) == 30 and len(cmp["flipped"]["wrong_to_right"]) == 30
    assert all(i.startswith("p-es-") for i in cmp["flipped"]["right_to_wrong"])


def test_small_drop_within_tolerance_passes():
    base = _entries()
    es_right = [e["id"] for e in base if e["language"] == "es" and e["correct"]]
    new = _flip(base, set(es_right[:3]), False)  # 3/160 = 1.9 points < tolerance 2 points
    cmp = compare(make_results(new), _baseline(base), make_rules(), BASE)
    assert cmp["slices"]["language:es"]["b"] == 3 and verdict(cmp)[0] == "pass"


def test_new_probes_are_reported_not_gated():
    base = _entries()
    added = [
        make_entry(f"new-{i}", False, category="adversarial", reason_code="PAST-IRREG") for i in range(25)
    ]
    cmp = compare(make_results(base + added), _baseline(base), make_rules(), BASE)
    assert verdict(cmp)[0] == "pass"
    assert cmp["new_probes"] == [f"new-{i}" for i in range(25)]
    adv = cmp["slices"]["category:adversarial"]
    assert adv["status"] == "new" and adv["n_shared"] == 0 and adv["n_new"] == 25 and not adv["gated"]
    assert cmp["slices"]["overall"]["n_shared"] == 320 and cmp["slices"]["overall"]["n_new"] == 25
    assert cmp["slices"]["overall"]["delta"] == 0.0  # all-wrong new probes do not drag the pair down


@pytest.mark.integration
def test_deprecated_and_gone_probes_are_left_out():
    base = _entries()
    new = copy.deepcopy(base)
    dep = new[1]["id"]
    new[1] = make_entry(dep, None, status="deprecated", tense=new[1]["tense"], person=new[1]["person"])
    new[1]["content_hash"] = base[1]["content_hash"]  # deprecation does not change the content
    gone = new.pop(2)["id"]
    cmp = compare(make_results(new), _baseline(base), make_rules(), BASE)
    assert cmp["deprecated"] == [dep] and cmp["gone_probes"] == [gone]
    assert cmp["n_paired"] == 318 and dep not in cmp["new_probes"]
    assert verdict(cmp)[0] == "pass"


def test_probe_that_became_unscorable_is_unpaired():
    base = _entries()
    new = copy.deepcopy(base)
    new[0] = {**make_entry(new[0]["id"], None, status="model_oov"), "content_hash": base[0]["content_hash"]}
    cmp = compare(make_results(new), _baseline(base), make_rules(), BASE)
    assert cmp["unpaired"] == [{"id": base[0]["id"], "baseline_status": "scored", "status": "model_oov"}]
    assert cmp["n_paired"] == 319


def test_probe_changed_under_the_same_id_is_refused():
    base = _entries()
    new = copy.deepcopy(base)
    for i in (4, 9):
        new[i] = make_entry(new[i]["id"], True, prompt="He ___ at the bank every day.")
    with pytest.raises(RefusedError) as exc:
        compare(make_results(new), _baseline(base), make_rules(), BASE)
    err = exc.value
    assert f"probe {base[4]['id']} changed under the same id" in err.message
    assert "deprecate it and add a replacement with a new id" in err.message
    assert [f.probe_id for f in err.findings] == [base[4]["id"], base[9]["id"]]
    assert err.hint and "new id" in err.hint


def test_incomparable_baseline_is_refused_naming_each_key():
    entries = _entries(40, 40)
    results = make_results(entries, manifest={"normalization": "chars", "dtype": "bfloat16"})
    with pytest.raises(NotComparableError) as exc:
        compare(results, _baseline(entries), make_rules(), BASE)
    msg = exc.value.message
    assert BASE in msg
    assert "normalization: baseline 'tokens', this run 'chars'" in msg
    assert "dtype: baseline 'float32', this run 'bfloat16'" in msg
    assert "method" not in msg and exc.value.hint


def test_probe_set_digest_is_not_compared_as_a_whole():
    entries = _entries(40, 40)
    results = make_results([*entries, make_entry("extra", True)])
    assert results["manifest"]["probe_set_digest"] != _baseline(entries)["manifest"]["probe_set_digest"]
    assert compare(results, _baseline(entries), make_rules(), BASE)["new_probes"] == ["extra"]


def test_slice_under_min_n_is_shown_not_gated_and_its_drop_left_undecided():
    base = _entries()
    adv = [make_entry(f"adv-{i}", True, category="adversarial", reason_code="PAST-IRREG") for i in range(12)]
    new = base + [
        make_entry(f"adv-{i}", False, category="adversarial", reason_code="PAST-IRREG") for i in range(12)
    ]
    cmp = compare(make_results(new), _baseline(base + adv), make_rules(slices=("category",)), BASE)
    row = cmp["slices"]["category:adversarial"]
    assert row["n_shared"] == 12 < 20 and row["status"] == "too_small" and not row["gated"]
    assert row["p_mcnemar"] == pytest.approx(2.0**-12, rel=1e-12) and row["p_adjusted"] is None
    assert 0 < row["p_value"] < 0.05  # shown, not part of Holm
    assert cmp["slices"]["category:core"]["status"] == "ok"
    # not tested, so its 100-point drop was not seen: named, never a pass (docs/gate.md, "Verdict")
    (entry,) = cmp["inconclusive"]
    assert (entry["slice"], entry["why"]) == ("category:adversarial", "too_small")
    assert (entry["n"], entry["min_n"]) == (12, 20)
    got, reasons = verdict(cmp)
    assert got == "inconclusive" and "under gate.min_n (20)" in reasons[0]


def test_a_slice_whose_mde_exceeds_mde_max_is_gated_and_marked_low_power():
    base = _entries(40, 40)
    new = _flip(base, {e["id"] for e in base if e["language"] == "es" and e["correct"]}, False)
    cmp = compare(make_results(new), _baseline(base), make_rules(slices=("language",)), BASE)
    es = cmp["slices"]["language:es"]
    assert es["n_shared"] == 40 >= 20 and es["mde"] > 0.10 and es["underpowered"] is True
    assert es["status"] == "regressed" and es["gated"]  # too weak for 10 points, not for this drop
    loose = compare(make_results(new), _baseline(base), make_rules(slices=("language",), mde_max=0.5), BASE)
    assert loose["slices"]["language:es"]["status"] == "regressed"
    assert loose["slices"]["language:es"]["underpowered"] is False


def test_a_small_probe_set_that_goes_from_all_right_to_all_wrong_fails():
    base = _entries(30, 30)  # a seed-sized set: no slice can catch a 10-point drop reliably
    right = _flip(base, {e["id"] for e in base}, True)
    wrong = _flip(base, {e["id"] for e in base}, False)
    cmp = compare(make_results(wrong), _baseline(right), make_rules(), BASE)
    overall = cmp["slices"]["overall"]
    assert overall["n_shared"] == 60 and overall["underpowered"] and overall["status"] == "regressed"
    assert "overall" in cmp["regressed"] and verdict(cmp)[0] == "fail"
    same = compare(make_results(right), _baseline(right), make_rules(), BASE)
    assert same["regressed"] == [] and verdict(same) == ("pass", [])


def test_perplexity_regression_fails_the_gate():
    entries = _entries(40, 40)
    cmp = compare(
        make_results(entries, perplexity=14.0), _baseline(entries, perplexity=12.5), make_rules(), BASE
    )
    assert cmp["perplexity"]["status"] == "regressed" and cmp["perplexity"]["ratio"] == pytest.approx(1.12)
    assert verdict(cmp) == ("fail", ["perplexity rose 12.500 → 14.000 (×1.120, limit ×1.10)"])
    ok = compare(
        make_results(entries, perplexity=13.0), _baseline(entries, perplexity=12.5), make_rules(), BASE
    )
    assert ok["perplexity"]["status"] == "ok" and verdict(ok)[0] == "pass"


def test_tokenizer_change_makes_only_perplexity_incomparable():
    base = _entries()
    new = _es_drop_en_gain(base)
    results = make_results(new, perplexity=40.0, manifest={"tokenizer_sha256": "f" * 64})
    cmp = compare(results, _baseline(base, perplexity=12.5), make_rules(), BASE)
    ppl = cmp["perplexity"]
    assert ppl["status"] == "not_comparable" and not ppl["comparable"] and ppl["ratio"] is None
    assert "tokenizer_sha256" in ppl["reason"]
    status, reasons = verdict(cmp)
    assert status == "fail" and len(reasons) == 1 and reasons[0].startswith("language:es:")


@pytest.mark.integration
def test_wilson_rule_gates_with_the_interval_and_is_less_sensitive():
    base = _entries()
    es_right = [e["id"] for e in base if e["language"] == "es" and e["correct"]]
    en_wrong = [e["id"] for e in base if e["language"] == "en" and not e["correct"]]
    # 7.5 points on es: the non-inferiority test (gate/noninferiority.py) needs the drop to clear
    # the 2-point tolerance with Holm over 14 slices, where a 6-point drop no longer does.
    new = _flip(_flip(base, set(es_right[::8][:12]), False), set(en_wrong[:12]), True)
    rules = {"mde_max": 0.2}
    paired = compare(make_results(new), _baseline(base), make_rules(rule="paired", **rules), BASE)
    wilson = compare(make_results(new), _baseline(base), make_rules(rule="wilson", **rules), BASE)
    assert paired["regressed"] == ["language:es"] and wilson["regressed"] == []
    es = wilson["slices"]["language:es"]
    assert es["p_adjusted"] is None and es["baseline_accuracy"] <= es["wilson_high"] + 0.02
    big = _es_drop_en_gain(base)
    wilson_big = compare(make_results(big), _baseline(base), make_rules(rule="wilson", **rules), BASE)
    assert wilson_big["regressed"][0] == "language:es" and "overall" not in wilson_big["regressed"]
    status, reasons = verdict(wilson_big)
    assert status == "fail" and "above the new Wilson upper bound" in reasons[0]


def test_results_json_works_as_the_baseline():
    base = _entries()
    new = _es_drop_en_gain(base)
    from_doc = compare(make_results(new), _baseline(base), make_rules(), BASE)
    from_results = compare(make_results(new), make_results(base), make_rules(), "old/results.json")
    for key in ("slices", "regressed", "flipped", "perplexity", "new_probes", "n_paired"):
        assert from_results[key] == from_doc[key]
    assert from_results["baseline"] == "old/results.json" and from_results["baseline_name"] is None


def test_unusable_baselines_are_refused():
    entries = _entries(40, 40)
    doc = _baseline(entries)
    doc["outcomes"][entries[0]["id"]]["status"] = "skipped"
    del doc["provenance"]
    with pytest.raises(RefusedError) as exc:
        compare(make_results(entries), doc, make_rules(), BASE)
    assert "provenance" in exc.value.message and "skipped" in exc.value.message
    with pytest.raises(RefusedError, match=r"neither an evalgate baseline nor a results\.json"):
        compare(make_results(entries), {"hello": 1}, make_rules(), BASE)


def test_no_baseline_verdict_is_pass():
    assert verdict(None) == ("pass", [])


def test_comparison_fits_the_results_schema_and_is_deterministic():
    base = _entries()
    new = _es_drop_en_gain(base)
    results = make_results(new)
    results["comparison"] = compare(results, _baseline(base), make_rules(), BASE)
    results["verdict"], results["reasons"] = verdict(results["comparison"])
    schema = json.loads(resources.files("evalgate").joinpath("schemas", "results.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(results)
    again = compare(make_results(new), _baseline(base), make_rules(), BASE)
    assert json.dumps(again, sort_keys=True) == json.dumps(results["comparison"], sort_keys=True)


def test_renamed_suites_are_refused_naming_them_not_the_template_digest():
    entries = [{**e, "suite": "quiz"} for e in _entries(40, 40)]
    base = _baseline(entries)
    renamed = [{**e, "suite": "exam"} for e in entries]
    results = make_results(renamed, manifest={"template_sha256": "9" * 64})
    with pytest.raises(NotComparableError) as exc:
        compare(results, base, make_rules(), BASE)
    assert "other suites (gone: quiz; new: exam)" in exc.value.message
    assert "template_sha256" not in exc.value.message
