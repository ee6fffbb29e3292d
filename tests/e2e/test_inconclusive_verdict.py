"""The `inconclusive` verdict end to end (issue 25 §1; docs/gate.md, "Verdict").

A team's own suite, 35 items per subject, gated through the real `evalgate run` with a tiny real
model whose answers are set item by item (tests/helpers/answer_key.py): the checkpoint that loses
geography (65.7% -> 40.0%) is neither a pass nor a fail but inconclusive, everywhere a verdict is
shown; a 5-item suite that fell 40 points with nothing gated is inconclusive too; a floor below
which a low-power slice fell fails it, one that held decides nothing; a run without a baseline is
what it was. Each run takes a few seconds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import answer_key
from helpers.answer_key import pick

from evalgate.gate.results import validate_results
from evalgate.report.comment import render_comment

SUBJECTS = {"geography": 35, "history": 35, "science": 35, "literature": 35}


def results(root: Path) -> dict:
    doc = json.loads((root / "evalgate-out" / "results.json").read_text(encoding="utf-8"))
    validate_results(doc, "results.json")
    return doc


def report(root: Path) -> str:
    return (root / "evalgate-out" / "REPORT.md").read_text(encoding="utf-8")


def team_repo(root: Path, cli, subjects: dict[str, int], base_right, pr_right, gate: str = "") -> list[dict]:
    """A repository with one multiple-choice suite, its sealed items, a baseline of the `base`
    checkpoint and the `pr` checkpoint in place, as a team has it after `init`."""
    items = answer_key.write_items(root / "team" / "items.jsonl", subjects)
    answer_key.write_plugin(root)
    (root / "evalgate.yml").write_text(answer_key.config(extra_gate=gate), encoding="utf-8")
    answer_key.write_checkpoint(root / "ckpt" / "base", items, base_right(items))
    answer_key.write_checkpoint(root / "ckpt" / "pr", items, pr_right(items))
    assert cli("probes", "seal").code == 0
    got = cli("baseline", "update", "--name", "team", "--checkpoint", "ckpt/base")
    assert got.code == 0, got.err
    return items


def geography_lost(items: list[dict]) -> tuple[set[str], set[str]]:
    """(baseline right, PR right): geography 23/35 -> 14/35 (12 lost, 3 gained); the other
    subjects 25/35 with 2 items flipping each way."""
    base = set()
    for subject in SUBJECTS:
        base |= set(pick(items, subject, 23 if subject == "geography" else 25))
    geo = pick(items, "geography", 35)
    pr = (base - set(geo[:12])) | set(geo[23:26])
    for subject in ("history", "science", "literature"):
        ids = pick(items, subject, 35)
        pr = (pr - set(ids[:2])) | set(ids[25:27])
    return base, pr


@pytest.fixture
def geography(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    team_repo(
        tmp_path,
        cli,
        SUBJECTS,
        lambda items: geography_lost(items)[0],
        lambda items: geography_lost(items)[1],
    )
    return tmp_path


@pytest.mark.slow
def test_a_subject_that_fell_25_points_on_35_items_is_inconclusive_everywhere(geography, cli):
    got = cli("run")
    assert got.code == 0, got.err  # inconclusive exits 0 by default (gate.inconclusive: pass)
    res = results(geography)
    assert res["verdict"] == "inconclusive"
    row = res["comparison"]["slices"]["subject:geography"]
    assert (row["baseline_accuracy"], row["accuracy"], row["n_shared"]) == (pytest.approx(23 / 35), 0.4, 35)
    assert row["status"] == "inconclusive" and row["underpowered"] and row["p_adjusted"] >= 0.05
    entry = next(e for e in res["comparison"]["inconclusive"] if e["slice"] == "subject:geography")
    assert entry["why"] == "low_power" and entry["n"] == 35
    assert entry["drop"] == pytest.approx(9 / 35) and entry["mde"] > 0.10
    assert entry["items_needed"] > 35  # what would make it decidable
    mde = f"{100 * entry['mde']:.1f}"

    # REPORT.md (the job summary): a warning headline naming the slice, its drop, n and MDE
    head = report(geography).split("\n\n", 1)[0]
    assert head.startswith("## ⚠️ evalgate: inconclusive")
    assert f"subject:geography (-25.7 pts on 35, MDE {mde} pts)" in head
    assert "no gated slice regressed" not in report(geography)

    # the PR comment: the slice with its drop, n and MDE, and what would make it decidable
    comment = render_comment(res)
    assert comment.startswith("## ⚠️ evalgate: inconclusive")
    assert "subject:geography: accuracy 65.7% → 40.0% (-25.7 points) on 35 shared probes" in comment
    assert f"MDE {mde} points" in comment
    assert f"about {entry['items_needed']:,} shared probes" in comment
    assert "a floor (gate.min\\_accuracy)" in comment and "rule: wilson" in comment
    assert "No slice regressed" not in comment and "closest to the line" not in comment
    assert "### Slices the gate could not decide" in comment
    assert comment.rstrip().endswith("verdict=inconclusive -->")

    # the badge is yellow, the console says so, and the Action's annotation is a warning
    badge = json.loads((geography / "evalgate-out" / "badge.json").read_text(encoding="utf-8"))
    assert badge["color"] == "yellow" and badge["message"].startswith("inconclusive")
    assert "#dfb317" in (geography / "evalgate-out" / "badge.svg").read_text(encoding="utf-8")
    assert (
        "verdict INCONCLUSIVE (overall 63.6% (baseline 70.0%) on the 140 probes both runs scored)" in got.out
    )
    github = cli("run", "--format", "github")
    assert github.code == 0
    warnings = [
        ln for ln in github.out.splitlines() if ln.startswith("::warning title=evalgate inconclusive::")
    ]
    assert any("subject:geography" in ln for ln in warnings)
    assert not re.search(r"::(notice|error) title=evalgate (pass|fail)", github.out)
    as_json = json.loads(cli("run", "--format", "json").out)
    assert as_json["verdict"] == "inconclusive"
    assert as_json["comment_slices"]["kind"] == "inconclusive"
    assert "subject:geography" in as_json["comment_slices"]["slices"]

    # exit 1 when asked: the flag (the Action's fail-on-inconclusive), or the configuration's
    assert cli("run", "--fail-on-inconclusive").code == 1
    assert results(geography)["verdict"] == "inconclusive"  # the verdict itself is the same
    cfg = geography / "evalgate.yml"
    cfg.write_text(cfg.read_text(encoding="utf-8") + "gate:\n  inconclusive: fail\n", encoding="utf-8")
    assert cli("run").code == 2  # loosening or tightening the gate in a PR is a gate change
    assert cli("run", "--approve-gate-changes").code == 1

    # without a baseline a run is what it was: a scoring run that passes and says nothing was gated
    assert cli("run", "--baseline", "none", "--approve-gate-changes").code == 0
    assert results(geography)["verdict"] == "pass"
    assert report(geography).startswith(
        "## ✅ evalgate: pass — overall 63.6%; no baseline, nothing was gated"
    )


@pytest.mark.slow
def test_a_five_item_suite_that_fell_40_points_with_nothing_gated_is_inconclusive(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    ids = lambda items: [it["id"] for it in items]  # noqa: E731
    team_repo(tmp_path, cli, {"geography": 3, "history": 2}, lambda it: ids(it)[:4], lambda it: ids(it)[:2])
    got = cli("run")
    assert got.code == 0, got.err
    res = results(tmp_path)
    assert res["verdict"] == "inconclusive"
    assert all(not r["gated"] for r in res["comparison"]["slices"].values())
    entry, *dropped = res["comparison"]["inconclusive"]
    assert entry["why"] == "nothing_gated" and entry["n"] == 5 and entry["drop"] == pytest.approx(0.4)
    # and each slice that dropped beyond its tolerance untested is named (geography 3/3 -> 2/3)
    assert {(e["slice"], e["why"]) for e in dropped} >= {("overall", "too_small")}
    assert (entry["min_n"], entry["largest_slice"], entry["largest_n"]) == (20, "overall", 5)
    head = report(tmp_path).split("\n\n", 1)[0]
    assert head.startswith("## ⚠️ evalgate: inconclusive — could not decide: nothing was gated")
    assert "overall 40.0% (baseline 80.0%) on the 5 probes both runs scored" in head
    comment = render_comment(res)
    assert "nothing was gated" in comment and "accuracy moved -40.0 points" in comment
    assert "no gated slice regressed" not in comment.lower() and "closest to the line" not in comment
    # a floor is a check: with one, the suite is gated by it, and 40% is below 60%
    cfg = tmp_path / "evalgate.yml"
    cfg.write_text(cfg.read_text(encoding="utf-8") + "gate:\n  min_accuracy: 0.6\n", encoding="utf-8")
    assert cli("run", "--approve-gate-changes").code == 1
    assert results(tmp_path)["verdict"] == "fail"


@pytest.mark.slow
@pytest.mark.parametrize(("floor", "code", "verdict"), [(0.35, 0, "inconclusive"), (0.5, 1, "fail")])
def test_a_broken_floor_fails_a_low_power_slice_and_a_held_one_decides_nothing(
    tmp_path, monkeypatch, cli, floor, code, verdict
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    floors = f"min_accuracy: {{overall: 0.5, 'subject:geography': {floor}}}"
    team_repo(
        tmp_path,
        cli,
        SUBJECTS,
        lambda items: geography_lost(items)[0],
        lambda items: geography_lost(items)[1],
        gate=floors,
    )
    assert cli("run").code == code
    res = results(tmp_path)
    assert res["verdict"] == verdict
    # a floor held does not decide the drop the test could not (docs/gate.md, "Verdict")
    assert res["comparison"]["slices"]["subject:geography"]["status"] == "inconclusive"
    entry = {e["slice"]: e for e in res["comparison"]["inconclusive"]}["subject:geography"]
    assert entry["why"] == "low_power" and entry["floor"] == floor
    assert res["floors"]["subject:geography"]["accuracy"] == 0.4
    if verdict == "inconclusive":
        assert any("its floor gate.min_accuracy held (≥ 35.0%)" in r for r in res["reasons"])
    # the same run without the floors: the test alone cannot decide the slice
    cfg = tmp_path / "evalgate.yml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace(floors, "min_n: 20"), encoding="utf-8")
    assert cli("run", "--approve-gate-changes").code == 0
    assert results(tmp_path)["verdict"] == "inconclusive"
