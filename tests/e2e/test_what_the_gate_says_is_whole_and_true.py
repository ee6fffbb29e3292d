"""The gate's words are whole and true (issue 25, the outside statistics review's minor findings).

init names the real reason a slice gets no floor; a reason in the PR comment is not cut
mid-phrase; a run that moved nothing does not say "-0.0 points"; and `baseline update
--from-results` says so when the results it makes the baseline drifted beyond
`gate.drift_tolerance` since the anchor. Real commands on real files (tests/helpers/answer_key.py's
tiny model), or the real gate functions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import answer_key
from helpers.answer_key import pick
from helpers.factories import make_entry, make_results, make_rules

from evalgate.commands import init
from evalgate.commands.init import floors_text
from evalgate.gate import power
from evalgate.gate.baseline import baseline_from_results
from evalgate.gate.compare import compare, verdict
from evalgate.report.comment import render_comment


def _init_floors(n: int, correct: int) -> str:
    """init's floors block for one low-power slice of `n` four-way items, `correct` right."""
    counts = [
        power.SliceCounts(
            key="subject:s", n=n, gated=False, tolerance=0.02, min_n=20, correct=correct, chance=0.25
        )
    ]
    rules = make_rules()
    seen = power.power_table(counts, rules, reference="the first baseline", needed=False)
    floors = power.floors(seen, counts, rules.z)
    for f in floors.values():
        f["why"] = "not gated"
        if f["floor"] is None:
            f["why_none"] = init._why_no_floor(f, rules.z)
    return floors_text(floors, rules.mde_max)


def test_init_says_a_perfect_five_item_slice_is_too_small_for_a_floor_not_near_guessing():
    text = _init_floors(5, 5)
    assert "too near guessing" not in text and "too close to guessing" not in text
    assert '"subject:s": none: too few items: on 5 items a guesser reaches' in text
    # a baseline that is itself within a guesser's reach is still said to be
    assert "too near guessing" in _init_floors(5, 1)


def test_nothing_gated_with_nothing_moved_says_plus_zero_points():
    entries = [make_entry(f"p-{i:02d}", i % 2 == 0, language="en") for i in range(10)]
    base = baseline_from_results(make_results(entries), "demo", {"git_commit": "a" * 40, "pr_number": 7})
    got, reasons = verdict(compare(make_results(entries), base, make_rules(), "baselines/demo.json"))
    assert got == "inconclusive"
    assert "accuracy moved +0.0 points" in reasons[0] and "-0.0" not in reasons[0]


GATE = "drift_tolerance: 0.03\nmin_accuracy: {'subject:a': 0.75}"


@pytest.fixture
def repo(tmp_path, monkeypatch, cli):
    """A team's suite (a 35, b 35, c 35) with its first baseline, a drift tolerance of 3 points and
    a floor of 75% on a."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    subjects = {"a": 35, "b": 35, "c": 35}
    items = answer_key.write_items(tmp_path / "team" / "items.jsonl", subjects)
    answer_key.write_plugin(tmp_path)
    (tmp_path / "evalgate.yml").write_text(answer_key.config(extra_gate=GATE), encoding="utf-8")
    base = set(pick(items, "a", 32)) | set(pick(items, "b", 25)) | set(pick(items, "c", 25))
    answer_key.write_checkpoint(tmp_path / "ckpt" / "base", items, base)
    # a loses 4 of 35 (undecidable, with a long reason), b gains 2: within the tolerance overall
    pr = (base - set(pick(items, "a", 4))) | set(pick(items, "b", 2, skip=25))
    answer_key.write_checkpoint(tmp_path / "ckpt" / "pr", items, pr)
    # every subject loses 12: far beyond the drift tolerance
    lost = base - {i for s in subjects for i in pick(items, s, 12)}
    answer_key.write_checkpoint(tmp_path / "ckpt" / "lost", items, lost)
    assert cli("probes", "seal").code == 0
    got = cli("baseline", "update", "--name", "team", "--checkpoint", "ckpt/base")
    assert got.code == 0, got.err
    return tmp_path


@pytest.mark.slow
def test_a_long_reason_reads_whole_in_the_pr_comment(repo, cli):
    assert cli("run").code == 0
    res = json.loads((repo / "evalgate-out" / "results.json").read_text(encoding="utf-8"))
    (reason,) = [r for r in res["reasons"] if r.startswith("subject:a")]
    assert len(reason) > 300  # what the comment used to cut at
    comment = render_comment(res)
    tail = reason.rsplit("; ", 1)[1]  # "decidable with about N shared probes or a floor ..."
    assert tail.replace("_", "\\_") in comment
    assert "…" not in comment.split("### ", 1)[0]


@pytest.mark.slow
def test_baseline_update_from_results_warns_of_a_drift_beyond_the_tolerance(repo, cli):
    """`baseline update --from-results` wrote a baseline past the drift tolerance with exit 0 and
    not a word: it now names the drifting slices and the approval that accepts them."""
    got = cli("run", "--checkpoint", "ckpt/lost")
    assert got.code == 1, got.err
    res = json.loads((repo / "evalgate-out" / "results.json").read_text(encoding="utf-8"))
    assert res["drift"]["status"] == "fail"
    Path("lost.json").write_text(json.dumps(res), encoding="utf-8")
    got = cli("baseline", "update", "--name", "team", "--from-results", "lost.json")
    assert got.code == 0, got.err  # written, as before: the refusal is run --verify-baseline's
    assert "drifted beyond gate.drift_tolerance since the anchor" in got.err
    assert "subject:a" in got.err and "overall" in got.err
    assert "evalgate:approve-gate-change" in got.err and "--verify-baseline" in got.err
    # an update within the tolerance says nothing of the kind
    assert cli("run", "--checkpoint", "ckpt/base").code == 0
    got = cli("baseline", "update", "--name", "team", "--from-results", "evalgate-out/results.json")
    assert got.code == 0 and "drift" not in got.err


@pytest.mark.slow
def test_baseline_update_from_results_warns_of_a_drift_it_cannot_decide(repo, cli):
    """A baseline update whose drift since the anchor the test cannot decide (a loses 4 of 35,
    beyond the 3-point drift tolerance on too few items) was written without a word, as if it had
    not drifted: it now says the drift may be there and names the slice."""
    got = cli("run", "--checkpoint", "ckpt/pr")
    res = json.loads((repo / "evalgate-out" / "results.json").read_text(encoding="utf-8"))
    assert res["drift"]["status"] == "inconclusive", got.err
    Path("pr.json").write_text(json.dumps(res), encoding="utf-8")
    got = cli("baseline", "update", "--name", "team", "--from-results", "pr.json")
    assert got.code == 0, got.err  # written, as before
    assert "may have drifted beyond gate.drift_tolerance since the anchor" in got.err
    assert "subject:a" in got.err and "cannot tell" in got.err
