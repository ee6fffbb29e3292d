"""Leak detection against the training material: an index built once, three detectors.

The index holds, for every training sentence, its exact key and its template key (hashes of the
normal forms of probeset/text.py, the same functions the corpus generator decontaminates with) and
every window of `window` word tokens, each mapped to the first (file, line) that produced it.
Checking a probe is then a handful of dictionary look-ups: O(probes + sentences), never a
probe x sentence scan (10,000 probes against 100,000 sentences: see bench/validate.py).

The detectors read `fill(prompt, expected)`, the sentence the model would see completed:
  exact     the probe's word tokens (punctuation and case aside) equal a training sentence's, or
            one sentence or comma-separated clause of a longer training line (a short probe has
            fewer tokens than the n-gram window: this is what protects it);
  template  the same after content nouns become <NOUN>, verb forms and time markers kept;
  ngram     the probe shares at least one window of `window` normalised tokens (docs/validate.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evalgate.probeset.normalize import normalize
from evalgate.probeset.records import record_id
from evalgate.probeset.text import clause_keys_normal, fill, masked_tokens, ngrams, tokens_normal
from evalgate.types import Finding, Probe

DETECTORS = ("exact", "template", "ngram")
DEFAULT_WINDOW = 5

HINT = (
    "rewrite the probe (if it was sealed: deprecate it and add a replacement with a new id), or take "
    "the sentence out of the training data; `leaks: {policy: exclude}` scores the strict subset instead"
)


@dataclass(frozen=True)
class Source:
    """Where a training sentence was read."""

    file: str
    line: int
    text: str

    def where(self) -> str:
        return f"{self.file}:{self.line}"


class LeakIndex:
    """Hash maps over the training sentences; first occurrence wins, so evidence is stable."""

    def __init__(
        self,
        keep: frozenset[str] | set[str],
        window: int = DEFAULT_WINDOW,
        detectors: Sequence[str] = DETECTORS,
    ):
        unknown = set(detectors) - set(DETECTORS)
        if unknown or window < 1:
            raise ValueError(f"bad leak detector settings: {sorted(unknown)}, window {window}")
        self.keep = frozenset(normalize(k) for k in keep)
        self.window = window
        self.detectors = tuple(d for d in DETECTORS if d in detectors)
        self.n_sentences = 0
        self._exact: dict[str, Source] = {}
        self._clauses: dict[str, Source] = {}
        self._template: dict[str, Source] = {}
        self._ngrams: dict[str, Source] = {}

    def add(self, file: str, line: int, sentence: str) -> None:
        self.n_sentences += 1
        src = Source(file, line, sentence)
        # normalised once; the keys are the normal forms of probeset/text.py, kept as strings (a dict
        # hashes them anyway)
        norm = normalize(sentence)
        tokens = tokens_normal(norm)
        if "exact" in self.detectors:
            self._exact.setdefault(" ".join(tokens), src)
            for key in clause_keys_normal(norm):
                self._clauses.setdefault(key, src)
        if "template" in self.detectors:
            self._template.setdefault(" ".join(masked_tokens(tokens, self.keep)), src)
        if "ngram" in self.detectors:
            grams = self._ngrams
            for gram in ngrams(tokens, self.window):
                grams.setdefault(" ".join(gram), src)

    def add_all(self, file: str, sentences: Iterable[tuple[int, str]]) -> None:
        for line, sentence in sentences:
            self.add(file, line, sentence)

    def check(self, probe: Probe) -> list[Finding]:
        """One finding per leaking probe, naming every detector that fired (deprecated: none)."""
        if probe.deprecated:
            return []
        text = fill(probe.prompt, probe.expected)
        tokens = tokens_normal(normalize(text))
        joined = " ".join(tokens)
        hits: list[tuple[str, str, Source, dict[str, object]]] = []
        if "exact" in self.detectors:
            if src := self._exact.get(joined):
                hits.append(("exact", "equals (ignoring case, whitespace and punctuation)", src, {}))
            elif src := self._clauses.get(joined):
                hits.append(("exact", "is one sentence or clause of", src, {"contained": True}))
        form = " ".join(masked_tokens(tokens, self.keep))
        if "template" in self.detectors and (src := self._template.get(form)):
            hits.append(("template", f"has the same template {form!r} as", src, {"template": form}))
        if "ngram" in self.detectors:
            for gram in ngrams(tokens, self.window):
                key = " ".join(gram)
                if src := self._ngrams.get(key):
                    what = f"shares the {self.window}-gram {key!r} with"
                    hits.append(("ngram", what, src, {"ngram": key, "window": self.window}))
                    break  # the first shared window is the evidence
        if not hits:
            return []
        # One problem, one finding: the detectors that agree are listed in it (docs/probes.md).
        detector, what, src, _ = hits[0]
        message = (
            f"the filled prompt {_clip(text)!r} {what} training sentence {src.where()} {_clip(src.text)!r}"
        )
        for _, more, other, _ in hits[1:]:
            message += f"; also {more} " + (
                "it" if other == src else f"{other.where()} {_clip(other.text)!r}"
            )
        merged: dict[str, object] = {}
        for _, _, _, ev in reversed(hits):
            merged.update(ev)
        return [
            Finding(
                f"leak-{detector}",
                message + f" (detectors: {', '.join(h[0] for h in hits)})",
                probe.file,
                probe.line,
                probe.id,
                "prompt",
                HINT,
                evidence={
                    "probe_text": text,
                    "train_file": src.file,
                    "train_line": src.line,
                    "train_text": _clip(src.text, 500),
                    "detectors": [h[0] for h in hits],
                    **merged,
                },
            )
        ]


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def find_leaks(probes: Iterable[Probe], index: LeakIndex) -> list[Finding]:
    out: list[Finding] = []
    for probe in probes:
        out.extend(index.check(probe))
    return out


def leak_detectors(
    detectors: Sequence[str], has_train: bool, grammar_read: bool
) -> tuple[list[str] | None, list[Finding]]:
    """(the detectors to run, None to skip leak detection; the warnings saying what was skipped)."""
    if not detectors:
        return None, [
            Finding(
                "leaks-skipped",
                "leak detection is off (leaks.detectors is empty in the configuration)",
                hint="name detectors to check for leaks: `leaks: {detectors: [exact, template, ngram]}`",
            )
        ]
    if not has_train:
        return None, [
            Finding(
                "leaks-skipped",
                "no training files are configured: leak detection was skipped",
                hint="name the training material under `train:` in evalgate.yml or with --train",
            )
        ]
    run = list(detectors)
    if not grammar_read and "template" in run:
        # without the verb table every verb form would be masked as a noun: a flood of false leaks
        run.remove("template")
        return run, [
            Finding(
                "leaks-skipped",
                "the template leak detector was skipped: it keeps verb forms, which come from the grammar "
                "table, and that could not be read",
                hint="fix the grammar table (see its finding); the exact and n-gram detectors ran",
            )
        ]
    return run, []


def leak_policy(policy: str, leaks: Sequence[Finding]) -> tuple[frozenset[str], list[Finding], list[Finding]]:
    """(the ids left out, the blocking findings, the warnings) under `leaks.policy`: "refuse"
    blocks on every leak, "exclude" leaves the leaking probes out of the gated series."""
    if policy != "exclude":
        return frozenset(), list(leaks), []
    excluded = frozenset(f.probe_id for f in leaks if f.probe_id)
    if not excluded:
        return excluded, [], []
    warning = Finding(
        "leaks-excluded",
        f"{len(excluded)} leaking probe(s) left out (leaks.policy: exclude); the gate reads "
        "the strict subset",
        hint="the report shows both series; fix the leaks to score the whole set",
    )
    return excluded, [], [warning]


def leak_stand_ins(records: Sequence[tuple[int, dict]], parsed: Sequence[Probe], shown: str) -> list[Probe]:
    """Records the schema refused whose prompt and expected still read as text.

    The leak detectors only need those two, so a leak is reported in the same run as the schema
    error instead of after it is fixed. The stand-in is used for nothing else.
    """
    done = {p.line for p in parsed}
    out = []
    for line, rec in records:
        prompt, expected = rec.get("prompt"), rec.get("expected")
        if line in done or rec.get("deprecated") is True:
            continue
        if isinstance(prompt, str) and isinstance(expected, str):
            pid = record_id(rec) or ""
            out.append(
                Probe(
                    pid,
                    language="",
                    verb="",
                    regularity="",
                    tense="",
                    person="",
                    label="",
                    category="",
                    prompt=prompt,
                    candidates=(),
                    expected=expected,
                    file=shown,
                    line=line,
                )
            )
    return out
