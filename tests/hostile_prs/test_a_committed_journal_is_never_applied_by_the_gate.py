"""A PR's `.evalgate-journal.json` (the write-ahead journal of `probes import`/`deprecate`) with
staged `.NAME.evalgate-new` files: if the gate applied it, it would rename files the workflow had
just restored from the base (a baseline kept beside the manifest, or in a folder a link makes the
manifest's) or swap the weights scored for others than the ones merged, all without changing any
gate input's path in git. The gate never applies a journal: `run` refuses the set
(edges/journal.py `refuse_pending`; docs/security.md). Found by the fourth outside review.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.hostile_pr import REGRESSED, GitHubRepo, attackers_evalgate, git, swap_in_regressed

pytestmark = pytest.mark.slow

BASELINE_AT = "data/eval/baseline.json"  # beside data/eval/MANIFEST.json


@pytest.fixture(scope="module")
def regressed_baseline(tmp_path_factory, origin_template) -> bytes:
    """A baseline measured on the regressed checkpoint with the base's own rules (the attacker's
    evalgate in their clone: any tool would do)."""
    tree = tmp_path_factory.mktemp("regressed-baseline") / "tree"
    subprocess.run(["git", "clone", "-q", str(origin_template), str(tree)], check=True)
    run = attackers_evalgate(tree, "run", "--checkpoint", REGRESSED, "--baseline", "none", "--out", "out")
    assert run.returncode == 0, run.stderr
    made = attackers_evalgate(
        tree, "baseline", "update", "--from-results", "out/results.json", "--name", "demo"
    )
    assert made.returncode == 0, made.stderr
    return (tree / "baselines" / "demo.json").read_bytes()


def keep_the_baseline_beside_the_manifest(github_repo: GitHubRepo) -> None:
    """The maintainer's layout on main: `baseline: data/eval/baseline.json`."""

    def move(tree: Path) -> None:
        (tree / "baselines" / "demo.json").rename(tree / BASELINE_AT)
        cfg = tree / "evalgate.yml"
        text = cfg.read_text(encoding="utf-8")
        assert "baseline: baselines/demo.json" in text
        cfg.write_text(
            text.replace("baseline: baselines/demo.json", f"baseline: {BASELINE_AT}"), encoding="utf-8"
        )

    maria = github_repo.clone("maria-main")
    git("checkout", "-q", "main", cwd=maria)
    sha = github_repo.commit(maria, move, "Keep the baseline beside the manifest", "maria")
    git("push", "-q", "origin", "HEAD:refs/heads/main", cwd=maria)
    github_repo.base_sha = sha


def test_the_control_fails_with_the_baseline_beside_the_manifest(github_repo: GitHubRepo):
    """Control: with that layout the regressed checkpoint alone fails the job."""
    keep_the_baseline_beside_the_manifest(github_repo)
    job = github_repo.run_gate(github_repo.pull_request(swap_in_regressed))
    assert job.conclusion == "failure", job.explain()
    assert job.step("Gate").outputs.get("verdict") == "fail", job.explain()


def test_a_committed_journal_never_replaces_the_restored_baseline(
    github_repo: GitHubRepo, regressed_baseline
):
    keep_the_baseline_beside_the_manifest(github_repo)

    def attack(tree: Path) -> None:
        swap_in_regressed(tree)
        folder = tree / "data" / "eval"
        (folder / ".baseline.json.evalgate-new").write_bytes(regressed_baseline)
        journal = {"replace": [{"target": "baseline.json", "staged": ".baseline.json.evalgate-new"}]}
        (folder / ".evalgate-journal.json").write_text(json.dumps(journal) + "\n", encoding="utf-8")

    pr = github_repo.pull_request(attack)
    job = github_repo.run_gate(pr)
    assert job.step("scope").outputs.get("relevant") == "true", job.explain()
    assert job.conclusion == "failure", job.explain()
    assert job.step("Gate").outputs.get("verdict") == "refused", job.explain()
    assert "an unfinished change of the probe set" in job.step("Gate").log, job.explain()


def test_a_journal_reached_through_a_linked_probe_folder_never_replaces_the_restored_baseline(
    github_repo: GitHubRepo, regressed_baseline
):
    """The same attack on the shipped layout (manifest in data/eval, baseline in baselines/): the PR
    moves data/eval's files into baselines/ and makes `data/eval -> ../baselines`, a link inside the
    repository. The manifest's folder is now the baseline's: the restore step writes the base's
    baselines/demo.json (a real folder, a regular file), and a roll-forward would rename the PR's
    `baselines/.demo.json.evalgate-new` over it."""

    def attack(tree: Path) -> None:
        swap_in_regressed(tree)
        probes, baselines = tree / "data" / "eval", tree / "baselines"
        for f in probes.iterdir():
            f.rename(baselines / f.name)
        probes.rmdir()
        probes.symlink_to("../baselines")
        (baselines / ".demo.json.evalgate-new").write_bytes(regressed_baseline)
        journal = {"replace": [{"target": "demo.json", "staged": ".demo.json.evalgate-new"}]}
        (baselines / ".evalgate-journal.json").write_text(json.dumps(journal) + "\n", encoding="utf-8")

    job = github_repo.run_gate(github_repo.pull_request(attack))
    assert job.step("scope").outputs.get("relevant") == "true", job.explain()
    assert job.conclusion == "failure", job.explain()
    assert job.step("Gate").outputs.get("verdict") == "refused", job.explain()
    assert "an unfinished change of the probe set" in job.step("Gate").log, job.explain()


def test_the_checkpoint_scored_is_the_one_the_pr_merges(github_repo: GitHubRepo):
    """Scored is not merged: the PR commits the REGRESSED weights at data/checkpoints/demo, and
    beside them the good weights staged as `.model.safetensors.evalgate-new` (and config.json),
    with a journal naming them. `data/eval -> checkpoints/demo` makes the checkpoint folder the
    manifest's folder (the probe files and the manifest moved there; the template linked back out
    so its input record does not collide with the checkpoint's). A roll-forward would score the good
    weights (pass at 97.7%) while git holds the regressed model."""

    demo = "data/checkpoints/demo"

    def attack(tree: Path) -> None:
        ckpt, probes = tree / demo, tree / "data" / "eval"
        for name in ("config.json", "model.safetensors"):
            shutil.copyfile(ckpt / name, ckpt / f".{name}.evalgate-new")  # the good model, staged
        swap_in_regressed(tree)  # what git holds at data/checkpoints/demo
        (tree / "data" / "tpl").mkdir()
        for f in probes.iterdir():
            f.rename((tree / "data" / "tpl" if f.name == "probe_prompt.txt" else ckpt) / f.name)
        (ckpt / "probe_prompt.txt").symlink_to("../../tpl/probe_prompt.txt")
        probes.rmdir()
        probes.symlink_to("checkpoints/demo")
        journal = {
            "replace": [
                {"target": "config.json", "staged": ".config.json.evalgate-new"},
                {"target": "model.safetensors", "staged": ".model.safetensors.evalgate-new"},
            ]
        }
        (ckpt / ".evalgate-journal.json").write_text(json.dumps(journal) + "\n", encoding="utf-8")

    pr = github_repo.pull_request(attack)
    merged = subprocess.run(
        ["git", "show", f"{pr.merge_sha}:{demo}/model.safetensors"],
        cwd=github_repo.origin,
        capture_output=True,
        check=True,
    ).stdout
    assert merged == (Path(pr.clone) / REGRESSED / "model.safetensors").read_bytes()  # merged: regressed
    job = github_repo.run_gate(pr)
    assert job.step("scope").outputs.get("relevant") == "true", job.explain()
    assert job.conclusion == "failure", job.explain()
    assert job.step("Gate").outputs.get("verdict") == "refused", job.explain()
    assert "an unfinished change of the probe set" in job.step("Gate").log, job.explain()
