"""The Action and the workflows: actionlint, GitHub's JSON schemas, the security structure, and the
shell steps that matter run for real against throwaway git repositories."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / ".github" / "workflows"
BIN = Path(sys.executable).parent  # the venv's bin: actionlint, check-jsonschema
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")


def load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def triggers(wf: dict) -> dict:
    return wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as True


def steps(wf: dict) -> list[dict]:
    return [s for job in wf["jobs"].values() for s in job.get("steps", [])]


def step(wf: dict, name_part: str) -> dict:
    return next(s for s in steps(wf) if name_part in s.get("name", ""))


ALL = sorted(p.name for p in WORKFLOWS.glob("*.yml"))


def run_tool(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_every_workflow_exists():
    assert ALL == [
        "badge.yml",
        "ci.yml",
        "eval-gate-comment.yml",
        "eval-gate-sharded.yml",
        "eval-gate.yml",
        "update-baseline.yml",
    ]


def test_the_sharded_gate_scores_a_matrix_and_merges_offline():
    wf = load("eval-gate-sharded.yml")
    shard, merge = wf["jobs"]["shard"], wf["jobs"]["merge"]
    assert shard["strategy"]["matrix"]["shard"] == [1, 2, 3, 4] and wf["env"]["SHARDS"] == "4"
    assert merge["needs"] == "shard"
    assert all(not writes(job) for job in wf["jobs"].values())
    score = step(wf, "Score shard")["run"]
    assert '--shard "$SHARD/$SHARDS"' in score and "--network none" in score
    merged = step(wf, "Merge")["run"]
    assert "merge parts/evalgate-shard-*/results.json" in merged and "--network none" in merged


def test_actionlint_passes_and_catches_a_broken_workflow(tmp_path):
    actionlint = str(BIN / "actionlint")
    result = run_tool(actionlint, "-no-color", *(str(WORKFLOWS / n) for n in ALL))
    assert result.returncode == 0, result.stdout + result.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n"
        "      - run: echo ${{ github.nope }}\n",
        encoding="utf-8",
    )
    assert run_tool(actionlint, "-no-color", str(broken)).returncode != 0


def test_github_json_schemas():
    cj = str(BIN / "check-jsonschema")
    wf = run_tool(cj, "--builtin-schema", "vendor.github-workflows", *(str(WORKFLOWS / n) for n in ALL))
    assert wf.returncode == 0, wf.stdout + wf.stderr
    action = run_tool(cj, "--builtin-schema", "vendor.github-actions", str(REPO / "action.yml"))
    assert action.returncode == 0, action.stdout + action.stderr


@pytest.mark.parametrize("name", ALL)
def test_least_privilege_and_pinned_actions(name):
    wf = load(name)
    assert wf["permissions"] == {}, "the workflow default grants nothing; jobs ask for what they need"
    for job_name, job in wf["jobs"].items():
        assert "permissions" in job, f"{name}: job {job_name} has no permissions block"
    for s in steps(wf):
        if "uses" in s and not s["uses"].startswith("./"):
            assert PINNED.match(s["uses"]), f"{name}: {s['uses']} is not pinned to a commit SHA"
    assert "concurrency" in wf


def writes(job: dict) -> set[str]:
    return {scope for scope, level in (job.get("permissions") or {}).items() if level == "write"}


def test_the_gate_runs_with_a_read_only_token_on_the_gated_paths():
    wf = load("eval-gate.yml")
    assert set(triggers(wf)) == {"pull_request"}
    assert set(triggers(wf)["pull_request"]["paths"]) == {
        "data/checkpoints/**",
        "data/eval/**",
        "baselines/**",
        "evalgate.yml",
    }
    assert all(not writes(job) for job in wf["jobs"].values())
    gate = step(wf, "Gate")
    assert gate["uses"] == "./" and gate["with"]["gate-changes"] == ".evalgate/gate-changes.diff"
    upload = next(s for s in steps(wf) if "upload-artifact" in s.get("uses", ""))
    assert upload["if"] == "${{ !cancelled() }}"  # a failing gate still uploads its report
    record = step(wf, "head SHA")
    assert "pull_request.head.sha" in str(record["env"]) and "number" not in str(record)


def test_badge_scoring_holds_no_write_token():
    wf = load("badge.yml")
    assert triggers(wf)["push"] == {"branches": ["main"]}
    assert not writes(wf["jobs"]["gate"]) and writes(wf["jobs"]["publish"]) == {"contents"}
    assert not any(s.get("uses") == "./" for s in wf["jobs"]["publish"]["steps"])


def test_action_is_composite_with_an_offline_scoring_container():
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) >= {
        "checkpoint",
        "config",
        "baseline",
        "comment",
        "github-token",
        "fail-on-regression",
        "out",
        "image",
    }
    assert set(action["outputs"]) == {"verdict", "accuracy", "report-path"}
    gate, comment = action["runs"]["steps"][1], action["runs"]["steps"][2]
    assert "--network none" in gate["run"] and '--user "$(id -u):$(id -g)"' in gate["run"]
    assert "-m evalgate.edges.action" in gate["run"] and gate["env"]["INPUT_COMMENT"] == "false"
    assert "--network none" not in comment["run"] and "comment --report" in comment["run"]
    assert "GITHUB_TOKEN" not in str(gate["env"])  # the container that loads the checkpoint has no token


# -- the shell steps, run for real ------------------------------------------------------------------


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def bash(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def pr_checkout(tmp_path) -> Path:
    """A clone whose origin/main has the gate files and whose HEAD is a PR that changes them."""
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    origin = tmp_path / "origin"
    origin.mkdir()
    git("init", "-q", "-b", "main", cwd=origin)
    (origin / "evalgate.yml").write_text("gate:\n  tolerance: 0.02\n", encoding="utf-8")
    (origin / "baselines").mkdir()
    (origin / "baselines" / "demo.json").write_text('{"accuracy": 0.9}\n', encoding="utf-8")
    git("add", ".", cwd=origin)
    git("commit", "-q", "-m", "base", cwd=origin)
    work = tmp_path / "work"
    git("clone", "-q", str(origin), str(work), cwd=tmp_path)
    git("checkout", "-q", "-b", "pr", cwd=work)
    (work / "evalgate.yml").write_text("gate:\n  tolerance: 0.5\n", encoding="utf-8")
    (work / "baselines" / "demo.json").write_text('{"accuracy": 0.1}\n', encoding="utf-8")
    (work / "baselines" / "sneaky.json").write_text("{}\n", encoding="utf-8")
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "pr", cwd=work)
    return work


def test_the_gate_restores_config_and_baselines_from_the_base_branch(pr_checkout):
    script = step(load("eval-gate.yml"), "from the base branch")["run"]
    result = bash(script, pr_checkout, BASE_REF="main", APPROVED="false")
    assert result.returncode == 0, result.stderr
    assert (pr_checkout / "evalgate.yml").read_text(encoding="utf-8") == "gate:\n  tolerance: 0.02\n"
    assert (pr_checkout / "baselines" / "demo.json").read_text(encoding="utf-8") == '{"accuracy": 0.9}\n'
    assert not (pr_checkout / "baselines" / "sneaky.json").exists()
    diff = (pr_checkout / ".evalgate" / "gate-changes.diff").read_text(encoding="utf-8")
    assert "+  tolerance: 0.5" in diff and "baselines/sneaky.json" in diff


def test_with_the_label_the_prs_own_gate_files_are_used(pr_checkout):
    script = step(load("eval-gate.yml"), "from the base branch")["run"]
    result = bash(script, pr_checkout, BASE_REF="main", APPROVED="true")
    assert result.returncode == 0, result.stderr
    assert (pr_checkout / "evalgate.yml").read_text(encoding="utf-8") == "gate:\n  tolerance: 0.5\n"
    assert (pr_checkout / "baselines" / "sneaky.json").exists()
    assert "evalgate:update-baseline" in result.stdout


def test_the_badge_is_published_to_the_badges_branch(tmp_path):
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    folder = tmp_path / "badges"
    folder.mkdir()
    (folder / "badge.json").write_text('{"schemaVersion": 1}\n', encoding="utf-8")
    (folder / "badge.svg").write_text("<svg/>\n", encoding="utf-8")
    script = step(load("badge.yml"), "badges branch")["run"]
    env = {"GH_TOKEN": "t", "REMOTE": str(remote), "SOURCE_SHA": "abc"}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    for _ in range(2):  # force-pushed: the branch keeps one commit
        assert bash(script, folder, **env).returncode == 0
        shutil.rmtree(folder / ".git")
    assert git("show", "badges:badge.json", cwd=remote) == '{"schemaVersion": 1}\n'
    assert git("rev-list", "--count", "badges", cwd=remote).strip() == "1"
