"""`evalgate init --shards 4` writes the gate as an Actions matrix (issue 29, section 2): four shard
jobs each score a quarter of the probes with the release's Action, a merge job named `gate` merges
and gates. Run here with the workflow's own steps (helpers/workflow_runner.py: bash for `run:`,
the release's composite action, artifacts between the jobs), on a team's pull request, beside the
single-runner gate init writes without --shards: the merged results.json is that gate's, byte for
byte. A shard that never uploads refuses the merge (the `gate` check is never green for probes
no shard scored)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.hostile_pr import git, make_origin_template
from test_a_repository_init_writes_gates_its_first_prs import MODEL, Team, _export, _lint, _swap_in_regressed

from evalgate.github.workflows import gate_workflow

pytestmark = pytest.mark.slow
SHARDS = 4


def _init_sharded(tree: Path, pin: str, export: Path) -> None:
    shutil.copytree(Path(__file__).parents[2] / "data" / "checkpoints" / "demo", tree / MODEL)
    done = subprocess.run(
        [sys.executable, "-m", "evalgate", "init", "--suite", "verbs", "--items", str(export),
         "--from", "mmlu", "--checkpoint", MODEL, "--action", pin, "--owners", "@acme/ml",
         "--shards", str(SHARDS)],
        cwd=tree, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_four_shard_gate_merges_into_the_single_runner_gates_results_byte_for_byte(tmp_path, monkeypatch):
    origin = make_origin_template(tmp_path / "release")
    team = Team(tmp_path / "team", origin, git("rev-parse", "main", cwd=origin), monkeypatch)
    export = tmp_path / "export.jsonl"
    _export(export)
    try:
        boot = team.gh.pull_request(
            lambda t: _init_sharded(t, team.pin, export), author="maria", branch="evalgate"
        )
        _lint(boot.clone)
        written = yaml.safe_load((boot.clone / ".github/workflows/eval-gate.yml").read_text("utf-8"))
        assert written["jobs"]["shard"]["strategy"]["matrix"]["shard"] == list(range(1, SHARDS + 1))
        assert written["jobs"]["gate"]["needs"] == "shard"
        team.merge(boot)

        # A pull request that regresses the checkpoint: a verdict worth comparing.
        pr = team.gh.pull_request(lambda t: _swap_in_regressed(t), branch="retrain")
        event = team.gh.event(pr)
        ref = f"refs/pull/{pr.number}/merge"

        # The single-runner gate on the same pull request: init's template without --shards.
        single_wf = tmp_path / "single-eval-gate.yml"
        single_wf.write_text(gate_workflow(team.pin), encoding="utf-8")
        single_id = team.gh.api.add_run(".github/workflows/eval-gate.yml", "pull_request", pr.branch,
                                        pr.head_sha, actor=pr.author, pr=pr.number)  # fmt: skip
        runner = team.runner("single", "pull_request", event, pr.merge_sha, ref, single_id)
        single = runner.run_job(
            single_wf, "gate", team.workspace("single", ref), uses={"actions/checkout@": team.checkout}
        )
        assert single.step("Gate").outputs["verdict"] == "fail", single.explain()

        # The sharded gate: each shard on its own runner workspace, then the merge job.
        run_id = team.gh.api.add_run(".github/workflows/eval-gate.yml", "pull_request", pr.branch,
                                     pr.head_sha, actor=pr.author, pr=pr.number)  # fmt: skip
        runner = team.runner("sharded", "pull_request", event, pr.merge_sha, ref, run_id)
        parts = []
        for i in range(1, SHARDS + 1):
            ws = team.workspace(f"shard{i}", ref)
            job = runner.run_job(ws / ".github/workflows/eval-gate.yml", "shard", ws, matrix={"shard": i},
                                 uses={"actions/checkout@": team.checkout})  # fmt: skip
            assert job.conclusion == "success", job.explain()
            part = json.loads(_artifact(team, run_id, f"evalgate-shard-{i}").read_text("utf-8"))
            assert part["shard"]["index"] == i and part["shard"]["count"] == SHARDS
            parts.append(len(part["probes"]))
        assert all(0 < n < sum(parts) for n in parts), parts  # each shard scored only its own part
        ws = team.workspace("merge", ref)
        needs = {"shard": {"result": "success", "outputs": {}}}
        merged = runner.run_job(ws / ".github/workflows/eval-gate.yml", "gate", ws, needs=needs,
                                uses={"actions/checkout@": team.checkout})  # fmt: skip
        assert merged.conclusion == "failure" and merged.step("Gate").outputs["verdict"] == "fail", (
            merged.explain()
        )
        whole = _artifact(team, single_id, "evalgate-report")
        result = _artifact(team, run_id, "evalgate-report")
        assert result.read_bytes() == whole.read_bytes()
        assert sum(parts) == len(json.loads(whole.read_text("utf-8"))["probes"])
        assert (result.parent / "REPORT.md").read_bytes() == (whole.parent / "REPORT.md").read_bytes()

        # Shard 4 never uploaded (a runner lost, a timeout): the merge refuses, naming it.
        lost_id = team.gh.api.add_run(".github/workflows/eval-gate.yml", "pull_request", pr.branch,
                                      pr.head_sha, actor=pr.author, pr=pr.number)  # fmt: skip
        for i in range(1, SHARDS):
            src = _artifact(team, run_id, f"evalgate-shard-{i}").parent
            shutil.copytree(src, team.root / "artifacts" / str(lost_id) / src.name)
        runner = team.runner("lost", "pull_request", event, pr.merge_sha, ref, lost_id)
        ws = team.workspace("lost", ref)
        needs = {"shard": {"result": "failure", "outputs": {}}}
        lost = runner.run_job(ws / ".github/workflows/eval-gate.yml", "gate", ws, needs=needs,
                              uses={"actions/checkout@": team.checkout})  # fmt: skip
        gate = lost.step("Gate")
        assert lost.conclusion == "failure" and gate.outputs["verdict"] == "refused", lost.explain()
        assert "missing [4]" in gate.log, gate.log
    finally:
        team.gh.close()


def _artifact(team: Team, run_id: int, name: str) -> Path:
    found = sorted((team.root / "artifacts" / str(run_id) / name).glob("results.json"))
    assert found, f"no {name}/results.json in run {run_id}"
    return found[0]
