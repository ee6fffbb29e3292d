"""per_slice.png: an overall panel (overall and the categories) and four more (EN/ES,
regular/irregular, tense, person), Wilson error bars, baseline ticks.

With a baseline the bars show what the gate compared (the probes both runs scored), like the
report's table and text chart; without one, every scored probe. A bar is red exactly when the gate
flagged its slice (`flagged`): the comparison's status is "regressed", or the slice is named in
`comparison.regressed`.

Drawn on a bare `Figure` with the Agg canvas (no pyplot: no global state, no display needed) under
matplotlib's default style, so a user's matplotlibrc cannot change the picture. The PNG carries no
"Software" or date metadata: the same results give the same bytes (docs/report.md: a re-run is
identical, and this file goes into the artifact next to results.json).
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

OVERALL = ("overall", "Overall")  # plus every category:* slice
PANELS = (
    ("language", "Language", ("en", "es")),
    ("regularity", "Regularity", ("regular", "irregular")),
    ("tense", "Tense", ("infinitive", "present_simple", "past_simple", "past_participle", "future")),
    ("person", "Person", ("1sg", "2sg", "3sg")),
)
BAR = "#4c72b0"
BAR_REGRESSED = "#c44e52"
DPI = 100

# Labels are the pull request's text (probe ids, scale labels), drawn as given: with the math
# parser on, a `$` in one would reach matplotlib's mathtext and crash the run.
PLAIN_TEXT = {"font.family": "DejaVu Sans", "text.parse_math": False}


def ensure_mplconfigdir() -> None:
    """Give matplotlib a writable config/cache folder when HOME has none (containers with HOME=/).

    Without it matplotlib warns and builds its font cache in a fresh temporary folder anyway.
    """
    if os.environ.get("MPLCONFIGDIR"):
        return
    try:
        config = Path.home() / ".config" / "matplotlib"
        config.mkdir(parents=True, exist_ok=True)
        if os.access(config, os.W_OK):
            return
    except (OSError, RuntimeError):
        pass
    os.environ["MPLCONFIGDIR"] = tempfile.mkdtemp(prefix="evalgate-matplotlib-")


def _values(family: str, order: tuple[str, ...], slices: Mapping[str, Any]) -> list[str]:
    present = [k.partition(":")[2] for k in slices if k.startswith(family + ":")]
    return [v for v in order if v in present] + sorted(v for v in present if v not in order)


def flagged(results: Mapping[str, Any]) -> set[str]:
    """The slice keys the gate flagged as regressed: these bars, and only these, are red."""
    comparison = results.get("comparison") or {}
    rows: Mapping[str, Any] = comparison.get("slices") or {}
    keys = {k for k, row in rows.items() if isinstance(row, Mapping) and row.get("status") == "regressed"}
    for item in comparison.get("regressed") or []:
        key = item.get("slice") if isinstance(item, Mapping) else item
        if isinstance(key, str):
            keys.add(key)
    return keys


def panel_keys(results: Mapping[str, Any]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(axes name, title, [(slice key, tick label), ...]) for each panel, the overall one first."""
    slices: Mapping[str, Any] = results.get("slices") or {}
    comparison: Mapping[str, Any] = (results.get("comparison") or {}).get("slices") or {}
    known = {**slices, **comparison}
    overall = [("overall", "overall")] if "overall" in known else []
    overall += [(f"category:{v}", v) for v in _values("category", ("core", "adversarial"), known)]
    out = [("overall", OVERALL[1], overall)]
    for family, title, order in PANELS:
        out.append((family, title, [(f"{family}:{v}", v) for v in _values(family, order, known)]))
    return out


def build_figure(results: Mapping[str, Any]) -> Any:
    """The matplotlib Figure: the overall panel, then one panel per slice family."""
    ensure_mplconfigdir()
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.style
    from matplotlib.figure import Figure

    slices: Mapping[str, Any] = results.get("slices") or {}
    comparison: Mapping[str, Any] = (results.get("comparison") or {}).get("slices") or {}
    red = flagged(results)
    with matplotlib.style.context("default"), matplotlib.rc_context(PLAIN_TEXT):
        fig = Figure(figsize=(11, 7.5), dpi=DPI, layout="constrained")
        axes = fig.subplot_mosaic([["overall", "language", "regularity"], ["tense", "tense", "person"]])
        for name, title, keys in panel_keys(results):
            _panel(axes[name], title, keys, slices, comparison, red)
        _legend(fig, bool(comparison))
        verdict = str(results.get("verdict", "?"))
        fig.suptitle(f"evalgate: accuracy per slice (verdict: {verdict})", fontsize=13)
    return fig


def _numbers(key: str, slices: Mapping[str, Any], comparison: Mapping[str, Any]) -> dict:
    """With a baseline, the numbers the gate compared (shared probes), as in the report; else the slice."""
    s, c = slices.get(key) or {}, comparison.get(key) or {}
    if c.get("accuracy") is not None:
        return {**c, "n": c.get("n_shared", s.get("n", 0))}
    return dict(s)


def _panel(
    ax: Any,
    title: str,
    keys: list[tuple[str, str]],
    slices: Mapping[str, Any],
    comparison: Mapping[str, Any],
    red: set[str],
) -> None:
    xs = list(range(len(keys)))
    heights, low, high, colors, labels, base = [], [], [], [], [], []
    for x, (key, value) in zip(xs, keys, strict=True):
        s = _numbers(key, slices, comparison)
        acc, lo, hi = s.get("accuracy"), s.get("wilson_low"), s.get("wilson_high")
        heights.append(0.0 if acc is None else 100 * acc)
        # max(0, ...): a results file whose interval misses its accuracy must not stop the plot
        low.append(0.0 if acc is None or lo is None else max(0.0, 100 * (acc - lo)))
        high.append(0.0 if acc is None or hi is None else max(0.0, 100 * (hi - acc)))
        colors.append(BAR_REGRESSED if key in red else BAR)
        labels.append(f"{value.replace('_', chr(10))}\nn={s.get('n', 0)}")
        if s.get("baseline_accuracy") is not None:
            base.append((x, 100 * s["baseline_accuracy"]))
        if acc is None:
            ax.annotate("n/a", (x, 2), ha="center", fontsize=9, color="#666666")
    ax.bar(xs, heights, color=colors, width=0.6, yerr=[low, high], capsize=4, ecolor="#333333")
    if base:
        bx, by = zip(*base, strict=True)
        ax.scatter(bx, by, marker="_", s=900, linewidths=2.5, color="black", zorder=3)
    ax.set_title(title)
    ax.set_xticks(xs, labels, fontsize=9)
    ax.set_ylim(0, 105)
    ax.set_ylabel("accuracy (%)")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def _legend(fig: Any, compared: bool) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(color=BAR, label="accuracy, Wilson 95% interval")]
    if compared:
        handles += [
            Patch(color=BAR_REGRESSED, label="regressed (flagged by the gate)"),
            Line2D(
                [],
                [],
                color="black",
                marker="_",
                markersize=18,
                linestyle="none",
                markeredgewidth=2.5,
                label="baseline (shared probes)",
            ),
        ]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=9, frameon=False)


def render_png(results: Mapping[str, Any]) -> bytes:
    """The PNG bytes (deterministic: no Software/date metadata)."""
    fig = build_figure(results)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()
