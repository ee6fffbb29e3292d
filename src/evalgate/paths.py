"""Where a configured path may point and how a path is named in outputs.

Below both `config.py` (which resolves the paths of evalgate.yml) and `edges/` (which reads the
files): the configuration needs the allowed roots and the display names, and the edges check and
read against the same ones, so neither imports the other for them.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

ROOTS_ENV = "EVALGATE_ALLOWED_ROOTS"


def bundled_root() -> Path | None:
    """Where the demo data lives: $EVALGATE_HOME (the Docker image), or the source checkout.

    Only `config.find_root` asks: the bundle is read when the configuration in use is its own
    (no evalgate.yml and no probe set where the command runs), and then it is that
    configuration's root. It is never an extra allowed root (`allowed_roots`)."""
    env = os.environ.get("EVALGATE_HOME")
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parents[2]
    return checkout if (checkout / "data").is_dir() else None


def _within(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


def allowed_roots(root: Path, explicit: Iterable[str | os.PathLike[str]] = ()) -> tuple[Path, ...]:
    """The folders configured inputs may resolve into (docs/hostile-inputs.md, "Reading outside
    the repository"): the configuration's folder, and the places the operator named, which a pull
    request cannot name: the folders in `$EVALGATE_ALLOWED_ROOTS` and the paths given on the
    command line (`--checkpoint /mnt/models/x`).

    Nothing else. The working folder is a CI job's workspace, the PR's tree, and the bundled demo
    holds the base's good weights: a PR's link into either would be scored as the PR's own.
    And an operator's path counts for where it is, not for where the PR sends it: a path that lies
    in the configuration's folder or the working folder (`--checkpoint data/ckpt`, what the
    Action passes) is the PR's file there; when it resolves out of both (a link the PR placed), it
    adds no root, and what it names is refused as outside the repository.
    """
    real = {Path(os.path.realpath(f)) for f in (root, os.curdir)}
    spelled = real | {Path(os.path.abspath(f)) for f in (root, os.curdir)}
    out: list[Path] = [Path(os.path.realpath(root))]
    named = [p for p in os.environ.get(ROOTS_ENV, "").split(os.pathsep) if p.strip()]
    for p in [*named, *explicit]:
        target = Path(os.path.realpath(p))
        if _within(Path(os.path.abspath(p)), spelled) and not _within(target, real):
            continue  # a link in the PR's tree: where it leads is not the operator's choice
        if target not in out:
            out.append(target)
    return tuple(out)


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


# --- reading a file without trusting what it is ---------------------------------------------
# The one primitive every input read goes through (edges/input_files.py, edges/inputs.py and,
# below them, config.py for evalgate.yml): a link to /dev/zero, a FIFO, a folder or a huge
# sparse file would otherwise be read forever, block, or fill the memory (exit 3, or a hang).


class NotRegularFile(OSError):
    """The path names something other than a regular file; `kind` says what."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


class TooLarge(OSError):
    def __init__(self, size: int, cap: int):
        super().__init__(f"{size} > {cap}")
        self.size, self.cap = size, cap


def file_kind(mode: int) -> str | None:
    """What a file of this mode is, in words, when it is not a regular file (None: it is)."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def read_regular(path: str | os.PathLike[str], cap: int, *, follow_links: bool = True) -> bytes:
    """The bytes of a regular file of at most `cap` bytes; `NotRegularFile` / `TooLarge` else
    (`FileNotFoundError` and other `OSError`s as the system raises them).

    The type is checked on the opened descriptor (O_NONBLOCK: opening a FIFO does not wait for a
    writer), so a file swapped between a check and the read cannot slip through; the size is
    checked before reading and again while reading (a file that grows, or a /proc file that says
    0 bytes, stops at the cap). `follow_links=False` refuses a symbolic link itself (O_NOFOLLOW).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow_links and os.path.islink(path):
            raise NotRegularFile("a symbolic link") from None
        if isinstance(exc, IsADirectoryError):
            raise NotRegularFile("a directory") from None
        raise
    try:
        st = os.fstat(fd)
        if (kind := file_kind(st.st_mode)) is not None:
            raise NotRegularFile(kind)
        if st.st_size > cap:
            raise TooLarge(st.st_size, cap)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(cap + 1)
    if len(data) > cap:
        raise TooLarge(len(data), cap)
    return data
