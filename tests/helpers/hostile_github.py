"""A second, independent stand-in for the GitHub REST API, shaped like the awkward parts of the real one.

Where `fake_github_api.FakeGitHub` is the friendly case, this one is GitHub Enterprise-like and
picky: every route lives under a path prefix (`/api/v3`), `per_page` is capped (GitHub caps it at
100; here `page_cap`, small, so pagination happens at a few dozen comments), the `Link` header lists
its rel values in a different order (`last` before `next`, plus `first`/`prev`), carries extra link
parameters and extra query parameters, and points at `/repositories/ID/...` rather than the path that
was asked. Comments come oldest first. `GET /user` answers 403 for an installation token and 200
for a personal token; comments can have `user: null` (a deleted account) and CRLF bodies. A body
longer than 65,536 characters is refused with 422, as GitHub does.

Every request is recorded with its Authorization header and the host it reached, so a test can
prove the token never left the API's host. Scripted faults (`script(...)`) answer a request
instead of the API: any status and headers, a `Location` for redirects, `reset=True` to drop the
connection without an answer, `apply=True` to do the work and still answer the fault.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PREFIX = "/api/v3"
REPO_ID = 777
BOT = "github-actions[bot]"
LIMIT = 65536
# token -> (login on its comments, GET /user answers, may write)
TOKENS = {
    "ghp-pat-dana": ("dana", True, True),
    "ghs-install": (BOT, False, True),
    "ghs-fork": (BOT, False, False),
}


@dataclass
class Scripted:
    method: str
    path_re: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    apply: bool = False
    reset: bool = False  # drop the connection without an answer
    partial: bool = False  # send the headers and half the body, then drop the connection


@dataclass
class Seen:
    method: str
    path: str
    authorization: str | None
    body: Any


class HostileGitHub:
    def __init__(
        self,
        *,
        page_cap: int = 7,
        repo: str = "acme/models",
        rel_last: bool = False,
        count_bytes: bool = False,
    ) -> None:
        self.page_cap = page_cap
        self.count_bytes = count_bytes  # measure the 65,536 limit in UTF-8 bytes, not characters
        self.rel_last = rel_last  # link parameters before rel (`<url>; type="json"; rel="next"`)
        self.repo = repo
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.pulls: list[dict[str, Any]] = []
        self.deleted_prs: set[int] = set()
        self.scripts: list[Scripted] = []
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        self._next_id = 5000
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.url = self.origin + PREFIX
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def start(self) -> HostileGitHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self.server.shutdown()
        self.server.server_close()

    # -- test helpers ----------------------------------------------------------------------------

    def add(self, pr: int, login: str | None, body: str) -> int:
        with self.lock:
            self._next_id += 7  # ids grow with time but are not consecutive
            user = None if login is None else {"login": login, "type": "Bot" if "[bot]" in login else "User"}
            self.comments.setdefault(pr, []).append({"id": self._next_id, "user": user, "body": body})
            return self._next_id

    def script(self, method: str, path_re: str, status: int, **kw: Any) -> None:
        self.scripts.append(Scripted(method, path_re, status, **kw))

    def by(self, pr: int, login: str) -> list[dict[str, Any]]:
        return [c for c in self.comments.get(pr, []) if (c["user"] or {}).get("login") == login]

    def calls(self, method: str, path_re: str = "") -> list[Seen]:
        return [s for s in self.seen if s.method == method and re.search(path_re, s.path)]

    # -- HTTP ------------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                raw = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            def _reset(self) -> None:
                # SO_LINGER 0: close() sends RST, the client sees "connection reset by peer".
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                payload = json.loads(raw) if raw else None
                auth = self.headers.get("Authorization")
                with api.lock:
                    api.seen.append(Seen(method, self.path, auth, payload))
                    fault = next(
                        (s for s in api.scripts if s.method == method and re.search(s.path_re, self.path)),
                        None,
                    )
                    if fault:
                        api.scripts.remove(fault)
                token = (auth or "").removeprefix("Bearer ").removeprefix("token ")
                if fault and not fault.apply:
                    return self._fault(fault)
                if token not in TOKENS:
                    return self._send(401, {"message": "Bad credentials"})
                status, body, headers = api.route(method, self.path, payload, TOKENS[token])
                if fault:
                    return self._fault(fault)
                self._send(status, body, headers)

            def _fault(self, fault: Scripted) -> None:
                if fault.reset:
                    return self._reset()
                if fault.partial:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "400")
                    self.end_headers()
                    self.wfile.write(b'[{"id": 1, "body": "')
                    self.wfile.flush()
                    return self._reset()
                self._send(fault.status, fault.body, fault.headers)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

        return Handler

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


class Elsewhere:
    """Another host (127.0.0.2 when it exists, else another port): records what reaches it."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                outer.seen.append((self.path, self.headers.get("Authorization")))
                raw = b"[]"
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_PATCH = _any

        try:
            self.server = ThreadingHTTPServer(("127.0.0.2", 0), Handler)
        except OSError:
            self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        host, port = self.server.server_address[:2]
        self.url = f"http://{host}:{port}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
