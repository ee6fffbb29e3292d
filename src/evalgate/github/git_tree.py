"""One commit's tree, read through git, with paths resolved the way the filesystem will resolve
them once the commit is checked out (docs/security.md, "What counts as a gate input").

A path's spelling says little: `a//b`, `a/./b`, `dir/.` and `x/../a/b` name the same file, and a
folder that is a symbolic link (`current -> v3`) is where the files of its target are read. So
every path is resolved component by component in the commit's own tree, following each symbolic
link it meets (its target read from the tree, relative to the link's folder), with `..` applied
after the link before it, as the kernel does. The result is the path the bytes come from, and the
links on the way: a change to either is a change to what is read. A link that is absolute, that
climbs out of the repository, whose target cannot be read, or that loops (more than 40 links for
one path, the kernel's own limit) cannot be resolved: `problem` says why, and the caller treats
the input as changed.

Nothing is checked out and no hook or filter runs: `git ls-tree` lists the tree, `git cat-file`
reads a link's target.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

MODE_LINK = "120000"
MODE_GITLINK = "160000"
MODE_TREE = "040000"
MAX_LINKS = 40  # per resolved path: Linux's ELOOP limit (MAXSYMLINKS)
MAX_LINK_BYTES = 4096  # PATH_MAX: a longer target is no path the kernel would follow


def git(*args: str) -> subprocess.CompletedProcess[str]:
    # Hooks off: the workspace is the PR's (docs/security.md). surrogateescape: a file name need
    # not be UTF-8, and one that is not must not crash the decision.
    return subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args],
        capture_output=True,
        encoding="utf-8",
        errors="surrogateescape",
        check=False,
    )


def _batch(mode: list[str], oids: list[str]) -> bytes:
    """`git cat-file --batch[-check]` for these objects, in one process."""
    if not oids:
        return b""
    done = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", "cat-file", *mode],
        input="".join(f"{oid}\n" for oid in oids).encode("ascii"),
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise TreeError(
            f"git cat-file {' '.join(mode)} failed: {done.stderr.decode(errors='replace').strip()}"
        )
    return done.stdout


@dataclass(frozen=True)
class Resolved:
    """Where a spelled path lands in a tree: `path` ("" is the repository's root), the symbolic
    links met on the way (repository-relative), or the `problem` that stopped it."""

    spelled: str
    path: str
    links: tuple[str, ...]
    problem: str | None = None


@dataclass(frozen=True)
class Entry:
    mode: str
    kind: str  # blob | tree | commit
    oid: str


class TreeError(Exception):
    """git could not list the tree (an unknown revision, no repository)."""


class GitTree:
    """The entries of `rev`'s tree, every one, by repository-relative path."""

    def __init__(self, rev: str):
        self.rev = rev
        listed = git("ls-tree", "-r", "-t", "-z", "--full-tree", rev)
        if listed.returncode != 0:
            raise TreeError(f"git ls-tree {rev} failed: {listed.stderr.strip()}")
        self.entries: dict[str, Entry] = {}
        for record in listed.stdout.split("\0"):
            if not record:
                continue
            meta, _, path = record.partition("\t")
            mode, kind, oid = meta.split(" ")
            self.entries[path] = Entry(mode, kind, oid)
        self.links = sorted(p for p, e in self.entries.items() if e.mode == MODE_LINK)
        self._targets: dict[str, str | None] = {}

    def is_dir(self, path: str) -> bool:
        entry = self.entries.get(path)
        return path == "" or (entry is not None and entry.kind == "tree")

    def is_file(self, path: str) -> bool:
        entry = self.entries.get(path)
        return entry is not None and entry.kind == "blob" and entry.mode != MODE_LINK

    def read(self, path: str, limit: int) -> bytes | None:
        """The bytes of the regular file at `path` (no link followed here), None when there is none
        or it is larger than `limit`."""
        entry = self.entries.get(path)
        if not self.is_file(path) or entry is None:
            return None
        size = git("cat-file", "-s", entry.oid)
        if size.returncode != 0 or not size.stdout.strip().isdigit() or int(size.stdout) > limit:
            return None
        shown = subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", "cat-file", "blob", entry.oid],
            capture_output=True,
            check=False,
        )
        return shown.stdout if shown.returncode == 0 else None

    def link_target(self, path: str) -> str | None:
        """The target of the link at `path`; None when it cannot be read as one (empty, a NUL,
        longer than PATH_MAX). All the tree's links are read at the first call, in two git calls:
        a PR with thousands of links costs seconds, not a process per link."""
        if not self._targets:
            self._targets = self._read_links()
        return self._targets.get(path)

    def _read_links(self) -> dict[str, str | None]:
        oids = sorted({self.entries[p].oid for p in self.links})
        checked = _batch(["--batch-check"], oids)
        small = []
        for line in checked.decode("ascii", errors="replace").splitlines():
            fields = line.split(" ")
            ok = len(fields) == 3 and fields[1] == "blob" and fields[2].isdigit()
            if ok and 0 < int(fields[2]) <= MAX_LINK_BYTES:
                small.append(fields[0])
        raw = _batch(["--batch"], small)
        texts: dict[str, str] = {}
        at = 0
        while at < len(raw):  # "<oid> blob <size>\n<bytes>\n" per object
            end = raw.index(b"\n", at)
            oid, _, size = raw[at:end].decode("ascii").split(" ")
            body = raw[end + 1 : end + 1 + int(size)]
            at = end + 1 + int(size) + 1
            if b"\0" not in body:
                texts[oid] = body.decode("utf-8", errors="surrogateescape")
        out: dict[str, str | None] = {p: texts.get(self.entries[p].oid) for p in self.links}
        out[""] = None  # read once, even when the tree has no link
        return out

    def links_under(self, folder: str) -> list[str]:
        """The symbolic links anywhere below `folder` ("" for the whole tree)."""
        if folder == "":
            return list(self.links)
        prefix = folder + "/"
        return [p for p in self.links if p.startswith(prefix)]

    def resolve(self, spelled: str) -> Resolved:
        """Follow `spelled` through this tree as the filesystem will (see the module's docstring).

        Components past one the tree does not hold are taken as written (`..` then steps back
        lexically, as nothing can be followed); components past a submodule stop at the submodule,
        whose recorded commit is all this tree knows of what lies below it.
        """
        if spelled.startswith("/"):
            return Resolved(spelled, "", (), "an absolute path: outside the repository")
        pending = spelled.split("/")
        done: list[str] = []
        links: list[str] = []
        while pending:
            part = pending.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if not done:
                    where = f"the symbolic link {links[-1]} points" if links else "it climbs"
                    return Resolved(spelled, "", tuple(links), f"{where} outside the repository")
                done.pop()
                continue
            here = "/".join([*done, part])
            entry = self.entries.get(here)
            if entry is not None and entry.mode == MODE_LINK:
                links.append(here)
                if len(links) > MAX_LINKS:
                    return Resolved(
                        spelled, here, tuple(links), f"more than {MAX_LINKS} symbolic links (a cycle?)"
                    )
                target = self.link_target(here)
                if target is None:
                    return Resolved(spelled, here, tuple(links), f"the symbolic link {here} cannot be read")
                if target.startswith("/"):
                    return Resolved(
                        spelled, here, tuple(links), f"the symbolic link {here} points outside the repository"
                    )
                pending = target.split("/") + pending  # relative to the link's own folder (`done`)
                continue
            done.append(part)
            if entry is not None and entry.mode == MODE_GITLINK:
                break
        return Resolved(spelled, "/".join(done), tuple(links))
