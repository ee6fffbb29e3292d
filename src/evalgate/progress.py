"""Progress on stderr: a live bar when stderr is a terminal, one line per phase otherwise (CI logs).

Timings are printed here and nowhere else: results.json must stay byte-identical across runs.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


class Progress:
    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False, interactive: bool | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.interactive = self.stream.isatty() if interactive is None else interactive
        self._label = ""
        self._last_draw = 0.0

    def _write(self, text: str) -> None:
        if not self.quiet:
            self.stream.write(text)
            self.stream.flush()

    @contextmanager
    def phase(self, label: str) -> Iterator[Progress]:
        """Announce a phase; print its duration when it ends (or that it failed)."""
        self._label = label
        start = time.perf_counter()
        # In a CI log the phase is announced when it starts too: a long one (perplexity on a big
        # test set) otherwise leaves minutes without a line.
        self._write(f"evalgate: {label} …" if self.interactive else f"evalgate: {label} …\n")
        ok = False
        try:
            yield self
            ok = True
        finally:
            took = time.perf_counter() - start
            status = f"done in {took:.1f} s" if ok else "failed"
            if self.interactive:
                self._write(f"\r\033[2Kevalgate: {label} … {status}\n")
            else:
                self._write(f"evalgate: {label}: {status}\n")

    def update(self, done: int, total: int) -> None:
        """A bar for long phases; on a terminal only, at most ~10 redraws a second."""
        if not self.interactive or total <= 0:
            return
        now = time.perf_counter()
        if done < total and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        width = 30
        filled = int(width * done / total)
        bar = "█" * filled + "░" * (width - filled)
        self._write(f"\r\033[2Kevalgate: {self._label} {bar} {done}/{total}")

    def info(self, message: str) -> None:
        self._write(f"evalgate: {message}\n")
