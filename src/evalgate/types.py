"""The small frozen records every part of evalgate agrees on.

Kept free of I/O and of torch: the core, the scorers and the renderers all import from here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

LANGUAGES = ("en", "es")
REGULARITIES = ("regular", "irregular")
TENSES = ("infinitive", "present_simple", "past_simple", "past_participle", "future")
PERSONS = ("1sg", "2sg", "3sg")
LABELS = ("correct", "incorrect", "ambiguous")
CATEGORIES = ("core", "adversarial")
SOURCES = ("hand", "generated")

# Per-probe outcome of a run (results.json "status").
STATUS_SCORED = "scored"
STATUS_AMBIGUOUS = "ambiguous"  # label == ambiguous: scored, reported apart, not in accuracy
STATUS_OOV = "model_oov"  # a candidate maps to the tokenizer's unknown token
STATUS_DEPRECATED = "deprecated"  # retired: never scored again
STATUS_EXCLUDED = "excluded"  # left out by the `leaks: exclude` policy (strict subset)
STATUSES = (STATUS_SCORED, STATUS_AMBIGUOUS, STATUS_OOV, STATUS_DEPRECATED, STATUS_EXCLUDED)

# The fields that define what a probe measures. The content hash (the probe lock) covers these
# and nothing else: `deprecated` must be settable without "changing" the probe, and fixing a
# typo in `explanation` or `source` does not change any number the probe produces.
CONTENT_FIELDS = (
    "id",
    "language",
    "verb",
    "regularity",
    "tense",
    "person",
    "prompt",
    "candidates",
    "expected",
    "label",
    "category",
    "reason_code",
    "kind",
)

# A multiple-choice suite's items (docs/suites.md) are locked on their own fields: the item has no
# verb, tense or label, and its slices are the dimensions its suite declares.
ITEM_CONTENT_FIELDS = ("id", "prompt", "candidates", "expected", "slices", "kind")

# The kinds of suite `suites:` may declare (docs/suites.md); a configuration without `suites:` is
# one verb-forms suite, read exactly as before suites existed.
VERB_FORMS = "verb-forms"
MULTIPLE_CHOICE = "multiple-choice"
SUITE_KINDS = (VERB_FORMS, MULTIPLE_CHOICE)
KIND_CHOICE = "choice"  # Probe.kind of a multiple-choice item that is not ordinal

BLANK = "___"

# `report.review_entropy` of defaults/evalgate.yml: the normalised entropy above which a scored
# item "needs human review" (docs/report.md); the default of every function that takes it.
DEFAULT_REVIEW_ENTROPY = 0.8


def canonical_json(obj: Any) -> str:
    """One spelling of a JSON value: sorted keys, no spaces, real UTF-8 (hashes depend on it)."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Probe:
    """One labelled multiple-choice item (docs/probes.md). `file`/`line` say where it was read."""

    id: str
    language: str
    verb: str
    regularity: str
    tense: str
    person: str
    prompt: str
    candidates: tuple[str, ...]
    expected: str
    label: str
    category: str
    reason_code: str | None = None
    explanation: str | None = None
    source: str | None = None
    deprecated: bool = False
    # "form" (a verb-form choice) or "ordinal" (candidates are an ordered scale, docs/ordinal.md).
    kind: str = "form"
    file: str = ""
    line: int = 0
    # Set for the items of a multiple-choice suite (docs/suites.md): `dims` holds the item's
    # slices in file order, `suite` the suite's name; the verb-form fields above stay empty.
    suite_kind: str = VERB_FORMS
    dims: tuple[tuple[str, str], ...] = ()
    suite: str | None = None

    @property
    def is_item(self) -> bool:
        """A multiple-choice item (not a verb-form probe)."""
        return self.suite_kind == MULTIPLE_CHOICE

    @classmethod
    def from_item(cls, rec: dict[str, Any], file: str = "", line: int = 0, suite: str | None = None) -> Probe:
        """Build from a schema-valid multiple-choice item (probeset/items.py validates first)."""
        return cls(
            id=rec["id"],
            language="",
            verb="",
            regularity="",
            tense="",
            person="",
            prompt=rec["prompt"],
            candidates=tuple(rec["candidates"]),
            expected=rec["expected"],
            label="correct",
            category="core",
            explanation=rec.get("explanation"),
            source=rec.get("source"),
            deprecated=bool(rec.get("deprecated", False)),
            kind=rec.get("kind", KIND_CHOICE),
            file=file,
            line=line,
            suite_kind=MULTIPLE_CHOICE,
            dims=tuple((str(k), str(v)) for k, v in (rec.get("slices") or {}).items()),
            suite=suite,
        )

    def content_fields(self) -> tuple[str, ...]:
        """The fields the probe lock covers for this kind of probe."""
        return ITEM_CONTENT_FIELDS if self.is_item else CONTENT_FIELDS

    @classmethod
    def from_record(cls, rec: dict[str, Any], file: str = "", line: int = 0) -> Probe:
        """Build from a schema-valid JSON object (validation happens before this)."""
        return cls(
            id=rec["id"],
            language=rec["language"],
            verb=rec["verb"],
            regularity=rec["regularity"],
            tense=rec["tense"],
            person=rec["person"],
            prompt=rec["prompt"],
            candidates=tuple(rec["candidates"]),
            expected=rec["expected"],
            label=rec["label"],
            category=rec["category"],
            reason_code=rec.get("reason_code"),
            explanation=rec.get("explanation"),
            source=rec.get("source"),
            deprecated=bool(rec.get("deprecated", False)),
            kind=rec.get("kind", "form"),
            file=file,
            line=line,
        )

    def to_record(self) -> dict[str, Any]:
        """The JSONL object, fields in the documented order, optional ones only when set."""
        if self.is_item:
            rec: dict[str, Any] = {
                "id": self.id,
                "prompt": self.prompt,
                "candidates": list(self.candidates),
                "expected": self.expected,
                "slices": dict(self.dims),
            }
            plain_kind, optional = KIND_CHOICE, ("explanation", "source")
        else:
            rec = {
                "id": self.id,
                "language": self.language,
                "verb": self.verb,
                "regularity": self.regularity,
                "tense": self.tense,
                "person": self.person,
                "prompt": self.prompt,
                "candidates": list(self.candidates),
                "expected": self.expected,
                "label": self.label,
                "category": self.category,
            }
            plain_kind, optional = "form", ("reason_code", "explanation", "source")
        if self.kind != plain_kind:
            rec["kind"] = self.kind
        for name in optional:
            value = getattr(self, name)
            if value is not None:
                rec[name] = value
        if self.deprecated:
            rec["deprecated"] = True
        return rec

    def content_hash(self) -> str:
        """SHA-256 of the measured content; a changed hash under the same id is refused."""
        rec = self.to_record()
        rec["kind"] = self.kind
        return sha256_text(canonical_json({k: rec.get(k) for k in self.content_fields()}))

    def slices(self) -> list[str]:
        """Slice keys this probe counts in (results.json "slices"); `overall` first."""
        if self.is_item:
            return ["overall", *(f"{dim}:{value}" for dim, value in self.dims)]
        keys = [
            "overall",
            f"language:{self.language}",
            f"regularity:{self.regularity}",
            f"tense:{self.tense}",
            f"person:{self.person}",
            f"category:{self.category}",
            f"label:{self.label}",
        ]
        if self.reason_code:
            keys.append(f"reason_code:{self.reason_code}")
        return keys


@dataclass(frozen=True)
class Finding:
    """One validation failure, located as precisely as we can (docs/validate.md, "The checks").

    `check` is a stable symbolic name (e.g. "schema", "duplicate-id", "leak-ngram") that tests
    and tools may rely on; `message` is for humans; `evidence` carries detector-specific facts
    (the colliding training file:line, the shared n-gram, both hashes, ...).
    """

    check: str
    message: str
    file: str | None = None
    line: int | None = None
    probe_id: str | None = None
    field: str | None = None
    hint: str | None = None
    evidence: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, hash=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"check": self.check, "message": self.message}
        for name in ("file", "line", "probe_id", "field", "hint"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.evidence:
            out["evidence"] = self.evidence
        return out


@dataclass(frozen=True)
class LoglikRequest:
    """Score `continuation` given `context` (lm-evaluation-harness's loglikelihood request).

    `group` (a probe's id): requests of one group sharing a context may share one forward (the
    longest input serves every input that is a prefix of it), so a request's numbers depend only
    on its group, never on what else is scored in the same call (docs/scoring.md). Requests
    without a group are one group per call.
    """

    context: str
    continuation: str
    group: str | None = field(default=None, compare=False)  # a scheduling hint, not identity


@dataclass(frozen=True)
class Loglik:
    """What a scorer returns for one request, in request order.

    `logprob` is the natural-log sum over the continuation's tokens; `decoded` is the
    continuation tokens decoded back to text (the boundary check compares it with the request);
    `oov` is true when any continuation token is the tokenizer's unknown token; `tokens` holds
    each continuation token decoded on its own (shown when the boundary check fails).
    """

    logprob: float
    n_tokens: int
    decoded: str
    oov: bool = False
    tokens: tuple[str, ...] = ()


@dataclass(frozen=True)
class Perplexity:
    value: float
    n_tokens: int
    nll: float  # summed negative log-likelihood (nats) over n_tokens
    # Per test sentence, in order: its summed NLL and its predicted tokens, for the paired
    # perplexity test (gate/perplexity_test.py); empty from a scorer that cannot tell them.
    sentence_nll: tuple[float, ...] = ()
    sentence_tokens: tuple[int, ...] = ()
