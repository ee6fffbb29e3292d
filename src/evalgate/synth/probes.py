"""The deterministic probe builder: 300 EN + 300 ES core probes and 25 adversarial ones.

Pure: grammar, lexicon and seed in, `Probe`s out; one `random.Random(seed)` drives every choice,
so the same seed gives the same probes on any machine.

Core design (docs/data.md, "Core probes"): the whole grid, every (verb, tense, person) cell of
each language exactly once (20 verbs x 5 tenses x 3 persons = 300 per language). Written by hand,
a set samples the grid (docs/design.md, "Probe set"); generated probes can afford all of it, and the gate
needs the size: a slice must hold ~100 probes to detect a 10-point drop at realistic
checkpoint-to-checkpoint disagreement (docs/gate.md), and each tense slice then has 120.

Everything that decides the answer sits left of the blank (the scorer reads log p(candidate |
text before the blank)). Distractors are other forms of the same verb: one person-agreement form,
one other-tense form and, for irregular past forms, sometimes the over-regularised form. Two
readings the time marker rules out are never offered, so that exactly one candidate is
right: the habitual past after a present-time marker ("Every day she worked") and the scheduled
present after a future one ("Tomorrow she goes").
"""

from __future__ import annotations

import random

from evalgate.probeset.grammar import Grammar
from evalgate.synth.adversarial import ADVERSARIAL, adversarial_probe
from evalgate.synth.builder import ProbeBuilder
from evalgate.synth.lexicon import Lexicon
from evalgate.types import LANGUAGES, PERSONS, TENSES, Probe

# Core probes labelled ambiguous (docs/data.md: "You work" reads as 2sg or plural; without a time
# marker it also reads as past): kept few, they leave the accuracy denominators.
AMBIGUOUS_PER_LANGUAGE = {"en": 2, "es": 1}


def design_cells(grammar: Grammar, language: str, rng: random.Random) -> list[tuple[str, str, str]]:
    """The (verb, tense, person) of each core probe of one language: every cell of the grid once.

    Verbs in a shuffled order, each verb's 15 cells in a shuffled order: the file reads varied,
    and the same seed always gives the same order.
    """
    cells: list[tuple[str, str, str]] = []
    verbs = [v.infinitive for v in grammar.of_language(language)]
    rng.shuffle(verbs)
    for verb in verbs:
        grid = [(verb, tense, person) for tense in TENSES for person in PERSONS]
        rng.shuffle(grid)
        cells.extend(grid)
    return cells


def build_probes(grammar: Grammar, lexicon: Lexicon, seed: int) -> tuple[list[Probe], list[Probe]]:
    """(core probes, adversarial probes), in file order."""
    b = ProbeBuilder(grammar, lexicon, seed)
    core: list[Probe] = []
    for language in LANGUAGES:
        ambiguous_left = AMBIGUOUS_PER_LANGUAGE[language]
        for verb, tense, person in design_cells(grammar, language, b.rng):
            ambiguous = ambiguous_left > 0 and tense == "present_simple" and person == "2sg"
            ambiguous_left -= int(ambiguous)
            core.append(b.core(language, verb, tense, person, ambiguous))
    adversarial = [adversarial_probe(b, *spec) for spec in ADVERSARIAL]
    return core, adversarial
