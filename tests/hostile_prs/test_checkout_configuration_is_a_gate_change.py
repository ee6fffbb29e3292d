"""A PR's checkout configuration (`.gitattributes`, `.lfsconfig`, `.gitmodules`) is a gate change.

Attack (attack3): a PR adds `.gitattributes` with `baselines/** text eol=crlf`. It was scored (a
checkout file makes the PR relevant) and passed: the restore step writes the baseline and its
history from git's blobs, raw. Once merged, every plain checkout writes baselines/demo.json with
CRLF, its SHA-256 is no longer the one the history's last line names, and the history check
refuses every honest run (the bot's `baseline update`, badge.yml, a maintainer's `validate`).
Defence: the scope decision lists each changed checkout file (`checkout-changed`, any folder, any
case), and the restore step adds it to `--base-inputs-changed`: a gate change of kind
`base_input`, refused (exit 2) unless a maintainer approved this head with
evalgate:approve-gate-change; the label evalgate:update-baseline never takes it.

Played with the workflows' real scope and restore scripts (eval-gate.yml and the `init` template)
in a git repository whose HEAD is the PR, then the real CLI as the gate step runs it.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from helpers.workflow_steps import commit, git, load, outputs, run_script, step

from evalgate.github.workflows import gate_workflow


@pytest.fixture(params=["eval-gate.yml", "init template"])
def workflow(request) -> dict:
    if request.param == "eval-gate.yml":
        return load("eval-gate.yml")
    return yaml.safe_load(gate_workflow("acme/evalgate@" + "a" * 40))


def play(repo: Path, tmp_path: Path, workflow: dict, files: dict[str, str], *, label: bool) -> list[str]:
    """Commit the base, then the PR adding `files`; run the scope and restore steps: the
    restore step's list of changed base inputs (what the gate step passes to the CLI)."""
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    git("init", "-q", "-b", "main", cwd=repo)
    base_sha = commit(repo, "main with a history")
    git("checkout", "-q", "-b", "pr", cwd=repo)
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    commit(repo, "the PR")
    runner = tmp_path / "runner"
    (runner / "venv" / "bin").mkdir(parents=True)
    python = runner / "venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    env = {
        "BASE_SHA": base_sha,
        "VENV": str(runner / "venv"),
        "GITHUB_OUTPUT": str(runner / "scope-output"),
        "GITHUB_STEP_SUMMARY": str(runner / "summary"),
        "RUNNER_TEMP": str(runner),
    }
    done = run_script(step(workflow, "Decide what the gate has to do")["run"], repo, env)
    assert done.returncode == 0, done.stderr
    scope = outputs(runner / "scope-output")
    assert scope["relevant"] == "true", scope
    env.update(
        APPROVED="true" if label else "false",
        GATE_PATHS=scope["gate-paths"],
        BASE_INPUTS=scope["base-inputs"],
        CHECKOUT_CHANGED=scope.get("checkout-changed", ""),
        GATE_CHANGES=str(runner / "changes.diff"),
        REPLACED=str(runner / "replaced.txt"),
        GITHUB_OUTPUT=str(runner / "restore-output"),
    )
    done = run_script(step(workflow, "the baselines from the base branch")["run"], repo, env)
    assert done.returncode == 0, done.stderr
    return (runner / "replaced.txt").read_text(encoding="utf-8").split()


def test_a_gitattributes_that_rewrites_the_baselines_is_a_refused_gate_change(
    tmp_path, monkeypatch, cli, workflow
):
    from helpers.hostile_repo import make_repo

    repo = make_repo(tmp_path, monkeypatch)
    got = cli("baseline", "anchor", "--name", "demo")  # the default branch has a history
    assert got.code == 0, got.err
    replaced = play(repo, tmp_path, workflow, {".gitattributes": "baselines/** text eol=crlf\n"}, label=True)
    assert replaced == [".gitattributes"], replaced
    listed = tmp_path / "replaced.txt"
    listed.write_text("\n".join(replaced) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    got = cli("run", "--checkpoint", "data/checkpoints/demo", "--base-inputs-changed", listed, "--out", out)
    assert got.code == 2, ("a PR's .gitattributes merged without a maintainer", got.code, got.err[-600:])
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [(c["kind"], c["key"]) for c in doc["gate_changes_vs_baseline"]] == [
        ("base_input", ".gitattributes")
    ]


@pytest.mark.parametrize(
    ("files", "listed"),
    [
        ({"baselines/.gitattributes": "* text eol=crlf\n"}, ["baselines/.gitattributes"]),
        ({"data/.GitAttributes": "* -text\n"}, ["data/.GitAttributes"]),
        ({".lfsconfig": "[lfs]\n\turl = https://example.invalid\n"}, [".lfsconfig"]),
        ({"docs/.gitmodules": '[submodule "x"]\n'}, ["docs/.gitmodules"]),
        ({"odd name/.gitattributes": "* text\n"}, ["odd_name/.gitattributes"]),
    ],
    ids=["in-the-baseline-folder", "another-case", "lfsconfig", "gitmodules", "a-name-with-a-space"],
)
def test_every_checkout_file_the_pr_changes_is_listed_as_a_gate_change(tmp_path, monkeypatch, files, listed):
    from helpers.hostile_repo import make_repo

    repo = make_repo(tmp_path, monkeypatch)
    assert play(repo, tmp_path, load("eval-gate.yml"), files, label=False) == listed
