"""`evalgate probes import FILE.csv|FILE.jsonl [--into FILE] [--allow-twins] [--bump patch]`.

All or nothing, in two passes, and nothing is written unless both are clean:

1. every row on its own and against the set it joins (probeset/authoring.plan_import: schema,
   semantics, duplicate ids, twins), reported on the rows of the import file;
2. the real validation (`probeset_io.validate`) of the would-be set, read from memory: leaks,
   coverage, the probe lock... Its findings on the added lines are moved back onto their rows.

Then the probe files are written atomically, one by one, and the manifest last, re-sealed as a
new version (`manifest.seal`). A crash between the two leaves a valid set whose files changed
since the seal, which `evalgate probes seal` completes. The edit itself (`read_set`,
`check_change`, `write_and_seal`) is probeset_io.py's, shared with `probes deprecate`.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evalgate.console import Console
from evalgate.errors import EXIT_PASS, EXIT_REFUSED, RefusedError
from evalgate.probeset.authoring import (
    HEADER_CHECKS,
    parse_csv,
    parse_import_jsonl,
    plan_import,
    probe_line,
)
from evalgate.probeset_io import (
    ProbeSet,
    appended,
    check_change,
    editable_config,
    read_edit_input,
    read_set,
    write_and_seal,
)
from evalgate.types import Finding, Probe

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl"}


def _into(probe_set: ProbeSet, into: str | None) -> str | None:
    if into is None:
        return None
    target = probe_set.file_of(Path(into).absolute())
    if target is None:
        names = ", ".join(f.display for f in probe_set.files)
        raise RefusedError(
            f"--into {into}: not a probe file of the configuration ({names})",
            hint="add it under `probes:` in evalgate.yml first, or choose one of those files",
        )
    return target.display


def span(numbers: Sequence[int]) -> str:
    """ "3", "3-7" for a run, else "3, 5, 9"."""
    if len(numbers) > 1 and list(numbers) == list(range(numbers[0], numbers[-1] + 1)):
        return f"{numbers[0]}-{numbers[-1]}"
    return ", ".join(map(str, numbers))


@dataclass(frozen=True)
class Staged:
    """The would-be bytes of each touched probe file, and where each added line came from."""

    contents: dict[Path, bytes]
    origin: dict[tuple[str, int], tuple[str, int]]  # (probe file, line) -> (import file, row)
    first_line: dict[str, int]  # probe file -> line of its first added probe


def stage(probe_set: ProbeSet, additions: Mapping[str, Sequence[tuple[int, Probe]]], source: str) -> Staged:
    staged = Staged({}, {}, {})
    for dest, added in additions.items():
        target = next(f for f in probe_set.files if f.display == dest)
        data, first = appended(target.data, [probe_line(p) for _, p in added])
        staged.contents[target.path] = data
        staged.first_line[dest] = first
        staged.origin.update({(dest, first + i): (source, row) for i, (row, _) in enumerate(added)})
    return staged


def _n(numbers: Sequence[int], word: str) -> str:
    return f"{word}{'s' if len(numbers) > 1 else ''} {span(numbers)}"


def _refusal(source: str, fmt: str, rows: int, problems: list[Finding], on_set: list[Finding]) -> str:
    lead = "evalgate probes import: refused; nothing was added (the probe files are unchanged)"
    if any(f.check in HEADER_CHECKS for f in problems):
        return lead + f"\nthe header row of {source} is invalid, so no row was read"
    bad = sorted({f.line for f in problems if f.file == source and f.line is not None})
    if bad:
        numbering = "the header is row 1" if fmt == "csv" else "a row is a line"
        lead += f"\n{len(bad)} of {rows} row(s) of {source} are invalid: {_n(bad, 'row')} ({numbering})"
    if on_set:
        lead += (
            f"\nwith these rows the probe set has {len(on_set)} other problem(s) (see `evalgate validate`)"
        )
    return lead


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = editable_config(args.config)
    fmt = FORMATS.get(Path(args.file).suffix.lower())
    if fmt is None:
        raise RefusedError(
            f"{args.file}: cannot tell the format from the file name",
            hint="name it .csv (a spreadsheet saved as CSV UTF-8) or .jsonl (one JSON probe per line)",
        )
    data = read_edit_input(args.file)
    rows, parse_findings = (parse_csv if fmt == "csv" else parse_import_jsonl)(data, args.file)
    probe_set = read_set(cfg)
    plan = plan_import(
        rows,
        args.file,
        existing_ids=probe_set.ids,
        existing=probe_set.probes,
        grammar=probe_set.grammar,
        destinations=probe_set.destinations(),
        into=_into(probe_set, args.into),
        parse_findings=parse_findings,
        allow_twins=args.allow_twins,
        skip_identical=True,
    )
    if not rows and not plan.problems:
        print(f"evalgate: {args.file} holds no probes; nothing changed")
        return EXIT_PASS
    same = (
        f"skipped {len(plan.skipped)} row(s) identical to probes already in the set" if plan.skipped else ""
    )
    if not plan.additions and not plan.problems and plan.skipped:
        print(f"evalgate: {same}; {args.file} holds nothing new, nothing changed")
        return EXIT_PASS
    staged = stage(probe_set, plan.additions, args.file)
    # Pass 2 also runs when some rows failed pass 1, so one refusal names every bad row.
    checked = check_change(cfg, staged.contents, staged.origin) if staged.contents else None
    problems = sorted(plan.problems + (checked.on_rows if checked else []), key=lambda f: f.line or 0)
    on_set = checked.on_set if checked else []
    twins = plan.twins if args.allow_twins else []
    if problems or on_set or checked is None:
        console.refusal(_refusal(args.file, fmt, plan.rows, problems, on_set), problems + on_set, twins)
        return EXIT_REFUSED
    sealed = write_and_seal(cfg, staged.contents, checked.outcome, args.bump or "patch")
    n = sum(len(a) for a in plan.additions.values())
    print(f"evalgate: imported {n} probe(s) from {args.file}:")
    if same:
        print(f"  {same}")
    for dest, added in plan.additions.items():
        lines = range(staged.first_line[dest], staged.first_line[dest] + len(added))
        print(f"  {len(added)} into {dest} ({_n(lines, 'line')}; from {_n([r for r, _ in added], 'row')})")
    if twins:
        print(f"  accepted with --allow-twins: {len(twins)} twin(s)")
        print("\n".join(f"    {args.file}:{w.line}: {w.probe_id}: {w.message}" for w in twins))
    print(f"evalgate: {sealed}")
    print("next: commit the probe files and the manifest together (`evalgate validate` exits 0)")
    return EXIT_PASS
