"""The configured baseline as a record of the sealed set: edits, deletions, the version.

Read by `validate` next to the manifest: what the baseline scored is checked even when the
manifest was deleted, re-sealed from scratch or edited (probeset/sealed_history.py). A baseline
that is missing or unreadable is left to `run`, which reports it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from evalgate.config import GateConfig
from evalgate.edges.input_files import read_input
from evalgate.edges.inputs import input_problem
from evalgate.probeset.manifest import HINT_CHANGED
from evalgate.probeset.sealed_history import deleted_since_baseline, version_set_back
from evalgate.types import Finding, Probe


def baseline_findings(
    cfg: GateConfig,
    show: Callable[[Path], str],
    found: Sequence[Finding],
    probes: Sequence[Probe],
    seen: set[str] | None,
    manifest_version: str | None,
    manifest_shown: str,
    roots: Sequence[Path] = (),
) -> list[Finding]:
    """Findings against the configured baseline; `seen` = every id in the files (None: unknown)."""
    if cfg.baseline is None:
        return []
    path = cfg.path(cfg.baseline)
    if roots and input_problem(path, roots):
        return []  # outside the repository or not a regular file: `run` refuses it, naming why
    try:
        doc = json.loads(read_input(path, "baseline"))
    except (OSError, ValueError, RecursionError):
        return []
    shown = show(path)
    hashes = _baseline_hashes(doc)
    already = {f.probe_id for f in found if f.check in ("lock-changed", "manifest-lock-edited")}
    out = _baseline_lock(hashes, shown, already, probes)
    if seen is not None:
        files = ", ".join(sorted({p.file for p in probes})) or "none read"
        out += deleted_since_baseline(hashes, seen, shown, files)
    probe_set = doc.get("probe_set") if isinstance(doc, dict) else None
    if isinstance(probe_set, dict):
        out += version_set_back(manifest_version, probe_set.get("version"), manifest_shown, shown)
    return out


def _baseline_hashes(doc: Any) -> dict[str, str]:
    """id -> content hash recorded by a baseline file (`outcomes`) or a results.json (`probes`)."""
    if not isinstance(doc, dict):
        return {}
    out: dict[str, str] = {}
    outcomes = doc.get("outcomes")
    if isinstance(outcomes, dict):
        for pid, entry in outcomes.items():
            if isinstance(entry, dict) and isinstance(entry.get("content_hash"), str):
                out[pid] = entry["content_hash"]
    entries = doc.get("probes")
    if isinstance(entries, list):
        for entry in entries:
            if (
                isinstance(entry, dict)
                and isinstance(entry.get("id"), str)
                and isinstance(entry.get("content_hash"), str)
            ):
                out[entry["id"]] = entry["content_hash"]
    return out


def _baseline_lock(
    hashes: Mapping[str, str], shown: str, already: set[str | None], probes: Sequence[Probe]
) -> list[Finding]:
    """Probes whose content differs from what the configured baseline recorded under their id.

    docs/validate.md (`lock-changed`): immutability holds against the baseline as well as the lock, so
    a changed probe is refused even when the manifest was deleted or never written. A baseline
    that is missing or unreadable is left to `run`, which reports it; the manifest's own
    lock-changed finding is not repeated.
    """
    out = []
    for p in probes:
        old, now = hashes.get(p.id), p.content_hash()
        if old is None or old == now or p.id in already:
            continue
        out.append(
            Finding(
                "lock-changed",
                f"changed since the baseline {shown} scored it (content hash there {old[:12]}…, now "
                f"{now[:12]}…): deprecate it and add a replacement with a new id",
                p.file,
                p.line,
                p.id,
                None,
                HINT_CHANGED,
                evidence={"baseline": shown, "sealed": old, "now": now},
            )
        )
    return out
