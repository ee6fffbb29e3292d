"""A floor never turns what the gate could not see into a green check (issue 25, outside review).

A pull request's checkpoint that loses slices the paired test cannot judge (under `gate.min_n`, or
low power) must not pass because some floor (`gate.min_accuracy`) exists or held: a floor decides
a collapse of its own slice below it, nothing else (docs/gate.md, "Verdict"). Each case is a team's
suite gated through the real `evalgate run` (and `evalgate compare` on the results file it wrote)
with a tiny real model whose answers are set item by item (tests/helpers/answer_key.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import answer_key
from helpers.answer_key import pick

from evalgate.gate.results import validate_results
from evalgate.report.comment import render_comment


def _results(path: Path) -> dict:
    doc = json.loads(path.read_text(encoding="utf-8"))
    validate_results(doc, str(path))
    return doc


def _team(root: Path, cli, subjects: dict[str, int], base: set[str], pr: set[str], gate: str) -> list[dict]:
    items = answer_key.write_items(root / "team" / "items.jsonl", subjects)
    answer_key.write_plugin(root)
    (root / "evalgate.yml").write_text(answer_key.config(extra_gate=gate), encoding="utf-8")
    answer_key.write_checkpoint(root / "ckpt" / "base", items, base)
    answer_key.write_checkpoint(root / "ckpt" / "pr", items, pr)
    assert cli("probes", "seal").code == 0
    got = cli("baseline", "update", "--name", "team", "--checkpoint", "ckpt/base")
    assert got.code == 0, got.err
    return items


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return tmp_path


@pytest.mark.slow
def test_one_floor_does_not_pass_a_collapse_of_every_other_slice(repo, cli):
    """Attack: with `gate.min_n` above every slice (nothing tested) and one floor on one slice, a
    checkpoint that answers every other slice wrong passed "no gated slice regressed, every floor
    held"."""
    subjects = {"big": 40, "s20": 20, "s5": 5}
    items = answer_key.write_items(repo / "probe.jsonl", subjects)
    ids = [it["id"] for it in items]
    big = set(pick(items, "big", 40))
    _team(repo, cli, subjects, set(ids), big, "min_n: 300\nmin_accuracy: {'subject:big': 0.5}")

    got = cli("run")
    assert got.code == 0, got.err  # inconclusive exits 0 unless gate.inconclusive: fail
    res = _results(repo / "evalgate-out" / "results.json")
    assert res["verdict"] == "inconclusive"
    assert res["floors"]["subject:big"]["status"] == "ok"  # the floor held, on its own slice only
    named = {e["slice"]: e for e in res["comparison"]["inconclusive"]}
    assert {"subject:s20", "subject:s5"} <= set(named) and "subject:big" not in named
    assert named["subject:s5"]["why"] == "too_small" and named["subject:s5"]["drop"] == 1.0
    assert named["subject:s5"]["items_needed"] >= 300  # never fewer than gate.min_n
    report = (repo / "evalgate-out" / "REPORT.md").read_text(encoding="utf-8")
    assert report.startswith("## ⚠️ evalgate: inconclusive")
    assert "subject:s5 (-100.0 pts on 5, under gate.min\\_n = 300, not tested)" in report.split("\n\n", 1)[0]
    assert "no gated slice regressed" not in report
    comment = render_comment(res)
    assert "### Slices the gate could not decide" in comment and "subject:s20" in comment
    assert "closest to the line" not in comment

    # the same verdict from `evalgate compare` on the run's results file
    got = cli("compare", "evalgate-out/results.json", "baselines/team.json", "--out", "cmp")
    assert got.code == 0, got.err
    again = _results(repo / "cmp" / "results.json")
    assert again["verdict"] == "inconclusive"
    assert {e["slice"] for e in again["comparison"]["inconclusive"]} == set(named)


@pytest.mark.slow
def test_a_pass_with_nothing_tested_never_says_no_gated_slice_regressed(repo, cli):
    """Attack: a run in which no slice was tested (all under `gate.min_n`) but a floor held read
    "no gated slice regressed", a claim about tests that never ran."""
    subjects = {"big": 40, "s5": 5}
    items = answer_key.write_items(repo / "probe.jsonl", subjects)
    ids = {it["id"] for it in items}
    _team(repo, cli, subjects, ids, ids, "min_n: 300\nmin_accuracy: {'subject:big': 0.5}")
    assert cli("run").code == 0
    res = _results(repo / "evalgate-out" / "results.json")
    assert res["verdict"] == "pass"
    head = (repo / "evalgate-out" / "REPORT.md").read_text(encoding="utf-8").split("\n\n", 1)[0]
    assert "no gated slice regressed" not in head
    assert "no slice was tested (each under gate.min_n), every floor held" in head


def _held_floor_case(items: list[dict]) -> tuple[set[str], set[str]]:
    """(baseline right, PR right): subject a 32/35 -> 28/35 (4 lost, undecidable on 35 items);
    b 25/35 -> 27/35, so the whole run moves 1.9 points, within the tolerance; c unchanged."""
    base = set(pick(items, "a", 32)) | set(pick(items, "b", 25)) | set(pick(items, "c", 25))
    pr = (base - set(pick(items, "a", 4))) | set(pick(items, "b", 2, skip=25))
    return base, pr


@pytest.mark.slow
def test_a_floor_that_held_does_not_pass_an_undecided_drop(repo, cli):
    """Attack: a slice falls 91.4% -> 80.0% on 35 items, which the test cannot decide; a floor of
    75% on it held, and the gate passed the drop, listing it as "closest to the line"."""
    subjects = {"a": 35, "b": 35, "c": 35}
    items = answer_key.write_items(repo / "probe.jsonl", subjects)
    base, pr = _held_floor_case(items)
    floor = "min_accuracy: {'subject:a': 0.75}"
    _team(repo, cli, subjects, base, pr, floor)

    assert cli("run").code == 0
    res = _results(repo / "evalgate-out" / "results.json")
    assert res["verdict"] == "inconclusive"
    assert res["floors"]["subject:a"]["status"] == "ok"
    row = res["comparison"]["slices"]["subject:a"]
    assert row["status"] == "inconclusive" and row["p_adjusted"] >= 0.05 and row["underpowered"]
    (entry,) = res["comparison"]["inconclusive"]
    assert entry["slice"] == "subject:a" and entry["floor"] == 0.75
    (reason,) = res["reasons"]
    assert "its floor gate.min_accuracy held (≥ 75.0%)" in reason
    # the Wilson rule would not flag 32/35 -> 28/35 either: it is not offered as the fix
    assert "rule: wilson" not in reason
    comment = render_comment(res)
    assert "### Slices the gate could not decide" in comment
    assert "closest to the line" not in comment and "No slice regressed" not in comment
    assert "p (Holm)" in comment  # the column is the adjusted p, and says so

    # a floor that broke still fails the run
    cfg = repo / "evalgate.yml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace("0.75", "0.85"), encoding="utf-8")
    assert cli("run", "--approve-gate-changes").code == 1
    assert _results(repo / "evalgate-out" / "results.json")["verdict"] == "fail"


@pytest.mark.slow
def test_the_wilson_hint_is_offered_only_where_wilson_would_flag_the_drop(repo, cli):
    """The reason's "decidable with ... or rule: wilson" was false where the Wilson rule would
    not flag the observed drop either (32/35 -> 28/35)."""
    subjects = {"a": 35, "b": 35, "c": 35}
    items = answer_key.write_items(repo / "probe.jsonl", subjects)
    base, pr = _held_floor_case(items)
    _team(repo, cli, subjects, base, pr, "")
    assert cli("run").code == 0
    res = _results(repo / "evalgate-out" / "results.json")
    assert res["verdict"] == "inconclusive"
    (reason,) = res["reasons"]
    assert reason.startswith("subject:a: accuracy 91.4% → 80.0%")
    assert "rule: wilson" not in reason and "a floor (gate.min_accuracy)" in reason
    # switched to the Wilson rule, the same drop is indeed not flagged
    cfg = repo / "evalgate.yml"
    cfg.write_text(cfg.read_text(encoding="utf-8") + "gate:\n  rule: wilson\n", encoding="utf-8")
    assert cli("run", "--approve-gate-changes").code == 0
    assert _results(repo / "evalgate-out" / "results.json")["comparison"]["regressed"] == []


@pytest.mark.slow
def test_a_slice_under_min_n_that_lost_everything_is_named(repo, cli):
    """Attack: a 5-item slice goes 5/5 -> 0/5 while a large slice gains two items, so the whole
    run stays within its tolerance: the gate passed and its comment never named the slice."""
    subjects = {"big": 300, "s5": 5}
    items = answer_key.write_items(repo / "probe.jsonl", subjects)
    base = set(pick(items, "big", 250)) | set(pick(items, "s5", 5))
    pr = (base - set(pick(items, "s5", 5))) | set(pick(items, "big", 2, skip=250))
    _team(repo, cli, subjects, base, pr, "")

    assert cli("run").code == 0
    res = _results(repo / "evalgate-out" / "results.json")
    assert res["verdict"] == "inconclusive"
    assert res["comparison"]["slices"]["overall"]["status"] == "ok"
    (entry,) = res["comparison"]["inconclusive"]
    assert (entry["slice"], entry["why"], entry["n"], entry["min_n"]) == ("subject:s5", "too_small", 5, 20)
    (reason,) = res["reasons"]
    assert "under gate.min_n (20)" in reason and "or a floor (gate.min_accuracy)" in reason
    comment = render_comment(res)
    assert "subject:s5" in comment and "### Slices the gate could not decide" in comment
    assert "closest to the line" not in comment
