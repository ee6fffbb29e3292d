"""gate/yardstick.py: the baseline's record of what it was measured with, and the gate changes
a run makes against it (docs/approval.md). Pure: documents in, change records out."""

from __future__ import annotations

import copy

import pytest

from evalgate.config import default_config_dict
from evalgate.gate.baseline import baseline_from_results, validate_baseline
from evalgate.gate.holds import count_unscorable_as_wrong, perplexity_failure
from evalgate.gate.yardstick import approved_baseline, describe, gate_changes, yardstick_of

H = {c: c * 64 for c in "abcdef01239"}


def _results() -> dict:
    """A small results dict shaped like a run's: inputs by role, pinned config, manifest, probes."""
    cfg = default_config_dict()
    cfg.pop("out")
    return {
        "inputs": {
            "data/corpus/test.jsonl": {"sha256": H["a"], "bytes": 10, "role": "test"},
            "data/eval/probe_prompt.txt": {"sha256": H["b"], "bytes": 10, "role": "template"},
            "data/grammar/verbs.yaml": {"sha256": H["c"], "bytes": 10, "role": "grammar"},
            "data/corpus/train.jsonl": {"sha256": H["d"], "bytes": 10, "role": "train"},
            "data/corpus/val.jsonl": {"sha256": H["e"], "bytes": 10, "role": "train"},
            "evalgate.yml": {"sha256": H["f"], "bytes": 10, "role": "config"},
        },
        "config": cfg,
        "manifest": {
            "method": "candidate",
            "normalization": "tokens",
            "template_sha256": H["b"],
            "dtype": "float32",
            "scoring_version": "1",
            "probe_set_version": "0.2.0",
            "probe_set_digest": H["0"],
        },
        "probes": [
            {"id": "p1", "status": "scored", "correct": True, "content_hash": H["1"]},
            {"id": "p2", "status": "scored", "correct": False, "content_hash": H["2"]},
            {"id": "p3", "status": "deprecated", "correct": None, "content_hash": H["3"]},
        ],
        "checkpoint": {"path": "ckpt", "sha256": H["0"]},
        "slices": {},
        "perplexity": {"value": 3.5, "n_tokens": 100},
    }


def _baseline(results: dict | None = None) -> dict:
    return baseline_from_results(results or _results(), "demo", {"git_commit": None, "pr_number": None})


def _changes(base: dict, run: dict) -> list[dict]:
    return gate_changes(base, run, default_config_dict(), config_file="evalgate.yml", manifest_file="M.json")


def test_the_baseline_records_its_yardstick_and_passes_its_schema():
    doc = _baseline()
    validate_baseline(doc, "baselines/demo.json")
    ys = doc["yardstick"]
    assert ys["test"] == {"data/corpus/test.jsonl": H["a"]}
    assert ys["train"] == {"data/corpus/train.jsonl": H["d"], "data/corpus/val.jsonl": H["e"]}
    assert ys["grammar"] == {"data/grammar/verbs.yaml": H["c"]}
    assert ys["rules"]["gate.alpha"] == 0.05 and ys["rules"]["coverage.per_language"] == 30
    assert "scoring.batch_size" not in ys["rules"] and "report.max_chars" not in ys["rules"]
    assert ys["manifest_version"] == "0.2.0"


def test_same_run_makes_no_change_and_new_probes_are_not_one():
    run = _results()
    run["probes"].append({"id": "p4", "status": "scored", "correct": True, "content_hash": H["0"]})
    assert _changes(_baseline(), run) == []


def test_every_kind_of_change_is_listed_with_old_new_and_file():
    base = _baseline()
    run = _results()
    run["probes"] = [
        {"id": "p1", "status": "deprecated", "correct": None, "content_hash": H["1"]},  # deprecated
        {"id": "p3", "status": "deprecated", "correct": None, "content_hash": H["9"]},  # content changed
    ]  # p2 removed
    run["inputs"]["data/corpus/test.jsonl"]["sha256"] = H["9"]
    run["inputs"]["data/eval/probe_prompt.txt"]["sha256"] = H["9"]
    run["inputs"]["data/grammar/verbs.yaml"]["sha256"] = H["9"]
    del run["inputs"]["data/corpus/val.jsonl"]
    run["config"]["gate"]["alpha"] = 0.5
    run["config"]["coverage"]["per_language"] = 1
    run["config"]["leaks"]["policy"] = "exclude"
    run["config"]["scoring"]["batch_size"] = 1  # not a rule: no number depends on it
    run["manifest"]["probe_set_version"] = "0.1.9"
    changes = _changes(base, run)
    got = {(c["kind"], c["key"]): (c["old"], c["new"], c["file"]) for c in changes}
    assert got == {
        ("probe_removed", "p2"): ("scored", None, "M.json"),
        ("probe_deprecated", "p1"): ("scored", "deprecated", "M.json"),
        ("probe_changed", "p3"): (H["3"], H["9"], "M.json"),
        ("test_set", "data/corpus/test.jsonl"): (H["a"], H["9"], "data/corpus/test.jsonl"),
        ("template", "data/eval/probe_prompt.txt"): (H["b"], H["9"], "data/eval/probe_prompt.txt"),
        ("grammar", "data/grammar/verbs.yaml"): (H["c"], H["9"], "data/grammar/verbs.yaml"),
        ("training_file", "data/corpus/val.jsonl"): (H["e"], None, "data/corpus/val.jsonl"),
        ("coverage_rule", "coverage.per_language"): (30, 1, "evalgate.yml"),
        ("config_rule", "gate.alpha"): (0.05, 0.5, "evalgate.yml"),
        ("config_rule", "leaks.policy"): ("refuse", "exclude", "evalgate.yml"),
        ("manifest_version", "version"): ("0.2.0", "0.1.9", "M.json"),
    }
    assert [c["kind"] for c in changes][:3] == ["probe_removed", "probe_deprecated", "probe_changed"]
    assert describe(changes[0]) == "probe removed: p2 (M.json): scored -> (none)"
    line = describe(next(c for c in changes if c["kind"] == "test_set"))
    assert (
        line == f"held-out test set changed: data/corpus/test.jsonl: sha256 {'a' * 12}… -> sha256 {'9' * 12}…"
    )


def test_a_higher_manifest_version_and_moved_identical_files_are_no_change():
    run = _results()
    run["manifest"]["probe_set_version"] = "0.10.0"  # compared as numbers, not as text
    rec = run["inputs"].pop("data/corpus/test.jsonl")
    run["inputs"]["data/heldout.jsonl"] = rec
    assert _changes(_baseline(), run) == []


def test_a_probe_the_baseline_had_retired_may_be_deleted():
    run = _results()
    run["probes"] = [e for e in run["probes"] if e["id"] != "p3"]
    assert _changes(_baseline(), run) == []


@pytest.mark.parametrize(("key", "value"), [("gate.tolerance", 0.02), ("gate.tolerance", 0.3)])
def test_a_rule_an_older_baseline_lacks_is_compared_with_the_default(key, value):
    base = _baseline()
    del base["yardstick"]
    section, name = key.split(".")
    del base["config"][section][name]  # an older baseline, before the rule existed
    run = _results()
    run["config"][section][name] = value
    changes = _changes(base, run)
    if value == default_config_dict()[section][name]:
        assert changes == []
    else:
        assert [(c["key"], c["old"], c["new"]) for c in changes] == [(key, 0.02, value)]


def test_an_older_baseline_without_record_still_compares_test_set_and_template():
    base = _baseline()
    del base["yardstick"]
    base["manifest"].update(test_sha256=H["a"], template_sha256=H["b"])
    run = _results()
    run["inputs"]["data/corpus/test.jsonl"]["sha256"] = H["9"]
    run["inputs"]["data/grammar/verbs.yaml"]["sha256"] = H["9"]  # unknown to that baseline
    assert [c["kind"] for c in _changes(base, run)] == ["test_set"]


def test_a_results_json_as_baseline_has_its_yardstick_in_its_inputs():
    base = _results()
    run = copy.deepcopy(base)
    run["inputs"]["data/corpus/train.jsonl"]["sha256"] = H["9"]
    assert yardstick_of(base)["train"]["data/corpus/train.jsonl"] == H["d"]
    assert [c["key"] for c in _changes(base, run)] == ["data/corpus/train.jsonl"]


def test_approved_yardstick_treats_a_changed_probe_as_new():
    base = _baseline()
    changes = [{"kind": "probe_changed", "key": "p1", "old": H["1"], "new": H["9"], "file": None}]
    approved = approved_baseline(base, changes)
    assert "p1" not in approved["outcomes"] and "p1" in base["outcomes"]
    validate_baseline(approved, "approved")


def test_probes_the_baseline_scored_but_this_run_cannot_count_wrong():
    base = _baseline()
    run = _results()
    run["probes"][0] = {**run["probes"][0], "status": "model_oov", "correct": None}
    view, listed = count_unscorable_as_wrong(run, base)
    assert listed == [{"id": "p1", "status": "model_oov", "baseline_correct": True}]
    assert view["probes"][0]["status"] == "scored" and view["probes"][0]["correct"] is False
    assert run["probes"][0]["status"] == "model_oov"  # the run itself is left as it was
    run["probes"][0]["status"] = "excluded"  # a leak policy's exclusion is not counted
    assert count_unscorable_as_wrong(run, base)[1] == []


@pytest.mark.parametrize(
    ("ppl", "fails"),
    [
        ({"value": 3.6, "n_tokens": 9}, False),
        ({"value": None, "n_tokens": 9, "not_finite": "nan"}, True),
        ({"value": None, "n_tokens": 9, "not_finite": "inf"}, True),
        ({"value": float("inf"), "n_tokens": 9}, True),
        ({"value": None, "n_tokens": 9}, True),
        (None, True),
    ],
)
def test_a_perplexity_not_finite_or_missing_where_the_baseline_has_one_fails(ppl, fails):
    run = _results()
    run["perplexity"] = ppl
    reason = perplexity_failure(run, _baseline())
    assert (reason is not None) == fails
    if fails:
        assert "baseline has 3.500" in reason
    no_ppl = _baseline()
    no_ppl["perplexity"] = None
    assert perplexity_failure(run, no_ppl) is None


def _two_suites() -> dict:
    run = _results()
    run["inputs"] = {
        "a/test.jsonl": {"sha256": H["a"], "bytes": 10, "role": "test"},
        "b/test.jsonl": {"sha256": H["b"], "bytes": 10, "role": "test"},
        "a/train.jsonl": {"sha256": H["c"], "bytes": 10, "role": "train"},
        "b/train.jsonl": {"sha256": H["d"], "bytes": 10, "role": "train"},
    }
    run["config"]["test"] = None
    run["config"]["suites"] = {
        name: {"kind": "multiple-choice", "probes": [f"{name}/items.jsonl"], "template": None,
               "train": [f"{name}/train.jsonl"], "test": f"{name}/test.jsonl", "slices": {"topic": None}}
        for name in ("a", "b")
    }  # fmt: skip
    return run


@pytest.mark.parametrize("key", ["test", "train"])
def test_two_suites_swapping_their_files_is_a_gate_change(key):
    # The same bytes under the same paths, but each suite now reads the other's file: the hashes
    # by path compare equal, so the suite's own paths must say it (an outside review found this).
    before = _two_suites()
    after = copy.deepcopy(before)
    suites = after["config"]["suites"]
    suites["a"][key], suites["b"][key] = suites["b"][key], suites["a"][key]
    changes = _changes(_baseline(before), after)
    assert {c["key"] for c in changes} == {f"suites.a.{key}", f"suites.b.{key}"}
    assert all(c["kind"] == "config_rule" for c in changes)


def test_a_suite_taking_the_runs_test_set_is_a_gate_change():
    before = _two_suites()
    before["config"]["test"] = "b/test.jsonl"
    del before["config"]["suites"]["b"]["test"]
    after = copy.deepcopy(before)
    after["config"]["test"], after["config"]["suites"]["a"]["test"] = "a/test.jsonl", "b/test.jsonl"
    assert {c["key"] for c in _changes(_baseline(before), after)} == {"test", "suites.a.test"}


def test_a_new_tokenizer_switching_perplexity_off_is_a_gate_change():
    # one byte of whitespace in tokenizer.json made every perplexity "not comparable", so ungated
    before = _results()
    before["manifest"]["tokenizer_sha256"] = H["1"]
    after = copy.deepcopy(before)
    after["manifest"]["tokenizer_sha256"] = H["2"]
    (change,) = _changes(_baseline(before), after)
    assert (change["kind"], change["key"], change["old"], change["new"]) == (
        "tokenizer", "tokenizer_sha256", H["1"], H["2"])  # fmt: skip
    assert change["file"] == "ckpt"
    assert describe(change).startswith("tokenizer changed, so perplexity can no longer be compared")
    # the same tokenizer, or a baseline that measured no perplexity, is no change
    assert _changes(_baseline(before), before) == []
    before["perplexity"] = None
    assert _changes(_baseline(before), after) == []
    # a suite's own perplexity counts as well
    before["suite_perplexity"] = {"q": {"value": 3.0, "n_tokens": 9, "test_sha256": H["a"]}}
    assert [c["kind"] for c in _changes(_baseline(before), after)] == ["tokenizer"]


def test_gated_families_written_in_another_order_are_no_change():
    before = _results()
    after = copy.deepcopy(before)
    after["config"]["gate"]["slices"] = list(reversed(before["config"]["gate"]["slices"]))
    assert _changes(_baseline(before), after) == []
    after["config"]["gate"]["slices"] = after["config"]["gate"]["slices"][1:]
    assert [c["key"] for c in _changes(_baseline(before), after)] == ["gate.slices"]


def test_a_baseline_from_before_suite_paths_were_recorded_is_not_flagged():
    # a multi-suite baseline written before flat_rules recorded the suites' paths and the run's
    # test: the same configuration must not read as four gate changes (an outside review)
    run = _two_suites()
    base = _baseline(run)
    rules = base["yardstick"]["rules"]
    for key in [k for k in rules if k == "test" or k.endswith((".template", ".train", ".test"))]:
        del rules[key]
    assert _changes(base, run) == []
    # a suite's own min_n is compared even when an older record lacks it: raising it ungates
    run["config"]["suites"]["a"]["gate"] = {"min_n": 1000}
    assert [c["key"] for c in _changes(base, run)] == ["suites.a.gate.min_n"]
