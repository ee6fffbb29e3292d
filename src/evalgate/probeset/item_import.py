"""Pass 1 of an import into a multiple-choice suite, pure: the import file's rows as items, every
problem on its row (docs/suites.md, docs/authoring.md).

The rows are items already (a JSONL file in the item format) or the records
probeset/import_map.convert made of a benchmark's export. Each one is checked on its own with the
validator's own functions (probeset/items.py: the item schema, the text rules, the suite's
dimensions), then against the set it joins: ids are unique within the file, within the suite and
across every suite of the configuration. A row equal to the item of that id already in the suite
is skipped and counted (importing the same export twice adds nothing); one that differs would edit
a locked item and is refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalgate.probeset.items import items_from_records
from evalgate.probeset.normalize import normalize
from evalgate.probeset.records import HINTS, duplicate_ids, twins
from evalgate.types import Finding, Probe

HINT_CHANGED = (
    "an item's content is locked under its id: give the row a new id (or deprecate the old item with "
    "`evalgate probes deprecate ID`), or leave the row out"
)

HINT_NAMED = (
    "give the rows ids of their own (a column mapped with --map COLUMN=id): rows without one are "
    "named SUITE-FILE-ROWNUMBER, so two files of the same name collide"
)


@dataclass(frozen=True)
class ItemPlan:
    """What an import would add: the new items with their rows, the rows skipped, the problems."""

    additions: list[tuple[int, Probe]]  # (row of the import file, item), in row order
    skipped: list[int]  # rows identical to an item of the suite
    problems: list[Finding]  # on the rows of the import file
    rows: int  # rows read (the bad ones included)
    # rows whose item repeats another's prompt and candidates (records.twins): refused unless
    # allowed, and listed either way (docs/authoring.md)
    twins: list[Finding] = dataclasses.field(default_factory=list)


def paired_rows(
    rows: Sequence[tuple[int, Any]], records: Sequence[dict[str, Any]], findings: Sequence[Finding]
) -> list[tuple[int, dict[str, Any]]]:
    """(row, record) for the records import_map.convert made: it makes one for each row without a
    finding of its own, in row order."""
    bad = {f.line for f in findings if f.line is not None}
    good = [line for line, _ in rows if line not in bad]
    if len(good) != len(records):  # a bug of the caller: findings from another pass were mixed in
        raise ValueError(f"{len(records)} records for {len(good)} rows without a finding")
    return list(zip(good, records, strict=True))


def plan_items(
    records: Sequence[tuple[int, dict[str, Any]]],
    source: str,
    *,
    dims: Mapping[str, Sequence[str] | None],
    suite: str | None,
    existing: Sequence[Probe],
    existing_ids: Sequence[tuple[str, int, str]],
    other_ids: Sequence[tuple[str, int, str, str]] = (),
    read_findings: Sequence[Finding] = (),
    rows: int | None = None,
    named: Collection[int] = (),
    allow_twins: bool = False,
) -> ItemPlan:
    """Check every record as an item of the suite, against the set it joins.

    `existing` are the suite's items and `existing_ids` (file, line, id) of every record of its
    files; `other_ids` (file, line, id, suite) of every other suite's records; `read_findings` the
    problems found reading or mapping the rows (kept, and their rows give no item); `rows` how many
    rows were read (default: the records and the rows with a finding); `named` the rows whose id
    the import made from their row number (import_map.convert), which another import may have used.
    A row that is a twin of an item (records.twins) is refused unless `allow_twins`.
    """
    problems = list(read_findings)
    by_id = {normalize(p.id): p for p in existing}
    skipped: list[int] = []
    changed: set[int] = set()
    fresh: list[tuple[int, dict[str, Any]]] = []
    for line, rec in records:
        rid = rec.get("id")
        old = by_id.get(normalize(rid)) if isinstance(rid, str) else None
        if old is not None:
            same, _, _ = items_from_records([(line, rec)], old.file, dims, suite)
            if same and same[0].to_record() == old.to_record():
                skipped.append(line)
                continue
            changed.add(line)
        fresh.append((line, rec))
    items, found, ids = items_from_records(fresh, source, dims, suite)
    problems += found
    for f in duplicate_ids([*existing_ids, *((source, line, pid) for line, pid in ids)]):
        if f.file != source:
            continue  # the set's own duplicates are the validator's to report
        if f.line in changed and f.line in named:
            message = (
                f"{f.message}, with other content: this row has no id of its own and was named after "
                "its row number, like a row of an earlier import"
            )
            problems.append(dataclasses.replace(f, message=message, hint=HINT_NAMED))
        elif f.line in changed:
            message = f"{f.message}, with other content: importing this row would change that item"
            problems.append(dataclasses.replace(f, message=message, hint=HINT_CHANGED))
        else:
            problems.append(f)
    others = {normalize(pid): (file, line, name) for file, line, pid, name in other_ids}
    for line, pid in ids:
        if (hit := others.get(normalize(pid))) is not None:
            file, at, name = hit
            problems.append(
                Finding(
                    "duplicate-id",
                    f"id '{pid}' is already used at {file}:{at} (suite {name}): ids are unique across "
                    "every suite",
                    source,
                    line,
                    pid,
                    "id",
                    HINTS["duplicate-id"],
                    evidence={"first": f"{file}:{at}", "again": f"{source}:{line}"},
                )
            )
    twin = [f for f in twins([*existing, *items]) if f.file == source]
    if not allow_twins:
        problems += twin
    bad = {f.line for f in problems}
    additions = [(p.line, dataclasses.replace(p, file="", line=0)) for p in items if p.line not in bad]
    problems.sort(key=lambda f: f.line or 0)
    read = {n for n, _ in records} | {f.line for f in read_findings if f.line is not None}
    return ItemPlan(additions, skipped, problems, rows if rows is not None else len(read), twin)


__all__ = ["HINT_CHANGED", "HINT_NAMED", "ItemPlan", "paired_rows", "plan_items"]
