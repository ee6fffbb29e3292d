"""per_slice.png: written, an overall panel and four more, Wilson error bars, baseline marks,
the same bytes every time."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from helpers.paths import REPO
from helpers.report_factories import fake_run, no_baseline_run

from evalgate.edges.plot import build_figure, render_png


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])[0] == zlib.crc32(kind + body)
        chunks.append((kind, body))
        pos += 12 + length
    return chunks


@pytest.mark.integration
def test_png_is_written_without_metadata_and_deterministic(tmp_path):
    data = render_png(fake_run())
    chunks = png_chunks(data)
    kinds = [k for k, _ in chunks]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND"
    assert not {b"tEXt", b"iTXt", b"zTXt", b"tIME"} & set(kinds)  # no Software, no date
    width, height = struct.unpack(">II", chunks[0][1][:8])
    assert (width, height) == (1100, 750)
    assert render_png(fake_run()) == data


@pytest.mark.integration
def test_same_bytes_in_a_fresh_process(tmp_path):
    """Determinism across processes too (font cache, hash seeds): what a re-run in CI does."""
    code = (
        "import sys; sys.path[:0] = ['tests']\n"
        "from helpers.report_factories import fake_run\n"
        "from evalgate.edges.plot import render_png\n"
        f"open({str(tmp_path / 'a.png')!r}, 'wb').write(render_png(fake_run()))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=str(REPO))
    assert (tmp_path / "a.png").read_bytes() == render_png(fake_run())


def by_title(fig) -> dict:
    return {ax.get_title(): ax for ax in fig.axes}


@pytest.mark.integration
def test_panels_with_error_bars_and_baseline():
    results = fake_run()
    fig = build_figure(results)
    axes = by_title(fig)
    assert sorted(axes) == ["Language", "Overall", "Person", "Regularity", "Tense"]
    counts = {t: len(ax.patches) for t, ax in axes.items()}
    assert counts == {"Overall": 3, "Language": 2, "Regularity": 2, "Tense": 5, "Person": 3}
    tense = axes["Tense"]
    labels = [t.get_text() for t in tense.get_xticklabels()]
    assert labels[3].startswith("past\nparticiple\nn=")
    # bar heights are the accuracies the gate compared, error bars span the Wilson interval
    row = results["comparison"]["slices"]["tense:past_participle"]
    bar = tense.patches[3]
    assert abs(bar.get_height() - 100 * row["accuracy"]) < 1e-9
    (errbar,) = [c for c in tense.containers if hasattr(c, "lines") and c.lines[2]]
    segments = errbar.lines[2][0].get_segments()
    assert abs(segments[3][0][1] - 100 * row["wilson_low"]) < 1e-9
    assert abs(segments[3][1][1] - 100 * row["wilson_high"]) < 1e-9
    # baseline marks: one per bar, at the baseline accuracy; the regressed bar is red
    (marks,) = tense.collections[-1:]
    ys = sorted(y for _, y in marks.get_offsets())
    expected = sorted(
        100 * results["comparison"]["slices"][f"tense:{t}"]["baseline_accuracy"]
        for t in ("infinitive", "present_simple", "past_simple", "past_participle", "future")
    )
    assert ys == expected
    lang = axes["Language"]
    es = lang.patches[1]
    assert es.get_facecolor()[:3] != lang.patches[0].get_facecolor()[:3]  # language:es regressed


def red_slices(fig) -> set[str]:
    from matplotlib.colors import to_rgb

    from evalgate.edges.plot import BAR_REGRESSED

    red = set()
    for title, ax in by_title(fig).items():
        ticks = [t.get_text().split("\nn=")[0].replace("\n", "_") for t in ax.get_xticklabels()]
        for tick, bar in zip(ticks, ax.patches, strict=True):
            if bar.get_facecolor()[:3] == to_rgb(BAR_REGRESSED):
                family = {"Overall": "category"}.get(title, title.lower())
                red.add("overall" if tick == "overall" else f"{family}:{tick}")
    return red


@pytest.mark.integration
def test_a_bar_is_red_exactly_when_the_gate_flags_its_slice():
    results = fake_run()
    rows = results["comparison"]["slices"]
    flagged = {k for k, r in rows.items() if r["status"] == "regressed"}
    assert {"overall", "category:core"} <= flagged  # shown in the overall panel
    assert red_slices(build_figure(results)) == flagged
    # A big drop the gate did not flag (too small to gate) stays blue; a flagged one is red.
    rows["tense:future"]["status"] = "too_small"
    rows["tense:future"]["accuracy"] = 0.1
    rows["person:2sg"]["status"] = "regressed"
    assert red_slices(build_figure(results)) == (flagged - {"tense:future"}) | {"person:2sg"}


@pytest.mark.integration
def test_no_baseline_no_marks():
    from matplotlib.collections import PathCollection

    fig = build_figure(no_baseline_run())
    assert len(fig.axes) == 5
    assert not [c for ax in fig.axes for c in ax.collections if isinstance(c, PathCollection)]
    with_baseline = build_figure(fake_run())
    assert all(any(isinstance(c, PathCollection) for c in ax.collections) for ax in with_baseline.axes)


IMPORT_AND_REPORT = """
import json, os, sys
from evalgate.edges.plot import import_matplotlib
mpl = import_matplotlib()
import matplotlib.style
json.dump({
    "facecolor": mpl.rcParams["axes.facecolor"],
    "original": mpl.rcParamsOrig["axes.facecolor"],
    "styles": sorted(matplotlib.style.available),
    "configdir": mpl.get_configdir(),
    "cachedir": mpl.get_cachedir(),
    "cwd": os.getcwd(),
    "env": [os.environ.get("MPLCONFIGDIR"), os.environ.get("MATPLOTLIBRC")],
}, sys.stdout)
"""


@pytest.mark.integration
def test_matplotlib_reads_no_configuration_but_its_own(tmp_path):
    """Every place matplotlib looks for a matplotlibrc (the working folder, $MATPLOTLIBRC,
    $MPLCONFIGDIR) holds one that paints the axes red, and the config folder a style: the gate's
    matplotlib has its own defaults, a private config and cache folder (removed at exit), and the
    working folder and the environment are as they were."""
    red = "axes.facecolor: red\n"
    here, rc_env, config = tmp_path / "here", tmp_path / "rc-env", tmp_path / "config"
    for folder in (here, rc_env, config / "stylelib"):
        folder.mkdir(parents=True)
    for folder in (here, rc_env, config):
        (folder / "matplotlibrc").write_text(red, encoding="utf-8")
    (config / "stylelib" / "planted.mplstyle").write_text(red, encoding="utf-8")
    env = {**os.environ, "MPLCONFIGDIR": str(config), "MATPLOTLIBRC": str(rc_env)}
    run = subprocess.run(
        [sys.executable, "-c", IMPORT_AND_REPORT],
        cwd=here,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["facecolor"] == seen["original"] == "white"
    assert "planted" not in seen["styles"]
    assert seen["configdir"] == seen["cachedir"]
    assert Path(seen["configdir"]).name.startswith("evalgate-matplotlib-")
    assert not Path(seen["configdir"]).exists()  # removed when the process ended
    assert seen["cwd"] == str(here)
    assert seen["env"] == [str(config), str(rc_env)]
