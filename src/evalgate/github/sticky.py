"""The sticky PR comment: find the token's own marked comment, edit it in place or create it.

The sticky comment is the one that carries the evalgate marker **and** was written by the token's
own user: anyone can quote the marker, and someone else's comment is never edited. All comments are
read (following `Link: rel="next"`), so a marker on page 3 is found. After a create the comments are
read once more: if another run created one first, the newer is deleted and the older edited.
A plain 403 on a write is a read-only token (a fork's `pull_request` run): the result says
`fallback` instead of raising, so the caller can put the report into the job summary and keep the
gate's exit code. A body over
GitHub's limit is cut with a note, the marker kept last. The REST transport (retries, rate limits,
pagination, finding a PR from a SHA) is `github.rest.GitHubClient`.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalgate.errors import GitHubError
from evalgate.github.rest import (
    BOT_LOGIN,
    DEFAULT_API_URL,
    GitHubClient,
    GitHubHTTPError,
    ReadOnlyToken,
    Response,
    api_url_from_env,
)

# The one definition of the marker, in a module the comment job imports without numpy.
from evalgate.report.comment import MARKER_PREFIX
from evalgate.report.markdown import utf16_len

__all__ = [
    "BOT_LOGIN",
    "DEFAULT_API_URL",
    "MARKER_PREFIX",
    "MAX_COMMENT_CHARS",
    "CommentResult",
    "GitHubClient",
    "GitHubHTTPError",
    "api_url_from_env",
    "fit_body",
    "post_or_update_comment",
]

DEFAULT_MARKER = MARKER_PREFIX + " -->"
MAX_COMMENT_CHARS = 65536  # GitHub refuses longer bodies: "Body is too long (maximum is 65536 characters)"
TRUNCATION_NOTE = (
    "\n\n> [!NOTE]\n> This comment was cut at GitHub's 65,536-character limit: "
    "{cut:,} characters are not shown. The full REPORT.md is in the job summary and the uploaded artifact.\n"
)


@dataclass(frozen=True)
class CommentResult:
    """What `post_or_update_comment` did: `created`, `updated` or `fallback` (read-only token)."""

    action: str
    pr: int
    comment_id: int | None = None
    url: str | None = None
    truncated: bool = False
    reason: str = ""  # for a fallback: GitHub's message (e.g. "Resource not accessible by integration")

    @property
    def fallback(self) -> bool:
        return self.action == "fallback"


def fit_body(body: str, limit: int = MAX_COMMENT_CHARS) -> tuple[str, bool]:
    """Cut a body to `limit` characters, closing open code fences/<details>, keeping the marker line last."""
    if utf16_len(body) <= limit:
        return body, False
    lines = body.rstrip("\n").split("\n")
    marker = next((ln for ln in reversed(lines) if ln.startswith(MARKER_PREFIX)), DEFAULT_MARKER)
    text = "\n".join(ln for ln in lines if ln != marker)
    # Room for the note, the closers and the marker; the note's number has at most 6 digits.
    closers_max = len("\n````") + len("\n</details>") * 20
    room = limit - len(TRUNCATION_NOTE.format(cut=999_999)) - closers_max - utf16_len(marker) - 2
    kept = text[:room]
    while (over := utf16_len(kept) - room) > 0:
        kept = kept[: len(kept) - over]
    cut_newline = kept.rfind("\n")
    if cut_newline > room // 2:  # end on a whole line when that loses little
        kept = kept[:cut_newline]
    while True:
        fence, open_details = _open_blocks(kept)
        closers = ("\n" + fence if fence else "") + "\n</details>" * min(open_details, 20)
        note = TRUNCATION_NOTE.format(cut=len(text) - len(kept))
        out = f"{kept}{closers}{note}\n{marker}\n"
        if utf16_len(out) <= limit or not kept:
            return out, True
        cut = kept.rfind("\n")  # a long fence's closer did not fit: drop another line
        kept = kept[:cut] if cut > 0 else kept[: len(kept) // 2]


# What marks a sticky comment: ours is `<!-- evalgate:report verdict=... -->`, but any evalgate
# HTML-comment marker of the same author counts (an older release's or a hand-seeded
# `<!-- evalgate -->`), so a marker that changed shape never leaves a second sticky comment.
_MARKER_RE = re.compile(r"<!--\s*evalgate(?![a-z0-9])", re.IGNORECASE)
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def _open_blocks(text: str) -> tuple[str, int]:
    """(the fence that closes a code block left open at the end of `text` or "", open <details>).

    CommonMark fences: a block opened by N backticks (or tildes) closes only at a line of at least
    N of the same character, so a cut inside a ```` fence that quotes ``` must close with ````.
    `<details>` inside a code block is text, not a fold.
    """
    fence, depth = "", 0
    for line in text.split("\n"):
        match = _FENCE_RE.match(line)
        if fence:
            closing = match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
            if closing and not match.group(2).strip():
                fence = ""
            continue
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = match.group(1)
            continue
        depth += line.count("<details") - line.count("</details>")
    return fence, max(0, depth)


def _created(resp: Response, method: str, url: str) -> tuple[int, str | None]:
    """(id, html_url) of the comment a 2xx answer to a create describes; anything else is a clear error.

    A proxy or a single-sign-on page can answer 200 with something that is not a comment.
    """
    data = resp.data
    comment_id = _id(data) if isinstance(data, dict) else None
    if comment_id is None and not data:
        # A 201 with an empty body still names the new comment in `Location` (.../comments/ID).
        found = re.search(
            r"/issues/comments/(\d+)/?$", urllib.parse.urlsplit(resp.headers.get("location", "")).path
        )
        if found:
            return int(found.group(1)), None
    if comment_id is None:
        raise GitHubError(
            f"{method} {url}: HTTP {resp.status}, but the answer is not a comment: {str(data)[:200]}",
            hint="check GITHUB_API_URL (a proxy or a sign-on page may be answering instead of the API)",
        )
    html_url = data.get("html_url")
    return comment_id, html_url if isinstance(html_url, str) else None


def _id(comment: Mapping[str, Any]) -> int | None:
    value = comment.get("id")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else None


def post_or_update_comment(
    repo: str,
    pr: int,
    body: str,
    *,
    token: str,
    api_url: str | None = None,
    author: str | None = None,
    env: Mapping[str, str] | None = None,
    client: GitHubClient | None = None,
    **client_options: Any,
) -> CommentResult:
    """Edit the token's own marked comment on `repo#pr` in place, or create it; never duplicate.

    `author` (else EVALGATE_COMMENT_AUTHOR, else `GET /user`, else github-actions[bot]) is whose
    comments may be edited. A 403 that is not a rate limit gives `CommentResult(action="fallback")`.
    Transport failures after the retries raise `GitHubError` (exit code 3).
    """
    env = os.environ if env is None else env
    client = client or GitHubClient(token, api_url or api_url_from_env(env), **client_options)
    if MARKER_PREFIX not in body:
        body = body.rstrip("\n") + "\n\n" + DEFAULT_MARKER + "\n"
    body, truncated = fit_body(body)
    try:
        login = author or client.own_login(env)
        try:
            return _write(client, repo, pr, login, body, truncated)
        except GitHubHTTPError as exc:
            # A server that counts the limit in bytes, not characters, refuses an emoji-heavy body
            # with 422: cut it to 65,536 UTF-8 bytes (never more characters either) and try once more.
            if exc.status != 422 or len(body.encode("utf-8")) <= MAX_COMMENT_CHARS:
                raise
            return _write(client, repo, pr, login, _fit_bytes(body), True)
    except ReadOnlyToken as exc:
        return CommentResult("fallback", pr, truncated=truncated, reason=exc.message)


def _fit_bytes(body: str) -> str:
    limit = MAX_COMMENT_CHARS
    while True:
        cut, _ = fit_body(body, limit)
        over = len(cut.encode("utf-8")) - MAX_COMMENT_CHARS
        if over <= 0:
            return cut
        limit -= max(over, 64)


def _write(client: GitHubClient, repo: str, pr: int, login: str, body: str, truncated: bool) -> CommentResult:
    """Edit `login`'s oldest marked comment on the PR, else create one."""
    list_path = f"/repos/{repo}/issues/{pr}/comments"
    # A create that timed out or got a 5xx may still have happened: list again before each
    # retry, so a flaky network never leaves two sticky comments.
    create_url = client._url(list_path)
    attempt = 0
    gone = False
    while True:
        mine = _mine(client, list_path, login)
        if mine:
            target = min(mine)  # the oldest keeps its place in the thread
            patch_path = f"/repos/{repo}/issues/comments/{target}"
            resp = client.request("PATCH", patch_path, {"body": body})
            if resp.status in (404, 410) and not gone:
                gone = True  # deleted between the listing and the edit (a concurrent run): list again
                continue
            if not 200 <= resp.status < 300:
                client.raise_for(resp, "PATCH", client._url(patch_path))
            url = resp.data.get("html_url") if isinstance(resp.data, dict) else None
            return CommentResult("updated", pr, target, url, truncated)
        resp, wait, error = client.attempt("POST", create_url, {"body": body}, attempt)
        if resp is not None and 200 <= resp.status < 300:
            comment_id, url = _created(resp, "POST", create_url)
            if _yield_to_older(client, repo, list_path, login, comment_id, body):
                return _write(client, repo, pr, login, body, truncated)
            return CommentResult("created", pr, comment_id, url, truncated)
        if wait is None:
            assert resp is not None
            client.raise_for(resp, "POST", create_url)
        client.give_up("POST", create_url, attempt, wait, error)
        client.sleep(wait)
        attempt += 1


def _mine(client: GitHubClient, list_path: str, login: str) -> list[int]:
    """The ids of `login`'s marked comments on the PR, all pages read."""
    return [
        comment_id
        for c in client.paginate(list_path)
        if isinstance(c, dict)
        and (comment_id := _id(c)) is not None
        and _MARKER_RE.search(str(c.get("body") or ""))
        and isinstance(c.get("user"), dict)  # `user: null` is a deleted account
        and str(c["user"].get("login") or "").casefold() == login.casefold()  # logins ignore case
    ]


def _yield_to_older(
    client: GitHubClient, repo: str, list_path: str, login: str, created: int, body: str
) -> bool:
    """After a create, a run that listed at the same moment may have created one too: the newer
    is deleted so the older stays the one sticky comment (True: edit that one instead).

    Best effort: the comment exists either way, so a failure here is not the run's failure.
    """
    try:
        mine = _mine(client, list_path, login)
        if not mine or min(mine) >= created:
            return False
        resp = client.request("DELETE", f"/repos/{repo}/issues/comments/{created}")
    except (GitHubError, ReadOnlyToken):
        return False
    return 200 <= resp.status < 300 or resp.status == 404
