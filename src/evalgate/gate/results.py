"""Assembling the results dict (results.json) from the pieces a run produced.

results.json is a contract (docs/design.md, "Reports"): keys are added, never renamed. Everything in it
is a pure function of the inputs - no timestamps, no timings, no absolute paths - and every float
is rounded to ROUND_DIGITS decimals so the same inputs give the same bytes.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from evalgate import SCORING_VERSION, __version__
from evalgate.errors import RefusedError
from evalgate.gate.bulk_schema import BulkValidator
from evalgate.gate.document import (
    LeakGroup,
    LeakSummary,
    Manifest,
    Normalization,
    ResultsDocument,
    ScoringMethod,
)
from evalgate.schemas import schema

SCHEMA_VERSION = 1
# Significant digits kept for every float: float32 carries about 7, and a fixed count (not fixed
# decimals) keeps a p-value of 3e-9 from printing as 0.0.
ROUND_DIGITS = 7


def round_floats(obj: Any, digits: int = ROUND_DIGITS) -> Any:
    """Round every float (recursively); NaN/inf become None (they are not JSON); -0.0 becomes 0.0."""
    # exact types first (a results file of 100,000 probes holds millions of values, and this runs
    # on each of them three times in a gate); subclasses (bool is an int, never a float) fall
    # through to the isinstance checks below
    kind = type(obj)
    if kind in _KEPT:
        return obj
    if kind is dict:
        return _round_dict(obj, f".{digits}g", digits)
    if kind is list:
        return _round_list(obj, f".{digits}g", digits)
    if isinstance(obj, float):
        return _round_float(obj, f".{digits}g")
    if isinstance(obj, Mapping):
        return {k: round_floats(v, digits) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [round_floats(v, digits) for v in obj]
    return obj


_KEPT = frozenset((str, int, bool, type(None)))


def _round_float(value: float, spec: str) -> float | None:
    if not math.isfinite(value):
        return None
    value = float(format(value, spec))
    return 0.0 if value == 0 else value


def _round_dict(obj: dict, spec: str, digits: int) -> dict:
    # `round_floats` of each value, with the common leaves (strings, numbers) handled here: a
    # function call per leaf was most of its time on a large results file
    out = {}
    for k, v in obj.items():
        kind = type(v)
        if kind in _KEPT:
            out[k] = v
        elif kind is float:
            out[k] = _round_float(v, spec)
        elif kind is dict:
            out[k] = _round_dict(v, spec, digits)
        elif kind is list:
            out[k] = _round_list(v, spec, digits)
        else:
            out[k] = round_floats(v, digits)
    return out


def _round_list(obj: list, spec: str, digits: int) -> list:
    out = []
    for v in obj:
        kind = type(v)
        if kind in _KEPT:
            out.append(v)
        elif kind is float:
            out.append(_round_float(v, spec))
        elif kind is dict:
            out.append(_round_dict(v, spec, digits))
        elif kind is list:
            out.append(_round_list(v, spec, digits))
        else:
            out.append(round_floats(v, digits))
    return out


def comparability_manifest(
    *,
    method: ScoringMethod,
    normalization: Normalization,
    template_sha256: str,
    dtype: str,
    probe_set_digest: str,
    probe_set_version: str | None,
    tokenizer_sha256: str | None,
    test_sha256: str | None = None,
    device: str = "cpu",
) -> Manifest:
    """How a result was measured. Two results are comparable only if the measuring keys agree.

    `candidate-raw` ignores the normalisation, so it is recorded as "none" there: two raw runs
    configured with different (unused) normalisations stay comparable.
    """
    manifest: Manifest = {
        "method": method,
        "normalization": "none" if method == "candidate-raw" else normalization,
        "template_sha256": template_sha256,
        "dtype": dtype,
        "scoring_version": SCORING_VERSION,
        "probe_set_digest": probe_set_digest,
        "probe_set_version": probe_set_version,
        "tokenizer_sha256": tokenizer_sha256,
        "test_sha256": test_sha256,
    }
    # The device only when it is not the CPU: a CPU run (every run before the key existed) keeps
    # its bytes, and gate/compare.py reads an absent device as cpu (docs/scoring.md, "Device").
    if device != "cpu":
        manifest["device"] = device
    return manifest


def leak_summary(entries: Iterable[Mapping[str, Any]], excluded: Iterable[str], policy: str) -> LeakSummary:
    """The honesty note (docs/report.md): which probes the strict series leaves out, by label and category.

    An exclusion that removes a larger share of one label than another would bias the strict
    accuracy; the report shows these fractions next to both series.
    """
    excluded = set(excluded)
    active = [e for e in entries if e.get("status") != "deprecated"]
    by: dict[str, dict[str, LeakGroup]] = {}
    for key in ("label", "category"):
        totals = Counter(str(e.get(key)) for e in active)
        hits = Counter(str(e.get(key)) for e in active if e["id"] in excluded)
        by[key] = {
            name: {"excluded": hits[name], "total": totals[name], "fraction": hits[name] / totals[name]}
            for name in sorted(totals)
        }
    out: LeakSummary = {
        "policy": policy,
        "excluded": sorted(excluded),
        "by_label": by["label"],
        "by_category": by["category"],
    }
    return out


def assemble(
    *,
    verdict: str,
    reasons: list[str],
    inputs: Mapping[str, Any],
    checkpoint: Mapping[str, Any] | None,
    config_pin: Mapping[str, Any],
    manifest: Mapping[str, Any],
    probe_set: Mapping[str, Any],
    entries: list[dict[str, Any]],
    aggregate: Mapping[str, Any],
    perplexity: Mapping[str, Any] | None,
    comparison: Mapping[str, Any] | None,
    warnings: list[dict[str, Any]] | None = None,
    leaks: Mapping[str, Any] | None = None,
    aggregate_full: Mapping[str, Any] | None = None,
    gate_changes: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> ResultsDocument:
    """The results dict of a scored run (verdict pass or fail)."""
    results: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evalgate_version": __version__,
        "verdict": verdict,
        "reasons": list(reasons),
        "inputs": dict(sorted(inputs.items())),
        "checkpoint": dict(checkpoint) if checkpoint else None,
        "config": dict(config_pin),
        "manifest": dict(manifest),
        "probe_set": dict(probe_set),
        "probes": entries,
        "perplexity": dict(perplexity) if perplexity else None,
        "comparison": dict(comparison) if comparison else None,
        "warnings": list(warnings or []),
    }
    for key, value in aggregate.items():
        if key == "per_verb" and not value:
            continue  # no verb-form probe (a multiple-choice run): no per-verb section at all
        results[key] = value
    if leaks is not None:
        results["leaks"] = dict(leaks)
    if aggregate_full is not None:
        results["slices_full"] = aggregate_full["slices"]
    if gate_changes:
        results["gate_changes"] = gate_changes
    if extra:
        results.update(extra)
    return round_floats(results)


def assemble_refused(
    *,
    reasons: list[str],
    findings: list[dict[str, Any]],
    inputs: Mapping[str, Any],
    config_pin: Mapping[str, Any],
    probe_set: Mapping[str, Any] | None = None,
    warnings: list[dict[str, Any]] | None = None,
    gate_changes: str | None = None,
    verb_forms: bool = True,
) -> ResultsDocument:
    """The results dict of a refused run: why, and which inputs were read. Nothing was scored.

    `verb_forms`: whether the configuration can hold verb-form probes. A run of multiple-choice
    suites only has no per-verb section, refused or scored (docs/gate.md, "results.json"); a
    verb-form run keeps its empty one, so the demo's refused documents stay as they were."""
    results: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evalgate_version": __version__,
        "verdict": "refused",
        "reasons": list(reasons),
        "findings": list(findings),
        "warnings": list(warnings or []),
        "inputs": dict(sorted(inputs.items())),
        "config": dict(config_pin),
        "probe_set": dict(probe_set or {}),
        "probes": [],
        "slices": {},
        "per_verb": {},
        "perplexity": None,
        "calibration": {},
        "comparison": None,
    }
    if not verb_forms:
        del results["per_verb"]
    if gate_changes:
        results["gate_changes"] = gate_changes
    return round_floats(results)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _one_line(value: Any) -> str:
    """A key or message of an untrusted results file on one printable line: a key holding a newline
    could otherwise start a log line with `::` (a workflow command) in the job that reads it."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), str(value))


@cache
def _results_validator() -> BulkValidator:
    # the per-probe records checked by a compiled predicate, the rest by jsonschema, with
    # jsonschema's own errors either way (gate/bulk_schema.py)
    return BulkValidator(schema("results"), ("properties", "probes", "items"))


def validate_results(doc: Any, source: str) -> None:
    """Schema-check a results document (ours before writing, or an untrusted artifact's)."""
    errors = sorted(_results_validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [
            f"{'/'.join(_one_line(p) for p in e.absolute_path) or '(top level)'}: "
            f"{_one_line(e.message[:200])}"
            for e in errors[:20]
        ]
        more = f"\n  ... and {len(errors) - 20} more" if len(errors) > 20 else ""
        raise RefusedError(f"{source}: not a valid evalgate results file:\n  " + "\n  ".join(lines) + more)


def refuse_partial(doc: Any, source: str, consequence: str) -> None:
    """A partial result of `run --shard I/N` holds a fraction of the probes: gating it, gating
    against it or making it a baseline would treat the rest of the set as new or gone."""
    shard = doc.get("shard") if isinstance(doc, dict) else None
    if isinstance(shard, dict):
        raise RefusedError(
            f"{source}: a partial result (shard {shard.get('index')}/{shard.get('count')}) {consequence}",
            hint="combine the shards first (`evalgate merge PARTS... --out DIR`) and use that result",
        )
