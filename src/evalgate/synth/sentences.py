"""One sentence around one verb form: the realiser shared by the corpus and the probe builder.

A sentence is (before, form, after): the corpus writes `before form after.`, a probe writes
`before ___ after.` Sharing the realiser keeps the probes in the corpus's own conventions, which
is what a small model trained on the corpus can be asked about (a bias to acknowledge, docs/design.md;
docs/data.md does).

Shapes, by where the cue that decides the form sits:

    fronted   marker subject FORM complement         Yesterday she went to the park.
    adverb    subject adverb FORM complement         She usually works at home.
              subject aux adverb FORM complement     She has already eaten lunch.   (EN perfect)
              subject adverb aux FORM complement     Ella ya ha comido pan.         (ES perfect)
    final     subject FORM complement marker         She went to the park yesterday.
    bare      subject FORM complement                She went to the park.  /  She has eaten lunch.
    frame     subject frame FORM complement          She wants to eat lunch.  /  Ella quiere comer.

The perfect's auxiliary (has/ha) is context, not form: the blank holds the participle alone,
except for AUX-MISMATCH probes (`aux_in_form`), whose blank holds "has eaten".
Probes use only shapes whose cue is left of the blank (PROBE_SHAPES); "final" and "bare" (outside
the perfect) exist for the corpus, so that it is not a list of one sentence pattern.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from evalgate.probeset.grammar import Grammar
from evalgate.synth.lexicon import LanguageLexicon, Lexicon
from evalgate.types import BLANK

# (shape, weight) per tense for the corpus; weights are small integers so rng.choices stays exact.
CORPUS_SHAPES: dict[str, tuple[tuple[str, int], ...]] = {
    "present_simple": (("fronted", 4), ("adverb", 2), ("final", 2), ("bare", 2)),
    "past_simple": (("fronted", 5), ("final", 3), ("bare", 2)),
    "future": (("fronted", 5), ("final", 3), ("bare", 2)),
    "past_participle": (("fronted", 3), ("adverb", 4), ("bare", 3)),
    "infinitive": (("frame", 1),),
}
PROBE_SHAPES: dict[str, tuple[tuple[str, int], ...]] = {
    "present_simple": (("fronted", 2), ("adverb", 1)),
    "past_simple": (("fronted", 1),),
    "future": (("fronted", 1),),
    "past_participle": (("fronted", 1), ("adverb", 1), ("bare", 1)),
    "infinitive": (("frame", 1),),
}
# Share of 3sg subjects by kind: pronouns, names, common nouns.
_SUBJECT_KINDS = (("pronoun", 4), ("name", 3), ("noun", 3))


@dataclass(frozen=True)
class Sentence:
    language: str
    verb: str
    tense: str
    person: str
    shape: str
    subject: str
    cue: str  # the words that decide the form (marker, adverb, auxiliary, frame); "" for bare
    before: str
    form: str
    after: str

    def text(self) -> str:
        return _sentence(self.before, self.form, self.after)

    def prompt(self) -> str:
        return _sentence(self.before, BLANK, self.after)


def _sentence(before: str, middle: str, after: str) -> str:
    body = " ".join(part for part in (before, middle, after) if part)
    return body[0].upper() + body[1:] + "."


def pick_shape(tense: str, rng: random.Random, *, probe: bool = False) -> str:
    table = (PROBE_SHAPES if probe else CORPUS_SHAPES)[tense]
    return rng.choices([s for s, _ in table], weights=[w for _, w in table])[0]


def pick_subject(lex: LanguageLexicon, person: str, rng: random.Random) -> str:
    if person == "1sg":
        return rng.choice(lex.pronouns_1sg)
    if person == "2sg":
        return rng.choice(lex.pronouns_2sg)
    kind = rng.choices([k for k, _ in _SUBJECT_KINDS], weights=[w for _, w in _SUBJECT_KINDS])[0]
    pool = {"pronoun": lex.pronouns_3sg, "name": lex.names, "noun": lex.nouns}[kind]
    return rng.choice(pool)


def infinitive_frames(lex: LanguageLexicon, grammar: Grammar, language: str, verb: str, person: str):
    """The frames usable with `verb`: none that repeats the verb ("quiero querer", "voy a ir")."""
    entry = grammar.get(language, verb)
    assert entry is not None
    own = {w for forms in entry.forms.values() for form in forms for w in form.lower().split()}
    return [f for f in lex.infinitive_frames[person] if not own & set(f.lower().split())]


def realise(
    lexicon: Lexicon,
    grammar: Grammar,
    language: str,
    verb: str,
    tense: str,
    person: str,
    shape: str,
    rng: random.Random,
    *,
    subject: str | None = None,
    interjection: str | None = None,
    aux_in_form: bool = False,
) -> Sentence:
    """Draw one sentence of `shape` for the cell (language, verb, tense, person).

    `subject` overrides the drawn subject (plural out-of-scope probes); `interjection` goes
    between a fronted marker and the subject (TENSE-MARKER probes).
    """
    lex = lexicon[language]
    entry = grammar.get(language, verb)
    if entry is None:
        raise KeyError(f"{language}:{verb} is not in the grammar table")
    subj = subject if subject is not None else pick_subject(lex, person, rng)
    form = entry.form(tense, person)
    complement = rng.choice(lex.complements[verb])
    cue = ""
    before: list[str] = []
    after: list[str] = [complement]

    if tense == "infinitive":
        if shape != "frame":
            raise ValueError(f"the infinitive has only the 'frame' shape, not {shape!r}")
        cue = rng.choice(infinitive_frames(lex, grammar, language, verb, person))
        before = [subj, cue]
    elif tense == "past_participle":
        aux = lex.auxiliary[person]
        if shape == "fronted":
            marker = rng.choice(lex.markers[tense])
            before, cue = [marker, subj, aux], marker
        elif shape == "adverb":
            adverb = rng.choice(lex.adverbs[tense])
            # English puts the adverb after the auxiliary, Spanish before it.
            before = [subj, aux, adverb] if language == "en" else [subj, adverb, aux]
            cue = f"{aux} {adverb}" if language == "en" else f"{adverb} {aux}"
        elif shape == "bare":
            before, cue = [subj, aux], aux
        else:
            raise ValueError(f"the past participle has no {shape!r} shape")
        if aux_in_form:
            if before[-1] != aux:
                raise ValueError("aux_in_form needs the auxiliary right before the participle")
            before, form = before[:-1], f"{aux} {form}"
    else:
        if shape == "fronted":
            marker = rng.choice(lex.markers[tense])
            # "Yesterday, after lunch, she ..." keeps the marker away from the verb on purpose.
            before = [f"{marker}, {interjection},", subj] if interjection else [marker, subj]
            cue = marker
        elif shape == "adverb" and tense == "present_simple":
            adverb = rng.choice(lex.adverbs[tense])
            before, cue = [subj, adverb], adverb
        elif shape == "final":
            marker = rng.choice(lex.markers[tense])
            before, after = [subj], [complement, marker]
        elif shape == "bare":
            before = [subj]
        else:
            raise ValueError(f"the {tense} has no {shape!r} shape")
    return Sentence(
        language=language,
        verb=verb,
        tense=tense,
        person=person,
        shape=shape,
        subject=subj,
        cue=cue,
        before=" ".join(w for w in before if w),
        form=form,
        after=" ".join(w for w in after if w),
    )
