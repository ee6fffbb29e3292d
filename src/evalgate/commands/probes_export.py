"""`evalgate probes export --format csv|jsonl [--output FILE] [--probes FILE ...]`.

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
from evalgate.config import load_config
from evalgate.console import Console
from evalgate.edges.files import atomic_write_text
from evalgate.edges.output_paths import refuse_special_output
from evalgate.errors import EXIT_PASS, EXIT_REFUSED, RefusedError
from evalgate.probeset.authoring import export_csv, export_jsonl
from evalgate.probeset.jsonl import parse_jsonl
from evalgate.probeset.records import probes_from_records
from evalgate.probeset_io import display_path, probe_paths
from evalgate.types import Finding, Probe


def _lossy(f: Finding) -> bool:
    """A problem that would drop or garble a record in the export (other problems travel along)."""
    return f.check == "schema" or (f.check.startswith("jsonl-") and f.check != "jsonl-bom")


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(args.config)
    probes: list[Probe] = []
    lossy: list[Finding] = []
    files = []
    for path in probe_paths(cfg, cli_paths(args.probes)):
        shown = display_path(cfg.root, path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            problem = "not found" if isinstance(exc, FileNotFoundError) else exc.strerror or str(exc)
            lossy.append(Finding("file-missing", f"probe file {problem}", shown, hint="check `probes:`"))
            continue
        records, found = parse_jsonl(data, shown)
        parsed, semantic, _ = probes_from_records(records, shown, None)
        lossy += [f for f in found + semantic if _lossy(f)]
        probes += parsed
        files.append(f"{shown} ({len(parsed)})")
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
