"""A drift check that cannot pair the anchor is never silently off (docs/gate.md "Drift").

Attack (attack3): a PR changes one byte of the template and re-seals; under the label
evalgate:update-baseline the bot writes the new baseline on that template, so nothing differs from
the baseline, while the anchor, measured on the old template, is `not_comparable`. The drift check
used to be skipped: a labelled update past gate.drift_tolerance passed with the update label alone
and every later run was judged on the baseline alone. Defence: with the drift check on, an anchor
that cannot be paired refuses a baseline-update run (exit 2) unless a maintainer approves the head
(evalgate:approve-gate-change), and makes every other run `inconclusive` with a reason naming what
restores the check (`evalgate baseline anchor`). Played with the real CLI, as the label flow runs
it: `baseline update` (the bot's, update-baseline-apply.yml) then `run --verify-baseline`
(eval-gate.yml under the label).
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
    got, _ = labelled_update(repo, cli, tmp_path, "out")
    assert got.code == 2 and "drifts beyond gate.drift_tolerance" in got.err, (got.code, got.err[-800:])


def change_template(repo, cli):
    template = repo / "data" / "eval" / "probe_prompt.txt"
    template.write_text(template.read_text(encoding="utf-8") + " ", encoding="utf-8")
    got = cli("probes", "seal")
    assert got.code == 0, got.err


def test_a_changed_template_does_not_switch_the_drift_check_off(tmp_path, monkeypatch, cli):
    from helpers.hostile_repo import make_repo

    repo = make_repo(tmp_path, monkeypatch)
    setup(repo, cli)
    change_template(repo, cli)
    got, results = labelled_update(repo, cli, tmp_path, "out")
    drift = results.get("drift") or {}
    assert got.code == 2, ("drifted update passed with the update label alone", got.code, drift.get("status"))
    assert "cannot be checked against gate.drift_tolerance" in got.err, got.err[-800:]
    assert "evalgate:approve-gate-change" in got.err, got.err[-800:]


def test_an_unmeasured_drift_makes_every_later_run_inconclusive(tmp_path, monkeypatch, cli):
    from helpers.hostile_repo import make_repo

    repo = make_repo(tmp_path, monkeypatch)
    setup(repo, cli)
    change_template(repo, cli)
    # the maintainer approved the update unmeasured: the run says so and is not a pass
    got, results = labelled_update(repo, cli, tmp_path, "approved")
    assert got.code == 2
    out = tmp_path / "approved2"
    got = cli(
        "run",
        "--verify-baseline",
        "--approve-gate-changes",
        "--checkpoint",
        "data/checkpoints/demo-regressed",
        "--out",
        out,
    )
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["drift"]["status"] == "not_comparable" and results["drift"]["approved"] is True
    assert results["verdict"] == "inconclusive", results["verdict"]
    # once merged, a plain PR run on the new baseline cannot be paired with the old anchor
    out = tmp_path / "later"
    got = cli("run", "--checkpoint", "data/checkpoints/demo-regressed", "--out", out)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["verdict"] == "inconclusive", (got.code, results["verdict"], results.get("drift"))
    why = " ".join(results["reasons"])
    assert "drift since the anchor" in why and "could not be measured" in why, why
    assert "evalgate baseline anchor --name demo" in why, why
    from evalgate.report.comment import render_comment

    assert "could not be measured" in render_comment(results)
