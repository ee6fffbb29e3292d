"""ordinal.png: one small multiple per ordinal probe group, a surprisal curve per item (docs/ordinal.md).

Each line is an item's surprisal over the scale after renormalising (-ln p, nats): its lowest
point is the argmin, a sharp valley is a confident model, a line near the dotted ln K level is a
flat curve (the model cannot place the item). The point a human expects is circled on the line;
the triangle under the axis is the model's expected value E[x] in the same colour.

Drawn like per_slice.png (edges/plot.py): a bare Figure on the Agg canvas, matplotlib's default
style, no Software/date metadata, so the same results give the same bytes.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

from evalgate.edges.plot import DPI, import_matplotlib

COLUMNS = 3
MAX_LEGEND = 8  # items per panel named in its legend; a crowded panel drops the legend

# Labels are the pull request's text (probe ids, scale labels), drawn as given: with the math
# parser on, a `$` in one would reach matplotlib's mathtext and crash the run.
PLAIN_TEXT = {"font.family": "DejaVu Sans", "text.parse_math": False}


def _groups(section: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = {}
    for item in section.get("items") or []:
        if isinstance(item, Mapping) and item.get("points"):
            out.setdefault(str(item.get("group")), []).append(item)
    return dict(sorted(out.items()))


def _surprisal(point: Mapping[str, Any]) -> float:
    p = point.get("p")
    return -math.log(p) if isinstance(p, int | float) and p > 0 else math.nan


def build_figure(results: Mapping[str, Any]) -> Any:
    """The Figure: a grid of panels, one per group (sorted by name)."""
    matplotlib = import_matplotlib()
    from matplotlib.figure import Figure

    section: Mapping[str, Any] = results.get("ordinal") or {}
    groups = _groups(section)
    stats: Mapping[str, Any] = section.get("groups") or {}
    ncols = max(1, min(COLUMNS, len(groups)))
    nrows = max(1, math.ceil(len(groups) / ncols))
    with matplotlib.style.context("default"), matplotlib.rc_context(PLAIN_TEXT):
        fig = Figure(figsize=(4.4 * ncols, 3.6 * nrows + 0.6), dpi=DPI, layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
        for ax, (name, items) in zip(axes, groups.items(), strict=False):
            _panel(ax, name, items, stats.get(name) or {})
        for ax in axes[len(groups) :]:
            ax.set_axis_off()
        fig.suptitle(
            "evalgate: ordinal surprisal curves (○ expected point, ▲ model's E[x], dotted: flat curve)",
            fontsize=11,
        )
    return fig


def _ticks(items: Sequence[Mapping[str, Any]]) -> tuple[list[float], list[str]]:
    """Scale positions and their labels over every item of the panel ("a/b" when they differ)."""
    names: dict[float, list[str]] = {}
    for item in items:
        for pt in item["points"]:
            labels = names.setdefault(float(pt["x"]), [])
            if str(pt["text"]) not in labels:
                labels.append(str(pt["text"]))
    xs = sorted(names)
    return xs, ["/".join(names[x]) for x in xs]


def _panel(ax: Any, name: str, items: Sequence[Mapping[str, Any]], stats: Mapping[str, Any]) -> None:
    colours = [f"C{i % 10}" for i in range(len(items))]
    top = 0.0
    for item, colour in zip(items, colours, strict=True):
        pts = item["points"]
        xs = [float(pt["x"]) for pt in pts]
        ys = [_surprisal(pt) for pt in pts]
        top = max([top, *(y for y in ys if math.isfinite(y))])
        ax.plot(xs, ys, marker="o", markersize=3, linewidth=1.3, color=colour, label=str(item.get("id")))
        target = item.get("target")
        if isinstance(target, int | float) and target in xs:
            ax.scatter([target], [ys[xs.index(target)]], s=90, facecolors="none", edgecolors=colour, zorder=3)
        ev = item.get("expectation")
        if isinstance(ev, int | float):
            ax.scatter([ev], [0], marker="^", s=40, color=colour, zorder=3, clip_on=False)
    for k in sorted({len(item["points"]) for item in items}):
        ax.axhline(math.log(k), color="#888888", linestyle=":", linewidth=1)  # a flat curve over k points
    xs, labels = _ticks(items)
    ax.set_xticks(xs, labels, fontsize=8)
    # Up to twice the flat level at least: a flat curve then sits mid-panel, below the legend.
    ax.set_ylim(0, max(top, 2 * math.log(max(2, len(xs)))) * 1.05)
    ax.set_ylabel("surprisal −ln p (nats)", fontsize=9)
    mae = stats.get("mae")
    mae_text = f", MAE {mae:.2f}" if isinstance(mae, int | float) else ""
    ax.set_title(f"{name} (n={len(items)}{mae_text})", fontsize=10)
    ax.grid(alpha=0.3)
    ax.set_axisbelow(True)
    if len(items) <= MAX_LEGEND:
        ax.legend(fontsize=6, loc="upper right", frameon=False)


def render_ordinal_png(results: Mapping[str, Any]) -> bytes:
    """The PNG bytes (deterministic: no Software/date metadata)."""
    fig = build_figure(results)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()
