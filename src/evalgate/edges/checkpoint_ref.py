"""A checkpoint by reference: a small JSON file in the repository naming files kept elsewhere.

Teams rarely commit multi-GB weights to git. A reference file (`checkpoint: checkpoints/current.json`,
schema `schemas/checkpoint-reference.schema.json`) names where the files come from (a Hugging Face
repo at an immutable 40-hex commit, or one HTTPS URL per file) and the SHA-256 and size of every
file (docs/github.md, "Where the checkpoint lives").

The reference is PR data: it may name any address. So only its hashes decide what is scored.
`evalgate fetch` (edges/checkpoint_fetch.py, a step with network) puts the files in a local cache
folder; loading (scorers/loaders.py) never touches the network: it verifies EVERY file's size and
SHA-256 in the cache before any byte is deserialised, and refuses (exit 2) naming the file, both
hashes and the fetch command when one is missing or differs. The folder scored holds exactly the
listed files, so the checkpoint's identity in results.json (per-file hashes, their digest) is the
one a local copy of the same files has: a baseline made from a local copy compares.

Cache layout: `CACHE/<key>/<path>` where `key` is the SHA-256 of the listing {path: [sha256,
bytes]} (sources left out: the same files from a mirror share an entry).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from evalgate.console import clean
from evalgate.edges import json_input
from evalgate.edges.inputs import read_checked
from evalgate.errors import CheckpointError
from evalgate.schemas import schema
from evalgate.types import canonical_json

CACHE_ENV = "EVALGATE_CHECKPOINT_CACHE"
KIND = "evalgate-checkpoint-reference"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class RefFile:
    path: str  # POSIX, relative to the checkpoint folder
    sha256: str
    bytes: int
    url: str | None  # None: from the Hub reference


@dataclass(frozen=True)
class CheckpointRef:
    source: Path  # the reference file
    shown: str  # how messages name it
    files: tuple[RefFile, ...]
    hub_repo: str | None = None
    hub_revision: str | None = None

    @property
    def key(self) -> str:
        listing = {f.path: [f.sha256, f.bytes] for f in self.files}
        return hashlib.sha256(canonical_json({"files": listing}).encode()).hexdigest()

    @property
    def total_bytes(self) -> int:
        return sum(f.bytes for f in self.files)


def is_reference_path(path: Path) -> bool:
    """A `checkpoint:` that names a `.json` file is a reference (a checkpoint is a folder)."""
    return path.suffix.lower() == ".json" and not path.is_dir()


def default_cache() -> Path:
    """$EVALGATE_CHECKPOINT_CACHE, else the user's cache folder (XDG), else ~/.cache."""
    env = os.environ.get(CACHE_ENV, "").strip()
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg:
        return Path(xdg) / "evalgate" / "checkpoints"
    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # a container user with no HOME and no passwd entry
        home = Path(tempfile.gettempdir())
    return home / ".cache" / "evalgate" / "checkpoints"


def fetch_command(ref: CheckpointRef, cache: Path) -> str:
    return f"evalgate fetch --checkpoint {shlex.quote(ref.shown)} --cache {shlex.quote(str(cache))}"


def read_reference(path: Path, *, roots: Any = None, shown: str | None = None) -> CheckpointRef:
    """The reference at `path`, checked against its schema; every problem is a located refusal."""
    name = clean(shown or path, 300)
    data = read_checked(
        path, "checkpoint-text", "checkpoint reference", roots=roots, shown=name, error=CheckpointError
    )
    try:
        doc = json_input.loads(data)
    except json_input.UntrustedJSON as exc:
        where = f":{exc.line}" if exc.line else ""
        raise CheckpointError(f"{name}{where}: not valid UTF-8 JSON ({exc.why})") from None
    problems = []
    validator = jsonschema.Draft202012Validator(schema("checkpoint-reference"))
    for err in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
        where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        problems.append(f"{name}: {clean(where, 200)}: {clean(err.message, 300)}")
    if not problems:
        hub = doc.get("hub")
        for rel, rec in doc["files"].items():
            if hub is None and "url" not in rec:
                problems.append(f"{name}: files.{rel}: no url, and the reference names no hub repo")
            if hub is not None and "url" in rec:
                problems.append(f"{name}: files.{rel}: a url beside hub; a reference names one source")
            if any(p in (".", "..") for p in rel.split("/")):
                problems.append(f"{name}: files.{rel}: not a plain relative path")
        folders = {"/".join(r.split("/")[:i]) for r in doc["files"] for i in range(1, r.count("/") + 1)}
        for rel in sorted(folders & set(doc["files"])):
            problems.append(f"{name}: files.{rel}: both a file and a folder")
    if problems:
        raise CheckpointError(
            "; ".join(problems[:10]) + (f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""),
            hint="a checkpoint reference is schemas/checkpoint-reference.schema.json (docs/github.md)",
        )
    hub = doc.get("hub")
    files = tuple(
        RefFile(rel, rec["sha256"], rec["bytes"], rec.get("url")) for rel, rec in sorted(doc["files"].items())
    )
    return CheckpointRef(
        source=path,
        shown=name,
        files=files,
        hub_repo=hub["repo"] if hub else None,
        hub_revision=hub["revision"] if hub else None,
    )


def hash_file(path: Path, limit: int) -> tuple[str, int]:
    """(SHA-256, bytes) of a regular file, reading at most `limit` + 1 bytes (a longer file is
    already wrong; its hash is then of that prefix and cannot match)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise CheckpointError(f"{clean(path, 300)}: not a regular file in the checkpoint cache; refused")
        h, n = hashlib.sha256(), 0
        while n <= limit and (chunk := fh.read(min(_CHUNK, limit + 1 - n))):
            h.update(chunk)
            n += len(chunk)
    return h.hexdigest(), n


def _entries(folder: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry under `folder` (relative POSIX path, lstat), links never followed."""
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            full = Path(dirpath) / name
            yield full.relative_to(folder).as_posix(), os.lstat(full)


def problems_in(folder: Path, ref: CheckpointRef) -> list[tuple[str, str]]:
    """[(file, why)] for a cache folder that is not exactly the reference's files: a missing,
    resized or changed file (both hashes named), a link, or anything not listed."""
    if not folder.is_dir() or folder.is_symlink():
        return [("", "not in the cache")]
    listed = {f.path: f for f in ref.files}
    folders = {"/".join(p.split("/")[:i]) for p in listed for i in range(1, p.count("/") + 1)}
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for rel, st in _entries(folder):
        if rel in folders and stat.S_ISDIR(st.st_mode):
            continue
        if rel not in listed:
            out.append((rel, "is not in the reference (the cache folder holds exactly its files)"))
        elif not stat.S_ISREG(st.st_mode):
            out.append((rel, "is not a regular file (a link or a folder)"))
        else:
            seen.add(rel)
    for rel, f in listed.items():
        if rel not in seen:
            if not any(p == rel for p, _ in out):
                out.append((rel, "is missing"))
            continue
        digest, n = hash_file(folder / rel, f.bytes)
        if n != f.bytes or digest != f.sha256:
            size = f"{n:,} bytes" if n <= f.bytes else f"more than {f.bytes:,} bytes"
            out.append(
                (rel, f"expected sha256 {f.sha256} ({f.bytes:,} bytes), found sha256 {digest} ({size})")
            )
    return out


def verified_folder(ref: CheckpointRef, cache: Path | None = None) -> Path:
    """The cache folder holding exactly the reference's files, every size and SHA-256 checked;
    a located refusal (exit 2) naming the file, both hashes and the fetch command otherwise.
    Reads the cache only: the scoring step never touches the network."""
    cache = cache or default_cache()
    folder = cache / ref.key
    problems = problems_in(folder, ref)
    if problems:
        first = "; ".join(
            f"{clean(rel, 200)} {why}"
            if rel
            else f"{ref.total_bytes:,} bytes in {len(ref.files)} file(s) {why}"
            for rel, why in problems[:5]
        )
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise CheckpointError(
            f"{ref.shown}: checkpoint by reference, cache folder {clean(folder, 300)}: {first}{more}; "
            "nothing was loaded",
            hint=f"fetch it (network): {fetch_command(ref, cache)}",
        )
    return folder


def reference_record(ref: CheckpointRef) -> Mapping[str, Mapping[str, Any]]:
    """{path: {"sha256", "bytes"}}: what results.json records for a checkpoint's files."""
    return {f.path: {"sha256": f.sha256, "bytes": f.bytes} for f in ref.files}
