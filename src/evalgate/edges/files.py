"""File I/O at the edge: atomic writes (a crash never leaves half a result) and hashing."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalgate.errors import RefusedError

_CHUNK = 1 << 20


@contextlib.contextmanager
def refused_if_unwritable(where: str, what: str, hint: str) -> Iterator[None]:
    """An OSError while writing `what` is the user's folder (exit 2, named), not an evalgate bug."""
    try:
        yield
    except OSError as exc:
        raise RefusedError(f"{where}: cannot write {what}: {exc.strerror or exc}", hint=hint) from None


def sha256_file(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def file_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The {"sha256", "bytes"} entry results.json keeps for every input file."""
    return {"sha256": sha256_file(path), "bytes": os.path.getsize(path)}


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
    """The one JSON spelling of our outputs: sorted keys, 2-space indent, UTF-8, final newline."""
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> None:
    atomic_write_text(path, dump_json(obj))


def display_path(root: Path, path: Path) -> str:
    """How a file is named in outputs: POSIX, relative to the configuration's root, else to the
    working folder, else absolute. Keeps results.json free of machine-specific prefixes, e.g. a
    checkpoint mounted at /work/ckpt while the probes come from the image's bundled demo.
    """
    resolved = Path(path).resolve()
    for base in (Path(root), Path.cwd()):
        try:
            return resolved.relative_to(base.resolve()).as_posix()
        except (ValueError, OSError):
            continue
    return Path(path).as_posix()
