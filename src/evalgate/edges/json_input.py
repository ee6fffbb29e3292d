"""Parsing JSON a pull request controls (checkpoint configs, safetensors headers, shard indexes,
results and baseline files) so that every malformed document is a located refusal, not a crash.

`json.loads` alone lets three things through: `1e400` reads as infinity (and then as
`OverflowError` in `int()`), an integer of more than 4,300 digits raises a plain `ValueError`
(Python's int-str limit), and a few thousand nested brackets raise `RecursionError`.
`loads` turns each into `UntrustedJSON`, with `NaN`/`Infinity` refused as the non-JSON they are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalgate.console import clean
from evalgate.edges.inputs import read_checked
from evalgate.errors import RefusedError

MAX_INT = 1 << 63  # no shape, offset or size of ours is larger


class UntrustedJSON(ValueError):
    """A JSON document we refuse; `line` is 1-based when known."""

    def __init__(self, why: str, line: int | None = None):
        super().__init__(why)
        self.why, self.line = why, line


def finite_float(text: str) -> float:
    """A JSON number as a float, refused when it overflows (`1e400` would read as infinity)."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {clean(text, 40)} is too large")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads(text: str | bytes) -> Any:
    """`json.loads`, every failure an `UntrustedJSON` whose message quotes no more than a
    cleaned excerpt."""
    try:
        return json.loads(text, parse_float=finite_float, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise UntrustedJSON(clean(exc.msg), exc.lineno) from None
    except UnicodeDecodeError as exc:
        raise UntrustedJSON(f"byte {exc.start + 1} is not valid UTF-8") from None
    except RecursionError:
        raise UntrustedJSON("nested too deeply") from None
    except ValueError as exc:  # a number over the int-str limit, an overflowing float, NaN
        raise UntrustedJSON(clean(exc)) from None


def load_json_file(path: Path, what: str, role: str = "results") -> dict[str, Any]:
    """A JSON object from a file read through the bounded reader (edges/inputs.read_checked: a
    FIFO or /dev/zero would never end, a huge file would fill the memory)."""
    return parse_json_object(read_checked(path, role, what), path, what)


def parse_json_object(data: bytes, path: Path | str, what: str) -> dict[str, Any]:
    """The JSON object in `data` (read from `path`); anything else is a located refusal."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RefusedError(f"{path}: {what} is not valid JSON ({exc})") from None
    try:
        # NaN and Infinity are not JSON (RFC 8259): an infinite baseline perplexity would make
        # every ratio 0 and a regression pass.
        doc = json.loads(text, parse_constant=_no_constant, parse_float=finite_float)
    except ValueError as exc:  # json.JSONDecodeError, a NaN/Infinity constant, a 5,000-digit int
        raise RefusedError(f"{path}: {what} is not valid JSON ({clean(exc)})") from None
    except RecursionError:
        raise RefusedError(f"{path}: {what} is not valid JSON (nested too deeply)") from None
    if not isinstance(doc, dict):
        raise RefusedError(f"{path}: {what} must be a JSON object")
    return doc
