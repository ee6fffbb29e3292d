"""Pull requests against a repository that runs evalgate's gate, played end to end.

`GitHubRepo` is a repository "on GitHub": a bare git origin whose `main` holds a snapshot of
this checkout (the gate's code, action.yml, docker/, the workflows, the demo's data, config and
baseline), and the repository stand-in API (helpers/github_repository.py). A test opens a pull
request by editing a clone and pushing, as a contributor would; GitHub's merge commit is made the
way GitHub makes it; then `run_gate` plays the `pull_request` run: the workflow file of the merge
commit (as GitHub runs it), job `gate`, every step in order with helpers/workflow_runner.py, the
base commit's evalgate and action doing the work, the checkpoint scored by that evalgate.

    repo = GitHubRepo(tmp_path, origin_template)
    pr = repo.pull_request(lambda tree: swap_checkpoint(tree), author="mallory")
    job = repo.run_gate(pr)
    assert job.step("Gate").outputs["verdict"] == "fail", job.explain()
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from helpers.github_repository import RepositoryAPI
from helpers.paths import REPO
from helpers.workflow_runner import JobResult, Runner

# What the gate's repository holds: everything a run reads, and nothing of the tests.
SNAPSHOT = (
    ".github",
    "action.yml",
    "docker",
    "src",
    "data",
    "baselines",
    "evalgate.yml",
    "pyproject.toml",
    "README.md",
)
NAME = "acme/models"

# The demo's checkpoint folder, and the shipped checkpoint that regressed (a PR's usual payload).
DEMO = "data/checkpoints/demo"
REGRESSED = "data/checkpoints/demo-regressed"


def git(*args: str, cwd: Path, who: str = "dev") -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": who,
        "GIT_AUTHOR_EMAIL": f"{who}@users.noreply",
        "GIT_COMMITTER_NAME": who,
        "GIT_COMMITTER_EMAIL": f"{who}@users.noreply",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    proc = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout.strip()


def make_origin_template(where: Path) -> Path:
    """A bare repository whose main is a snapshot of this checkout's gate (built once a session)."""
    tree = where / "snapshot"
    tree.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "evalgate-out", "wheels", "*.egg-info")
    for name in SNAPSHOT:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, tree / name, ignore=ignore, symlinks=True)
        elif src.is_file():
            shutil.copy2(src, tree / name)
    (tree / "docker" / "wheels").mkdir(exist_ok=True)
    (tree / "docker" / "wheels" / ".gitkeep").write_text("")
    git("init", "-q", "-b", "main", cwd=tree)
    git("add", "-A", cwd=tree)
    git("commit", "-q", "-m", "The gate, its data and its baseline", cwd=tree, who="maria")
    origin = where / "origin.git"
    git("clone", "-q", "--bare", str(tree), str(origin), cwd=where)
    shutil.rmtree(tree)
    return origin


@dataclass
class PullRequest:
    number: int
    author: str
    branch: str
    head_sha: str
    merge_sha: str
    clone: Path


class GitHubRepo:
    def __init__(self, root: Path, template: Path, *, api: RepositoryAPI | None = None):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.origin = self.root / "origin.git"
        git("clone", "-q", "--bare", str(template), str(self.origin), cwd=self.root)
        self.api = api or RepositoryAPI(NAME).start()
        self.api.git_dir = self.origin
        self.api.collaborator("maria", "admin")
        self.api.collaborator("mallory", "write")
        self.base_sha = git("rev-parse", "main", cwd=self.origin)
        self._runs = 0

    def close(self) -> None:
        self.api.stop()

    # -- contributors ---------------------------------------------------------------------------

    def clone(self, name: str) -> Path:
        dest = self.root / name
        if not dest.exists():
            git("clone", "-q", str(self.origin), str(dest), cwd=self.root)
        return dest

    def commit(self, clone: Path, edit: Callable[[Path], None], message: str, who: str) -> str:
        edit(clone)
        git("add", "-A", cwd=clone)
        git("commit", "-q", "--allow-empty", "-m", message, cwd=clone, who=who)
        return git("rev-parse", "HEAD", cwd=clone)

    def pull_request(
        self,
        edit: Callable[[Path], None],
        *,
        author: str = "mallory",
        branch: str = "feature",
        message: str = "PR",
    ) -> PullRequest:
        clone = self.clone(f"{author}-{branch}")
        git("checkout", "-q", "-b", branch, "origin/main", cwd=clone)
        head = self.commit(clone, edit, message, author)
        git("push", "-q", "origin", f"HEAD:refs/heads/{branch}", cwd=clone)
        number = self.api.open_pr(
            author=author,
            head_ref=branch,
            head_sha=head,
            base_sha=self.base_sha,
            commits=[(head, author, author)],
        )
        pr = PullRequest(number, author, branch, head, self._merge(number, head), clone)
        self._arrived(pr)
        return pr

    def _arrived(self, pr: PullRequest) -> None:
        """GitHub creates the `pull_request` run of a pushed head at once (its time is what an
        approval is compared with), whether or not the test plays it."""
        self.api.add_run(
            ".github/workflows/eval-gate.yml",
            "pull_request",
            pr.branch,
            pr.head_sha,
            actor=pr.author,
            pr=pr.number,
        )

    def push(
        self, pr: PullRequest, edit: Callable[[Path], None], *, who: str | None = None, message: str = "more"
    ) -> None:
        who = who or pr.author
        pr.head_sha = self.commit(pr.clone, edit, message, who)
        git("push", "-q", "origin", f"HEAD:refs/heads/{pr.branch}", cwd=pr.clone)
        self.api.push(pr.number, pr.head_sha, by=who, commits=[(pr.head_sha, who, who)])
        pr.merge_sha = self._merge(pr.number, pr.head_sha)
        self._arrived(pr)

    def _merge(self, number: int, head: str) -> str:
        """refs/pull/N/merge: the PR's head merged into the base, as GitHub prepares it."""
        scratch = self.clone("merge-bot")
        git("fetch", "-q", "origin", cwd=scratch)
        git("checkout", "-q", "--detach", self.base_sha, cwd=scratch)
        git("merge", "-q", "--no-ff", "--no-edit", head, cwd=scratch, who="github")
        sha = git("rev-parse", "HEAD", cwd=scratch)
        git("push", "-q", "-f", "origin", f"HEAD:refs/pull/{number}/merge", cwd=scratch)
        return sha

    # -- runs -------------------------------------------------------------------------------------

    def event(self, pr: PullRequest, action: str = "synchronize", label: str | None = None) -> dict:
        p = self.api.pulls[pr.number].as_json(NAME)
        event = {
            "action": action,
            "number": pr.number,
            "pull_request": p,
            "repository": {"full_name": NAME, "default_branch": "main"},
            "sender": {"login": pr.author},
        }
        if label:
            event["label"] = {"name": label}
        return event

    def run_gate(
        self, pr: PullRequest, *, action: str = "synchronize", label: str | None = None
    ) -> JobResult:
        """eval-gate.yml's `gate` job on the merge commit, as a `pull_request` event runs it."""
        self._runs += 1
        workspace = self.root / f"ws-{pr.number}-{self._runs}"
        # A fresh checkout of the merge commit, as actions/checkout makes one (init, fetch,
        # checkout): every file is written under the merge commit's own .gitattributes, never left
        # as another commit's checkout wrote it.
        git("clone", "-q", "--no-checkout", str(self.origin), str(workspace), cwd=self.root)
        git("fetch", "-q", "origin", f"refs/pull/{pr.number}/merge", cwd=workspace)
        git("checkout", "-q", "--detach", pr.merge_sha, cwd=workspace)
        run_id = self.api.add_run(
            ".github/workflows/eval-gate.yml",
            "pull_request",
            pr.branch,
            pr.head_sha,
            actor=pr.author,
            pr=pr.number,
        )
        runner = Runner(
            self.root / f"runner-{run_id}",
            repository=NAME,
            event_name="pull_request",
            event=self.event(pr, action, label),
            sha=pr.merge_sha,
            ref=f"refs/pull/{pr.number}/merge",
            api_url=self.api.url,
            sources={NAME: self.origin},
            run_id=run_id,
            actor=pr.author,
            cache_scopes=(f"refs/pull/{pr.number}/merge", "refs/heads/main"),
        )
        return runner.run_job(workspace / ".github" / "workflows" / "eval-gate.yml", "gate", workspace)


def swap_in_regressed(tree: Path, to: str = DEMO) -> None:
    """The regressed checkpoint's files under `to` (the configured checkpoint's folder by default)."""
    dest = tree / to
    dest.mkdir(parents=True, exist_ok=True)
    for f in (tree / REGRESSED).iterdir():
        shutil.copyfile(f, dest / f.name)


def attackers_evalgate(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """evalgate run in the attacker's clone, as any contributor can (the outputs it writes are theirs)."""
    return subprocess.run(
        [sys.executable, "-m", "evalgate", *args],
        cwd=tree,
        capture_output=True,
        text=True,
        env={**os.environ, "EVALGATE_HOME": str(tree), "PYTHONSAFEPATH": "1"},
        timeout=600,
    )
