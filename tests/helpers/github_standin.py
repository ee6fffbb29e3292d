"""One stand-in for the GitHub REST API on 127.0.0.1: real HTTP, real headers, in-memory state.

`StandIn` is the server: a thread serving 127.0.0.1 on a free port, one handler that reads each
request's body and hands it to `answer`, the queue of scripted faults, the comments by PR, and
start/stop. Each variant below is a subclass that only says how its API answers:

- `FakeGitHub`, the friendly case. It serves what evalgate's client uses: issue comments (list
  with `Link` pagination at 30 per page, whatever per_page asks, like a server that caps it;
  create; edit), `GET /user`, the PRs of a commit and the open PRs, and for `evalgate approval` one
  PR (`pull_details`), its timeline (`timeline`), its commits (`pull_commits`), collaborator
  roles (`permissions`: a role answered as GitHub does, `permission` holding the legacy base role
  and `role_name` the role; or the whole answer as a dict), workflow runs (`runs`, filtered by
  `head_sha`, `event` and `branch`) and the repository's activity log (`activity`, filtered by
  `ref`; `activity_api=False` answers 404 like a server without it). Every list is paginated at
  30 a page, its `Link` keeping the query's filters. Tokens decide who is calling, as on GitHub:
  TOKENS[token] = (login shown on its comments, whether GET /user answers, whether it may write).
  Faults are queued with `fail(...)` and consumed by the first matching request; `apply=True`
  makes the server do the work and still answer the error (a create whose answer got lost).

- `HostileGitHub`, GitHub Enterprise-like and picky: every route lives under a path prefix
  (`/api/v3`), `per_page` is capped (GitHub caps it at 100; here `page_cap`, small, so pagination
  happens at a few dozen comments), the `Link` header lists its rel values in a different order
  (`last` before `next`, plus `first`/`prev`), carries extra link parameters and extra query
  parameters, and points at `/repositories/ID/...` rather than the path that was asked. Comments
  come oldest first. `GET /user` answers 403 for an installation token and 200 for a personal
  token; comments can have `user: null` (a deleted account) and CRLF bodies. A body longer than
  65,536 characters is refused with 422, as GitHub does. Every request is recorded with its
  Authorization header, so a test can prove the token never left the API's host. Scripted faults
  (`script(...)`) answer instead of the API: any status and headers, a `Location` for redirects,
  `reset=True` to drop the connection without an answer, `partial=True` to drop it mid-body,
  `apply=True` to do the work and still answer the fault. `Elsewhere` is another host.

- `OtherGitHub`, written without looking at evalgate's client. It imitates the real service where
  the others are friendly, and can be made to behave like stand-ins written by others: full
  comment objects (`user: {login, id, type}`, `html_url`, `created_at`, `author_association`,
  `performed_via_github_app`), 201 + `Location` on create, 200 on edit, a default page of 30 with
  `per_page` capped at 100 (or ignored, paging by a fixed small size), `Link` headers to
  `/repositories/ID/issues/N/comments?page=N` with `first`/`prev`/`next`/`last` in shuffled order
  (optionally one `Link` header per relation), `GET /user` answering 403 for an installation token,
  200 for a personal token or 404 when the stand-in has no such route, error bodies with
  `documentation_url`, HTML bodies on 502, and transport variants: `token X` or `Bearer X` only, an
  `Accept` check, gzip bodies, chunked transfer encoding, HTTP/1.0, slow answers.

      api = OtherGitHub(page_size=2, ignore_per_page=True).start()
      api.fault("POST", r"/comments$", 502, html=True)
"""

from __future__ import annotations

import gzip
import json
import random
import re
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs, quote, urlsplit

BOT = "github-actions[bot]"


@dataclass
class Fault:
    """A scripted answer to the first request matching `method` and `path_re` (then consumed)."""

    method: str
    path_re: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    apply: bool = False  # do the work, then answer the fault anyway (an answer that got lost)
    reset: bool = False  # drop the connection without an answer
    partial: bool = False  # send the headers and half the body, then drop the connection
    html: bool = False  # an HTML page, as a load balancer answers a 502


class StandIn:
    """The HTTP server every variant shares. Subclasses implement `answer`."""

    protocol = "HTTP/1.0"  # BaseHTTPRequestHandler's default; a variant may speak HTTP/1.1
    host = "127.0.0.1"

    def __init__(self) -> None:
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.faults: list[Fault] = []
        self.lock = threading.Lock()
        handler = self._handler()
        handler.protocol_version = self.protocol
        self.server = ThreadingHTTPServer((self.host, 0), handler)
        self.server.daemon_threads = True
        host, port = self.server.server_address[:2]
        self.origin = f"http://{host}:{port}"
        self.url = self.origin
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self.server.shutdown()
        self.server.server_close()

    def queue(self, fault: Fault) -> None:
        self.faults.append(fault)

    def take_fault(self, method: str, path: str) -> Fault | None:
        """The first queued fault matching this request, removed; call with `lock` held."""
        fault = next((f for f in self.faults if f.method == method and re.search(f.path_re, path)), None)
        if fault:
            self.faults.remove(fault)
        return fault

    def by(self, pr: int, login: str) -> list[dict[str, Any]]:
        return [c for c in self.comments.get(pr, []) if (c["user"] or {}).get("login") == login]

    # What `evalgate comment` asks before it posts a verdict (github/report_comment.py): the
    # repository's default branch, the PR's base, and the files its head changes against that base.
    default_branch = "main"

    def changed_files(self, head: str) -> list[dict[str, Any]] | None:
        """The `files` of `compare/BASE...head`: by default a head that changes a checkpoint only;
        a test sets `compare_files[head]` (None answers 404)."""
        files = getattr(self, "compare_files", {})
        return files.get(
            head, [{"filename": "data/checkpoints/demo/model.safetensors", "status": "modified"}]
        )

    def gate_files_route(self, method: str, route: str, repo_re: str = r"/repos/[^/]+/[^/]+"):
        """`GET /repos/R`, `GET /repos/R/compare/BASE...HEAD`, and a PR listed in `pulls` (with the
        default branch as its base) for `GET /repos/R/pulls/N`; None for any other route."""
        if method != "GET":
            return None
        if re.fullmatch(repo_re, route):
            return (
                200,
                {"full_name": getattr(self, "repo", "octo/gate"), "default_branch": self.default_branch},
                {},
            )
        m = re.fullmatch(repo_re + r"/compare/(.+)\.\.\.([0-9a-f]{40})", route)
        if m:
            files = self.changed_files(m.group(2))
            if files is None:
                return 404, {"message": "Not Found"}, {}
            return 200, {"status": "ahead", "files": files}, {}
        m = re.fullmatch(repo_re + r"/pulls/(\d+)", route)
        if m and not hasattr(self, "pulls"):  # a variant that keeps comments only: any PR is open
            return 200, {"number": int(m.group(1)), "state": "open", "base": {"ref": self.default_branch}}, {}
        if m:
            for pr in self.pulls:
                if isinstance(pr, dict) and pr.get("number") == int(m.group(1)):
                    return 200, {"base": {"ref": self.default_branch}, **pr}, {}
        return None

    def answer(self, h: Handler, method: str, raw: bytes) -> None:
        raise NotImplementedError

    def send(self, h: Handler, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        raw = b"" if body is None else json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json; charset=utf-8")
        h.send_header("Content-Length", str(len(raw)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(raw)

    def _handler(self) -> type[Handler]:
        return type("Handler", (Handler,), {"api": self})


class Handler(BaseHTTPRequestHandler):
    api: StandIn

    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass

    def _any(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        self.api.answer(self, self.command, raw)

    do_GET = do_POST = do_PATCH = do_DELETE = _any


# --- the friendly stand-in ----------------------------------------------------------------------

PAGE_SIZE = 30


class FakeGitHub(StandIn):
    TOKENS: ClassVar[dict[str, tuple]] = {
        "pat-alice": ("alice", True, True),  # a personal access token: GET /user works
        "ghs-installation": ("github-actions[bot]", False, True),  # GITHUB_TOKEN with pull-requests: write
        "ghs-readonly": ("github-actions[bot]", False, False),  # a fork's pull_request token
    }

    def __init__(self) -> None:
        super().__init__()
        self.pulls: list[dict[str, Any]] = []  # {"number", "state", "head": {"sha", "repo": {...}}}
        self.pull_details: dict[int, dict[str, Any]] = {}
        self.timeline: dict[int, list[dict[str, Any]]] = {}
        # login -> a role (admin|maintain|write|triage|read or a custom one), or the whole answer
        self.permissions: dict[str, Any] = {}
        self.pull_commits: dict[int, list[dict[str, Any]]] = {}  # {"sha", "author", "committer"}
        # {"id", "head_sha", "head_branch", "head_repository", "event", "created_at", "actor", ...}
        self.runs: list[dict[str, Any]] = []
        self.activity: list[dict[str, Any]] = []  # {"ref", "before", "after", "activity_type", "actor", ...}
        self.activity_api = True
        self.log: list[tuple[str, str]] = []  # (method, path?query) of every request
        self._next_id = 1000

    def add_comment(self, pr: int, login: str, body: str) -> int:
        with self.lock:
            self._next_id += 1
            self.comments.setdefault(pr, []).append(
                {"id": self._next_id, "user": {"login": login}, "body": body}
            )
            return self._next_id

    def fail(self, method: str, path_re: str, status: int, **kw: Any) -> None:
        self.queue(Fault(method, path_re, status, **kw))

    def count(self, method: str, path_re: str = "") -> int:
        return sum(1 for m, p in self.log if m == method and re.search(path_re, p))

    def answer(self, h: Handler, method: str, raw: bytes) -> None:
        if method == "DELETE":
            return h.send_error(501)
        payload = json.loads(raw) if raw else None
        token = (h.headers.get("Authorization") or "").removeprefix("Bearer ")
        with self.lock:
            self.log.append((method, h.path))
            fault = self.take_fault(method, h.path)
        if token not in self.TOKENS:
            return self.send(h, 401, {"message": "Bad credentials"})
        if fault and not fault.apply:
            return self.send(
                h, fault.status, {"message": "fault"} if fault.body is None else fault.body, fault.headers
            )
        status, body, headers = self.route(method, h.path, payload, self.TOKENS[token])
        if fault:
            return self.send(
                h, fault.status, {"message": "fault"} if fault.body is None else fault.body, fault.headers
            )
        self.send(h, status, body, headers)

    def _page(self, items: list[Any], path: str, key: str | None = None) -> tuple[int, Any, dict[str, str]]:
        """One page of `items` (under `key` with `total_count`, as the Actions API answers)."""
        parts = urlsplit(path)
        query = parse_qs(parts.query)
        page = int(query.get("page", ["1"])[0])
        last = max(1, -(-len(items) // PAGE_SIZE))
        headers = {}
        if page < last:
            # GitHub's links use /repositories/ID/... and keep the query's filters; the client
            # must follow them as given.
            nxt = re.sub(r"^/repos/[^/]+/[^/]+", "/repositories/4242", parts.path)
            keep = "".join(
                f"{k}={quote(v[0], safe='')}&" for k, v in query.items() if k not in ("page", "per_page")
            )
            headers["Link"] = (
                f'<{self.url}{nxt}?{keep}per_page={PAGE_SIZE}&page={page + 1}>; rel="next", '
                f'<{self.url}{nxt}?{keep}per_page={PAGE_SIZE}&page={last}>; rel="last"'
            )
        chunk = items[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        return 200, ({"total_count": len(items), key: chunk} if key else chunk), headers

    def route(self, method: str, path: str, payload: Any, who: tuple[str, bool, bool]):
        login, user_ok, can_write = who
        route = urlsplit(path).path
        denied = (403, {"message": "Resource not accessible by integration"}, {})
        if route == "/user":
            return (200, {"login": login}, {}) if user_ok else denied
        m = re.fullmatch(r"/(?:repos/[^/]+/[^/]+|repositories/4242)/issues/(\d+)/comments", route)
        if m and method == "GET":
            with self.lock:
                return self._page(list(self.comments.get(int(m.group(1)), [])), path)
        if m and method == "POST":
            if not can_write:
                return denied
            new_id = self.add_comment(int(m.group(1)), login, payload["body"])
            return 201, {"id": new_id, "html_url": f"https://github.test/c/{new_id}"}, {}
        m = re.fullmatch(r"/repos/[^/]+/[^/]+/issues/comments/(\d+)", route)
        if m and method == "PATCH":
            if not can_write:
                return denied
            with self.lock:  # like an admin's token, the server lets any comment be edited
                for comments in self.comments.values():
                    for c in comments:
                        if c["id"] == int(m.group(1)):
                            c["body"] = payload["body"]
                            return 200, {"id": c["id"], "html_url": f"https://github.test/c/{c['id']}"}, {}
            return 404, {"message": "Not Found"}, {}
        m = re.fullmatch(r"/(?:repos/[^/]+/[^/]+|repositories/4242)/issues/(\d+)/timeline", route)
        if m and method == "GET":
            return self._page(list(self.timeline.get(int(m.group(1)), [])), path)
        m = re.fullmatch(r"/repos/[^/]+/[^/]+/pulls/(\d+)", route)
        if m and method == "GET" and int(m.group(1)) in self.pull_details:
            return 200, self.pull_details[int(m.group(1))], {}
        answer = self.gate_files_route(method, route)
        if answer:
            return answer
        m = re.fullmatch(r"/repos/[^/]+/[^/]+/collaborators/([^/]+)/permission", route)
        if m and method == "GET":
            role = self.permissions.get(m.group(1))
            if role is None:  # GitHub: 404 for a user who is not a collaborator
                return 404, {"message": "Not Found"}, {}
            if isinstance(role, dict):  # the answer as written by the test (an older server, ...)
                return 200, {**role, "user": {"login": m.group(1)}}, {}
            who = {"login": m.group(1), "permissions": base_permissions(role)}
            return (
                200,
                {"permission": LEGACY_PERMISSION.get(role, "read"), "role_name": role, "user": who},
                {},
            )
        m = re.fullmatch(r"/(?:repos/[^/]+/[^/]+|repositories/4242)/pulls/(\d+)/commits", route)
        if m and method == "GET":
            return self._page(list(self.pull_commits.get(int(m.group(1)), [])), path)
        if re.fullmatch(r"/(?:repos/[^/]+/[^/]+|repositories/4242)/actions/runs", route) and method == "GET":
            query = parse_qs(urlsplit(path).query)
            filters = {"head_sha": "head_sha", "event": "event", "branch": "head_branch"}
            newest_first = sorted(self.runs, key=lambda r: str(r.get("created_at")), reverse=True)
            runs = [
                r
                for r in newest_first
                if all(str(r.get(field)) == query[p][0] for p, field in filters.items() if p in query)
            ]
            return self._page(runs, path, key="workflow_runs")
        if re.fullmatch(r"/(?:repos/[^/]+/[^/]+|repositories/4242)/activity", route) and method == "GET":
            if not self.activity_api:
                return 404, {"message": "Not Found"}, {}
            query = parse_qs(urlsplit(path).query)
            ref = query.get("ref", [""])[0]
            wanted = {ref, f"refs/heads/{ref}", ref.removeprefix("refs/heads/")} if ref else None
            items = [a for a in self.activity if wanted is None or a.get("ref") in wanted]
            return self._page(sorted(items, key=lambda a: str(a.get("timestamp")), reverse=True), path)
        m = re.fullmatch(r"/repos/[^/]+/[^/]+/commits/([0-9a-f]+)/pulls", route)
        if m and method == "GET":
            # Like GitHub: a fork's head commit is unknown to the base repository's commit index.
            same = [p for p in self.pulls if p["head"]["sha"] == m.group(1) and not p.get("fork")]
            return self._page(same, path)
        if route.endswith("/pulls") and method == "GET":
            return self._page([p for p in self.pulls if p["state"] == "open"], path)
        return 404, {"message": "Not Found"}, {}


# GET .../collaborators/{user}/permission: `permission` holds the legacy base role (maintain reads
# "write", triage "read"), `role_name` the role itself, custom roles included.
LEGACY_PERMISSION = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
}


def base_permissions(role: str) -> dict[str, bool]:
    order = ["read", "triage", "write", "maintain", "admin"]
    rank = order.index(role) if role in order else 0
    names = {"read": "pull", "triage": "triage", "write": "push", "maintain": "maintain", "admin": "admin"}
    return {names[r]: i <= rank for i, r in enumerate(order)}


# --- the Actions API of one repository (runs, artifacts) ----------------------------------------

ACTIONS_REPO = "acme/models"
ACTIONS_REPO_ID = 4242
BADGE = ".github/workflows/badge.yml"


class ActionsGitHub(FakeGitHub):
    """`FakeGitHub` plus what `evalgate.github.trusted_cache find` reads: the repository (its default
    branch), a workflow file by name, that workflow's runs and each run's artifacts.

    Like a server whose filters are looser than asked, the runs route answers EVERY run it holds,
    whatever `branch`, `event` or `status` the query names, and in the order they were added (not
    newest first): the client has to check each run itself. `add_run` writes a run object the way
    GitHub does (`path`, `event`, `head_branch`, `head_sha`, `workflow_id`, `repository`,
    `head_repository`, `status`, `conclusion`, `created_at`) with one artifact, and
    `artifact_files[run id]` is the file `actions/download-artifact` would unpack from it.
    """

    def __init__(self, *, default_branch: str = "main", repo: str = ACTIONS_REPO) -> None:
        super().__init__()
        self.repo = repo
        self.default_branch = default_branch
        self.workflows: dict[str, dict[str, Any]] = {
            "badge.yml": {"id": 101, "name": "badge", "path": BADGE, "state": "active"},
            "evil.yml": {"id": 202, "name": "badge", "path": ".github/workflows/evil.yml", "state": "active"},
        }
        self.workflow_runs: list[dict[str, Any]] = []
        self.artifacts: dict[int, list[dict[str, Any]]] = {}
        self.artifact_files: dict[int, Any] = {}
        self._run_id = 9_000_000_000

    def _repository(self, full_name: str, rid: int) -> dict[str, Any]:
        name = full_name.split("/")[1]
        return {"id": rid, "full_name": full_name, "name": name, "fork": rid != ACTIONS_REPO_ID}

    def add_run(
        self,
        sha: str,
        *,
        event: str = "push",
        branch: str | None = None,
        path: str = BADGE,
        workflow_id: int = 101,
        name: str = "badge",
        head_repo: tuple[str, int] | None = None,
        status: str = "completed",
        conclusion: str | None = "success",
        artifact: str | None = "evalgate-scores",
        expired: bool = False,
        file: Any = None,
    ) -> int:
        with self.lock:
            self._run_id += 1
            rid = self._run_id
            minute = len(self.workflow_runs)
        branch = self.default_branch if branch is None else branch
        head = self._repository(*(head_repo or (self.repo, ACTIONS_REPO_ID)))
        self.workflow_runs.append(
            {
                "id": rid,
                "name": name,
                "path": path,
                "workflow_id": workflow_id,
                "event": event,
                "head_branch": branch,
                "head_sha": sha,
                "status": status,
                "conclusion": conclusion,
                "run_number": minute + 1,
                "created_at": f"2025-01-01T10:{minute:02d}:00Z",
                "repository": self._repository(self.repo, ACTIONS_REPO_ID),
                "head_repository": head,
                "html_url": f"https://github.test/{self.repo}/actions/runs/{rid}",
            }
        )
        owner = {"id": rid, "head_sha": sha}
        self.artifacts[rid] = (
            [{"id": rid + 1, "name": artifact, "expired": expired, "workflow_run": owner}] if artifact else []
        )
        if file is not None:
            self.artifact_files[rid] = file
        return rid

    def route(self, method: str, path: str, payload: Any, who: tuple[str, bool, bool]):
        route = urlsplit(path).path
        repo = re.escape(self.repo)
        if method == "GET" and re.fullmatch(rf"/repos/{repo}", route):
            meta = self._repository(self.repo, ACTIONS_REPO_ID)
            return 200, {**meta, "default_branch": self.default_branch}, {}
        m = re.fullmatch(rf"/repos/{repo}/actions/workflows/([^/]+)", route)
        if method == "GET" and m:
            wf = self.workflows.get(m.group(1))
            return (200, wf, {}) if wf else (404, {"message": "Not Found"}, {})
        m = re.fullmatch(rf"/repos/{repo}/actions/workflows/([^/]+)/runs", route)
        if method == "GET" and m:
            runs = list(self.workflow_runs)  # every run, whatever the query asks (see the docstring)
            return 200, {"total_count": len(runs), "workflow_runs": runs}, {}
        m = re.fullmatch(rf"/repos/{repo}/actions/runs/(\d+)/artifacts", route)
        if method == "GET" and m:
            found = self.artifacts.get(int(m.group(1)), [])
            return 200, {"total_count": len(found), "artifacts": found}, {}
        return super().route(method, path, payload, who)


# --- the picky stand-in -------------------------------------------------------------------------

PREFIX = "/api/v3"
REPO_ID = 777
LIMIT = 65536


@dataclass
class Seen:
    method: str
    path: str
    authorization: str | None
    body: Any


class HostileGitHub(StandIn):
    protocol = "HTTP/1.1"
    TOKENS: ClassVar[dict[str, tuple]] = {  # token -> (login on its comments, GET /user answers, may write)
        "ghp-pat-dana": ("dana", True, True),
        "ghs-install": (BOT, False, True),
        "ghs-fork": (BOT, False, False),
    }

    def __init__(
        self,
        *,
        page_cap: int = 7,
        repo: str = "acme/models",
        rel_last: bool = False,
        count_bytes: bool = False,
    ) -> None:
        super().__init__()
        self.page_cap = page_cap
        self.count_bytes = count_bytes  # measure the 65,536 limit in UTF-8 bytes, not characters
        self.rel_last = rel_last  # link parameters before rel (`<url>; type="json"; rel="next"`)
        self.repo = repo
        self.pulls: list[dict[str, Any]] = []
        self.deleted_prs: set[int] = set()
        self.seen: list[Seen] = []
        self._next_id = 5000
        self.url = self.origin + PREFIX

    def add(self, pr: int, login: str | None, body: str) -> int:
        with self.lock:
            self._next_id += 7  # ids grow with time but are not consecutive
            user = None if login is None else {"login": login, "type": "Bot" if "[bot]" in login else "User"}
            self.comments.setdefault(pr, []).append({"id": self._next_id, "user": user, "body": body})
            return self._next_id

    def script(self, method: str, path_re: str, status: int, **kw: Any) -> None:
        self.queue(Fault(method, path_re, status, **kw))

    def calls(self, method: str, path_re: str = "") -> list[Seen]:
        return [s for s in self.seen if s.method == method and re.search(path_re, s.path)]

    def answer(self, h: Handler, method: str, raw: bytes) -> None:
        if method == "DELETE":
            return h.send_error(501)
        payload = json.loads(raw) if raw else None
        auth = h.headers.get("Authorization")
        with self.lock:
            self.seen.append(Seen(method, h.path, auth, payload))
            fault = self.take_fault(method, h.path)
        token = (auth or "").removeprefix("Bearer ").removeprefix("token ")
        if fault and not fault.apply:
            return self._fault(h, fault)
        if token not in self.TOKENS:
            return self.send(h, 401, {"message": "Bad credentials"})
        status, body, headers = self.route(method, h.path, payload, self.TOKENS[token])
        if fault:
            return self._fault(h, fault)
        self.send(h, status, body, headers)

    @staticmethod
    def _reset(h: Handler) -> None:
        # SO_LINGER 0: close() sends RST, the client sees "connection reset by peer".
        h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        h.close_connection = True

    def _fault(self, h: Handler, fault: Fault) -> None:
        if fault.reset:
            return self._reset(h)
        if fault.partial:
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", "400")
            h.end_headers()
            h.wfile.write(b'[{"id": 1, "body": "')
            h.wfile.flush()
            return self._reset(h)
        self.send(h, fault.status, fault.body, fault.headers)

    def _page(self, items: list[Any], path: str) -> tuple[int, Any, dict[str, str]]:
        parts = urlsplit(path)
        query = parse_qs(parts.query)
        per_page = min(int(query.get("per_page", ["30"])[0]), self.page_cap)
        page = int(query.get("page", ["1"])[0])
        last = max(1, -(-len(items) // per_page))
        rel_path = re.sub(r"^/api/v3/repos/[^/]+/[^/]+", f"/api/v3/repositories/{REPO_ID}", parts.path)

        def link(p: int, rel: str) -> str:
            # Extra query parameters in front, and link parameters after rel, in an unusual order.
            url = f"<{self.origin}{rel_path}?sort=created&per_page={per_page}&page={p}>"
            if self.rel_last:
                return f'{url}; type="application/json"; rel="{rel}"'
            return f'{url}; rel="{rel}"; type="application/json"'

        rels = [link(last, "last")]
        if page < last:
            rels.append(link(page + 1, "next"))
        if page > 1:
            rels += [link(1, "first"), link(page - 1, "prev")]
        start = (page - 1) * per_page
        return 200, items[start : start + per_page], {"Link": ", ".join(rels)}

    def too_long(self, body: str) -> bool:
        return len(body.encode("utf-8") if self.count_bytes else body) > LIMIT

    def route(self, method: str, path: str, payload: Any, who: tuple[str, bool, bool]):
        login, user_ok, can_write = who
        route = urlsplit(path).path
        denied = (403, {"message": "Resource not accessible by integration"}, {})
        if not route.startswith(PREFIX + "/"):
            return 404, {"message": "Not Found"}, {}
        route = route[len(PREFIX) :]
        if route == "/user":
            return (200, {"login": login, "id": 1}, {}) if user_ok else denied
        repo_re = rf"(?:/repos/{re.escape(self.repo)}|/repositories/{REPO_ID})"
        answer = self.gate_files_route(method, route, repo_re)
        if answer:
            return answer
        m = re.fullmatch(repo_re + r"/issues/(\d+)/comments", route)
        if m:
            pr = int(m.group(1))
            if pr in self.deleted_prs:
                return 404, {"message": "Not Found"}, {}
            if method == "GET":
                with self.lock:
                    return self._page(list(self.comments.get(pr, [])), path)
            if method == "POST":
                if not can_write:
                    return denied
                if self.too_long(payload["body"]):
                    return (
                        422,
                        {
                            "message": "Validation Failed",
                            "errors": [
                                {
                                    "code": "custom",
                                    "field": "body",
                                    "message": "body is too long (maximum is 65536 characters)",
                                }
                            ],
                        },
                        {},
                    )
                new_id = self.add(pr, login, payload["body"])
                return (
                    201,
                    {"id": new_id, "html_url": f"{self.origin}/{self.repo}/pull/{pr}#issuecomment-{new_id}"},
                    {},
                )
        m = re.fullmatch(repo_re + r"/issues/comments/(\d+)", route)
        if m and method == "PATCH":
            if not can_write:
                return denied
            if self.too_long(payload["body"]):
                return 422, {"message": "Validation Failed"}, {}
            with self.lock:
                for comments in self.comments.values():
                    for c in comments:
                        if c["id"] == int(m.group(1)):
                            c["body"] = payload["body"]
                            return 200, {"id": c["id"], "html_url": f"{self.origin}/c/{c['id']}"}, {}
            return 404, {"message": "Not Found"}, {}
        m = re.fullmatch(repo_re + r"/commits/([0-9a-f]{40})/pulls", route)
        if m and method == "GET":
            return self._page([p for p in self.pulls if p["head"]["sha"] == m.group(1)], path)
        if re.fullmatch(repo_re + r"/pulls", route) and method == "GET":
            return self._page([p for p in self.pulls if p["state"] == "open"], path)
        return 404, {"message": "Not Found"}, {}


class Elsewhere(StandIn):
    """Another host (127.0.0.2 when it exists, else another port): records what reaches it."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []
        try:
            super().__init__()
        except OSError:
            self.host = "127.0.0.1"
            super().__init__()
        self.start()

    host = "127.0.0.2"

    def answer(self, h: Handler, method: str, raw: bytes) -> None:
        self.seen.append((h.path, h.headers.get("Authorization")))
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", "2")
        h.end_headers()
        h.wfile.write(b"[]")


# --- the stand-in written without looking at evalgate's client ----------------------------------

OTHER_REPO = "octo-org/gate-repo"
OTHER_REPO_ID = 1296269
DOCS = "https://docs.github.com/rest/issues/comments"


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]


class OtherGitHub(StandIn):
    REPO = OTHER_REPO
    TOKENS: ClassVar[dict[str, tuple]] = {  # token -> (login, user id, type, GET /user answers, may write)
        "ghs_installation": (BOT, 41898282, "Bot", False, True),
        "ghs_forkreadonly": (BOT, 41898282, "Bot", False, False),
        "ghp_personal": ("octocat", 583231, "User", True, True),
    }

    def __init__(
        self,
        *,
        page_size: int = 30,
        ignore_per_page: bool = False,
        link_split: bool = False,  # one Link header per relation
        auth: str = "any",  # "any", "token" or "bearer": which Authorization scheme is accepted
        accept_check: bool | str = False,  # 415 unless Accept is JSON (True) or exactly this media type
        gzip_always: bool = False,  # gzip every body, asked for or not
        chunked: bool = False,
        http10: bool = False,
        delay: float = 0.0,
        user_route: bool | str = True,  # False: GET /user is 404 (no such route); "401": 401 unless a PAT
        create_body: bool = True,  # False: 201 with a Location header and an empty body
        endless: bool = False,  # a `next` link on every page, the last (and past it) too
        link_host: str | None = None,  # write links with this host name (e.g. the machine's own name)
        seed: int = 7,
    ) -> None:
        self.protocol = "HTTP/1.0" if http10 else "HTTP/1.1"
        super().__init__()
        self.page_size = page_size
        self.ignore_per_page = ignore_per_page
        self.link_split = link_split
        self.endless = endless
        self.auth = auth
        self.accept_check = accept_check
        self.gzip_always = gzip_always
        self.chunked = chunked
        self.delay = delay
        self.user_route = user_route
        self.create_body = create_body
        self.rng = random.Random(seed)
        self.requests: list[Request] = []
        self.on_request: Any = None  # called with (method, path) before each request is answered
        self._next_id = 1_500_000_000
        port = self.server.server_address[1]
        self.link_base = f"http://{link_host}:{port}" if link_host else self.url

    def add(self, pr: int, login: str, body: str, *, kind: str = "User") -> int:
        with self.lock:
            self._next_id += 1
            cid = self._next_id
            self.comments.setdefault(pr, []).append(
                self._comment(cid, pr, login, 1000 + len(login), kind, body)
            )
            return cid

    def fault(self, method: str, path_re: str, status: int, **kw: Any) -> None:
        self.queue(Fault(method, path_re, status, **kw))

    def count(self, method: str, path_re: str = "") -> int:
        return sum(1 for r in self.requests if r.method == method and re.search(path_re, r.path))

    def _comment(self, cid: int, pr: int, login: str, uid: int, kind: str, body: str) -> dict[str, Any]:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_700_000_000 + cid % 100_000))
        return {
            "url": f"{self.url}/repos/{OTHER_REPO}/issues/comments/{cid}",
            "html_url": f"https://github.com/{OTHER_REPO}/pull/{pr}#issuecomment-{cid}",
            "issue_url": f"{self.url}/repos/{OTHER_REPO}/issues/{pr}",
            "id": cid,
            "node_id": f"IC_kwDO{cid}",
            "user": {
                "login": login,
                "id": uid,
                "node_id": f"U_{uid}",
                "type": kind,
                "site_admin": False,
                "html_url": f"https://github.com/{login}",
            },
            "created_at": stamp,
            "updated_at": stamp,
            "author_association": "NONE" if kind == "Bot" else "CONTRIBUTOR",
            "body": body,
            "reactions": {"url": "", "total_count": 0, "+1": 0},
            "performed_via_github_app": {"id": 15368, "slug": "github-actions", "name": "GitHub Actions"}
            if kind == "Bot"
            else None,
        }

    def send(self, h: Handler, status: int, body: Any, headers: Any = None) -> None:
        headers = list(headers.items()) if isinstance(headers, dict) else headers
        if isinstance(body, bytes):
            raw, ctype = body, "text/html; charset=utf-8"
        else:
            raw = b"" if body is None else json.dumps(body).encode()
            ctype = "application/json; charset=utf-8"
        if self.gzip_always and raw:
            raw = gzip.compress(raw)
        if self.delay:
            time.sleep(self.delay)
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("X-GitHub-Media-Type", "github.v3; format=json")
        if not any(k.lower() == "x-ratelimit-remaining" for k, _ in headers or []):
            h.send_header("x-ratelimit-limit", "5000")
            h.send_header("x-ratelimit-remaining", "4999")
            h.send_header("x-ratelimit-reset", str(int(time.time()) + 3600))
        if self.gzip_always and raw:
            h.send_header("Content-Encoding", "gzip")
        chunked = self.chunked and h.protocol_version == "HTTP/1.1"
        if chunked:
            h.send_header("Transfer-Encoding", "chunked")
        elif h.protocol_version == "HTTP/1.1":
            h.send_header("Content-Length", str(len(raw)))
        for k, v in headers or []:
            h.send_header(k, v)
        h.end_headers()
        if chunked:
            for i in range(0, len(raw), 97):
                part = raw[i : i + 97]
                h.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            h.wfile.write(b"0\r\n\r\n")
        else:
            h.wfile.write(raw)

    def answer(self, h: Handler, method: str, raw: bytes) -> None:
        if self.on_request:
            self.on_request(method, h.path)
        with self.lock:
            self.requests.append(Request(method, h.path, dict(h.headers.items())))
            fault = self.take_fault(method, h.path)
        login = self._who(h.headers.get("Authorization") or "")
        if login is None:
            return self.send(h, 401, {"message": "Bad credentials", "documentation_url": DOCS})
        accept = h.headers.get("Accept") or ""
        if (self.accept_check is True and "json" not in accept) or (
            isinstance(self.accept_check, str) and accept != self.accept_check
        ):
            return self.send(h, 415, {"message": "Unsupported 'Accept' header", "documentation_url": DOCS})
        if fault:
            if fault.html:
                page = b"<html><head><title>502 Bad Gateway</title></head><body>unicorn</body></html>"
                return self.send(h, fault.status, page, list(fault.headers.items()))
            body = fault.body if fault.body is not None else {"message": "fault", "documentation_url": DOCS}
            return self.send(h, fault.status, body, list(fault.headers.items()))
        payload = json.loads(raw) if raw else None
        status, body, headers = self.route(method, h.path, payload, self.TOKENS[login])
        self.send(h, status, body, headers)

    def _who(self, authorization: str) -> str | None:
        scheme, _, token = authorization.partition(" ")
        allowed = {"any": ("token", "bearer"), "token": ("token",), "bearer": ("bearer",)}[self.auth]
        if scheme.lower() not in allowed or token not in self.TOKENS:
            return None
        return token

    def _links(self, base: str, page: int, last: int, per_page: int | None) -> list[tuple[str, str]]:
        def url(n: int) -> str:
            query = f"per_page={per_page}&page={n}" if per_page else f"page={n}"
            return f"<{self.link_base}{base}?{query}>"

        rels = []
        if page > 1:
            rels += [(url(page - 1), "prev"), (url(1), "first")]
        if page < last or self.endless:
            rels += [(url(page + 1), "next"), (url(last), "last")]
        self.rng.shuffle(rels)
        if self.link_split:
            return [("Link", f'{u}; rel="{r}"') for u, r in rels]
        return [("Link", ", ".join(f'{u}; rel="{r}"' for u, r in rels))] if rels else []

    def route(self, method: str, path: str, payload: Any, who: tuple[str, int, str, bool, bool]):
        login, uid, kind, user_ok, can_write = who
        parts = urlsplit(path)
        route = parts.path
        denied = (
            403,
            {"message": "Resource not accessible by integration", "documentation_url": DOCS, "status": "403"},
            [],
        )
        if route == "/user":
            if self.user_route == "401" and not user_ok:
                return 401, {"message": "Bad credentials", "documentation_url": DOCS}, []
            if not self.user_route:
                return 404, {"message": "Not Found", "documentation_url": DOCS}, []
            if not user_ok:
                return denied
            return 200, {"login": login, "id": uid, "type": kind}, []
        answer = self.gate_files_route(
            method, route, rf"/(?:repos/{OTHER_REPO}|repositories/{OTHER_REPO_ID})"
        )
        if answer:
            return answer[0], answer[1], []
        m = re.fullmatch(
            rf"/(?:repos/{OTHER_REPO}|repositories/{OTHER_REPO_ID})/issues/(\d+)/comments", route
        )
        if m and method == "GET":
            query = parse_qs(parts.query)
            page = int(query.get("page", ["1"])[0])
            asked = query.get("per_page")
            size = self.page_size if self.ignore_per_page or not asked else min(100, int(asked[0]))
            with self.lock:
                items = list(self.comments.get(int(m.group(1)), []))
            last = max(1, -(-len(items) // size))
            base = f"/repositories/{OTHER_REPO_ID}/issues/{m.group(1)}/comments"
            links = self._links(base, page, last, None if self.ignore_per_page or not asked else size)
            return 200, items[(page - 1) * size : page * size], links
        if m and method == "POST":
            if not can_write:
                return denied
            pr = int(m.group(1))
            with self.lock:
                self._next_id += 1
                comment = self._comment(self._next_id, pr, login, uid, kind, payload["body"])
                self.comments.setdefault(pr, []).append(comment)
            headers = [("Location", comment["url"])]
            return 201, comment if self.create_body else None, headers
        m = re.fullmatch(rf"/repos/{OTHER_REPO}/issues/comments/(\d+)", route)
        if m and method == "PATCH":
            with self.lock:
                for comments in self.comments.values():
                    for c in comments:
                        if c["id"] == int(m.group(1)):
                            if not can_write or c["user"]["login"].casefold() != login.casefold():
                                return denied
                            c["body"] = payload["body"]
                            c["updated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                            return 200, c, []
            return 404, {"message": "Not Found", "documentation_url": DOCS}, []
        if m and method == "DELETE":
            with self.lock:
                for comments in self.comments.values():
                    for c in list(comments):
                        if c["id"] == int(m.group(1)):
                            if not can_write or c["user"]["login"].casefold() != login.casefold():
                                return denied
                            comments.remove(c)
                            return 204, None, []
            return 404, {"message": "Not Found", "documentation_url": DOCS}, []
        return 404, {"message": "Not Found", "documentation_url": DOCS}, []
