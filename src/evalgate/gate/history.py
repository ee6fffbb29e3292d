"""A baseline's history (`baselines/history/NAME.jsonl`) and its anchor (`NAME.anchor.json`).

Each `evalgate baseline update` that replaces a baseline appends one line: the replaced
baseline's SHA-256 and per-slice numbers, and the new baseline's SHA-256. Each line names the
SHA-256 of the line before it (`prev`), so the chain back to the first baseline is checked line by
line; a line is kept in one canonical JSON form, so there is one way to write it. The anchor is a
full baseline file kept beside the history (the first baseline, or one a maintainer marks with
`evalgate baseline anchor`); an `anchor` line names its SHA-256. docs/gate.md, "Drift".

A chain of hashes proves that the lines belong together, not that nobody rewrote all of them:
what makes the history trustworthy is that the gate reads it from the base commit like the
baseline, and that a pull request may only add lines to it (docs/approval.md).

Pure: bytes in, records out; the edges read and write the files (probeset_io.py,
commands/baseline_update.py).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalgate.errors import RefusedError

HISTORY_VERSION = 1
ANCHOR = "anchor"
UPDATE = "update"
_HEX = frozenset("0123456789abcdef")
_HINT = (
    "the history is append-only: restore the file from the default branch (git checkout "
    "origin/HEAD -- baselines/history) and let `evalgate baseline update` add its line"
)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def history_paths(baseline_path: str) -> tuple[str, str]:
    """(history, anchor) of a baseline at `baseline_path` (posix, as configured): beside it, in
    `history/`, named by the baseline's file name without `.json`."""
    folder, _, name = baseline_path.replace("\\", "/").rpartition("/")
    stem = name[: -len(".json")] if name.endswith(".json") else name
    prefix = f"{folder}/history/" if folder else "history/"
    return f"{prefix}{stem}.jsonl", f"{prefix}{stem}.anchor.json"


def slice_numbers(baseline: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per slice of a baseline: n, correct and accuracy (what the history keeps of it)."""
    out: dict[str, dict[str, Any]] = {}
    slices = baseline.get("slices")
    for key, row in sorted((slices if isinstance(slices, Mapping) else {}).items()):
        if isinstance(row, Mapping) and isinstance(row.get("n"), int):
            out[key] = {"n": row["n"], "correct": row.get("correct"), "accuracy": row.get("accuracy")}
    return out


def dump_line(record: Mapping[str, Any]) -> str:
    """The one text form of a history line (no newline)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


@dataclass(frozen=True)
class History:
    """A verified history: its records, and what the gate reads from them."""

    records: tuple[dict[str, Any], ...] = ()
    anchor_sha256: str | None = None
    # updates since the last anchor line: the drift look of a run is this + 1 (docs/gate.md)
    updates_since_anchor: int = 0
    # (sha256, per-slice numbers) of each earlier baseline, oldest first, from the records
    earlier: tuple[tuple[str, dict[str, Any]], ...] = field(default=())

    @property
    def last_sha256(self) -> str | None:
        return self.records[-1]["baseline_sha256"] if self.records else None


def appended(history: History, new: Sequence[Mapping[str, Any]]) -> bytes:
    """The history file's bytes with each record of `new` chained after the last (seq, prev, v
    filled in)."""
    lines = [dump_line(r) for r in history.records]  # parsed lines are in the one form: unchanged
    for record in new:
        prev = sha256_hex(lines[-1].encode()) if lines else None
        lines.append(dump_line({**record, "seq": len(lines), "prev": prev, "v": HISTORY_VERSION}))
    return "".join(line + "\n" for line in lines).encode()


def update_record(name: str, replaced: bytes, replaced_doc: Mapping[str, Any], new: bytes) -> dict[str, Any]:
    return {
        "event": UPDATE,
        "name": name,
        "replaced_sha256": sha256_hex(replaced),
        "replaced_slices": slice_numbers(replaced_doc),
        "baseline_sha256": sha256_hex(new),
    }


def after_update(
    history: History, name: str, replaced: bytes, replaced_doc: Mapping[str, Any] | None, new: bytes
) -> bytes:
    """The history file's bytes once `evalgate baseline update` replaces `replaced` with `new`:
    exactly one update line added (the first time, after the anchor line at `replaced`). The one
    function both the command and the label's check (github/history_scope.py) use, so a labelled
    PR's history is accepted only if it is byte for byte what the bot writes."""
    records = [] if history.records else [anchor_record(name, replaced)]
    records.append(update_record(name, replaced, replaced_doc or {}, new))
    return appended(history, records)


def anchor_record(name: str, anchor: bytes) -> dict[str, Any]:
    digest = sha256_hex(anchor)
    return {"event": ANCHOR, "name": name, "anchor_sha256": digest, "baseline_sha256": digest}


def _sha(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


_FIELDS = {
    ANCHOR: {"v", "seq", "prev", "event", "name", "anchor_sha256", "baseline_sha256"},
    UPDATE: {"v", "seq", "prev", "event", "name", "replaced_sha256", "replaced_slices", "baseline_sha256"},
}


def _check_slices(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "not an object"
    for key, row in value.items():
        if not (
            isinstance(row, dict)
            and set(row) == {"n", "correct", "accuracy"}
            and isinstance(row["n"], int)
            and not isinstance(row["n"], bool)
            and (
                row["correct"] is None
                or (isinstance(row["correct"], int) and not isinstance(row["correct"], bool))
            )
            and (
                row["accuracy"] is None
                or (
                    isinstance(row["accuracy"], int | float)
                    and not isinstance(row["accuracy"], bool)
                    and math.isfinite(row["accuracy"])
                )
            )
        ):
            return f"slice {key!r} is not {{n, correct, accuracy}}"
    return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_line(rec: Any, line: str, number: int, last: str | None, want: str | None) -> str | None:
    """What is wrong with one parsed line (field named), or None. Each field's type is checked
    before it is compared or hashed, so a hostile line is refused, not a crash."""
    if not isinstance(rec, dict):
        return "not a JSON object"
    event = rec.get("event")
    if not isinstance(event, str) or event not in _FIELDS:
        return f"field event: {str(event)[:40]!r} is neither 'anchor' nor 'update'"
    if set(rec) != _FIELDS[event]:
        extra = sorted(set(rec) ^ _FIELDS[event])
        return f"fields {', '.join(extra)}: missing or unknown for an {event} line"
    if not _int(rec["v"]) or rec["v"] != HISTORY_VERSION:
        return f"field v: {str(rec['v'])[:40]!r}, this evalgate reads version {HISTORY_VERSION}"
    if not _int(rec["seq"]) or rec["seq"] != number - 1:
        return f"field seq: {str(rec['seq'])[:40]!r}, expected {number - 1}"
    if not (rec["prev"] is None or isinstance(rec["prev"], str)) or rec["prev"] != want:
        return "field prev: not the SHA-256 of the line before"
    if not isinstance(rec["name"], str):
        return "field name: not a string"
    for key in sorted(_FIELDS[event] & {"anchor_sha256", "baseline_sha256", "replaced_sha256"}):
        if not _sha(rec[key]):
            return f"field {key}: not a SHA-256 in hex"
    if event == UPDATE:
        problem = _check_slices(rec["replaced_slices"])
        if problem:
            return f"field replaced_slices: {problem}"
    if dump_line(rec) != line:
        return "not in evalgate's one form of a line (sorted keys, no spaces)"
    if number == 1 and event != ANCHOR:
        return "field event: the first line must be the anchor"
    if event == ANCHOR:
        if rec["anchor_sha256"] != rec["baseline_sha256"]:
            return "field anchor_sha256: an anchor is the baseline of its time"
        if last is not None and rec["anchor_sha256"] != last:
            return "field anchor_sha256: not the baseline the line before left"
    elif rec["replaced_sha256"] != last:
        return "field replaced_sha256: not the baseline the line before left"
    return None


def parse_history(data: bytes, shown: str) -> History:
    """The records of a history file, each checked: its form, its fields, its place in the chain
    (`prev` is the SHA-256 of the line before; an update replaces the baseline the line before
    left). RefusedError naming the file, line and field of the first break."""

    def bad(line: int, what: str) -> RefusedError:
        return RefusedError(f"{shown}:{line}: {what}: the history is broken or was rewritten", hint=_HINT)

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise bad(1, "not UTF-8") from None
    if text and not text.endswith("\n"):
        raise bad(text.count("\n") + 1, "the last line has no newline (a write cut short?)")
    records: list[dict[str, Any]] = []
    prev_line: str | None = None
    anchor: str | None = None
    since = 0
    earlier: list[tuple[str, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            rec = json.loads(line, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            raise bad(number, "not a JSON line (NaN and Infinity are not JSON)") from None
        try:
            last = records[-1]["baseline_sha256"] if records else None
            want = sha256_hex(prev_line.encode()) if prev_line is not None else None
            problem = _check_line(rec, line, number, last, want)
        except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
            # Every field's type is checked above; a structure that still slips past them is a
            # broken line too, never a crash (exit 3): docs/gate.md "Drift".
            problem = f"malformed line ({type(exc).__name__})"
        if problem:
            raise bad(number, problem)
        if rec["event"] == ANCHOR:
            anchor, since = rec["anchor_sha256"], 0
        else:
            since += 1
            earlier.append((rec["replaced_sha256"], rec["replaced_slices"]))
        records.append(rec)
        prev_line = line
    return History(tuple(records), anchor, since, tuple(earlier))


def verify(
    history: History,
    *,
    baseline_sha256: str,
    anchor: bytes | None,
    history_shown: str,
    anchor_shown: str,
    baseline_shown: str,
) -> None:
    """The history names the baseline the gate reads, and the anchor file is the one it names."""
    lines = len(history.records)
    if not lines:
        raise RefusedError(f"{history_shown}:1: empty: a history starts with its anchor line", hint=_HINT)
    if history.last_sha256 != baseline_sha256:
        raise RefusedError(
            f"{history_shown}:{lines}: field baseline_sha256: {str(history.last_sha256)[:12]}… is not "
            f"{baseline_shown} ({baseline_sha256[:12]}…): the baseline was replaced without its "
            "history line",
            hint="replace a baseline only with `evalgate baseline update`, which appends the line",
        )
    if anchor is None:
        raise RefusedError(f"{anchor_shown}: missing, but {history_shown} names an anchor", hint=_HINT)
    last_anchor = max(i for i, r in enumerate(history.records) if r["event"] == ANCHOR) + 1
    if history.anchor_sha256 != sha256_hex(anchor):
        raise RefusedError(
            f"{history_shown}:{last_anchor}: field anchor_sha256: {anchor_shown} is not the anchor "
            f"this line names ({sha256_hex(anchor)[:12]}…, expected {str(history.anchor_sha256)[:12]}…)",
            hint=_HINT,
        )
