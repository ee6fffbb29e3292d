"""The synthetic EN+ES corpus: every verb x tense x person, decontaminated against the probes.

Pure: grammar, lexicon, seed and the probes' filled sentences in; train/val/test records out.
Generation is stratified: each round visits all 600 cells (2 languages x 20 verbs x 5 tenses x
3 persons) in a shuffled order and draws one sentence per cell, so languages, tenses, persons and
verbs stay balanced whatever the size. Every sentence is unique after `text.normalize_exact`
(which also makes test disjoint from train and val), and a sentence that any of the three leak
detectors of docs/validate.md would match to a probe is dropped before it is kept (docs/data.md,
"Decontamination": held-out material never enters training). The detectors use exactly the functions of
`probeset.text`, on the same side of the comparison as `evalgate validate` does.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from evalgate.errors import RefusedError
from evalgate.probeset import text as T
from evalgate.probeset.grammar import Grammar
from evalgate.synth.lexicon import Lexicon
from evalgate.synth.sentences import pick_shape, realise
from evalgate.types import LANGUAGES, PERSONS, TENSES

DETECTORS = ("exact", "template", "ngram")
# Attempts per wanted sentence before we conclude the lexicon cannot give that many unique ones.
_MAX_ATTEMPTS_PER_SENTENCE = 20


class ProbeFilter:
    """Answers "would `evalgate validate` call this sentence a leak of some probe?".

    Built from each probe's `text.fill(prompt, expected)`; three indexes (hash sets and an n-gram
    set), so checking a sentence costs a few hash lookups, never a scan over the probes.
    """

    def __init__(self, held_out: Iterable[tuple[str, str]], keep: set[str], window: int):
        self.keep = frozenset(keep)
        self.window = window
        self._exact: dict[str, str] = {}
        self._template: dict[str, str] = {}
        self._ngram: dict[tuple[str, ...], str] = {}
        for probe_id, filled in held_out:
            self._exact.setdefault(T.exact_key(filled), probe_id)
            self._template.setdefault(T.template_key(filled, self.keep), probe_id)
            for gram in T.ngrams(T.word_tokens(filled), window):
                self._ngram.setdefault(gram, probe_id)

    def collision(self, sentence: str) -> tuple[str, str] | None:
        """(detector, probe id) of the first detector that fires, or None when the sentence is clean."""
        hit = self._exact.get(T.exact_key(sentence))
        if hit is not None:
            return "exact", hit
        hit = self._template.get(T.template_key(sentence, self.keep))
        if hit is not None:
            return "template", hit
        for gram in T.ngrams(T.word_tokens(sentence), self.window):
            hit = self._ngram.get(gram)
            if hit is not None:
                return "ngram", hit
        return None


@dataclass(frozen=True)
class CorpusStats:
    attempts: int  # sentences drawn
    duplicates: int  # drawn again after normalisation (skipped)
    dropped: dict[str, int]  # detector -> sentences dropped because they would leak a probe
    dropped_by_probe: dict[str, int] = field(default_factory=dict)  # probe id -> sentences dropped

    @property
    def dropped_total(self) -> int:
        return sum(self.dropped.values())


@dataclass(frozen=True)
class Corpus:
    train: list[dict[str, str]]
    val: list[dict[str, str]]
    test: list[dict[str, str]]
    stats: CorpusStats


def split_sizes(train_size: int) -> tuple[int, int, int]:
    """(train, val, test): val and test are each 1/12 of train (24,000 -> 2,000 + 2,000)."""
    held = max(1, round(train_size / 12))
    return train_size, held, held


def cells(grammar: Grammar) -> list[tuple[str, str, str, str]]:
    return [
        (lang, verb.infinitive, tense, person)
        for lang in LANGUAGES
        for verb in grammar.of_language(lang)
        for tense in TENSES
        for person in PERSONS
    ]


def build_corpus(
    grammar: Grammar,
    lexicon: Lexicon,
    seed: int,
    sizes: tuple[int, int, int],
    reject: Callable[[str], tuple[str, str] | None] | None = None,
) -> Corpus:
    """Draw unique, probe-clean sentences until train+val+test are full, then split them.

    `reject` is usually `ProbeFilter.collision`; None builds an unfiltered corpus (tests).
    """
    train_size, val_size, test_size = sizes
    if min(sizes) < 1:
        raise RefusedError(
            f"corpus sizes must be positive, got train={train_size} val={val_size} test={test_size}",
            hint="pass --train-size 1200 or more",
        )
    total = train_size + val_size + test_size
    rng = random.Random(seed)
    all_cells = cells(grammar)
    seen: set[str] = set()
    records: list[dict[str, str]] = []
    dropped = dict.fromkeys(DETECTORS, 0)
    by_probe: dict[str, int] = {}
    attempts = duplicates = 0
    while len(records) < total:
        order = list(all_cells)
        rng.shuffle(order)
        for language, verb, tense, person in order:
            if len(records) >= total:
                break
            attempts += 1
            if attempts > total * _MAX_ATTEMPTS_PER_SENTENCE:
                raise RefusedError(
                    f"the lexicon gave only {len(records)} unique clean sentences of the {total} asked for",
                    hint="ask for a smaller --train-size or add subjects/complements to the lexicon",
                )
            shape = pick_shape(tense, rng)
            text = realise(lexicon, grammar, language, verb, tense, person, shape, rng).text()
            key = T.normalize_exact(text)
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            hit = reject(text) if reject is not None else None
            if hit is not None:
                dropped[hit[0]] += 1
                by_probe[hit[1]] = by_probe.get(hit[1], 0) + 1
                continue
            records.append(
                {"text": text, "language": language, "verb": verb, "tense": tense, "person": person}
            )
    # The split is drawn after generation so that each split is a random sample of the whole.
    rng.shuffle(records)
    test = records[:test_size]
    val = records[test_size : test_size + val_size]
    train = records[test_size + val_size :]
    stats = CorpusStats(attempts, duplicates, dropped, dict(sorted(by_probe.items())))
    return Corpus(train=train, val=val, test=test, stats=stats)
