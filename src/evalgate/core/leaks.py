"""Leak detection against the training material: an index built once, three detectors.

The index holds, for every training sentence, its exact key and its template key (hashes of the
normal forms of core/text.py, the same functions the corpus generator decontaminates with) and
every window of `window` word tokens, each mapped to the first (file, line) that produced it.
Checking a probe is then a handful of dictionary look-ups: O(probes + sentences), never a
probe x sentence scan (10,000 probes against 100,000 sentences: see bench/validate.py).

The detectors read `fill(prompt, expected)`, the sentence the model would see completed:
  exact     SHA-256 of the lower-cased, whitespace-free text equals a training sentence's (seed 000);
  template  the same after content nouns become <NOUN>, verb forms and time markers kept (seed 000);
  ngram     the probe shares at least one window of `window` normalised tokens (seed 001).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evalgate.core.text import exact_key, fill, ngrams, template_key, template_tokens, word_tokens
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
        self.keep = frozenset(keep)
        self.window = window
        self.detectors = tuple(d for d in DETECTORS if d in detectors)
        self.n_sentences = 0
        self._exact: dict[str, Source] = {}
        self._template: dict[str, Source] = {}
        self._ngrams: dict[str, Source] = {}

    def add(self, file: str, line: int, sentence: str) -> None:
        self.n_sentences += 1
        src = Source(file, line, sentence)
        if "exact" in self.detectors:
            self._exact.setdefault(exact_key(sentence), src)
        if "template" in self.detectors:
            self._template.setdefault(template_key(sentence, self.keep), src)
        if "ngram" in self.detectors:
            grams = self._ngrams
            for gram in ngrams(word_tokens(sentence), self.window):
                grams.setdefault(" ".join(gram), src)

    def add_all(self, file: str, sentences: Iterable[tuple[int, str]]) -> None:
        for line, sentence in sentences:
            self.add(file, line, sentence)

    def check(self, probe: Probe) -> list[Finding]:
        """Every detector that fires on this probe, one finding each (deprecated probes: none)."""
        if probe.deprecated:
            return []
        text = fill(probe.prompt, probe.expected)
        out: list[Finding] = []

        def found(check: str, what: str, src: Source, evidence: dict[str, object]) -> None:
            out.append(
                Finding(
                    check,
                    f"the filled prompt {_clip(text)!r} {what} training sentence {src.where()} "
                    f"{_clip(src.text)!r}",
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
                        **evidence,
                    },
                )
            )

        if "exact" in self.detectors and (src := self._exact.get(exact_key(text))):
            found("leak-exact", "equals (ignoring case and whitespace)", src, {})
        if "template" in self.detectors and (src := self._template.get(template_key(text, self.keep))):
            form = " ".join(template_tokens(text, self.keep))  # the key joins without spaces
            found("leak-template", f"has the same template {form!r} as", src, {"template": form})
        if "ngram" in self.detectors:
            for gram in ngrams(word_tokens(text), self.window):
                key = " ".join(gram)
                if src := self._ngrams.get(key):
                    found(
                        "leak-ngram",
                        f"shares the {self.window}-gram {key!r} with",
                        src,
                        {"ngram": key, "window": self.window},
                    )
                    break  # the first shared window is the evidence; one finding per detector
        return out


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def find_leaks(probes: Iterable[Probe], index: LeakIndex) -> list[Finding]:
    out: list[Finding] = []
    for probe in probes:
        out.extend(index.check(probe))
    return out
