"""Hostile PR: the baseline's history rewritten, or a first history with an anchor of its own
choosing (issue 25 §3).

The history (baselines/history/NAME.jsonl) and the anchor (NAME.anchor.json) are gate inputs the
eval-gate workflow restores from the base commit like the baseline. Under the label
evalgate:update-baseline the PR's copies are taken only when its history is the base's plus the one
line `evalgate baseline update` writes, and its anchor the base's (the base's evalgate says:
github/history_scope.py); a new history must anchor the base's own baseline. Each case runs the
restore step's real script with bash, from eval-gate.yml and from the template `evalgate init`
writes, in a throwaway git repository whose HEAD is the PR.
"""

from __future__ import annotations

import itertools
import json
import shutil

import pytest
from helpers.history_restore import (
    ANCHOR,
    HISTORY,
    WORKFLOWS,
    baseline,
    gate_workflow_doc,
    restore,
)

from evalgate.gate import history as hist


def chain(*files: bytes) -> bytes:
    data = hist.appended(hist.History(), [hist.anchor_record("m", files[0])])
    for old, new in itertools.pairwise(files):
        record = hist.update_record("m", old, json.loads(old), new)
        data = hist.appended(hist.parse_history(data, "h"), [record])
    return data


B0, B1, B2 = baseline(0.90), baseline(0.88), baseline(0.86)


@pytest.fixture(params=WORKFLOWS)
def workflow(request) -> dict:
    return gate_workflow_doc(request.param)


BASE = {"baselines/m.json": B1, HISTORY: chain(B0, B1), ANCHOR: B0}


def test_a_labelled_update_that_appends_its_line_brings_its_history(tmp_path, workflow):
    pr = {"baselines/m.json": B2, HISTORY: chain(B0, B1, B2)}
    work, replaced = restore(tmp_path, workflow, BASE, pr, approved=True)
    assert (work / HISTORY).read_bytes() == chain(B0, B1, B2)
    assert (work / "baselines/m.json").read_bytes() == B2
    assert replaced == []


def test_a_labelled_update_that_rewrites_the_history_gets_the_bases(tmp_path, workflow):
    """Attack: under the label, the PR rebuilds the whole chain from a worse anchor (every hash
    consistent), so drift is measured from a model that never was."""
    forged = chain(baseline(0.5), B1, B2)
    pr = {"baselines/m.json": B2, HISTORY: forged, ANCHOR: baseline(0.5)}
    work, replaced = restore(tmp_path, workflow, BASE, pr, approved=True)
    assert (work / HISTORY).read_bytes() == BASE[HISTORY]
    assert (work / ANCHOR).read_bytes() == B0
    assert HISTORY in replaced and ANCHOR in replaced  # gate changes: refused unless approved


def test_a_first_history_must_anchor_the_bases_baseline(tmp_path, workflow):
    """Attack: the base has no history yet; the PR brings one whose anchor it chose."""
    base = {"baselines/m.json": B1}
    mine = baseline(0.3)
    pr = {"baselines/m.json": B2, HISTORY: chain(mine, B2), ANCHOR: mine}
    work, replaced = restore(tmp_path, workflow, base, pr, approved=True)
    assert not (work / HISTORY).exists() and not (work / ANCHOR).exists()
    assert HISTORY in replaced
    # the honest first history, anchored at the base's baseline, is taken
    shutil.rmtree(tmp_path / "work")
    shutil.rmtree(tmp_path / "runner")
    pr = {"baselines/m.json": B2, HISTORY: chain(B1, B2), ANCHOR: B1}
    work, replaced = restore(tmp_path, workflow, base, pr, approved=True)
    assert (work / HISTORY).read_bytes() == chain(B1, B2) and (work / ANCHOR).read_bytes() == B1
    assert replaced == []


def test_without_the_label_the_history_is_the_bases(tmp_path, workflow):
    """Attack: no label; the PR appends a line (and swaps the anchor) to move its own drift gate."""
    pr = {HISTORY: chain(B0, B1, B2), ANCHOR: B1}
    work, replaced = restore(tmp_path, workflow, BASE, pr, approved=False)
    assert (work / HISTORY).read_bytes() == BASE[HISTORY] and (work / ANCHOR).read_bytes() == B0
    assert replaced == [HISTORY, ANCHOR]


def test_a_journal_planted_beside_the_baseline_is_never_rolled_forward(tmp_path, monkeypatch, cli):
    """Attack: the PR commits `baselines/.evalgate-journal.json` and a staged
    `.demo.json.evalgate-new` holding its own baseline, hoping the gate "finishes" the update and
    gates against it. A reader never finishes an update in the baseline folder: it refuses."""
    from helpers.hostile_repo import make_repo

    repo = make_repo(tmp_path, monkeypatch)
    folder = repo / "baselines"
    before = (folder / "demo.json").read_bytes()
    (folder / ".demo.json.evalgate-new").write_bytes(b'{"forged": true}\n')
    entry = {"target": "demo.json", "staged": ".demo.json.evalgate-new"}
    (folder / ".evalgate-journal.json").write_text(json.dumps({"replace": [entry]}), encoding="utf-8")
    got = cli("run", "--out", tmp_path / "out")
    assert got.code == 2 and "an unfinished baseline update" in got.err
    assert (folder / "demo.json").read_bytes() == before
    assert (folder / ".demo.json.evalgate-new").exists()  # nothing was followed
