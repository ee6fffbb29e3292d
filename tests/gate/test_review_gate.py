"""Review of the gate: inputs a hand-edited or mismatched baseline/results can bring (fast, no model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.factories import make_entry, make_results, make_rules
from helpers.paths import REPO

from evalgate.cli import main
from evalgate.errors import NotComparableError, RefusedError
from evalgate.gate.baseline import baseline_from_results
from evalgate.gate.compare import compare, verdict


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def _entries(prefix: str = "p", n: int = 120, wrong_every: int = 5) -> list[dict]:
    return [
        make_entry(f"{prefix}-{i:03d}", i % wrong_every != 0, language=("en", "es")[i % 2]) for i in range(n)
    ]


def _baseline(entries: list[dict]) -> dict:
    return baseline_from_results(make_results(entries), "demo", {"git_commit": None, "pr_number": None})


def _write(path: Path, doc: dict) -> str:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


# --- a baseline that shares no probe with the run ---------------------------------------------


def test_baseline_of_another_probe_set_is_refused_not_passed():
    # Every id differs: before, every slice was "new", nothing was gated and the verdict was pass.
    base = _baseline(_entries("old"))
    results = make_results(_entries("new", wrong_every=2))
    with pytest.raises(NotComparableError) as err:
        compare(results, base, make_rules(), "baselines/other.json")
    assert "shares no scored probe" in err.value.message
    assert "probe_set_digest" in err.value.message  # names the difference


def test_baseline_with_no_outcomes_is_refused():
    base = _baseline(_entries())
    base["outcomes"] = {}
    with pytest.raises(NotComparableError, match="shares no scored probe"):
        compare(make_results(_entries()), base, make_rules(), "baselines/demo.json")


def test_some_shared_probes_plus_new_ones_still_gate():
    old = _entries("p", n=120)
    new = old + [make_entry(f"n-{i}", False) for i in range(30)]
    cmp = compare(make_results(new), _baseline(old), make_rules(), "baselines/demo.json")
    assert cmp["n_paired"] == 120 and len(cmp["new_probes"]) == 30 and verdict(cmp)[0] == "pass"


def test_compare_cli_zero_shared_exits_2(tmp_path, capsys):
    results = _write(tmp_path / "results.json", make_results(_entries("new")))
    base = _write(tmp_path / "other.json", _baseline(_entries("old")))
    assert main(["compare", results, base, "--out", str(tmp_path / "out")]) == 2
    assert "shares no scored probe" in capsys.readouterr().err
    written = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert written["verdict"] == "refused"


# --- partial results of `run --shard I/N` --------------------------------------------------------


def _partial(entries: list[dict], index: int = 1, count: int = 3) -> dict:
    doc = make_results(entries)
    doc["shard"] = {"index": index, "count": count, "order": [e["id"] for e in entries]}
    return doc


def test_partial_result_cannot_be_the_baseline():
    entries = _entries()
    with pytest.raises(RefusedError, match=r"shard 2/3"):
        compare(make_results(entries), _partial(entries[::3], 2), make_rules(), "p2/results.json")


def test_partial_result_cannot_be_gated():
    entries = _entries()
    with pytest.raises(RefusedError, match=r"shard 1/3"):
        compare(_partial(entries[::3]), _baseline(entries), make_rules(), "baselines/demo.json")


def test_compare_cli_refuses_a_shard_naming_the_file(tmp_path, capsys):
    entries = _entries()
    part = _write(tmp_path / "part.json", _partial(entries[::3]))
    base = _write(tmp_path / "base.json", _baseline(entries))
    assert main(["compare", part, base, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "part.json" in err and "evalgate merge" in err


def test_baseline_update_refuses_a_shard(tmp_path, capsys):
    cfg = tmp_path / "evalgate.yml"  # baselines/ is written beside the configuration
    cfg.write_text((REPO / "evalgate.yml").read_text(encoding="utf-8"), encoding="utf-8")
    part = _write(tmp_path / "part.json", _partial(_entries()[::3]))
    argv = ["baseline", "update", "--config", str(cfg), "--from-results", part, "--name", "shard"]
    assert main(argv) == 2
    assert "shard 1/3" in capsys.readouterr().err
    assert not (tmp_path / "baselines" / "shard.json").exists()


# --- re-gating a results.json that was gated before ---------------------------------------------


def test_regating_lists_only_the_baseline_used(tmp_path):
    entries = _entries()
    results = _write(tmp_path / "results.json", make_results(entries))
    first = _write(tmp_path / "first.json", _baseline(entries))
    second = _write(tmp_path / "second.json", _baseline(entries))
    assert main(["compare", results, first, "--out", str(tmp_path / "a")]) == 0
    gated = str(tmp_path / "a" / "results.json")
    assert main(["compare", gated, second, "--out", str(tmp_path / "b")]) == 0
    doc = json.loads((tmp_path / "b" / "results.json").read_text(encoding="utf-8"))
    baselines = [k for k, v in doc["inputs"].items() if v.get("role") == "baseline"]
    assert len(baselines) == 1 and baselines[0].endswith("second.json")
    assert "first.json" not in (tmp_path / "b" / "REPORT.md").read_text(encoding="utf-8")


# --- merge: a malformed shard record -------------------------------------------------------------


@pytest.mark.parametrize(
    "record",
    [
        {},
        {"index": 1, "count": "2"},
        {"index": None, "count": 2},
        {"index": 3, "count": 2},
        {"index": True, "count": 1},
    ],
)
def test_merge_refuses_a_malformed_shard_record_not_exit_3(record):
    from evalgate.gate.shards import merge_parts
    from evalgate.pipeline import BASE_KEYS

    good = {"index": 2, "count": 2, "order": ["a", "b"]}
    parts = [
        {"verdict": "pass", "probes": [{"id": "a"}], "shard": {"order": ["a", "b"], **record}},
        {"verdict": "pass", "probes": [{"id": "b"}], "shard": good},
    ]
    with pytest.raises(RefusedError, match="'shard' record"):
        merge_parts(parts, BASE_KEYS)


def test_merge_cli_malformed_shard_exits_2(tmp_path, capsys):
    entries = _entries()
    order = [e["id"] for e in entries]
    one = _partial(entries[0::2], 1, 2)
    two = _partial(entries[1::2], 2, 2)
    one["shard"]["order"] = two["shard"]["order"] = order
    one["shard"]["count"] = "2"
    args = [_write(tmp_path / "1.json", one), _write(tmp_path / "2.json", two)]
    assert main(["merge", *args, "--out", str(tmp_path / "out")]) == 2
    assert "shard" in capsys.readouterr().err  # named by the schema or by merge_parts


def test_compare_pins_and_hashes_the_gate_configuration_it_used(tmp_path):
    entries = _entries()
    results = _write(tmp_path / "results.json", make_results(entries))
    base = _write(tmp_path / "base.json", _baseline(entries))
    cfg = tmp_path / "gate.yml"
    text = (REPO / "evalgate.yml").read_text(encoding="utf-8")
    cfg.write_text(text.replace("rule: paired ", "rule: wilson ").replace("min_n: 20 ", "min_n: 7 "), "utf-8")
    args = ["compare", "--config", str(cfg), results, base, "--out", str(tmp_path / "out")]
    # Other rules than the baseline's are a gate change (docs/approval.md): refused unless approved.
    assert main(args) == 2
    assert main([*args, "--approve-gate-changes"]) == 0
    doc = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    changed = {c["key"]: (c["old"], c["new"]) for c in doc["gate_changes_vs_baseline"]}
    assert changed == {"gate.rule": ("paired", "wilson"), "gate.min_n": (20, 7)}
    assert doc["comparison"]["rule"] == "wilson"
    assert doc["config"]["gate"]["rule"] == "wilson" and doc["config"]["gate"]["min_n"] == 7
    assert "gate.yml" in {k for k, v in doc["inputs"].items() if v.get("role") == "config"}


def test_text_bars_of_a_new_slice_count_the_probes_they_show():
    from evalgate.report.bars import bars_from_results

    old = _entries()
    new = old + [
        make_entry(f"adv-{i}", i % 2 == 0, category="adversarial", reason_code="PAST-IRREG")
        for i in range(24)
    ]
    results = make_results(new)
    results["comparison"] = compare(results, _baseline(old), make_rules(), "baselines/demo.json")
    bars = {b.label: b for b in bars_from_results(results)}
    adv = bars["category:adversarial"]
    assert adv.status == "new" and adv.accuracy == 0.5 and adv.n == 24  # not "n=0" beside 50%
    assert bars["overall"].n == 120  # a compared slice still counts its shared probes


# --- a hand-edited results.json: wrong types are refused by the schema, never a traceback ------------


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("calibration", "bins", 0, "accuracy"), "x", "calibration/bins/0/accuracy"),
        (("calibration", "confident_errors"), 1.5, "calibration/confident_errors"),
        (("calibration", "entropy"), "x", "calibration/entropy"),
        (("warnings",), -1, "warnings"),
        (("config", "gate", "slices"), -1, "config/gate/slices"),
    ],
)
def test_compare_refuses_wrongly_typed_results_naming_the_field(tmp_path, capsys, path, value, field):
    entries = _entries()
    doc = make_results(entries)
    doc["warnings"] = []
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    results = _write(tmp_path / "results.json", doc)
    base = _write(tmp_path / "base.json", _baseline(entries))
    assert main(["compare", results, base, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "results.json" in err and field in err


# --- a baseline file that is not JSON at all -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
        ('{"perplexity": {"value": Infinity}}', "Infinity"),
        ('{"perplexity": {"value": NaN}}', "NaN"),
    ],
)
def test_compare_refuses_a_baseline_that_is_not_strict_json(tmp_path, capsys, text, why):
    results = _write(tmp_path / "results.json", make_results(_entries()))
    (tmp_path / "base.json").write_text(text, encoding="utf-8")
    assert main(["compare", results, str(tmp_path / "base.json"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "base.json" in err and why in err


def test_unreadable_baseline_is_refused_naming_it(tmp_path, monkeypatch):
    from evalgate import pipeline

    path = tmp_path / "base.json"
    path.write_text("{}", encoding="utf-8")

    def denied(self, *a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_text", denied)
    with pytest.raises(RefusedError, match=r"base\.json: cannot read the baseline: Permission denied"):
        pipeline.load_json_file(path, "baseline")


def test_run_that_scored_none_of_the_baseline_probes_is_refused_not_passed():
    # A new tokenizer maps every candidate to the unknown token: all probes model_oov.
    old = _entries()
    new = [make_entry(e["id"], None, status="model_oov", language=e["language"]) for e in old]
    with pytest.raises(RefusedError, match=r"none of the 120 probes .*\(model_oov: 120\)"):
        compare(make_results(new), _baseline(old), make_rules(), "baselines/demo.json")


def test_run_of_only_ordinal_or_deprecated_probes_is_not_refused_for_overlap():
    old = _entries(n=10)
    new = [make_entry(e["id"], None, status="deprecated", language=e["language"]) for e in old]
    cmp = compare(make_results(new), _baseline(old), make_rules(), "baselines/demo.json")
    assert cmp["n_paired"] == 0 and verdict(cmp)[0] == "pass"


def test_refused_compare_still_lists_the_files_it_read(tmp_path):
    entries = _entries()
    results = _write(tmp_path / "results.json", make_results(entries))
    base = _baseline(entries)
    base["manifest"]["method"] = "sentence"  # measured differently: refused
    base_path = _write(tmp_path / "base.json", base)
    assert main(["compare", results, base_path, "--out", str(tmp_path / "out")]) == 2
    doc = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    roles = {v.get("role") for v in doc["inputs"].values()}
    assert doc["verdict"] == "refused" and {"results", "baseline", "config"} <= roles
    assert "base.json" in (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8")


def test_refused_run_lists_the_baseline_and_checkpoint_it_read(tmp_path):
    base = json.loads((REPO / "baselines" / "demo.json").read_text(encoding="utf-8"))
    base["manifest"]["method"] = "sentence"  # refused by the gate, after scoring
    path = _write(tmp_path / "other.json", base)
    assert main(["--baseline", path, "--out", str(tmp_path / "out")]) == 2
    doc = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    roles = {v.get("role") for v in doc["inputs"].values()}
    assert doc["verdict"] == "refused" and {"baseline", "checkpoint", "test", "probes"} <= roles
