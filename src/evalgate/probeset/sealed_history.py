"""What the configured baseline remembers of the sealed set, checked without the manifest.

The manifest's lock catches a deleted or changed probe only while the manifest is kept; a probe
deleted together with its lock line, or a manifest re-sealed from scratch, loses that memory.
The baseline the gate compares against recorded every probe it scored (id -> content hash) and
the probe-set version: those are checked here (docs/probes.md, "Sealed history").

`deleted-since-baseline` is its own check so that an approved gate change (docs/approval.md)
can accept it at run time; `evalgate validate` refuses it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from evalgate.probeset.manifest import HINT_CHANGED
from evalgate.types import Finding, Probe

HINT_DELETED = (
    'put the probe back with "deprecated": true (a sealed probe is retired, never deleted); if the '
    "baseline is out of date, update it with `evalgate baseline update`"
)
HINT_VERSION = (
    "restore the manifest from version control; a probe-set version only moves forward "
    "(`evalgate probes seal --bump` moves it)"
)


def _version_key(version: str) -> tuple[int, ...] | None:
    parts = version.split(".")
    if len(parts) != 3 or not all(p.isdigit() and p.isascii() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def deleted_since_baseline(
    baseline_hashes: Mapping[str, str], seen_ids: set[str], baseline_file: str, probe_files: str
) -> list[Finding]:
    """Ids the baseline scored that are in no probe file (deprecated probes count as present)."""
    return [
        Finding(
            "deleted-since-baseline",
            f"the baseline {baseline_file} scored this probe, but it is in no probe file ({probe_files}): "
            "a sealed probe is deprecated, never deleted",
            baseline_file,
            None,
            pid,
            "id",
            HINT_DELETED,
            evidence={"baseline": baseline_file, "content_hash": baseline_hashes[pid]},
        )
        for pid in sorted(set(baseline_hashes) - seen_ids)
    ]


def version_set_back(
    manifest_version: str | None,
    baseline_version: object,
    manifest_file: str,
    baseline_file: str,
    suite: str | None = None,
) -> list[Finding]:
    """The manifest's version is older than the one the baseline was scored with."""
    if manifest_version is None or not isinstance(baseline_version, str):
        return []
    now, then = _version_key(manifest_version), _version_key(baseline_version)
    if now is None or then is None or now >= then:
        return []
    whose = f"suite {suite}: the manifest version" if suite else "the probe-set version"
    return [
        Finding(
            "manifest-version-back",
            f"{whose} {manifest_version} is older than {baseline_version}, which the "
            f"baseline {baseline_file} was scored with: a version never goes back",
            manifest_file,
            field="version",
            hint=HINT_VERSION,
            evidence={
                "manifest": manifest_version,
                "baseline": baseline_version,
                **({"suite": suite} if suite else {}),
            },
        )
    ]


def baseline_suite_versions(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """suite -> the manifest version a baseline scored it at; None when the baseline knows no
    suites (a configuration without `suites:`, read as the whole set's `probe_set.version`).

    Read from `probe_set.suites` (a baseline document or a results.json of several suites), else
    `yardstick.suite_versions`, else, for a baseline of one suite, that suite's name in its
    pinned configuration with the set's version (docs/suites.md)."""
    probe_set = doc.get("probe_set")
    probe_set = probe_set if isinstance(probe_set, Mapping) else {}
    suites = probe_set.get("suites")
    if isinstance(suites, Mapping):
        return {n: r.get("version") for n, r in suites.items() if isinstance(r, Mapping)}
    yardstick = doc.get("yardstick")
    recorded = yardstick.get("suite_versions") if isinstance(yardstick, Mapping) else None
    if isinstance(recorded, Mapping):
        return dict(recorded)
    config = doc.get("config")
    pinned = config.get("suites") if isinstance(config, Mapping) else None
    if isinstance(pinned, Mapping) and len(pinned) == 1:
        return {next(iter(pinned)): probe_set.get("version")}
    return None


def _baseline_version(doc: Mapping[str, Any], suite: str | None, only_suite: bool) -> object:
    """The version the baseline scored this set (or this suite of the run) at."""
    probe_set = doc.get("probe_set")
    whole = probe_set.get("version") if isinstance(probe_set, Mapping) else None
    if suite is None:
        return whole
    per_suite = baseline_suite_versions(doc)
    if per_suite is not None:
        return per_suite.get(suite)  # a suite the baseline did not score has no version to keep
    return whole if only_suite else None  # a baseline from before `suites:`: its one set


def baseline_findings(
    data: bytes,
    shown: str,
    found: Sequence[Finding],
    probes: Sequence[Probe],
    seen: set[str] | None,
    manifest_version: str | None,
    manifest_shown: str,
    suite: str | None = None,
    only_suite: bool = True,
) -> list[Finding]:
    """Findings against the configured baseline's bytes; `seen` = every id in the files (None:
    unknown), `found` the findings so far (a lock change the manifest reported is not repeated).
    `suite` names the suite whose manifest `manifest_version` is (None: the configuration has no
    `suites:`), `only_suite` whether it is the run's only one. A baseline that is not valid JSON
    is left to `run`, which reports it."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return []
    hashes = _baseline_hashes(doc)
    already = {f.probe_id for f in found if f.check in ("lock-changed", "manifest-lock-edited")}
    out = _baseline_lock(hashes, shown, already, probes)
    if seen is not None:
        files = ", ".join(sorted({p.file for p in probes})) or "none read"
        out += deleted_since_baseline(hashes, seen, shown, files)
    if isinstance(doc, dict):
        then = _baseline_version(doc, suite, only_suite)
        out += version_set_back(manifest_version, then, manifest_shown, shown, suite)
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

    Immutability holds against the baseline as well as the manifest's lock (docs/probes.md,
    "Sealed history"), so a changed probe is refused even when the manifest was deleted or never
    written. A baseline
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
