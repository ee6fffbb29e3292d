"""per_slice.png: an overall panel (overall and the categories) and four more (EN/ES,
regular/irregular, tense, person), Wilson error bars, baseline ticks.

A run with `suites:` (docs/suites.md) declares its own dimensions instead: an overall panel (the
run's `overall` and, with several suites, each suite's), then one panel per gated dimension of each
suite, in the configuration's order, with the chance level (mean 1/K, gate/floors.py) and the
floors (`gate.min_accuracy`) as short lines over their bars (`suite_panels`, `build_figure`).

With a baseline the bars show what the gate compared (the probes both runs scored), like the
report's table and text chart; without one, every scored probe. A bar is red exactly when the gate
flagged its slice (`flagged`): the comparison's status is "regressed", or the slice is named in
`comparison.regressed`.

Drawn on a bare `Figure` with the Agg canvas (no pyplot: no global state, no display needed) under
matplotlib's default style, with matplotlib imported so that it reads no matplotlibrc, style or
font cache but its own (`import_matplotlib`): neither a user's nor a pull request's can change
the picture or stop the run. The PNG carries no
"Software" or date metadata: the same results give the same bytes (docs/report.md: a re-run is
identical, and this file goes into the artifact next to results.json).
"""

from __future__ import annotations

import atexit
import importlib
import io
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from evalgate.gate.slice_order import gated_families, ordered, split_suite
from evalgate.report.suites import chance as suite_chance
from evalgate.report.suites import failed_floors, suite_kinds
from evalgate.report.suites import floors as suite_floors

if TYPE_CHECKING:
    from evalgate.gate.document import ResultsDocument

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


# What the gate draws with, imported once per process into a private folder (import_matplotlib).
_MATPLOTLIB_MODULES = (
    "matplotlib",
    "matplotlib.style",
    "matplotlib.font_manager",
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
    "matplotlib.lines",
    "matplotlib.patches",
)


def import_matplotlib() -> ModuleType:
    """matplotlib, imported so that it reads no configuration but its own package's
    (docs/hostile-inputs.md, "Libraries that read files on their own").

    `import matplotlib` reads the first `matplotlibrc` of: the working folder (in CI the pull
    request's workspace: a merged `matplotlibrc -> /proc/self/mem` broke every later run, a FIFO
    there hangs it), `$MATPLOTLIBRC`, `$MPLCONFIGDIR` (else ~/.config/matplotlib), and last its
    own `mpl-data/matplotlibrc` (matplotlib_fname, 3.x); `matplotlib.style` then reads every
    `stylelib/*.mplstyle` of that config folder, and the font manager its cached font list. So the
    import runs with a fresh private folder as the working folder (it holds no `matplotlibrc`) and
    as `MPLCONFIGDIR` (matplotlib remembers it for the process: styles and font cache live there),
    and without `$MATPLOTLIBRC`; both the folder and the variables are restored after it. The
    picture then depends on matplotlib's defaults alone. A process that imported matplotlib
    before (a test) keeps what it has.
    """
    if "matplotlib" not in sys.modules:
        private = tempfile.mkdtemp(prefix="evalgate-matplotlib-")
        atexit.register(shutil.rmtree, private, True)
        saved = {k: os.environ.get(k) for k in ("MPLCONFIGDIR", "MATPLOTLIBRC")}
        here = os.open(os.curdir, getattr(os, "O_PATH", os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0))
        try:
            os.environ["MPLCONFIGDIR"] = private
            os.environ.pop("MATPLOTLIBRC", None)
            os.chdir(private)
            for name in _MATPLOTLIB_MODULES:
                importlib.import_module(name)
        finally:
            os.fchdir(here)
            os.close(here)
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    for name in _MATPLOTLIB_MODULES:
        importlib.import_module(name)
    matplotlib = sys.modules["matplotlib"]
    matplotlib.use("Agg", force=False)
    return matplotlib


def _values(family: str, order: tuple[str, ...], slices: Mapping[str, Any]) -> list[str]:
    present = [k.partition(":")[2] for k in slices if k.startswith(family + ":")]
    return [v for v in order if v in present] + sorted(v for v in present if v not in order)


def flagged(results: Mapping[str, Any]) -> set[str]:
    """The slice keys the gate flagged: regressed against the baseline, or under their floor
    (`gate.min_accuracy`). These bars, and only these, are red."""
    comparison = results.get("comparison") or {}
    rows: Mapping[str, Any] = comparison.get("slices") or {}
    keys = {k for k, row in rows.items() if isinstance(row, Mapping) and row.get("status") == "regressed"}
    for item in comparison.get("regressed") or []:
        key = item.get("slice") if isinstance(item, Mapping) else item
        if isinstance(key, str):
            keys.add(key)
    keys.update(failed_floors(_doc(results)))
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
    matplotlib = import_matplotlib()
    from matplotlib.figure import Figure

    if (results.get("config") or {}).get("suites"):
        return _suite_figure(results)

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
    upright: bool = False,
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
        if upright:  # many values: one turned line each, "value (n=12)"
            labels.append(f"{value} (n={s.get('n', 0)})")
        else:
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


# -- a run with suites --------------------------------------------------------------------------

CHANCE = "#555555"
FLOOR = "#dd8452"  # not the red of a flagged bar: a floor over a red bar must still show
COLUMNS = 3  # panels per row; a dimension with many values takes more than one
ROTATE_ABOVE = 8  # more values than this: tick labels turn upright


def _doc(results: Mapping[str, Any]) -> ResultsDocument:
    return cast("ResultsDocument", results)


def suite_panels(results: Mapping[str, Any]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(axes name, title, [(slice key, tick label), ...]) per panel of a run with suites: the
    overall panel (the run's `overall`, then each suite's when there are several), then each
    suite's gated dimensions (a multiple-choice suite's declared ones too, gated or not)."""
    doc = _doc(results)
    slices: Mapping[str, Any] = results.get("slices") or {}
    comparison: Mapping[str, Any] = (results.get("comparison") or {}).get("slices") or {}
    known = {**slices, **comparison}
    kinds = suite_kinds(doc)
    several = len(kinds) > 1
    overall = [("overall", "overall")] if "overall" in known else []
    if several:
        overall += [(f"{s}/overall", s) for s in kinds if f"{s}/overall" in known]
    out = [("overall", "Overall", overall)]
    families = [f for f in gated_families(doc) if split_suite(f)[1] != "overall"]
    declared = (results.get("config") or {}).get("suites")
    for suite in kinds:
        part = declared.get(suite) if isinstance(declared, Mapping) else None
        dims = part.get("slices") if isinstance(part, Mapping) else None
        prefix = f"{suite}/" if several else ""
        for dim in dims if isinstance(dims, Mapping) else ():
            if prefix + dim not in families:
                families.append(prefix + dim)
    for fam in families:
        suite, dim = split_suite(fam)
        keys = ordered(k for k in known if k.startswith(fam + ":"))
        title = f"{suite} · {dim}" if suite else dim
        out.append((fam, title, [(k, k.partition(":")[2]) for k in keys]))
    return out


def suite_layout(panels: list[tuple[str, str, list[tuple[str, str]]]]) -> list[list[str]]:
    """The mosaic: rows of COLUMNS cells, a panel spanning more cells the more values it has."""
    rows: list[list[str]] = []
    row: list[str] = []
    for name, _, keys in panels:
        width = 1 if len(keys) <= 6 else 2 if len(keys) <= 12 else COLUMNS
        if len(row) + width > COLUMNS:
            rows.append(row + ["."] * (COLUMNS - len(row)))
            row = []
        row += [name] * width
    if row:
        rows.append(row + ["."] * (COLUMNS - len(row)))
    return rows


def _suite_figure(results: Mapping[str, Any]) -> Any:
    matplotlib = import_matplotlib()
    from matplotlib.figure import Figure

    doc = _doc(results)
    slices: Mapping[str, Any] = results.get("slices") or {}
    comparison: Mapping[str, Any] = (results.get("comparison") or {}).get("slices") or {}
    red = flagged(results)
    chance = suite_chance(doc)
    floors = {k: f.get("min_accuracy") for k, f in suite_floors(doc).items()}
    panels = suite_panels(results)
    layout = suite_layout(panels)
    with matplotlib.style.context("default"), matplotlib.rc_context(PLAIN_TEXT):
        fig = Figure(figsize=(11, 0.9 + 3.3 * len(layout)), dpi=DPI, layout="constrained")
        axes = fig.subplot_mosaic(layout, empty_sentinel=".")
        for name, title, keys in panels:
            ax = axes[name]
            upright = len(keys) > ROTATE_ABOVE
            _panel(ax, title, keys, slices, comparison, red, upright)
            _marks(ax, [chance.get(k) for k, _ in keys], CHANCE, (0, (2, 2)))
            _marks(ax, [floors.get(k) for k, _ in keys], FLOOR, (0, (1, 1)), width=2.5)
            if upright:
                ax.tick_params(axis="x", labelrotation=90, labelsize=7)
        _legend(fig, bool(comparison), chance=bool(chance), floors=bool(floors))
        verdict = str(results.get("verdict", "?"))
        fig.suptitle(f"evalgate: accuracy per slice (verdict: {verdict})", fontsize=13)
    return fig


def _marks(ax: Any, levels: list[float | None], color: str, style: Any, width: float = 1.8) -> None:
    """A short horizontal line across each bar at its level (chance, floor); none where unknown."""
    for x, level in enumerate(levels):
        if isinstance(level, int | float):
            y = 100 * level
            ax.hlines(y, x - 0.36, x + 0.36, colors=color, linestyles=style, linewidth=width, zorder=4)


def _legend(fig: Any, compared: bool, *, chance: bool = False, floors: bool = False) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(color=BAR, label="accuracy, Wilson 95% interval")]
    if floors and not compared:
        handles.append(Patch(color=BAR_REGRESSED, label="below its floor (flagged by the gate)"))
    if compared:
        flagged_label = "regressed or below its floor" if floors else "regressed"
        handles += [
            Patch(color=BAR_REGRESSED, label=f"{flagged_label} (flagged by the gate)"),
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
    if chance:
        handles.append(Line2D([], [], color=CHANCE, linestyle=(0, (2, 2)), label="chance (mean 1/K)"))
    if floors:
        label = "floor (gate.min_accuracy)"
        handles.append(Line2D([], [], color=FLOOR, linestyle=(0, (1, 1)), linewidth=2.5, label=label))
    # at most three a row: five entries in one row are wider than the figure
    ncols = len(handles) if len(handles) <= 3 else (len(handles) + 1) // 2
    fig.legend(handles=handles, loc="outside lower center", ncols=ncols, fontsize=9, frameon=False)


def render_png(results: Mapping[str, Any]) -> bytes:
    """The PNG bytes (deterministic: no Software/date metadata)."""
    fig = build_figure(results)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()
