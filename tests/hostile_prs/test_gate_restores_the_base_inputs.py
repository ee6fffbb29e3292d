"""Hostile PR: the gate's configuration and baseline, replaced by the pull request's own (issue 24,
sections 2 and 3, and the init template's `.evalgate/`).

The gate workflow's step "Take the configuration and the baselines from the base branch" restores
exactly what the BASE configuration names (`base-inputs`, printed by the base commit's
`evalgate.github.pr_scope`: the configuration file and every baseline file, a symbolic link and its
target both), as the base commit's bytes, whatever the PR put at those paths or above them. With
the label `evalgate:update-baseline` approved, only the baseline files are the PR's. The diff it
shows is written outside the workspace.

Each case runs the step's real script with bash, from this repository's eval-gate.yml and from the
template `evalgate init` writes, in a throwaway git repository whose HEAD is the PR.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml
from helpers.workflow_steps import VENV, commit, git, load, outputs, run_script, step

from evalgate.github.workflows import gate_workflow

PIN = "acme/evalgate@" + "a" * 40
BASE_CONFIG = "baseline: eval/baseline.json\ngate:\n  tolerance: 0.02\n"
BASE_BASELINE = '{"accuracy": 0.9}\n'
PR_BASELINE = '{"accuracy": 0.1}\n'  # the regressed checkpoint's own numbers: it passes against them


class Link(str):
    """A symbolic link's target, as a tree's value."""


def workflows() -> dict[str, dict]:
    return {"eval-gate.yml": load("eval-gate.yml"), "init template": yaml.safe_load(gate_workflow(PIN))}


@pytest.fixture(params=["eval-gate.yml", "init template"])
def workflow(request) -> dict:
    return workflows()[request.param]


def write(root: Path, files: dict[str, str | None]) -> None:
    for rel, value in files.items():
        path = root / rel
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
        if value is None:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, Link):
            path.symlink_to(value)
        else:
            path.write_text(value, encoding="utf-8")


def pr_repo(tmp_path: Path, base: dict[str, str | None], pr: dict[str, str | None]) -> tuple[Path, str]:
    """A clone whose HEAD is the PR on top of the base commit: (its folder, the base SHA)."""
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    work = tmp_path / "work"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    write(work, base)
    base_sha = commit(work, "base")
    git("checkout", "-q", "-b", "pr", cwd=work)
    write(work, pr)
    commit(work, "pr")
    return work, base_sha


def restore(workflow: dict, work: Path, base_sha: str, inputs: str, *, approved: str = "false"):
    runner = work.parent / "runner-temp"
    runner.mkdir(exist_ok=True)
    script = step(workflow, "the baselines from the base branch")["run"]
    env = {
        "BASE_SHA": base_sha,
        "APPROVED": approved,
        "GATE_PATHS": "data/eval evalgate.yml",
        "BASE_INPUTS": inputs,
        "GATE_CHANGES": str(runner / "evalgate-gate-changes.diff"),
        "REPLACED": str(runner / "evalgate-base-inputs-changed.txt"),
        "GITHUB_OUTPUT": str(runner / "output"),
        "RUNNER_TEMP": str(runner),
        "VENV": str(VENV),  # the label's history check (history_scope) fails closed without it
    }
    return run_script(script, work, env), runner / "evalgate-gate-changes.diff"


def replaced(work: Path) -> list[str]:
    """What the restore step listed as changed by the PR and replaced by the base's copy."""
    return (
        (work.parent / "runner-temp" / "evalgate-base-inputs-changed.txt").read_text(encoding="utf-8").split()
    )


def text(path: Path) -> str:
    assert not path.is_symlink(), f"{path} is a link"
    return path.read_text(encoding="utf-8")


def test_a_baseline_kept_outside_baselines_is_the_base_commits(tmp_path, workflow):
    """Attack: the base configuration keeps its baseline at eval/baseline.json; the PR rewrites that
    file with the regressed checkpoint's numbers (and its own evalgate.yml), and the restore of
    `evalgate.yml` and `baselines/` alone leaves the PR's baseline in place."""
    base = {"evalgate.yml": BASE_CONFIG, "eval/baseline.json": BASE_BASELINE, "data/eval/p.jsonl": "{}\n"}
    pr = {"eval/baseline.json": PR_BASELINE, "evalgate.yml": "baseline: eval/baseline.json\n"}
    work, base_sha = pr_repo(tmp_path, base, pr)
    done, diff = restore(workflow, work, base_sha, "evalgate.yml eval/baseline.json")
    assert done.returncode == 0, done.stderr
    assert text(work / "eval/baseline.json") == BASE_BASELINE
    assert text(work / "evalgate.yml") == BASE_CONFIG
    # The report still shows what the PR changed in its gate.
    assert "+" + PR_BASELINE.strip() in text(diff) and "eval/baseline.json" in text(diff)
    # And each replaced file is a gate change for the run: once merged, the PR's would count.
    assert replaced(work) == ["evalgate.yml", "eval/baseline.json"]


def test_links_and_files_in_place_of_the_base_inputs_are_replaced_never_followed(tmp_path, workflow):
    """Attack: the PR puts a symbolic link where the baseline (or a folder above it, or the
    configuration) is, pointing at a file it controls or at a runner file, so that restoring the
    base's bytes either reads the PR's numbers or writes through the link."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "baseline.json").write_text(PR_BASELINE, encoding="utf-8")
    (outside / "runner-file").write_text("RUNNER\n", encoding="utf-8")
    base = {
        "evalgate.yml": BASE_CONFIG.replace("eval/baseline.json", "eval/deep/baseline.json"),
        "eval/deep/baseline.json": BASE_BASELINE,
        "eval/keep.txt": "base\n",
        "baselines/current.json": Link("v3.json"),  # a link at base: restored as that link
        "baselines/v3.json": BASE_BASELINE,
        "gone.json": None,
    }
    pr = {
        "evalgate.yml": Link(str(outside / "runner-file")),
        "eval/deep": Link(str(outside)),  # a folder above the baseline, now a link out of the tree
        "baselines/current.json": Link("v4.json"),
        "baselines/v4.json": PR_BASELINE,
        "baselines/v3.json": Link(str(outside / "runner-file")),
        "gone.json": PR_BASELINE,  # named at base (a link's target, say), absent there
    }
    work, base_sha = pr_repo(tmp_path, base, pr)
    inputs = "evalgate.yml eval/deep/baseline.json baselines/current.json baselines/v3.json gone.json"
    done, _ = restore(workflow, work, base_sha, inputs)
    assert done.returncode == 0, done.stderr
    assert text(work / "evalgate.yml") == base["evalgate.yml"]
    assert not (work / "eval/deep").is_symlink() and text(work / "eval/deep/baseline.json") == BASE_BASELINE
    assert os.readlink(work / "baselines/current.json") == "v3.json"
    assert text(work / "baselines/v3.json") == BASE_BASELINE
    assert not (work / "gone.json").exists()
    # Nothing outside the workspace was written or removed.
    assert sorted(p.name for p in outside.iterdir()) == ["baseline.json", "runner-file"]
    assert (outside / "runner-file").read_text(encoding="utf-8") == "RUNNER\n"
    assert (outside / "baseline.json").read_text(encoding="utf-8") == PR_BASELINE


def test_a_folder_named_at_base_is_restored_file_by_file(tmp_path, workflow):
    """Attack: the base names a folder (every file of it is read); the PR adds a file to it, edits
    one, and replaces a subfolder with a link out of the tree."""
    outside = tmp_path / "outside"
    outside.mkdir()
    base = {
        "evalgate.yml": BASE_CONFIG,
        "baselines/demo.json": BASE_BASELINE,
        "baselines/old/v1.json": BASE_BASELINE,
        "baselines/latest.json": Link("demo.json"),
    }
    pr = {
        "baselines/demo.json": PR_BASELINE,
        "baselines/extra.json": PR_BASELINE,
        "baselines/old": Link(str(outside)),
    }
    work, base_sha = pr_repo(tmp_path, base, pr)
    done, _ = restore(workflow, work, base_sha, "evalgate.yml baselines")
    assert done.returncode == 0, done.stderr
    files = sorted(str(p.relative_to(work)) for p in (work / "baselines").rglob("*"))
    assert files == ["baselines/demo.json", "baselines/latest.json", "baselines/old", "baselines/old/v1.json"]
    assert text(work / "baselines/demo.json") == text(work / "baselines/old/v1.json") == BASE_BASELINE
    assert os.readlink(work / "baselines/latest.json") == "demo.json"
    assert list(outside.iterdir()) == []


def test_the_prs_gitattributes_cannot_rewrite_the_restored_bytes(tmp_path, workflow):
    """Attack: the PR adds a .gitattributes whose attributes (a working-tree encoding, end-of-line
    conversion) would change the base's baseline as git checks it out."""
    base = {"evalgate.yml": BASE_CONFIG, "eval/baseline.json": BASE_BASELINE}
    attributes = "*.json working-tree-encoding=UTF-16LE-BOM eol=crlf\n*.yml eol=crlf\n"
    pr = {".gitattributes": attributes, "eval/baseline.json": PR_BASELINE}
    work, base_sha = pr_repo(tmp_path, base, pr)
    done, _ = restore(workflow, work, base_sha, "evalgate.yml eval/baseline.json")
    assert done.returncode == 0, done.stderr
    assert (work / "eval/baseline.json").read_bytes() == BASE_BASELINE.encode()
    assert (work / "evalgate.yml").read_bytes() == BASE_CONFIG.encode()


def test_the_update_baseline_label_takes_the_prs_baseline_and_never_its_configuration(tmp_path, workflow):
    """Attack: with the label evalgate:update-baseline approved (for a new baseline), the PR's
    evalgate.yml loosens the tolerance and points elsewhere, and the whole configuration is
    taken from the PR."""
    base = {
        "evalgate.yml": Link("conf/gate.yml"),  # the configuration through a link of the base
        "conf/gate.yml": BASE_CONFIG,
        "eval/baseline.json": BASE_BASELINE,
        "eval/other.json": BASE_BASELINE,
    }
    loose = "baseline: eval/other.json\ngate:\n  tolerance: 0.5\n"
    pr = {
        "evalgate.yml": loose,
        "conf/gate.yml": loose,
        "eval/baseline.json": PR_BASELINE,
        "eval/other.json": "{}\n",
    }
    work, base_sha = pr_repo(tmp_path, base, pr)
    inputs = "evalgate.yml conf/gate.yml eval/baseline.json"
    done, _ = restore(workflow, work, base_sha, inputs, approved="true")
    assert done.returncode == 0, done.stderr
    assert os.readlink(work / "evalgate.yml") == "conf/gate.yml"
    assert text(work / "conf/gate.yml") == BASE_CONFIG  # tolerance 0.02: the base's
    assert text(work / "eval/baseline.json") == PR_BASELINE  # what the label approves
    assert "gating against this PR's eval/baseline.json" in done.stdout
    assert "conf/gate.yml" not in done.stdout
    # The configuration the PR changed is a gate change; the baseline it takes is checked instead.
    assert replaced(work) == ["evalgate.yml", "conf/gate.yml"]  # the PR made the link a file
    assert outputs(work.parent / "runner-temp" / "output").get("verify-baseline") == "true"
    # Without the label, the baseline is the base's too.
    git("checkout", "-q", "-f", "pr", cwd=work)
    (work.parent / "runner-temp" / "output").unlink()
    done, _ = restore(workflow, work, base_sha, inputs, approved="false")
    assert done.returncode == 0, done.stderr
    assert text(work / "eval/baseline.json") == BASE_BASELINE
    assert replaced(work) == ["evalgate.yml", "conf/gate.yml", "eval/baseline.json"]
    assert "verify-baseline" not in outputs(work.parent / "runner-temp" / "output")


def test_a_committed_evalgate_folder_is_never_written_through(tmp_path, workflow):
    """Attack: the PR commits `.evalgate` as a symbolic link to a folder outside the workspace (or
    `.evalgate/gate-changes.diff` as a link to a runner file), where the step writes its diff."""
    target = tmp_path / "runner-files"
    target.mkdir()
    (target / "gate-changes.diff").write_text("RUNNER\n", encoding="utf-8")
    base = {"evalgate.yml": BASE_CONFIG, "eval/baseline.json": BASE_BASELINE}
    for pr in (
        {".evalgate": Link(str(target)), "eval/baseline.json": PR_BASELINE},
        {".evalgate/gate-changes.diff": Link(str(target / "gate-changes.diff")), "evalgate.yml": "x: 1\n"},
    ):
        case = tmp_path / f"case{len(list(tmp_path.glob('case*')))}"
        case.mkdir()
        work, base_sha = pr_repo(case, base, pr)
        done, diff = restore(workflow, work, base_sha, "evalgate.yml eval/baseline.json")
        assert done.returncode == 0, done.stderr
        assert (target / "gate-changes.diff").read_text(encoding="utf-8") == "RUNNER\n"
        assert sorted(p.name for p in target.iterdir()) == ["gate-changes.diff"]
        assert diff.is_file() and not diff.is_symlink() and "diff --git" in text(diff)


@pytest.mark.parametrize(
    "inputs",
    ["", "evalgate.yml ../etc/passwd", "evalgate.yml eval//baseline.json", "evalgate.yml ./evalgate.yml"],
)
def test_no_base_inputs_or_a_path_that_is_not_plain_is_refused(tmp_path, workflow, inputs):
    """A base commit whose evalgate does not name its inputs gates against nothing the PR wrote."""
    work, base_sha = pr_repo(tmp_path, {"evalgate.yml": BASE_CONFIG}, {"evalgate.yml": "x: 1\n"})
    done, _ = restore(workflow, work, base_sha, inputs)
    assert done.returncode == 2 and "::error" in done.stdout
    assert text(work / "evalgate.yml") == "x: 1\n"  # and the gate never runs (the step failed)


def test_the_scope_step_passes_base_inputs_on_and_nothing_else(tmp_path, workflow):
    """The base commit's pr_scope prints `base-inputs=`; the step's whitelist lets it (and only
    plain lines) reach GITHUB_OUTPUT. A stand-in for the base's evalgate prints what it will."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(
        "#!/bin/sh\nprintf 'relevant=true\\ngate-paths=data/eval evalgate.yml\\n"
        "base-inputs=evalgate.yml eval/baseline.json\\nBASH_ENV=/tmp/x\\nbase-inputs=a;b\\n'\n",
        encoding="utf-8",
    )
    python.chmod(0o755)
    out = tmp_path / "output"
    env = {"VENV": str(venv), "BASE_SHA": "0" * 40, "GITHUB_OUTPUT": str(out)}
    done = run_script(step(workflow, "Decide what the gate has to do")["run"], tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8").splitlines() == [
        "relevant=true",
        "gate-paths=data/eval evalgate.yml",
        "base-inputs=evalgate.yml eval/baseline.json",
    ]
    assert outputs(out)["base-inputs"] == "evalgate.yml eval/baseline.json"


def test_the_diff_reaches_the_gate_from_outside_the_workspace(workflow):
    gate = step(workflow, "Gate")
    restore_env = step(workflow, "the baselines from the base branch")["env"]
    assert gate["with"]["gate-changes"] == restore_env["GATE_CHANGES"]
    assert gate["with"]["gate-changes"].startswith("${{ runner.temp }}/")
    assert ".evalgate/" not in yaml.safe_dump(workflow)
