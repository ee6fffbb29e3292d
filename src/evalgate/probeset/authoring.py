"""Probe-set authoring, pure: CSV/JSONL rows <-> probes, spreadsheet-safe cells, the import plan.

The rules (docs/authoring.md; their origin in docs/design.md): the CSV has a header row and only known
columns (a typo in a column name must not lose its data silently), an import is all or nothing
and names every invalid row, a prompt that repeats another one ignoring case and whitespace is a
"twin", and an export imports back unchanged, which in a spreadsheet needs formula escaping.

CSV format: one column per schema field, in the schema's order; `candidates` holds a JSON list
(`["works", "worked"]`), `deprecated` holds `true`/`false`, an empty cell means the field is
absent. A cell starting with = + - @ ' (or tab/CR, OWASP "CSV injection") is written with one
leading `'`, which import removes again.

Rows are numbered as the user sees them: a JSONL row is its line, a CSV row its spreadsheet row
(the header is row 1). Row findings carry that number as `Finding.line`.
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from evalgate.errors import RefusedError
from evalgate.probeset.grammar import Grammar
from evalgate.probeset.jsonl import BOM_UTF8, parse_jsonl
from evalgate.probeset.manifest import HINT_CHANGED
from evalgate.probeset.records import (
    duplicate_ids,
    expected_category,
    probe_schema,
    probes_from_records,
    twins,
)
from evalgate.schemas import schema
from evalgate.types import CATEGORIES, Finding, Probe

COLUMNS: tuple[str, ...] = tuple(probe_schema()["properties"])
ITEM_COLUMNS: tuple[str, ...] = tuple(schema("item")["properties"])  # a multiple-choice item's
REQUIRED: tuple[str, ...] = tuple(probe_schema()["required"])
KINDS: tuple[str, ...] = tuple(probe_schema()["properties"]["kind"]["enum"])
LIST_COLUMNS = frozenset({"candidates"})
BOOL_COLUMNS = frozenset({"deprecated"})
FORMULA_START = ("=", "+", "-", "@", "'", "\t", "\r")
CSV_EOL = "\r\n"  # RFC 4180, and what spreadsheets write

Row = tuple[int, dict[str, Any]]
HEADER_CHECKS = frozenset({"csv-header", "csv-unknown-column", "csv-duplicate-column", "csv-missing-column"})

HINT_COLUMNS = "use only the probe fields as column names: " + ", ".join(COLUMNS)
HINT_LIST = 'write the candidates as a JSON list in the cell, e.g. ["works", "worked", "will work"]'
HINT_CSV = "save the sheet as 'CSV UTF-8 (comma delimited)' with the header row first"


def escape_cell(text: str) -> str:
    """Prefix one `'` so a spreadsheet shows the text instead of running it as a formula."""
    return "'" + text if text.startswith(FORMULA_START) else text


def unescape_cell(text: str) -> str:
    """Undo `escape_cell`: drop exactly one `'`, and only where export would have put one.

    A hand-written `'hello` keeps its quote; the export of `'hello` is `''hello` and comes back.
    """
    return text[1:] if text.startswith("'") and text[1:].startswith(FORMULA_START) else text


def probe_line(probe: Probe) -> str:
    """A probe's JSONL line: the spelling the probe builder writes (fields in documented order)."""
    return json.dumps(probe.to_record(), ensure_ascii=False)


def export_jsonl(probes: Sequence[Probe]) -> str:
    return "".join(probe_line(p) + "\n" for p in probes)


def _cell(rec: Mapping[str, Any], column: str) -> str:
    if column not in rec:
        return ""
    value = rec[column]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return escape_cell(value)


def export_csv(probes: Sequence[Probe]) -> str:
    """Header + one row per probe; refuses what CSV cannot carry back (an empty-string field).

    Multiple-choice items (docs/suites.md) have their own columns, those of the item schema; their
    `slices` cell is a JSON object, as a list cell is a JSON list."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator=CSV_EOL)
    columns = ITEM_COLUMNS if probes and all(p.is_item for p in probes) else COLUMNS
    writer.writerow(columns)
    for p in probes:
        rec = p.to_record()
        empty = [k for k, v in rec.items() if v == ""]
        if empty:
            raise RefusedError(
                f"{p.file}:{p.line}: probe {p.id}: field '{empty[0]}' is an empty string, which a CSV "
                "cell cannot tell apart from an absent field",
                hint=f"remove the empty '{empty[0]}' from the probe, or export with --format jsonl",
            )
        writer.writerow([_cell(rec, c) for c in columns])
    return buf.getvalue()


def _typed(column: str, text: str) -> tuple[Any, str | None]:
    """(value, problem) of one non-empty, unescaped cell."""
    if column in LIST_COLUMNS:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested past Python's limit
            value = None
        if not isinstance(value, list):
            return None, f"{text[:60]!r} is not a JSON list"
        return value, None
    if column in BOOL_COLUMNS:
        if text.strip().lower() in ("true", "false"):
            return text.strip().lower() == "true", None
        return None, f"{text[:60]!r} is not true or false"
    return text, None


def _header_findings(header: list[str], file: str) -> list[Finding]:
    out: list[Finding] = []
    for i, name in enumerate(header, start=1):
        if not name:
            continue  # an unnamed column may stay only while it is empty (checked per row)
        if name not in COLUMNS:
            close = difflib.get_close_matches(name, COLUMNS, n=1)
            guess = f" (did you mean '{close[0]}'?)" if close else ""
            msg = f"unknown column '{name}' (column {i}){guess}: its data would be lost"
            out.append(Finding("csv-unknown-column", msg, file, 1, None, name, HINT_COLUMNS))
        elif header.index(name) != i - 1:
            msg = f"column '{name}' appears twice (columns {header.index(name) + 1} and {i})"
            out.append(Finding("csv-duplicate-column", msg, file, 1, None, name, "keep one of the two"))
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        names = ", ".join(f"'{n}'" for n in missing)
        msg = f"required column(s) {names} missing: every probe needs them"
        out.append(Finding("csv-missing-column", msg, file, 1, None, missing[0], HINT_COLUMNS))
    return out


def parse_csv(data: bytes, file: str) -> tuple[list[Row], list[Finding]]:
    """CSV bytes -> (row number, record) rows and located findings; never raises on bad input."""
    findings: list[Finding] = []
    if data.startswith(BOM_UTF8):  # Excel's "CSV UTF-8" starts with one; it is not part of the header
        data = data[len(BOM_UTF8) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        msg = f"byte 0x{data[exc.start]:02X} (file offset {exc.start}) is not valid UTF-8"
        return [], [Finding("csv-encoding", msg, file, line, hint=HINT_CSV)]
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    records: list[list[str]] = []
    try:
        for cells in reader:
            records.append(cells)
    except csv.Error as exc:  # an unclosed quote would otherwise swallow the rows after it
        return [], [Finding("csv-syntax", f"not valid CSV: {exc}", file, reader.line_num, hint=HINT_CSV)]
    if not records or not any(c.strip() for c in records[0]):
        return [], [Finding("csv-header", "the first row must be the header", file, 1, hint=HINT_COLUMNS)]
    header = [h.strip() for h in records[0]]
    found = _header_findings(header, file)
    if found:
        return [], found
    rows: list[Row] = []
    for number, cells in enumerate(records[1:], start=2):
        if not any(c.strip() for c in cells):
            continue  # spreadsheets leave empty rows at the end
        pid = cells[header.index("id")] if len(cells) > header.index("id") else None
        pid = unescape_cell(pid) if pid else None

        def bad(check: str, message: str, field: str | None, hint: str, n: int = number, p=pid) -> None:
            findings.append(Finding(check, message, file, n, p, field, hint))

        if len(cells) > len(header):
            extra = [c for c in cells[len(header) :] if c.strip()]
            if extra:
                bad("csv-extra-cells", f"{len(cells)} cells but {len(header)} columns", None, HINT_CSV)
                continue
        rec: dict[str, Any] = {}
        for i, (name, raw) in enumerate(zip(header, cells, strict=False), start=1):
            if not name:
                if raw.strip():
                    bad("csv-unnamed-column", f"column {i} has no name but holds data", None, HINT_COLUMNS)
                continue
            text_value = unescape_cell(raw)
            if text_value == "":
                continue
            value, problem = _typed(name, text_value)
            if problem:
                bad("csv-cell", problem, name, HINT_LIST if name in LIST_COLUMNS else "write true or false")
            else:
                rec[name] = value
        rows.append((number, rec))
    return rows, findings


def parse_import_jsonl(data: bytes, file: str) -> tuple[list[Row], list[Finding]]:
    """JSONL to import: the validator's reader; a BOM, blank lines or an empty file lose nothing."""
    records, found = parse_jsonl(data, file, allow_blank=True, what="probe")
    return records, [f for f in found if f.check not in ("jsonl-bom", "jsonl-empty")]


def default_destinations(files: Sequence[str]) -> dict[tuple[str, str], str]:
    """(category, kind) -> the configured file a new probe goes to.

    The first file of the category (by name, as the validator decides), preferring one whose name
    says the kind ("ordinal.jsonl" for ordinal probes) and otherwise one whose name says no kind:
    an export of a set whose ordinal probes have their own file imports back into the same files.
    """
    out: dict[tuple[str, str], str] = {}
    for category in CATEGORIES:
        mine = [f for f in files if expected_category(f) == category]
        names = {f: PurePosixPath(f.replace("\\", "/")).name.lower() for f in mine}
        plain = [f for f in mine if not any(k in names[f] for k in KINDS)]
        for kind in KINDS:
            named = [f for f in mine if kind in names[f]]
            pick = (named or plain or mine)[:1]
            if pick:
                out[(category, kind)] = pick[0]
    return out


@dataclass(frozen=True)
class ImportPlan:
    """Where each valid row goes, and every problem, each on its row of the import file."""

    additions: dict[str, list[tuple[int, Probe]]]  # destination file -> (row, probe), row order
    problems: list[Finding]  # blocking; twins are here unless they were allowed
    twins: list[Finding]
    rows: int  # data rows read, the ones that could not be parsed included
    skipped: list[int] = dataclasses.field(default_factory=list)  # rows identical to a probe of the set

    @property
    def bad_rows(self) -> list[int]:
        return sorted({f.line for f in self.problems if f.line is not None})


def _on_row(f: Finding, source: str, dest: str) -> Finding:
    message = f.message.replace("this file holds", f"{dest} holds")
    if f.field == "candidates" and "at least 2" in message:
        message += " (a probe with fewer than two candidates could never fail)"
    return dataclasses.replace(f, file=source, message=message)


def plan_import(
    rows: Sequence[Row],
    source: str,
    *,
    existing_ids: Sequence[tuple[str, int, str]],
    existing: Sequence[Probe],
    grammar: Grammar | None,
    destinations: Mapping[tuple[str, str], str],
    into: str | None = None,
    parse_findings: Sequence[Finding] = (),
    allow_twins: bool = False,
    skip_identical: bool = False,
) -> ImportPlan:
    """Check every row with the validator's own functions, against the set it joins.

    `existing_ids` are (file, line, id) of every record of the set, `existing` its probes;
    `destinations` maps (category, kind) to a file (`default_destinations`), `into` overrides it.
    With `skip_identical` (import of a full export), a row equal to the set's probe of that id is
    skipped and counted; one that differs stays a duplicate id, with the lock's instruction.
    """
    problems = list(parse_findings)
    already = {(f.line, f.field) for f in parse_findings}
    new: list[tuple[str, Probe]] = []
    ids: list[tuple[str, int, str]] = []
    by_id = {p.id: p for p in existing}
    skipped: list[int] = []
    changed: set[int] = set()
    for number, rec in rows:
        rid = rec.get("id")
        old = by_id.get(rid) if skip_identical and isinstance(rid, str) else None
        if old is not None:
            # A full export with rows appended: a row that reads as the probe already in the set
            # is the same probe (skipped, counted); a row that differs would edit it.
            parsed, _, _ = probes_from_records([(number, rec)], old.file, grammar)
            if parsed and parsed[0].to_record() == old.to_record():
                skipped.append(number)
                continue
            changed.add(number)
        rec_category, rec_kind = rec.get("category"), rec.get("kind")
        category = rec_category if isinstance(rec_category, str) and rec_category in CATEGORIES else "core"
        kind = rec_kind if isinstance(rec_kind, str) and rec_kind in KINDS else "form"
        dest = into or destinations.get((category, kind))
        if dest is None:
            msg = f"no probe file of the configuration holds {category} probes"
            hint = "name one under `probes:` in evalgate.yml, or choose the file with --into"
            problems.append(Finding("destination", msg, source, number, rec.get("id"), "category", hint))
            dest = category  # a name that holds this category, so the row gets its other checks
        parsed, found, row_ids = probes_from_records([(number, rec)], dest, grammar)
        problems += [_on_row(f, source, dest) for f in found if (f.line, f.field) not in already]
        ids += [(source, line, pid) for line, pid in row_ids]
        new += [(dest, dataclasses.replace(p, file=source)) for p in parsed]
    for f in duplicate_ids([*existing_ids, *ids]):
        if f.file == source and f.line in changed:
            message = f"{f.message}, with other content: importing this row would change that probe"
            problems.append(dataclasses.replace(f, message=message, hint=HINT_CHANGED))
        elif f.file == source:
            problems.append(f)
    twin = [f for f in twins([*existing, *(p for _, p in new)]) if f.file == source]
    if not allow_twins:
        problems += twin
    bad = {f.line for f in problems}
    additions: dict[str, list[tuple[int, Probe]]] = {}
    for dest, p in new:
        if p.line not in bad:
            additions.setdefault(dest, []).append((p.line, p))
    problems.sort(key=lambda f: f.line or 0)
    read = {n for n, _ in rows} | {f.line for f in parse_findings if f.line is not None}
    return ImportPlan(additions, problems, twin, len(read), skipped)


def deprecated_line(line: str, rec: Mapping[str, Any]) -> str:
    """The probe's JSONL line with `"deprecated": true`, every other character kept where we can.

    `line` is the text without its newline (a trailing CR is kept); `rec` is its parsed object.
    """
    body = line.rstrip()
    tail = line[len(body) :]
    want = {**rec, "deprecated": True}
    if "deprecated" not in rec and body.endswith("}"):
        edited = body[:-1].rstrip() + ', "deprecated": true}'
        try:
            if json.loads(edited) == want:
                return edited + tail
        except ValueError:
            pass  # e.g. a byte-order mark before the object: fall back to a fresh spelling
    return json.dumps(want, ensure_ascii=False) + tail


def next_id(old: str, taken: set[str]) -> str:
    """A suggestion for a replacement's id: the old one with its trailing number counted up."""
    match = re.fullmatch(r"(.*?)(\d+)", old)
    stem, n, width = (
        (match.group(1), int(match.group(2)), len(match.group(2))) if match else (old + "-", 1, 3)
    )
    while True:
        n += 1
        candidate = f"{stem}{n:0{width}d}"
        if candidate not in taken:
            return candidate
