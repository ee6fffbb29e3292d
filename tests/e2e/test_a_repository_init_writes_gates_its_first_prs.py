"""A team's repository, set up by `evalgate init` from a clean folder, walked through its first pull
requests with the workflows init wrote (issue 27, section 2).

The evalgate release is a bare git repository (`acme/evalgate`, a snapshot of this checkout) that
the written workflows pin by commit; the team's repository (`acme/models`) holds only what init
wrote, its own multiple-choice items and its own checkpoint. Each job runs its real steps in order
(helpers/workflow_runner.py: bash for `run:`, emulators for `uses:`, the release's composite
action, its evalgate installed from the release tree) against the repository stand-in API on
127.0.0.1 (helpers/github_repository.py). `https://github.com/...` URLs the scripts fetch or push
go to the local bare repositories (git's `insteadOf`), as nothing here reaches GitHub.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.hostile_pr import GitHubRepo, PullRequest, git, make_origin_template
from helpers.paths import REPO
from helpers.release_image import RELEASE_VERSION, build_release, engine_problem
from helpers.workflow_runner import JobResult, Runner, _checkout, _checkout_source

from evalgate import release
from evalgate.report.badge import COLORS, LABEL

pytestmark = pytest.mark.slow

TEAM = "acme/models"
RELEASE = "acme/evalgate"
MODEL = "models/current"


def _export(path: Path) -> None:
    """The team's own items, as a benchmark export (--from mmlu): every third verb-form probe of
    the demo as a multiple-choice question (the text before the blank, its candidate forms)."""
    rows = []
    for i, line in enumerate((REPO / "data" / "eval" / "probes.jsonl").read_text("utf-8").splitlines()):
        p = json.loads(line)
        context = p["prompt"].split("___")[0].strip()
        if i % 3 or p.get("category") != "core" or p.get("label") != "correct" or not context:
            continue
        answer = p["candidates"].index(p["expected"])
        rows.append(
            {"question": context, "choices": p["candidates"], "answer": answer, "subject": p["language"]}
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _swap_in_regressed(tree: Path) -> None:
    for f in (REPO / "data" / "checkpoints" / "demo-regressed").iterdir():
        shutil.copyfile(f, tree / MODEL / f.name)


class Team:
    """The team's repository on the stand-in, and the runs of the workflows init wrote."""

    def __init__(
        self,
        root: Path,
        release_origin: Path,
        release_sha: str,
        monkeypatch,
        docker: Path | None = None,
        version: str = release.VERSION,
    ) -> None:
        self.root = root
        self.version = version  # the release's: its comment links the docs of its own tag
        self.docker = docker  # a real docker client for the steps, else the played one
        self.release_origin = release_origin
        self.pin = f"{RELEASE}@{release_sha}"
        seed = root / "seed"
        seed.mkdir(parents=True)
        (seed / "README.md").write_text("# models\n", encoding="utf-8")
        git("init", "-q", "-b", "main", cwd=seed)
        git("add", "-A", cwd=seed)
        git("commit", "-q", "-m", "start", cwd=seed, who="maria")
        template = root / "template.git"
        git("clone", "-q", "--bare", str(seed), str(template), cwd=root)
        self.gh = GitHubRepo(root / "gh", template)
        # The scripts' https://github.com/OWNER/NAME URLs, to the bare repositories here.
        urls = [(RELEASE, release_origin), (TEAM, self.gh.origin), (f"{TEAM}.git", self.gh.origin)]
        for i, (name, origin) in enumerate(urls):
            monkeypatch.setenv(f"GIT_CONFIG_KEY_{i}", f"url.{origin}.insteadOf")
            monkeypatch.setenv(f"GIT_CONFIG_VALUE_{i}", f"https://github.com/{name}")
        monkeypatch.setenv("GIT_CONFIG_COUNT", str(len(urls)))
        self.runs = 0

    def sources(self) -> dict[str, Path]:
        return {TEAM: self.gh.origin, RELEASE: self.release_origin}

    def checkout(self, with_, *, workspace, env, runner) -> dict[str, str]:
        """actions/checkout with `repository:` (the release the comment and update jobs check out)."""
        repo = with_.get("repository")
        if not repo:
            return _checkout(with_, workspace=workspace, env=env, runner=runner)
        src = _checkout_source(self.sources()[repo.lower()], with_["ref"], runner.state / "checkouts")
        shutil.copytree(src, workspace / with_.get("path", "."), dirs_exist_ok=True)
        return {}

    def runner(self, name: str, event_name: str, event: dict, sha: str, ref: str, run_id: int) -> Runner:
        self.runs += 1
        return Runner(
            self.root / f"runner-{name}-{self.runs}",
            repository=TEAM,
            event_name=event_name,
            event=event,
            sha=sha,
            ref=ref,
            api_url=self.gh.api.url,
            sources=self.sources(),
            run_id=run_id,
            actor="maria",
            docker=self.docker,
        )

    def workspace(self, name: str, rev: str) -> Path:
        self.runs += 1
        ws = self.root / f"ws-{name}-{self.runs}"
        git("clone", "-q", "--no-checkout", str(self.gh.origin), str(ws), cwd=self.root)
        git("fetch", "-q", "origin", rev, cwd=ws)
        git("checkout", "-q", "--detach", "FETCH_HEAD", cwd=ws)
        return ws

    def job(self, runner: Runner, ws: Path, workflow: str, job: str) -> JobResult:
        path = ws / ".github" / "workflows" / workflow
        return runner.run_job(path, job, ws, uses={"actions/checkout@": self.checkout})

    def gate(self, pr: PullRequest) -> tuple[JobResult, int]:
        ws = self.workspace(f"gate-{pr.number}", f"refs/pull/{pr.number}/merge")
        run_id = self.gh.api.add_run(
            ".github/workflows/eval-gate.yml",
            "pull_request",
            pr.branch,
            pr.head_sha,
            actor=pr.author,
            pr=pr.number,
        )
        runner = self.runner(
            "gate", "pull_request", self.gh.event(pr), pr.merge_sha, f"refs/pull/{pr.number}/merge", run_id
        )
        return self.job(runner, ws, "eval-gate.yml", "gate"), run_id

    def comment(self, run_id: int, conclusion: str) -> JobResult:
        """eval-gate-comment.yml's job (the default branch's file) for the gate's run `run_id`."""
        run = next(r for r in self.gh.api.runs if r["id"] == run_id)
        ws = self.workspace("comment", "refs/heads/main")
        event = {
            "action": "completed",
            "workflow_run": {
                **run,
                "path": ".github/workflows/eval-gate.yml",
                "event": "pull_request",
                "conclusion": conclusion,
                "repository": {"full_name": TEAM},
                "head_repository": {"full_name": TEAM},
            },
            "repository": {"full_name": TEAM, "default_branch": "main"},
        }
        main_sha = git("rev-parse", "HEAD", cwd=ws)
        runner = self.runner("comment", "workflow_run", event, main_sha, "refs/heads/main", run_id + 100000)
        # The gate run's artifact, where download-artifact finds a run's artifacts.
        return self.job(runner, ws, "eval-gate-comment.yml", "comment")

    def merge(self, pr: PullRequest) -> str:
        """The PR's head becomes main (a fast-forward here), as a merge on GitHub."""
        git("push", "-q", "origin", f"{pr.head_sha}:refs/heads/main", cwd=pr.clone)
        self.gh.base_sha = pr.head_sha
        self.gh.api.pulls[pr.number].base_sha = pr.head_sha
        return pr.head_sha


@pytest.fixture(scope="module")
def release_origin(tmp_path_factory) -> tuple[Path, str]:
    origin = make_origin_template(tmp_path_factory.mktemp("evalgate-release"))
    return origin, git("rev-parse", "main", cwd=origin)


def _init(tree: Path, pin: str, export: Path) -> None:
    shutil.copytree(REPO / "data" / "checkpoints" / "demo", tree / MODEL)
    done = subprocess.run(
        [sys.executable, "-m", "evalgate", "init", "--suite", "verbs", "--items", str(export),
         "--from", "mmlu", "--checkpoint", MODEL, "--action", pin, "--owners", "@acme/ml"],
        cwd=tree, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def _lint(tree: Path) -> None:
    folder = tree / ".github" / "workflows"
    for tool, args in (("actionlint", ["-no-color"]), ("zizmor", ["--offline", "--min-severity", "low"])):
        exe = Path(sys.executable).with_name(tool)
        files = [str(folder)] if tool == "zizmor" else sorted(map(str, folder.glob("*.yml")))
        done = subprocess.run([str(exe), *args, *files], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{tool}: {done.stdout[-3000:]}{done.stderr[-3000:]}"


def test_a_repository_init_writes_gates_its_first_prs(tmp_path, release_origin, monkeypatch):
    origin, sha = release_origin
    walk_first_prs(Team(tmp_path, origin, sha, monkeypatch), tmp_path)


@pytest.fixture(scope="session")
def released_image(tmp_path_factory):
    """The release built once a session as scripts/release.py builds it (helpers/release_image.py);
    its images and the build cache are removed at the end (the vfs driver keeps full copies)."""
    problem = engine_problem()
    if problem:
        pytest.skip(
            f"RELEASED-IMAGE TEST NOT RUN: no Docker engine answers ({problem}). The released image "
            "was neither built nor run. This is not a pass."
        )
    built = build_release(tmp_path_factory.mktemp("evalgate-released"))
    try:
        yield built
    finally:
        built.remove_images()


@pytest.mark.docker
def test_the_released_image_gates_a_repositorys_first_prs(tmp_path, released_image, monkeypatch):
    """The same walk with the release built locally and its image run by the engine: every gate
    step starts `docker run --network none <image id>` of the released action.yml."""
    pinned = yaml.safe_load(git("show", f"{released_image.action_sha}:action.yml", cwd=released_image.origin))
    assert pinned["inputs"]["image"]["default"] == released_image.image
    before = len(released_image.calls())
    built = released_image
    team = Team(tmp_path, built.origin, built.action_sha, monkeypatch, built.bin / "docker", RELEASE_VERSION)
    walk_first_prs(team, tmp_path)
    runs = [c for c in released_image.calls()[before:] if c[:1] == ["run"]]
    # The passing PR, the regressing PR and the badge: the released image by id, offline.
    gates = [c for c in runs if c[-2:] == [released_image.image, "action"]]
    assert len(gates) == 3, runs
    assert all(c[c.index("--network") + 1] == "none" for c in gates), gates
    # The labelled update scores with the image it built from the pinned release, offline.
    (update,) = [c for c in runs if "baseline" in c and c[c.index("baseline") + 1] == "update"]
    assert update[update.index("--network") + 1] == "none", update
    assert update[update.index("baseline") - 1] in released_image.built(), update
    assert not list(tmp_path.glob("runner-*/docker.log")), "the played docker ran a step"


def walk_first_prs(team: Team, tmp_path: Path) -> None:
    """Bootstrap PR, passing PR, regressing PR (its comment edited), labelled baseline update and
    badge, each with the workflows init wrote, run by `team`'s runners."""
    export = tmp_path / "export.jsonl"
    _export(export)
    try:
        # 1. The pull request that adds the gate: init's files, linted; refused as bootstrap, with
        #    the next step said, never gated against anything it brings itself.
        boot = team.gh.pull_request(lambda t: _init(t, team.pin, export), author="maria", branch="evalgate")
        _lint(boot.clone)
        job, _ = team.gate(boot)
        scope = job.step("Decide what the gate has to do")
        assert job.conclusion == "failure" and scope.outcome == "failure", job.explain()
        assert "This pull request adds them (evalgate.yml, baselines/verbs.json" in scope.log, scope.log
        assert "merges this pull request" in scope.log and "corpus" not in scope.log
        assert job.step("Gate").outcome == "skipped"
        team.merge(boot)

        # 2. A pull request that changes the checkpoint folder and keeps the weights: scored, pass.
        ok = team.gh.pull_request(
            lambda t: (t / MODEL / "NOTES.md").write_text("retrained, same weights\n"), branch="notes"
        )
        job, run_id = team.gate(ok)
        assert job.conclusion == "success", job.explain()
        assert job.step("Gate").outputs["verdict"] == "pass", job.explain()
        results = json.loads((job_artifact(team, run_id) / "results.json").read_text("utf-8"))
        assert results["verdict"] == "pass" and "per_verb" not in results
        posted = team.comment(run_id, "success")
        assert posted.conclusion == "success", posted.explain()
        (comment,) = team.gh.api.comments[ok.number]
        assert "evalgate: pass" in comment["body"], comment["body"]

        # 3. The same PR regresses: its one comment is edited to say so, with the docs of the release.
        team.gh.push(ok, _swap_in_regressed)
        job, run_id = team.gate(ok)
        assert job.conclusion == "failure" and job.step("Gate").outputs["verdict"] == "fail", job.explain()
        posted = team.comment(run_id, "failure")
        assert posted.conclusion == "success", posted.explain()
        (edited,) = team.gh.api.comments[ok.number]
        assert edited["id"] == comment["id"] and "evalgate: fail" in edited["body"], edited["body"]
        approval = release.docs_url("docs/approval.md", release.tag(team.version))
        assert approval in edited["body"], edited["body"]
        assert "docs/approval.md)" not in edited["body"].replace(approval + ")", "")

        # 4. A maintainer accepts the regression: the label's request, then the update, which
        #    scores the labelled head offline and pushes the new baseline to the PR's branch.
        label = "evalgate:update-baseline"
        team.gh.api.label(ok.number, label, by="maria")
        request_run = team.gh.api.add_run(
            ".github/workflows/update-baseline.yml",
            "pull_request",
            ok.branch,
            ok.head_sha,
            actor="maria",
            pr=ok.number,
        )
        ws = team.workspace("request", f"refs/pull/{ok.number}/merge")
        runner = team.runner(
            "request", "pull_request", team.gh.event(ok, "labeled", label=label), ok.merge_sha,
            f"refs/pull/{ok.number}/merge", request_run,
        )  # fmt: skip
        asked = team.job(runner, ws, "update-baseline.yml", "check")
        assert asked.conclusion == "success", asked.explain()
        before = git("rev-parse", f"refs/heads/{ok.branch}", cwd=team.gh.origin)
        run = next(r for r in team.gh.api.runs if r["id"] == request_run)
        event = {
            "action": "completed",
            "workflow_run": {
                **run,
                "path": ".github/workflows/update-baseline.yml",
                "event": "pull_request",
                "conclusion": "success",
                "repository": {"full_name": TEAM},
                "head_repository": {"full_name": TEAM},
            },
            "repository": {"full_name": TEAM, "default_branch": "main"},
        }
        ws = team.workspace("apply", "refs/heads/main")
        main = git("rev-parse", "HEAD", cwd=ws)
        runner = team.runner("apply", "workflow_run", event, main, "refs/heads/main", request_run + 200000)
        checked = team.job(runner, ws, "update-baseline-apply.yml", "check")
        assert checked.conclusion == "success" and checked.outputs.get("pr") == str(ok.number), (
            checked.explain()
        )
        needs = {"check": {"result": "success", "outputs": checked.outputs}}
        for job_name in ("score", "push"):  # each job on a fresh runner workspace, as on GitHub
            ws = team.workspace(f"apply-{job_name}", "refs/heads/main")
            wf = ws / ".github/workflows/update-baseline-apply.yml"
            done = runner.run_job(wf, job_name, ws, needs=needs, uses={"actions/checkout@": team.checkout})
            assert done.conclusion == "success", done.explain()
            needs[job_name] = {"result": "success", "outputs": done.outputs}
        after = git("rev-parse", f"refs/heads/{ok.branch}", cwd=team.gh.origin)
        assert after != before
        changed = git("diff", "--name-only", before, after, cwd=team.gh.origin).split()
        assert "baselines/verbs.json" in changed and all(c.startswith("baselines/") for c in changed), changed
        assert label not in team.gh.api.pulls[ok.number].labels

        # 5. A push to main: badge.yml scores main with the release's action and publishes the badge.
        main = git("rev-parse", "main", cwd=team.gh.origin)
        ws = team.workspace("badge", "refs/heads/main")
        badge_run = team.gh.api.add_run(".github/workflows/badge.yml", "push", "main", main, actor="maria")
        runner = team.runner("badge", "push", {"ref": "refs/heads/main"}, main, "refs/heads/main", badge_run)
        gate = team.job(runner, ws, "badge.yml", "gate")
        assert gate.conclusion == "success", gate.explain()
        publish_ws = tmp_path / "publish"
        publish_ws.mkdir()
        published = runner.run_job(ws / ".github/workflows/badge.yml", "publish", publish_ws)
        assert published.conclusion == "success", published.explain()
        badge = json.loads(git("show", "badges:badge.json", cwd=team.gh.origin))
        assert badge["color"] == COLORS["pass"] and badge["label"] == LABEL, badge
    finally:
        team.gh.close()


def job_artifact(team: Team, run_id: int) -> Path:
    found = list((team.root).glob(f"artifacts/{run_id}/evalgate-report"))
    assert found, f"no artifact evalgate-report of run {run_id}"
    return found[0]


def test_the_workflows_name_the_release_and_nothing_of_evalgates_tree(tmp_path):
    export = tmp_path / "export.jsonl"
    _export(export)
    tree = tmp_path / "team"
    tree.mkdir()
    _init(tree, "acme/evalgate@" + "a" * 40, export)
    for path in (tree / ".github" / "workflows").glob("*.yml"):
        wf = yaml.safe_load(path.read_text(encoding="utf-8"))
        uses = [s.get("uses", "") for j in wf["jobs"].values() for s in j.get("steps", [])]
        assert not [u for u in uses if u.startswith(".")], path.name
