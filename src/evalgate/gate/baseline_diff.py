"""A baseline update, read from the gate-changes diff: per slice, the old baseline -> the new one.

A labelled baseline-update PR rewrites `baselines/NAME.json` (thousands of lines); the report and
the comment show what was accepted instead: each slice's accuracy before and after. A baseline is
written with sorted keys and two-space indentation (edges/files.py `dump_json`), so in a unified
diff a slice's `"accuracy"` line sits right under its `"family:value": {` line (its first key),
always inside the hunk's context; the parser relies on that and on nothing else. A section it
cannot read yields no rows, never wrong ones. Pure: text in, data out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evalgate.gate.slice_order import FAMILIES, split_suite

_FILE_RE = re.compile(r"^diff --git a/(\S+) b/(\S+)$")
_SLICE_RE = re.compile(r'^ {4}"([^"]+)": \{$')
_ACCURACY_RE = re.compile(r'^ {6}"accuracy": (-?[0-9.eE+-]+|null),?$')
_DIMENSION_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")  # config.schema.json's dimension names
_SECTION_RE = re.compile(r'^ {2}"([^"]+)": [\[{]')


@dataclass
class Change:
    path: str
    slices: dict[str, tuple[float | None, float | None]]  # slice -> (old, new); None: absent/null


def split_files(diff: str) -> list[tuple[str, str]]:
    """[(path, that file's part of the diff)], in order; text before the first header is kept as ""."""
    parts: list[tuple[str, list[str]]] = [("", [])]
    for line in diff.splitlines():
        m = _FILE_RE.match(line)
        if m:
            parts.append((m.group(2), []))
        parts[-1][1].append(line)
    return [(path, "\n".join(lines)) for path, lines in parts if lines]


def is_baseline_file(path: str) -> bool:
    return path.endswith(".json") and "baselines" in path.split("/")[:-1]


def _is_slice(key: str, section: str) -> bool:
    """Inside "slices" every key is one; in a hunk whose section is unknown, only a key shaped
    like one: the run's or a suite's (docs/suites.md) `overall`, or "dimension:value" (a suite
    declares its own dimensions, so any lower-case name). Only a key followed by an "accuracy"
    line counts, which no other section of a baseline has."""
    if section == "slices":
        return True
    inner = split_suite(key)[1]
    dimension, colon, _ = inner.partition(":")
    return inner == "overall" or bool(colon and (dimension in FAMILIES or _DIMENSION_RE.match(dimension)))


def _number(text: str) -> float | None:
    try:
        return None if text == "null" else float(text)
    except ValueError:
        return None


def read_change(path: str, text: str) -> Change:
    """The per-slice accuracies on each side of one baseline file's diff (changed slices only).

    The perplexity is not read: its `"value"` may sit far below its section's header (after the
    per-sentence NLLs), outside any hunk's context, so it could not be told apart reliably.
    """
    old: dict[str, float | None] = {}
    new: dict[str, float | None] = {}
    current: dict[str, str | None] = {"-": None, "+": None}  # the slice each side is inside
    section = {"-": "", "+": ""}
    for line in text.splitlines():
        if line.startswith("@@"):
            current = {"-": None, "+": None}  # a new hunk: context unknown until a key line
            section = {"-": "", "+": ""}
            continue
        if not line or line[0] not in " -+" or line.startswith(("---", "+++")):
            continue
        sign, body = line[0], line[1:]
        sides = ("-", "+") if sign == " " else (sign,)
        sec = _SECTION_RE.match(body)
        slice_key = _SLICE_RE.match(body)
        acc = _ACCURACY_RE.match(body)
        for side in sides:
            if sec:
                section[side], current[side] = sec.group(1), None
            elif slice_key and section[side] in ("slices", ""):
                key = slice_key.group(1)
                current[side] = key if _is_slice(key, section[side]) else None
            elif acc and (key := current[side]) is not None:
                (old if side == "-" else new)[key] = _number(acc.group(1))
            elif body.startswith("    }"):
                current[side] = None
    slices = {k: (old.get(k), new.get(k)) for k in set(old) | set(new) if old.get(k) != new.get(k)}
    return Change(path, slices)


def baseline_changes(diff: str | None) -> tuple[list[Change], str]:
    """(the baseline files' changes, the rest of the diff with those files' sections left out)."""
    changes, rest = [], []
    for path, text in split_files(diff or ""):
        if path and is_baseline_file(path):
            changes.append(read_change(path, text))
        else:
            rest.append(text)
    return changes, "\n".join(rest)
