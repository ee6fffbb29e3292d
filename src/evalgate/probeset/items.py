"""A multiple-choice suite's item file, from its bytes to its items and located findings (docs/suites.md).

The generic counterpart of probeset/probe_file.py + records.py: the same JSONL reader, the same
schema reporting (one finding per field, every record checked completely) and the same text rules
(NFC, no invisible or control characters, distinct candidates, look-alike letters), against the
item schema instead of the verb-form one. What the verb-form rules read from the grammar table, an
item reads from its suite: the dimensions it must carry under `slices`, and their allowed values.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evalgate.probeset.field_text import (
    glued_word,
    reveal,
    short,
    space_before_blank,
)
from evalgate.probeset.probe_file import ProbeFileRead, read_records
from evalgate.probeset.records import (
    record_id,
    schema_findings,
    text_findings,
)
from evalgate.probeset.scale import KIND as ORDINAL
from evalgate.probeset.scripts import confusables, script, skeleton
from evalgate.types import BLANK, Finding, Probe

_BLANK_RUN = re.compile(r"_{3,}")

HINTS = {
    "expected-not-candidate": "make `expected` one of the `candidates` (an item that cannot be right "
    "could never fail)",
    "blank": "write a question without a blank, or a cloze with exactly one ___ where the answer goes",
    "slices": "give the item one value for each dimension the suite declares under `slices:` in "
    "evalgate.yml, and no other, written in one script (no look-alike letters)",
    "text-form": "write the text as a reader sees it: composed accents (NFC), no invisible characters; each "
    "candidate without surrounding spaces (the scorer adds the space before it), each one different",
    "ordinal-scale": 'list the scale points low to high: numbers in strictly increasing order ("1".."5"), '
    "or ordered labels (docs/ordinal.md)",
}


# What reads as a blank but is not three ASCII underscores: runs of the underscore family
# (full-width ＿, double low line ‗, low macron ˍ, the one-eighth block ▁, dashed and wavy low
# lines ﹍ ﹏), mixed with ASCII ones or not, and a free-standing pair `__` (a pair inside a
# word, `__init__`, is code). Without this, such a cloze would be scored as a question
# (docs/suites.md, "Kind `multiple-choice`").
_UNDERSCORE_LIKE = "_\uff3f\u2017\u02cd\u2581\ufe4d\ufe4e\ufe4f\u0332"
_UNDERSCORE_RUN = re.compile(f"[{_UNDERSCORE_LIKE}]+")


def _lookalike_blank(prompt: str) -> str | None:
    """The first run in `prompt` that a reader takes for a blank and is not `___`, or None."""
    for m in _UNDERSCORE_RUN.finditer(prompt):
        run = m.group()
        if run.isascii() and (len(run) != 2 or _glued(prompt, m.start(), m.end())):
            continue  # ___ and longer runs are the blank rules'; `__init__` is code
        if not run.isascii() and len(run) == 1 and _glued(prompt, m.start(), m.end()):
            continue  # one ▁ against a word: a tokenizer's word mark, not a blank
        return run
    return None


def _glued(text: str, start: int, end: int) -> bool:
    return (start > 0 and text[start - 1].isalnum()) or (end < len(text) and text[end].isalnum())


def _blank_problem(prompt: str) -> str | None:
    """None for a question (no blank) or a well-formed cloze (one ___, spaced like a word, with
    words around it)."""
    if (odd := _lookalike_blank(prompt)) is not None:
        named = ", ".join(f"U+{ord(ch):04X} {unicodedata.name(ch, '?')}" for ch in dict.fromkeys(odd))
        return (
            f"the prompt holds {odd!r} ({named}), which reads as a blank but is not one: a cloze's "
            f"blank is exactly three ASCII underscores {BLANK}, and a question has none"
        )
    runs = _BLANK_RUN.findall(prompt)
    if not runs:
        return None
    if not any(ch.isalnum() for ch in prompt.replace(BLANK, "")):
        return "the cloze has no words around its blank: there is no sentence for the answer to complete"
    if len(runs) > 1:
        return f"the prompt has {len(runs)} blanks; a cloze has exactly one {BLANK}"
    if runs[0] != BLANK:
        return f"the blank is written with {len(runs[0])} underscores; write exactly three ({BLANK})"
    before = space_before_blank(prompt)
    if before not in (None, "", " "):
        return f"the blank has {reveal(before)} before it; write one plain space"
    glued = glued_word(prompt)
    if glued:
        return f"the blank is glued to a word ({glued!r}); leave a space or punctuation on both sides"
    return None


def _slice_problems(value: Any, dims: Mapping[str, Sequence[str] | None]) -> list[tuple[str, str]]:
    """(field, message) for every declared dimension missing or off its list, and every undeclared one."""
    if not isinstance(value, dict):
        return []
    out = []
    declared = ", ".join(dims) or "(none)"
    for dim, allowed in dims.items():
        if dim not in value:
            out.append((f"slices.{dim}", f"missing the suite's dimension '{dim}' (declared: {declared})"))
        elif allowed and isinstance(value[dim], str) and value[dim] not in allowed:
            out.append(
                (
                    f"slices.{dim}",
                    f"{short(value[dim])} is not one of the values the suite declares for "
                    f"'{dim}' ({', '.join(allowed)})",
                )
            )
    for dim in value:
        if dim not in dims:
            out.append((f"slices.{dim}", f"'{dim}' is not a dimension of this suite (declared: {declared})"))
        elif isinstance(value[dim], str) and (found := slice_lookalikes(value[dim])):
            out.append((f"slices.{dim}", f"{short(value[dim])} holds {'; '.join(found)}"))
    return out


def slice_lookalikes(value: str) -> list[str]:
    """What makes a slice value read like another: full-width or other compatibility forms
    (mathematical bold letters, ligatures: the value changes under NFKC), and letters of more
    than one script (`nеtworking` with a Cyrillic e, `geօ` with an Armenian o). Either would make
    a second slice that looks the same as the first in every table (docs/items.md). A value
    written wholly in one script, Greek or Cyrillic included, is a real name."""
    found = confusables(value)
    if unicodedata.normalize("NFKC", value) != value and not any("full-width" in f for f in found):
        shown = unicodedata.normalize("NFKC", value)
        found.append(f"compatibility forms (it reads as {shown!r} once normalised, NFKC)")
    scripts = sorted({script(ch) for ch in value if ch.isalpha()})
    if len(scripts) > 1 and not found:
        found.append(f"letters of several scripts ({', '.join(s.lower() for s in scripts)})")
    return found


def confusable_slice_values(items: Sequence[Probe]) -> list[Finding]:
    """One finding per item whose slice value reads the same as another value of its dimension
    (`easy` and the Cyrillic `еаѕу`, each wholly in one script): the two would be two rows that
    look identical in every table (probeset/scripts.py, docs/items.md). The first value met is
    kept; each item with another spelling is named."""
    first: dict[tuple[str, str], tuple[str, Probe]] = {}
    out = []
    for p in items:
        for dim, value in p.dims:
            seen, q = first.setdefault((dim, skeleton(value)), (value, p))
            if seen != value:
                out.append(
                    Finding(
                        "slices",
                        f"{short(value)} reads the same as {short(seen)} (the value of {q.id} at "
                        f"{q.file}:{q.line}) but is another string: look-alike letters of another "
                        f"script (or case) make a second '{dim}' row that reads like the first",
                        p.file,
                        p.line,
                        p.id,
                        f"slices.{dim}",
                        HINTS["slices"],
                    )
                )
    return out


def item_findings(
    rec: dict[str, Any], file: str, line: int, dims: Mapping[str, Sequence[str] | None], bad: set[str]
) -> list[Finding]:
    """The rules beyond the schema, each run when the fields it reads can be read."""
    pid = record_id(rec)
    out = text_findings(rec, file, line, bad, HINTS, _blank_problem)
    if "slices" not in bad:
        for field, message in _slice_problems(rec.get("slices"), dims):
            out.append(Finding("slices", message, file, line, pid, field, HINTS["slices"]))
    return out


def items_from_records(
    records: Iterable[tuple[int, dict[str, Any]]],
    file: str,
    dims: Mapping[str, Sequence[str] | None],
    suite: str | None,
) -> tuple[list[Probe], list[Finding], list[tuple[int, str]]]:
    """The valid items of one file, every finding, and (line, id) of every record with an id."""
    items: list[Probe] = []
    findings: list[Finding] = []
    ids: list[tuple[int, str]] = []
    for line, rec in records:
        if isinstance(rec.get("id"), str):
            ids.append((line, rec["id"]))
        found, bad = schema_findings(rec, file, line, of="item")
        findings.extend(found)
        semantic = [] if rec.get("deprecated") is True else item_findings(rec, file, line, dims, bad)
        findings.extend(semantic)
        # an item off the suite's dimensions could not be sliced: it is refused like a schema error
        if not found and not any(f.check == "slices" for f in semantic):
            items.append(Probe.from_item(rec, file=file, line=line, suite=suite))
    return items, findings, ids


def read_item_file(
    data: bytes, shown: str, dims: Mapping[str, Sequence[str] | None], suite: str | None
) -> ProbeFileRead:
    """probeset/probe_file.read_probe_file for a multiple-choice suite's file."""
    return read_records(data, shown, lambda records, file: items_from_records(records, file, dims, suite))


def item_coverage(
    items: Sequence[Probe],
    dims: Mapping[str, Sequence[str] | None],
    minimum: int,
    excluded: Iterable[str] = (),
) -> dict[str, Any]:
    """{"slices.<dim>": {value: {"n", "min"}}}: live items per declared slice value.

    Declared values with no item show up with n = 0, so a value the suite promises cannot go
    missing unseen; report/coverage_table.py renders these rows next to the verb-form ones.
    """
    out: dict[str, Any] = {}
    skip = set(excluded)
    live = [p for p in items if not p.deprecated and p.id not in skip and p.kind != ORDINAL]
    for dim, allowed in dims.items():
        counts: dict[str, int] = {v: 0 for v in allowed or ()}
        for p in live:
            value = dict(p.dims).get(dim)
            if value is not None:
                counts[value] = counts.get(value, 0) + 1
        out[f"slices.{dim}"] = {v: {"n": n, "min": minimum} for v, n in sorted(counts.items())}
    return out


def unscored_warnings(
    items: Sequence[Probe],
    dims: Mapping[str, Sequence[str] | None],
    minimum: int,
    excluded: Iterable[str],
    files: Sequence[str],
    suite: str,
) -> list[Finding]:
    """`slice-empty` warnings: what items name but no live item is left to score, so the gate
    would drop it without a word (docs/suites.md, "Retired and excluded items").

    A suite whose every item is retired or excluded as a leak; a slice value whose every item is.
    A declared value under `coverage.min_per_value` is the `coverage` error's already; a value of
    a dimension without a list can only be retired (its items stay in the file), so it is a
    warning, shown by `validate` and in every run's report, never silently gone.
    """
    skip = set(excluded)
    where = files[0] if files else None

    def gone(subset: Sequence[Probe]) -> str:
        retired = sum(p.deprecated for p in subset)
        leaking = sum(not p.deprecated and p.id in skip for p in subset)
        parts = [f"{retired} retired"] * bool(retired) + [f"{leaking} excluded as leaks"] * bool(leaking)
        return " and ".join(parts)

    live = [p for p in items if not p.deprecated and p.id not in skip]
    if items and not live:
        return [
            Finding(
                "slice-empty",
                f"suite {suite}: no live item ({gone(items)} of {len(items)}): nothing of the suite is "
                "scored or gated",
                where,
                hint="add items, or take the suite out of `suites:` in evalgate.yml",
                evidence={"suite": suite, "n": 0},
            )
        ]
    out = []
    for dim, allowed in dims.items():
        carried: dict[str, list[Probe]] = {}
        for p in items:
            if (value := dict(p.dims).get(dim)) is not None:
                carried.setdefault(value, []).append(p)
        scored = {dict(p.dims).get(dim) for p in live}
        for value, subset in sorted(carried.items()):
            if value in scored or (allowed and value in allowed and minimum > 0):
                continue
            out.append(
                Finding(
                    "slice-empty",
                    f"suite {suite}: slice {dim}:{value} has no live item ({gone(subset)} of "
                    f"{len(subset)}): it is not scored or gated",
                    where,
                    field=f"slices.{dim}",
                    hint="add live items for that value, or leave it retired knowingly",
                    evidence={"slice": f"{dim}:{value}", "n": 0},
                )
            )
    return out


def answer_position_warning(probes: Sequence[Probe], files: Sequence[str], suite: str) -> list[Finding]:
    """A warning when most live items list their answer at one position: a model that always
    picks that position (or one whose scores all tie) looks good on them. Exported sets often do
    this (an answer key written as "A" everywhere, a generator that puts the answer first)."""
    live = [p for p in probes if not p.deprecated and p.kind != ORDINAL and p.expected in p.candidates]
    if len(live) < 20:
        return []
    positions = [p.candidates.index(p.expected) for p in live]
    top = max(set(positions), key=lambda i: (positions.count(i), -i))
    share = positions.count(top) / len(live)
    chance = sum(1 / len(p.candidates) for p in live) / len(live)
    if share < 0.5 or share < 1.5 * chance:
        return []
    letter = chr(ord("A") + top) if top < 26 else str(top + 1)
    return [
        Finding(
            "answer-position",
            f"suite {suite}: {positions.count(top)} of {len(live)} live items ({share:.0%}) list their "
            f"answer at position {top + 1} ({letter}); a model that always picks it scores {share:.0%}",
            files[0] if files else None,
            field="candidates",
            hint="shuffle each item's candidates (the answer's position should not predict it)",
            evidence={"position": top + 1, "share": round(share, 4), "n": len(live)},
        )
    ]


def item_coverage_findings(matrix: Mapping[str, Any], files: Sequence[str], suite: str) -> list[Finding]:
    """One finding per slice value under its minimum (`coverage.min_per_value` of the suite)."""
    out = []
    where = files[0] if files else None
    for key, cells in matrix.items():
        dim = key.removeprefix("slices.")
        for value, cell in cells.items():
            if cell["n"] < cell["min"]:
                out.append(
                    Finding(
                        "coverage",
                        f"suite {suite}: slice {dim}:{value} has {cell['n']} live item(s), "
                        f"fewer than the minimum {cell['min']}",
                        where,
                        field=f"slices.{dim}",
                        hint="add items for that value, or lower `coverage.min_per_value` of the suite "
                        "in evalgate.yml",
                        evidence={"slice": f"{dim}:{value}", "n": cell["n"], "min": cell["min"]},
                    )
                )
    return out
