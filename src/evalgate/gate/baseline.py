"""Baseline documents (`baselines/<name>.json`): built from a results dict, checked by JSON Schema.

A baseline keeps exactly what a later run is gated against: per-probe outcomes with their
content hashes (the probe lock), per-slice results, perplexity, the probe files' SHA-256s, the
checkpoint's SHA-256, the configuration pin, the comparability manifest, provenance and the
yardstick (gate/yardstick.py: what it was measured with). It holds
no wall-clock time and is serialised with sorted keys, so rewriting it from the same inputs
changes no byte (the lead's `evalgate baseline update` writes `dump_baseline(doc)` atomically).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from functools import cache
from typing import Any

from evalgate.errors import RefusedError
from evalgate.gate.bulk_schema import BulkValidator
from evalgate.gate.yardstick import yardstick_of
from evalgate.schemas import schema

BASELINE_KIND = "evalgate-baseline"
_HINT = "regenerate it with `evalgate baseline update` (or restore the committed file)"


def _under(path: str, folder: str | None) -> bool:
    if not folder:
        return False
    folder = folder.rstrip("/")
    return path == folder or path.startswith(folder + "/")


def baseline_from_results(results: dict[str, Any], name: str, provenance: dict[str, Any]) -> dict[str, Any]:
    """The baseline document for one checkpoint line, from a results.json dict.

    `provenance` is what the caller knows about where the run came from, e.g.
    {"git_commit": "3f2a...", "pr_number": 12} (None when unknown); it must not hold a time.
    Deprecated probes keep their outcome and hash: a retired id can never come back changed.
    """
    inputs: dict[str, Any] = results.get("inputs", {})
    config = results.get("config", {})
    checkpoint = results.get("checkpoint") or {}
    manifest = results["manifest"]
    probe_paths = set(config.get("probes", []))
    ckpt_path = checkpoint.get("path")
    ckpt_files = {
        path: rec["sha256"]
        for path, rec in inputs.items()
        if rec.get("role") == "checkpoint" or _under(path, ckpt_path)
    }
    probe_files = {
        path: rec["sha256"]
        for path, rec in inputs.items()
        if path in probe_paths or rec.get("role") in ("probes", "adversarial")
    }
    outcomes = {
        e["id"]: {
            "status": e["status"],
            "correct": e.get("correct"),
            "pred": e.get("pred"),
            "content_hash": e.get("content_hash"),
            # the suite a probe was measured in (runs with several suites, docs/suites.md)
            **({"suite": e["suite"]} if e.get("suite") else {}),
        }
        for e in sorted(results["probes"], key=lambda e: e["id"])
    }
    return {
        "schema_version": 1,
        "kind": BASELINE_KIND,
        "name": name,
        "evalgate_version": results.get("evalgate_version", ""),
        "manifest": copy.deepcopy(manifest),
        "config": copy.deepcopy(config),
        "checkpoint": {
            "sha256": checkpoint.get("sha256"),
            "path": ckpt_path,
            "format": checkpoint.get("format"),
            "files": dict(sorted(ckpt_files.items())),
        },
        "probe_set": {
            "digest": manifest.get("probe_set_digest"),
            "version": manifest.get("probe_set_version"),
            "files": dict(sorted(probe_files.items())),
            # several suites: each seals its own manifest, whose version only moves forward
            # (docs/suites.md); absent otherwise, so a one-suite baseline keeps its bytes
            **({"suites": suites} if (suites := suite_manifests(results)) else {}),
        },
        "outcomes": outcomes,
        "slices": copy.deepcopy(results.get("slices", {})),
        "perplexity": copy.deepcopy(results.get("perplexity")),
        # several suites, one naming its own test set (docs/suites.md); absent otherwise
        **(
            {"suite_perplexity": copy.deepcopy(results["suite_perplexity"])}
            if "suite_perplexity" in results
            else {}
        ),
        "provenance": dict(sorted(provenance.items())),
        # What it was measured with: a later run that differs changes its own gate (docs/approval.md).
        "yardstick": yardstick_of(results),
    }


def suite_manifests(results: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """{suite: {"version", "digest", "manifest"}} of a run with several suites ({} otherwise):
    the version and digest of each suite's sealed manifest, and the file it is sealed in (the
    pinned configuration's `suites.NAME.manifest`), so `validate` can name it."""
    suites = (results.get("probe_set") or {}).get("suites")
    pinned = (results.get("config") or {}).get("suites") or {}
    if not isinstance(suites, Mapping) or len(suites) < 2:
        return {}
    out = {}
    for name, rec in sorted(suites.items()):
        if not isinstance(rec, Mapping):
            continue
        own = pinned.get(name) if isinstance(pinned, Mapping) else None
        out[name] = {
            "version": rec.get("version"),
            "digest": rec.get("digest"),
            "manifest": own.get("manifest") if isinstance(own, Mapping) else None,
        }
    return out


# What a baseline measured, as opposed to where it came from (`provenance`, `name`, the paths it
# was read from): the parts a baseline written from this very run must repeat, number for number.
# The checkpoint is compared by content (its SHA-256), not by the folder it was read from.
MEASURED = ("outcomes", "slices", "perplexity", "suite_perplexity", "yardstick")


def measured_elsewhere(baseline: Mapping[str, Any], results: dict[str, Any]) -> list[str]:
    """Why `baseline` is not the one this run would write, one line per part; [] when it is.

    The gate computes a checkpoint's outcomes itself, so a baseline that claims to be this
    checkpoint's (a labelled baseline update, docs/approval.md) is checked against them instead of
    trusted: a pull request cannot write the numbers it is then gated against."""
    made = baseline_from_results(results, str(baseline.get("name") or ""), {})
    why = []
    theirs_ckpt = baseline.get("checkpoint")
    other = theirs_ckpt.get("sha256") if isinstance(theirs_ckpt, Mapping) else None
    mine = made["checkpoint"]["sha256"]
    if other != mine:
        why.append(f"checkpoint: measured on {str(other)[:12]}, this run scored {str(mine)[:12]}")
    for part in MEASURED:
        ours, theirs = made.get(part), baseline.get(part)
        if ours == theirs:
            continue
        if part == "outcomes" and isinstance(ours, Mapping) and isinstance(theirs, Mapping):
            differ = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
            shown = ", ".join(differ[:5]) + (f" and {len(differ) - 5} more" if len(differ) > 5 else "")
            why.append(f"outcomes of {len(differ)} probe(s) differ from this run's: {shown}")
        else:
            why.append(f"{part}: differs from this run's")
    return why


def dump_baseline(doc: dict[str, Any]) -> str:
    """The one text form of a baseline: sorted keys, two-space indent, UTF-8, final newline.

    Sorted keys make the bytes independent of the order the dict was built in, and keep the
    diffs of a baseline-update PR small and readable.
    """
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


@cache
def _baseline_validator() -> BulkValidator:
    # the per-probe outcomes checked by a compiled predicate, the rest by jsonschema, with
    # jsonschema's own errors either way (gate/bulk_schema.py)
    return BulkValidator(schema("baseline"), ("properties", "outcomes", "additionalProperties"))


def replaced_document(data: bytes, source: str) -> dict[str, Any] | None:
    """The baseline a `baseline update` replaces, parsed; None when it is not a valid baseline (its
    history line then keeps no per-slice numbers). Shared with github/history_scope.py, which
    recomputes the bot's line."""
    try:
        doc = json.loads(data)
        validate_baseline(doc, source)
    except (ValueError, RecursionError, RefusedError):
        return None
    return doc


def validate_baseline(doc: Any, source: str) -> None:
    """Raise RefusedError listing every schema problem of a baseline document (all at once)."""
    problems = []
    for err in sorted(
        _baseline_validator().iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]
    ):
        where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        if err.validator == "additionalProperties":
            extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
            problems.append(f"{where}: unknown key(s) {', '.join(extra)}")
        else:
            # jsonschema quotes the offending value; a whole wrong-typed table would drown the rest
            message = err.message if len(err.message) <= 300 else err.message[:297] + "..."
            problems.append(f"{where}: {message}")
    if problems:
        listing = "\n  ".join(problems)
        raise RefusedError(
            f"{source} is not a valid evalgate baseline ({len(problems)} problem(s)):\n  {listing}",
            hint=_HINT,
        )
