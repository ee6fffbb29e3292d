"""The probe builder both kinds of generated probe share (synth/probes.py, synth/adversarial.py).

One `ProbeBuilder` per generated set holds the seeded `random.Random` every choice draws from, the
ids given so far and the prompts already used, so that no two probes share a prompt. It sits in a
module of its own so that the core and the adversarial probes both import it and neither imports
the other (tests/project/test_import_layers.py forbids the cycle).
"""

from __future__ import annotations

import random

from evalgate.probeset.grammar import Grammar
from evalgate.probeset.text import normalize_exact
from evalgate.synth.lexicon import Lexicon
from evalgate.synth.sentences import Sentence, pick_shape, realise
from evalgate.types import PERSONS, TENSES, Probe

TENSE_ABBR = {
    "infinitive": "inf",
    "present_simple": "pres",
    "past_simple": "past",
    "past_participle": "pp",
    "future": "fut",
}
PERSON_WORDS = {
    "1sg": "first person singular",
    "2sg": "second person singular",
    "3sg": "third person singular",
}


class ProbeBuilder:
    """One probe set's draws: the seeded generator, the ids given so far and the prompts used."""

    def __init__(self, grammar: Grammar, lexicon: Lexicon, seed: int):
        self.grammar, self.lexicon = grammar, lexicon
        self.rng = random.Random(seed)
        self.prompts: set[str] = set()
        self.id_counts: dict[str, int] = {}

    def new_id(self, prefix: str, language: str, verb: str, tense: str, person: str) -> str:
        stem = f"{prefix}-{language}-{verb}-{TENSE_ABBR[tense]}-{person}"
        self.id_counts[stem] = self.id_counts.get(stem, 0) + 1
        return f"{stem}-{self.id_counts[stem]:03d}"

    def sentence(
        self, language: str, verb: str, tense: str, person: str, shape: str | None, **kw
    ) -> Sentence:
        """A sentence whose prompt no other probe has (retrying the draw)."""
        for _ in range(200):
            chosen = shape or pick_shape(tense, self.rng, probe=True)
            s = realise(self.lexicon, self.grammar, language, verb, tense, person, chosen, self.rng, **kw)
            key = normalize_exact(s.prompt())
            if key not in self.prompts:
                self.prompts.add(key)
                return s
        raise RuntimeError(f"no unique prompt for {language}:{verb} {tense} {person}: grow the lexicon")

    def shuffled(self, expected: str, distractors: list[str]) -> list[str]:
        out = [expected]
        for form in distractors:
            if form not in out:
                out.append(form)
        self.rng.shuffle(out)
        return out

    def form(self, language: str, verb: str, tense: str, person: str) -> str:
        entry = self.grammar.get(language, verb)
        assert entry is not None
        return entry.form(tense, person)

    def core_distractors(self, language: str, verb: str, tense: str, person: str) -> list[str]:
        expected = self.form(language, verb, tense, person)
        excluded = {expected}
        if tense == "present_simple":
            excluded.add(self.form(language, verb, "past_simple", person))
        if tense == "future":
            excluded.add(self.form(language, verb, "present_simple", person))
        picks: list[str] = []

        def add_one(pool: list[str]) -> None:
            pool = [f for f in dict.fromkeys(pool) if f not in excluded and f not in picks]
            if pool:
                picks.append(self.rng.choice(pool))

        add_one([self.form(language, verb, tense, p) for p in PERSONS if p != person])
        add_one([self.form(language, verb, t, person) for t in TENSES if t != tense])
        over = self.lexicon[language].overregularised_form(verb, tense, person)
        if over and self.rng.random() < 0.5:
            add_one([over])
        rest = [self.form(language, verb, t, p) for t in TENSES for p in PERSONS]
        while len(picks) < 3 and any(f not in excluded and f not in picks for f in rest):
            add_one(rest)
        return picks

    def core(self, language: str, verb: str, tense: str, person: str, ambiguous: bool) -> Probe:
        shape = "bare" if ambiguous else None
        s = self.sentence(language, verb, tense, person, shape)
        if ambiguous:
            # Present and past both fit without a time marker: offer both on purpose.
            other = "3sg" if person != "3sg" else "1sg"
            distractors = [
                self.form(language, verb, "past_simple", person),
                self.form(language, verb, tense, other),
            ]
            label = "ambiguous"
            explanation = (
                f"Without a time marker '{s.subject} ___' reads as present or past"
                + (" (and 'you' as singular or plural)" if language == "en" else "")
                + f", so more than one candidate fits; '{s.form}' is the present reading."
            )
        else:
            distractors = self.core_distractors(language, verb, tense, person)
            label = "correct"
            explanation = _core_explanation(s)
        return self.probe("probe", s, self.shuffled(s.form, distractors), label, "core", None, explanation)

    def probe(
        self, prefix, s: Sentence, candidates, label, category, reason_code, explanation, expected=None
    ) -> Probe:
        return Probe(
            id=self.new_id(prefix, s.language, s.verb, s.tense, s.person),
            language=s.language,
            verb=s.verb,
            regularity=self.grammar.verbs[(s.language, s.verb)].regularity,
            tense=s.tense,
            person=s.person,
            prompt=s.prompt(),
            candidates=tuple(candidates),
            expected=s.form if expected is None else expected,
            label=label,
            category=category,
            reason_code=reason_code,
            explanation=explanation,
            source="generated",
        )


def _core_explanation(s: Sentence) -> str:
    if s.tense == "present_simple":
        return (
            f"'{s.cue}' marks a habitual present, so with '{s.subject}' ({PERSON_WORDS[s.person]}) "
            f"the present simple is '{s.form}'."
        )
    if s.tense == "past_simple":
        return f"'{s.cue}' puts the event in the past, so '{s.subject}' takes the past simple '{s.form}'."
    if s.tense == "future":
        return f"'{s.cue}' points to the future, so '{s.subject}' takes the future '{s.form}'."
    if s.tense == "past_participle":
        aux = s.before.split()[-1] if s.shape != "adverb" or s.language == "es" else s.cue.split()[0]
        return f"After the auxiliary '{aux}' the verb takes the past participle '{s.form}'."
    return f"After '{s.cue}' the verb stays in the infinitive: '{s.form}'."
