"""File I/O at the edge: atomic writes (a crash never leaves half a result) and hashing."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalgate.console import clean
from evalgate.errors import RefusedError

_CHUNK = 1 << 20


@contextlib.contextmanager
def refused_if_unwritable(where: str, what: str, hint: str) -> Iterator[None]:
    """An OSError while writing `what` is the user's folder (exit 2, named), not an evalgate bug."""
    try:
        yield
    except OSError as exc:
        raise RefusedError(f"{where}: cannot write {what}: {exc.strerror or exc}", hint=hint) from None


# The most bytes hashed from one file: above any checkpoint a CPU runner can score, and a bound
# for a file whose size lies (a /proc file says 0 bytes and never ends).
MAX_HASH_BYTES = 64 << 30


def _hashed(path: str | os.PathLike[str], limit: int) -> tuple[str, int]:
    """(SHA-256, bytes read) of a regular file; anything else (a FIFO, a device: opened without
    blocking, checked on the open descriptor) or more than `limit` bytes is refused."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RefusedError(f"{clean(path, 300)}: not a regular file (a FIFO, socket or device); refused")
        if st.st_size > limit:  # a huge (or sparse) file is refused by its size, before any read
            raise RefusedError(f"{clean(path, 300)}: {st.st_size:,} bytes, over {limit:,} bytes; refused")
        h, n = hashlib.sha256(), 0
        while chunk := fh.read(_CHUNK):
            n += len(chunk)
            if n > limit:
                raise RefusedError(f"{clean(path, 300)}: over {limit:,} bytes; refused")
            h.update(chunk)
    return h.hexdigest(), n


def sha256_file(path: str | os.PathLike[str], limit: int = MAX_HASH_BYTES) -> str:
    return _hashed(path, limit)[0]


def bytes_record(data: bytes) -> dict[str, Any]:
    """`file_record` of bytes already read (the document parsed is the one hashed)."""
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def file_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The {"sha256", "bytes"} entry results.json keeps for every input file."""
    digest, n = _hashed(path, MAX_HASH_BYTES)
    return {"sha256": digest, "bytes": n}


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write to a temporary file in the same folder, fsync, then rename over the target.

    rename() within one filesystem is atomic, so readers see the old file or the new one,
    never a prefix. The temporary file is removed if anything fails.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp creates 0600; give the file the permissions a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def dump_json(obj: Any) -> str:
    """The one JSON spelling of our outputs: sorted keys, 2-space indent, UTF-8, final newline.

    That is `json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False)`, whose indenting
    encoder is pure Python (only the unindented one is compiled): `_indented` writes the same
    bytes in about half the time (as fast as the compiled unindented encoder) for the plain dicts,
    lists, strings, numbers, booleans and None our documents hold (a results.json of 100,000
    probes: bench/compare_scale.py), and hands anything else to json.dumps itself
    (tests/edges/test_dump_json.py holds the two equal).
    """
    try:
        return _indented(obj, "\n") + "\n"
    except (_Unusual, RecursionError, TypeError):
        return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


class _Unusual(Exception):
    """A value `_indented` leaves to json.dumps (a subclass, a non-string key, an unknown type)."""


def _float_text(value: float) -> str:
    # json.encoder's floatstr with allow_nan (our documents hold none: results.round_floats)
    if value != value:
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity" if value < 0 else float.__repr__(value)


def _indented(obj: Any, newline: str) -> str:
    """`obj` as json.dumps(indent=2, sort_keys=True, ensure_ascii=False) spells it, at the
    indentation that `newline` (a newline and the enclosing level's spaces) carries."""
    string = json.encoder.encode_basestring  # the compiled escaper json.dumps uses here
    keys: dict[str, str] = {}  # '"key": ' per key: a document repeats a few hundred keys

    def scalar(value: Any, kind: type) -> str | None:
        if kind is str:
            return string(value)
        if kind is float:
            return float.__repr__(value) if value - value == 0 else _float_text(value)
        if kind is int:
            return int.__repr__(value)
        if kind is bool:
            return "true" if value else "false"
        return "null" if value is None else None

    def dump(value: Any, newline: str) -> str:
        kind = type(value)
        inner = newline + "  "
        if kind is dict:
            if not value:
                return "{}"
            items = []
            for key in sorted(value):
                head = keys.get(key) if type(key) is str else _unusual()
                if head is None:
                    head = keys[key] = string(key) + ": "
                item = value[key]
                kind = type(item)
                if kind is str:
                    items.append(head + string(item))
                elif kind is float and item - item == 0:
                    items.append(head + float.__repr__(item))
                else:
                    text = scalar(item, kind)
                    items.append(head + (dump(item, inner) if text is None else text))
            return "{" + inner + ("," + inner).join(items) + newline + "}"
        if kind is list or kind is tuple:
            if not value:
                return "[]"
            parts = []
            for item in value:
                text = scalar(item, type(item))
                parts.append(dump(item, inner) if text is None else text)
            return "[" + inner + ("," + inner).join(parts) + newline + "]"
        text = scalar(value, kind)
        return _unusual() if text is None else text

    return dump(obj, newline)


def _unusual() -> Any:
    raise _Unusual


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> None:
    atomic_write_text(path, dump_json(obj))
