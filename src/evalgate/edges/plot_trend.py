"""trend.png: each regressed or drifting slice's accuracy over the last baselines, then this run
(results.json `drift.trend`, gate/drift.py; docs/gate.md "Drift").

One line per slice, the baselines oldest first, this run last (a hollow marker); the anchor's
accuracy as a dotted level when the drift comparison has it. Drawn like per_slice.png
(edges/plot.py): a bare Figure on the Agg canvas, matplotlib's default style, plain text labels,
no Software/date metadata, so the same results give the same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from evalgate.edges.plot import DPI, import_matplotlib
from evalgate.gate.slice_order import ordered

PLAIN_TEXT = {"font.family": "DejaVu Sans", "text.parse_math": False}
MAX_LINES = 12  # slices drawn; the report lists every one


def build_figure(results: Mapping[str, Any]) -> Any:
    matplotlib = import_matplotlib()
    from matplotlib.figure import Figure

    drift: Mapping[str, Any] = results.get("drift") or {}
    trend: Mapping[str, Any] = drift.get("trend") or {}
    rows: Mapping[str, Any] = drift.get("slices") or {}
    keys = ordered(trend)[:MAX_LINES]
    with matplotlib.style.context("default"), matplotlib.rc_context(PLAIN_TEXT):
        fig = Figure(figsize=(8, 4.5), dpi=DPI, layout="constrained")
        ax = fig.subplots()
        longest = 0
        for i, key in enumerate(keys):
            points = trend[key]
            ys = [
                p.get("accuracy") if isinstance(p.get("accuracy"), int | float) else float("nan")
                for p in points
            ]
            xs = list(range(len(ys)))
            longest = max(longest, len(ys))
            color = f"C{i % 10}"
            ax.plot(xs[:-1], [100 * y for y in ys[:-1]], marker="o", color=color, label=key)
            ax.plot(xs[-2:], [100 * y for y in ys[-2:]], linestyle="--", color=color)
            ax.plot(xs[-1:], [100 * ys[-1]], marker="o", markerfacecolor="white", color=color)
            anchor = (rows.get(key) or {}).get("anchor_accuracy")
            if isinstance(anchor, int | float):
                ax.axhline(100 * anchor, color=color, linestyle=":", linewidth=1)
        ax.set_xticks(range(longest))
        ax.set_xticklabels(
            [f"B-{longest - 1 - i}" if i < longest - 1 else "this run" for i in range(longest)]
        )
        ax.set_ylabel("accuracy (%)")
        ax.grid(alpha=0.3)
        ax.set_axisbelow(True)
        if keys:
            ax.legend(fontsize=7, loc="best", frameon=False)
        fig.suptitle("evalgate: accuracy over the last baselines (dotted: the anchor)", fontsize=11)
    return fig


def render_trend_png(results: Mapping[str, Any]) -> bytes:
    """The PNG bytes (deterministic: no Software/date metadata)."""
    fig = build_figure(results)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()
