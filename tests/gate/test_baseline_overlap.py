"""A baseline that shares no probe, or no outcome, with the run is refused, never a pass (fast, no model)."""

from __future__ import annotations

import json

import pytest
from helpers.factories import make_entry, make_results, make_rules
from helpers.gate_inputs import baseline_of, entries_of, write_json

from evalgate.cli import main
from evalgate.errors import NotComparableError, RefusedError
from evalgate.gate.compare import compare, verdict

pytestmark = pytest.mark.usefixtures("in_repo")  # tests/conftest.py: run from the repository


# --- a baseline that shares no probe with the run ---------------------------------------------


def test_baseline_of_another_probe_set_is_refused_not_passed():
    # Every id differs: before, every slice was "new", nothing was gated and the verdict was pass.
    base = baseline_of(entries_of("old"))
    results = make_results(entries_of("new", wrong_every=2))
    with pytest.raises(NotComparableError) as err:
        compare(results, base, make_rules(), "baselines/other.json")
    assert "shares no scored probe" in err.value.message
    assert "probe_set_digest" in err.value.message  # names the difference


def test_baseline_with_no_outcomes_is_refused():
    base = baseline_of(entries_of())
    base["outcomes"] = {}
    with pytest.raises(NotComparableError, match="shares no scored probe"):
        compare(make_results(entries_of()), base, make_rules(), "baselines/demo.json")


def test_some_shared_probes_plus_new_ones_still_gate():
    old = entries_of("p", n=120)
    new = old + [make_entry(f"n-{i}", False) for i in range(30)]
    cmp = compare(make_results(new), baseline_of(old), make_rules(), "baselines/demo.json")
    assert cmp["n_paired"] == 120 and len(cmp["new_probes"]) == 30 and verdict(cmp)[0] == "pass"


def test_compare_cli_zero_shared_exits_2(tmp_path, capsys):
    results = write_json(tmp_path / "results.json", make_results(entries_of("new")))
    base = write_json(tmp_path / "other.json", baseline_of(entries_of("old")))
    assert main(["compare", results, base, "--out", str(tmp_path / "out")]) == 2
    assert "shares no scored probe" in capsys.readouterr().err
    written = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert written["verdict"] == "refused"


def test_run_that_scored_none_of_the_baseline_probes_is_refused_not_passed():
    # A new tokenizer maps every candidate to the unknown token: all probes model_oov.
    old = entries_of()
    new = [make_entry(e["id"], None, status="model_oov", language=e["language"]) for e in old]
    with pytest.raises(RefusedError, match=r"none of the 120 probes .*\(model_oov: 120\)"):
        compare(make_results(new), baseline_of(old), make_rules(), "baselines/demo.json")


def test_run_of_only_ordinal_or_deprecated_probes_is_not_refused_for_overlap():
    old = entries_of(n=10)
    new = [make_entry(e["id"], None, status="deprecated", language=e["language"]) for e in old]
    cmp = compare(make_results(new), baseline_of(old), make_rules(), "baselines/demo.json")
    # not refused, and not a pass either: nothing was gated (docs/gate.md, "Verdict")
    assert cmp["n_paired"] == 0 and verdict(cmp)[0] == "inconclusive"
    assert cmp["inconclusive"] == [
        {"slice": None, "why": "nothing_gated", "n": 0, "drop": None, "min_n": 20, "largest_slice": None,
         "largest_n": 0}
    ]  # fmt: skip
