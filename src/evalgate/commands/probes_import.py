"""`evalgate probes import FILE.csv|FILE.jsonl [--into FILE] [--allow-twins] [--bump patch]`.

All or nothing, in two passes, and nothing is written unless both are clean:

1. every row on its own and against the set it joins (core/authoring.plan_import: schema,
   semantics, duplicate ids, twins), reported on the rows of the import file;
2. the real validation (`validation.validate`) of the would-be set, read from memory: leaks,
   coverage, the probe lock... Its findings on the added lines are moved back onto their rows.

Then the probe files are written atomically, one by one, and the manifest last, re-sealed as a
new version (`manifest.seal`). A crash between the two leaves a valid set whose files changed
since the seal, which `evalgate probes seal` completes. `probes deprecate` shares this edge.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from evalgate import safe_yaml
from evalgate.commands.probes_seal import sealed_manifest
from evalgate.config import GateConfig, load_config
from evalgate.console import Console
from evalgate.edges.files import atomic_write_bytes, atomic_write_json, dump_json
from evalgate.edges.journal import commit, recover_set
from evalgate.errors import EXIT_PASS, EXIT_REFUSED, EvalgateError, RefusedError
from evalgate.probeset.authoring import (
    HEADER_CHECKS,
    default_destinations,
    parse_csv,
    parse_import_jsonl,
    plan_import,
    probe_line,
)
from evalgate.probeset.grammar import Grammar, grammar_from_dict
from evalgate.probeset.jsonl import Record, parse_jsonl
from evalgate.probeset.manifest import SEALABLE_CHECKS
from evalgate.probeset.records import probes_from_records
from evalgate.probeset_io import (
    ValidationOutcome,
    display_path,
    probe_paths,
    validate,
)
from evalgate.types import Finding, Probe

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl"}


@dataclass(frozen=True)
class SetFile:
    """One probe file of the configuration as it is on disk now (`data` None: not there yet)."""

    path: Path
    display: str
    data: bytes | None
    records: list[Record]


@dataclass(frozen=True)
class ProbeSet:
    files: list[SetFile]
    ids: list[tuple[str, int, str]]  # (file, line, id) of every record, in file order
    probes: list[Probe]
    grammar: Grammar | None

    def file_of(self, path: Path) -> SetFile | None:
        return next((f for f in self.files if f.path.resolve() == path.resolve()), None)

    def destinations(self) -> dict[tuple[str, str], str]:
        return default_destinations([f.display for f in self.files])


def _grammar(cfg: GateConfig) -> Grammar | None:
    # A missing or broken table is the validator's to report (pass 2); the rows skip verb checks.
    try:
        data = safe_yaml.load(cfg.path(cfg.grammar).read_text(encoding="utf-8"))
        return grammar_from_dict(data, cfg.grammar)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, EvalgateError, RecursionError):
        return None


def editable_config(path: str | None) -> GateConfig:
    """The configuration of the set to change; never the bundled demo the embedded default falls back to."""
    cfg = load_config(path)
    if path is None and cfg.source == "embedded default" and cfg.root.resolve() != Path.cwd().resolve():
        raise RefusedError(
            f"no evalgate.yml here, and the embedded default reads the bundled demo set in {cfg.root}, "
            "which this command does not change",
            hint="run it in your repository (beside its evalgate.yml), or name one with --config",
        )
    return cfg


def read_set(cfg: GateConfig) -> ProbeSet:
    recover_set(cfg)  # a change a killed run left half-done: finished or dropped first
    grammar = _grammar(cfg)
    files, ids, probes = [], [], []
    for path in probe_paths(cfg, None):
        shown = display_path(cfg.root, path)
        try:
            data = path.read_bytes() if path.is_file() else None
        except OSError as exc:
            raise RefusedError(f"{shown}: cannot read the probe file: {exc.strerror or exc}") from None
        records = parse_jsonl(data, shown)[0] if data and data.strip() else []
        parsed, _, file_ids = probes_from_records(records, shown, grammar)
        files.append(SetFile(path, shown, data, records))
        ids += [(shown, line, pid) for line, pid in file_ids]
        probes += parsed
    return ProbeSet(files, ids, probes, grammar)


def appended(data: bytes | None, lines: Sequence[str]) -> tuple[bytes, int]:
    """The file with `lines` added at its end, and the line number of the first one."""
    data = data if data and data.strip() else b""
    eol = b"\r\n" if b"\r\n" in data else b"\n"
    if data and not data.endswith(b"\n"):
        data += eol
    return data + b"".join(line.encode("utf-8") + eol for line in lines), data.count(b"\n") + 1


@dataclass(frozen=True)
class Checked:
    outcome: ValidationOutcome
    on_rows: list[Finding]  # blocking findings on added lines, moved onto their rows
    on_set: list[Finding]  # blocking findings of the set as a whole


def check_change(
    cfg: GateConfig, contents: Mapping[Path, bytes], origin: Mapping[tuple[str, int], tuple[str, int]]
) -> Checked:
    """Validate the would-be set; `origin` maps (probe file, line) of an added line to (source, row)."""
    outcome = validate(cfg, contents=contents)
    # The same as `probes seal` refuses: everything but "the files changed since the last seal".
    blocking = [f for f in outcome.findings if f.check not in SEALABLE_CHECKS]
    blocking += [w for w in outcome.warnings if w.check == "manifest-partial"]
    on_rows, on_set = [], []
    for f in blocking:
        where = origin.get((f.file or "", f.line or 0))
        if where is None:
            on_set.append(f)
        else:
            on_rows.append(dataclasses.replace(f, file=where[0], line=where[1]))
    return Checked(outcome, on_rows, on_set)


def write_and_seal(
    cfg: GateConfig, contents: Mapping[Path, bytes], outcome: ValidationOutcome, bump: str
) -> str:
    """Write the files atomically, the manifest last; say what the seal did."""
    path, previous, new = sealed_manifest(cfg, outcome, None, bump)
    shown = display_path(cfg.root, path)
    written: list[str] = []
    folder = path.parent
    try:
        if all(Path(t).parent.resolve() == folder.resolve() for t in contents):
            # The probe files and the manifest change together or not at all (edges/journal.py).
            commit(folder, {**contents, path: dump_json(new).encode("utf-8")})
        else:  # probe files outside the manifest's folder: one file at a time, manifest last
            for target, data in contents.items():
                atomic_write_bytes(target, data)
                written.append(display_path(cfg.root, target))
            atomic_write_json(path, new)
    except OSError as exc:
        done = f"; already written: {', '.join(written)}" if written else "; nothing was changed"
        raise RefusedError(
            f"cannot write {exc.filename or 'a probe file'}: {exc.strerror or exc}{done}",
            hint="make the files writable; after a partial write, `evalgate probes seal` finishes the job",
        ) from None
    if previous is None:
        change = f"version {new['version']} (first seal)"
    else:
        change = f"version {previous['version']} -> {new['version']} ({bump})"
    return f"sealed {shown}: {change}; {new['n_probes']} probes, {len(new['lock'])} ids locked"


def read_input(name: str) -> bytes:
    try:
        return Path(name).read_bytes()
    except FileNotFoundError:
        raise RefusedError(
            f"{name}: file not found", hint="check the path (relative to where you run)"
        ) from None
    except OSError as exc:
        raise RefusedError(f"{name}: cannot read it: {exc.strerror or exc}") from None


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
    data = read_input(args.file)
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
