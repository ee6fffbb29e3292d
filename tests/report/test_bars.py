"""The text bar chart of the PR comment: positions, fixed width, alignment, legend, fences."""

from __future__ import annotations

from helpers.report_factories import fake_run, no_baseline_run

from evalgate.report.bars import (
    LEGEND,
    MAX_LINE,
    MIN_BAR,
    TICK,
    Bar,
    bar_lines,
    bar_string,
    bars_from_results,
    render_bars,
)


def test_bar_segments_sit_at_the_interval_and_the_baseline():
    bar = Bar("x", 10, accuracy=0.5, low=0.3, high=0.7, baseline=0.9)
    assert bar_string(bar, 10) == "███▓▓▒▒░░┃"
    assert bar_string(Bar("x", 10, 0.5, 0.3, 0.7), 10) == "███▓▓▒▒░░░"


def test_bar_edges():
    assert bar_string(Bar("x", 10, 1.0, 0.7, 1.0, baseline=1.0), 10) == "███████▓▓┃"
    assert bar_string(Bar("x", 10, 0.0, 0.0, 0.3, baseline=0.0), 10) == "┃▒▒░░░░░░░"
    assert bar_string(Bar("x", 0, None, None, None), 8) == "········"


def test_lines_are_aligned_and_fixed_width():
    bars = [
        Bar("overall", 120, 0.8, 0.72, 0.86, 0.82, "ok"),
        Bar("tense:past_participle", 23, 0.565, 0.368, 0.744, 0.826, "regressed"),
        Bar("reason_code:" + "X" * 40, 4, 0.5, 0.15, 0.85, None, "too_small"),
    ]
    lines = bar_lines(bars, width=30)
    starts = [line.index("█") for line in lines]
    assert len(set(starts)) == 1  # labels padded to one width
    widths = {len(line[starts[0] :].split(" ")[0]) for line in lines}
    (w,) = widths  # one bar width for all; narrowed from 30 to keep the long label's line visible
    assert MIN_BAR <= w <= 30 and all(len(line) <= MAX_LINE for line in lines)
    assert all(set(line[starts[0] : starts[0] + w]) <= set("█▓▒░┃") for line in lines)
    assert lines[1].startswith("▼ tense:past_participle") and "-26.1" in lines[1]
    assert "base  82.6%" in lines[1]
    assert lines[2].startswith("◦ reason_code:XXXXXXXXXXX…")  # long labels are shortened
    assert "56.5%" in lines[1] and "36.8–74.4%" in lines[1] and "n=23" in lines[1]


def test_chart_from_results_is_a_code_block_with_a_legend():
    results = fake_run()
    text = render_bars(results)
    fence, *body = text.split("\n")
    assert fence == "```text"
    closing = body.index("```")
    chart, legend = body[:closing], body[closing + 2]
    assert legend.startswith(LEGEND) and "baseline" in legend
    gated = [k for k in results["comparison"]["slices"]]
    assert [line[2:].split()[0] for line in chart] == gated  # one bar per gated slice, in report order
    assert all(TICK in line for line in chart)  # compared: every bar has its baseline tick
    es = next(line for line in chart if line[2:].startswith("language:es "))
    assert es.startswith("▼ ")


def test_no_baseline_has_no_ticks_and_uses_all_scored_probes():
    results = no_baseline_run()
    bars = bars_from_results(results)
    overall = next(b for b in bars if b.label == "overall")
    assert overall.n == results["slices"]["overall"]["n"] and overall.baseline is None
    text = render_bars(results)
    assert TICK not in text


def test_labels_cannot_close_the_fence():
    results = no_baseline_run()
    results["slices"]["category:```evil"] = dict(results["slices"]["category:core"])
    results["config"]["gate"]["slices"] = ["category"]
    text = render_bars(results)
    fence = text.split("\n")[0]
    assert fence.startswith("````")  # longer than any backtick run inside
    assert text.count(fence.removesuffix("text")) == 2


def test_no_line_pushes_its_marks_past_the_visible_width():
    """A comment shows about 100 columns of a code block; the tick and the mark must be inside."""
    bars = [
        Bar("x" * 80, 99999, 0.123, 0.1, 0.15, 0.99, "regressed"),
        Bar("overall", 120, 0.8, 0.72, 0.86, 0.82, "ok"),
    ]
    for width in (40, 80, 200):
        lines = bar_lines(bars, width=width)
        assert all(len(line) <= MAX_LINE for line in lines), [len(line) for line in lines]
        assert lines[0].startswith("▼ ") and TICK in lines[0]
        start = lines[0].index("█")
        assert lines[0][start : start + MIN_BAR].strip("█▓▒░┃") == ""
