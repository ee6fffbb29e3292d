"""Results and baselines edited by hand or read before: re-gating, wrong types, a baseline that is
not JSON or cannot be read; a refusal still lists what it read (fast, no model)."""

from __future__ import annotations

import json

import pytest
from helpers.factories import make_entry, make_results, make_rules
from helpers.gate_inputs import baseline_of, entries_of, write_json
from helpers.paths import REPO

from evalgate.cli import main
from evalgate.errors import RefusedError
from evalgate.gate.compare import compare

pytestmark = pytest.mark.usefixtures("in_repo")  # tests/conftest.py: run from the repository


# --- re-gating a results.json that was gated before ---------------------------------------------


@pytest.mark.integration
def test_regating_lists_only_the_baseline_used(tmp_path):
    entries = entries_of()
    results = write_json(tmp_path / "results.json", make_results(entries))
    first = write_json(tmp_path / "first.json", baseline_of(entries))
    second = write_json(tmp_path / "second.json", baseline_of(entries))
    assert main(["compare", results, first, "--out", str(tmp_path / "a")]) == 0
    gated = str(tmp_path / "a" / "results.json")
    assert main(["compare", gated, second, "--out", str(tmp_path / "b")]) == 0
    doc = json.loads((tmp_path / "b" / "results.json").read_text(encoding="utf-8"))
    baselines = [k for k, v in doc["inputs"].items() if v.get("role") == "baseline"]
    assert len(baselines) == 1 and baselines[0].endswith("second.json")
    assert "first.json" not in (tmp_path / "b" / "REPORT.md").read_text(encoding="utf-8")


@pytest.mark.integration
def test_compare_pins_and_hashes_the_gate_configuration_it_used(tmp_path):
    entries = entries_of()
    results = write_json(tmp_path / "results.json", make_results(entries))
    base = write_json(tmp_path / "base.json", baseline_of(entries))
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

    old = entries_of()
    new = old + [
        make_entry(f"adv-{i}", i % 2 == 0, category="adversarial", reason_code="PAST-IRREG")
        for i in range(24)
    ]
    results = make_results(new)
    results["comparison"] = compare(results, baseline_of(old), make_rules(), "baselines/demo.json")
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
    entries = entries_of()
    doc = make_results(entries)
    doc["warnings"] = []
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    results = write_json(tmp_path / "results.json", doc)
    base = write_json(tmp_path / "base.json", baseline_of(entries))
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
    results = write_json(tmp_path / "results.json", make_results(entries_of()))
    (tmp_path / "base.json").write_text(text, encoding="utf-8")
    assert main(["compare", results, str(tmp_path / "base.json"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "base.json" in err and why in err


def test_unreadable_baseline_is_refused_naming_it(tmp_path, monkeypatch):
    from evalgate.edges import input_files, json_input

    path = tmp_path / "base.json"
    path.write_text("{}", encoding="utf-8")

    def denied(*a, **k):
        raise PermissionError(13, "Permission denied")

    # every input is read through the one bounded reader (edges/input_files.py); the tests run
    # as root, where a file's permissions deny nothing
    monkeypatch.setattr(input_files, "read_regular", denied)
    with pytest.raises(RefusedError, match=r"base\.json: cannot read the baseline: Permission denied"):
        json_input.load_json_file(path, "baseline")


@pytest.mark.integration
def test_refused_compare_still_lists_the_files_it_read(tmp_path):
    entries = entries_of()
    results = write_json(tmp_path / "results.json", make_results(entries))
    base = baseline_of(entries)
    base["manifest"]["method"] = "sentence"  # measured differently: refused
    base_path = write_json(tmp_path / "base.json", base)
    assert main(["compare", results, base_path, "--out", str(tmp_path / "out")]) == 2
    doc = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    roles = {v.get("role") for v in doc["inputs"].values()}
    assert doc["verdict"] == "refused" and {"results", "baseline", "config"} <= roles
    assert "base.json" in (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_refused_run_lists_the_baseline_and_checkpoint_it_read(tmp_path):
    base = json.loads((REPO / "baselines" / "demo.json").read_text(encoding="utf-8"))
    base["manifest"]["method"] = "sentence"  # refused by the gate, after scoring
    path = write_json(tmp_path / "other.json", base)
    assert main(["--baseline", path, "--out", str(tmp_path / "out")]) == 2
    doc = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    roles = {v.get("role") for v in doc["inputs"].values()}
    assert doc["verdict"] == "refused" and {"baseline", "checkpoint", "test", "probes"} <= roles
