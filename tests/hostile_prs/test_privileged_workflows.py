"""Hostile pull requests (and writers) against the workflows that hold a write token or a secret:
release.yml, update-baseline-apply.yml, eval-gate-comment.yml and void-labels.yml.

Each case drives the workflow's real `run:` script, taken from the YAML and run with bash, with
fakes only for what a runner has and this machine must not touch (`docker`, `gh`), a real git
repository where git decides, and the GitHub stand-in on 127.0.0.1 (helpers.github_standin) for
API calls. What only GitHub evaluates (a job's `if:`) is evaluated with GitHub's expression rules
(helpers.actions_expr). docs/security.md, docs/approval.md and docs/github.md say why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.actions_expr import condition
from helpers.github_standin import FakeGitHub
from helpers.paths import REPO

WORKFLOWS = REPO / ".github" / "workflows"
GH_REPO = "octo/gate"
SHA = "ab" * 20
PR = 31


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def step(job: dict[str, Any], name_part: str) -> dict[str, Any]:
    return next(s for s in job["steps"] if name_part in s.get("name", ""))


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A `run:` step as GitHub runs one without `shell:` (bash -e), with the step's env."""
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-e", "-c", script],
        cwd=cwd,
        env={**os.environ, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def need(*tools: str) -> None:
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        pytest.skip(f"not installed here: {', '.join(missing)} (every GitHub runner has them)")


def fake(bin_dir: Path, name: str, body: str) -> None:
    """A stand-in executable: a Python script that logs its argv to FAKE_LOG, then runs `body`."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text(
        f"#!{sys.executable}\nimport json, os, sys\nfrom pathlib import Path\nargv = sys.argv[1:]\n"
        f"with open(os.environ['FAKE_LOG'], 'a') as log:\n"
        f"    log.write(json.dumps([{name!r}, *argv]) + '\\n')\n{body}\n",
        encoding="utf-8",
    )
    path.chmod(0o755)


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


# -- release.yml: only a commit of the default branch is released ----------------------------------


@pytest.fixture
def tagged(tmp_path) -> dict[str, Any]:
    """origin (bare, default branch main), a commit on main and one on a writer's own branch."""
    need("git")
    origin = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(origin), cwd=tmp_path)
    seed = tmp_path / "seed"
    git("init", "-q", "-b", "main", str(seed), cwd=tmp_path)
    (seed / "README.md").write_text("evalgate\n", encoding="utf-8")
    git("add", ".", cwd=seed)
    git("commit", "-q", "-m", "merged and reviewed", cwd=seed)
    on_main = git("rev-parse", "HEAD", cwd=seed).strip()
    git("push", "-q", str(origin), "main", cwd=seed)
    git("checkout", "-q", "-b", "mine", cwd=seed)
    (seed / ".github").mkdir()
    (seed / ".github" / "release.yml").write_text("# a release.yml of my own\n", encoding="utf-8")
    git("add", ".", cwd=seed)
    git("commit", "-q", "-m", "not reviewed", cwd=seed)
    off_main = git("rev-parse", "HEAD", cwd=seed).strip()
    git("push", "-q", str(origin), "mine", cwd=seed)
    return {"origin": origin, "seed": seed, "on_main": on_main, "off_main": off_main, "tmp": tmp_path}


def release_check(tagged: dict[str, Any], job: str, tag: str, sha: str) -> subprocess.CompletedProcess[str]:
    """The release job's ancestry check, run in a checkout of `sha` as actions/checkout leaves it."""
    work = tagged["tmp"] / f"work-{job}-{tag}"
    git("clone", "-q", str(tagged["origin"]), str(work), cwd=tagged["tmp"])
    git("checkout", "-q", "--detach", sha, cwd=work)
    script = step(load("release.yml")["jobs"][job], "not on the default branch")["run"]
    env = {
        "GH_TOKEN": "ghs-installation",
        "REMOTE": str(tagged["origin"]),
        "DEFAULT_BRANCH": "main",
        "TAG": tag,
        "GITHUB_SHA": sha,
        "GITHUB_STEP_SUMMARY": str(tagged["tmp"] / "summary.md"),
    }
    return bash(script, work, env)


@pytest.mark.parametrize("job", ["verify", "image"])
def test_a_tag_on_a_commit_off_the_default_branch_is_not_released(tagged, job):
    """A writer tags a commit of their own branch `v6.6.6` (its release.yml and Dockerfile are theirs):
    the release job refuses it before building or publishing anything."""
    git("tag", "v6.6.6", tagged["off_main"], cwd=tagged["seed"])
    git("push", "-q", str(tagged["origin"]), "v6.6.6", cwd=tagged["seed"])
    refused = release_check(tagged, job, "v6.6.6", tagged["off_main"])
    assert refused.returncode != 0
    assert "is not a commit of main" in refused.stdout and "::error" in refused.stdout
    # The same check passes a maintainer's annotated tag on a merged commit.
    git("tag", "-a", "-m", "v1.2.3", "v1.2.3", tagged["on_main"], cwd=tagged["seed"])
    git("push", "-q", str(tagged["origin"]), "v1.2.3", cwd=tagged["seed"])
    released = release_check(tagged, job, "v1.2.3", tagged["on_main"])
    assert released.returncode == 0, released.stdout + released.stderr
    assert "a commit of main" in (tagged["tmp"] / "summary.md").read_text(encoding="utf-8")
    # In the image job the check comes right after the checkout: before any build or login.
    names = [s.get("name", s.get("uses", "")) for s in load("release.yml")["jobs"]["image"]["steps"]]
    check = next(i for i, n in enumerate(names) if "not on the default branch" in n)
    assert check == 1 and names[0].startswith("actions/checkout@")


def test_a_tag_moved_after_the_push_is_not_released(tagged):
    """The tag is moved to another commit while the run waits for its reviewers: the run's commit is
    no longer what the tag names, so it is refused."""
    git("tag", "v2.0.0", tagged["on_main"], cwd=tagged["seed"])
    git("push", "-q", str(tagged["origin"]), "v2.0.0", cwd=tagged["seed"])
    git("tag", "-f", "v2.0.0", tagged["off_main"], cwd=tagged["seed"])
    git("push", "-q", "-f", str(tagged["origin"]), "v2.0.0", cwd=tagged["seed"])
    refused = release_check(tagged, "image", "v2.0.0", tagged["on_main"])
    assert refused.returncode != 0 and "names " + tagged["off_main"] in refused.stdout


def test_the_release_job_runs_only_in_the_protected_environment():
    """Without an environment any writer's tag would publish at once; with it, a maintainer approves
    each release, and the job waits for the ancestry check."""
    jobs = load("release.yml")["jobs"]
    image = jobs["image"]
    assert image["environment"] == "release" and image["needs"] == "verify"
    assert {"packages", "id-token", "contents"} <= {
        k for k, v in image["permissions"].items() if v == "write"
    }
    assert not any(v == "write" for v in jobs["verify"]["permissions"].values())
    assert "environment" not in jobs["verify"]


class EnvironmentGitHub(FakeGitHub):
    """The stand-in, answering GET /repos/O/R/environments/NAME from `environments` (else 404)."""

    def __init__(self) -> None:
        super().__init__()
        self.environments: dict[str, dict[str, Any]] = {}

    def route(self, method, path, payload, who):
        prefix = f"/repos/{GH_REPO}/environments/"
        if method == "GET" and path.startswith(prefix):
            env = self.environments.get(path[len(prefix) :])
            return (200, env, {}) if env else (404, {"message": "Not Found"}, {})
        return super().route(method, path, payload, who)


REVIEWERS = {"type": "required_reviewers", "reviewers": [{"type": "Team", "reviewer": {"slug": "maint"}}]}


@pytest.mark.parametrize(
    ("environment", "why"),
    [
        (None, "cannot be read (HTTP 404)"),
        ({"protection_rules": [], "deployment_branch_policy": None}, "no required reviewers"),
        ({"protection_rules": [REVIEWERS], "deployment_branch_policy": None}, "any branch or tag"),
    ],
    ids=["missing", "auto-created", "no-tag-policy"],
)
def test_an_unprotected_release_environment_stops_the_release(tmp_path, environment, why):
    """The `release` environment was never configured (GitHub creates a missing one, unprotected, when
    a job names it): the run is refused instead of publishing without anyone's approval."""
    need("curl", "jq")
    api = EnvironmentGitHub().start()
    try:
        if environment is not None:
            api.environments["release"] = environment
        script = step(load("release.yml")["jobs"]["verify"], "unprotected release environment")["run"]
        env = {"GH_TOKEN": "ghs-installation", "REPO": GH_REPO, "GITHUB_API_URL": api.url}
        refused = bash(script, tmp_path, env)
        assert refused.returncode != 0 and why in refused.stdout, refused.stdout + refused.stderr
        api.environments["release"] = {
            "protection_rules": [REVIEWERS, {"type": "branch_policy"}],
            "deployment_branch_policy": {"protected_branches": False, "custom_branch_policies": True},
        }
        passed = bash(script, tmp_path, env)
        assert passed.returncode == 0, passed.stdout + passed.stderr
    finally:
        api.stop()


# -- eval-gate-comment.yml: only the gate's own workflow file ---------------------------------------


def workflow_run(path: str, event: str = "pull_request", **extra: Any) -> dict[str, Any]:
    run = {
        "path": path,
        "event": event,
        "conclusion": "success",
        "repository": {"full_name": GH_REPO},
        "head_repository": {"full_name": GH_REPO},
        "head_branch": "tune",
        "head_sha": SHA,
        "actor": {"login": "maint"},
        **extra,
    }
    return {"github": {"repository": GH_REPO, "event": {"workflow_run": run}}}


def comment_refusal(tmp_path: Path, context: dict[str, Any]) -> bool:
    """Whether eval-gate-comment.yml refuses this run: its job's `if:` (GitHub), or its first step."""
    job = load("eval-gate-comment.yml")["jobs"]["comment"]
    if not condition(job["if"], context):
        return True
    run = context["github"]["event"]["workflow_run"]
    first = job["steps"][0]
    assert first["name"] == "Refuse a run of any other workflow file"
    env = {"RUN_PATH": run["path"], "RUN_EVENT": run["event"], "RUN_REPO": run["repository"]["full_name"]}
    result = bash(first["run"], tmp_path, {**env, "REPO": GH_REPO})
    return result.returncode != 0


@pytest.mark.parametrize(
    "path",
    [".github/workflows/evil.yml", ".github/workflows/Eval-Gate.yml", ".github/workflows/eval-gate.yaml"],
)
def test_the_comment_workflow_refuses_another_file_named_eval_gate(tmp_path, path):
    """A PR adds its own workflow named `eval-gate` (same name, another file, even the same name in
    other letter case, which an `if:` compares as equal) that uploads an `evalgate-report` saying
    pass: the comment job, holding a write token, posts nothing from it."""
    assert comment_refusal(tmp_path, workflow_run(path))
    assert comment_refusal(tmp_path, workflow_run(".github/workflows/eval-gate.yml", "push"))
    assert comment_refusal(tmp_path, workflow_run(".github/workflows/eval-gate.yml", "workflow_dispatch"))
    assert not comment_refusal(tmp_path, workflow_run(".github/workflows/eval-gate.yml"))


# -- update-baseline-apply.yml: only a run of update-baseline.yml, for a PR of this repository ----


@pytest.fixture
def api():
    server = FakeGitHub().start()
    server.pulls = [
        {"number": PR, "state": "open", "head": {"sha": SHA, "ref": "tune", "repo": {"full_name": GH_REPO}}},
        {
            "number": 7,
            "state": "open",
            "head": {"sha": "cd" * 20, "ref": "other", "repo": {"full_name": GH_REPO}},
        },
    ]
    yield server
    server.stop()


def apply_check(tmp_path: Path, api: FakeGitHub, job: str, run: dict[str, Any], approves: bool = True):
    """The apply workflow's "which run, which PR, approved?" step, with a fake `evalgate` in VENV."""
    need("curl", "jq")
    venv = tmp_path / "venv"
    fake(venv / "bin", "evalgate", f"sys.exit({0 if approves else 1})")
    log, output = tmp_path / "calls.log", tmp_path / "output"
    log.unlink(missing_ok=True)
    output.write_text("", encoding="utf-8")
    script = step(load("update-baseline-apply.yml")["jobs"][job], "does the label approve")["run"]
    env = {
        "VENV": str(venv),
        "FAKE_LOG": str(log),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_API_URL": api.url,
        "GITHUB_TOKEN": "ghs-installation",
        "REPO": GH_REPO,
        "RUN_PATH": run["path"],
        "RUN_EVENT": run["event"],
        "RUN_REPO": run["repository"]["full_name"],
        "HEAD_REPO": run["head_repository"]["full_name"],
        "HEAD_BRANCH": run["head_branch"],
        "HEAD_SHA": run["head_sha"],
    }
    result = bash(script, tmp_path, env)
    return result, calls(log), output.read_text(encoding="utf-8")


HOSTILE_RUNS = {
    "another-file": workflow_run(".github/workflows/evil.yml"),
    "same-name-other-case": workflow_run(".github/workflows/Update-Baseline.yml"),
    "not-a-pull-request": workflow_run(".github/workflows/update-baseline.yml", "workflow_dispatch"),
    "a-fork": workflow_run(
        ".github/workflows/update-baseline.yml", head_repository={"full_name": "mallory/gate"}
    ),
}


@pytest.mark.parametrize("job", ["check", "push"])
@pytest.mark.parametrize("attack", sorted(HOSTILE_RUNS))
def test_the_push_workflow_refuses_a_run_that_is_not_update_baseline_of_this_repository(
    tmp_path, api, job, attack
):
    """A PR adds a workflow (or dispatches one, or comes from a fork) to start the baseline push for
    a head no maintainer approved: neither the job's `if:` nor, where GitHub's case-blind compare
    lets it through, the step's exact check lets it reach the approval check or the push."""
    context = HOSTILE_RUNS[attack]
    jobs = load("update-baseline-apply.yml")["jobs"]
    assert condition(jobs["check"]["if"], context) is (attack == "same-name-other-case")
    result, seen, output = apply_check(tmp_path, api, job, context["github"]["event"]["workflow_run"])
    assert result.returncode != 0 and "::error" in result.stdout
    assert seen == [] and "pr=" not in output  # no approval asked, no PR named for the push


@pytest.mark.parametrize("job", ["check", "push"])
def test_the_push_workflow_finds_the_pr_through_the_api_and_asks_the_trusted_approval(tmp_path, api, job):
    """The genuine run: the PR is the open PR whose head is that branch at that SHA (from the API,
    never from anything the run wrote), and the default branch's evalgate decides."""
    run = workflow_run(".github/workflows/update-baseline.yml")
    assert condition(load("update-baseline-apply.yml")["jobs"]["check"]["if"], run)
    result, seen, output = apply_check(tmp_path, api, job, run["github"]["event"]["workflow_run"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert seen == [
        [
            "evalgate",
            "approval",
            "--repo",
            GH_REPO,
            "--pr",
            str(PR),
            "--sha",
            SHA,
            "--label",
            "evalgate:update-baseline",
        ]
    ]
    assert output == f"pr={PR}\n"
    # The label does not approve (or no longer approves) that head: nothing is named for the push.
    result, seen, output = apply_check(
        tmp_path, api, job, run["github"]["event"]["workflow_run"], approves=False
    )
    assert result.returncode != 0 and len(seen) == 1 and output == ""


@pytest.mark.parametrize("case", ["moved-on", "two-prs", "other-branch-same-sha"])
def test_the_push_workflow_never_guesses_the_pr(tmp_path, api, case):
    """The head moved since the label (no open PR has that head any more), two PRs share the branch,
    or only a PR from another branch has that SHA: refused, nothing pushed anywhere."""
    if case == "moved-on":
        api.pulls[0]["head"]["sha"] = "ef" * 20
    elif case == "two-prs":
        api.pulls.append({**api.pulls[0], "number": 99})
    else:
        api.pulls[0]["head"]["ref"] = "someone-elses"
    run = workflow_run(".github/workflows/update-baseline.yml")
    result, seen, output = apply_check(tmp_path, api, "push", run["github"]["event"]["workflow_run"])
    assert result.returncode != 0 and seen == [] and output == ""


def test_the_push_workflow_uses_nothing_the_triggering_run_wrote():
    """A PR edits its own copy of update-baseline.yml to upload a baseline of its choosing: the apply
    workflow scores the labelled commit itself and downloads artifacts of its own run only."""
    wf = load("update-baseline-apply.yml")
    on = wf.get("on", wf.get(True))
    assert on == {"workflow_run": {"workflows": ["update-baseline"], "types": ["completed"]}}
    for job in wf["jobs"].values():
        for s in job.get("steps", []):
            if "download-artifact" in s.get("uses", ""):
                assert "run-id" not in s.get("with", {}) and "github-token" not in s.get("with", {})
    assert wf["jobs"]["push"]["environment"] == "baseline-push"
    assert wf["jobs"]["push"]["needs"] == ["check", "score"]
    # The secret is named only by the environment's job; the PR-triggered request holds no secret.
    for name in ("update-baseline.yml", "void-labels.yml", "eval-gate.yml"):
        assert "secrets." not in (WORKFLOWS / name).read_text(encoding="utf-8"), name
    assert (WORKFLOWS / "update-baseline-apply.yml").read_text(encoding="utf-8").count("secrets.") == 1


# -- the baseline is scored by image id ---------------------------------------------------------------

FAKE_DOCKER = """
if argv[0] == "build":
    iid = argv[argv.index("--iidfile") + 1]
    Path(iid).write_text(os.environ.get("FAKE_IID", "sha256:" + "5e" * 32))
sys.exit(0)
"""


@pytest.mark.parametrize("planted", [False, True])
def test_the_baseline_job_runs_the_image_it_built_by_id(tmp_path, planted):
    """An earlier job on the runner planted an image under the tag the job used to run
    (`evalgate:base`): the job runs the id its own build wrote, never a name; an id file that is not
    an image id stops it before anything runs."""
    bin_dir, log, temp = tmp_path / "bin", tmp_path / "docker.log", tmp_path / "temp"
    temp.mkdir()
    (tmp_path / "pr" / "baselines").mkdir(parents=True)
    fake(bin_dir, "docker", FAKE_DOCKER)
    score = load("update-baseline-apply.yml")["jobs"]["score"]
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_LOG": str(log),
        "RUNNER_TEMP": str(temp),
        "GITHUB_WORKSPACE": str(tmp_path),
        "PR": str(PR),
        "SHA": SHA,
    }
    if planted:
        env["FAKE_IID"] = "evalgate:base"  # what a tampered build would leave: a name, not an id
    assert bash(step(score, "Build the evalgate image")["run"], tmp_path, env).returncode == 0
    ran = bash(step(score, "Regenerate the baseline")["run"], tmp_path, env)
    (build, *rest) = calls(log)
    assert build[:2] == ["docker", "build"] and "--iidfile" in build
    assert not {"-t", "--tag"} & set(build)
    if planted:
        assert ran.returncode == 3 and rest == []
        return
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (run,) = rest
    image = "sha256:" + "5e" * 32
    assert run[:2] == ["docker", "run"] and run[run.index(image) + 1 :] == [
        "baseline", "update", "--pr", str(PR), "--commit", SHA,
    ]  # fmt: skip
    assert "--network" in run and run[run.index("--network") + 1] == "none"
    assert not any(arg.startswith("evalgate:") for arg in run)


# -- void-labels.yml: the labels go at once, whatever else is running -------------------------------


def concurrency_group(wf: dict[str, Any]) -> str:
    return str((wf.get("concurrency") or {}).get("group", ""))


def test_the_labels_are_removed_on_a_push_without_waiting_for_scoring(tmp_path):
    """A writer pushes a new commit onto a labelled PR while a 60-minute scoring job holds the update
    workflow's concurrency group: the approval labels are removed at once, not after scoring."""
    void = load("void-labels.yml")
    assert void.get("on", void.get(True)) == {
        "pull_request": {"types": ["synchronize", "reopened", "edited"]}
    }
    (job,) = void["jobs"].values()
    assert "needs" not in job and "concurrency" not in job
    group = concurrency_group(void)
    assert "github.run_id" in group  # a group of its own per run: it never waits for another run
    for other in sorted(WORKFLOWS.glob("*.yml")):
        if other.name != "void-labels.yml":
            assert concurrency_group(load(other.name)).split("$")[0] != group.split("$")[0], other.name
    # Nothing that scores shares its workflow, and the request holds no `synchronize` run to queue.
    assert "docker" not in (WORKFLOWS / "void-labels.yml").read_text(encoding="utf-8")
    request = load("update-baseline.yml")
    assert request.get("on", request.get(True)) == {"pull_request": {"types": ["labeled"]}}
    # And its script removes both labels, through the API.
    bin_dir, log = tmp_path / "bin", tmp_path / "gh.log"
    fake(bin_dir, "gh", "sys.exit(int(os.environ.get('FAKE_RC', '0')))")
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_LOG": str(log),
        "GH_TOKEN": "t",
        "REPO": GH_REPO,
        "PR": str(PR),
        "LABELS": "bug evalgate:update-baseline evalgate:approve-gate-change",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    script = step(job, "Remove the approval labels")["run"]
    assert bash(script, tmp_path, env).returncode == 0
    labels = f"repos/{GH_REPO}/issues/{PR}/labels"
    assert calls(log) == [
        ["gh", "api", "--method", "DELETE", f"{labels}/evalgate%3Aupdate-baseline", "--silent"],
        ["gh", "api", "--method", "DELETE", f"{labels}/evalgate%3Aapprove-gate-change", "--silent"],
    ]
    failed = bash(script, tmp_path, {**env, "FAKE_RC": "1"})
    assert failed.returncode == 1 and "remove it by hand" in failed.stdout


# -- no unpinned package next to a token ---------------------------------------------------------------


def privileged_jobs() -> list[tuple[str, str, dict[str, Any]]]:
    """(file, job, job) for every job that holds a write token, an environment or a secret, or runs
    in a workflow_run workflow (the default branch's token and secrets)."""
    out = []
    for path in sorted(WORKFLOWS.glob("*.yml")):
        wf = load(path.name)
        on = wf.get("on", wf.get(True))
        for name, job in wf["jobs"].items():
            writes = any(v == "write" for v in (job.get("permissions") or {}).values())
            if writes or "environment" in job or "secrets." in json.dumps(job) or "workflow_run" in on:
                out.append((path.name, name, job))
    return out


def pip_installs(script: str) -> list[str]:
    joined = script.replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if "pip install" in line or 'pip" install' in line]


def test_privileged_jobs_install_only_hash_pinned_packages():
    """The comment job held a write token while pip fetched whatever `jsonschema>=4.20` (and the
    build backend of `evalgate @ git+...`) resolved to that day: one compromised release on the
    index would run next to the token. Every install in such a job is `--require-hashes` from a
    file of the workflow's own trusted checkout, or evalgate itself with no dependencies and no
    build isolation (its build backend came hash-pinned)."""
    seen = 0
    for file, name, job in privileged_jobs():
        for s in job.get("steps", []):
            for line in pip_installs(s.get("run", "")):
                seen += 1
                if "--require-hashes" in line:
                    # release.yml checks out nothing but the tagged commit of the default branch
                    # (verified before: the ancestry step); the others keep it in trusted/.
                    own = "docker" if file == "release.yml" else "trusted/docker"
                    assert f"-r {own}/requirements-workflow.txt" in line, (file, name, line)
                    assert "--only-binary=:all:" in line, (file, name, line)
                else:
                    assert "--no-deps" in line and "--no-build-isolation" in line, (file, name, line)
                    assert line.endswith(" ./trusted"), (file, name, line)
                assert "git+" not in line and ">=" not in line, (file, name, line)
    assert seen >= 3  # the comment job, and both halves of the baseline update
    names = {(f, n) for f, n, _ in privileged_jobs()}
    assert {("eval-gate-comment.yml", "comment"), ("update-baseline-apply.yml", "push")} <= names
