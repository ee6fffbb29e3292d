"""Where a configured input may come from, and reading it without trusting what it is.

A pull request controls evalgate.yml and every file it names: a probe file, the grammar table or
a checkpoint file replaced by a symlink to `/etc/passwd`, `~/.ssh/id_rsa` or `/proc/self/pagemap`
would otherwise be read, hashed and quoted into results.json, the log and the PR comment. So:

- every configured input must resolve (symlinks followed) inside an allowed root (paths.py): the
  folder of evalgate.yml, the folders in `$EVALGATE_ALLOWED_ROOTS` (os.pathsep-separated), and a
  path the operator named on the command line (`--checkpoint /mnt/models/x` is the caller's
  choice, not the PR's), unless that path lies in the repository or the working folder and a
  link there leads out of them; never the working folder as such, never the image's bundled demo
  (unless the configuration in use is the bundle's own, rooted there);
- only regular files are read (a FIFO never ends, `/dev/zero` neither), each up to a size cap:
  `read_checked` is the one way a gate input is read whole (docs/hostile-inputs.md, "One reader");
- messages name the file and the symlink's target (cleaned), never the file's content.

See docs/hostile-inputs.md ("Reading outside the repository").
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from evalgate.console import clean
from evalgate.edges.input_files import NotRegularFile, TooLarge, read_input
from evalgate.errors import RefusedError

# Inputs read whole into memory (probe files, corpus, test set, baseline, config): far above any
# real one (the demo's training corpus is a few MB), far below what exhausts a CI runner.
MAX_INPUT_BYTES = 256 << 20


def _inside(real: Path, roots: Sequence[Path]) -> bool:
    return any(real == r or r in real.parents for r in roots)


def outside_problem(path: Path, roots: Sequence[Path]) -> str | None:
    """Why `path` may not be read because of where it points (None: it may, or it is missing)."""
    real = Path(os.path.realpath(path))
    if _inside(real, roots) or not os.path.lexists(path):
        return None
    link = next((p for p in (Path(path), *Path(path).parents) if p.is_symlink()), None)
    if link is not None:
        return (
            f"a symbolic link to {clean(os.readlink(link))}, outside the repository; refused "
            "(configured inputs must stay inside the repository)"
        )
    return "outside the repository; refused (configured inputs must stay inside the repository)"


def type_problem(path: Path, max_bytes: int | None = MAX_INPUT_BYTES) -> str | None:
    """Why `path` is not a readable regular file of a sane size (None: fine, missing or a folder,
    which the caller reports in its own words)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            return f"a symbolic link to {clean(os.readlink(path))}, which does not exist"
        return None
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISDIR(st.st_mode):
        return None
    if not stat.S_ISREG(st.st_mode):
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(st.st_mode)
            else "a socket"
            if stat.S_ISSOCK(st.st_mode)
            else "a character device"
            if stat.S_ISCHR(st.st_mode)
            else "a block device"
            if stat.S_ISBLK(st.st_mode)
            else "not a file"
        )
        return f"not a regular file ({kind}); refused"
    if max_bytes is not None and st.st_size > max_bytes:
        return f"{st.st_size:,} bytes, over the {max_bytes:,}-byte limit for this input; refused"
    return None


def input_problem(path: Path, roots: Sequence[Path], max_bytes: int | None = MAX_INPUT_BYTES) -> str | None:
    # What the file is comes first: a link to /dev/zero is a device wherever it points.
    kind = type_problem(path, max_bytes)
    if kind and kind.startswith("not a regular file"):
        return kind
    return outside_problem(path, roots) or kind


def check_input(path: Path, roots: Sequence[Path], what: str, shown: str | None = None) -> None:
    """Raise the located refusal for an input that may not be read."""
    problem = input_problem(path, roots)
    if problem:
        raise RefusedError(f"{clean(shown or path, 300)}: {what}: {problem}")


def read_checked(
    path: Path,
    role: str,
    what: str,
    *,
    roots: Sequence[Path] | None = None,
    shown: str | os.PathLike[str] | None = None,
    error: type[RefusedError] = RefusedError,
    hint: str | None = None,
) -> bytes:
    """The one way a gate input is read whole: inside `roots` (when given; the operator's own
    command-line paths pass None), a regular file (a link to /dev/zero, a FIFO, a folder or a
    socket refused on the open descriptor, without blocking), at most the role's byte cap
    (edges/input_files.BYTE_CAPS: a huge or sparse file is refused by its size, unread).
    Every refusal is an `error` (exit 2) naming the file and what it is, never its content."""
    name = clean(shown if shown is not None else path, 300)
    # what the file is first (a link to /dev/zero is a device wherever it points), then where
    if roots is not None and (problem := input_problem(path, roots, None)):
        raise error(f"{name}: {what}: {problem}", hint=hint)
    try:
        return read_input(path, role)
    except FileNotFoundError:
        if os.path.islink(path):
            target = clean(os.readlink(path))
            raise error(
                f"{name}: {what}: a symbolic link to {target}, which does not exist", hint=hint
            ) from None
        raise error(f"{name}: {what} not found", hint=hint) from None
    except NotRegularFile as exc:
        if exc.kind == "a directory":
            raise error(f"{name}: {what} is a folder, not a file; refused", hint=hint) from None
        raise error(f"{name}: {what}: {exc.kind}, not a regular file; refused", hint=hint) from None
    except TooLarge as exc:
        raise error(
            f"{name}: {what}: {exc.size:,} bytes or more, over the {exc.cap:,}-byte limit for this "
            "input; refused",
            hint=hint,
        ) from None
    except OSError as exc:
        raise error(f"{name}: cannot read the {what}: {exc.strerror or exc}", hint=hint) from None
