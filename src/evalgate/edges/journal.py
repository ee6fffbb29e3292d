"""All-or-nothing changes to several files (`probes import`, `probes deprecate`: probe files plus
MANIFEST.json), whatever instant the process is killed at.

One `os.replace` is atomic; several are not. So a change is written ahead:

1. every new file is staged beside its target as `.NAME.evalgate-new` (written and fsynced);
2. the journal `.evalgate-journal.json` is written atomically in the manifest's folder, naming
   each staged file and its target: this rename is the commit point;
3. each staged file is renamed over its target;
4. the journal is removed.

`recover(folder)` runs before an authoring command (`probes import`, `deprecate`, `seal`) changes
the set: with a journal present (a kill during step 3) it finishes the renames (the new set);
without one it removes staged files (a kill before step 2: the old set stays).

Commands that read the set to judge it (`run`, `validate`) never apply a journal: they refuse one
(`refuse_journals`). A journal is data like any other file of a pull request, and applying it
renames files the workflow restored from the base (a baseline kept beside the manifest, or any
file of a folder a link makes the manifest's) or swaps the bytes scored for others than the ones
merged (docs/security.md). A kill before the commit point leaves only staged files, which no
reader opens: such a reader sees the old set. A journal an authoring command meets may only name
targets in its own folder (plain names, no separators), staged files of the expected name, regular
files, no links; one that breaks these rules is refused, not followed.

`EVALGATE_TEST_KILL_AFTER_STEP=N` ends the process (os._exit, as a SIGKILL would) right after
the N-th file operation of a commit; the tests use it to kill the real command at every step.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalgate.console import clean
from evalgate.edges.files import atomic_write_bytes, atomic_write_text
from evalgate.errors import RefusedError
from evalgate.paths import read_regular

JOURNAL = ".evalgate-journal.json"
STAGED_SUFFIX = ".evalgate-new"
KILL_ENV = "EVALGATE_TEST_KILL_AFTER_STEP"


def staged_name(target: Path) -> Path:
    return target.parent / f".{target.name}{STAGED_SUFFIX}"


class _Steps:
    def __init__(self) -> None:
        limit = os.environ.get(KILL_ENV, "")
        self.limit = int(limit) if limit.isdigit() else None
        self.done = 0

    def step(self) -> None:
        self.done += 1
        if self.limit is not None and self.done >= self.limit:
            os._exit(137)  # like SIGKILL: no cleanup, no finally


def commit(folder: Path, files: Mapping[Path, bytes]) -> None:
    """Replace every target in `files` (all inside `folder`) with its bytes, all or nothing."""
    folder = Path(folder)
    recover(folder)
    names = {Path(t): _relative(folder, Path(t)) for t in files}
    steps = _Steps()
    for target, data in files.items():
        atomic_write_bytes(staged_name(Path(target)), data)
        steps.step()
    entries = [{"target": names[Path(t)], "staged": _staged(names[Path(t)])} for t in files]
    atomic_write_text(folder / JOURNAL, json.dumps({"replace": entries}, indent=2) + "\n")
    steps.step()
    _roll_forward(folder, entries, steps)


def _relative(folder: Path, target: Path) -> str:
    """`target`'s name in the journal: a plain name in `folder`, or SUB/NAME one real folder down
    (a baseline's `history/`, docs/gate.md "Drift")."""
    parent = target.parent.resolve()
    if parent == folder.resolve():
        return target.name
    if parent.parent == folder.resolve() and not target.parent.is_symlink():
        return f"{target.parent.name}/{target.name}"
    raise ValueError(f"{target} is not in {folder}")  # a bug of the caller


def _staged(target: str) -> str:
    sub, slash, name = target.rpartition("/")
    return f"{sub}{slash}.{name}{STAGED_SUFFIX}"


def _roll_forward(folder: Path, entries: list[dict[str, str]], steps: _Steps | None = None) -> None:
    for entry in entries:
        staged = folder / entry["staged"]
        if staged.exists():
            os.replace(staged, folder / entry["target"])
        if steps:
            steps.step()
    _fsync_dir(folder)
    (folder / JOURNAL).unlink()
    _fsync_dir(folder)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _entries(folder: Path) -> list[dict[str, str]]:
    path = folder / JOURNAL

    def bad(why: str) -> RefusedError:
        return RefusedError(
            f"{clean(path, 300)}: not a journal evalgate wrote ({why}); refusing to follow it",
            hint="delete it: an interrupted `evalgate probes import`/`deprecate` leaves a journal "
            "only in its own folder, naming files of that folder",
        )

    try:  # the bounded reader, no link followed (paths.read_regular)
        data = read_regular(path, 1 << 20, follow_links=False)
    except OSError:
        raise bad("not a small regular file") from None
    try:
        doc = json.loads(data)
        entries = doc["replace"]
        assert isinstance(entries, list)
    except (ValueError, RecursionError, KeyError, TypeError, AssertionError):
        raise bad("not the expected JSON") from None
    for e in entries:
        if not (
            isinstance(e, dict) and isinstance(e.get("target"), str) and isinstance(e.get("staged"), str)
        ):
            raise bad("an entry is not {target, staged}")
        target, staged = e["target"], e["staged"]
        parts = target.split("/")
        if (
            len(parts) > 2
            or any(part in ("", ".", "..") for part in parts)
            or "\\" in target
            or "\x00" in target
            or staged != _staged(target)
        ):
            raise bad(f"entry {clean(target, 60)!r} names a file outside its folder")
        if len(parts) == 2:  # one real folder down (a baseline's history/), never through a link
            sub = folder / parts[0]
            if sub.is_symlink() or not sub.is_dir():
                raise bad(f"{clean(parts[0], 60)} is not a folder")
        for name in (target, staged):
            p = folder / name
            if p.is_symlink() or (p.exists() and not p.is_file()):
                raise bad(f"{clean(name, 60)} is not a regular file")
    return entries


def recover_set(cfg: Any) -> None:
    """`recover` for the probe set a configuration names (the manifest's folder; with `suites:`,
    every suite's manifest folder)."""
    manifests = [s.manifest for s in getattr(cfg, "suites", ())] or [cfg.manifest]
    for folder in dict.fromkeys(cfg.path(m).parent for m in manifests):
        recover(folder)


def refuse_journals(folders: Any, change: str = "probes", shown: str | None = None) -> None:
    """A reader's check: refuse a journal in any of `folders`, never apply it (see above); every
    journal is named at once. `change` says whose journal it would be: a probe-set change
    (`probes import`/`deprecate`) or a baseline update killed after its commit point (the baseline
    `shown`, whose folder is a gate input: a journal there may be a PR's, naming its own files to
    put in place of the base's baseline). Only the authoring command finishes either."""
    found = []
    for folder in dict.fromkeys(Path(f) for f in folders):
        journal = folder / JOURNAL
        if journal.exists() or journal.is_symlink():
            found.append(clean(journal, 300))
    if not found:
        return
    if change == "baseline":
        raise RefusedError(
            f"{shown or found[0]}: an unfinished baseline update ({JOURNAL} beside it): the baseline "
            "and its history may be half replaced",
            hint="run `evalgate baseline update` again (it finishes or drops the interrupted one), or "
            f"delete {JOURNAL} and restore baselines/ from the default branch",
        )
    raise RefusedError(
        f"{', '.join(found)}: an unfinished change of the probe set (a journal of `evalgate "
        "probes import`/`deprecate`); the gate judges files as they are and never applies one",
        hint="on your machine, `evalgate probes seal` finishes the change (or delete the journal "
        "and the `.NAME.evalgate-new` files beside it to drop it); never commit a journal",
    )


def refuse_pending(cfg: Any) -> None:
    """`run`, `validate`: refuse a journal in any folder of the configured manifests."""
    manifests = [s.manifest for s in getattr(cfg, "suites", ())] or [cfg.manifest]
    refuse_journals((cfg.path(m).parent for m in manifests), "probes")


def refuse_unfinished_update(folder: Path, shown: str) -> None:
    """`run`, `validate`, `compare`: refuse a journal beside the baseline `shown`."""
    refuse_journals([folder], "baseline", shown)


def recover(folder: Path) -> None:
    """Finish a change a killed process committed, or drop one it had not (see above)."""
    folder = Path(folder)
    if not folder.is_dir():
        return
    if (folder / JOURNAL).exists() or (folder / JOURNAL).is_symlink():
        _roll_forward(folder, _entries(folder))
        return
    for pattern in (f".*{STAGED_SUFFIX}", f"history/.*{STAGED_SUFFIX}"):
        for leftover in folder.glob(pattern):
            with contextlib.suppress(OSError):
                leftover.unlink()
    for pattern in (f".*{STAGED_SUFFIX}.*.tmp", f"history/.*{STAGED_SUFFIX}.*.tmp", f".{JOURNAL}.*.tmp"):
        # a kill inside a write
        for leftover in folder.glob(pattern):
            with contextlib.suppress(OSError):
                leftover.unlink()
