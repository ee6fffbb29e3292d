"""Where a configured path may point and how a path is named in outputs.

Below both `config.py` (which resolves the paths of evalgate.yml) and `edges/` (which reads the
files): the configuration needs the allowed roots and the display names, and the edges check and
read against the same ones, so neither imports the other for them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

ROOTS_ENV = "EVALGATE_ALLOWED_ROOTS"


def bundled_root() -> Path | None:
    """Where the demo data lives: $EVALGATE_HOME (the Docker image), or the source checkout."""
    env = os.environ.get("EVALGATE_HOME")
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parents[2]
    return checkout if (checkout / "data").is_dir() else None


def allowed_roots(root: Path, explicit: Iterable[str | os.PathLike[str]] = ()) -> tuple[Path, ...]:
    """The folders configured inputs may resolve into (docs/hostile-inputs.md, "Reading outside
    the repository"): the configuration's folder, the working folder, the bundled demo, the
    folders in `$EVALGATE_ALLOWED_ROOTS` and the paths named on the command line."""
    roots: list[Path] = [Path(root), Path.cwd()]
    bundle = bundled_root()
    if bundle is not None:
        roots.append(bundle)
    roots += [Path(p) for p in os.environ.get(ROOTS_ENV, "").split(os.pathsep) if p.strip()]
    roots += [Path(p) for p in explicit]
    out: list[Path] = []
    for r in roots:
        real = Path(os.path.realpath(r))
        if real not in out:
            out.append(real)
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
