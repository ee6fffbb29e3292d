"""The Action and the workflows: actionlint, GitHub's JSON schemas, the security structure, and the
shell steps that matter run for real against throwaway git repositories."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.paths import REPO

from evalgate import release
from evalgate.github.workflows import (
    badge_workflow,
    comment_workflow,
    update_baseline_apply_workflow,
    update_baseline_workflow,
    void_labels_workflow,
)

WORKFLOWS = REPO / ".github" / "workflows"
BIN = Path(sys.executable).parent  # the venv's bin: actionlint, check-jsonschema
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w.-]+)*@[0-9a-f]{40}$")  # owner/repo[/path]@sha


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
        "release.yml",
        "update-baseline-apply.yml",
        "update-baseline.yml",
        "void-labels.yml",
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


def test_the_gate_runs_on_every_pr_with_a_read_only_token_and_the_base_action():
    wf = load("eval-gate.yml")
    assert set(triggers(wf)) == {"pull_request"}
    # No paths filter: a required check skipped by one stays pending (docs/security.md).
    assert triggers(wf)["pull_request"] == {
        "types": ["opened", "synchronize", "reopened", "edited", "labeled", "unlabeled"]
    }
    assert all(not writes(job) for job in wf["jobs"].values())
    gate = step(wf, "Gate")
    # The base commit's action and Dockerfile, never `uses: ./`: the tree outside the workspace
    # (so the scoring container never sees it), its action.yml alone in the local action folder.
    assert gate["uses"] == "./.evalgate-action"
    assert gate["with"]["source"] == "${{ runner.temp }}/evalgate-base"
    install = step(wf, "base commit")["run"]
    assert 'worktree add -q --detach "$TRUSTED"' in install and 'cp -- "$TRUSTED/action.yml"' in install
    assert step(wf, "base commit")["env"]["TRUSTED"] == "${{ runner.temp }}/evalgate-base"
    assert gate["with"]["gate-changes"] == "${{ runner.temp }}/evalgate-gate-changes.diff"
    assert gate["with"]["base-inputs-changed"] == "${{ runner.temp }}/evalgate-base-inputs-changed.txt"
    assert "approve-gate-change" in gate["with"]["approve-gate-changes"]
    assert "worktree add" in step(wf, "base commit")["run"]
    upload = next(s for s in steps(wf) if "upload-artifact" in s.get("uses", ""))
    assert upload["if"] == "${{ !cancelled() && steps.scope.outputs.relevant == 'true' }}"
    assert all(line.rsplit("/", 1)[-1] != "" for line in upload["with"]["path"].split())  # files only
    record = step(wf, "Collect the report")
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
    assert '"$IMAGE" action' in gate["run"] and gate["env"]["INPUT_COMMENT"] == "false"
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


def base_sha(work: Path) -> str:
    return git("rev-parse", "origin/main", cwd=work).strip()


def restore_step(work: Path, approved: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    script = step(load("eval-gate.yml"), "from the base branch")["run"]
    diff = work.parent / "runner-temp" / "evalgate-gate-changes.diff"
    diff.parent.mkdir(exist_ok=True)
    env = dict(BASE_SHA=base_sha(work), APPROVED=approved, GATE_PATHS="baselines data/eval evalgate.yml")
    # What the base commit's pr_scope names: the configuration and the baseline it gates against.
    env.update(BASE_INPUTS="evalgate.yml baselines/demo.json", GATE_CHANGES=str(diff))
    env.update(REPLACED=str(diff.parent / "replaced.txt"), GITHUB_OUTPUT=str(diff.parent / "output"))
    # The label's history check runs with the base's evalgate (the test's venv plays it): without
    # it the step fails closed and takes none of the PR's files.
    env.update(VENV=str(Path(sys.executable).parent.parent))
    return bash(script, work, **env), diff


def test_the_gate_restores_config_and_baselines_from_the_base_branch(pr_checkout):
    result, diff = restore_step(pr_checkout, "false")
    assert result.returncode == 0, result.stderr
    assert (pr_checkout / "evalgate.yml").read_text(encoding="utf-8") == "gate:\n  tolerance: 0.02\n"
    assert (pr_checkout / "baselines" / "demo.json").read_text(encoding="utf-8") == '{"accuracy": 0.9}\n'
    text = diff.read_text(encoding="utf-8")
    assert "+  tolerance: 0.5" in text and "baselines/sneaky.json" in text
    assert not (pr_checkout / ".evalgate").exists()  # nothing is written into the PR's tree


def test_with_the_label_only_the_baseline_is_the_prs(pr_checkout):
    result, _ = restore_step(pr_checkout, "true")
    assert result.returncode == 0, result.stderr
    assert (pr_checkout / "evalgate.yml").read_text(encoding="utf-8") == "gate:\n  tolerance: 0.02\n"
    assert (pr_checkout / "baselines" / "demo.json").read_text(encoding="utf-8") == '{"accuracy": 0.1}\n'
    assert "evalgate:update-baseline" in result.stdout


def test_the_init_template_restores_the_base_inputs_as_this_repository_does():
    """`evalgate init` writes the gate workflow for other repositories: its step that restores the
    base's inputs is this repository's, word for word, and its scope step passes the same lines."""
    from evalgate.github.workflows import gate_workflow

    template = yaml.safe_load(gate_workflow("acme/evalgate@" + "a" * 40))
    ours = load("eval-gate.yml")
    name = "Take the configuration and the baselines"
    assert step(template, name)["run"] == step(ours, name)["run"]
    assert step(template, name)["env"] == step(ours, name)["env"]
    whitelist = re.compile(r"grep -E '\^\(relevant=.*\)\$'")
    scope = "Decide what the gate has to do"
    assert whitelist.findall(step(template, scope)["run"]) == whitelist.findall(step(ours, scope)["run"])
    assert "base-inputs=" in whitelist.findall(step(ours, scope)["run"])[0]
    assert step(template, "Gate")["with"]["gate-changes"] == step(ours, "Gate")["with"]["gate-changes"]


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


# -- issue 10: required check, exit codes, artifacts, LFS, copied workflows -------------------------

OWNED = ["badge.yml", "ci.yml", "eval-gate-sharded.yml", "eval-gate.yml", "release.yml"]


def test_ci_never_cancels_a_run_on_main():
    conc = load("ci.yml")["concurrency"]
    # Each run on main gets a group of its own: GitHub cancels a *pending* run that shares a group
    # even when cancel-in-progress is false.
    assert conc["group"] == "ci-${{ github.ref == 'refs/heads/main' && github.run_id || github.ref }}"
    assert conc["cancel-in-progress"] == "${{ github.ref != 'refs/heads/main' }}"


def test_artifacts_list_files_never_a_folder():
    uploads = [(n, s) for n in ALL for s in steps(load(n)) if "upload-artifact" in s.get("uses", "")]
    assert uploads
    for name, s in uploads:
        for path in str(s["with"]["path"]).splitlines():
            path = path.strip()
            assert not path.endswith("/") and "*" not in path, f"{name}: {path} is a folder or a glob"
            assert Path(path).suffix, f"{name}: {path} does not name a file"


@pytest.mark.parametrize("name", OWNED)
def test_workflows_check_out_with_lfs(name):
    checkouts = [s for s in steps(load(name)) if s.get("uses", "").startswith("actions/checkout@")]
    assert checkouts
    for s in checkouts:
        assert s["with"]["lfs"] is True and s["with"]["persist-credentials"] is False


def yaml_blocks(path: Path) -> list[str]:
    """The ```yaml blocks of a page, fenced with three backticks or more (a workflow that writes
    a code fence itself is fenced with four)."""
    return [
        m[1] for m in re.findall(r"^(`{3,})yaml\n(.*?)^\1$", path.read_text(encoding="utf-8"), re.S | re.M)
    ]


def test_copied_workflows_never_build_or_run_the_local_tree():
    blocks = yaml_blocks(REPO / "docs" / "github.md") + yaml_blocks(REPO / "README.md")
    workflows = [b for b in blocks if "jobs:" in b]
    assert len(workflows) >= 2
    for block in workflows:
        assert not re.search(r"uses:\s*\./", block), block[:200]
        assert "docker build" not in block
        wf = yaml.safe_load(block)
        for job in wf["jobs"].values():
            for s in job.get("steps", []):
                uses = s.get("uses", "")
                # a commit SHA, or the release pin init writes (its tag: docs/github.md)
                assert not uses or PINNED.match(uses.split(" ")[0]) or uses == release.action_ref()
    gate = yaml.safe_load(_docs_gate_block())
    assert "paths" not in triggers(gate)["pull_request"]
    assert any(s.get("uses", "") == release.action_ref() for s in steps(gate))


def _docs_gate_block() -> str:
    """docs/github.md's eval-gate workflow (the page has other YAML blocks, a zizmor policy)."""
    (block,) = [
        b for b in yaml_blocks(REPO / "docs" / "github.md") if re.search(r"^name: eval-gate$", b, re.M)
    ]
    return block


@pytest.mark.parametrize("code", [2, 3])
def test_the_sharded_merge_keeps_exit_codes_2_and_3(tmp_path, code):
    fake = tmp_path / "bin" / "docker"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\nexit {code}\n", encoding="utf-8")  # a refusal writes no report
    fake.chmod(0o755)
    summary = tmp_path / "summary.md"
    script = step(load("eval-gate-sharded.yml"), "Merge")["run"]
    env = {"PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}", "GITHUB_WORKSPACE": str(tmp_path)}
    result = bash(script, tmp_path, GITHUB_STEP_SUMMARY=str(summary), IMAGE="sha256:" + "a" * 64, **env)
    assert result.returncode == code, result.stderr
    assert f"exit code {code}" in summary.read_text(encoding="utf-8")


@pytest.mark.parametrize(("code", "approved"), [(0, "true"), (1, "false"), (2, "false")])
def test_the_approval_step_maps_evalgate_approvals_exit_code(tmp_path, code, approved):
    # `evalgate approval` (base commit's install) exits 0 approved, 1 not, 2 usage/API error.
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "evalgate").write_text(
        f'#!/bin/sh\necho "$PYTHONSAFEPATH $*" >> "{tmp_path}/calls"\nexit {code}\n', encoding="utf-8"
    )
    (venv_bin / "evalgate").chmod(0o755)
    output = tmp_path / "output"
    script = step(load("eval-gate.yml"), "maintainer approvals")["run"]
    env = dict(VENV=str(tmp_path / "venv"), GITHUB_OUTPUT=str(output), REPO="o/r", PR="7", HEAD_SHA="abc")
    result = bash(script, tmp_path, **env)
    assert result.returncode == 0, result.stderr
    assert output.read_text(encoding="utf-8").splitlines() == [
        f"approve-gate-change={approved}",
        f"update-baseline={approved}",
    ]
    calls = (tmp_path / "calls").read_text(encoding="utf-8").splitlines()
    assert calls[0] == "1 approval --repo o/r --pr 7 --sha abc --label evalgate:approve-gate-change"


def test_no_workflow_uses_actions_cache_and_prs_take_only_the_default_branchs_artifact():
    """docs/scoring.md, "Score cache": whoever writes the cache chooses the scores, and a pull
    request can write an actions/cache key in its own scope, which GitHub restores for it first. So
    no workflow uses actions/cache; the gate takes the artifact of badge.yml's run on a push to the
    default branch, found by the base commit's evalgate, into a fresh folder outside the workspace."""
    for name in ALL:
        uses = [s.get("uses", "") for s in steps(load(name))]
        assert not any(u.startswith("actions/cache") for u in uses), name
    gate, badge = load("eval-gate.yml"), load("badge.yml")
    assert gate["jobs"]["gate"]["permissions"]["actions"] == "read"
    find, download, unpack = (
        step(gate, "Find the default branch's score cache"),
        step(gate, "Download the default branch's score cache"),
        step(gate, "Unpack the score cache"),
    )
    assert 'python" -P -m evalgate.github.trusted_cache find' in find["run"]
    assert "--workflow .github/workflows/badge.yml --artifact evalgate-scores" in find["run"]
    assert "grep -E '^run-id=[0-9]+$'" in find["run"]
    assert download["uses"].startswith("actions/download-artifact@")
    assert download["with"] == {
        "name": "evalgate-scores",
        "path": unpack["env"]["ARTIFACT"],
        "run-id": "${{ steps.cache.outputs.run-id }}",
        "github-token": "${{ github.token }}",
    }
    assert (
        download["continue-on-error"] is True
        and unpack["env"]["DOWNLOADED"] == "${{ steps.download.outcome }}"
    )
    assert unpack["env"]["CACHE"].startswith("${{ runner.temp }}/")
    assert step(gate, "Gate")["with"]["cache"] == unpack["env"]["CACHE"]
    # badge.yml (pushes to main) is the one writer: it starts from its own last artifact, found the
    # same way, and uploads the whole as the artifact the gate looks for.
    assert set(triggers(badge)) == {"push"} and triggers(badge)["push"]["branches"] == ["main"]
    assert badge["jobs"]["gate"]["permissions"] == {"contents": "read", "actions": "read"}
    for name in ("Find", "Unpack the score cache"):
        ours = step(badge, name)
        assert ours["run"] == step(gate, name)["run"], name
    assert step(badge, "Find")["env"]["BASE_SHA"] == "${{ github.sha }}"
    assert step(badge, "Gate")["with"]["cache"] == step(badge, "Unpack the score cache")["env"]["CACHE"]
    pack, upload = step(badge, "Pack the score cache"), step(badge, "Upload the score cache")
    assert (
        "trusted_cache pack" in pack["run"] and pack["env"]["CACHE"] == step(badge, "Gate")["with"]["cache"]
    )
    assert upload["with"]["name"] == "evalgate-scores"
    assert upload["with"]["path"] == pack["env"]["PACKED"] + "/evalgate-scores.tar"


# -- issue 24: the templates `evalgate init` writes, and the packages next to a token ---------------

TEMPLATES = {
    "eval-gate-comment.yml": lambda: comment_workflow(TEMPLATE_PIN),
    "update-baseline.yml": lambda: update_baseline_workflow(TEMPLATE_PIN, "quiz"),
    "update-baseline-apply.yml": lambda: update_baseline_apply_workflow(TEMPLATE_PIN, "quiz"),
    "void-labels.yml": lambda: void_labels_workflow(TEMPLATE_PIN),
}
TEMPLATE_PIN = "acme/evalgate@0123456789abcdef0123456789abcdef01234567"


def _same_shape(wf: dict) -> dict:
    """A workflow with what may differ between this repository and a consumer's left out: step
    names, where the trusted checkout comes from (here: the base commit or this workflow's commit;
    there: the pinned release), and the suite name the baseline update writes."""
    out = {k: v for k, v in wf.items() if k != "jobs"}
    out["jobs"] = {}
    for name, job in wf["jobs"].items():
        job = {k: v for k, v in job.items() if k != "steps"}
        steps_ = []
        for s in wf["jobs"][name].get("steps", []):
            s = {k: v for k, v in s.items() if k != "name"}
            if s.get("with", {}).get("path") == "trusted":
                s["with"] = {k: v for k, v in s["with"].items() if k not in ("repository", "ref")}
            if "run" in s:
                s["run"] = s["run"].replace("baseline update --name quiz ", "baseline update ")
            steps_.append(s)
        job["steps"] = steps_
        out["jobs"][name] = job
    return out


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_the_init_templates_are_this_repositorys_workflows_pinned_to_a_release(name):
    """What `evalgate init` writes runs the same jobs, conditions, permissions, environments and
    scripts as this repository's workflow of the same name; only the trusted code's source differs."""
    template = yaml.safe_load(TEMPLATES[name]())
    assert _same_shape(template) == _same_shape(load(name))
    for job in template["jobs"].values():
        for s in job.get("steps", []):
            if s.get("with", {}).get("path") == "trusted":
                assert s["with"]["repository"] == "acme/evalgate" and s["with"]["ref"] == TEMPLATE_PIN[-40:]


def test_the_init_badge_is_this_repositorys_badge_run_from_the_pinned_release():
    """The badge `evalgate init` writes runs this repository's jobs, conditions, permissions and
    scripts; only evalgate's install (the pinned release, fetched outside the workspace, not this
    commit) and the Action (the release, not `uses: ./`) differ."""
    template, ours = yaml.safe_load(badge_workflow(TEMPLATE_PIN)), load("badge.yml")

    def shape(wf: dict) -> dict:
        out = _same_shape(wf)
        for s in out["jobs"]["gate"]["steps"]:
            if "pip" in s.get("run", ""):
                s["run"] = "install"
            if s.get("uses") in ("./", TEMPLATE_PIN):
                s["uses"] = "the action"
        return out

    assert shape(template) == shape(ours)
    install = next(s for s in template["jobs"]["gate"]["steps"] if "pip" in s.get("run", ""))["run"]
    repo, ref = TEMPLATE_PIN.split("@")
    assert f'fetch -q --depth 1 "https://github.com/{repo}" "{ref}"' in install
    assert "worktree add" not in install and "--require-hashes" in install
    assert step(template, "Gate")["uses"] == TEMPLATE_PIN


REQUIREMENTS = REPO / "docker" / "requirements.txt"
WORKFLOW_REQUIREMENTS = REPO / "docker" / "requirements-workflow.txt"


def _pins(path: Path) -> dict[str, str]:
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#")]
    return {re.split(r"==", ln, maxsplit=1)[0].lower().replace("_", "-"): ln for ln in lines}


def test_the_workflow_requirements_are_the_images_hash_locked_pins():
    """Each pin is the image's own line, hash included; the set is closed under dependencies."""
    pins, image = _pins(WORKFLOW_REQUIREMENTS), _pins(REQUIREMENTS)
    for name, line in pins.items():
        assert re.fullmatch(r"[A-Za-z0-9_.-]+==\S+ --hash=sha256:[0-9a-f]{64}", line), line
        assert image.get(name) == line, f"{name}: not the line of docker/requirements.txt"
    assert {"jsonschema", "pyyaml", "tabulate", "setuptools"} <= set(pins)
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    for name in pins:
        for spec in requires(name) or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": "", "python_version": "3.11"}):
                assert req.name.lower().replace("_", "-") in pins, f"{name} needs {req.name}"


def _only(tmp_path: Path, names: list[str]) -> Path:
    """A folder holding exactly these installed distributions (links to their files)."""
    from importlib.metadata import distribution

    site = tmp_path / "site"
    site.mkdir()
    for name in names:
        for top in {f.parts[0] for f in distribution(name).files or [] if f.parts[0] != ".."}:
            src = Path(str(distribution(name).locate_file(top)))
            if src.exists() and not (site / top).exists():
                (site / top).symlink_to(src)
    return site


def _comment_with_only(tmp_path: Path, names: list[str]) -> subprocess.CompletedProcess[str]:
    from helpers.github_standin import FakeGitHub
    from helpers.paths import GOLDEN

    sha = "ab" * 20
    report = tmp_path / "report"
    report.mkdir(parents=True)
    shutil.copy(GOLDEN / "REPORT-fail.results.json", report / "results.json")
    (report / "head.json").write_text(json.dumps({"head_sha": sha}), encoding="utf-8")
    api = FakeGitHub().start()
    head = {"sha": sha, "ref": "t", "repo": {"full_name": "o/r"}}
    api.pulls = [{"number": 12, "state": "open", "head": head}]
    try:
        env = {
            "PATH": os.environ["PATH"],
            "PYTHONPATH": f"{_only(tmp_path, names)}{os.pathsep}{REPO / 'src'}",
            "GITHUB_TOKEN": "ghs-installation",
            "GITHUB_API_URL": api.url,
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "NO_PROXY": "127.0.0.1",
        }
        # -S: no site-packages at all; only the listed distributions and evalgate's source.
        argv = [sys.executable, "-S", "-m", "evalgate", "comment", "--report", str(report), "--sha", sha]
        done = subprocess.run(
            [*argv, "--repo", "o/r", "--head-repo", "o/r", "--head-branch", "t"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        done.posted = api.by(12, "github-actions[bot]")  # type: ignore[attr-defined]
        return done
    finally:
        api.stop()


def test_evalgate_comment_runs_with_the_workflow_requirements_alone(tmp_path):
    """The comment job installs docker/requirements-workflow.txt and evalgate with --no-deps: that
    must be everything `evalgate comment` imports (a workflow once crashed with exit 3 for want of
    tabulate). Run with nothing else importable, it posts the comment; without tabulate it cannot."""
    names = [n for n in _pins(WORKFLOW_REQUIREMENTS) if n != "setuptools"]
    done = _comment_with_only(tmp_path / "all", names)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert len(done.posted) == 1 and "evalgate: fail" in done.posted[0]["body"]
    short = _comment_with_only(tmp_path / "short", [n for n in names if n != "tabulate"])
    assert short.returncode != 0 and "tabulate" in short.stderr


def test_the_gate_workflow_in_the_docs_is_the_one_init_writes():
    """docs/github.md's copy-paste gate workflow is `evalgate init`'s, line for line (comments aside):
    a reader who copies it gets the same restore step, cache rules and inputs as a bootstrapped
    repository."""
    from evalgate.github.workflows import gate_workflow

    written = [ln for ln in gate_workflow(release.action_ref()).splitlines() if not ln.startswith("#")]
    shown = _docs_gate_block()
    assert shown.strip().splitlines() == "\n".join(written).strip().splitlines()
