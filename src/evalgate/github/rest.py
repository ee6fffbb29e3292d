"""GitHub REST over urllib: retries that honour GitHub's rate-limit guidance, and pagination.

The base URL comes from `GITHUB_API_URL` (GitHub Enterprise Server serves the same API under
`https://HOST/api/v3`). Retries follow "Rate limits for the REST API": wait `retry-after` seconds
when given, else until `x-ratelimit-reset` when `x-ratelimit-remaining` is 0, else back off
exponentially (at least `secondary_min_wait` for a secondary rate limit, which GitHub asks to be a
minute); a wait longer than `max_wait` is reported, not slept through. 5xx and network errors are
retried too. A 403 that is none of these is a token that may not do this (`ReadOnlyToken`).

Stand-ins and proxies differ from GitHub in small ways, and each is met rather than failed on: a
401 until a first success is tried with the other Authorization scheme (`Bearer X` / `token X`), a
406/415 with the older `application/vnd.github.v3+json`, gzip/deflate bodies are decoded, a `Link`
sent once per relation is read whole, an empty page ends a listing, and an API on this machine's
loopback is reached directly (never through HTTP(S)_PROXY), its links followed under any name of
this machine on the same port.
"""

from __future__ import annotations

import email.utils
import functools
import gzip
import http.client
import ipaddress
import json
import os
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from evalgate import __version__
from evalgate.errors import GitHubError

DEFAULT_API_URL = "https://api.github.com"
# `GET /user` answers 403 for the installation token GITHUB_TOKEN; its comments are written by
# this login (user id 41898282). EVALGATE_COMMENT_AUTHOR overrides it (e.g. a GitHub App's bot).
BOT_LOGIN = "github-actions[bot]"
_TRANSIENT_STATUS = {500, 502, 503, 504}
_SECONDARY_RE = re.compile(r"rate limit|abuse detection", re.IGNORECASE)  # "API rate limit exceeded" too
# RFC 8288: `<url>; param; param, <url>; ...`; rel may come after other parameters and hold
# several space-separated values, in any order and case.
_LINK_RE = re.compile(r'<([^>]*)>((?:\s*;\s*[^;,"]*(?:"[^"]*"[^;,"]*)*)*)')
_REL_RE = re.compile(r'(?i);\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))')
_ACCEPT = "application/vnd.github+json"
_ACCEPT_V3 = "application/vnd.github.v3+json"
_REDIRECTS = {301, 302, 303, 307, 308}
MAX_REDIRECTS = 5
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass
class Response:
    status: int
    headers: Mapping[str, str]
    data: Any


class GitHubHTTPError(GitHubError):
    """GitHub answered with an error status that retrying will not fix."""

    def __init__(self, message: str, hint: str | None, status: int):
        super().__init__(message, hint)
        self.status = status


class ReadOnlyToken(Exception):
    """A 403 that is not a rate limit: the token may not write here."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """urllib would follow a redirect to any host with the Authorization header: we follow ourselves."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)
# This machine's loopback is never reached through a proxy (HTTP(S)_PROXY without a NO_PROXY entry
# for it would send a stand-in API's requests, and the token, to the proxy instead).
_DIRECT = urllib.request.build_opener(_NoRedirect, urllib.request.ProxyHandler({}))


def next_link(header: str) -> str | None:
    """The `rel="next"` target of a Link header, or None."""
    for match in _LINK_RE.finditer(header or ""):
        rel = _REL_RE.search(match.group(2))
        if rel and "next" in (rel.group(1) or rel.group(2) or "").lower().split():
            return match.group(1)
    return None


# One machine's own names for itself: a stand-in API on 127.0.0.1 may write its links as localhost.
_THIS_MACHINE = {"localhost", "127.0.0.1", "::1"}


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    return scheme, "localhost" if host in _THIS_MACHINE else host, parts.port or _DEFAULT_PORTS.get(scheme)


@functools.lru_cache(maxsize=32)
def _names_this_machine(host: str) -> bool:
    """Whether `host` is a loopback address or a name that resolves only to loopback addresses.

    A stand-in on 127.0.0.1 may write its links with `http.server`'s `server_name`, which is
    `socket.getfqdn("127.0.0.1")`: `localhost.localdomain` or the machine's own name on some hosts.
    """
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)


def api_url_from_env(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    return (env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")


def _retry_after_seconds(headers: Mapping[str, str], now: float) -> float | None:
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:  # seconds; a stand-in may write them with a fraction ("1.5")
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if seconds == seconds and seconds != float("inf") else None
    try:  # an HTTP-date is allowed too (RFC 9110)
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - now)


def _decoded(raw: bytes, encoding: str) -> bytes:
    """The body with a gzip/deflate `Content-Encoding` undone (urllib leaves it to the caller).

    None is asked for, but a stand-in or proxy may compress anyway; an undecodable body is kept.
    """
    encoding = encoding.strip().lower()
    try:
        if encoding in ("gzip", "x-gzip") or (not encoding and raw[:2] == b"\x1f\x8b"):
            return gzip.decompress(raw)
        if encoding == "deflate":
            try:
                return zlib.decompress(raw)
            except zlib.error:
                return zlib.decompress(raw, -zlib.MAX_WBITS)  # raw deflate, as some servers send
    except (OSError, EOFError, zlib.error):
        pass
    return raw


class GitHubClient:
    """GitHub REST over urllib. `sleep`/`clock` are parameters so tests need not wait."""

    def __init__(
        self,
        token: str,
        api_url: str | None = None,
        *,
        max_retries: int = 5,
        backoff_base: float = 2.0,
        max_wait: float = 120.0,
        secondary_min_wait: float = 60.0,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        log: Callable[[str], None] | None = None,
    ):
        if not token:
            raise GitHubError(
                "no GitHub token", hint="set GITHUB_TOKEN (e.g. `env: GITHUB_TOKEN: ${{ github.token }}`)"
            )
        self.token = token
        self.api_url = (api_url or DEFAULT_API_URL).rstrip("/")
        self._origin = origin(self.api_url)
        if self._origin[0] not in _DEFAULT_PORTS or not self._origin[1]:
            raise GitHubError(
                f"GITHUB_API_URL is not an http(s) URL: {self.api_url!r}",
                hint="e.g. https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise Server",
            )
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.max_wait = max_wait
        self.secondary_min_wait = secondary_min_wait
        self.timeout = timeout
        self.sleep = sleep
        self.clock = clock
        self.log = log or (lambda _msg: None)
        self._scheme = "Bearer"
        self._scheme_confirmed = False  # set by the first 2xx: the scheme is right
        self._accept = _ACCEPT
        self._accept_tried = False

    # -- transport -------------------------------------------------------------------------------

    def _url(self, path_or_url: str, what: str = "a link") -> str:
        if path_or_url.startswith(("http://", "https://")):
            # A pagination link or a redirect pointing elsewhere must never receive the token.
            there = origin(path_or_url)
            same_machine = (
                self._origin[1] == "localhost"
                and there[0::2] == self._origin[0::2]
                and _names_this_machine(there[1])
            )
            if there != self._origin and not same_machine:
                raise GitHubError(
                    f"refusing to follow {what} to another host: {path_or_url}",
                    hint=f"the token is only sent to {self.api_url}; check GITHUB_API_URL",
                )
            return path_or_url
        return self.api_url + path_or_url

    def _once(self, method: str, url: str, payload: Any) -> Response:
        """One exchange, following redirects on the API's own host (a renamed or moved repository).

        The method and body are kept (GitHub asks for the request to be repeated at the new
        address), except after a 303, which means "GET it there".
        """
        for _ in range(MAX_REDIRECTS + 1):
            resp = self._exchange(method, url, payload)
            location = resp.headers.get("location")
            if resp.status not in _REDIRECTS or not location:
                return resp
            url = self._url(urllib.parse.urljoin(url, location), f"a redirect ({resp.status})")
            if resp.status == 303:
                method, payload = "GET", None
        raise GitHubError(
            f"{method} {url}: more than {MAX_REDIRECTS} redirects",
            hint=f"check GITHUB_API_URL ({self.api_url}) and the repository name",
        )

    def _exchange(self, method: str, url: str, payload: Any) -> Response:
        resp = self._exchange_as(self._scheme, self._accept, method, url, payload)
        if resp.status == 401 and not self._scheme_confirmed:
            # GitHub takes `Bearer X` and `token X` alike; a stand-in or proxy may know only one.
            # Until a request has succeeded, a 401 is tried once with the other scheme.
            other = "token" if self._scheme == "Bearer" else "Bearer"
            retry = self._exchange_as(other, self._accept, method, url, payload)
            if retry.status != 401:
                self._scheme = other
                resp = retry
        if resp.status in (406, 415) and not self._accept_tried:
            # GitHub takes both media types; a stand-in may insist on the older v3 name.
            self._accept_tried = True
            retry = self._exchange_as(self._scheme, _ACCEPT_V3, method, url, payload)
            if retry.status not in (406, 415):
                self._accept = _ACCEPT_V3
                resp = retry
        if 200 <= resp.status < 300:
            self._scheme_confirmed = True
        return resp

    def _exchange_as(self, scheme: str, accept: str, method: str, url: str, payload: Any) -> Response:
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", accept)
        req.add_header("Authorization", f"{scheme} {self.token}")
        req.add_header("X-GitHub-Api-Version", "2022-11-28")
        req.add_header("User-Agent", f"evalgate/{__version__}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            opener = _DIRECT if self._origin[1] == "localhost" else _OPENER  # every URL is on the API's host
            with opener.open(req, timeout=self.timeout) as resp:
                status, headers, raw = resp.status, resp.headers, resp.read()
        except urllib.error.HTTPError as exc:
            status, headers, raw = exc.code, exc.headers, exc.read()
        lowered: dict[str, str] = {}
        for key, value in headers.items():  # a repeated header (one `Link` per rel) is one list
            key = key.lower()
            lowered[key] = f"{lowered[key]}, {value}" if key in lowered else value
        raw = _decoded(raw, lowered.get("content-encoding", ""))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = {"message": raw[:500].decode("utf-8", "replace")}
        return Response(status, lowered, body)

    def _wait_for(self, resp: Response, attempt: int) -> float | None:
        """Seconds to wait before retrying `resp`, or None when it is not a transient failure."""
        message = str((resp.data or {}).get("message", "")) if isinstance(resp.data, dict) else ""
        retry_after = _retry_after_seconds(resp.headers, self.clock())
        exhausted = resp.headers.get("x-ratelimit-remaining") == "0"
        limited = resp.status == 429 or (
            resp.status == 403
            and (bool(_SECONDARY_RE.search(message)) or retry_after is not None or exhausted)
        )
        if not limited and resp.status not in _TRANSIENT_STATUS:
            return None
        if retry_after is not None:
            return retry_after
        if limited and exhausted and resp.headers.get("x-ratelimit-reset", "").isdigit():
            # At least a second: the reset is in whole seconds, and a clock a little ahead of the
            # server's (or a reset already past) would otherwise spend every retry at once.
            return max(1.0, float(resp.headers["x-ratelimit-reset"]) - self.clock())
        backoff = self.backoff_base * (2**attempt)
        return max(backoff, self.secondary_min_wait) if limited else backoff

    def attempt(
        self, method: str, url: str, payload: Any, attempt: int
    ) -> tuple[Response | None, float | None, str]:
        """One try: (response, seconds to wait before the next try or None when final, error text)."""
        try:
            resp = self._once(method, url, payload)
        except (OSError, http.client.HTTPException) as exc:  # refused, reset, cut short, timed out
            return None, self.backoff_base * (2**attempt), str(getattr(exc, "reason", exc))
        if 200 <= resp.status < 300:
            return resp, None, ""
        return resp, self._wait_for(resp, attempt), f"HTTP {resp.status}"

    def give_up(self, method: str, url: str, attempt: int, wait: float, error: str) -> None:
        """Raise when the retries are spent or the server asks for a wait longer than `max_wait`."""
        if attempt < self.max_retries and wait <= self.max_wait:
            self.log(f"evalgate: GitHub {method} failed ({error}); retrying in {wait:.1f} s")
            return
        later = (
            f"; GitHub asks to wait {wait:.0f} s (more than {self.max_wait:.0f})"
            if wait > self.max_wait
            else ""
        )
        raise GitHubError(
            f"{method} {url}: {error} after {attempt + 1} attempt(s){later}",
            hint=(
                "GitHub is rate limiting or failing; rerun the job later (the report is on disk)"
                if error.startswith("HTTP")
                else f"check GITHUB_API_URL ({self.api_url}) and the network; the report is on disk"
            ),
        )

    def request(self, method: str, path_or_url: str, payload: Any = None) -> Response:
        """One call with retries; returns the final response (2xx or a non-transient error)."""
        url = self._url(path_or_url)
        attempt = 0
        while True:
            resp, wait, error = self.attempt(method, url, payload, attempt)
            if wait is None:
                assert resp is not None
                return resp
            self.give_up(method, url, attempt, wait, error)
            self.sleep(wait)
            attempt += 1

    def checked(self, method: str, path_or_url: str, payload: Any = None) -> Response:
        """`request`, then a 403 → ReadOnlyToken and any other error status → GitHubError."""
        resp = self.request(method, path_or_url, payload)
        if 200 <= resp.status < 300:
            return resp
        self.raise_for(resp, method, self._url(path_or_url))
        raise AssertionError("unreachable")

    def raise_for(self, resp: Response, method: str, url: str) -> None:
        message = resp.data.get("message", "") if isinstance(resp.data, dict) else ""
        if resp.status == 403:
            raise ReadOnlyToken(message or "HTTP 403")
        hints = {
            401: "the token is invalid or expired: check GITHUB_TOKEN",
            404: "check the repository and pull request number, and that the token can see them",
            422: "GitHub rejected the request body",
        }
        raise GitHubHTTPError(
            f"{method} {url}: HTTP {resp.status} {message}".rstrip(),
            hints.get(resp.status, "see GitHub's message above"),
            resp.status,
        )

    def paginate(self, path: str, key: str | None = None) -> Iterator[Any]:
        """Every item of a list endpoint, following `Link: <...>; rel="next"`. With `key`, each page
        is an object holding the list under that key (`workflow_runs` of the Actions API)."""
        sep = "&" if "?" in path else "?"
        url: str | None = self._url(f"{path}{sep}per_page=100")
        fetched: set[str] = set()
        while url:
            if url in fetched:
                raise GitHubError(f"GET {url}: the pagination links loop", hint="a proxy or server fault")
            fetched.add(url)
            resp = self.checked("GET", url)
            items = resp.data.get(key) if key and isinstance(resp.data, dict) else resp.data
            if not isinstance(items, list):
                what = f"a JSON list under {key!r}" if key else "a JSON list"
                raise GitHubError(f"GET {url}: expected {what}, got {type(resp.data).__name__}")
            yield from items
            link = next_link(resp.headers.get("link", ""))
            url = urllib.parse.urljoin(url, link) if link else None  # a relative link is allowed too
            if url and not items:
                self._url(url)  # a link to another host is refused all the same
                url = None  # an empty page is the end, whatever its links say (`next` on every page)

    # -- endpoints -------------------------------------------------------------------------------

    def own_login(self, env: Mapping[str, str] | None = None) -> str:
        """The login the token writes as; GITHUB_TOKEN cannot read `/user`, so the bot login then."""
        env = os.environ if env is None else env
        if env.get("EVALGATE_COMMENT_AUTHOR"):
            return env["EVALGATE_COMMENT_AUTHOR"]
        resp = self.request("GET", "/user")
        if resp.status == 200 and isinstance(resp.data, dict) and resp.data.get("login"):
            return str(resp.data["login"])
        # 403 (an installation token), 404 (a stand-in or proxy without the route) or even 401 (one
        # that guards `/user` alone): the bot. A token that is really bad fails at the next call,
        # with the same 401 hint.
        return BOT_LOGIN

    def find_pr_for_sha(
        self, repo: str, sha: str, *, head_repo: str | None = None, head_branch: str | None = None
    ) -> int | None:
        """The open pull request whose head is `sha` (lowest number if several), or None.

        With `head_repo`/`head_branch` (the workflow_run's own), only a PR whose head repository
        and branch are those counts: two open PRs can share a head SHA (a fork's and ours, or two
        branches of one fork), and the report belongs to the one the run was for.
        `commits/{sha}/pulls` finds same-repository PRs, but returns nothing for a fork's head
        commit (the commit lives in the fork), so the open PRs are scanned next.
        """
        sha = sha.lower()

        def matches(pr: Any) -> bool:
            if not isinstance(pr, dict) or pr.get("state") != "open":
                return False
            head = pr.get("head") if isinstance(pr.get("head"), dict) else {}
            if str(head.get("sha", "")).lower() != sha:
                return False
            if head_repo:
                full = (
                    (head.get("repo") or {}).get("full_name") if isinstance(head.get("repo"), dict) else None
                )
                if str(full or "").casefold() != head_repo.casefold():  # owner/name ignore case
                    return False
            return not head_branch or str(head.get("ref", "")) == head_branch

        for source in (f"/repos/{repo}/commits/{sha}/pulls", f"/repos/{repo}/pulls?state=open"):
            try:
                numbers = sorted(int(pr["number"]) for pr in self.paginate(source) if matches(pr))
            except GitHubHTTPError as exc:
                if exc.status in (404, 422):
                    continue  # a commit unknown to this repository (a fork's): scan the open PRs
                raise
            except ReadOnlyToken as exc:
                raise GitHubError(
                    f"{source}: {exc.message}", hint="give the job `pull-requests: read` permission"
                ) from None
            if numbers:
                return numbers[0]
        return None
