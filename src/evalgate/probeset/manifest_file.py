"""The sealed manifest file (MANIFEST.json), checked from its bytes.

Strict JSON (a lock entry given twice, the old hash then a forged one, must not resolve to the
last), the manifest's schema, then the seal and the probe lock (probeset/manifest.py); findings
about the manifest's own entries get their line, and a probe file whose bytes changed only in
formatting says so, so the user knows re-sealing is safe (docs/probes.md).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from evalgate.probeset.jsonl import DuplicateJsonKey, unique_keys
from evalgate.probeset.manifest import ProbeFile, check_manifest, manifest_problems
from evalgate.types import Finding, Probe


def unsealed_warning(shown: str) -> Finding:
    """No manifest at the configured path: the set is not sealed, nothing is locked."""
    return Finding(
        "manifest-missing",
        "the probe set is not sealed (no manifest at this path): version and probe lock not checked",
        shown,
        hint="seal it with `evalgate probes seal` once the set is final",
    )


# Edits that change a file's bytes but no record (an editor or git's core.autocrlf): name them, so
# the user knows re-sealing is safe.
_FORMAT_ONLY: tuple[tuple[str, Any], ...] = (
    ("CRLF line endings (git core.autocrlf?); the sealed file had LF", lambda b: b.replace(b"\r\n", b"\n")),
    ("a byte-order mark was added", lambda b: b.removeprefix(b"\xef\xbb\xbf")),
    ("the final newline was removed", lambda b: b + b"\n"),
    ("blank lines were added at the end", lambda b: b.rstrip(b"\n") + b"\n"),
    ("whitespace was added at line ends", lambda b: b"\n".join(x.rstrip() for x in b.split(b"\n"))),
)


def format_only(data: bytes, sealed_sha: str) -> str | None:
    for what, undo in _FORMAT_ONLY:
        if hashlib.sha256(undo(data)).hexdigest() == sealed_sha:
            return what
    return None


def _locate_in_manifest(
    f: Finding, shown: str, text: str, doc: dict, contents: Mapping[str, bytes]
) -> Finding:
    """A line for findings about the manifest's own entries; the cause of a formatting-only change."""
    if f.check in ("lock-removed", "manifest-lock-edited") and f.file == shown and f.probe_id:
        needle = json.dumps(f.probe_id) + ":"
        lock_at = text.find('"lock":')
        at = text.find(needle, max(lock_at, 0))
        if at >= 0:
            return dataclasses.replace(f, line=text.count("\n", 0, at) + 1)
    if f.check == "manifest-file-changed" and f.file is not None and f.file in contents:
        what = format_only(contents[f.file], f.evidence.get("sealed", ""))
        if what:
            message = f"{f.message}: only the formatting changed ({what}), every probe reads the same"
            hint = (
                "restore the file's formatting, or re-seal with `evalgate probes seal` (the probes are "
                "unchanged)"
            )
            return dataclasses.replace(f, message=message, hint=hint, line=1)
    return f


def check_manifest_file(
    data: bytes,
    shown: str,
    keyed: Sequence[ProbeFile],
    probes: Sequence[Probe],
    seen: set[str] | None,
    contents: Mapping[str, bytes],
) -> tuple[str | None, list[Finding], list[Finding]]:
    """(the sealed version or None for an invalid manifest, findings, warnings).

    `keyed` names each probe file as the manifest does (relative to its folder), `contents` maps
    a probe file's display path to its bytes (to tell a formatting-only change).
    """
    try:
        # A lock entry given twice (the old hash, then a forged one) must not resolve to the last.
        doc = json.loads(data.decode("utf-8"), object_pairs_hook=unique_keys)
        problems = manifest_problems(doc)
    except DuplicateJsonKey as exc:
        problems = [f'key "{exc.key}" appears twice in one object (JSON keeps the last one silently)']
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        problems = [f"not valid JSON ({exc})"]
    if problems:
        invalid = Finding(
            "manifest-invalid",
            "the sealed manifest cannot be read: " + "; ".join(problems[:5]),
            shown,
            hint="restore it from version control (it holds the probe lock); deleting it forgets "
            "every sealed probe",
        )
        return None, [invalid], []
    found, warned = check_manifest(doc, shown, list(keyed), list(probes), seen)
    text = data.decode("utf-8")
    found = [_locate_in_manifest(f, shown, text, doc, contents) for f in found]
    return doc["version"], found, warned
