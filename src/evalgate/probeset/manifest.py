"""The sealed manifest (docs/validate.md): file hashes, the probe-set version and digest, the probe lock.

```
{"schema_version": 1, "version": "0.1.0", "digest": "<sha256>", "n_probes": 80,
 "files": {"probes.jsonl": {"sha256": "...", "cases": 60}, ...},   # keys relative to the manifest
 "lock": {"<id>": "<Probe.content_hash()>", ...},                   # every id ever sealed
 "lock_fields": {"fields": [...CONTENT_FIELDS], "hashes": {"<id>": "h1.h2...."}}}
```

The lock is append-only: an id once sealed keeps its content hash forever (deprecated ones
included), so a probe cannot be changed silently and reports stay comparable over time. The
per-field short hashes only serve the message: they say *which* field of a locked probe changed.
Sealing refuses a set that breaks the lock: otherwise re-sealing would launder the change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema

from evalgate.types import CONTENT_FIELDS, Finding, Probe, canonical_json, sha256_text

SCHEMA_VERSION = 1
FIRST_VERSION = "0.1.0"
BUMPS = ("patch", "minor", "major")

# Findings that sealing resolves (they say "the files changed since the last seal").
SEALABLE_CHECKS = frozenset(
    {"manifest-file-changed", "manifest-file-unsealed", "manifest-digest", "manifest-lock"}
)

HINT_RESEAL = "if the change is intended, re-seal with `evalgate probes seal` (it bumps the version)"
# A file not in the manifest is often one given with --probes: `probes seal` without the same
# --probes seals the configured set only, and the run stays refused.
HINT_SEAL_NEW_FILE = (
    "if the file belongs to the set, seal the set with it: list it under `probes:` in evalgate.yml "
    "and run `evalgate probes seal`, or pass the same files: `evalgate probes seal --probes FILE ...`"
)
HINT_CHANGED = (
    "a sealed probe never changes: restore it, then deprecate it and add a replacement with a new id "
    '("deprecated": true keeps it in the file, unscored)'
)
HINT_LOCK_EDITED = (
    "restore the manifest from version control; if the entry was mistyped, delete that lock entry and "
    "re-seal with `evalgate probes seal` (it locks the probe again with the content the file holds)"
)
HINT_REMOVED = 'deprecate instead of deleting: put the probe back with "deprecated": true'

_SHA = {"type": "string", "pattern": r"^[0-9a-f]{64}$(?!\n)"}
MANIFEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["schema_version", "version", "digest", "files", "lock"],
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "version": {"type": "string", "pattern": r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$(?!\n)"},
        "digest": _SHA,
        "n_probes": {"type": "integer", "minimum": 0},
        "files": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["sha256", "cases"],
                "properties": {"sha256": _SHA, "cases": {"type": "integer", "minimum": 0}},
            },
        },
        "lock": {"type": "object", "additionalProperties": _SHA},
        "lock_fields": {
            "type": "object",
            "properties": {
                "fields": {"type": "array", "items": {"type": "string"}},
                "hashes": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
    },
}


@dataclass(frozen=True)
class ProbeFile:
    """One probe file as the manifest sees it: `key` relative to the manifest, `display` for messages."""

    key: str
    display: str
    sha256: str
    cases: int


def probe_set_digest(probes: Iterable[Probe]) -> str:
    """SHA-256 of the canonical JSON list of every probe record, sorted by id (deprecated included)."""
    records = [p.to_record() for p in sorted(probes, key=lambda p: p.id)]
    return sha256_text(canonical_json(records))


def bump_version(version: str, part: str) -> str:
    major, minor, patch = (int(x) for x in version.split("."))
    if part == "major":
        return f"{major + 1}.0.0"
    if part == "minor":
        return f"{major}.{minor + 1}.0"
    if part == "patch":
        return f"{major}.{minor}.{patch + 1}"
    raise ValueError(f"unknown version part {part!r}; use one of {', '.join(BUMPS)}")


def _field_hashes(probe: Probe) -> str:
    rec = probe.to_record()
    rec["kind"] = probe.kind
    return ".".join(sha256_text(canonical_json(rec.get(f)))[:8] for f in probe.content_fields())


def manifest_problems(doc: Any) -> list[str]:
    """Structural problems of a parsed manifest (it is a file people can edit by hand)."""
    validator = jsonschema.Draft202012Validator(MANIFEST_SCHEMA)
    out = []
    for err in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        out.append(f"{where}: {err.message[:200]}")
    return out


def _changed_fields(manifest: Mapping[str, Any], probe: Probe) -> list[str]:
    detail = manifest.get("lock_fields") or {}
    fields, old = detail.get("fields"), (detail.get("hashes") or {}).get(probe.id)
    if not isinstance(fields, list) or not isinstance(old, str):
        return []
    before = dict(zip(fields, old.split("."), strict=False))
    names = probe.content_fields()
    now = dict(zip(names, _field_hashes(probe).split("."), strict=True))
    return [f for f in names if f in before and before[f] != now[f]]


def lock_findings(
    manifest: Mapping[str, Any],
    manifest_file: str,
    probes: Sequence[Probe],
    seen_ids: set[str] | None,
    unchanged_files: frozenset[str] = frozenset(),
) -> list[Finding]:
    """Locked probes whose content changed; with `seen_ids` (all ids in the files) also vanished ids.

    A probe in one of `unchanged_files` (bytes equal to the sealed ones) was sealed as it reads
    now, so a lock entry that disagrees was edited in the manifest: that is said, not blamed on
    the probe.
    """
    lock: Mapping[str, str] = manifest.get("lock") or {}
    out: list[Finding] = []
    for p in probes:
        sealed = lock.get(p.id)
        now = p.content_hash()
        if sealed is None or sealed == now:
            continue
        if p.file in unchanged_files:
            out.append(
                Finding(
                    "manifest-lock-edited",
                    f"the probe lock in {manifest_file} holds {sealed[:12]}… for this probe, but its file "
                    f"{p.file} still matches the seal and the probe hashes to {now[:12]}… (was the manifest "
                    "edited by hand?)",
                    manifest_file,
                    None,
                    p.id,
                    "lock",
                    HINT_LOCK_EDITED,
                    evidence={"sealed": sealed, "now": now, "probe_at": f"{p.file}:{p.line}"},
                )
            )
            continue
        fields = _changed_fields(manifest, p)
        what = f"field(s) {', '.join(fields)}" if fields else "its content"
        out.append(
            Finding(
                "lock-changed",
                f"changed after it was sealed ({what}; sealed content hash {sealed[:12]}…, "
                f"now {now[:12]}…): deprecate it and add a replacement with a new id",
                p.file,
                p.line,
                p.id,
                fields[0] if fields else None,
                HINT_CHANGED,
                evidence={"sealed": sealed, "now": now, "fields": fields},
            )
        )
    if seen_ids is not None:
        for pid in sorted(set(lock) - seen_ids):
            out.append(
                Finding(
                    "lock-removed",
                    "sealed, but in no probe file any more: deprecate instead of deleting",
                    manifest_file,
                    None,
                    pid,
                    "id",
                    HINT_REMOVED,
                )
            )
    return out


def _first_difference(
    manifest: Mapping[str, Any], file: str, probes: Sequence[Probe]
) -> tuple[int, str, str, str] | None:
    """(line, probe id, field, words) of the first probe of a changed file the lock tells apart.

    A probe whose id was never sealed is new; one whose content hash differs changed (the
    per-field hashes name the field). Edits the lock cannot see (explanation, source,
    deprecated, formatting) leave the file-level finding unlocated.
    """
    lock: Mapping[str, str] = manifest.get("lock") or {}
    for p in sorted((p for p in probes if p.file == file), key=lambda p: p.line):
        sealed = lock.get(p.id)
        if sealed is None:
            return p.line, p.id, "id", f"first difference: line {p.line}, probe {p.id} is new since the seal"
        if sealed != p.content_hash():
            fields = _changed_fields(manifest, p)
            what = f"field(s) {', '.join(fields)}" if fields else "its content"
            return (
                p.line,
                p.id,
                fields[0] if fields else "id",
                f"first difference: line {p.line}, probe {p.id} changed ({what})",
            )
    return None


def check_manifest(
    manifest: Mapping[str, Any],
    manifest_file: str,
    files: Sequence[ProbeFile],
    probes: Sequence[Probe],
    seen_ids: set[str] | None,
) -> tuple[list[Finding], list[Finding]]:
    """(findings, warnings) of a structurally valid manifest against the files read now.

    `seen_ids` is None when some line could not be parsed (an id we cannot see is not "deleted").
    """
    findings: list[Finding] = []
    warnings: list[Finding] = []
    sealed: Mapping[str, Mapping[str, Any]] = manifest["files"]
    for f in files:
        entry = sealed.get(f.key)
        if entry is None:
            findings.append(
                Finding(
                    "manifest-file-unsealed",
                    f"this file is not in the sealed manifest {manifest_file}",
                    f.display,
                    hint=HINT_SEAL_NEW_FILE,
                )
            )
        elif entry["sha256"] != f.sha256:
            where = _first_difference(manifest, f.display, probes)
            lock = manifest.get("lock") or {}
            # A locked probe edited: re-sealing cannot fix that (the lock refuses it), so the file
            # finding gives the lock's instruction too - one problem, one instruction.
            edited = any(
                lock.get(p.id) not in (None, p.content_hash()) for p in probes if p.file == f.display
            )
            findings.append(
                Finding(
                    "manifest-file-changed",
                    "the bytes no longer match the sealed manifest (sealed sha256 "
                    f"{entry['sha256']}, now {f.sha256})" + (f"; {where[3]}" if where else ""),
                    f.display,
                    where[0] if where else None,
                    where[1] if where else None,
                    where[2] if where else None,
                    hint=HINT_CHANGED if edited else HINT_RESEAL,
                    evidence={"sealed": entry["sha256"], "now": f.sha256, "manifest": manifest_file},
                )
            )
        elif entry["cases"] != f.cases:
            # the bytes are the sealed ones, so the count was edited in the manifest
            findings.append(
                Finding(
                    "manifest-cases",
                    f"the manifest {manifest_file} says this file holds {entry['cases']} probe(s), but its "
                    f"sealed bytes hold {f.cases} (was the manifest edited by hand?)",
                    f.display,
                    field="cases",
                    hint=HINT_LOCK_EDITED,
                    evidence={"sealed": entry["cases"], "now": f.cases, "manifest": manifest_file},
                )
            )
    missing = sorted(set(sealed) - {f.key for f in files})
    if missing:
        warnings.append(
            Finding(
                "manifest-partial",
                f"sealed file(s) {', '.join(missing)} are not part of this validation; the check for "
                "deleted probes is skipped",
                manifest_file,
                hint="validate the whole sealed set to check every probe of the lock",
            )
        )
        seen_ids = None
    all_match = not findings and not missing
    n_sealed = manifest.get("n_probes")
    if all_match and not findings and isinstance(n_sealed, int) and n_sealed != len(probes):
        findings.append(
            Finding(
                "manifest-cases",
                f"the manifest {manifest_file} says the set holds {n_sealed} probe(s), but the sealed files "
                f"hold {len(probes)} (was the manifest edited by hand?)",
                manifest_file,
                field="n_probes",
                hint=HINT_LOCK_EDITED,
            )
        )
    if all_match and probe_set_digest(probes) != manifest["digest"]:
        findings.append(
            Finding(
                "manifest-digest",
                f"the probe-set digest in {manifest_file} does not match the probes although every file "
                "hash does (was the manifest edited by hand?)",
                manifest_file,
                field="digest",
                hint=HINT_RESEAL,
            )
        )
    if all_match:
        # Sealing locks every probe of the files, so with unchanged files a missing id was edited out.
        lock = manifest.get("lock") or {}
        for pid in sorted({p.id for p in probes} - set(lock)):
            findings.append(
                Finding(
                    "manifest-lock",
                    f"the probe lock in {manifest_file} has no entry for this probe although every file "
                    "matches the seal (was the manifest edited by hand?)",
                    manifest_file,
                    None,
                    pid,
                    "lock",
                    "restore the manifest from version control, or re-seal with `evalgate probes seal` "
                    "(it locks the probe again with the content the files hold now)",
                )
            )
    unchanged = frozenset(
        f.display for f in files if (e := sealed.get(f.key)) is not None and e["sha256"] == f.sha256
    )
    findings.extend(lock_findings(manifest, manifest_file, probes, seen_ids, unchanged))
    return findings, warnings


def seal(
    previous: Mapping[str, Any] | None, files: Sequence[ProbeFile], probes: Sequence[Probe], bump: str
) -> dict:
    """The new manifest. The version moves only when the probe set's digest changed.

    The caller must have refused lock violations first (see `lock_findings`): the new lock keeps
    every previously sealed id with its old hash and adds the new ids.
    """
    digest = probe_set_digest(probes)
    if previous is None:
        version = FIRST_VERSION
    elif previous.get("digest") == digest:
        version = previous["version"]
    else:
        version = bump_version(previous["version"], bump)
    lock = dict((previous or {}).get("lock") or {})
    old = (previous or {}).get("lock_fields") or {}
    # one manifest seals one suite, so its probes share one field layout (types.ITEM_CONTENT_FIELDS
    # for a multiple-choice suite)
    layout = list(probes[0].content_fields()) if probes else list(CONTENT_FIELDS)
    same_layout = old.get("fields") == layout
    detail = {pid: h for pid, h in (old.get("hashes") or {}).items() if pid in lock and same_layout}
    for p in probes:
        lock.setdefault(p.id, p.content_hash())
        detail[p.id] = _field_hashes(p)  # equal content (no lock violation), so equal to the old one
    return {
        "schema_version": SCHEMA_VERSION,
        "version": version,
        "digest": digest,
        "n_probes": len(probes),
        "files": {f.key: {"sha256": f.sha256, "cases": f.cases} for f in sorted(files, key=lambda f: f.key)},
        "lock": dict(sorted(lock.items())),
        "lock_fields": {"fields": layout, "hashes": dict(sorted(detail.items()))},
    }
