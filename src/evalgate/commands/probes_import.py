"""`evalgate probes import FILE [--suite NAME] [--from mmlu|arc|hellaswag] [--map MAPPING] [--into FILE]
[--allow-twins] [--bump patch]`.

All or nothing, in two passes, and nothing is written unless both are clean:

1. every row on its own and against the set it joins (probeset/authoring.plan_import for verb-form
   probes; probeset/item_import.plan_items for a multiple-choice suite's items: schema, semantics,
   duplicate ids across every suite, twins), reported on the rows of the import file;
2. the real validation (`probeset_io.validate`) of the would-be set, read from memory: leaks,
   coverage, the probe lock... Its findings on the added lines are moved back onto their rows.

Then the probe files are written atomically, one by one, and the manifest last, re-sealed as a
new version (`manifest.seal`). A crash between the two leaves a valid set whose files changed
since the seal, which `evalgate probes seal` completes. The edit itself (`read_set`,
`check_change`, `write_and_seal`, `import_items`) is probeset_io.py's, shared with `probes
deprecate` and `init`.

With `suites:` in evalgate.yml (docs/suites.md) the rows go to one suite (`--suite`, or the only
one): a verb-forms suite takes probes as above, a multiple-choice suite takes items, or a
benchmark's export with `--from`/`--map` (probeset/import_map.py).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from evalgate.config import GateConfig, SuiteConfig
from evalgate.console import Console
from evalgate.errors import EXIT_PASS, EXIT_REFUSED, RefusedError
from evalgate.probeset.authoring import (
    HEADER_CHECKS,
    parse_csv,
    parse_import_jsonl,
    plan_import,
)
from evalgate.probeset_io import (
    ItemImport,
    ProbeSet,
    check_change,
    editable_config,
    import_items,
    import_mapping,
    other_suite_ids,
    read_edit_input,
    read_set,
    stage,
    write_and_seal,
)
from evalgate.types import Finding

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
    mapped = args.from_ is not None or args.map is not None
    if args.suite is None and not cfg.suites:
        if mapped:
            raise RefusedError(
                f"--{'from' if args.from_ else 'map'}: maps a benchmark's rows to multiple-choice items, "
                "and the configuration declares no multiple-choice suite",
                hint="declare one under `suites:` in evalgate.yml (docs/suites.md) and name it with "
                "--suite, or start one with `evalgate init --suite NAME --items FILE`",
            )
        return _import_probes(args, console, cfg)
    suite = _suite(cfg, args.suite)
    view = cfg.for_suite(suite)
    if not view.is_items:
        if mapped:
            raise RefusedError(
                f"--{'from' if args.from_ else 'map'}: suite {suite.name} is a {suite.kind} suite; "
                "--from and --map make multiple-choice items",
                hint="name a multiple-choice suite with --suite (suites: "
                + ", ".join(f"{s.name} ({s.kind})" for s in cfg.suites)
                + ")",
            )
        return _import_probes(args, console, view)
    return _import_items(args, console, view)


def _suite(cfg: GateConfig, name: str | None) -> SuiteConfig:
    if name is not None:
        return cfg.suite_named(name)
    if len(cfg.suites) == 1:
        return cfg.suites[0]
    raise RefusedError(
        "evalgate.yml declares several suites: say which one the rows go to",
        hint="--suite NAME (suites: " + ", ".join(s.name for s in cfg.suites) + ")",
    )


def _item_refusal(source: str, imported: ItemImport) -> str:
    lead = "evalgate probes import: refused; nothing was added (the probe files are unchanged)"
    problems = imported.problems
    bad = imported.bad_rows
    if bad:
        lead += f"\n{len(bad)} of {imported.plan.rows} row(s) of {source} are invalid: {_n(bad, 'row')}"
    if any(f.file == source and f.line is None for f in problems):
        lead += f"\nthe mapping of {source}'s columns does not fit the suite (see below)"
    if imported.on_set:
        n = len(imported.on_set)
        lead += f"\nwith these rows the suite has {n} other problem(s) (see `evalgate validate`)"
    return lead


def _import_items(args: argparse.Namespace, console: Console, view: GateConfig) -> int:
    """Items (or a benchmark's rows, with --from/--map) into a multiple-choice suite (docs/suites.md)."""
    suite = view.suite
    assert suite is not None
    mapping = import_mapping(args.from_, args.map)
    data = read_edit_input(args.file)
    into = _into(read_set(view), args.into)
    imported = import_items(view, args.file, data, mapping, into, allow_twins=args.allow_twins)
    plan = imported.plan
    if not plan.rows and not imported.problems:
        print(f"evalgate: {args.file} holds no rows; nothing changed")
        return EXIT_PASS
    same = ""
    if plan.skipped:
        same = f"skipped {len(plan.skipped)} row(s) identical to items already in the suite"
    if not plan.additions and not imported.problems:
        print(f"evalgate: {same}; {args.file} holds nothing new, nothing changed")
        return EXIT_PASS
    checked = imported.checked
    if imported.problems or imported.on_set or checked is None:
        console.refusal(_item_refusal(args.file, imported), imported.problems + imported.on_set)
        return EXIT_REFUSED
    sealed = write_and_seal(view, imported.staged.contents, checked.outcome, args.bump or "patch")
    n = len(plan.additions)
    first = imported.staged.first_line[imported.dest]
    print(f"evalgate: imported {n} item(s) from {args.file} into suite {suite.name}:")
    if same:
        print(f"  {same}")
    lines = range(first, first + n)
    rows = [r for r, _ in plan.additions]
    print(f"  {n} into {imported.dest} ({_n(lines, 'line')}; from {_n(rows, 'row')})")
    if plan.twins:
        print(f"  accepted with --allow-twins: {len(plan.twins)} twin(s)")
        print("\n".join(f"    {args.file}:{w.line}: {w.probe_id}: {w.message}" for w in plan.twins))
    print(f"evalgate: {sealed}")
    print("next: commit the probe file and the manifest together (`evalgate validate` exits 0)")
    return EXIT_PASS


def _import_probes(args: argparse.Namespace, console: Console, cfg: GateConfig) -> int:
    """Verb-form probes (CSV or JSONL rows) into the set `cfg` reads: the whole set, or one suite's."""
    fmt = FORMATS.get(Path(args.file).suffix.lower())
    if fmt is None:
        raise RefusedError(
            f"{args.file}: cannot tell the format from the file name",
            hint="name it .csv (a spreadsheet saved as CSV UTF-8) or .jsonl (one JSON probe per line)",
        )
    data = read_edit_input(args.file)
    rows, parse_findings = (parse_csv if fmt == "csv" else parse_import_jsonl)(data, args.file)
    probe_set = read_set(cfg)
    others = [(f, n, pid) for f, n, pid, _ in other_suite_ids(cfg)]  # ids are unique across suites
    plan = plan_import(
        rows,
        args.file,
        existing_ids=[*probe_set.ids, *others],
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
