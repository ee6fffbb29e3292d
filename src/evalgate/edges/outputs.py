"""Write every output of a run into the output folder, each file atomically.

Order, and why:
1. validate the results against results.schema.json (ours must always pass: a failure is a bug,
   raised as `ResultsSchemaError`, exit 3);
2. render everything in memory (REPORT.md, badges, CSV, PNG), so a rendering failure writes
   nothing at all;
3. write REPORT.md, badge.json, badge.svg, per_slice.csv, per_slice.png (and ordinal.png when
   the run has ordinal probes, trend.png when results.json's `drift` has a trend), each through a
   temporary file and a rename (readers see the old
   file or the new one, never half of one);
4. write results.json last. It is the record other tools trust (`evalgate compare`, the comment
   job, baseline updates): once it is the new one, every other file of the run is complete; a
   crash before it leaves the previous results.json untouched.

The function returns before any network call is made (the caller posts the comment afterwards),
so the report is always on disk first. A refused run has no slices: it writes results.json,
REPORT.md and the badges, and removes a per_slice.csv/png (or an ordinal.png) left by an earlier
run, which would otherwise be read as this run's.

Stale outputs: `clear_outputs` runs before anything else of `evalgate run`, so a run that stops
early (a crash, a kill) never leaves an earlier REPORT.md (or one a PR committed into the output
folder) to be uploaded and posted as this run's. It removes only evalgate's own file names (and
leftover temporary files of `atomic_write_bytes`), never anything else: `--out` may name a folder
that holds other files. An output folder that is a symbolic link, or an output name that is one,
is refused: the run would write (or delete) wherever the link points.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalgate.console import clean
from evalgate.edges.files import atomic_write_bytes, atomic_write_text, dump_json
from evalgate.errors import EvalgateError, RefusedError
from evalgate.gate.results import validate_results
from evalgate.report.badge import badge_json, badge_svg
from evalgate.report.full_report import render_report
from evalgate.report.per_slice_csv import render_csv
from evalgate.types import DEFAULT_REVIEW_ENTROPY

RESULTS, REPORT, CSV, PNG = "results.json", "REPORT.md", "per_slice.csv", "per_slice.png"
ORDINAL_PNG = "ordinal.png"  # only when the run has ordinal probes (results.json "ordinal")
TREND_PNG = "trend.png"  # only when a slice regressed or drifted (results.json "drift.trend")
BADGE_JSON, BADGE_SVG = "badge.json", "badge.svg"
DEFAULTS = {"max_chars": 65000, "max_flipped": 50, "review_entropy": DEFAULT_REVIEW_ENTROPY}


OUTPUT_NAMES = (RESULTS, REPORT, CSV, PNG, ORDINAL_PNG, TREND_PNG, BADGE_JSON, BADGE_SVG)


def refuse_symlinked(out_dir: Path) -> None:
    """The output folder, or one of evalgate's names in it, is a symbolic link: refused (exit 2)."""
    out_dir = Path(out_dir)
    links = [out_dir] if out_dir.is_symlink() else []
    if not links and out_dir.is_dir():
        links = [out_dir / n for n in OUTPUT_NAMES if (out_dir / n).is_symlink()]
    if links:
        raise RefusedError(
            f"output folder {clean(out_dir, 300)}: {clean(links[0], 300)} is a symbolic link "
            f"(to {clean(os.readlink(links[0]))}); refusing to write through it",
            hint="remove the link (a repository must not commit files into the output folder), "
            "or choose another folder with --out",
        )


def clear_outputs(out_dir: Path) -> None:
    """Remove every output an earlier run (or a pull request) left in `out_dir` (see above)."""
    out_dir = Path(out_dir)
    refuse_symlinked(out_dir)
    if not out_dir.is_dir():
        return
    for name in OUTPUT_NAMES:
        path = out_dir / name
        if path.is_dir():
            raise RefusedError(
                f"output folder {clean(out_dir, 300)}: {name} is a folder; refusing to write there",
                hint="remove it, or choose another folder with --out",
            )
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    for leftover in out_dir.glob(".*.tmp"):  # a killed atomic write's temporary file
        if leftover.name.split(".")[1] + "." + leftover.name.split(".")[2] in OUTPUT_NAMES:
            with contextlib.suppress(OSError):
                leftover.unlink()


class ResultsSchemaError(RuntimeError):
    """The results dict a run produced does not match its own schema: a bug, not a user error."""


def _report_settings(report_cfg: Any) -> dict[str, Any]:
    """ReportConfig, a whole GateConfig (its .report), a mapping, or None for the defaults."""
    cfg = getattr(report_cfg, "report", report_cfg)
    if cfg is None:
        return dict(DEFAULTS)
    if isinstance(cfg, Mapping):
        return {k: cfg.get(k, v) for k, v in DEFAULTS.items()}
    return {k: getattr(cfg, k, v) for k, v in DEFAULTS.items()}


def render_outputs(results: Mapping[str, Any], report_cfg: Any = None) -> dict[str, bytes]:
    """Every output file's bytes, in write order (results.json last)."""
    try:
        validate_results(results, "results")
    except EvalgateError as exc:
        raise ResultsSchemaError(
            f"bug: the results do not match results.schema.json: {exc.message}"
        ) from None
    files: dict[str, bytes] = {REPORT: render_report(results, **_report_settings(report_cfg)).encode("utf-8")}
    files[BADGE_JSON] = dump_json(badge_json(results)).encode("utf-8")
    files[BADGE_SVG] = badge_svg(results).encode("utf-8")
    if results.get("verdict") != "refused":
        from evalgate.edges.plot import render_png  # matplotlib only when there is something to draw

        files[CSV] = render_csv(results).encode("utf-8")
        files[PNG] = render_png(results)
        if results.get("ordinal"):
            from evalgate.edges.plot_ordinal import render_ordinal_png

            files[ORDINAL_PNG] = render_ordinal_png(results)
        if (results.get("drift") or {}).get("trend"):
            from evalgate.edges.plot_trend import render_trend_png

            files[TREND_PNG] = render_trend_png(results)
    files[RESULTS] = dump_json(results).encode("utf-8")
    return files


def write_outputs(results: Mapping[str, Any], out_dir: Path, report_cfg: Any = None) -> dict[str, Path]:
    """Write the outputs into `out_dir` (created if needed); returns {file name: path} of what was written."""
    return write_rendered(render_outputs(results, report_cfg), out_dir)


def write_rendered(files: Mapping[str, bytes], out_dir: Path) -> dict[str, Path]:
    """Write `render_outputs`' files into `out_dir`: an `OSError` here is the output folder's."""
    out_dir = Path(out_dir)
    refuse_symlinked(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for name, data in files.items():
        if name == RESULTS:
            continue
        atomic_write_bytes(out_dir / name, data)
        written[name] = out_dir / name
    if CSV not in files:
        for stale in (CSV, PNG):
            with contextlib.suppress(FileNotFoundError):
                (out_dir / stale).unlink()
    for optional in (ORDINAL_PNG, TREND_PNG):  # a run without them must not show an earlier run's
        if optional not in files:
            with contextlib.suppress(FileNotFoundError):
                (out_dir / optional).unlink()
    atomic_write_text(out_dir / RESULTS, files[RESULTS].decode("utf-8"))
    written[RESULTS] = out_dir / RESULTS
    return written
