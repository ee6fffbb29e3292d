"""What a pull request brings is judged, or refused: never gated with something else in its place.

Three attacks of the round-3 review (docs/security.md, "Attacks"), each a whole `gate` job of the
merge commit's eval-gate.yml (helpers/hostile_pr.py), and the two `evalgate run` flags that hold
them, through the real CLI:

- the trusted tree in the workspace: a PR's checkpoint linked into the base commit's worktree was
  scored with the base's weights (the worktree now lives outside the workspace);
- a PR's own edit of a file the gate takes from the base (evalgate.yml, the baseline) was shown
  and ignored, and took effect unjudged once merged (`--base-inputs-changed`: a gate change);
- under the `evalgate:update-baseline` label the gate used the baseline file the PR wrote
  (`--verify-baseline`: it must be the one this checkpoint scores, outcome for outcome).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.hostile_pr import DEMO, REGRESSED, GitHubRepo, attackers_evalgate, git, swap_in_regressed
from helpers.hostile_repo import make_repo


@pytest.fixture(scope="module")
def regressed_baseline(tmp_path_factory, origin_template) -> bytes:
    """baselines/demo.json as the regressed checkpoint writes it (scored once per module)."""
    tree = tmp_path_factory.mktemp("regressed-baseline") / "tree"
    subprocess.run(["git", "clone", "-q", str(origin_template), str(tree)], check=True)
    run = attackers_evalgate(tree, "run", "--checkpoint", REGRESSED, "--baseline", "none", "--out", "out")
    assert run.returncode == 0, run.stderr
    made = attackers_evalgate(
        tree, "baseline", "update", "--from-results", "out/results.json", "--name", "demo"
    )
    assert made.returncode == 0, made.stderr
    return (tree / "baselines" / "demo.json").read_bytes()


# -- whole jobs --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_checkpoint_linked_into_the_trusted_tree_is_the_prs_own(github_repo: GitHubRepo):
    """The PR commits the regressed weights under `.evalgate-base/` (where the workflow once put
    the base commit) and makes the checkpoint folder a link there: the gate must score what the
    merged tree will load, the regressed model."""

    def attack(tree: Path) -> None:
        swap_in_regressed(tree, f".evalgate-base/{DEMO}")
        shutil.rmtree(tree / DEMO)
        (tree / DEMO).symlink_to(f"../../.evalgate-base/{DEMO}")

    pr = github_repo.pull_request(attack)
    job = github_repo.run_gate(pr)
    merged = github_repo.root / "merged-view"
    git("clone", "-q", str(github_repo.origin), str(merged), cwd=github_repo.root)
    git("checkout", "-q", "--detach", pr.merge_sha, cwd=merged)
    assert (merged / DEMO / "model.safetensors").read_bytes() == (
        merged / REGRESSED / "model.safetensors"
    ).read_bytes()
    assert job.conclusion == "failure", job.explain()
    assert job.step("Gate").outputs.get("verdict") == "fail", job.explain()


@pytest.mark.slow
def test_a_pr_that_retargets_evalgate_yml_is_refused_not_ignored(github_repo, regressed_baseline):
    """The PR changes no weights: its evalgate.yml names the regressed checkpoint and a baseline
    measured on it. Gated with the base's configuration it would pass, and the regressed model
    would become the repository's, unjudged, once merged."""

    def retarget(tree: Path) -> None:
        cfg = tree / "evalgate.yml"
        text = cfg.read_text(encoding="utf-8")
        text = text.replace(
            "checkpoint: data/checkpoints/demo ", "checkpoint: data/checkpoints/demo-regressed "
        )
        text = text.replace("baseline: baselines/demo.json", "baseline: baselines/regressed.json")
        assert "demo-regressed" in text and "regressed.json" in text
        cfg.write_text(text, encoding="utf-8")
        (tree / "baselines" / "regressed.json").write_bytes(regressed_baseline)

    job = github_repo.run_gate(github_repo.pull_request(retarget))
    assert job.conclusion == "failure", job.explain()
    assert job.step("Gate").outputs.get("verdict") == "refused", job.explain()
    assert "evalgate.yml" in job.summary and "takes from the base commit" in job.summary


@pytest.mark.slow
def test_the_update_baseline_label_never_gates_against_numbers_the_pr_wrote(github_repo, regressed_baseline):
    """The PR commits a forged baseline (every outcome wrong) with the regressed weights and deletes
    its copy of update-baseline.yml, so no bot rewrites the file; a maintainer's label then makes
    the gate take the PR's baseline, which must be the one this checkpoint scores."""
    forged = json.loads(regressed_baseline)
    for outcome in forged["outcomes"].values():
        if outcome.get("status") == "scored":
            outcome["correct"] = False

    def attack(tree: Path) -> None:
        swap_in_regressed(tree)
        (tree / "baselines" / "demo.json").write_text(json.dumps(forged, indent=2) + "\n", encoding="utf-8")
        (tree / ".github" / "workflows" / "update-baseline.yml").unlink()

    pr = github_repo.pull_request(attack)
    github_repo.api.label(pr.number, "evalgate:update-baseline", by="maria")
    job = github_repo.run_gate(pr, action="labeled", label="evalgate:update-baseline")
    assert job.step("approval").outputs.get("update-baseline") == "true", job.explain()
    assert job.conclusion == "failure", job.explain()
    assert job.step("Gate").outputs.get("verdict") == "refused", job.explain()
    assert "is not the baseline this checkpoint scores" in job.summary


@pytest.mark.slow
def test_the_bots_baseline_under_the_label_passes(github_repo, regressed_baseline):
    """The other side: the baseline the trusted job writes for this head is this checkpoint's, so
    the labelled head that carries it is gated green."""

    def accepted(tree: Path) -> None:
        swap_in_regressed(tree)
        (tree / "baselines" / "demo.json").write_bytes(regressed_baseline)

    pr = github_repo.pull_request(accepted)
    github_repo.api.label(pr.number, "evalgate:update-baseline", by="maria")
    job = github_repo.run_gate(pr, action="labeled", label="evalgate:update-baseline")
    assert job.conclusion == "success", job.explain()
    assert job.step("Gate").outputs.get("verdict") == "pass", job.explain()


# -- the flags, through the CLI ------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    return make_repo(tmp_path, monkeypatch)


def test_each_base_input_the_pr_changed_is_a_refused_gate_change(repo, tmp_path, cli):
    listed = tmp_path / "replaced.txt"
    listed.write_text("evalgate.yml\nbaselines/demo.json\n", encoding="utf-8")
    done = cli("validate")  # the set itself is fine: the refusal below is the gate change alone
    assert done.code == 0, done.err
    refused = cli("run", "--base-inputs-changed", listed, "--out", "out")
    assert refused.code == 2, refused.err
    doc = json.loads((repo / "out" / "results.json").read_text(encoding="utf-8"))
    changes = [(c["kind"], c["key"]) for c in doc["gate_changes_vs_baseline"]]
    assert changes == [("base_input", "baselines/demo.json"), ("base_input", "evalgate.yml")]
    assert "takes from the base commit" in refused.err and doc["probes"] == []


@pytest.mark.slow
def test_an_approved_base_input_change_is_gated_and_listed(repo, tmp_path, cli):
    listed = tmp_path / "replaced.txt"
    listed.write_text("evalgate.yml\n", encoding="utf-8")
    done = cli("run", "--base-inputs-changed", listed, "--approve-gate-changes", "--out", "out")
    assert done.code == 0, done.err
    doc = json.loads((repo / "out" / "results.json").read_text(encoding="utf-8"))
    assert [c["kind"] for c in doc["gate_changes_vs_baseline"]] == ["base_input"]
    assert "evalgate.yml" in (repo / "out" / "REPORT.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_verify_baseline_accepts_this_checkpoints_baseline_and_refuses_a_forged_one(repo, cli):
    ok = cli("run", "--verify-baseline", "--out", "out")
    assert ok.code == 0, ok.err  # the shipped baseline is the demo checkpoint's own
    path = repo / "baselines" / "demo.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    flipped = sorted(k for k, o in doc["outcomes"].items() if o.get("status") == "scored")[:3]
    for key in flipped:
        doc["outcomes"][key]["correct"] = not doc["outcomes"][key]["correct"]
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    forged = cli("run", "--verify-baseline", "--out", "out")
    assert forged.code == 2, forged.err
    assert "is not the baseline this checkpoint scores" in forged.err
    assert "outcomes of 3 probe(s) differ" in forged.err and flipped[0] in forged.err
