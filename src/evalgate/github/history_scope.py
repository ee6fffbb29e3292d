"""Whether a pull request's baseline history only extends the base's: the label's second check.

    python -P -m evalgate.github.history_scope --base SHA [--head REF]

Run by eval-gate.yml's restore step with the BASE commit's evalgate (never the PR's code), under
the label evalgate:update-baseline. The history and the anchor beside the base configuration's
baseline (gate/history.py) are gate inputs restored from the base commit like the baseline; under
the label the PR's copies are taken only when the PR's history is exactly what `evalgate baseline
update` writes when it replaces the base's baseline by the PR's: the base's bytes plus one update
line (the first time, the anchor line at the base's baseline before it), and the anchor file the
base's (the first time, the base's baseline). A pull request never chooses an anchor nor adds
other lines (docs/approval.md, docs/gate.md "Drift").

Prints, exit 0 (any other exit, or any other line, and the restore step takes none of the PR's
files: it fails closed):

    history-path=P     the history and the anchor paths (always, both)
    history-take=P     each of them the PR may bring (none when the check fails; it says why)

A PR without the label never gets here: its history is the base's, and a change of it is a gate
change refused unless approved (--base-inputs-changed).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from evalgate.errors import EXIT_REFUSED, ConfigError, RefusedError
from evalgate.gate import history as hist
from evalgate.gate.baseline import replaced_document
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


def _baseline_at(tree: GitTree, path: str, *, through_links: bool) -> bytes | None:
    """The baseline file's bytes in `tree` (the base's may sit behind a link of the base; the PR's
    is read only as the regular file the restore step takes)."""
    if not through_links:
        return _file(tree, path)
    where = tree.resolve(path)
    return None if where.problem else tree.read(where.path, BYTES)


def check(base: GitTree, head: GitTree, baseline: str, history: str, anchor: str) -> list[str]:
    """The paths of (history, anchor) the PR may bring; Refused saying why when none.

    The label approves the one update `evalgate baseline update` writes, nothing else: the PR's
    history must be, byte for byte, the base's with exactly that line added (replacing the base's
    baseline, with its per-slice numbers, by the PR's baseline file), computed here with the
    command's own function (gate/history.after_update); the anchor file stays the base's, or, for a
    first history, is the base's baseline. Any other line (an anchor a PR chose, padding updates
    that spend the drift alpha) is a gate change: re-anchoring is `evalgate baseline anchor` with
    evalgate:approve-gate-change (docs/gate.md "Drift", docs/approval.md)."""
    base_history, head_history = _file(base, history), _file(head, history)
    base_anchor, head_anchor = _file(base, anchor), _file(head, anchor)
    if head_history is None:
        if base_history is not None or head_anchor is not None:
            raise Refused(f"{history}: the PR removes the history (it is append-only)")
        return []
    if head_history == base_history and head_anchor == base_anchor:
        return []  # unchanged: the base's copies are the PR's
    try:
        hist.parse_history(head_history, history)  # a broken line is named, file:line:field
        before = hist.parse_history(base_history, history) if base_history is not None else hist.History()
    except RefusedError as exc:
        raise Refused(exc.message) from None
    old = _baseline_at(base, baseline, through_links=True)
    new = _baseline_at(head, baseline, through_links=False)
    if old is None or new is None or old == new:
        raise Refused(f"{history}: changed, but the PR does not replace the base's baseline {baseline}")
    doc = replaced_document(old, baseline)
    if base_history is None and doc is None:
        raise Refused(f"{history}: the base's {baseline} is no valid baseline: no history is written for it")
    try:
        name = json.loads(new).get("name")
    except (ValueError, RecursionError, AttributeError):
        name = None
    if not isinstance(name, str):
        raise Refused(f"{baseline}: the PR's baseline names no baseline (field name)")
    if head_history != hist.after_update(before, name, old, doc, new):
        added = len(head_history.splitlines()) - len(before.records)
        raise Refused(
            f"{history}: not the base's history plus the one line `evalgate baseline update` writes for "
            f"{baseline} (the PR's history has {added} line(s) more than the base's; the label approves "
            "that one update line only, any other change is a gate change)"
        )
    if head_anchor != (base_anchor if base_history is not None else old):
        raise Refused(
            f"{anchor}: the PR changes the anchor (only `evalgate baseline anchor`, approved as a gate "
            "change, moves it)"
        )
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
