"""Whether a pull request's baseline history only extends the base's: the label's second check.

    python -P -m evalgate.github.history_scope --base SHA [--head REF]

Run by eval-gate.yml's restore step with the BASE commit's evalgate (never the PR's code), under
the label evalgate:update-baseline. The history and the anchor beside the base configuration's
baseline (gate/history.py) are gate inputs restored from the base commit like the baseline; under
the label the PR's copies are taken only when the PR's history is the base's history with lines
added (byte for byte a prefix), every line chained, and the anchor file the one the last anchor
line names. A history the base does not have yet must start with the base's own baseline as its
anchor: a pull request never chooses the first anchor (docs/approval.md, docs/gate.md "Drift").

Prints, exit 0 (any other exit, or any other line, and the restore step takes none of the PR's
files: it fails closed):

    history-path=P     the history and the anchor paths (always, both)
    history-take=P     each of them the PR may bring (none when the check fails; it says why)

A PR without the label never gets here: its history is the base's, and a change of it is a gate
change refused unless approved (--base-inputs-changed).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from evalgate.errors import EXIT_REFUSED, ConfigError, RefusedError
from evalgate.gate import history as hist
from evalgate.github.git_tree import GitTree, TreeError
from evalgate.github.pr_scope import _PLAIN, config_at

BYTES = 256 << 20  # the baseline's cap (edges/input_files.py)


class Refused(Exception):
    pass


def _file(tree: GitTree, path: str) -> bytes | None:
    """The regular file at `path` in `tree`, reached through no link; None when absent."""
    where = tree.resolve(path)
    if where.problem or where.links or where.path != path:
        raise Refused(f"{path} at {tree.rev[:12]}: reached through a symbolic link")
    if path not in tree.entries:
        return None
    data = tree.read(path, BYTES)
    if data is None:
        raise Refused(f"{path} at {tree.rev[:12]}: not a regular file (or too large)")
    return data


def paths_of(base: GitTree) -> tuple[str, str, str] | None:
    """(baseline, history, anchor) as the base configuration names them; None when it names no
    baseline (then there is no history to check)."""
    try:
        cfg = config_at(base)
    except ConfigError as exc:
        raise Refused(f"the base configuration cannot be read: {exc.message}") from None
    baseline = (cfg or {}).get("baseline")
    if not isinstance(baseline, str) or baseline.lower() == "none":
        return None
    history, anchor = hist.history_paths(baseline)
    for path in (history, anchor):
        if not _PLAIN.fullmatch(path):
            raise Refused(f"{path!r} is not a plain path")
    return baseline, history, anchor


def check(base: GitTree, head: GitTree, baseline: str, history: str, anchor: str) -> list[str]:
    """The paths of (history, anchor) the PR may bring; Refused saying why when none."""
    base_history, head_history = _file(base, history), _file(head, history)
    base_anchor, head_anchor = _file(base, anchor), _file(head, anchor)
    if head_history is None:
        if base_history is not None or head_anchor is not None:
            raise Refused(f"{history}: the PR removes the history (it is append-only)")
        return []
    if head_history == base_history and head_anchor == base_anchor:
        return []  # unchanged: the base's copies are the PR's
    try:
        records = hist.parse_history(head_history, history)
    except RefusedError as exc:
        raise Refused(exc.message) from None
    if base_history is not None:
        if not head_history.startswith(base_history):
            raise Refused(f"{history}: the PR rewrites lines of the base's history (it may only add lines)")
    else:
        where = base.resolve(baseline)  # the baseline itself may sit behind a link of the base
        base_baseline = None if where.problem else base.read(where.path, BYTES)
        first = records.records[0] if records.records else None
        if base_baseline is None or first is None or first["anchor_sha256"] != hist.sha256_hex(base_baseline):
            raise Refused(
                f"{history}:1: field anchor_sha256: a new history must start from the base's baseline "
                f"{baseline} as its anchor"
            )
    if head_anchor is None or hist.sha256_hex(head_anchor) != records.anchor_sha256:
        raise Refused(f"{anchor}: not the anchor the PR's history names")
    return [history, anchor]


def decide(base_rev: str, head_rev: str) -> tuple[list[str], list[str]]:
    """(history-path lines, history-take lines)."""
    try:
        base, head = GitTree(base_rev), GitTree(head_rev)
    except TreeError as exc:
        raise Refused(str(exc)) from None
    named = paths_of(base)
    if named is None:
        return [], []
    baseline, history, anchor = named
    paths = [f"history-path={history}", f"history-path={anchor}"]
    try:
        taken = check(base, head, baseline, history, anchor)
    except Refused as exc:
        print(f"evalgate: the PR's baseline history is not taken: {exc}", file=sys.stderr)
        taken = []
    return paths, [f"history-take={p}" for p in taken]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evalgate.github.history_scope", description=__doc__)
    parser.add_argument("--base", required=True, help="the base branch's commit")
    parser.add_argument("--head", default="HEAD", help="the PR's commit (default HEAD)")
    args = parser.parse_args(argv)
    try:
        paths, taken = decide(args.base, args.head)
    except Refused as exc:
        print(f"evalgate: refused: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    for line in (*paths, *taken):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
