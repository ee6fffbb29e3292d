"""The per-slice picture in text, for the PR comment (a comment cannot show the runner's PNG).

One fixed-width bar per slice, 0-100 % left to right, the gate's mark first:

    ▼ overall   ███████████████▓▓▒▒░░░░┃░  85.0%  78.1–90.0%  n=120   base  91.3%   -6.3

    █ up to the lower Wilson bound · ▓ lower bound → accuracy · ▒ accuracy → upper bound ·
    ░ the rest · ┃ the baseline

So the solid part is what the slice surely reaches, the shaded part is the uncertainty, and a
baseline tick to the right of the shading is a drop the interval cannot explain.

Every line is at most MAX_LINE characters: a PR comment shows about 100 columns of a code block
before it scrolls, and a regression marker beyond that would be invisible. The mark leads the
line, and the bar is narrowed (never below MIN_BAR cells) to make room for long labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from evalgate.gate.document import ResultsDocument, SliceComparison
from evalgate.gate.slice_order import gated_families, slice_sort_key, split_suite
from evalgate.report.markdown import Md, fence
from evalgate.report.suites import by_suite, multi_suite, suite_kinds

SURE, LOW, HIGH, REST, TICK = "█", "▓", "▒", "░", "┃"
LEGEND = (
    f"{SURE} up to the lower Wilson 95% bound · {LOW}{HIGH} the Wilson interval, split at the accuracy · "
    f"{REST} up to 100%"
)
LEGEND_BASELINE = (
    f" · {TICK} baseline (same probes) · ▼ regressed · ? inconclusive · ◦ too small to gate · + new"
)
MAX_LABEL = 24
MAX_LINE = 96
MIN_BAR = 10


@dataclass(frozen=True)
class Bar:
    label: str
    n: int
    accuracy: float | None
    low: float | None
    high: float | None
    baseline: float | None = None
    status: str | None = None  # comparison status (ok, regressed, too_small, new)


def _cell(x: float, width: int) -> int:
    """The cell boundary nearest to x (0..width); x is clamped to [0, 1]."""
    return int(min(1.0, max(0.0, x)) * width + 0.5)


def bar_string(bar: Bar, width: int) -> str:
    if bar.accuracy is None:
        return "·" * width
    low = bar.low if bar.low is not None else bar.accuracy
    high = bar.high if bar.high is not None else bar.accuracy
    a, b, c = _cell(low, width), _cell(bar.accuracy, width), _cell(high, width)
    cells = [SURE] * a + [LOW] * (b - a) + [HIGH] * (c - b) + [REST] * (width - c)
    if bar.baseline is not None:
        cells[min(width - 1, _cell(bar.baseline, width))] = TICK
    return "".join(cells)


_MARKS = {"regressed": "▼", "inconclusive": "?", "too_small": "◦", "new": "+"}


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _label(text: str) -> str:
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def bar_lines(bars: Sequence[Bar], width: int = 40) -> list[str]:
    """One aligned line per bar: mark, label, bar, accuracy, interval, n, and the baseline when known.

    No line is longer than MAX_LINE: the bar gives up cells first (down to MIN_BAR).
    """
    if not bars:
        return []
    labels = [_label(b.label) for b in bars]
    label_width = max(len(s) for s in labels)
    compared = any(b.baseline is not None for b in bars)
    marked = any(b.status in _MARKS for b in bars)
    rows = []
    for label, bar in zip(labels, bars, strict=True):
        interval = "" if bar.low is None or bar.high is None else f"{100 * bar.low:.1f}–{100 * bar.high:.1f}%"
        head = (f"{_MARKS.get(bar.status or '', ' ')} " if marked else "") + f"{label:<{label_width}}  "
        tail = f" {_pct(bar.accuracy):>6}  {interval:<12}  n={bar.n:<5}"
        if compared:
            base = "" if bar.baseline is None else f"base {_pct(bar.baseline):>6}"
            delta = ""
            if bar.baseline is not None and bar.accuracy is not None:
                delta = f"{100 * (bar.accuracy - bar.baseline):+.1f}"
            tail += f" {base:<11} {delta:>6}"
        rows.append((head, bar, tail.rstrip()))
    room = MAX_LINE - max(len(h) + len(t) for h, _, t in rows)
    bar_width = max(MIN_BAR, min(width, room))
    return [f"{head}{bar_string(bar, bar_width)}{tail}" for head, bar, tail in rows]


def bars_from_results(results: ResultsDocument) -> list[Bar]:
    """Bars for the gated slice families; with a baseline, the numbers the gate compared (shared probes)."""
    slices = results["slices"]
    comparison: Mapping[str, SliceComparison] = (results.get("comparison") or {}).get("slices") or {}
    families = gated_families(results)
    keys = {k for k in list(slices) + list(comparison) if k.split(":", 1)[0] in families}
    bars = []
    for key in sorted(keys, key=slice_sort_key):
        s = slices.get(key)  # a slice may be in one of the two only
        c = comparison.get(key)
        s_low = s.get("wilson_low") if s else None
        s_high = s.get("wilson_high") if s else None
        # the count the shown accuracy is over: shared probes, or (a "new" slice) all of them
        n: int | None
        acc: float | None
        if c and c.get("accuracy") is not None:
            n, acc = c.get("n_shared"), c.get("accuracy")
            low, high = c.get("wilson_low", s_low), c.get("wilson_high", s_high)
        else:
            n, acc = (s.get("n"), s.get("accuracy")) if s else (None, None)
            low, high = s_low, s_high
        bars.append(
            Bar(
                label=key,
                n=int(n or 0),
                accuracy=acc,
                low=low,
                high=high,
                baseline=c.get("baseline_accuracy") if c else None,
                status=c.get("status") if c else None,
            )
        )
    return bars


def _by_suite(results: ResultsDocument, bars: list[Bar], width: int) -> list[str]:
    """Several suites: the whole run's bars, then each suite's under its name, labels without the
    "SUITE/" prefix (the heading says it), all aligned as one chart."""
    by_key = {b.label: b for b in bars}
    groups = by_suite(results, by_key)
    shown = [replace(by_key[k], label=split_suite(k)[1]) for _, keys in groups for k in keys]
    lines = iter(bar_lines(shown, width))
    out = []
    for suite, keys in groups:
        if suite is not None:
            kind = suite_kinds(results).get(suite)
            head = f"── {suite}" + (f" ({kind})" if kind else "")
            out.append("".join(ch if ch.isprintable() else " " for ch in head)[:MAX_LINE])
        out += [next(lines) for _ in keys]
    return out


def render_bars(results: ResultsDocument, width: int = 40) -> Md:
    """The chart as a fenced code block followed by its one-line legend ("" when there is no slice)."""
    bars = bars_from_results(results)
    lines = _by_suite(results, bars, width) if multi_suite(results) else bar_lines(bars, width)
    if not lines:
        return Md("")
    legend = LEGEND + (LEGEND_BASELINE if any(b.baseline is not None for b in bars) else "")
    return Md(fence("\n".join(lines), "text") + "\n\n" + legend)
