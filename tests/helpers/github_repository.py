"""A GitHub repository behind the REST API, as a stand-in on 127.0.0.1 for whole-workflow tests.

Where the variants in github_standin.py each answer one conversation (comments, one approval),
this one keeps a repository's state and derives every answer from it, so that the workflows'
steps, run in order (helpers/workflow_runner.py), see one consistent GitHub: collaborators and
their roles, pull requests with their commits, labels and timeline, workflow runs (path, event,
branch, actors, artifacts), comments. Time is GitHub's own clock: every event takes the next tick,
so "labelled after the push" means what it says.

    api = RepositoryAPI("acme/models").start()
    api.collaborator("maria", "maintain")
    pr = api.open_pr(author="mallory", head_ref="feature", head_sha=SHA, base_sha=BASE, commits=[...])
    api.label(pr, "evalgate:approve-gate-change", by="maria")
    api.add_run(".github/workflows/eval-gate.yml", "pull_request", "feature", SHA, actor="mallory", pr=pr)

The collaborator permission endpoint answers like GitHub: `permission` is the legacy level
(`maintain` reads "write", `triage` reads "read"), `role_name` the real role.
"""

from __future__ import annotations

import re
import subprocess
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from helpers.github_standin import Handler, StandIn

LEGACY = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}
BOT = "github-actions[bot]"


@dataclass
class Pull:
    number: int
    author: str
    head_ref: str
    head_sha: str
    head_repo: str
    base_ref: str
    base_sha: str
    draft: bool = False
    state: str = "open"
    labels: list[str] = field(default_factory=list)
    commits: list[dict[str, Any]] = field(default_factory=list)
    timeline: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self, repo: str) -> dict[str, Any]:
        return {
            "number": self.number,
            "state": self.state,
            "draft": self.draft,
            "user": {"login": self.author},
            "head": {"sha": self.head_sha, "ref": self.head_ref, "repo": {"full_name": self.head_repo}},
            "base": {"sha": self.base_sha, "ref": self.base_ref, "repo": {"full_name": repo}},
            "labels": [{"name": n} for n in self.labels],
        }


class RepositoryAPI(StandIn):
    def __init__(self, repo: str = "acme/models", default_branch: str = "main") -> None:
        super().__init__()
        self.repo = repo
        self.default_branch = default_branch
        self.now = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
        self.roles: dict[str, str] = {}
        self.pulls: dict[int, Pull] = {}
        self.runs: list[dict[str, Any]] = []
        self.artifacts: dict[int, list[dict[str, Any]]] = {}
        self.tokens: dict[str, str] = {}  # token -> login (unknown tokens act as the bot)
        self.requests: list[tuple[str, str, str]] = []  # (method, path, login)
        # The repository's git objects (a bare clone), for `compare`: set by the test's repository.
        self.git_dir: Path | None = None
        self._ids = 5000
        self._mutex = threading.RLock()

    # -- the repository's history -------------------------------------------------------------

    def tick(self) -> str:
        self.now += timedelta(minutes=1)
        return self.now.strftime("%Y-%m-%dT%H:%M:%SZ")

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    def collaborator(self, login: str, role: str) -> None:
        self.roles[login] = role

    def open_pr(
        self,
        *,
        author: str,
        head_ref: str,
        head_sha: str,
        base_sha: str,
        commits: list[tuple[str, str, str]] = (),  # (sha, author login, committer login)
        head_repo: str | None = None,
        draft: bool = False,
        number: int | None = None,
    ) -> int:
        with self._mutex:
            n = number or (max(self.pulls, default=0) + 1)
            self.pulls[n] = Pull(
                n, author, head_ref, head_sha, head_repo or self.repo, self.default_branch, base_sha, draft
            )
            self._commits(self.pulls[n], commits)
            return n

    def _commits(self, pr: Pull, commits: Any) -> None:
        for sha, author, committer in commits:
            when = self.tick()
            pr.commits.append(
                {
                    "sha": sha,
                    "author": {"login": author} if author else None,
                    "committer": {"login": committer} if committer else None,
                    "commit": {
                        "author": {"name": author, "email": f"{author}@users.noreply", "date": when},
                        "committer": {"name": committer, "email": f"{committer}@users.noreply", "date": when},
                    },
                }
            )
            pr.timeline.append({"event": "committed", "sha": sha, "author": {"name": author}})

    def push(
        self, pr: int, head_sha: str, *, by: str, commits: list[tuple[str, str, str]], force: bool = False
    ):
        with self._mutex:
            p = self.pulls[pr]
            if force:
                p.commits = []
                p.timeline.append(
                    {"event": "head_ref_force_pushed", "actor": {"login": by}, "created_at": self.tick()}
                )
            self._commits(p, commits)
            p.head_sha = head_sha

    def label(self, pr: int, name: str, *, by: str) -> None:
        with self._mutex:
            p = self.pulls[pr]
            if name not in p.labels:
                p.labels.append(name)
            p.timeline.append(
                {
                    "event": "labeled",
                    "label": {"name": name},
                    "actor": {"login": by},
                    "created_at": self.tick(),
                }
            )

    def unlabel(self, pr: int, name: str, *, by: str) -> None:
        with self._mutex:
            p = self.pulls[pr]
            if name in p.labels:
                p.labels.remove(name)
                p.timeline.append(
                    {
                        "event": "unlabeled",
                        "label": {"name": name},
                        "actor": {"login": by},
                        "created_at": self.tick(),
                    }
                )

    def add_run(
        self,
        path: str,
        event: str,
        head_branch: str,
        head_sha: str,
        *,
        actor: str,
        name: str | None = None,
        head_repo: str | None = None,
        conclusion: str = "success",
        pr: int | None = None,
        triggering_actor: str | None = None,
        artifacts: tuple[str, ...] = (),
    ) -> int:
        """A workflow run as GitHub records it; its artifacts are listed by name."""
        with self._mutex:
            run_id = self.next_id()
            pulls = []
            if pr is not None:
                p = self.pulls[pr]
                pulls.append(
                    {
                        "number": p.number,
                        "head": {"ref": p.head_ref, "sha": p.head_sha, "repo": {"name": p.head_repo}},
                        "base": {"ref": p.base_ref, "sha": p.base_sha},
                    }
                )
            self.runs.append(
                {
                    "id": run_id,
                    "name": name or path.rsplit("/", 1)[-1].removesuffix(".yml"),
                    "path": path,
                    "event": event,
                    "status": "completed",
                    "conclusion": conclusion,
                    "head_branch": head_branch,
                    "head_sha": head_sha,
                    "head_repository": {"full_name": head_repo or self.repo},
                    "repository": {"full_name": self.repo},
                    "actor": {"login": actor},
                    "triggering_actor": {"login": triggering_actor or actor},
                    "created_at": self.tick(),
                    "html_url": f"https://github.com/{self.repo}/actions/runs/{run_id}",
                    "pull_requests": pulls,
                }
            )
            self.artifacts[run_id] = [
                {"id": self.next_id(), "name": a, "expired": False, "workflow_run": {"id": run_id}}
                for a in artifacts
            ]
            return run_id

    # -- the API ------------------------------------------------------------------------------

    def login(self, h: Handler) -> str:
        auth = h.headers.get("Authorization") or ""
        token = auth.split(" ", 1)[-1] if " " in auth else auth
        return self.tokens.get(token, BOT)

    def answer(self, h: Handler, method: str, raw: bytes) -> None:
        import json

        login = self.login(h)
        payload = json.loads(raw) if raw else None
        with self._mutex:
            self.requests.append((method, h.path, login))
            fault = self.take_fault(method, h.path)
            if fault:
                return self.send(h, fault.status, fault.body or {"message": "fault"}, fault.headers)
            status, body, headers = self.route(method, h.path, payload, login)
        self.send(h, status, body, headers)

    def compare(self, base: str, head: str) -> tuple[int, Any, dict[str, str]]:
        """`GET .../compare/BASE...HEAD` from the repository's own objects: the files changed since
        the merge base, as GitHub lists them (renames with `previous_filename`, at most 300)."""
        nf = (404, {"message": "Not Found"}, {})
        if self.git_dir is None:
            return nf
        done = subprocess.run(
            ["git", "diff", "--name-status", "-z", "-M", f"{base}...{head}", "--"],
            cwd=self.git_dir,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            return nf
        fields = done.stdout.split("\0")
        files, i = [], 0
        while i < len(fields) - 1:
            status = fields[i]
            if status.startswith(("R", "C")):
                files.append(
                    {"filename": fields[i + 2], "previous_filename": fields[i + 1], "status": "renamed"}
                )
                i += 3
            else:
                kind = {"A": "added", "D": "removed", "M": "modified"}.get(status[:1], "changed")
                files.append({"filename": fields[i + 1], "status": kind})
                i += 2
        return 200, {"status": "ahead", "files": files[:300]}, {}

    def _page(self, items: list[Any], path: str, wrap: str | None = None) -> tuple[int, Any, dict[str, str]]:
        parts = urlsplit(path)
        query = parse_qs(parts.query)
        per_page = min(100, int(query.get("per_page", ["30"])[0]))
        page = int(query.get("page", ["1"])[0])
        last = max(1, -(-len(items) // per_page))
        headers = {}
        if page < last:
            rest = "&".join(f"{k}={v[0]}" for k, v in query.items() if k not in ("page", "per_page"))
            nxt = f"{self.url}{parts.path}?{rest + '&' if rest else ''}per_page={per_page}&page={page + 1}"
            headers["Link"] = f'<{nxt}>; rel="next"'
        chunk = items[(page - 1) * per_page : page * per_page]
        if wrap:
            return 200, {"total_count": len(items), wrap: chunk}, headers
        return 200, chunk, headers

    def route(self, method: str, path: str, payload: Any, login: str):
        route = unquote(urlsplit(path).path)
        query = parse_qs(urlsplit(path).query)
        base = f"/repos/{self.repo}"
        nf = (404, {"message": "Not Found"}, {})
        if route == "/user":
            return 200, {"login": login}, {}
        if not route.lower().startswith(base.lower()):
            return nf
        rest = route[len(base) :]
        if rest == "" and method == "GET":
            return 200, {"full_name": self.repo, "default_branch": self.default_branch}, {}
        if (m := re.fullmatch(r"/compare/(.+)\.\.\.(.+)", rest)) and method == "GET":
            return self.compare(m.group(1), m.group(2))
        if m := re.fullmatch(r"/pulls/(\d+)", rest):
            p = self.pulls.get(int(m.group(1)))
            return (200, p.as_json(self.repo), {}) if p else nf
        if m := re.fullmatch(r"/pulls/(\d+)/commits", rest):
            p = self.pulls.get(int(m.group(1)))
            return self._page(list(p.commits), path) if p else nf
        if rest == "/pulls":
            state = query.get("state", ["open"])[0]
            return self._page(
                [p.as_json(self.repo) for p in self.pulls.values() if state in ("all", p.state)], path
            )
        if m := re.fullmatch(r"/commits/([0-9a-fA-F]+)/pulls", rest):
            same = [
                p.as_json(self.repo)
                for p in self.pulls.values()
                if p.head_sha == m.group(1) and p.head_repo == self.repo
            ]
            return self._page(same, path)
        if m := re.fullmatch(r"/issues/(\d+)/timeline", rest):
            p = self.pulls.get(int(m.group(1)))
            return self._page(list(p.timeline), path) if p else nf
        if m := re.fullmatch(r"/issues/(\d+)/labels/(.+)", rest):
            p = self.pulls.get(int(m.group(1)))
            if method != "DELETE" or not p or m.group(2) not in p.labels:
                return nf
            self.unlabel(p.number, m.group(2), by=login)
            return 200, [{"name": n} for n in p.labels], {}
        if m := re.fullmatch(r"/issues/(\d+)/comments", rest):
            n = int(m.group(1))
            if method == "GET":
                return self._page(list(self.comments.get(n, [])), path)
            cid = self.next_id()
            self.comments.setdefault(n, []).append(
                {"id": cid, "user": {"login": login}, "body": payload["body"]}
            )
            return 201, {"id": cid, "html_url": f"https://github.com/{self.repo}/pull/{n}#c{cid}"}, {}
        if m := re.fullmatch(r"/issues/comments/(\d+)", rest):
            for comments in self.comments.values():
                for c in comments:
                    if c["id"] == int(m.group(1)):
                        if method == "PATCH":
                            c["body"] = payload["body"]
                        elif method == "DELETE":
                            comments.remove(c)
                            return 204, None, {}
                        return 200, {"id": c["id"], "html_url": "https://github.com/c"}, {}
            return nf
        if m := re.fullmatch(r"/collaborators/([^/]+)/permission", rest):
            role = self.roles.get(m.group(1))
            if role is None:
                return nf
            return (
                200,
                {"permission": LEGACY.get(role, "read"), "role_name": role, "user": {"login": m.group(1)}},
                {},
            )
        if rest == "/actions/runs" or (m := re.fullmatch(r"/actions/workflows/([^/]+)/runs", rest)):
            runs = list(reversed(self.runs))  # newest first, as GitHub lists them
            if rest != "/actions/runs":
                wf = m.group(1)
                runs = [r for r in runs if r["path"].rsplit("/", 1)[-1] == wf or str(r["id"]) == wf]
            for key, field_ in (
                ("head_sha", "head_sha"),
                ("event", "event"),
                ("branch", "head_branch"),
                ("status", "status"),
            ):
                if key in query:
                    want = query[key][0]
                    runs = [
                        r for r in runs if r[field_] == want or (key == "status" and r["conclusion"] == want)
                    ]
            if "actor" in query:
                runs = [r for r in runs if r["actor"]["login"] == query["actor"][0]]
            return self._page(runs, path, wrap="workflow_runs")
        if m := re.fullmatch(r"/actions/runs/(\d+)", rest):
            run = next((r for r in self.runs if r["id"] == int(m.group(1))), None)
            return (200, run, {}) if run else nf
        if m := re.fullmatch(r"/actions/runs/(\d+)/artifacts", rest):
            arts = self.artifacts.get(int(m.group(1)))
            if arts is None:
                return nf
            if "name" in query:
                arts = [a for a in arts if a["name"] == query["name"][0]]
            return self._page(arts, path, wrap="artifacts")
        return nf
