"""A third stand-in for the GitHub REST API, written without looking at evalgate's client.

It imitates the real service where the other stand-ins are friendly, and can be made to behave like
stand-ins written by others: full comment objects (`user: {login, id, type}`, `html_url`,
`created_at`, `author_association`, `performed_via_github_app`), 201 + `Location` on create, 200 on
edit, a default page of 30 with `per_page` capped at 100 (or ignored, paging by a fixed small size),
`Link` headers to `/repositories/ID/issues/N/comments?page=N` with `first`/`prev`/`next`/`last` in
shuffled order (optionally one `Link` header per relation), `GET /user` answering 403 for an
installation token, 200 for a personal token or 404 when the stand-in has no such route, error
bodies with `documentation_url`, HTML bodies on 502, and transport variants: `token X` or `Bearer X`
only, an `Accept` check, gzip bodies, chunked transfer encoding, HTTP/1.0, slow answers.

    api = OtherGitHub(page_size=2, ignore_per_page=True).start()
    api.fault("POST", r"/comments$", 502, html=True)
"""

from __future__ import annotations

import gzip
import json
import random
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

REPO = "octo-org/gate-repo"
REPO_ID = 1296269
BOT = "github-actions[bot]"
DOCS = "https://docs.github.com/rest/issues/comments"
# token -> (login, user id, type, GET /user answers, may write)
TOKENS = {
    "ghs_installation": (BOT, 41898282, "Bot", False, True),
    "ghs_forkreadonly": (BOT, 41898282, "Bot", False, False),
    "ghp_personal": ("octocat", 583231, "User", True, True),
}


@dataclass
class Fault:
    method: str
    path_re: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    html: bool = False  # an HTML page, as a load balancer answers a 502


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]


class OtherGitHub:
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
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.faults: list[Fault] = []
        self.requests: list[Request] = []
        self.on_request: Any = None  # called with (method, path) before each request is answered
        self.lock = threading.Lock()
        self._next_id = 1_500_000_000
        handler = self._handler()
        handler.protocol_version = "HTTP/1.0" if http10 else "HTTP/1.1"
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.link_base = f"http://{link_host}:{self.server.server_address[1]}" if link_host else self.url
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    # -- helpers for tests -----------------------------------------------------------------------

    def start(self) -> OtherGitHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self.server.shutdown()
        self.server.server_close()

    def add(self, pr: int, login: str, body: str, *, kind: str = "User") -> int:
        with self.lock:
            self._next_id += 1
            cid = self._next_id
            self.comments.setdefault(pr, []).append(
                self._comment(cid, pr, login, 1000 + len(login), kind, body)
            )
            return cid

    def fault(self, method: str, path_re: str, status: int, **kw: Any) -> None:
        self.faults.append(Fault(method, path_re, status, **kw))

    def by(self, pr: int, login: str) -> list[dict[str, Any]]:
        return [c for c in self.comments.get(pr, []) if c["user"]["login"] == login]

    def count(self, method: str, path_re: str = "") -> int:
        return sum(1 for r in self.requests if r.method == method and re.search(path_re, r.path))

    def _comment(self, cid: int, pr: int, login: str, uid: int, kind: str, body: str) -> dict[str, Any]:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_700_000_000 + cid % 100_000))
        return {
            "url": f"{self.url}/repos/{REPO}/issues/comments/{cid}",
            "html_url": f"https://github.com/{REPO}/pull/{pr}#issuecomment-{cid}",
            "issue_url": f"{self.url}/repos/{REPO}/issues/{pr}",
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

    # -- HTTP ------------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any, headers: list[tuple[str, str]] | None = None) -> None:
                if isinstance(body, bytes):
                    raw, ctype = body, "text/html; charset=utf-8"
                else:
                    raw = b"" if body is None else json.dumps(body).encode()
                    ctype = "application/json; charset=utf-8"
                if api.gzip_always and raw:
                    raw = gzip.compress(raw)
                if api.delay:
                    time.sleep(api.delay)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("X-GitHub-Media-Type", "github.v3; format=json")
                if not any(k.lower() == "x-ratelimit-remaining" for k, _ in headers or []):
                    self.send_header("x-ratelimit-limit", "5000")
                    self.send_header("x-ratelimit-remaining", "4999")
                    self.send_header("x-ratelimit-reset", str(int(time.time()) + 3600))
                if api.gzip_always and raw:
                    self.send_header("Content-Encoding", "gzip")
                chunked = api.chunked and self.protocol_version == "HTTP/1.1"
                if chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                elif self.protocol_version == "HTTP/1.1":
                    self.send_header("Content-Length", str(len(raw)))
                for k, v in headers or []:
                    self.send_header(k, v)
                self.end_headers()
                if chunked:
                    for i in range(0, len(raw), 97):
                        part = raw[i : i + 97]
                        self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")
                else:
                    self.wfile.write(raw)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if api.on_request:
                    api.on_request(method, self.path)
                with api.lock:
                    api.requests.append(Request(method, self.path, dict(self.headers.items())))
                    fault = next(
                        (f for f in api.faults if f.method == method and re.search(f.path_re, self.path)),
                        None,
                    )
                    if fault:
                        api.faults.remove(fault)
                login = api._who(self.headers.get("Authorization") or "")
                if login is None:
                    return self._send(401, {"message": "Bad credentials", "documentation_url": DOCS})
                accept = self.headers.get("Accept") or ""
                if (api.accept_check is True and "json" not in accept) or (
                    isinstance(api.accept_check, str) and accept != api.accept_check
                ):
                    return self._send(
                        415, {"message": "Unsupported 'Accept' header", "documentation_url": DOCS}
                    )
                if fault:
                    if fault.html:
                        page = b"<html><head><title>502 Bad Gateway</title></head><body>unicorn</body></html>"
                        return self._send(fault.status, page, list(fault.headers.items()))
                    body = (
                        fault.body
                        if fault.body is not None
                        else {"message": "fault", "documentation_url": DOCS}
                    )
                    return self._send(fault.status, body, list(fault.headers.items()))
                payload = json.loads(raw) if raw else None
                status, body, headers = api.route(method, self.path, payload, TOKENS[login])
                self._send(status, body, headers)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

        return Handler

    def _who(self, authorization: str) -> str | None:
        scheme, _, token = authorization.partition(" ")
        allowed = {"any": ("token", "bearer"), "token": ("token",), "bearer": ("bearer",)}[self.auth]
        if scheme.lower() not in allowed or token not in TOKENS:
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
        m = re.fullmatch(rf"/(?:repos/{REPO}|repositories/{REPO_ID})/issues/(\d+)/comments", route)
        if m and method == "GET":
            query = parse_qs(parts.query)
            page = int(query.get("page", ["1"])[0])
            asked = query.get("per_page")
            size = self.page_size if self.ignore_per_page or not asked else min(100, int(asked[0]))
            with self.lock:
                items = list(self.comments.get(int(m.group(1)), []))
            last = max(1, -(-len(items) // size))
            base = f"/repositories/{REPO_ID}/issues/{m.group(1)}/comments"
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
        m = re.fullmatch(rf"/repos/{REPO}/issues/comments/(\d+)", route)
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
