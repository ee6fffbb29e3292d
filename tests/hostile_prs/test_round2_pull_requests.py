"""Round 2's pull-request attacks (docs/security.md, "Attacks and the cases that hold them"), each
played end to end: a contributor pushes a branch, GitHub's merge commit is checked out, and every
step of the merge commit's eval-gate.yml runs in order (helpers/hostile_pr.py), with the base
commit's evalgate scoring the demo checkpoint. Each PR also swaps in the regressed checkpoint, so
an attack that worked would turn the job green; every case asserts that it stays red.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.hostile_pr import REGRESSED, GitHubRepo, attackers_evalgate, swap_in_regressed

pytestmark = pytest.mark.slow

APPROVE = "evalgate:approve-gate-change"


def assert_red(job, verdict: str) -> None:
    gate = job.step("Gate")
    assert job.conclusion == "failure", job.explain()
    assert gate.outputs.get("verdict") == verdict, job.explain()


def test_the_regressed_checkpoint_alone_fails_the_job(github_repo: GitHubRepo):
    """The control: without any trick, the regressed weights fail the gate."""
    job = github_repo.run_gate(github_repo.pull_request(swap_in_regressed))
    assert_red(job, "fail")
    assert "regressed" in job.summary


def test_a_decoy_evalgate_package_in_the_pr_replaces_no_step(github_repo: GitHubRepo):
    """A PR commits its own `evalgate/` package (a scope check that answers "nothing changed", an
    action entry that says pass) at the repository root, where `python -m` would import it."""

    def decoy(tree: Path) -> None:
        swap_in_regressed(tree)
        pkg = tree / "evalgate"
        (pkg / "edges").mkdir(parents=True)
        (pkg / "github").mkdir()
        (pkg / "__init__.py").write_text("__version__ = '9.9.9'\n")
        for sub in ("edges", "github"):
            (pkg / sub / "__init__.py").write_text("")
            (pkg / sub / "pr_scope.py").write_text("print('relevant=false')\nprint('gate-paths=x')\n")
        (pkg / "__main__.py").write_text("import sys\nprint('verdict=pass')\nsys.exit(0)\n")
        (pkg / "cli.py").write_text("def main(argv=None):\n    return 0\n")

    job = github_repo.run_gate(github_repo.pull_request(decoy))
    assert job.step("scope").outputs["relevant"] == "true", job.explain()
    assert_red(job, "fail")


def test_a_pr_that_loosens_its_own_evalgate_yml_is_gated_by_the_bases(github_repo: GitHubRepo):
    """The PR raises the tolerance to 50 points and switches the perplexity check off. The run is
    gated with the base's evalgate.yml, and an unapproved change to a file the gate takes from the
    base is refused: merged, it would loosen every later run unjudged (docs/approval.md)."""

    def loosen(tree: Path) -> None:
        swap_in_regressed(tree)
        cfg = tree / "evalgate.yml"
        text = cfg.read_text(encoding="utf-8")
        text = text.replace("tolerance: 0.02", "tolerance: 0.5").replace(
            "perplexity_max_ratio: 1.10", "perplexity_max_ratio: 9"
        )
        assert "tolerance: 0.5" in text
        cfg.write_text(text, encoding="utf-8")

    job = github_repo.run_gate(github_repo.pull_request(loosen))
    assert_red(job, "refused")
    assert "evalgate.yml" in job.summary
    assert "tolerance: 0.5" in job.summary  # the attempt is shown at the top of the report


@pytest.fixture(scope="module")
def regressed_baseline(tmp_path_factory, origin_template) -> bytes:
    """baselines/demo.json as the regressed checkpoint would write it (scored once per module)."""
    tree = tmp_path_factory.mktemp("regressed-baseline") / "tree"
    subprocess.run(["git", "clone", "-q", str(origin_template), str(tree)], check=True)
    run = attackers_evalgate(tree, "run", "--checkpoint", REGRESSED, "--baseline", "none", "--out", "out")
    assert run.returncode == 0, run.stderr
    made = attackers_evalgate(
        tree, "baseline", "update", "--from-results", "out/results.json", "--name", "demo"
    )
    assert made.returncode == 0, made.stderr
    return (tree / "baselines" / "demo.json").read_bytes()


def test_a_pr_that_rewrites_its_own_baseline_is_gated_against_the_bases(github_repo, regressed_baseline):
    """The PR commits a baseline measured on the regressed model: compared with itself, it would
    pass. The base's baseline is the one read, and the unapproved rewrite is refused."""

    def rebaseline(tree: Path) -> None:
        swap_in_regressed(tree)
        (tree / "baselines" / "demo.json").write_bytes(regressed_baseline)

    job = github_repo.run_gate(github_repo.pull_request(rebaseline))
    assert_red(job, "refused")
    assert "baselines/demo.json" in job.summary


def test_a_pr_that_edits_action_yml_and_the_dockerfile_runs_the_bases(github_repo: GitHubRepo):
    """The PR's action.yml reports pass without scoring; its Dockerfile would build another gate."""

    def replace_action(tree: Path) -> None:
        swap_in_regressed(tree)
        (tree / "action.yml").write_text(
            "name: evalgate\ndescription: x\ninputs: {}\noutputs:\n  verdict:\n    description: v\n"
            "    value: pass\nruns:\n  using: composite\n  steps:\n    - shell: bash\n      run: exit 0\n",
            encoding="utf-8",
        )
        (tree / "docker" / "Dockerfile").write_text("FROM scratch\n", encoding="utf-8")

    job = github_repo.run_gate(github_repo.pull_request(replace_action))
    assert_red(job, "fail")


def deprecate_three_probes(tree: Path) -> None:
    """A yardstick change without touching evalgate.yml: probes retired and the set re-sealed."""
    swap_in_regressed(tree)
    ids = [json.loads(line)["id"] for line in (tree / "data/eval/probes.jsonl").read_text().splitlines()[:3]]
    for probe in ids:
        done = attackers_evalgate(tree, "probes", "deprecate", probe)
        assert done.returncode == 0, done.stdout + done.stderr
    shutil.rmtree(tree / "evalgate-out", ignore_errors=True)


def test_a_pr_that_deprecates_probes_is_refused_without_approval(github_repo: GitHubRepo):
    job = github_repo.run_gate(github_repo.pull_request(deprecate_three_probes))
    assert_red(job, "refused")
    assert "deprecated" in job.summary


def test_the_pr_authors_own_label_does_not_approve_its_gate_change(github_repo: GitHubRepo):
    """The author (who may write to the repository) labels their own PR."""
    pr = github_repo.pull_request(deprecate_three_probes)
    github_repo.api.label(pr.number, APPROVE, by=pr.author)
    job = github_repo.run_gate(pr, action="labeled", label=APPROVE)
    assert job.step("approvals").outputs["approve-gate-change"] == "false", job.explain()
    assert_red(job, "refused")


def test_a_maintainers_label_on_this_head_lets_the_gate_judge_the_change(github_repo: GitHubRepo):
    """With a maintainer's approval the change is accepted, and the regression is still judged."""
    pr = github_repo.pull_request(deprecate_three_probes)
    github_repo.api.label(pr.number, APPROVE, by="maria")
    job = github_repo.run_gate(pr, action="labeled", label=APPROVE)
    assert job.step("approvals").outputs["approve-gate-change"] == "true", job.explain()
    assert_red(job, "fail")


def plant_in_the_output_folder(tree: Path, *, link: str = "") -> None:
    """A report saying "pass" where the run writes its own; `link`: a link in, or as, the folder."""
    swap_in_regressed(tree)
    out = tree / ("forged" if link == "folder" else "evalgate-out")
    out.mkdir()
    (out / "REPORT.md").write_text("## ✅ evalgate: pass\n", encoding="utf-8")
    (out / "results.json").write_text('{"verdict": "pass"}\n', encoding="utf-8")
    if link == "file":
        (out / "badge.json").symlink_to("/etc/hostname")
    if link == "folder":
        (tree / "evalgate-out").symlink_to("forged")


def uploaded(repo: GitHubRepo) -> list[Path]:
    return [p for p in (repo.root / "artifacts").rglob("*") if p.is_file() or p.is_symlink()]


def test_a_stale_report_committed_in_the_output_folder_is_never_uploaded(github_repo: GitHubRepo):
    """The PR commits evalgate-out/REPORT.md and results.json saying "pass"."""
    job = github_repo.run_gate(github_repo.pull_request(plant_in_the_output_folder))
    assert_red(job, "fail")
    files = uploaded(github_repo)
    assert {"REPORT.md", "results.json"} <= {f.name for f in files}
    reports = [f.read_text(encoding="utf-8") for f in files if f.name == "REPORT.md"]
    assert reports and all("✅ evalgate: pass" not in r for r in reports)


@pytest.mark.parametrize("link", ["file", "folder"])
def test_a_link_committed_in_or_as_the_output_folder_uploads_nothing_stale(github_repo, link):
    """The same, with a link in the output folder, or the output folder a link to the forged one."""
    job = github_repo.run_gate(github_repo.pull_request(lambda t: plant_in_the_output_folder(t, link=link)))
    assert_red(job, "fail")
    files = uploaded(github_repo)
    assert not any(f.is_symlink() for f in files)
    reports = [f.read_text(encoding="utf-8") for f in files if f.name == "REPORT.md"]
    assert not any("✅ evalgate: pass" in r for r in reports)
    (results,) = [f for f in files if f.name == "results.json"]
    assert json.loads(results.read_text(encoding="utf-8"))["verdict"] == "fail"


def test_a_pr_that_changes_nothing_the_gate_reads_passes_without_scoring(github_repo: GitHubRepo):
    """The other side of "no paths filter": an unrelated PR is green at once, and nothing is scored."""
    job = github_repo.run_gate(github_repo.pull_request(lambda t: (t / "README.md").write_text("docs\n")))
    assert job.conclusion == "success", job.explain()
    assert job.step("Gate").outcome == "skipped"
