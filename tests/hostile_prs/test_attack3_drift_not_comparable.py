"""Attack round (attack3): a labelled baseline update that drifted past gate.drift_tolerance,
made "not comparable" with the anchor by one changed byte of the template.

docs/gate.md "Drift": a labelled baseline-update run (`run --verify-baseline`) that drifted beyond
the drift tolerance is refused (exit 2) unless a maintainer also approves the head with
evalgate:approve-gate-change. docs/approval.md: a template change is approved "by updating the
baseline instead (label evalgate:update-baseline)". Together: the PR changes the template, the bot
writes the new baseline on that template (so no gate change against the PR's baseline), and the
anchor, measured on the old template, is `not_comparable`: the drift check is skipped, the update
passes with the update label alone, and every later run is "judged on the baseline alone" until
someone re-anchors. Played with the real CLI, as the label flow runs it: `baseline update` (the
bot's, update-baseline-apply.yml) then `run --verify-baseline` (eval-gate.yml under the label).
"""

from __future__ import annotations

import json

DRIFT = "  drift_tolerance: 0.0\n"


def setup(repo, cli):
    cfg = repo / "evalgate.yml"
    text = cfg.read_text(encoding="utf-8")
    cfg.write_text(text.replace("  tolerance: 0.02 ", DRIFT + "  tolerance: 0.02 ", 1), encoding="utf-8")
    (repo / "baselines" / "demo.json").unlink()
    got = cli("baseline", "update", "--name", "demo", "--checkpoint", "data/checkpoints/demo")
    assert got.code == 0, got.err
    got = cli("baseline", "anchor", "--name", "demo")  # the default branch's anchor
    assert got.code == 0, got.err


def labelled_update(repo, cli, tmp_path, name):
    got = cli("baseline", "update", "--name", "demo", "--checkpoint", "data/checkpoints/demo-regressed")
    assert got.code == 0, got.err
    out = tmp_path / name
    got = cli("run", "--verify-baseline", "--checkpoint", "data/checkpoints/demo-regressed", "--out", out)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return got, results


def test_control_the_drifted_update_is_refused(tmp_path, monkeypatch, cli):
    from helpers.hostile_repo import make_repo

    repo = make_repo(tmp_path, monkeypatch)
    setup(repo, cli)
    got, results = labelled_update(repo, cli, tmp_path, "out")
    assert got.code == 2 and "drifts beyond gate.drift_tolerance" in got.err, (got.code, got.err[-800:])


def test_a_changed_template_does_not_switch_the_drift_check_off(tmp_path, monkeypatch, cli):
    from helpers.hostile_repo import make_repo

    repo = make_repo(tmp_path, monkeypatch)
    setup(repo, cli)
    template = repo / "data" / "eval" / "probe_prompt.txt"
    template.write_text(template.read_text(encoding="utf-8") + " ", encoding="utf-8")
    got = cli("probes", "seal")
    assert got.code == 0, got.err
    got, results = labelled_update(repo, cli, tmp_path, "out")
    drift = results.get("drift") or {}
    assert got.code == 2, ("drifted update passed with the update label alone", got.code, drift.get("status"), drift.get("reason"))
