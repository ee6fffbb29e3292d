"""Small, realistic results.json pieces for tests (anyone may reuse them).

`make_entry` builds one per-probe entry as the scorer writes it (docs/ARCHITECTURE.md): the
probe's metadata, its content hash computed by the real `Probe.content_hash`, per-candidate
scores and the softmax confidence / entropy that follow from them. `make_results` wraps entries
into a dict that validates against src/evalgate/schemas/results.schema.json, with slices,
per-verb counts and calibration from the real `core.slices.aggregate`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from typing import Any

from evalgate.config import GateRules, default_config_dict
from evalgate.gate.slices import aggregate
from evalgate.types import STATUS_AMBIGUOUS, STATUS_SCORED, Probe, canonical_json

_VERB = {"en": ("work", "works"), "es": ("trabajar", "trabaja")}
MANIFEST = {
    "method": "candidate",
    "normalization": "tokens",
    "template_sha256": hashlib.sha256(b"{prompt}\n").hexdigest(),
    "dtype": "float32",
    "scoring_version": "1",
    "probe_set_digest": "0" * 64,
    "probe_set_version": "0.1.0",
    "tokenizer_sha256": hashlib.sha256(b"tokenizer-a").hexdigest(),
}


def make_entry(
    id: str,
    correct: bool | None,
    *,
    language: str = "en",
    verb: str | None = None,
    regularity: str = "regular",
    tense: str = "present_simple",
    person: str = "3sg",
    category: str = "core",
    label: str = "correct",
    reason_code: str | None = None,
    status: str = STATUS_SCORED,
    source: str = "generated",
    prompt: str | None = None,
    candidates: tuple[str, ...] | None = None,
    expected: str | None = None,
    margin: float = 2.0,
) -> dict[str, Any]:
    """One per-probe entry. `margin` is the score gap between the prediction and the others
    (large = confident, 0 = uniform); `correct` decides whether the prediction is `expected`."""
    infinitive, form = _VERB[language]
    verb = verb or infinitive
    candidates = candidates or (form, infinitive)
    expected = expected or candidates[0]
    prompt = prompt or ("She ___ at the office every day." if language == "en" else "Ella ___ en casa.")
    probe = Probe(
        id=id,
        language=language,
        verb=verb,
        regularity=regularity,
        tense=tense,
        person=person,
        prompt=prompt,
        candidates=tuple(candidates),
        expected=expected,
        label=label,
        category=category,
        reason_code=reason_code,
        source=source,
        deprecated=status == "deprecated",
    )
    entry: dict[str, Any] = {"id": id, "status": status, **probe.to_record()}
    entry.pop("deprecated", None)
    entry.update(kind="form", reason_code=reason_code, content_hash=probe.content_hash())
    context, _, _ = prompt.partition("___")
    if status not in (STATUS_SCORED, STATUS_AMBIGUOUS):
        entry.update(context=context.rstrip(), candidates=[{"text": c} for c in candidates])
        entry.update(pred=None, correct=None, confidence=None, entropy=None, entropy_norm=None)
        return entry
    wrong = next(c for c in candidates if c != expected)
    pred = expected if correct else wrong
    scores = [(-1.0 if c == pred else -1.0 - margin) for c in candidates]
    top = max(scores)
    weights = [math.exp(s - top) for s in scores]
    probs = [w / sum(weights) for w in weights]
    entropy = -sum(p * math.log(p) for p in probs if p > 0)
    entry["context"] = context.rstrip()
    entry["candidates"] = [
        {"text": c, "continuation": " " + c, "loglik": s, "n_tokens": 1, "score": s, "surprisal": -s}
        for c, s in zip(candidates, scores, strict=True)
    ]
    entry.update(
        pred=pred,
        correct=pred == expected,
        confidence=max(probs),
        entropy=entropy,
        entropy_norm=entropy / math.log(len(candidates)),
    )
    return entry


def make_results(
    entries: list[dict[str, Any]],
    *,
    manifest: dict[str, Any] | None = None,
    perplexity: float | None = 12.5,
    z: float = 1.96,
    checkpoint_sha: str = "c" * 64,
) -> dict[str, Any]:
    """A results dict around `entries` (valid against results.schema.json)."""
    agg = aggregate(entries, z)
    man = {**MANIFEST, **(manifest or {})}
    man["probe_set_digest"] = hashlib.sha256(
        canonical_json(sorted(e["content_hash"] for e in entries)).encode()
    ).hexdigest()
    config = default_config_dict()
    return {
        "schema_version": 1,
        "evalgate_version": "0.1.0",
        "verdict": "pass",
        "reasons": [],
        "inputs": {
            "data/eval/probes.jsonl": {"sha256": "1" * 64, "bytes": 1000, "role": "probes"},
            "data/eval/adversarial.jsonl": {"sha256": "2" * 64, "bytes": 500, "role": "probes"},
            "data/checkpoints/demo/model.safetensors": {
                "sha256": "3" * 64,
                "bytes": 9000,
                "role": "checkpoint",
            },
            "data/corpus/test.jsonl": {"sha256": "4" * 64, "bytes": 700, "role": "test"},
        },
        "checkpoint": {"path": "data/checkpoints/demo", "format": "native", "sha256": checkpoint_sha},
        "config": config,
        "manifest": man,
        "probes": entries,
        "slices": agg["slices"],
        "per_verb": agg["per_verb"],
        "perplexity": None if perplexity is None else {"value": perplexity, "n_tokens": 4567},
        "calibration": agg["calibration"],
        "counts": agg["counts"],
        "ambiguous": agg["ambiguous"],
    }


def make_rules(**overrides: Any) -> GateRules:
    """The default gate rules (defaults/evalgate.yml) with `overrides` applied."""
    gate = default_config_dict()["gate"]
    rules = GateRules(**{**gate, "slices": tuple(gate["slices"])})
    return dataclasses.replace(rules, **overrides)
