"""`evalgate run` (the default command): validate → load → score → compare → report → exit code.

Whatever happens after the configuration is read, the output folder receives a results.json and a
REPORT.md saying what happened (a refusal included) before any network call, so nothing is lost.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from evalgate.config import GateConfig, load_config
from evalgate.console import print_commands
from evalgate.edges.progress import Progress
from evalgate.errors import EXIT_PASS, EXIT_REGRESSION, EvalgateError, RefusedError
from evalgate.pipeline import gate, refuse_before_scoring, refused_results, score
from evalgate.probeset_io import load_baseline
from evalgate.schemas import loader_spec


def cli_path(value: str | None) -> str | None:
    """A path flag is relative to where the command runs, not to the configuration's folder."""
    if value is None or value.lower() == "none":
        return value
    return str(Path(value).absolute())


def cli_paths(values: list[str] | None) -> list[str] | None:
    return None if values is None else [str(Path(v).absolute()) for v in values]


def cli_loader(value: str | None) -> str | None:
    """--loader checked as the flag it is (the schema would name it "effective configuration")."""
    if value is not None and not loader_spec().match(value):
        raise RefusedError(
            f"--loader {value}: expected package.module:function",
            hint="e.g. --loader mylab.model:load (a module importable from your repository)",
        )
    return value


def config_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Flags in the configuration's own shape (None = not given)."""
    return {
        "checkpoint": cli_path(getattr(args, "checkpoint", None)),
        "loader": cli_loader(getattr(args, "loader", None)),
        "test": cli_path(getattr(args, "test", None)),
        "baseline": cli_path(getattr(args, "baseline", None)),
        "out": cli_path(getattr(args, "out", None)),
        # --probes/--train replace the configured files: the pinned configuration of results.json
        # (and of a baseline) must name the files that were used, not the ones in evalgate.yml.
        "probes": cli_paths(getattr(args, "probes", None)),
        "train": cli_paths(getattr(args, "train", None)),
    }


def output_folder(cfg: GateConfig) -> Path:
    """The output folder; refused up front when it (or a parent) is a file, since even a refusal
    writes its results there."""
    out_dir = cfg.path(cfg.out)
    from evalgate.edges.outputs import refuse_symlinked

    refuse_symlinked(out_dir)
    for path in (out_dir, *out_dir.parents):
        if path.exists():
            if not path.is_dir():
                raise RefusedError(
                    f"output folder {out_dir}: {path} exists and is not a folder",
                    hint="choose an output folder (default evalgate-out), or set `out:` in evalgate.yml",
                )
            if not os.access(path, os.W_OK | os.X_OK):
                # Found before any model is loaded, not as a PermissionError after scoring.
                raise RefusedError(
                    f"output folder {out_dir}: {path} is not writable",
                    hint="choose a writable output folder with --out (or `out:` in evalgate.yml)",
                )
            break
    return out_dir


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        index, count = (int(p) for p in text.split("/"))
    except ValueError:
        raise RefusedError(f"--shard {text}: expected I/N, e.g. 2/4") from None
    if not 1 <= index <= count:
        raise RefusedError(f"--shard {text}: I must be between 1 and N")
    return index, count


def read_gate_changes(path: str | None) -> str | None:
    if not path:
        return None
    p = Path(path)
    if not p.is_file():
        raise RefusedError(f"--gate-changes {path}: file not found")
    text = p.read_text(encoding="utf-8", errors="replace")
    return text if text.strip() else None


def in_github_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def print_findings(findings: list[Any], fmt: str) -> None:
    from evalgate.report.findings import render_findings

    if not findings:
        return
    if fmt == "json":
        # The JSON summary on stdout carries them; under Actions the annotations go to stderr,
        # which the runner reads too, so stdout stays one JSON document.
        if in_github_actions():
            print_commands(render_findings(findings, "github"), file=sys.stderr)
        return
    if fmt == "github":
        print_commands(render_findings(findings, "github"), file=sys.stderr)
    else:
        print(render_findings(findings, "text"), file=sys.stderr)
    if fmt != "github" and in_github_actions():
        print_commands(render_findings(findings, "github"))


def shown_path(path: Path) -> str:
    """`path` as the caller sees it: relative to the working folder when inside it, so that
    `docker run -v "$PWD:/work" -w /work` prints `evalgate-out/REPORT.md`, not the container's
    `/work/evalgate-out/REPORT.md`."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def print_summary(results: dict[str, Any], out_dir: Path, fmt: str) -> None:
    overall = (results.get("slices") or {}).get("overall") or {}
    accuracy = overall.get("accuracy")
    verdict = results["verdict"]
    acc = f"{accuracy:.1%}" if isinstance(accuracy, float) else "n/a"
    if fmt == "json":
        summary = {
            "verdict": verdict,
            "accuracy": accuracy,
            "reasons": results.get("reasons", []),
            "findings": results.get("findings", []),
            "warnings": results.get("warnings", []),
            "out": str(out_dir),
        }
        summary.update(comment_numbers(results))
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        report = shown_path(out_dir / "REPORT.md")
        print(f"evalgate: verdict {verdict.upper()} (overall accuracy {acc}); report in {report}")
        for reason in results.get("reasons", []):
            print(f"  - {reason}")
        _print_approved_changes(results)
    warnings = _warnings(results)
    if fmt == "text" and warnings:  # e.g. a partial probe set: the deleted-probe check was skipped
        from evalgate.report.findings import finding_line

        for w in warnings:
            print(f"evalgate: warning: {finding_line(w)}", file=sys.stderr)
    if fmt == "github" or in_github_actions():
        from evalgate.report.findings import escape_data, render_github

        level = {"pass": "notice", "fail": "error"}.get(verdict, "error")
        stream = sys.stderr if fmt == "json" else sys.stdout  # stdout stays one JSON document
        for reason in results.get("reasons", []) or [f"evalgate: {verdict}, overall accuracy {acc}"]:
            print_commands(f"::{level} title=evalgate {verdict}::{escape_data(reason)}", file=stream)
        if warnings:
            print_commands(render_github((), warnings), file=stream)


def comment_numbers(results: dict[str, Any]) -> dict[str, Any]:
    """The PR comment's numbers for `--format json`: every gated slice (`slices`), and which of
    them the comment's table shows (`comment_slices`: regressed, else closest to the line)."""
    from evalgate.report.comment import focus_slices, slice_rows

    kind, rows = focus_slices(results)
    return {
        "slices": slice_rows(results),
        "comment_slices": {"kind": kind, "slices": [r["slice"] for r in rows]},
    }


def _print_approved_changes(results: dict[str, Any], shown: int = 20) -> None:
    """An approved run still says, in its log, that it changed its own gate (docs/approval.md)."""
    from evalgate.gate.yardstick import describe

    changes = results.get("gate_changes_vs_baseline") or []
    if not changes or results.get("verdict") == "refused":
        return
    print(f"evalgate: {len(changes)} approved gate change(s) since the baseline:", file=sys.stderr)
    for change in changes[:shown]:
        print(f"  - {describe(change)}", file=sys.stderr)
    if len(changes) > shown:
        print(f"  ... and {len(changes) - shown} more (REPORT.md, results.json)", file=sys.stderr)


def _warnings(results: dict[str, Any]) -> list[Any]:
    """results.json `warnings` (validation warnings, as dicts) back as Findings for the renderers."""
    from evalgate.types import Finding

    keys = ("check", "message", "file", "line", "probe_id", "field", "hint")
    out = []
    for w in results.get("warnings") or []:
        if isinstance(w, dict) and isinstance(w.get("check"), str) and isinstance(w.get("message"), str):
            out.append(Finding(**{k: w[k] for k in keys if k in w}))
    return out


def maybe_comment(args: argparse.Namespace, out_dir: Path) -> None:
    if not getattr(args, "comment", False):
        return
    from evalgate.commands.comment import post_report

    # With --format json, stdout is the run's one JSON document: the comment's lines (and its
    # ::warning, which the runner reads on stderr too) go to stderr.
    quiet = getattr(args, "format", None) == "json"
    try:
        with contextlib.redirect_stdout(sys.stderr) if quiet else contextlib.nullcontext():
            post_report(out_dir, own_report=True)
    except EvalgateError as exc:
        exc.json_printed = True  # type: ignore[attr-defined]  # the run's summary is already on stdout
        raise


def write(results: dict[str, Any], out_dir: Path, cfg: GateConfig) -> None:
    from evalgate.edges.outputs import write_outputs

    try:
        write_outputs(results, out_dir, cfg.report)
    except OSError as exc:  # read-only folder, disk full: the user's to fix, not a bug (exit 2)
        raise RefusedError(
            f"output folder {out_dir}: cannot write the outputs there: {exc.strerror or exc}",
            hint="choose a writable output folder with --out (or `out:` in evalgate.yml)",
        ) from None


def main(args: argparse.Namespace) -> int:
    cfg = load_config(args.config, config_overrides(args))
    fmt = args.format or "text"
    out_dir = output_folder(cfg)
    from evalgate.edges.outputs import clear_outputs

    clear_outputs(out_dir)  # nothing of an earlier run (or of the PR) can pass for this run's report
    progress = Progress(quiet=fmt == "json")
    gate_changes = read_gate_changes(getattr(args, "gate_changes", None))
    shard = parse_shard(getattr(args, "shard", None))
    outcome = None
    read: dict[str, Any] = {}  # inputs read so far, beyond the probe set: a refusal lists them too
    try:
        from evalgate.edges.journal import recover_set
        from evalgate.probeset_io import validate

        recover_set(cfg)  # a probe change a killed run left half-done: finished or dropped first
        with progress.phase("validate probe set"):
            outcome = validate(cfg, cli_paths(args.probes), cli_paths(args.train))
        # A deletion since the baseline is a gate change: refused below unless approved.
        outcome = outcome.with_approvable_as_warnings()
        if not outcome.ok:
            raise RefusedError(
                f"the probe set is invalid: {len(outcome.findings)} problem(s); nothing was scored",
                hint="fix every problem listed (run `evalgate validate` for the same list)",
                findings=list(outcome.findings),
            )
        baseline = None if shard else load_baseline(cfg)
        if baseline is not None:
            read.update(baseline[2])
        approve = bool(getattr(args, "approve_gate_changes", False))
        refuse_before_scoring(cfg, outcome, baseline, approve)  # docs/approval.md
        cache = getattr(args, "cache", None)
        results = score(
            cfg, outcome, progress, shard=shard, cache_dir=Path(cache).absolute() if cache else None
        )
        read.update(results["inputs"])  # checkpoint files and test set: hashed even if the gate refuses
        if shard is None:
            results = gate(
                results,
                baseline,
                cfg,
                approve_gate_changes=approve,
                probe_files={p.id: p.file for p in outcome.probes},
            )
        if gate_changes:
            results["gate_changes"] = gate_changes
    except EvalgateError as exc:
        if not isinstance(exc, RefusedError):
            raise
        results = refused_results(cfg, exc, outcome=outcome, extra_inputs=read, gate_changes=gate_changes)
        write(results, out_dir, cfg)
        print_findings(list(exc.findings), fmt)
        if fmt == "json":
            print_summary(results, out_dir, fmt)
            exc.json_printed = True  # type: ignore[attr-defined]  # cli.py prints no second document
        maybe_comment(args, out_dir)
        raise
    write(results, out_dir, cfg)
    print_summary(results, out_dir, fmt)
    maybe_comment(args, out_dir)
    return EXIT_REGRESSION if results["verdict"] == "fail" else EXIT_PASS
