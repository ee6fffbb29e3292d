"""`evalgate power` and the gate say the same "low power" for the same slices (issue 25).

A team's suite (subject a 260 items, b 40, c 40, d 60; a tiny real model whose answers are set
item by item, tests/helpers/answer_key.py) with its first baseline. Before, `evalgate power` (and
init, validate) judged "low power" at a fixed 10% disagreement, so it called subject a (MDE 11.2
points at 10%) low power while `evalgate run` on a rerun of the baseline's checkpoint judged it at
gate.assumed_disagreement (5%: 9.4 points) and did not; and `power --against B` judged each slice
at its own (b + c) / n while the gate judges A against B at one background for the whole
comparison. Real commands on real files.
"""

from __future__ import annotations

import json

import pytest
from helpers import answer_key
from helpers.answer_key import pick

SUBJECTS = {"a": 260, "b": 40, "c": 40, "d": 60}


@pytest.fixture
def repo(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    items = answer_key.write_items(tmp_path / "team" / "items.jsonl", SUBJECTS)
    answer_key.write_plugin(tmp_path)
    (tmp_path / "evalgate.yml").write_text(answer_key.config(), encoding="utf-8")
    # 80% right in every subject
    base = {i for s, n in SUBJECTS.items() for i in pick(items, s, n * 4 // 5)}
    answer_key.write_checkpoint(tmp_path / "ckpt" / "base", items, base)
    # churn both ways, no drop, all of it in the small subjects: 6 right items of b, c and d each go
    # wrong and 6 wrong ones right; subject a moves not at all (its own disagreement 0%), yet the
    # gate judges every slice at the comparison's background 2 * 18 / 400 = 9%
    churn = {i for s in "bcd" for i in pick(items, s, 6)}
    gained = {i for s in "bcd" for i in pick(items, s, 6, skip=SUBJECTS[s] * 4 // 5)}
    answer_key.write_checkpoint(tmp_path / "ckpt" / "other", items, (base - churn) | gained)
    assert cli("probes", "seal").code == 0
    got = cli("baseline", "update", "--name", "team", "--checkpoint", "ckpt/base")
    assert got.code == 0, got.err
    return tmp_path


def _gate(repo, cli, checkpoint: str) -> dict[str, dict]:
    got = cli("run", "--checkpoint", checkpoint)
    assert got.code == 0, got.err
    res = json.loads((repo / "evalgate-out" / "results.json").read_text(encoding="utf-8"))
    return {k: r for k, r in res["comparison"]["slices"].items() if r["gated"]}, res["comparison"]


def _power(cli, *args: str) -> tuple[dict[str, dict], dict]:
    got = cli("power", "--format", "json", *args)
    assert got.code == 0, got.err
    doc = json.loads(got.out)
    return {r["slice"]: r for r in doc["slices"] if r["gated"]}, doc


@pytest.mark.slow
def test_power_calls_low_power_exactly_the_slices_a_rerun_of_the_baseline_is_underpowered_on(repo, cli):
    gated, comparison = _gate(repo, cli, "ckpt/base")
    rows, doc = _power(cli)
    assert set(rows) == set(gated) and doc["level"] == comparison["mde_level"]
    underpowered = {k for k, r in gated.items() if r["underpowered"]}
    assert "subject:a" not in underpowered and "subject:b" in underpowered  # the case of the issue
    assert {k for k, r in rows.items() if r["low_power"]} == underpowered
    assert {k: r["mde"] for k, r in rows.items()} == {k: r["mde"] for k, r in gated.items()}
    assert doc["reference_disagreement"] == comparison["mde_disagreement"] == 0.05
    # the floors `evalgate power` suggests (init's rule) go to those slices only
    assert set(doc["suggested_floors"]) <= underpowered
    text = cli("power").out
    assert "at 5% disagreement" in text and "at 10% disagreement" not in text


@pytest.mark.slow
def test_power_against_a_checkpoint_judges_as_the_gate_judges_that_pair(repo, cli):
    gated, comparison = _gate(repo, cli, "ckpt/other")
    assert comparison["mde_disagreement"] == 0.09  # above the assumed 5%
    assert gated["subject:a"]["underpowered"]  # 260 items at 9%: an MDE above 10 points
    rows, doc = _power(cli, "--checkpoint", "ckpt/other", "--against", "ckpt/base")
    assert set(rows) == set(gated)
    assert rows["subject:a"]["b"] == rows["subject:a"]["c"] == 0  # measured per slice: no churn
    assert {k for k, r in rows.items() if r["low_power"]} == {
        k for k, r in gated.items() if r["underpowered"]
    }
    assert doc["reference_disagreement"] == comparison["mde_disagreement"]
    assert {k: r["mde"] for k, r in rows.items()} == {k: r["mde"] for k, r in gated.items()}
