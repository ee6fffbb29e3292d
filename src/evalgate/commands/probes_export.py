"""`evalgate probes export --format csv|jsonl [--output FILE] [--probes FILE ...] [--suite NAME]`.

With `suites:` (docs/suites.md) every suite's files are exported, suite by suite (or --suite's
alone), a multiple-choice suite's as items; a CSV holds one kind (its columns are that kind's).

Writes every probe of the set (deprecated ones included), file by file in the configuration's
order, so that `evalgate probes import` of the export into an empty set gives back the same probe
files byte for byte, and exporting that set again gives the same export. Without --output the
export goes to standard output and the summary to standard error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from evalgate.commands._args import cli_paths
from evalgate.config import GateConfig, load_config
from evalgate.console import Console
from evalgate.edges.files import atomic_write_text
from evalgate.edges.inputs import read_checked
from evalgate.edges.output_paths import refuse_special_output
from evalgate.errors import EXIT_PASS, EXIT_REFUSED, RefusedError
from evalgate.probeset.authoring import export_csv, export_jsonl
from evalgate.probeset.items import items_from_records
from evalgate.probeset.jsonl import parse_jsonl
from evalgate.probeset.records import probes_from_records
from evalgate.probeset_io import display_path, probe_paths
from evalgate.types import Finding, Probe


def _lossy(f: Finding) -> bool:
    """A problem that would drop or garble a record in the export (other problems travel along)."""
    return f.check == "schema" or (f.check.startswith("jsonl-") and f.check != "jsonl-bom")


def _views(cfg: GateConfig, suite: str | None, probe_files: list[str] | None) -> list[GateConfig]:
    """The configurations whose files are exported: the run's, or (`suites:`) each suite's view."""
    if suite is not None:
        return [cfg.for_suite(cfg.suite_named(suite))]  # refused when there is no such suite
    if cfg.suites and probe_files:
        raise RefusedError(
            "--probes: with `suites:` in evalgate.yml every suite names its own files",
            hint="export one suite with --suite NAME, or every suite without it",
        )
    return [cfg.for_suite(s) for s in cfg.suites] or [cfg]


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(args.config)
    probes: list[Probe] = []
    lossy: list[Finding] = []
    files = []
    probe_files = cli_paths(args.probes)
    for view in _views(cfg, getattr(args, "suite", None), probe_files):
        items = view.suite if view.is_items else None
        tag = items.name if items is not None and len(cfg.suites) > 1 else None
        for path in probe_paths(view, None if view.suite else probe_files):
            shown = display_path(cfg.root, path)
            if not os.path.lexists(path):
                lossy.append(Finding("file-missing", "probe file not found", shown, hint="check `probes:`"))
                continue
            # a link to /dev/zero, a FIFO, a folder or a huge file: refused by what it is, unread
            data = read_checked(path, "probes", "probe file", roots=cfg.roots(), shown=shown)
            records, found = parse_jsonl(data, shown)
            if items is not None:
                parsed, semantic, _ = items_from_records(records, shown, items.dims, tag)
            else:
                parsed, semantic, _ = probes_from_records(records, shown, None)
            lossy += [f for f in found + semantic if _lossy(f)]
            probes += parsed
            files.append(f"{shown} ({len(parsed)})")
    if args.format == "csv" and len({p.is_item for p in probes}) > 1:
        raise RefusedError(
            "the suites hold verb-form probes and multiple-choice items, whose CSV columns differ",
            hint="export one suite at a time with --suite NAME, or all of them with --format jsonl",
        )
    if lossy:
        lead = "evalgate probes export: refused; these records could not be exported without loss"
        console.refusal(lead, lossy)
        return EXIT_REFUSED
    text = export_csv(probes) if args.format == "csv" else export_jsonl(probes)
    summary = f"{len(probes)} probe(s) from {', '.join(files)} as {args.format.upper()}"
    if args.output:
        refuse_special_output(args.output, "--output")
        try:
            atomic_write_text(args.output, text)
        except OSError as exc:
            why = "it is a folder" if Path(args.output).is_dir() else exc.strerror or str(exc)
            raise RefusedError(f"--output {args.output}: cannot write the export: {why}") from None
        print(f"evalgate: exported {summary} to {args.output}")
    else:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:  # `| head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_PASS
        print(f"evalgate: exported {summary}", file=sys.stderr)
    return EXIT_PASS
