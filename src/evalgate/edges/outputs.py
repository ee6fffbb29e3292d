"""Write every output of a run into the output folder, each file atomically.

Order, and why:
1. validate the results against results.schema.json (ours must always pass: a failure is a bug,
   raised as `ResultsSchemaError`, exit 3);
2. render everything in memory (REPORT.md, badges, CSV, PNG), so a rendering failure writes
   nothing at all;
3. write REPORT.md, badge.json, badge.svg, per_slice.csv, per_slice.png (and ordinal.png when
   the run has ordinal probes), each through a temporary file and a rename (readers see the old
   file or the new one, never half of one);
4. write results.json last. It is the record other tools trust (`evalgate compare`, the comment
   job, baseline updates): once it is the new one, every other file of the run is complete; a
   crash before it leaves the previous results.json untouched.

The function returns before any network call is made (the caller posts the comment afterwards),
so the report is always on disk first. A refused run has no slices: it writes results.json,
REPORT.md and the badges, and removes a per_slice.csv/png (or an ordinal.png) left by an earlier
run, which would otherwise be read as this run's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalgate.core.badge import badge_json, badge_svg
from evalgate.core.render_csv import render_csv
from evalgate.core.render_md import render_report
from evalgate.core.results import validate_results
from evalgate.edges.files import atomic_write_bytes, atomic_write_text, dump_json
from evalgate.errors import EvalgateError

RESULTS, REPORT, CSV, PNG = "results.json", "REPORT.md", "per_slice.csv", "per_slice.png"
ORDINAL_PNG = "ordinal.png"  # only when the run has ordinal probes (results.json "ordinal")
BADGE_JSON, BADGE_SVG = "badge.json", "badge.svg"
DEFAULTS = {"max_chars": 65000, "max_flipped": 50, "review_entropy": 0.8}


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
    files[RESULTS] = dump_json(results).encode("utf-8")
    return files


def write_outputs(results: Mapping[str, Any], out_dir: Path, report_cfg: Any = None) -> dict[str, Path]:
    """Write the outputs into `out_dir` (created if needed); returns {file name: path} of what was written."""
    files = render_outputs(results, report_cfg)
    out_dir = Path(out_dir)
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
    if ORDINAL_PNG not in files:  # a run without ordinal probes must not show an earlier run's curves
        with contextlib.suppress(FileNotFoundError):
            (out_dir / ORDINAL_PNG).unlink()
    atomic_write_text(out_dir / RESULTS, files[RESULTS].decode("utf-8"))
    written[RESULTS] = out_dir / RESULTS
    return written
