"""`evalgate probes deprecate ID [--suite NAME] [--replacement FILE] [--bump patch]`: retire a probe,
add its successor.

With `suites:` (docs/suites.md) the id is looked up in every suite's files (or --suite's alone),
and the change is checked and sealed as that suite's, in its own manifest; a multiple-choice
suite's replacement is an item, checked as `probes import` checks one.

The probe's line gets `"deprecated": true` in place (every other byte of the file stays); the
probe stays in the file and is never scored again. Its content hash does not cover `deprecated`,
so the manifest's lock still holds. The replacement (a JSON object, or a one-line JSONL file)
is checked like an imported row, must carry a new id, and is appended to the retired probe's
file (or, for another category, to that category's file). The would-be set is validated, written
atomically and re-sealed by probeset_io.py, the edge `probes import` shares.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
from pathlib import Path
from typing import Any

from evalgate.config import GateConfig
from evalgate.console import Console
from evalgate.errors import EXIT_PASS, EXIT_REFUSED, RefusedError
from evalgate.probeset.authoring import deprecated_line, next_id, parse_import_jsonl, plan_import, probe_line
from evalgate.probeset.records import expected_category
from evalgate.probeset_io import (
    ProbeSet,
    SetFile,
    appended,
    check_change,
    editable_config,
    import_items,
    read_edit_input,
    read_set,
    write_and_seal,
)
from evalgate.types import CATEGORIES, Finding


def _hit(probe_set: ProbeSet, pid: str) -> tuple[SetFile, int, dict[str, Any]] | None:
    for f in probe_set.files:
        for line, rec in f.records:
            if rec.get("id") == pid:
                return f, line, rec
    return None


def _find(
    cfg: GateConfig, pid: str, suite: str | None
) -> tuple[GateConfig, ProbeSet, SetFile, int, dict[str, Any]]:
    """The configuration (a suite's view with `suites:`) and set holding `pid`, its file, line and
    record. With `suites:` every suite's files are searched (docs/suites.md), or --suite's alone."""
    if suite is not None and not cfg.suites:
        cfg.suite_named(suite)  # refused: no `suites:`
    views = [cfg.for_suite(s) for s in ([cfg.suite_named(suite)] if suite else cfg.suites)] or [cfg]
    sets = []
    for view in views:
        probe_set = read_set(view)
        hit = _hit(probe_set, pid)
        if hit is not None:
            return view, probe_set, *hit
        sets.append(probe_set)
    known = [i for s in sets for _, _, i in s.ids]
    close = difflib.get_close_matches(pid, known, n=3)
    raise RefusedError(
        f"no probe with id '{pid}' in {', '.join(f.display for s in sets for f in s.files)}",
        hint=f"did you mean {', '.join(close)}?"
        if close
        else "`evalgate probes export --format jsonl` lists every id",
    )


def _rewrite(data: bytes, line: int, rec: dict[str, Any]) -> bytes:
    lines = data.split(b"\n")
    lines[line - 1] = deprecated_line(lines[line - 1].decode("utf-8"), rec).encode("utf-8")
    return b"\n".join(lines)


def _replacement(name: str) -> tuple[dict[str, Any] | None, list[Finding]]:
    """A JSON object (pretty-printed is fine) or a JSONL file of exactly one line."""
    data = read_edit_input(name)
    records, found = parse_import_jsonl(data, name)  # one line: its reader catches duplicate keys too
    if not found and len(records) == 1:
        return records[0][1], []
    try:
        obj = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # RecursionError: nested past Python's limit
        obj = None
    if isinstance(obj, dict):
        return obj, []
    if found:
        return None, found
    msg = f"holds {len(records)} probes; a replacement is exactly one"
    hint = "to add several probes, deprecate without --replacement and use `evalgate probes import`"
    return None, [Finding("replacement", msg, name, hint=hint)]


def _add_replacement(
    args: argparse.Namespace, probe_set: ProbeSet, old_file: SetFile, contents: dict[Path, bytes]
) -> tuple[list[Finding], dict[tuple[str, int], tuple[str, int]], str]:
    """Check the replacement like an imported row and stage it: (problems, origin, "id at file:line")."""
    rec, problems = _replacement(args.replacement)
    if rec is None:
        return problems, {}, ""
    reused = rec.get("id") == args.id
    if reused:
        taken = {pid for _, _, pid in probe_set.ids}
        msg = "the replacement reuses the id of the probe it retires (a sealed id never changes meaning)"
        hint = f"give the replacement a new id, e.g. {next_id(args.id, taken)}"
        problems.append(Finding("replacement-id", msg, args.replacement, 1, args.id, "id", hint))
    # The retired probe's file, unless the replacement belongs to the other category.
    category = rec.get("category")
    same = category not in CATEGORIES or category == expected_category(old_file.display)
    plan = plan_import(
        [(1, rec)],
        args.replacement,
        existing_ids=probe_set.ids,
        existing=[
            dataclasses.replace(p, deprecated=True) if p.id == args.id else p for p in probe_set.probes
        ],
        grammar=probe_set.grammar,
        destinations=probe_set.destinations(),
        into=old_file.display if same else None,
    )
    problems += [f for f in plan.problems if not (reused and f.check == "duplicate-id")]
    if problems:
        return problems, {}, ""
    dest, [(_, probe)] = next(iter(plan.additions.items()))
    target = next(f for f in probe_set.files if f.display == dest)
    contents[target.path], line = appended(contents.get(target.path, target.data), [probe_line(probe)])
    return [], {(dest, line): (args.replacement, 1)}, f"{probe.id} at {dest}:{line}"


def _add_item_replacement(
    args: argparse.Namespace,
    cfg: GateConfig,
    old_file: SetFile,
    old: tuple[int, dict[str, Any]],
    contents: dict[Path, bytes],
) -> tuple[list[Finding], dict[tuple[str, int], tuple[str, int]], str]:
    """A multiple-choice suite's replacement: checked as `probes import` checks an item, appended
    to the retired item's file."""
    rec, problems = _replacement(args.replacement)
    if rec is None:
        return problems, {}, ""
    reused = rec.get("id") == args.id
    if reused:
        msg = "the replacement reuses the id of the item it retires (a sealed id never changes meaning)"
        problems.append(
            Finding("replacement-id", msg, args.replacement, 1, args.id, "id", "give it a new id")
        )
    line_bytes = (json.dumps(rec, ensure_ascii=False) + "\n").encode("utf-8")
    imported = import_items(cfg, args.replacement, line_bytes, None, into=old_file.display)
    problems += [f for f in imported.plan.problems if not (reused and f.check == "duplicate-id")]
    if problems or not imported.plan.additions:
        return problems, {}, ""
    (dest, first), [(_, item)] = next(iter(imported.staged.first_line.items())), imported.plan.additions
    for path, data in imported.staged.contents.items():
        if path == old_file.path:  # the retired item keeps its line: the new one is appended
            data = _rewrite(data, *old)
        contents[path] = data
    return [], imported.staged.origin, f"{item.id} at {dest}:{first}"


def main(args: argparse.Namespace, console: Console) -> int:
    cfg, probe_set, old_file, old_line, old = _find(
        editable_config(args.config), args.id, getattr(args, "suite", None)
    )
    where = f"{old_file.display}:{old_line}"
    if old.get("deprecated") is True:
        raise RefusedError(
            f"{where}: probe {args.id} is already deprecated",
            hint="to add a probe on its own, use `evalgate probes import FILE`",
        )
    assert old_file.data is not None  # the probe was read from it
    contents = {old_file.path: _rewrite(old_file.data, old_line, old)}
    refused = f"evalgate probes deprecate: refused; {args.id} stays as it is (nothing was written)"
    origin: dict[tuple[str, int], tuple[str, int]] = {}
    added = ""
    if args.replacement and cfg.is_items:
        problems, origin, added = _add_item_replacement(args, cfg, old_file, (old_line, old), contents)
        if problems:
            console.refusal(refused, problems)
            return EXIT_REFUSED
    elif args.replacement:
        problems, origin, added = _add_replacement(args, probe_set, old_file, contents)
        if problems:
            console.refusal(refused, problems)
            return EXIT_REFUSED
    checked = check_change(cfg, contents, origin)
    if checked.on_rows or checked.on_set:
        console.refusal(refused, checked.on_rows + checked.on_set)
        return EXIT_REFUSED
    sealed = write_and_seal(cfg, contents, checked.outcome, args.bump or "patch")
    print(f'evalgate: deprecated {args.id} at {where} ("deprecated": true; its content hash is unchanged)')
    if added:
        print(f"evalgate: appended its replacement {added}")
    print(f"evalgate: {sealed}")
    print("next: commit the probe files and the manifest together (`evalgate validate` exits 0)")
    return EXIT_PASS
