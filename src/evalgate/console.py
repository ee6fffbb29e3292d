"""Every line evalgate prints passes through here, so no data can start a workflow command.

A GitHub Actions runner reads each line of a step's stdout and stderr (split at CR and LF) and
obeys it when, after leading whitespace, it starts with `::` (`::stop-commands::`, `::add-mask::`,
`::error ...`); the older `##[command]` form is recognised anywhere in a line. Checkpoint tensor
names, file names, pickle globals, symlink targets and probe ids are the PR's data and reach our
messages, so:

- `safe_line(text)` defuses every line of `text`: a line that would start a command gets a
  leading backslash, `##[` becomes `#\\#[`;
- `guarded_output()` (installed by `cli.main`) wraps `sys.stdout` and `sys.stderr` so that every
  write, whoever makes it (argparse, a library warning, a traceback), goes through `safe_line`,
  even when a line arrives in several writes;
- `print_commands(text)` is the one way out for the workflow commands evalgate builds itself
  (`::error`/`::warning`/`::notice` annotations whose data is escaped by
  `core.findings_render.escape_data`): only those three commands pass, anything else is defused;
- `clean(value)` is for interpolating untrusted values into a message: CR, LF and other control
  characters are shown escaped and the value is cut to a short excerpt.

See docs/hostile-inputs.md ("Log injection").
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

_BREAKS = re.compile(r"(\r\n|\r|\n)")
_COMMAND = re.compile(r"::(error|warning|notice)( [^\r\n:]*)?::[^\r\n]*")
# Control characters (C0 but TAB, DEL, C1) and Unicode line/paragraph separators.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
EXCERPT = 120  # the most characters of a file's (or a name's) content a message quotes


def _defuse(line: str) -> str:
    line = line.replace("##[", "#\\#[")
    body = line.lstrip()
    if body.startswith("::"):
        indent = len(line) - len(body)
        return line[:indent] + "\\" + body
    return line


def safe_line(text: str) -> str:
    """`text` with no line able to start a workflow command (line breaks themselves are kept)."""
    parts = _BREAKS.split(str(text))
    return "".join(p if i % 2 else _defuse(p) for i, p in enumerate(parts))


def clean(value: Any, limit: int = EXCERPT) -> str:
    """An untrusted value fit to interpolate into one line: control characters escaped
    (`\\n`, `\\r`, `\\x1b`), at most `limit` characters (then `…`)."""
    text = str(value)
    cut = len(text) > limit
    text = text[:limit]

    def esc(m: re.Match[str]) -> str:
        c = m.group()
        return {"\n": "\\n", "\r": "\\r"}.get(c) or (
            f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
        )

    return _CONTROL.sub(esc, text) + ("…" if cut else "")


class SafeStream:
    """A text stream that writes through `safe_line`, line by line.

    The start of a line is held back until it is known not to begin a command (`print` writes
    its text and its newline separately; a `:` may be followed by another in the next write).
    """

    def __init__(self, raw: TextIO):
        self.raw = raw
        self._pending = ""  # start of the current line, not yet written
        self._open = False  # the current line has begun safely; the rest cannot make it a command

    def write(self, s: str) -> int:
        parts = _BREAKS.split(s)
        for i, part in enumerate(parts):
            if i % 2:  # a line break
                self._drain()
                self.raw.write(part)
                self._open = False
            elif part:
                self._text(part)
        return len(s)

    def _text(self, part: str) -> None:
        if self._open:
            self.raw.write(part.replace("##[", "#\\#["))
            return
        self._pending += part
        body = self._pending.lstrip()
        if len(body) >= 2 or (body and body != ":"):
            self._drain()

    def _drain(self) -> None:
        if self._pending:
            self.raw.write(_defuse(self._pending))
            self._open = True
        self._pending = ""

    def flush(self) -> None:
        self.raw.flush()

    def close_line(self) -> None:
        """Write what is held back (at the end, or before a trusted command)."""
        self._drain()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, ...
        return getattr(self.raw, name)


@contextlib.contextmanager
def guarded_output() -> Iterator[None]:
    """sys.stdout and sys.stderr through `SafeStream` for the duration (restored after)."""
    saved = sys.stdout, sys.stderr
    out = saved[0] if isinstance(saved[0], SafeStream) else SafeStream(saved[0])
    err = saved[1] if isinstance(saved[1], SafeStream) else SafeStream(saved[1])
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        for stream in (out, err):
            with contextlib.suppress(Exception):
                stream.close_line()
                stream.flush()
        sys.stdout, sys.stderr = saved


def print_commands(text: str, file: TextIO | None = None) -> None:
    """Print annotations evalgate built (one per line). A line that is not an `::error`,
    `::warning` or `::notice` command of one line is defused like any other text."""
    stream = sys.stdout if file is None else file
    if not text:
        return
    raw = stream
    if isinstance(stream, SafeStream):
        stream.close_line()
        if stream._open:  # something is on the current line: the command must start a fresh one
            stream.write("\n")
        raw = stream.raw
    for line in _BREAKS.split(text)[::2]:
        raw.write((line if _COMMAND.fullmatch(line) else safe_line(line)) + "\n")
    raw.flush()


def print_mask(secret: str, file: TextIO | None = None) -> None:
    """`::add-mask::` for a secret evalgate holds (a token): the one other command it may write.

    A value with a line break or control character is not a token; it is not echoed at all.
    """
    if not secret or _CONTROL.search(secret):
        return
    stream = sys.stdout if file is None else file
    raw = stream
    if isinstance(stream, SafeStream):
        stream.close_line()
        if stream._open:
            stream.write("\n")
        raw = stream.raw
    raw.write(f"::add-mask::{secret}\n")
    raw.flush()
