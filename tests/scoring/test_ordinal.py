"""Ordinal probes (docs/ordinal.md): surprisal curves, argmin, E[x], entropy, MAE, validation, report, PNG.

The fixture model is a FakeScorer whose log-probabilities over the scale points are the logs of a
known distribution, so the renormalised distribution is that distribution and every number the
ordinal section reports can be worked out by hand below.
"""

from __future__ import annotations

import copy
import json
import math

import pytest
from helpers.factories import make_entry, make_results, make_rules
from helpers.ordinal import SCALE, ordinal_probe, run_results, scored
from helpers.paths import REPO
from helpers.probeset_factory import CONFIG, EVAL, cli_merged, dump_jsonl, write_base

from evalgate.config import load_config
from evalgate.edges.outputs import write_outputs
from evalgate.edges.plot_ordinal import render_ordinal_png
from evalgate.gate import results as results_mod
from evalgate.gate.compare import compare
from evalgate.gate.slices import aggregate
from evalgate.probeset.coverage import coverage_matrix
from evalgate.probeset.scale import scale_problem
from evalgate.report.full_report import render_report
from evalgate.report.ordinal import sparkline
from evalgate.scoring.ordinal import scale_values, summarize

# A leans towards the top of the scale; B is sure of the bottom; FLAT cannot decide.
P_A = [0.05, 0.10, 0.15, 0.30, 0.40]
P_B = [0.90, 0.04, 0.03, 0.02, 0.01]
P_FLAT = [0.2] * 5


A = ordinal_probe("ord-a", "5", reason_code="ACC-OK")
B = ordinal_probe("ord-b", "1")  # no reason_code: grouped as language:verb
FLAT = ordinal_probe("ord-flat", "3", reason_code="ACC-OK")


def test_known_distribution_gives_the_known_curve_argmin_expectation_entropy_and_mae():
    section = summarize(scored([(A, P_A), (B, P_B)]), review_entropy=0.8)
    a, b = section["items"]

    # the curve: per point the surprisal of its score (here log p itself) and the renormalised p
    assert [pt["text"] for pt in a["points"]] == list(SCALE)
    assert [pt["x"] for pt in a["points"]] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert [pt["surprisal"] for pt in a["points"]] == pytest.approx(
        [2.995732, 2.302585, 1.897120, 1.203973, 0.916291], abs=1e-6
    )
    assert [pt["p"] for pt in a["points"]] == pytest.approx(P_A)
    # argmin: lowest surprisal = highest probability
    assert (a["argmin"], a["argmin_value"]) == ("5", 5.0)
    assert (b["argmin"], b["argmin_value"]) == ("1", 1.0)
    # E[x] = sum p_i x_i
    assert a["expectation"] == pytest.approx(1 * 0.05 + 2 * 0.10 + 3 * 0.15 + 4 * 0.30 + 5 * 0.40)  # 3.9
    assert b["expectation"] == pytest.approx(1 * 0.90 + 2 * 0.04 + 3 * 0.03 + 4 * 0.02 + 5 * 0.01)  # 1.2
    # H = -sum p ln p, and H / ln 5
    h_a = -(0.05 * math.log(0.05) + 0.10 * math.log(0.10) + 0.15 * math.log(0.15))
    h_a -= 0.30 * math.log(0.30) + 0.40 * math.log(0.40)
    assert a["entropy"] == pytest.approx(h_a) and a["entropy"] == pytest.approx(1.392321, abs=1e-6)
    assert a["entropy_norm"] == pytest.approx(1.392321 / math.log(5), abs=1e-6)  # 0.865098
    assert b["entropy_norm"] == pytest.approx(0.453068 / math.log(5), abs=1e-6)  # 0.281507
    # errors against the expected point: |3.9 - 5| = 1.1 and |1.2 - 1| = 0.2; both argmins are right
    assert (a["target"], a["abs_error"], a["argmin_error"]) == (5.0, pytest.approx(1.1), 0.0)
    assert (b["target"], b["abs_error"], b["argmin_error"]) == (1.0, pytest.approx(0.2), 0.0)
    # review: A's normalised entropy 0.865 is above 0.8, B's 0.282 is not
    assert (a["review"], b["review"]) == (True, False) and section["review"] == ["ord-a"]
    # groups: reason_code, else language:verb; MAE over the group, and overall (1.1 + 0.2) / 2
    assert list(section["groups"]) == ["ACC-OK", "en:go"]
    assert section["groups"]["ACC-OK"]["mae"] == pytest.approx(1.1)
    assert section["groups"]["en:go"]["mae"] == pytest.approx(0.2)
    overall = section["overall"]
    assert (overall["n"], overall["n_review"]) == (2, 1)
    assert overall["mae"] == pytest.approx(0.65) and overall["mae_argmin"] == 0.0
    assert overall["mean_entropy_norm"] == pytest.approx((0.865098 + 0.281507) / 2, abs=1e-6)


def test_flat_curve_ties_go_to_the_lower_point_and_ambiguous_items_stay_out_of_the_mae():
    border = ordinal_probe("ord-border", "3", label="ambiguous", reason_code="ACC-OK")
    section = summarize(scored([(FLAT, P_FLAT), (border, P_A)]))
    flat, amb = section["items"]
    assert flat["argmin"] == "1" and flat["expectation"] == pytest.approx(3.0)
    assert flat["entropy_norm"] == pytest.approx(1.0) and flat["review"] is True
    assert amb["status"] == "ambiguous" and amb["review"] is False  # known to be ambiguous: not flagged
    group = section["groups"]["ACC-OK"]
    assert (group["n"], group["n_ambiguous"], group["mae"]) == (1, 1, pytest.approx(0.0))


def test_labels_scale_by_rank_and_unscored_items_are_counted_apart():
    labels = ("bad", "odd", "fine")
    probe = ordinal_probe("ord-labels", "fine", candidates=labels)
    entries = scored([(probe, [0.2, 0.3, 0.5])])
    entries.append({**entries[0], "id": "ord-oov", "status": "model_oov"})
    section = summarize(entries)
    (item,) = section["items"]
    assert [pt["x"] for pt in item["points"]] == [1.0, 2.0, 3.0]
    assert item["expectation"] == pytest.approx(0.2 + 0.6 + 1.5)
    assert item["abs_error"] == pytest.approx(3 - 2.3)
    assert section["overall"]["n_unscored"] == 1
    assert summarize([make_entry("form-1", True)]) is None  # no ordinal probe: no section


@pytest.mark.parametrize(
    ("candidates", "problem"),
    [
        (["1", "2", "3", "4", "5"], None),
        (["-1", "0", "0.5", "1"], None),
        (["never", "sometimes", "always"], None),
        (["1", "3", "2"], "must increase strictly"),
        (["1", "1.0", "2"], "must increase strictly"),
        (["1", "two", "3"], "mixes numbers and labels (two is not a number)"),
        (["1", "2"], "at least 3 points"),
        (["1", "2", "nan"], "mixes numbers and labels"),
    ],
)
def test_scale_rules(candidates, problem):
    found = scale_problem(candidates)
    assert (found is None) if problem is None else (problem in found), found
    if problem is None:
        assert len(scale_values(candidates)) == len(candidates)


def test_validate_names_every_broken_scale_with_file_line_id_and_field(tmp_path):
    files = ["data/eval/probes.jsonl", "data/eval/adversarial.jsonl", "data/eval/ordinal.jsonl"]
    config = write_base(tmp_path, {**CONFIG, "probes": files})
    good = ordinal_probe("ord-good", "5").to_record()
    backwards = {**ordinal_probe("ord-backwards", "5").to_record(), "candidates": ["5", "4", "3", "2", "1"]}
    mixed = {**ordinal_probe("ord-mixed", "3").to_record(), "candidates": ["1", "2", "3", "four"]}
    # the same candidates on a verb-form probe are fine: only ordinal probes must be scales
    form = {**ordinal_probe("ord-form", "5").to_record(), "candidates": ["5", "4", "3"]}
    form.pop("kind")
    (tmp_path / EVAL / "ordinal.jsonl").write_bytes(dump_jsonl([good, backwards, mixed, form]))
    code, out = cli_merged("validate", "--config", str(config), "--format", "json")
    doc = json.loads(out)
    assert code == 2
    found = [f for f in doc["findings"] if f["check"] == "ordinal-scale"]
    assert [(f["file"], f["line"], f["probe_id"], f["field"]) for f in found] == [
        ("data/eval/ordinal.jsonl", 2, "ord-backwards", "candidates"),
        ("data/eval/ordinal.jsonl", 3, "ord-mixed", "candidates"),
    ]
    assert "'4' comes after '5'" in found[0]["message"] and "low to high" in found[0]["hint"]
    # coverage untouched by them; the verb-form probe is checked as one ("5" is not a form of 'go')
    assert {f["check"] for f in doc["findings"]} == {"ordinal-scale", "expected-form"}


def test_coverage_counts_only_form_probes():
    rules = load_config(REPO / "evalgate.yml").coverage
    matrix = coverage_matrix([A, B, ordinal_probe("ord-es", "1", language="es", verb="ir")], rules, None)
    assert (matrix["n_core"], matrix["n_ordinal"]) == (0, 3)
    assert matrix["language"]["en"]["n"] == 0 and matrix["tense"]["past_simple"]["n"] == 0


def test_ordinal_entries_stay_out_of_accuracy_slices_per_verb_calibration_and_the_gate():
    forms = [make_entry("form-1", True), make_entry("form-2", False)]
    ordinal = scored([(A, P_A), (B, P_B)])
    agg = aggregate(forms + ordinal, 1.96)
    assert agg["slices"] == aggregate(forms, 1.96)["slices"]
    assert agg["slices"]["overall"]["n"] == 2 and "tense:past_simple" not in agg["slices"]
    assert "en:go" not in agg["per_verb"] and agg["calibration"]["n"] == 2
    assert agg["counts"]["scored"] == 4  # counted as probes of the run, nowhere else
    # an ordinal item flipping right -> wrong is not a flipped probe, not paired, not unpaired
    flipped = scored([(A, P_A[::-1]), (B, P_B)])  # A's argmin moves from 5 (right) to 1
    base = make_results(forms + ordinal)
    new = make_results(forms + flipped)
    comparison = compare(new, base, make_rules(), "baselines/x.json")
    assert comparison["n_paired"] == 2 and comparison["flipped"]["right_to_wrong"] == []
    assert comparison["unpaired"] == [] and comparison["new_probes"] == []
    assert set(comparison["slices"]) == {
        k for k in base["slices"] if k.partition(":")[0] in make_rules().slices
    }


def table_rows(markdown: str) -> list[list[str]]:
    """The cells of every Markdown table row, header included."""
    out = []
    for line in markdown.splitlines():
        if line.startswith("| ") and not line.startswith("|-"):
            out.append([c.strip() for c in line.strip().strip("|").split("|")])
    return out


def report_results(n_extra: int = 0) -> dict:
    pairs = [(A, P_A), (B, P_B), (FLAT, P_FLAT)]
    pairs += [(ordinal_probe(f"ord-x{i:02d}", "2", reason_code="ACC-X"), P_B) for i in range(n_extra)]
    forms = [make_entry("form-1", True), make_entry("form-2", False)]
    return run_results(forms + scored(pairs))


def test_results_carry_the_ordinal_section_and_the_report_shows_it():
    results = report_results()
    results_mod.validate_results(results, "results")
    assert results["slices"]["overall"]["n"] == 2
    section = results["ordinal"]
    assert [i["id"] for i in section["items"]] == ["ord-a", "ord-b", "ord-flat"]
    assert section["review"] == ["ord-flat", "ord-a"]  # most uncertain first
    text = render_report(results)
    part = text[text.index("### Ordinal probes") : text.index("### Inputs")]
    assert "3 item(s) judged on an ordinal scale" in part
    # one row per item: id, group, curve, argmin, E[x], expected, |error|, H/log K, flag
    items_table = part[: part.index("#### Needs human review")]
    rows = {cells[0]: cells[1:] for cells in table_rows(items_table) if cells[0].startswith("ord-")}
    assert rows["ord-a"] == ["ACC-OK", "▇▅▅▃▃", "5", "3.90", "5", "1.10", "0.865", "👀 review"]
    assert rows["ord-b"] == ["en:go", "▁▇███", "1", "1.20", "1", "0.20", "0.282", ""]
    assert rows["ord-flat"] == ["ACC-OK", "▄▄▄▄▄", "1", "3.00", "3", "0.00", "1.000", "👀 review"]
    assert "#### Needs human review (2)" in part and "<details>" not in part  # short lists stay open
    review = [c for c in table_rows(part[part.index("#### Needs human review") :]) if c[0].startswith("ord-")]
    assert [c[0] for c in review] == ["ord-flat", "ord-a"]
    assert review[0][1].startswith('Sentence: "Last week ord-flat went home."')
    assert sparkline([{"p": p} for p in P_FLAT]) == "▄▄▄▄▄"
    # a results.json written before the section existed renders the same numbers from its probes
    older = copy.deepcopy(results)
    del older["ordinal"]
    assert render_report(older) == text


def test_long_ordinal_lists_fold_and_yield_to_the_size_cap():
    results = report_results(n_extra=40)
    full = render_report(results)
    assert "<details><summary>43 ordinal items</summary>" in full
    capped = render_report(results, max_chars=len(full) - 2000)
    assert "ordinal items; the full list is in results.json `ordinal.items`" in capped
    assert len(capped.encode("utf-16-le")) // 2 <= len(full) - 2000


@pytest.mark.integration
def test_ordinal_png_is_deterministic_and_written_only_with_ordinal_probes(tmp_path):
    results = report_results(n_extra=9)  # 10 items in one group: a crowded panel, no legend
    png = render_ordinal_png(results)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and b"Software" not in png
    assert render_ordinal_png(copy.deepcopy(results)) == png
    write_outputs(results, tmp_path, None)
    assert (tmp_path / "ordinal.png").read_bytes() == png
    without = run_results([make_entry("form-1", True)])
    assert "ordinal" not in without
    write_outputs(without, tmp_path, None)
    assert not (tmp_path / "ordinal.png").exists()  # an earlier run's curves are not left behind


@pytest.mark.integration
def test_the_example_file_validates_and_is_in_the_default_probe_set():
    cfg = load_config(REPO / "evalgate.yml")
    assert "data/eval/ordinal.jsonl" in cfg.probes
    assert cfg.probes == load_config(cwd=REPO / "src").probes  # the embedded default agrees
    records = [
        json.loads(line) for line in (REPO / "data/eval/ordinal.jsonl").read_text("utf-8").splitlines()
    ]
    assert 12 <= len(records) <= 20
    assert {r["kind"] for r in records} == {"ordinal"} and {r["source"] for r in records} == {"hand"}
    assert {r["language"] for r in records} == {"en", "es"}
    assert len({r["reason_code"] for r in records}) >= 3
    assert all(scale_problem(r["candidates"]) is None for r in records)
    code, out = cli_merged("validate", "--config", str(REPO / "evalgate.yml"), "--format", "json")
    doc = json.loads(out)
    assert code == 0, doc["findings"]
    assert doc["summary"]["leaks"] == 0 and "data/eval/ordinal.jsonl" in doc["summary"]["files"]
