"""What the configured baseline remembers of the sealed set, checked without the manifest.

The manifest's lock catches a deleted or changed probe only while the manifest is kept; a probe
deleted together with its lock line, or a manifest re-sealed from scratch, loses that memory.
The baseline the gate compares against recorded every probe it scored (id -> content hash) and
the probe-set version: those are checked here (docs/probes.md, "Sealed history").

`deleted-since-baseline` is its own check so that an approved gate change (docs/approval.md)
can accept it at run time; `evalgate validate` refuses it.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalgate.types import Finding

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
    manifest_version: str | None, baseline_version: object, manifest_file: str, baseline_file: str
) -> list[Finding]:
    """The manifest's version is older than the one the baseline was scored with."""
    if manifest_version is None or not isinstance(baseline_version, str):
        return []
    now, then = _version_key(manifest_version), _version_key(baseline_version)
    if now is None or then is None or now >= then:
        return []
    return [
        Finding(
            "manifest-version-back",
            f"the probe-set version {manifest_version} is older than {baseline_version}, which the "
            f"baseline {baseline_file} was scored with: a version never goes back",
            manifest_file,
            field="version",
            hint=HINT_VERSION,
            evidence={"manifest": manifest_version, "baseline": baseline_version},
        )
    ]
