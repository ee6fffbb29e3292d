"""One probe file, from its bytes to its probes and located findings.

JSONL first (probeset/jsonl.py), then the schema and semantic rules of every record
(probeset/records.py). What the rest of validation needs to know about the file comes out with
it: the ids it holds (for duplicates and deletions), whether every record could be read (an id
that cannot be read could be a deleted probe's), and the records the schema refused whose prompt
and expected the leak detectors still read (probeset/leaks.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evalgate.probeset.grammar import Grammar
from evalgate.probeset.jsonl import parse_jsonl
from evalgate.probeset.leaks import leak_stand_ins
from evalgate.probeset.records import probes_from_records
from evalgate.types import Finding, Probe


@dataclass(frozen=True)
class ProbeFileRead:
    probes: list[Probe]
    findings: list[Finding]  # JSONL and record findings, in line order
    ids: list[tuple[str, int, str]]  # (file, line, id) of every record whose id could be read
    stand_ins: list[Probe]  # schema-invalid records the leak detectors still read
    parsed: bool  # every line is a record and every record's id could be read
    unreadable: int  # records (or lines) that yielded no probe


# What turns a file's parsed records into probes: (probes, semantic findings, (line, id) of every
# record whose id could be read). Verb-form probes and a suite's items differ only in this step.
RecordsToProbes = Callable[
    [list[tuple[int, dict[str, Any]]], str], tuple[list[Probe], list[Finding], list[tuple[int, str]]]
]


def read_records(data: bytes, shown: str, to_probes: RecordsToProbes) -> ProbeFileRead:
    """A JSONL file of probe-like records, read with `to_probes` (verb forms, or items)."""
    records, found = parse_jsonl(data, shown)
    parsed, semantic, file_ids = to_probes(records, shown)
    # a byte-order mark is reported, and every line still read; a record without a readable id hides one
    every = all(f.check == "jsonl-bom" for f in found) and len(file_ids) == len(records)
    unreadable = len({f.line for f in found if f.check != "jsonl-bom"}) + len(records) - len(parsed)
    return ProbeFileRead(
        probes=parsed,
        findings=sorted(found + semantic, key=lambda f: f.line or 0),
        ids=[(shown, line, pid) for line, pid in file_ids],
        stand_ins=leak_stand_ins(records, parsed, shown),
        parsed=every,
        unreadable=unreadable,
    )


def read_probe_file(data: bytes, shown: str, grammar: Grammar | None) -> ProbeFileRead:
    return read_records(data, shown, lambda records, file: probes_from_records(records, file, grammar))
