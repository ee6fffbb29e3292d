"""Checks that run before any checkpoint byte reaches a deserialiser: nothing here executes a file.

- `scan_pickle`: reads a pickle's opcodes (`pickletools.genops`, which decodes and never runs
  them) and refuses any global a PyTorch state dict does not need. A `pytorch_model.bin` that
  passes is then loaded by transformers through `torch.load(weights_only=True)` (its default,
  which we also pass explicitly): two independent locks.
- `check_safetensors`: the header and every tensor's byte range against the file's size, so a
  truncated download is one line naming the file instead of a library traceback.
- `checkpoint_files`: the SHA-256 of every file of a checkpoint.
"""

from __future__ import annotations

import io
import os
import pickletools
import re
import stat
import struct
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalgate.console import clean
from evalgate.edges import json_input
from evalgate.edges.files import MAX_HASH_BYTES, file_record
from evalgate.edges.input_files import BYTE_CAPS
from evalgate.edges.inputs import outside_problem
from evalgate.edges.json_input import MAX_INT
from evalgate.errors import CheckpointError

PICKLE_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt", ".pkl", ".pickle", ".joblib")

_CONVERT_HINT = (
    "evalgate never unpickles checkpoints; save the weights as safetensors "
    "(model.save_pretrained(dir, safe_serialization=True), or safetensors.torch.save_file)"
)

# What torch.save of a state dict references (protocol 2). Anything else is refused.
_TORCH_DTYPES = {
    "float16", "float32", "float64", "bfloat16", "half", "float", "double", "complex64", "complex128",
    "uint8", "int8", "int16", "int32", "int64", "bool", "float8_e4m3fn", "float8_e5m2",
}  # fmt: skip
_SAFE_GLOBALS = {
    ("collections", "OrderedDict"),
    ("torch", "Size"),
    ("torch", "device"),
    ("torch.serialization", "_get_layout"),
    ("torch.storage", "UntypedStorage"),
    ("torch", "UntypedStorage"),
    ("_codecs", "encode"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
}
_STRING_OPS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "STRING", "BINSTRING"}


def _global_is_safe(module: str, name: str) -> bool:
    if (module, name) in _SAFE_GLOBALS:
        return True
    if module == "torch._utils" and re.fullmatch(
        r"_rebuild_(tensor(_v2|_v3)?|parameter(_with_state)?)", name
    ):
        return True
    return module == "torch" and (name in _TORCH_DTYPES or re.fullmatch(r"[A-Z][A-Za-z0-9]*Storage", name))


def _pickle_globals(data: bytes, source: str, max_pickles: int) -> list[tuple[str, str]]:
    """Every (module, name) the pickle stream(s) in `data` would import, without unpickling.

    A zip checkpoint's data.pkl is one pickle; torch's legacy format is five in a row (magic
    number, protocol, system info, the object, the storage keys), then raw tensor bytes.
    """
    found: list[tuple[str, str]] = []
    stream = io.BytesIO(data)
    for _ in range(max_pickles):
        if stream.tell() >= len(data):
            break  # torch's next pickle.load fails on the end of the file: nothing more runs
        # torch reads each of the five with pickle.load, whatever its protocol: a second pickle
        # of protocol 0 (no PROTO opcode) is scanned like the first, and a stream that ends
        # before torch would stop reading is refused below (genops on no bytes raises).
        recent: list[Any] = []  # values pushed lately (strings only; None for anything else)
        memo: dict[int, Any] = {}
        try:
            for op, arg, _ in pickletools.genops(stream):
                if op.name in ("GLOBAL", "INST"):
                    module, name = arg.split(" ", 1)
                    found.append((module, name))
                elif op.name == "STACK_GLOBAL":
                    if len(recent) < 2 or not all(isinstance(v, str) for v in recent[-2:]):
                        raise CheckpointError(f"{source}: unrecognised pickle structure; refusing it")
                    found.append((recent[-2], recent[-1]))
                elif op.name in ("EXT1", "EXT2", "EXT4"):
                    raise CheckpointError(
                        f"{source}: pickle uses the copyreg extension registry; refusing it"
                    )
                if op.name in _STRING_OPS:
                    recent.append(arg)
                elif op.name == "MEMOIZE":
                    memo[len(memo)] = recent[-1] if recent else None
                elif op.name in ("BINPUT", "LONG_BINPUT", "PUT"):
                    memo[int(arg)] = recent[-1] if recent else None
                elif op.name in ("BINGET", "LONG_BINGET", "GET"):
                    recent.append(memo.get(int(arg)))
                elif op.name not in ("FRAME", "PROTO"):
                    recent.append(None)
        except CheckpointError:
            raise
        except Exception as exc:  # malformed opcode stream
            raise CheckpointError(f"truncated or corrupt: {source} ({exc})", hint=_CONVERT_HINT) from None
    return found


_ZIP_MAGIC = b"PK\x03\x04"
_MAX_PICKLE_BYTES = 256 << 20


def _zip_pickles(path: Path) -> list[tuple[str, bytes, int]]:
    """Every pickle of a zip checkpoint, read entry by entry (not by name: with two entries of
    one name, a reader by name sees one and torch may load the other, so duplicates are refused)."""
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
        names = [i.filename for i in infos]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise CheckpointError(
                f"{path}: the zip archive holds {clean(twice[0])} more than once; refusing it",
                hint=_CONVERT_HINT,
            )
        members = []
        for info in infos:
            if not info.filename.endswith(".pkl"):
                continue
            # a state dict's pickle is small; a zip bomb's member would decompress without end
            with zf.open(info) as fh:
                data = fh.read(_MAX_PICKLE_BYTES + 1)
            if len(data) > _MAX_PICKLE_BYTES:
                raise CheckpointError(
                    f"{path}:{clean(info.filename)}: a pickle of more than {_MAX_PICKLE_BYTES:,} bytes; "
                    "refusing it",
                    hint=_CONVERT_HINT,
                )
            members.append((f"{path}:{clean(info.filename)}", data, 1))
    if not members:
        raise CheckpointError(f"{path}: a zip archive without a pickle; not a PyTorch checkpoint")
    return members


def scan_pickle(path: Path) -> None:
    """Refuse a torch pickle checkpoint that references anything beyond tensors and storages."""
    try:
        with open(path, "rb") as fh:
            is_zip_format = fh.read(4) == _ZIP_MAGIC
        if is_zip_format:  # torch's own test: the zip format starts with a local file header
            members = _zip_pickles(path)
        else:
            if zipfile.is_zipfile(path):
                # A pickle stream followed by a zip: torch unpickles the stream, a zip reader
                # sees the archive. Whatever is meant, one reading would go unscanned.
                raise CheckpointError(
                    f"{path}: a pickle stream with a zip archive appended; refusing it", hint=_CONVERT_HINT
                )
            members = [(str(path), path.read_bytes(), 5)]
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        raise CheckpointError(f"truncated or corrupt: {path} ({clean(exc)})") from None
    for source, data, max_pickles in members:
        if not data.startswith(b"\x80"):
            raise CheckpointError(
                f"{source}: not a pickle of protocol 2 or later; refusing it", hint=_CONVERT_HINT
            )
        for module, name in _pickle_globals(data, source, max_pickles):
            if not _global_is_safe(module, name):
                raise CheckpointError(
                    f"{path}: unsafe pickle: loading it would call {module}.{name}; "
                    "refused, nothing was loaded",
                    hint=_CONVERT_HINT,
                )


_MAX_HEADER = 100 << 20  # the safetensors library's own limit for a header

_ST_ITEMSIZE = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8,
}  # fmt: skip


def check_safetensors(path: Path) -> dict[str, tuple[int, ...]]:
    """Header readable and every tensor's bytes inside the file (pure Python, nothing loaded);
    returns every tensor's shape."""

    def corrupt(why: str) -> CheckpointError:
        return CheckpointError(
            f"truncated or corrupt: {path} ({why})", hint="re-download or re-save the checkpoint"
        )

    if not path.is_file():
        raise corrupt("not a regular file")
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            raise corrupt("shorter than the 8-byte header length")
        (n,) = struct.unpack("<Q", head)
        if n > size - 8:
            raise corrupt(f"header of {n} bytes but the file has {size} bytes")
        if n > _MAX_HEADER:
            raise corrupt(f"header of {n:,} bytes, over the {_MAX_HEADER:,}-byte limit")
        try:
            header = json_input.loads(fh.read(n))
        except json_input.UntrustedJSON as exc:
            raise corrupt(f"header is not JSON: {exc.why}") from None
    if not isinstance(header, dict):
        raise corrupt("header is not a JSON object")
    data_bytes = size - 8 - n
    shapes: dict[str, tuple[int, ...]] = {}
    covered = 0
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        shown = clean(name)  # a tensor name is the PR's text: never raw into a message
        try:
            begin, end = meta["data_offsets"]
            if not all(_is_int(v) and 0 <= v < MAX_INT for v in (begin, end, *meta["shape"])):
                raise ValueError("not a non-negative 64-bit integer")
            count = 1
            for dim in meta["shape"]:
                count *= int(dim)
            itemsize = _ST_ITEMSIZE[meta["dtype"]]
        except (KeyError, TypeError, ValueError, OverflowError):
            raise corrupt(f"tensor '{shown}' has a malformed entry") from None
        if not 0 <= begin <= end:
            raise corrupt(f"tensor '{shown}' has a malformed entry")
        if end > data_bytes:
            raise corrupt(f"tensor '{shown}' ends at byte {end} of {data_bytes} data bytes")
        if end - begin != count * itemsize:
            raise corrupt(f"tensor '{shown}' has {end - begin} bytes for shape {meta['shape']}")
        shapes[name] = tuple(meta["shape"])
        covered = max(covered, end)
    if covered != data_bytes:
        # The safetensors library refuses a file its tensors do not cover ("incomplete
        # metadata"); said here, before the file is hashed: a valid header followed by a huge
        # (sparse) tail would otherwise be read to its end first.
        raise corrupt(f"{data_bytes - covered:,} bytes after the last tensor")
    return shapes


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


LFS_POINTER = b"version https://git-lfs.github.com/spec/"
_LFS_POINTER_MAX = 1024  # a pointer file is ~130 bytes
# Their "regular" files are endless or have side effects. /dev is not among them: its devices
# fail the regular-file check anyway, and what passes it there (/dev/shm) is tmpfs holding
# ordinary files, where a job may well stage a checkpoint.
_KERNEL_TREES = ("proc", "sys")


def check_regular_files(path: Path, roots: Sequence[Path] | None = None) -> None:
    """Every file of a checkpoint directory is a readable regular file (symlinks followed),
    inside the allowed roots (edges/inputs.py), not under /proc or /sys, and not a Git LFS
    pointer left by a checkout without `lfs: true`.

    Nothing but a pointer's first bytes is read: a dangling symlink, a FIFO or a device (a link
    to /dev/zero, /proc/self/pagemap) would otherwise end in a traceback or hang the hashing
    forever. Links to regular files are fine wherever they point inside the roots (the Hugging
    Face cache links snapshot files to its blob store).
    """
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames.sort()
        for name in sorted(filenames):
            full = Path(dirpath) / name
            shown = clean(full, 300)
            try:
                st = full.stat()
            except OSError as exc:
                what = f"a symbolic link to {clean(os.readlink(full))}" if full.is_symlink() else "unreadable"
                raise CheckpointError(
                    f"{shown}: {what} ({exc.strerror or exc})",
                    hint="remove the file or make it a regular file inside the checkpoint",
                ) from None
            if not stat.S_ISREG(st.st_mode):
                raise CheckpointError(
                    f"{shown}: not a regular file (a FIFO, socket or device); refusing it",
                    hint="a checkpoint directory holds only regular files",
                )
            real = Path(os.path.realpath(full))
            if len(real.parts) > 1 and real.parts[1] in _KERNEL_TREES:
                raise CheckpointError(
                    f"{shown}: a link to {clean(real)}, a kernel file, not a regular file; refusing it",
                    hint="a checkpoint directory holds only regular files",
                )
            problem = outside_problem(full, roots) if roots is not None else None
            if problem:
                raise CheckpointError(f"{shown}: {problem}", hint="keep the checkpoint's files inside it")
            cap = checkpoint_file_cap(name)
            if st.st_size > cap:
                # a huge (or sparse) file is refused by its size, before hashing or parsing it
                raise CheckpointError(
                    f"{shown}: {st.st_size:,} bytes, over the {cap:,}-byte limit for this file; refused",
                    hint="a checkpoint's config and tokenizer files are small; its weights at most "
                    f"{MAX_HASH_BYTES:,} bytes a file",
                )
            if st.st_size <= _LFS_POINTER_MAX:
                with open(full, "rb") as fh:
                    if fh.read(len(LFS_POINTER)) == LFS_POINTER:
                        raise CheckpointError(
                            f"{shown}: this is a Git LFS pointer, not the weights",
                            hint="check out with Git LFS (actions/checkout with `lfs: true`, "
                            "or `git lfs pull`) so the real file is there",
                        )


# Files a loader (or transformers) parses whole into memory: a checkpoint's config, tokenizer,
# vocabulary, merges, index, chat template. The largest real tokenizer.json is tens of MB.
_TEXT_SUFFIXES = (".json", ".txt", ".model", ".jinja", ".yaml", ".yml", ".md")


def checkpoint_file_cap(name: str) -> int:
    """The most bytes a checkpoint file may have: the text-file cap for what is parsed whole
    (edges/input_files.py, "checkpoint-text"), the hashing limit for weights and anything else."""
    if name.lower().endswith(_TEXT_SUFFIXES):
        return BYTE_CAPS["checkpoint-text"]
    return MAX_HASH_BYTES


def checkpoint_files(path: Path) -> dict[str, dict[str, Any]]:
    """{relative POSIX path: {"sha256", "bytes"}} for a checkpoint directory (or a single file)."""
    if path.is_file():
        return {path.name: file_record(path)}
    out = {}
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames.sort()
        for name in sorted(filenames):
            full = Path(dirpath) / name
            out[full.relative_to(path).as_posix()] = file_record(full)
    return dict(sorted(out.items()))


def refuse_pickle_file(path: Path) -> CheckpointError:
    return CheckpointError(
        f"{path}: a pickle checkpoint; refused: unpickling can run arbitrary code, nothing was loaded",
        hint=_CONVERT_HINT,
    )
