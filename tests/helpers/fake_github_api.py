"""A stand-in for the GitHub REST API on 127.0.0.1: real HTTP, real headers, in-memory state.

It serves what evalgate's client uses: issue comments (list with `Link` pagination at 30 per page,
whatever per_page asks, like a server that caps it; create; edit), `GET /user`, the PRs of a
commit and the open PRs, and for `evalgate approval` one PR (`pull_details`), its timeline
(`timeline`, paginated), collaborator permissions (`permissions`) and workflow runs (`runs`).
Tokens decide who is calling, as on GitHub:

  TOKENS[token] = (login shown on its comments, whether GET /user answers, whether it may write)

Faults are queued with `fail(...)` and consumed by the first matching request; `apply=True` makes
the server do the work and still answer the error (a create whose answer got lost).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PAGE_SIZE = 30
TOKENS = {
    "pat-alice": ("alice", True, True),  # a personal access token: GET /user works
    "ghs-installation": ("github-actions[bot]", False, True),  # GITHUB_TOKEN with pull-requests: write
    "ghs-readonly": ("github-actions[bot]", False, False),  # a fork's pull_request token
}


@dataclass
class Fault:
    method: str
    path_re: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    apply: bool = False


class FakeGitHub:
    def __init__(self) -> None:
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.pulls: list[dict[str, Any]] = []  # {"number", "state", "head": {"sha", "repo": {...}}}
        self.faults: list[Fault] = []
        self.pull_details: dict[int, dict[str, Any]] = {}
        self.timeline: dict[int, list[dict[str, Any]]] = {}
        self.permissions: dict[str, str] = {}  # login -> admin|maintain|write|triage|read
        self.runs: list[dict[str, Any]] = []  # {"head_sha", "event", "created_at"}
        self.log: list[tuple[str, str]] = []  # (method, path?query) of every request
        self.lock = threading.Lock()
        self._next_id = 1000
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    # -- test helpers ----------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self.server.shutdown()
        self.server.server_close()

    def add_comment(self, pr: int, login: str, body: str) -> int:
        with self.lock:
            self._next_id += 1
            self.comments.setdefault(pr, []).append(
                {"id": self._next_id, "user": {"login": login}, "body": body}
            )
            return self._next_id

    def fail(self, method: str, path_re: str, status: int, **kw: Any) -> None:
        self.faults.append(Fault(method, path_re, status, **kw))

    def count(self, method: str, path_re: str = "") -> int:
        return sum(1 for m, p in self.log if m == method and re.search(path_re, p))

    def by(self, pr: int, login: str) -> list[dict[str, Any]]:
        return [c for c in self.comments.get(pr, []) if c["user"]["login"] == login]

    # -- the API ---------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(length)) if length else None
                token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                with api.lock:
                    api.log.append((method, self.path))
                    fault = next(
                        (f for f in api.faults if f.method == method and re.search(f.path_re, self.path)),
                        None,
                    )
                    if fault:
                        api.faults.remove(fault)
                if token not in TOKENS:
                    return self._send(401, {"message": "Bad credentials"})
                if fault and not fault.apply:
                    return self._send(
                        fault.status,
                        {"message": "fault"} if fault.body is None else fault.body,
                        fault.headers,
                    )
                status, body, headers = api.route(method, self.path, payload, TOKENS[token])
                if fault:
                    return self._send(
                        fault.status,
                        {"message": "fault"} if fault.body is None else fault.body,
                        fault.headers,
                    )
                self._send(status, body, headers)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

        return Handler

    def _page(self, items: list[Any], path: str) -> tuple[int, Any, dict[str, str]]:
        parts = urlsplit(path)
        page = int(parse_qs(parts.query).get("page", ["1"])[0])
        last = max(1, -(-len(items) // PAGE_SIZE))
        headers = {}
        if page < last:
            # GitHub's links use /repositories/ID/...; the client must follow them as given.
            nxt = re.sub(r"^/repos/[^/]+/[^/]+", "/repositories/4242", parts.path)
            headers["Link"] = (
                f'<{self.url}{nxt}?per_page={PAGE_SIZE}&page={page + 1}>; rel="next", '
                f'<{self.url}{nxt}?per_page={PAGE_SIZE}&page={last}>; rel="last"'
            )
        return 200, items[(page - 1) * PAGE_SIZE : page * PAGE_SIZE], headers

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
        if m and method == "GET":
            pr = self.pull_details.get(int(m.group(1)))
            return (200, pr, {}) if pr else (404, {"message": "Not Found"}, {})
        m = re.fullmatch(r"/repos/[^/]+/[^/]+/collaborators/([^/]+)/permission", route)
        if m and method == "GET":
            perm = self.permissions.get(m.group(1))
            if perm is None:  # GitHub: 404 for a user who is not a collaborator
                return 404, {"message": "Not Found"}, {}
            return 200, {"permission": perm, "user": {"login": m.group(1)}}, {}
        if re.fullmatch(r"/repos/[^/]+/[^/]+/actions/runs", route) and method == "GET":
            query = parse_qs(urlsplit(path).query)
            runs = [
                r
                for r in self.runs
                if r["head_sha"] == query.get("head_sha", [r["head_sha"]])[0]
                and r["event"] == query.get("event", [r["event"]])[0]
            ]
            return 200, {"total_count": len(runs), "workflow_runs": runs}, {}
        m = re.fullmatch(r"/repos/[^/]+/[^/]+/commits/([0-9a-f]+)/pulls", route)
        if m and method == "GET":
            # Like GitHub: a fork's head commit is unknown to the base repository's commit index.
            same = [p for p in self.pulls if p["head"]["sha"] == m.group(1) and not p.get("fork")]
            return self._page(same, path)
        if route.endswith("/pulls") and method == "GET":
            return self._page([p for p in self.pulls if p["state"] == "open"], path)
        return 404, {"message": "Not Found"}, {}
