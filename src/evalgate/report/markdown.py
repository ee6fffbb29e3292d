"""Markdown building blocks for the report: escaping untrusted text, tables, folds, code fences.

Probe text, ids, reason codes, file names and findings come from pull requests, so every such
string goes through `inline()` before it reaches GitHub: it can neither break a table, open an
HTML element, start a link or a code span, render as math, nor mention a person or reference an
issue. Strings we wrote ourselves are wrapped in `Md` to say "trusted, leave as is"; `table()`
escapes every cell that is not `Md`, so forgetting to escape fails safe.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from tabulate import tabulate

from evalgate import release

ZWSP = "\u200b"  # zero-width space: breaks @mentions, #refs and autolinks without changing the look
MISSING = "—"

_LINE_BREAKS = re.compile(r"\r\n|[\r\n\u2028\u2029\x0b\x0c\x85]")
# C0/C1 controls and the bidirectional overrides (they can make text read backwards: "Trojan Source").
_INVISIBLE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_AUTOLINK = re.compile(r"(?i)(?<=:)(?=//)|(?<=\bwww)(?=\.)")
_ISSUE_REF = re.compile(r"#(?=\w)")
_SPECIAL = re.compile(r"[\\`*_~\[\]|$&<>@]")
_ESCAPES = {
    "\\": "\\\\",
    "`": "\\`",
    "*": "\\*",
    "_": "\\_",
    "~": "\\~",
    "[": "\\[",
    "]": "\\]",
    "|": "\\|",
    "$": "\\$",  # GitHub renders $...$ as math
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "@": "@" + ZWSP,
}
# At the start of a line (a list item's text) these would open a heading, a list or a setext rule.
_LEADING = re.compile(r"^(#|[-+=]|\d+(?=[.)]))")


def doc(page: str, section: str | None = None, anchor: str | None = None) -> str:
    """A reference to evalgate's docs (`docs/gate.md`, a section of it) as a link to that page of
    the release that wrote the report (release.docs_url): the repository a report is posted in is
    a team's, which has no docs/ of evalgate's. Trusted text: only our own literals come here."""
    link = f"[{page}]({release.docs_url(page)}{'#' + anchor if anchor else ''})"
    return f'{link}, "{section}"' if section else link


def utf16_len(text: str) -> int:
    """Length as GitHub counts it, in UTF-16 code units: an emoji outside the BMP counts twice."""
    return len(text.encode("utf-16-le")) // 2


class Md(str):
    """Markdown we produced ourselves: inserted verbatim."""

    __slots__ = ()


def inline(value: Any, limit: int | None = None, *, lead: bool = True) -> Md:
    """Untrusted text → inert inline Markdown on one line (optionally shortened to `limit` chars).

    `lead=False` skips escaping a leading `#`, `-`, `1.`: only a line's first characters can open
    a block, and table cells never do.
    """
    text = _LINE_BREAKS.sub(" ", str(value))
    text = _INVISIBLE.sub("\ufffd", text)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    text = _AUTOLINK.sub(ZWSP, text)
    text = _SPECIAL.sub(lambda m: _ESCAPES[m.group(0)], text)
    text = _ISSUE_REF.sub("#" + ZWSP, text)
    if lead:
        text = _LEADING.sub(
            lambda m: m.group(0) + "\\" if m.group(0)[0].isdigit() else "\\" + m.group(0), text
        )
    return Md(text)


def code(value: Any) -> Md:
    """A code span for machine strings (hashes, keys); backticks inside are dropped, not escaped."""
    text = _INVISIBLE.sub("\ufffd", _LINE_BREAKS.sub(" ", str(value))).replace("`", "'")
    return Md(f"`{text}`") if text.strip() else Md(MISSING)


def fence(body: str, lang: str = "") -> Md:
    """A fenced block whose fence is longer than any backtick run in `body` (so it cannot close early).

    `<!--` is defused too: the report must contain the sticky marker exactly once. Controls and
    bidirectional overrides are shown as `�` as everywhere else: in a diff they could make a line
    read differently from what it does ("Trojan Source").
    """
    body = _INVISIBLE.sub("\ufffd", body.replace("<!--", "<!" + ZWSP + "--"))
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return Md(f"{ticks}{lang}\n{body.rstrip(chr(10))}\n{ticks}")


def details(summary: str, body: str) -> Md:
    """A fold; `summary` is trusted Markdown-free text (escape it first when it carries data)."""
    return Md(f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>")


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], align: str = "") -> Md:
    """A GitHub table through tabulate. `align` is one letter per column (l/r/c), default left."""
    cells = [[_cell(v) for v in row] for row in rows]
    colalign = tuple({"r": "right", "c": "center"}.get(a, "left") for a in align.ljust(len(headers), "l"))
    return Md(
        tabulate(
            cells,
            headers=[_cell(h) for h in headers],
            tablefmt="github",
            disable_numparse=True,
            colalign=colalign,
        )
    )


def _cell(value: Any) -> str:
    if value is None:
        return MISSING
    if isinstance(value, Md):
        return str(value)
    return str(inline(value, limit=200, lead=False))


def pct(x: float | None, digits: int = 1) -> Md:
    return Md(MISSING if x is None else f"{100 * x:.{digits}f}%")


def points(delta: float | None) -> Md:
    """An accuracy difference in percentage points, always signed."""
    if delta is None:
        return Md(MISSING)
    value = round(100 * delta, 1)
    return Md(f"{value:+.1f}" if value != 0 else "0.0")


def size_points(x: float | None) -> Md:
    """A size in percentage points (an MDE, a tolerance): unsigned."""
    return Md(MISSING if x is None else f"{100 * x:.1f}")


def interval(lo: float | None, hi: float | None) -> Md:
    if lo is None or hi is None:
        return Md(MISSING)
    return Md(f"{100 * lo:.1f}–{100 * hi:.1f}%")


def pvalue(p: float | None) -> Md:
    if p is None:
        return Md(MISSING)
    return Md("<0.001" if p < 0.001 else f"{p:.3f}")


def num(x: float | None, digits: int = 3) -> Md:
    return Md(MISSING if x is None else f"{x:.{digits}f}")


def count(n: int | None) -> Md:
    return Md(MISSING if n is None else f"{n:,}")
