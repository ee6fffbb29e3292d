"""Bytes of a JSONL file -> (line number, object) records plus located findings.

Every problem is reported with its line (and column or byte offset), and reading goes on after
it, so a file with five bad lines gives five findings in one run. Nothing here raises on bad
input: a BOM, Latin-1 bytes, a 10 MB line or `[[[[...` nested a million deep all become findings.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from evalgate.probeset.encoding import utf16_kind, utf16_message
from evalgate.types import Finding

DEFAULT_MAX_LINE_BYTES = 1_000_000

BOM_UTF8 = b"\xef\xbb\xbf"
_BOMS_UTF16 = (b"\xff\xfe", b"\xfe\xff")

Record = tuple[int, dict[str, Any]]
_SPACE = re.compile(r"\s*")


class DuplicateJsonKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook` refusing a key given twice: json.loads keeps the last one silently, and a
    probe with two "expected" values (or a lock entry with two hashes) must be shown, not resolved."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateJsonKey(key)
        out[key] = value
    return out


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (RFC 8259 has no NaN or Infinity)")


class UnreadableNumber(ValueError):
    """A JSON number no field can mean: more digits than Python reads (4,300), or a float beyond
    the range of a 64-bit float (`1e400`, which json would read as infinity)."""

    def __init__(self, text: str, why: str):
        super().__init__(text)
        self.text = text
        self.why = why

    def message(self, where: bytes) -> tuple[str, str | None]:
        """(the message, the field) for the number as written in `where` (a line, a file)."""
        shown = self.text if len(self.text) <= 24 else f"{self.text[:12]}…{self.text[-4:]}"
        at = re.search(rb"[:\[,]\s*" + re.escape(self.text.encode()) + rb"(?![0-9.eE+-])", where)
        field = key_at(where, at.end()) if at else None
        return f"the number {shown} {self.why}", field


_MAX_DIGITS = 4300  # Python's limit on int(str) (sys.get_int_max_str_digits)


def read_int(text: str) -> int:
    """json's `parse_int`: an integer, or UnreadableNumber past Python's digit limit."""
    digits = len(text.lstrip("-"))
    if digits > _MAX_DIGITS:
        raise UnreadableNumber(text, f"has {digits} digits: more than any field can mean")
    return int(text)


def read_float(text: str) -> float:
    """json's `parse_float`: a float, or UnreadableNumber for one beyond the float range."""
    value = float(text)
    if not math.isfinite(value):
        raise UnreadableNumber(text, "is beyond the range of a number (a 64-bit float)")
    return value


def _has_lone_surrogate(obj: Any) -> bool:
    """True when a "\\ud800"-style escape left half a surrogate pair (it cannot be UTF-8 encoded)."""
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def key_hint(line: bytes, key: str) -> str | None:
    """The value of `"key": "..."` in a line that is not valid JSON (to name the probe anyway)."""
    match = re.search(rb'"' + re.escape(key.encode()) + rb'"\s*:\s*"([^"\\]{1,200})"', line)
    if match is None:
        return None
    try:
        return match.group(1).decode("utf-8")
    except UnicodeDecodeError:
        return None


_KEY_BEFORE = re.compile(rb'"([^"\\]{1,100})"\s*:')


# json's messages for an error inside the value of the last key (not between two members)
_IN_VALUE = (
    "Expecting value",
    "Unterminated string",
    "Invalid control character",
    "Invalid \\escape",
    "Expecting ',' delimiter",
)


def key_at(line: bytes, pos: int) -> str | None:
    """The key whose value holds byte `pos` of a broken line: the last `"key":` before it."""
    keys = _KEY_BEFORE.findall(line[:pos])
    if not keys:
        return None
    try:
        return keys[-1].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _type_name(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _first_line_is_object(data: bytes) -> bool:
    first = data.lstrip().split(b"\n", 1)[0]
    if first[:1] != b"{":
        return not first.startswith(b"[")
    try:
        return isinstance(json.loads(first), dict)
    except (ValueError, RecursionError):
        return False


def _skip_space(text: str, pos: int) -> int:
    """The position after the whitespace at `pos` (`\\s*` always matches, so the fallback is never used)."""
    match = _SPACE.match(text, pos)
    return match.end() if match else pos


def _not_lines(data: bytes) -> str | None:
    """How a file that is JSON but not JSON Lines is laid out (an array, pretty-printed objects)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    decoder = json.JSONDecoder()
    values, pos, multiline = [], 0, False
    try:
        while (pos := _skip_space(text, pos)) < len(text):
            value, end = decoder.raw_decode(text, pos)
            multiline |= "\n" in text[pos:end]
            values.append(value)
            pos = end
    except (ValueError, RecursionError):
        return None
    if len(values) == 1 and isinstance(values[0], list) and values[0]:
        if all(isinstance(v, dict) for v in values[0]):
            return f"the file is one JSON array of {len(values[0])} objects, not JSON Lines"
        return None
    if multiline and all(isinstance(v, dict) for v in values):
        return f"the file holds {len(values)} JSON objects spread over several lines each, not JSON Lines"
    return None


def parse_jsonl(
    data: bytes,
    file: str,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    allow_blank: bool = False,
    id_key: str | None = "id",
    what: str = "record",
) -> tuple[list[Record], list[Finding]]:
    """Parse one object per line. `id_key` names the field used to label findings on broken lines.

    `allow_blank` skips blank lines silently (corpora); probe files report them.
    """
    findings: list[Finding] = []

    def finding(
        check: str,
        message: str,
        line: int | None,
        hint: str,
        probe_id: str | None = None,
        field: str | None = None,
    ) -> None:
        findings.append(
            Finding(check, message, file=file, line=line, probe_id=probe_id, field=field, hint=hint)
        )

    def named(raw: bytes) -> str | None:
        return key_hint(raw[:65536], id_key) if id_key else None

    if not data.strip():
        finding(
            "jsonl-empty",
            "the file is empty" if not data else "the file holds only whitespace",
            None,
            f"put one JSON object per line (one {what} each), or remove the file from the configuration",
        )
        return [], findings
    if kind := utf16_kind(data):
        # read as UTF-8 it is "invalid JSON" on every line, which says nothing useful
        finding(
            "jsonl-encoding",
            utf16_message(kind, data.startswith(_BOMS_UTF16)),
            1,
            "save the file as UTF-8 without a byte-order mark",
        )
        return [], findings
    if data.startswith(BOM_UTF8):
        finding(
            "jsonl-bom",
            "the file starts with a UTF-8 byte-order mark (bytes EF BB BF)",
            1,
            "remove the byte-order mark: save as 'UTF-8' rather than 'UTF-8 with BOM'",
        )
        data = data[len(BOM_UTF8) :]
        if not data.strip():
            finding(
                "jsonl-empty",
                "the file holds only a byte-order mark",
                None,
                f"put one JSON object per line (one {what} each)",
            )
            return [], findings

    if not _first_line_is_object(data) and (layout := _not_lines(data)):
        finding(
            "jsonl-not-object",
            layout,
            1,
            f"write one JSON object per line (one {what} each, no surrounding [ ]), e.g. with "
            "`jq -c '.[]' FILE.json > FILE.jsonl` for an array",
        )
        return [], findings

    records: list[Record] = []
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the final newline ends the last line; it does not open a new one
    offset = 0
    for line_no, raw in enumerate(lines, start=1):
        line_start = offset
        offset += len(raw) + 1
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if len(raw) > max_line_bytes:
            finding(
                "jsonl-line-too-long",
                f"line is {len(raw):,} bytes, over the limit of {max_line_bytes:,}",
                line_no,
                f"a {what} should fit on a short line; check that the file was not mangled",
                named(raw),
            )
            continue
        if not raw.strip():
            if not allow_blank:
                finding(
                    "jsonl-blank",
                    "blank line",
                    line_no,
                    "remove the blank line: JSONL has one object per line",
                )
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = raw[exc.start : exc.start + 1].hex().upper()
            finding(
                "jsonl-encoding",
                f"byte 0x{bad} at byte {exc.start + 1} of the line (file offset {line_start + exc.start}, "
                "counting from 0) is not valid UTF-8",
                line_no,
                "save the file as UTF-8 (it looks like Latin-1 or Windows-1252)",
                named(raw),
                key_at(raw, exc.start),
            )
            continue
        try:
            obj = json.loads(
                text,
                object_pairs_hook=unique_keys,
                parse_constant=_no_constants,
                parse_int=read_int,
                parse_float=read_float,
            )
        except UnreadableNumber as exc:
            message, field = exc.message(raw)
            finding(
                "jsonl-number",
                message,
                line_no,
                "write the value the field expects (an answer index is a small whole number)",
                named(raw),
                field,
            )
            continue
        except DuplicateJsonKey as exc:
            findings.append(
                Finding(
                    "jsonl-duplicate-key",
                    f'key "{exc.key}" appears twice in the object',
                    file=file,
                    line=line_no,
                    probe_id=key_hint(raw, id_key) if id_key else None,
                    field=exc.key,
                    hint="keep one of the two values",
                )
            )
            continue
        except json.JSONDecodeError as exc:
            comment = (
                " (a comment line: JSON Lines has no comments)"
                if text.lstrip().startswith(("#", "//"))
                else ""
            )
            finding(
                "jsonl-syntax",
                f"column {exc.colno}: invalid JSON: {exc.msg}{comment}",
                line_no,
                "fix the JSON on this line (each line must be one complete JSON object)",
                named(raw),
                key_at(raw, len(text[: exc.pos].encode("utf-8"))) if exc.msg.startswith(_IN_VALUE) else None,
            )
            continue
        except ValueError as exc:  # NaN / Infinity
            finding(
                "jsonl-syntax",
                f"invalid JSON: {exc}",
                line_no,
                "write a number, a string or null",
                named(raw),
            )
            continue
        except RecursionError:
            finding(
                "jsonl-syntax", "invalid JSON: nested too deeply", line_no, "flatten the value", named(raw)
            )
            continue
        if not isinstance(obj, dict):
            finding(
                "jsonl-not-object",
                f"expected a JSON object {{...}}, got {_type_name(obj)}",
                line_no,
                f"write each {what} as one JSON object",
                named(raw),
            )
            continue
        if b"\\u" in raw and _has_lone_surrogate(obj):
            finding(
                "jsonl-encoding",
                "a \\u escape encodes half of a surrogate pair, which is not valid Unicode",
                line_no,
                "write the character itself, or both halves of the pair",
                named(raw),
            )
            continue
        records.append((line_no, obj))
    return records, findings
