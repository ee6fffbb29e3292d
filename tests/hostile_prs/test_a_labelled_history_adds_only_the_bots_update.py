"""Hostile PR: under evalgate:update-baseline, a baseline history other than the bot's one update.

The label approves the update `evalgate baseline update` writes, nothing more: the PR's history is
taken only when it is the base's bytes plus exactly that line (the first time, the anchor line at
the base's baseline before it) and the anchor file is unchanged (github/history_scope.py, run by
the restore step with the base's evalgate, failing closed); a malformed line is a located refusal,
never a crash. Each case runs the restore step's real script (eval-gate.yml and the `init`
template) in a throwaway git repository whose HEAD is the PR, or the real CLI on a copy of the
demo repository.
"""

from __future__ import annotations

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


def extend(data: bytes, *records: dict) -> bytes:
    return hist.appended(hist.parse_history(data, "h") if data else hist.History(), list(records))


def update(old: bytes, new: bytes) -> dict:
    return hist.update_record("m", old, json.loads(old), new)


B0, B1 = baseline(0.90), baseline(0.88)
BASE_HISTORY = extend(extend(b"", hist.anchor_record("m", B0)), update(B0, B1))
BASE = {"baselines/m.json": B1, HISTORY: BASE_HISTORY, ANCHOR: B0}


@pytest.fixture(params=WORKFLOWS)
def workflow(request) -> dict:
    return gate_workflow_doc(request.param)


def test_a_labelled_pr_cannot_anchor_drift_at_a_baseline_the_base_never_had(tmp_path, workflow):
    """Attack: under evalgate:update-baseline the PR's history is the base's with lines added:
    update(B1 -> X) and anchor(X), where X holds the regressed checkpoint's own numbers and was
    never a baseline of the default branch; the bot's `baseline update` then appended
    update(X -> NEW). Every line chains, the base's bytes are a prefix, the anchor file is the one
    the last anchor line names: history_scope took it, and the drift check of the labelled
    update compared the checkpoint with its own numbers (drift 0), so an update past
    gate.drift_tolerance passed without evalgate:approve-gate-change (docs/gate.md "Drift").
    Defence: only the bot's one update line is taken; the anchor stays the base's."""
    x = baseline(0.50, 1)
    new = baseline(0.50, 2)
    forged = extend(BASE_HISTORY, update(B1, x), hist.anchor_record("m", x), update(x, new))
    pr = {"baselines/m.json": new, HISTORY: forged, ANCHOR: x}
    work, replaced = restore(tmp_path, workflow, BASE, pr, approved=True)
    # The anchor the gate measures drift from must be one the default branch had.
    assert (work / ANCHOR).read_bytes() in (B0, B1), "the PR chose its own drift anchor"
    assert HISTORY in replaced and ANCHOR in replaced, "the PR's change is a gate change"


def test_a_labelled_pr_cannot_spend_the_drift_alpha_with_padding_lines(tmp_path, workflow):
    """Attack: same label, anchor untouched; the PR appends 60 update lines B1 -> B1 (each chained,
    each "replacing the baseline the line before left") before the bot's own line. The look
    became 63: alpha_63 = 0.05 * 6 / (pi^2 * 63^2) ~ 7.7e-6, so the drift check could no longer
    fail on any realistic slice. The base's bytes were a prefix, so history_scope took it.
    Defence: the bot's update adds one line; any other added line is a gate change."""
    new = baseline(0.80)
    padded = BASE_HISTORY
    for _ in range(60):
        padded = extend(padded, update(B1, B1))
    padded = extend(padded, update(B1, new))
    assert hist.parse_history(padded, "h").updates_since_anchor == 62
    pr = {"baselines/m.json": new, HISTORY: padded, ANCHOR: B0}
    work, replaced = restore(tmp_path, workflow, BASE, pr, approved=True)
    taken = hist.parse_history((work / HISTORY).read_bytes(), "h")
    assert taken.updates_since_anchor <= 2, f"look {taken.updates_since_anchor + 1} chosen by the PR"
    assert HISTORY in replaced, "the PR's change is a gate change"


@pytest.mark.parametrize(
    "scope",
    [
        "echo 'Traceback (most recent call last):' >&2; exit 1",
        "echo history-path=baselines/history/m.jsonl; exit 3",
        "echo history-path=baselines/history/m.jsonl; echo 'history-path=a b'; exit 0",
        "exit 2",
    ],
    ids=["crash", "bug-exit", "odd-line", "refused"],
)
def test_a_history_that_crashes_history_scope_is_not_taken_unchecked(tmp_path, workflow, scope):
    """Attack: a PR history that makes history_scope crash (it once did on `{"event": []}`), exit
    non-zero or print a line the step does not expect: the restore step's `|| true` swallowed it,
    no `history-path=` came back, and the PR's history and anchor were taken by the plain baseline
    rule, unchecked. Defence: the step fails closed: when history_scope does not answer cleanly
    the label takes none of the PR's files, and each change is a gate change."""
    bad = BASE_HISTORY + b'{"event":[]}\n'
    pr = {"baselines/m.json": baseline(0.5), HISTORY: bad, ANCHOR: baseline(0.5)}
    work, replaced = restore(tmp_path, workflow, BASE, pr, approved=True, scope=scope)
    assert (work / HISTORY).read_bytes() == BASE_HISTORY, "history taken without history_scope's check"
    assert (work / ANCHOR).read_bytes() == B0
    assert (work / "baselines/m.json").read_bytes() == B1
    assert {HISTORY, ANCHOR, "baselines/m.json"} <= set(replaced), "the PR's change is a gate change"


def test_a_malformed_pr_history_is_not_taken_under_the_label(tmp_path, workflow):
    """Attack: the same broken line with history_scope itself running: it must refuse the history
    (a located refusal, not a crash), and the base's copies are gated."""
    bad = BASE_HISTORY + b'{"event":[]}\n'
    pr = {"baselines/m.json": baseline(0.5), HISTORY: bad, ANCHOR: baseline(0.5)}
    work, replaced = restore(tmp_path, workflow, BASE, pr, approved=True)
    assert (work / HISTORY).read_bytes() == BASE_HISTORY
    assert (work / ANCHOR).read_bytes() == B0
    assert HISTORY in replaced and ANCHOR in replaced


@pytest.mark.parametrize(
    "line",
    [
        b'{"event":[]}\n',
        b'{"event":{}}\n',
        b"[1]\n",
        b"1e400\n",
        b'{"event":"anchor","name":NaN,"v":1,"seq":0,"prev":null,"anchor_sha256":"a","baseline_sha256":"a"}\n',
        b'{"anchor_sha256":"'
        + b"a" * 64
        + b'","baseline_sha256":"'
        + b"a" * 64
        + b'","event":"anchor","name":"m","prev":[],"seq":true,"v":1}\n',
        b'{"anchor_sha256":7,"baseline_sha256":7,"event":"anchor","name":"m","prev":null,"seq":0,"v":1.0}\n',
    ],
)
def test_a_malformed_history_line_is_refused_not_a_crash(tmp_path, monkeypatch, cli, line):
    """Attack: a history line of the wrong structure (`{"event": []}`, NaN, a bool for an int, a
    number for a hash) made parse_history raise TypeError/ValueError, so `validate` and `run`
    crashed (exit 3). Defence: every field's type is checked and any such error becomes a refusal
    naming file and line (exit 2): docs/gate.md "Drift"."""
    from helpers.hostile_repo import make_repo

    repo = make_repo(tmp_path, monkeypatch)
    (repo / "baselines" / "history").mkdir(exist_ok=True)
    (repo / "baselines" / "history" / "demo.jsonl").write_bytes(line)
    anchor = (repo / "baselines" / "demo.json").read_bytes()
    (repo / "baselines" / "history" / "demo.anchor.json").write_bytes(anchor)
    got = cli("validate")
    assert got.code == 2, (got.code, got.err[-600:])
    assert "demo.jsonl:1" in got.err


NEW = baseline(0.86)


@pytest.mark.parametrize(
    "variant",
    [
        "anchor-after-the-bots-line",
        "one-padding-line",
        "anchor-file-swapped",
        "history-changed-baseline-not",
        "first-history-with-padding",
        "first-history-anchor-file-not-the-bases",
    ],
)
def test_a_labelled_history_other_than_the_bots_update_is_a_gate_change(tmp_path, workflow, variant):
    """Attack: variants of the two above: under the label the PR's history or anchor differs, in
    any way, from what `evalgate baseline update` writes when it replaces the base's baseline by
    the PR's (one update line; the first time, the anchor line at the base's baseline before it).
    Defence: history_scope recomputes that line with the command's own function and takes the
    PR's files only on a byte-for-byte match; anything else is the base's copy and a gate change."""
    base, pr_anchor = BASE, B0
    if variant == "anchor-after-the-bots-line":
        history = extend(BASE_HISTORY, update(B1, NEW), hist.anchor_record("m", NEW))
        pr_anchor = NEW
    elif variant == "one-padding-line":
        history = extend(BASE_HISTORY, update(B1, B1), update(B1, NEW))
    elif variant == "anchor-file-swapped":
        history, pr_anchor = extend(BASE_HISTORY, update(B1, NEW)), B1
    elif variant == "history-changed-baseline-not":
        history = extend(BASE_HISTORY, update(B1, NEW), update(NEW, B1))
        pr = {HISTORY: history, ANCHOR: B0}
        work, replaced = restore(tmp_path, workflow, base, pr, approved=True)
        assert (work / HISTORY).read_bytes() == BASE_HISTORY and HISTORY in replaced
        return
    else:
        base = {"baselines/m.json": B1}
        history = extend(b"", hist.anchor_record("m", B1), update(B1, NEW))
        if variant == "first-history-with-padding":
            history, pr_anchor = extend(b"", hist.anchor_record("m", B1), update(B1, B1), update(B1, NEW)), B1
        else:
            pr_anchor = B0
    pr = {"baselines/m.json": NEW, HISTORY: history, ANCHOR: pr_anchor}
    work, replaced = restore(tmp_path, workflow, base, pr, approved=True)
    if HISTORY in base:
        assert (work / HISTORY).read_bytes() == base[HISTORY] and (work / ANCHOR).read_bytes() == B0
    else:
        assert not (work / HISTORY).exists() and not (work / ANCHOR).exists()
    assert HISTORY in replaced, "the PR's history change must be a gate change"
    assert (work / "baselines/m.json").read_bytes() == NEW  # the label still takes the baseline


def test_the_bots_own_update_is_taken_under_the_label(tmp_path, workflow):
    """The defence keeps the label's purpose: the exact history `baseline update` writes (and, the
    first time, its anchor at the base's baseline) is the PR's."""
    history = extend(BASE_HISTORY, update(B1, NEW))
    work, replaced = restore(
        tmp_path, workflow, BASE, {"baselines/m.json": NEW, HISTORY: history}, approved=True
    )
    assert (work / HISTORY).read_bytes() == history and (work / ANCHOR).read_bytes() == B0
    assert replaced == []
    shutil.rmtree(tmp_path / "work")
    shutil.rmtree(tmp_path / "runner")
    first = extend(b"", hist.anchor_record("m", B1), update(B1, NEW))
    pr = {"baselines/m.json": NEW, HISTORY: first, ANCHOR: B1}
    work, replaced = restore(tmp_path, workflow, {"baselines/m.json": B1}, pr, approved=True)
    assert (work / HISTORY).read_bytes() == first and (work / ANCHOR).read_bytes() == B1
    assert replaced == []
