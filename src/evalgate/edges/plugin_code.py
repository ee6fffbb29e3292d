"""A `loader:` plugin's code, found and hashed without running it, and imported in a pen.

A plugin (`loader: pkg.module:function`, docs/scoring.md "Plugins") is code imported into the
gate's own process: whatever it does decides the verdict. Its code is therefore part of the
yardstick (gate/yardstick.py, docs/approval.md): the files of its top-level package folder `pkg/`
(or its single module file `pkg.py`), found where the import will find them and hashed before
anything imports them. A run whose plugin code or spec differs from the baseline's is a gate
change, refused before the plugin is imported unless a maintainer approved it.

- **Found without importing.** importlib's `PathFinder.find_spec` on the top-level name alone
  looks for files and executes nothing (`find_spec("pkg.module")` would import `pkg`). The
  repository's folders (the configuration's folder, then the working folder) come first, as
  before; a package found nowhere there is looked up among the installed ones.
- **Hashed.** Every regular file of the package folder (or the module file), read through the
  bounded reader, by sorted relative path: at most `MAX_FILES` files and `MAX_BYTES` bytes; a
  symbolic link leaving the folder, or a linked folder, is refused. `__pycache__` is left out:
  before the import `sys.pycache_prefix` points at a private folder for the rest of the process,
  so Python neither reads nor writes bytecode next to the sources (a committed `.pyc` marked
  "unchecked" would otherwise run instead of the hashed source).
- **Only that package.** The import goes through a private folder holding a link to the package
  alone (the repository's folders are not put on `sys.path`), and `RepositoryImportGuard`, first
  on `sys.meta_path` from then on, refuses any top-level import that would resolve into the
  repository's folders (through `python -m`'s working folder or `PYTHONPATH`): a helper module
  beside the package, which the hash does not cover, cannot be imported, at loading or later.

This is not a sandbox: the hashed code runs with the gate's rights and can read any file. The
hash makes sure it is the code the base commit (or a maintainer's approval) vouched for.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.machinery
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from evalgate.console import clean
from evalgate.edges.files import bytes_record
from evalgate.edges.inputs import read_checked
from evalgate.errors import CheckpointError
from evalgate.paths import display_path
from evalgate.schemas import loader_spec
from evalgate.types import canonical_json, sha256_text

MAX_FILES = 2_000
MAX_BYTES = 256 << 20
_HINT = "a plugin's code is its package folder (or module file): keep what it imports inside it"


@dataclass(frozen=True)
class PluginCode:
    """Where a plugin's code is and what it is: `sha256` over `files` (relative path -> SHA-256)."""

    spec: str
    package: str  # the top-level name
    location: Path  # the package folder or the module file
    files: dict[str, dict[str, Any]] = field(default_factory=dict)  # rel -> {"sha256", "bytes"}
    sha256: str = ""
    in_repository: bool = True

    def record(self) -> dict[str, str]:
        """The baseline's `yardstick.loader` and results.json's `checkpoint.loader_sha256`."""
        return {"spec": self.spec, "sha256": self.sha256}

    def inputs(self, root: Path) -> dict[str, dict[str, Any]]:
        """results.json `inputs` entries (role "loader") for a plugin inside the repository: the
        reviewer sees which files the hash covers. An installed package's paths would name the
        machine, so it has none (its SHA-256 is `checkpoint.loader_sha256`)."""
        if not self.in_repository:
            return {}
        base = self.location if self.location.is_dir() else self.location.parent
        files = sorted(self.files.items())
        return {display_path(root, base / rel): {**rec, "role": "loader"} for rel, rec in files}

    def shown(self, root: Path) -> str:
        """The package folder (`pkg/`) or module file as a reviewer reads it."""
        if not self.in_repository:
            return f"{self.package} (installed)"
        name = display_path(root, self.location)
        return name + "/" if self.location.is_dir() else name


def split_spec(spec: str) -> tuple[str, str]:
    """(module, function) of `pkg.module:function`; a located refusal otherwise."""
    if not loader_spec().match(spec):
        raise CheckpointError(
            f"--loader {spec}: expected package.module:function", hint="e.g. --loader mylab.model:load"
        )
    module_name, func_name = spec.split(":")
    return module_name, func_name


def repository_folders(root: Path) -> list[Path]:
    """Where the user's own modules live: the configuration's folder, then the working folder
    (with no evalgate.yml there the root is the bundled demo's)."""
    return list(dict.fromkeys((Path(root).resolve(), Path.cwd().resolve())))


def locate(spec: str, folders: Sequence[Path]) -> PluginCode:
    """The plugin's code, found and hashed; nothing of it is imported or run."""
    module_name, _ = split_spec(spec)
    top = module_name.split(".")[0]
    found = importlib.machinery.PathFinder.find_spec(top, [str(f) for f in folders])
    in_repository = found is not None
    if found is None:
        # not in the repository: an installed package (a top-level find_spec imports nothing)
        found = importlib.util.find_spec(top)
    if found is None:
        raise CheckpointError(
            f"--loader {spec}: cannot import {module_name}: no module or package {top!r} in "
            f"{', '.join(clean(f) for f in folders)} nor among the installed packages",
            hint="put the plugin's package in the repository, beside evalgate.yml",
        )
    locations = list(found.submodule_search_locations or [])
    if found.submodule_search_locations is not None:
        if len(locations) != 1:
            raise CheckpointError(
                f"--loader {spec}: the package {top!r} is split across {len(locations)} folders "
                f"({', '.join(clean(p) for p in locations)}); refused",
                hint=_HINT,
            )
        location = Path(locations[0])
        files = _package_files(spec, location)
        kind = "package"
    else:
        if not found.origin or not os.path.isfile(found.origin):
            raise CheckpointError(f"--loader {spec}: {top!r} is not a module file ({found.origin}); refused")
        location = Path(found.origin)
        files = {location.name: _read(spec, location)}
        kind = "module"
    listing = {rel: rec["sha256"] for rel, rec in sorted(files.items())}
    digest = sha256_text(canonical_json({"plugin": top, "kind": kind, "files": listing}))
    return PluginCode(spec, top, location, files, digest, in_repository)


def _read(spec: str, path: Path) -> dict[str, Any]:
    data = read_checked(path, "plugin", f"--loader {spec}: plugin file", error=CheckpointError, hint=_HINT)
    return bytes_record(data)


def _package_files(spec: str, folder: Path) -> dict[str, dict[str, Any]]:
    real_folder = Path(os.path.realpath(folder))
    out: dict[str, dict[str, Any]] = {}
    total = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for d in dirnames:
            if os.path.islink(Path(dirpath) / d):
                raise CheckpointError(
                    f"--loader {spec}: {clean(Path(dirpath) / d, 300)}: a linked folder in the plugin's "
                    "package; refused",
                    hint=_HINT,
                )
        for name in sorted(filenames):
            path = Path(dirpath) / name
            real = Path(os.path.realpath(path))
            if real != real_folder and real_folder not in real.parents:
                raise CheckpointError(
                    f"--loader {spec}: {clean(path, 300)}: a symbolic link out of the plugin's package "
                    f"(to {clean(real, 300)}); refused",
                    hint=_HINT,
                )
            if len(out) >= MAX_FILES:
                raise CheckpointError(
                    f"--loader {spec}: the package {clean(folder, 300)} holds more than {MAX_FILES:,} files; "
                    "refused",
                    hint=_HINT,
                )
            rec = _read(spec, path)
            total += rec["bytes"]
            if total > MAX_BYTES:
                raise CheckpointError(
                    f"--loader {spec}: the package {clean(folder, 300)} holds more than {MAX_BYTES:,} bytes; "
                    "refused",
                    hint=_HINT,
                )
            out[path.relative_to(folder).as_posix()] = rec
    return out


# --- importing it, and only it ---------------------------------------------------------------


class RepositoryImportGuard:
    """First on `sys.meta_path`: a top-level import that would come from one of the repository's
    folders is refused, except the plugin's own package (whose code the yardstick hashes)."""

    def __init__(self) -> None:
        self.folders: set[Path] = set()
        self.allowed: set[str] = set()

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if path is not None or name in self.allowed or not self.folders:
            return None  # a submodule comes from its package's own folder
        spec = importlib.machinery.PathFinder.find_spec(name, sys.path)
        where = _origin_folder(spec)
        if where is not None and where in self.folders:
            raise ImportError(
                f"`import {name}` would load {clean(spec.origin or name, 300)}, repository code outside "
                f"the plugin's package ({', '.join(sorted(self.allowed))}), which its SHA-256 does not "
                "cover; refused (docs/scoring.md, Plugins)",
                name=name,
            )
        return None

    def invalidate_caches(self) -> None:
        return None


def _origin_folder(spec: Any) -> Path | None:
    """The folder a found module or package sits in, resolved."""
    if spec is None:
        return None
    if spec.submodule_search_locations:
        first = next(iter(spec.submodule_search_locations), None)
        return Path(os.path.realpath(first)).parent if first else None
    if spec.origin and os.path.isabs(spec.origin):
        return Path(os.path.realpath(spec.origin)).parent
    return None


_GUARD = RepositoryImportGuard()


def import_plugin(code: PluginCode, module_name: str, folders: Sequence[Path]) -> ModuleType:
    """Import `module_name` from exactly the located code (see the module docstring)."""
    _GUARD.folders.update(Path(os.path.realpath(f)) for f in folders)
    _GUARD.allowed.add(code.package)
    if _GUARD not in sys.meta_path:
        sys.meta_path.insert(0, _GUARD)  # type: ignore[arg-type]
    if sys.pycache_prefix is None:
        sys.pycache_prefix = _private_folder("evalgate-pycache-")
    if not code.in_repository:
        return importlib.import_module(module_name)
    pen = Path(_private_folder("evalgate-plugin-"))
    (pen / code.location.name).symlink_to(code.location, target_is_directory=code.location.is_dir())
    sys.path.insert(0, str(pen))
    importlib.invalidate_caches()
    try:
        return importlib.import_module(module_name)
    finally:
        # the package's modules keep their own folder (`__path__`): later submodule imports
        # still work, and nothing else can be found through the pen
        sys.path.remove(str(pen))


def _private_folder(prefix: str) -> str:
    folder = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, folder, True)
    return folder
