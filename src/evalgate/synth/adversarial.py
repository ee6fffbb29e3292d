"""The adversarial probes: six categories (docs/data.md), each probe tagged with its reason_code.

    PAST-IRREG      over-regularised past         Yesterday he ___ ...      went / goed / goes
    PRES-3SG-S      missing 3sg -s                Every day she ___ ...     works / work
    TENSE-MARKER    marker, then a distraction    Yesterday, after lunch, I ___ ...  worked / work / will work
    AUX-MISMATCH    auxiliary + participle        She ___ fish.             has eaten / have eaten / has eat
    EN-ES-MISMATCH  right form, wrong language    Yesterday I ___ ...       went / fui / go
    PLURAL-OOS      plural subject, out of scope  Every day we ___ ...      label ambiguous

As in the core set, everything that decides the answer is left of the blank.
"""

from __future__ import annotations

from evalgate.synth.builder import ProbeBuilder
from evalgate.types import PERSONS, Probe

# (reason_code, language, verb, tense, person, plural form): the plural form is given for the
# Spanish PLURAL-OOS probe, whose right answer the singular-only grammar table does not hold.
ADVERSARIAL: tuple[tuple[str, str, str, str, str, str | None], ...] = (
    ("PAST-IRREG", "en", "go", "past_simple", "3sg", None),
    ("PAST-IRREG", "en", "eat", "past_simple", "1sg", None),
    ("PAST-IRREG", "en", "write", "past_simple", "3sg", None),
    ("PAST-IRREG", "en", "come", "past_simple", "2sg", None),
    ("PAST-IRREG", "es", "hacer", "past_simple", "3sg", None),
    ("PRES-3SG-S", "en", "work", "present_simple", "3sg", None),
    ("PRES-3SG-S", "en", "go", "present_simple", "3sg", None),
    ("PRES-3SG-S", "en", "have", "present_simple", "3sg", None),
    ("PRES-3SG-S", "en", "watch", "present_simple", "3sg", None),
    ("TENSE-MARKER", "en", "work", "past_simple", "1sg", None),
    ("TENSE-MARKER", "en", "go", "future", "3sg", None),
    ("TENSE-MARKER", "es", "limpiar", "future", "1sg", None),
    ("TENSE-MARKER", "es", "comer", "past_simple", "3sg", None),
    ("AUX-MISMATCH", "en", "eat", "past_participle", "3sg", None),
    ("AUX-MISMATCH", "en", "write", "past_participle", "1sg", None),
    ("AUX-MISMATCH", "en", "take", "past_participle", "3sg", None),
    ("AUX-MISMATCH", "es", "hacer", "past_participle", "3sg", None),
    ("EN-ES-MISMATCH", "en", "go", "past_simple", "1sg", None),
    ("EN-ES-MISMATCH", "en", "have", "present_simple", "3sg", None),
    ("EN-ES-MISMATCH", "es", "ir", "past_simple", "1sg", None),
    ("EN-ES-MISMATCH", "es", "trabajar", "future", "3sg", None),
    ("PLURAL-OOS", "en", "work", "present_simple", "1sg", None),
    ("PLURAL-OOS", "en", "go", "past_simple", "3sg", None),
    ("PLURAL-OOS", "en", "eat", "future", "3sg", None),
    ("PLURAL-OOS", "es", "trabajar", "present_simple", "1sg", "trabajamos"),
)
_LANGUAGE_NAMES = {"en": "English", "es": "Spanish"}


def adversarial_probe(
    b: ProbeBuilder, reason: str, language: str, verb: str, tense: str, person: str, plural_form: str | None
) -> Probe:
    lex = b.lexicon[language]

    def form(t: str, p: str = person) -> str:
        return b.form(language, verb, t, p)

    expected = None
    label = "correct"
    if reason == "PAST-IRREG":
        s = b.sentence(language, verb, tense, person, "fronted")
        over = lex.overregularised_form(verb, tense, person)
        if over is None:
            raise ValueError(f"lexicon: {language}.overregularised.{verb} has no {tense}")
        others = [over, form("present_simple")]
        explanation = f"'{verb}' is irregular: after '{s.cue}' its past is '{s.form}', not '{over}'."
    elif reason == "PRES-3SG-S":
        s = b.sentence(language, verb, tense, person, "fronted")
        bare = form("present_simple", "1sg")
        others = [bare]
        explanation = (
            f"A third-person singular subject ('{s.subject}') takes -s in the present simple: "
            f"'{s.form}', not '{bare}'."
        )
    elif reason == "TENSE-MARKER":
        interjection = b.rng.choice(lex.interjections)
        s = b.sentence(language, verb, tense, person, "fronted", interjection=interjection)
        if tense == "past_simple":
            others = [form("present_simple"), form("future")]
        else:  # future: never the present, which a marker of the future also allows ("Tomorrow I work")
            others = [form("past_simple"), form("past_participle")]
        explanation = (
            f"The time marker '{s.cue}' still decides the tense across '{interjection}': '{s.form}'."
        )
    elif reason == "AUX-MISMATCH":
        s = b.sentence(language, verb, tense, person, "bare", aux_in_form=True)
        aux = lex.auxiliary[person]
        wrong_aux = next(lex.auxiliary[p] for p in PERSONS if lex.auxiliary[p] != aux)
        pp = form("past_participle")
        bad_pp = lex.overregularised_form(verb, tense, person) if language == "es" else form("infinitive")
        others = [f"{wrong_aux} {pp}", f"{aux} {bad_pp}", f"{aux} {form('past_simple')}"]
        explanation = (
            f"The perfect needs the auxiliary that agrees with '{s.subject}' ('{aux}') and the "
            f"past participle '{pp}'."
        )
    elif reason == "EN-ES-MISMATCH":
        if language == "en":
            other_language, other_verb = "es", b.lexicon.translations[verb]
        else:
            reverse = {es: en for en, es in b.lexicon.translations.items()}
            other_language, other_verb = "en", reverse[verb]
        s = b.sentence(language, verb, tense, person, "fronted")
        foreign = b.form(other_language, other_verb, tense, person)
        others = [foreign, b.core_distractors(language, verb, tense, person)[0]]
        explanation = (
            f"The sentence is {_LANGUAGE_NAMES[language]}, so '{s.form}' is right and '{foreign}' "
            f"is the same form in {_LANGUAGE_NAMES[other_language]}."
        )
    elif reason == "PLURAL-OOS":
        subject = b.rng.choice(lex.plural_subjects[person])
        s = b.sentence(language, verb, tense, person, "fronted", subject=subject)
        expected = plural_form or s.form
        pool = [form("present_simple", "3sg"), form("present_simple", "1sg"), form("past_simple")]
        others = [f for f in dict.fromkeys(pool) if f != expected][:2]
        label = "ambiguous"
        explanation = (
            f"Plural subjects such as '{subject}' are out of scope (only 1sg, 2sg and 3sg are "
            f"modelled), so the probe is ambiguous and reported apart; person records the nearest singular."
        )
    else:
        raise ValueError(f"unknown adversarial reason_code {reason!r}")
    candidates = b.shuffled(expected or s.form, others)
    return b.probe("adv", s, candidates, label, "adversarial", reason, explanation, expected=expected)
