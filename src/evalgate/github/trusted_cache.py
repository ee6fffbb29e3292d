"""Where a pull request's score cache comes from: only an artifact of the default branch's own runs.

    python -P -m evalgate.github.trusted_cache find --repo OWNER/NAME --base SHA
        [--workflow .github/workflows/badge.yml] [--artifact evalgate-scores]
    python -P -m evalgate.github.trusted_cache pack --cache DIR --to FILE.tar
    python -P -m evalgate.github.trusted_cache unpack --from FILE.tar --into DIR

A score cache entry is a number the gate does not compute: whoever wrote it chose the score
(docs/scoring.md, "Score cache"). GitHub's `actions/cache` restores a pull request's OWN cache
scope before the base branch's, and a PR can write that scope (a workflow edit pushed and then
reverted, or any step holding the runner's cache token), so a cache key is no proof of who wrote
an entry. A workflow run's artifact is: no job of a pull request can upload into a run that
GitHub records as a push to the default branch. `find` asks the API for such a run and prints
`run-id=ID` (a GITHUB_OUTPUT line for `actions/download-artifact`'s `run-id`), or nothing when
there is none: then every probe is scored. A run counts only when all of these hold, each checked
here whatever filters the API was asked to apply:

- it is a run of the workflow FILE `--workflow` (its `workflow_id` is that file's, its `path` that
  path): another workflow that calls itself "badge" does not count;
- its event is `push`, its `head_branch` the repository's default branch (from the API), its
  repository and head repository this repository (a fork's run, a `pull_request`,
  `workflow_dispatch` or `workflow_run` run does not count);
- it completed with conclusion `success`;
- its commit is on the first-parent history of `--base` (the base commit the gate trusts anyway):
  a tag named like the default branch, pushed at a PR's commit, reads `head_branch: main` too;
- it holds an unexpired artifact named `--artifact`.

`pack` writes a cache folder's entries into one tar (regular `<2 hex>/<64 hex>.json` files of at
most one entry's size, nothing else); `unpack` takes exactly such members out of a tar into a
fresh folder. The entries are still checked one by one when read (edges/score_cache.py).

Run with the BASE commit's installed evalgate and `python -P` (docs/security.md): the PR's tree is
never on sys.path. Exit 0 (also when there is no cache: a missing cache only costs time), 2 for a
usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from evalgate.edges.score_cache import MAX_ENTRY_BYTES
from evalgate.errors import EXIT_PASS, EXIT_REFUSED, GitHubError
from evalgate.github.rest import GitHubClient, ReadOnlyToken, api_url_from_env

DEFAULT_WORKFLOW = ".github/workflows/badge.yml"
DEFAULT_ARTIFACT = "evalgate-scores"
TAR_NAME = "evalgate-scores.tar"
# How far back the runs and the base's first-parent history are searched: an older cache is not
# worth the API calls (and a miss only costs time).
MAX_RUNS = 100
MAX_HISTORY = 10_000
# A tar is trusted code's output, and still bounded: a cache is a few KB per probe.
MAX_ENTRIES = 1_000_000
MAX_TOTAL_BYTES = 4 << 30

_REPO_RE = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_SHA_RE = re.compile(r"[0-9a-f]{40}")
_WORKFLOW_RE = re.compile(r"\.github/workflows/[A-Za-z0-9_.-]+\.ya?ml")
_ARTIFACT_RE = re.compile(r"[A-Za-z0-9_.-]+")
ENTRY_RE = re.compile(r"([0-9a-f]{2})/(\1[0-9a-f]{62})\.json")


def say(message: str) -> None:
    print(f"evalgate: {message}", file=sys.stderr)


# -- find ------------------------------------------------------------------------------------------


def _get(client: GitHubClient, path: str) -> Any:
    return client.checked("GET", path).data


def _repo_of(obj: Any) -> tuple[str, Any]:
    """(full_name casefolded, id) of a repository object, or ("", None)."""
    if not isinstance(obj, dict):
        return "", None
    return str(obj.get("full_name") or "").casefold(), obj.get("id")


def _workflow_path(value: Any, repo: str, branch: str) -> str:
    """A run's `path`, as a path in the repository: GitHub may write `.github/workflows/X.yml`,
    or `OWNER/NAME/.github/workflows/X.yml@REF`; another repository's or another ref's is ''."""
    path = str(value or "")
    if "@" in path:
        path, ref = path.rsplit("@", 1)
        if ref not in (branch, f"refs/heads/{branch}"):
            return ""
    prefix = f"{repo}/"
    if path.casefold().startswith(prefix.casefold()):
        path = path[len(prefix) :]
    return path


def first_parent_history(base: str, limit: int = MAX_HISTORY) -> set[str]:
    """The commits on `base`'s first-parent line (the default branch's pushes), newest `limit`."""
    done = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", "rev-list", "--first-parent", f"--max-count={limit}", base],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        say(f"git rev-list {base[:12]} failed: {done.stderr.strip()}")
        return set()
    return set(done.stdout.split())


def why_not(
    run: Any, *, repo: str, repo_id: Any, branch: str, workflow: str, workflow_id: Any, history: set[str]
) -> str | None:
    """Why this run's artifacts are not the default branch's own, or None when they are."""
    if not isinstance(run, dict):
        return "not a run object"
    if workflow_id is not None and run.get("workflow_id") != workflow_id:
        return f"a run of another workflow ({run.get('path')!r}, {run.get('name')!r})"
    if _workflow_path(run.get("path"), repo, branch) != workflow:
        return f"a run of {run.get('path')!r}, not {workflow}"
    if run.get("event") != "push":
        return f"event {run.get('event')!r}, not a push"
    if run.get("head_branch") != branch:
        return f"a push to {run.get('head_branch')!r}, not to {branch}"
    for field in ("repository", "head_repository"):
        name, rid = _repo_of(run.get(field))
        if name != repo.casefold() or (repo_id is not None and rid != repo_id):
            return f"its {field.replace('_', ' ')} is {name or 'unknown'}, not {repo}"
    if run.get("status") != "completed" or run.get("conclusion") != "success":
        return f"{run.get('status')}/{run.get('conclusion')}, not completed/success"
    sha = str(run.get("head_sha") or "")
    if not _SHA_RE.fullmatch(sha) or sha not in history:
        return f"its commit {sha[:12] or '?'} is not on the base commit's first-parent history"
    return None


def _runs(client: GitHubClient, repo: str, workflow: str, branch: str) -> list[Any]:
    query = f"branch={quote(branch, safe='')}&event=push&status=success&per_page={MAX_RUNS}"
    data = _get(client, f"/repos/{repo}/actions/workflows/{quote(Path(workflow).name)}/runs?{query}")
    runs = data.get("workflow_runs") if isinstance(data, dict) else None
    runs = [r for r in runs or [] if isinstance(r, dict)]
    # Newest first, whatever order the server answered in.
    return sorted(runs, key=lambda r: (str(r.get("created_at") or ""), _int(r.get("id"))), reverse=True)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def _has_artifact(client: GitHubClient, repo: str, run_id: int, name: str) -> bool:
    data = _get(client, f"/repos/{repo}/actions/runs/{run_id}/artifacts?name={quote(name)}&per_page=100")
    artifacts = data.get("artifacts") if isinstance(data, dict) else None
    for artifact in artifacts or []:
        if (
            not isinstance(artifact, dict)
            or artifact.get("name") != name
            or artifact.get("expired") is not False
        ):
            continue
        owner = artifact.get("workflow_run")
        if isinstance(owner, dict) and owner.get("id") not in (None, run_id):
            continue
        return True
    return False


def find_run(client: GitHubClient, repo: str, base: str, workflow: str, artifact: str) -> int | None:
    """The newest run whose artifact `artifact` the default branch wrote (module docstring)."""
    meta = _get(client, f"/repos/{repo}")
    branch = str(meta.get("default_branch") or "") if isinstance(meta, dict) else ""
    if not branch:
        say(f"the API did not say which branch of {repo} is the default: no score cache")
        return None
    repo_id = meta.get("id")
    wf = _get(client, f"/repos/{repo}/actions/workflows/{quote(Path(workflow).name)}")
    if not isinstance(wf, dict) or wf.get("path") != workflow or wf.get("id") is None:
        say(f"the API has no workflow {workflow} in {repo}: no score cache")
        return None
    history = first_parent_history(base)
    checks = dict(
        repo=repo, repo_id=repo_id, branch=branch, workflow=workflow, workflow_id=wf["id"], history=history
    )
    for run in _runs(client, repo, workflow, branch):
        run_id = _int(run.get("id"))
        why = why_not(run, **checks)  # type: ignore[arg-type]
        if why is None and run_id > 0 and not _has_artifact(client, repo, run_id, artifact):
            why = f"no unexpired artifact {artifact}"
        if why is None:
            say(
                f"score cache: artifact {artifact} of run {run_id} ({workflow}, push to {branch} at "
                f"{str(run.get('head_sha'))[:12]})"
            )
            return run_id
        say(f"score cache: run {run.get('id')} ignored: {why}")
    say(f"no run of {workflow} on a push to {branch} holds a score cache: every probe is scored")
    return None


def find_main(args: argparse.Namespace) -> int:
    if not _REPO_RE.fullmatch(args.repo) or not _SHA_RE.fullmatch(args.base.lower()):
        say(f"expected --repo OWNER/NAME and --base a full commit SHA, got {args.repo!r} {args.base!r}")
        return EXIT_REFUSED
    if not _WORKFLOW_RE.fullmatch(args.workflow) or not _ARTIFACT_RE.fullmatch(args.artifact):
        say(f"expected --workflow .github/workflows/NAME.yml and a plain --artifact name: {args.workflow!r}")
        return EXIT_REFUSED
    token = os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN") or ""
    try:
        client = GitHubClient(token, api_url_from_env(), log=say)
        run_id = find_run(client, args.repo, args.base.lower(), args.workflow, args.artifact)
    except ReadOnlyToken as exc:
        say(f"the API refused to list runs ({exc.message}; the job needs `actions: read`): no score cache")
        return EXIT_PASS
    except GitHubError as exc:
        say(f"{exc.message}: no score cache")
        return EXIT_PASS
    if run_id is not None:
        print(f"run-id={run_id}")
    return EXIT_PASS


# -- pack and unpack -------------------------------------------------------------------------------


def cache_entries(root: Path) -> Iterator[tuple[str, Path]]:
    """(`xx/KEY.json`, path) of every entry of a cache folder: regular files under real folders."""
    with contextlib.suppress(FileNotFoundError):
        for top in sorted(os.scandir(root), key=lambda e: e.name):
            if not (re.fullmatch(r"[0-9a-f]{2}", top.name) and top.is_dir(follow_symlinks=False)):
                continue
            for entry in sorted(os.scandir(top.path), key=lambda e: e.name):
                name = f"{top.name}/{entry.name}"
                if (
                    ENTRY_RE.fullmatch(name)
                    and entry.is_file(follow_symlinks=False)
                    and entry.stat(follow_symlinks=False).st_size <= MAX_ENTRY_BYTES
                ):
                    yield name, Path(entry.path)


def pack(cache: Path, out: Path) -> int:
    """Write the entries of `cache` into the tar `out` (atomically, byte-identical for the same
    entries); the number of entries."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    count = 0
    try:
        with os.fdopen(fd, "wb") as fh, tarfile.open(fileobj=fh, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name, path in cache_entries(cache):
                data = path.read_bytes()
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), 0o644, 0
                tar.addfile(info, io.BytesIO(data))
                count += 1
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return count


def unpack(source: Path, into: Path) -> tuple[int, int]:
    """The entries of the tar `source` into the new folder `into`: (taken, left out).

    Only regular members named `<2 hex>/<64 hex>.json` (the first two hex digits repeated) of at
    most one entry's size are written, each as a new file in a folder made here; links, devices,
    folders, other names and anything past the bounds are left out. Written into a temporary
    folder and renamed: `into` holds the whole set or does not exist."""
    st = os.lstat(source)
    if not os.path.isfile(source) or os.path.islink(source) or st.st_size > MAX_TOTAL_BYTES:
        raise ValueError(f"{source} is not a regular file of at most {MAX_TOTAL_BYTES} bytes")
    if os.path.lexists(into):
        raise ValueError(f"{into} exists already: the score cache is unpacked into a new folder")
    into.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{into.name}.", dir=into.parent))
    taken = left = total = 0
    try:
        with tarfile.open(source, mode="r:") as tar:
            seen: set[str] = set()
            for member in tar:
                name = member.name.removeprefix("./")
                ok = ENTRY_RE.fullmatch(name) and member.isreg() and 0 <= member.size <= MAX_ENTRY_BYTES
                if not ok or name in seen or taken >= MAX_ENTRIES or total + member.size > MAX_TOTAL_BYTES:
                    left += 1
                    continue
                src = tar.extractfile(member)
                data = src.read(MAX_ENTRY_BYTES + 1) if src else b""
                if len(data) != member.size:
                    left += 1
                    continue
                folder = stage / name[:2]
                folder.mkdir(exist_ok=True)
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                fd = os.open(stage / name, flags, 0o644)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                seen.add(name)
                taken += 1
                total += len(data)
        os.rename(stage, into)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return taken, left


def pack_main(args: argparse.Namespace) -> int:
    count = pack(Path(args.cache), Path(args.to))
    say(f"score cache: {count} entr{'y' if count == 1 else 'ies'} packed into {args.to}")
    return EXIT_PASS


def unpack_main(args: argparse.Namespace) -> int:
    try:
        taken, left = unpack(Path(args.source), Path(args.into))
    except (OSError, ValueError, tarfile.TarError) as exc:
        say(f"score cache not unpacked ({exc}): every probe is scored")
        return EXIT_PASS
    extra = f"; {left} other member(s) left out" if left else ""
    say(f"score cache: {taken} entr{'y' if taken == 1 else 'ies'} unpacked into {args.into}{extra}")
    return EXIT_PASS


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evalgate.github.trusted_cache", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    find = sub.add_parser("find", help="print run-id=ID of the default branch's newest score cache")
    find.add_argument("--repo", required=True, help="OWNER/NAME (github.repository)")
    find.add_argument("--base", required=True, help="the base commit the gate trusts (a full SHA)")
    find.add_argument(
        "--workflow", default=DEFAULT_WORKFLOW, help=f"the workflow file (default {DEFAULT_WORKFLOW})"
    )
    find.add_argument(
        "--artifact", default=DEFAULT_ARTIFACT, help=f"the artifact (default {DEFAULT_ARTIFACT})"
    )
    packer = sub.add_parser("pack", help="a cache folder's entries into one tar")
    packer.add_argument("--cache", required=True)
    packer.add_argument("--to", required=True)
    unpacker = sub.add_parser("unpack", help="a tar's entries into a new cache folder")
    unpacker.add_argument("--from", dest="source", required=True)
    unpacker.add_argument("--into", required=True)
    args = parser.parse_args(argv)
    return {"find": find_main, "pack": pack_main, "unpack": unpack_main}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
