"""eval-gate.yml's "Decide what the gate has to do" step, run for real against throwaway git
repositories: the job always runs (no paths filter), passes quickly when the PR changes nothing the
gate reads, and refuses the first PR that adds evalgate instead of gating it against the demo."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.paths import REPO
from helpers.pr_repo import Link, repo_with, scope

CONFIG = "checkpoint: models/mine\nbaseline: baselines/mine.json\n"
BASE = {
    "evalgate.yml": CONFIG,
    "baselines/mine.json": "{}\n",
    "README.md": "hi\n",
    "models/mine/w.txt": "1\n",
}


def decide(tmp_path: Path, work: Path, base_sha: str) -> tuple[subprocess.CompletedProcess[str], str, str]:
    wf = yaml.safe_load((REPO / ".github" / "workflows" / "eval-gate.yml").read_text(encoding="utf-8"))
    script = next(s for s in wf["jobs"]["gate"]["steps"] if s.get("id") == "scope")["run"]
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"  # stands for the venv holding the trusted evalgate
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    output, summary = tmp_path / "output", tmp_path / "summary"
    output.write_text("", encoding="utf-8")
    summary.write_text("", encoding="utf-8")
    env = {**os.environ, "VENV": str(venv), "BASE_SHA": base_sha}
    env.update(GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(summary))
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return result, output.read_text(encoding="utf-8"), summary.read_text(encoding="utf-8")


def test_a_pr_that_changes_nothing_the_gate_reads_passes_quickly(tmp_path):
    work, base = repo_with(tmp_path, BASE, {"README.md": "changed\n", "src/app.py": "x = 1\n"})
    result, output, _ = decide(tmp_path, work, base)
    assert result.returncode == 0, result.stderr
    assert output.splitlines()[0] == "relevant=false"
    assert "nothing the gate reads changed" in result.stderr


@pytest.mark.parametrize(
    "changed",
    [
        "models/mine/w.txt",  # the checkpoint wherever evalgate.yml says it lives
        "baselines/mine.json",
        "evalgate.yml",
        "data/eval/probes.jsonl",
        "data/corpus/test.jsonl",
        "data/grammar/verbs.yaml",
    ],
)
def test_a_pr_that_changes_what_the_gate_reads_is_gated(tmp_path, changed):
    work, base = repo_with(tmp_path, BASE, {changed: "changed\n"})
    result, output, _ = decide(tmp_path, work, base)
    assert result.returncode == 0, result.stderr
    assert output.splitlines()[0] == "relevant=true"
    assert repr(changed) in result.stderr


def test_a_prs_own_config_cannot_hide_or_inject_paths(tmp_path):
    # The PR moves its checkpoint (the new path counts too) and tries to smuggle an output line.
    hostile = 'checkpoint: elsewhere/ckpt\ntest: "x\\nrelevant=false"\n'
    work, base = repo_with(tmp_path, BASE, {"evalgate.yml": hostile, "elsewhere/ckpt/w.txt": "2\n"})
    result, output, _ = decide(tmp_path, work, base)
    assert result.returncode == 0, result.stderr
    lines = output.splitlines()
    assert lines[0] == "relevant=true" and "relevant=false" not in lines
    assert all(
        line.partition("=")[0] in ("relevant", "gate-paths", "base-inputs", "checkout-changed")
        for line in lines
    )
    # it counts (relevant), and as the checkpoint it is judged, not shown as a gate change
    assert "elsewhere/ckpt" not in lines[1].split()


SUITES = (
    "suites:\n"
    "  k8s:\n"
    "    kind: multiple-choice\n"
    "    probes: [evalgate/k8s/items.jsonl]\n"
    "    train: [notes/train.jsonl]\n"
    "  docs:\n"
    "    kind: multiple-choice\n"
    "    probes: [evalgate/docs/items.jsonl]\n"
    "    test: notes/docs-text.jsonl\n"
    "test: null\n"
)


@pytest.mark.parametrize(
    "changed",
    ["evalgate/k8s/items.jsonl", "evalgate/k8s/MANIFEST.json", "notes/train.jsonl", "notes/docs-text.jsonl"],
)
def test_a_pr_that_changes_a_suites_files_is_gated(tmp_path, changed):
    base = {**BASE, "evalgate.yml": CONFIG + SUITES}
    work, sha = repo_with(tmp_path, base, {changed: "changed\n"})
    result, output, _ = decide(tmp_path, work, sha)
    assert result.returncode == 0, result.stderr
    assert output.splitlines()[0] == "relevant=true"
    assert changed in output.splitlines()[1].split()


@pytest.mark.parametrize(
    ("base", "why"),
    [
        ({"README.md": "hi\n"}, "evalgate.yml is missing"),
        ({"evalgate.yml": CONFIG, "README.md": "hi\n"}, "baselines/mine.json is missing"),
    ],
)
def test_the_first_pr_adding_evalgate_is_refused_with_the_bootstrap_steps(tmp_path, base, why):
    work, sha = repo_with(tmp_path, base, BASE)
    result, output, summary = decide(tmp_path, work, sha)
    assert result.returncode == 2
    assert "no baseline on the base branch yet" in result.stderr and why in result.stderr
    # The PR brings init's evalgate.yml and baseline: its next step is the review and the merge.
    assert "This pull request adds them (evalgate.yml, baselines/mine.json" in result.stderr
    assert "merges this pull request" in result.stderr and "required status check" in result.stderr
    assert "evalgate:update-baseline" in result.stderr
    assert "no baseline on the base branch yet" in summary
    assert output == ""  # never `relevant=...`: the gate must not run against the bundled demo


def test_the_decision_is_five_output_lines(tmp_path):
    work, sha = repo_with(tmp_path, BASE, {"models/mine/w.txt": "2\n"})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert [line.partition("=")[0] for line in result.lines] == [
        "relevant",
        "gate-paths",
        "base-inputs",
        "checkout-changed",
        "checkpoint-paths",
    ]
    assert result.relevant
    # the baseline's history and anchor are the base's too (docs/gate.md, "Drift")
    assert result.base_inputs == [
        "evalgate.yml",
        "baselines/mine.json",
        "baselines/history/mine.jsonl",
        "baselines/history/mine.anchor.json",
    ]
    assert "models/mine" in result.checkpoint_paths and "baselines" in result.gate_paths
    # the checkpoint is judged, not a change of the gate: the report's gate diff leaves it out
    assert "models/mine" not in result.gate_paths


def test_a_linked_checkpoint_is_still_not_relevant_to_a_readme_change(tmp_path):
    base = {
        **BASE,
        "evalgate.yml": CONFIG.replace("models/mine", "models/current"),
        "models/current": Link("mine"),
    }
    work, sha = repo_with(tmp_path, base, {"README.md": "changed\n"})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert not result.relevant
    assert {"models/current", "models/mine"} <= set(result.checkpoint_paths)


def test_a_path_that_is_not_plain_still_counts_but_is_not_printed(tmp_path):
    # A checkpoint folder with a space: never on a command line or an output line, but a change
    # to it is still a change to what the gate reads.
    config = 'checkpoint: "models/my model"\nbaseline: baselines/mine.json\n'
    base = {**BASE, "evalgate.yml": config, "models/my model/w.txt": "1\n"}
    work, sha = repo_with(tmp_path, base, {"models/my model/w.txt": "2\n"})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.relevant
    assert "'models/my model/w.txt'" in result.err
    assert all(" " not in p and "model" not in p for p in result.gate_paths + result.checkpoint_paths)


def test_a_baseline_the_workflow_cannot_name_is_refused(tmp_path):
    config = 'checkpoint: models/mine\nbaseline: "baselines/my baseline.json"\n'
    base = {**BASE, "evalgate.yml": config, "baselines/my baseline.json": "{}\n"}
    work, sha = repo_with(tmp_path, base, {"README.md": "changed\n"})
    result = scope(work, sha)
    assert result.code == 2
    assert "not a plain path" in result.err and result.lines == []


def test_a_base_config_that_is_no_configuration_is_refused(tmp_path):
    base = {**BASE, "evalgate.yml": "checkpoint: a\ncheckpoint: b\n"}
    work, sha = repo_with(tmp_path, base, {"README.md": "changed\n"})
    result = scope(work, sha)
    assert result.code == 2
    assert "the base branch's configuration cannot be read" in result.err and "appears twice" in result.err


def test_a_prs_config_that_is_no_configuration_is_relevant(tmp_path):
    work, sha = repo_with(tmp_path, BASE, {"evalgate.yml": "checkpoint: [unclosed\n"})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.relevant
    assert "the PR's evalgate.yml cannot be read" in result.err


def test_a_file_replacing_a_folder_the_gate_reads_is_relevant(tmp_path):
    # git lists the file `models` (above the gate path) and the files it replaced.
    base = {
        **BASE,
        "evalgate.yml": CONFIG.replace("models/mine", "models/mine/sub"),
        "models/mine/sub/w.txt": "1\n",
    }
    work, sha = repo_with(tmp_path, base, {"models": "now a file\n"})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.relevant
    assert "'models'" in result.err


def test_a_base_commit_git_does_not_know_is_refused(tmp_path):
    work, _ = repo_with(tmp_path, BASE, {"README.md": "changed\n"})
    result = scope(work, "0" * 40)
    assert result.code == 2
    assert "git ls-tree" in result.err and result.lines == []


def test_a_pr_into_a_repository_without_the_gate_is_told_to_run_init(tmp_path):
    """A PR that brings no configuration either: the refusal says how to set the gate up, with
    `evalgate init`, and never talks about the bundled demo's corpus or verb files."""
    work, sha = repo_with(tmp_path, {"README.md": "hi\n"}, {"src/app.py": "x = 1\n"})
    result, output, _ = decide(tmp_path, work, sha)
    assert result.returncode == 2 and output == ""
    assert "evalgate init --suite NAME --items FILE --checkpoint DIR" in result.stderr
    assert "evalgate baseline update" in result.stderr and "required status check" in result.stderr
    assert "git+https://github.com/evalgate/evalgate@v" in result.stderr
    assert "OWNER/" not in result.stderr and "vX.Y.Z" not in result.stderr
    for demo in ("corpus", "verb", "grammar", "data/eval", "probes seal"):
        assert demo not in result.stderr, demo


TEAM = (
    "suites:\n"
    "  quiz:\n"
    "    kind: multiple-choice\n"
    "    probes: [evalgate/quiz/items.jsonl]\n"
    "    manifest: evalgate/quiz/MANIFEST.json\n"
    "    slices: [subject]\n"
    "    train: []\n"
    "test: null\n"
    "checkpoint: models/current\n"
    "baseline: baselines/quiz.json\n"
)


@pytest.mark.parametrize(
    "changed", ["data/eval/probes.jsonl", "data/corpus/test.jsonl", "data/grammar/verbs.yaml"]
)
def test_a_teams_gate_paths_are_its_configurations_not_the_demos(tmp_path, changed):
    """A team's `suites:` configuration (what init writes) reads only what it names: files at the
    bundled demo's paths are the team's own business, not gate inputs."""
    base = {
        "evalgate.yml": TEAM,
        "baselines/quiz.json": "{}\n",
        "evalgate/quiz/items.jsonl": "{}\n",
        "models/current/w.txt": "1\n",
    }
    work, sha = repo_with(tmp_path, base, {changed: "theirs\n"})
    result, output, _ = decide(tmp_path, work, sha)
    assert result.returncode == 0, result.stderr
    lines = output.splitlines()
    assert lines[0] == "relevant=false", result.stderr
    paths = lines[1].removeprefix("gate-paths=").split()
    assert not [p for p in paths if p.startswith("data/")], paths
    assert {"evalgate.yml", "evalgate/quiz/items.jsonl"} <= set(paths)
    assert "models/current" not in paths  # the checkpoint: judged, not a change of the gate


def test_a_checkpoint_that_reaches_another_input_keeps_it_in_the_gate_diff(tmp_path):
    """A checkpoint folder holding (or linked to) an input the gate reads as items or a baseline
    cannot hide that input's changes from the report's gate diff by being the checkpoint."""
    config = "checkpoint: models\nbaseline: baselines/mine.json\nprobes: models/items.jsonl\n"
    base = {**BASE, "evalgate.yml": config, "models/w.txt": "1\n", "models/items.jsonl": "{}\n"}
    work, sha = repo_with(tmp_path, base, {"models/items.jsonl": "{}\n{}\n"})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert "models/items.jsonl" in result.gate_paths  # its diff is shown
    assert "models" in result.checkpoint_paths and "models" not in result.gate_paths
