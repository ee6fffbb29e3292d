"""Which text encoding a file's bytes are in, when it is not UTF-8 (docs/probes.md, "Encodings").

UTF-16 text read as UTF-8 is ASCII letters with a NUL between each: it decodes, and no leak key
or JSON parse ever matches it. It is recognised by its byte-order mark, or without one by the
NUL bytes of ASCII text on one side of every byte pair.
"""

from __future__ import annotations

UTF16_HINT = "the file is UTF-16: save it as UTF-8 (in most editors: Save As, encoding UTF-8)"

_SAMPLE = 4096


def utf16_kind(data: bytes) -> str | None:
    """ "UTF-16 LE" / "UTF-16 BE" (with or without a byte-order mark), or None."""
    if data.startswith(b"\xff\xfe"):
        return "UTF-16 LE"
    if data.startswith(b"\xfe\xff"):
        return "UTF-16 BE"
    sample = data[:_SAMPLE]
    half = len(sample) // 2
    if half < 2:
        return None
    even = sample[0 : half * 2 : 2].count(0) / half
    odd = sample[1 : half * 2 : 2].count(0) / half
    if odd > 0.3 and even < 0.05:
        return "UTF-16 LE"
    if even > 0.3 and odd < 0.05:
        return "UTF-16 BE"
    return None


def utf16_message(kind: str, bom: bool) -> str:
    mark = "with" if bom else "without"
    return f"the file is {kind} ({mark} a byte-order mark), not UTF-8: UTF-16, save as UTF-8"
