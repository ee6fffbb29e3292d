"""The lexicon (`data/grammar/lexicon.yaml`): subjects, time markers, frames and complements.

Pure: a parsed YAML mapping in, a frozen `Lexicon` out. The file is edited by hand, so every
problem is reported at once with its dotted path (e.g. `es.complements.ir: missing`), and the
lexicon is checked against the grammar table it is used with (a complement list per verb, the
translations between target verbs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jsonschema

from evalgate.errors import RefusedError
from evalgate.probeset.grammar import Grammar
from evalgate.types import LANGUAGES, PERSONS

_WORDS = {"type": "array", "minItems": 1, "items": {"type": "string"}}
_NONEMPTY_WORDS = {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}}
_TRIPLE = {"type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "string", "minLength": 1}}
_BY_PERSON = {
    "type": "object",
    "required": list(PERSONS),
    "additionalProperties": False,
    "properties": {p: _NONEMPTY_WORDS for p in PERSONS},
}
_MARKED_TENSES = ("present_simple", "past_simple", "future", "past_participle")
_LANGUAGE_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": [
        "subjects",
        "markers",
        "adverbs",
        "auxiliary",
        "infinitive_frames",
        "interjections",
        "complements",
        "overregularised",
        "plural_subjects",
    ],
    "properties": {
        "subjects": {
            "type": "object",
            "required": list(PERSONS),
            "additionalProperties": False,
            "properties": {
                "1sg": _NONEMPTY_WORDS,
                "2sg": _NONEMPTY_WORDS,
                "3sg": {
                    "type": "object",
                    "required": ["pronouns", "names", "nouns"],
                    "additionalProperties": False,
                    "properties": {k: _NONEMPTY_WORDS for k in ("pronouns", "names", "nouns")},
                },
            },
        },
        "markers": {
            "type": "object",
            "required": list(_MARKED_TENSES),
            "additionalProperties": False,
            "properties": {t: _NONEMPTY_WORDS for t in _MARKED_TENSES},
        },
        "adverbs": {
            "type": "object",
            "required": ["present_simple", "past_participle"],
            "additionalProperties": False,
            "properties": {"present_simple": _NONEMPTY_WORDS, "past_participle": _NONEMPTY_WORDS},
        },
        "auxiliary": {
            "type": "object",
            "required": list(PERSONS),
            "additionalProperties": False,
            "properties": {p: {"type": "string", "minLength": 1} for p in PERSONS},
        },
        "infinitive_frames": _BY_PERSON,
        "interjections": _NONEMPTY_WORDS,
        "complements": {"type": "object", "additionalProperties": {**_WORDS, "minItems": 3}},
        "overregularised": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"past_simple": _TRIPLE, "past_participle": _TRIPLE},
            },
        },
        "plural_subjects": {"type": "object", "additionalProperties": _NONEMPTY_WORDS},
    },
}
LEXICON_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": [*LANGUAGES, "translations"],
    "properties": {
        **{lang: _LANGUAGE_SCHEMA for lang in LANGUAGES},
        "translations": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}


@dataclass(frozen=True)
class LanguageLexicon:
    pronouns_1sg: tuple[str, ...]
    pronouns_2sg: tuple[str, ...]
    pronouns_3sg: tuple[str, ...]
    names: tuple[str, ...]
    nouns: tuple[str, ...]
    markers: dict[str, tuple[str, ...]]  # tense -> fronted time markers
    adverbs: dict[str, tuple[str, ...]]  # present_simple / past_participle -> adverbs
    auxiliary: dict[str, str]  # person -> has/have, he/has/ha
    infinitive_frames: dict[str, tuple[str, ...]]  # person -> "wants to", "quiere", ...
    interjections: tuple[str, ...]
    complements: dict[str, tuple[str, ...]]  # verb -> complements ("" = none)
    overregularised: dict[str, dict[str, tuple[str, str, str]]]  # verb -> tense -> forms
    plural_subjects: dict[str, tuple[str, ...]]  # person filed under -> plural subjects

    def overregularised_form(self, verb: str, tense: str, person: str) -> str | None:
        forms = self.overregularised.get(verb, {}).get(tense)
        return forms[PERSONS.index(person)] if forms else None


@dataclass(frozen=True)
class Lexicon:
    languages: dict[str, LanguageLexicon]
    translations: dict[str, str]  # English verb -> Spanish verb

    def __getitem__(self, language: str) -> LanguageLexicon:
        return self.languages[language]


def _where(err: jsonschema.ValidationError) -> str:
    return ".".join(str(p) for p in err.absolute_path) or "(top level)"


def lexicon_from_dict(data: Any, grammar: Grammar, source: str = "lexicon") -> Lexicon:
    """Check a parsed lexicon against its schema and the grammar; RefusedError lists every problem."""
    validator = jsonschema.Draft202012Validator(LEXICON_SCHEMA)
    problems = [
        f"{source}: {_where(e)}: {e.message}"
        for e in sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    ]
    if problems:
        raise RefusedError(
            "invalid lexicon:\n  " + "\n  ".join(problems), hint="fix the entries named above and rerun"
        )
    for lang in LANGUAGES:
        verbs = {v.infinitive for v in grammar.of_language(lang)}
        entry = data[lang]
        for verb in sorted(verbs - set(entry["complements"])):
            problems.append(f"{source}: {lang}.complements.{verb}: missing (every target verb needs a list)")
        for key in ("complements", "overregularised"):
            for verb in sorted(set(entry[key]) - verbs):
                problems.append(f"{source}: {lang}.{key}.{verb}: not a target verb of the grammar table")
        for person in sorted(set(entry["plural_subjects"]) - set(PERSONS)):
            problems.append(f"{source}: {lang}.plural_subjects.{person}: not one of {', '.join(PERSONS)}")
    for en_verb, es_verb in data["translations"].items():
        if grammar.get("en", en_verb) is None or grammar.get("es", es_verb) is None:
            problems.append(f"{source}: translations.{en_verb}: {en_verb} -> {es_verb} is not a target pair")
    if problems:
        raise RefusedError(
            "invalid lexicon:\n  " + "\n  ".join(problems),
            hint="the lexicon must name exactly the verbs of the grammar table (data/grammar/verbs.yaml)",
        )
    return Lexicon(
        languages={lang: _language(data[lang]) for lang in LANGUAGES},
        translations=dict(data["translations"]),
    )


def _language(entry: dict[str, Any]) -> LanguageLexicon:
    subjects = entry["subjects"]
    return LanguageLexicon(
        pronouns_1sg=tuple(subjects["1sg"]),
        pronouns_2sg=tuple(subjects["2sg"]),
        pronouns_3sg=tuple(subjects["3sg"]["pronouns"]),
        names=tuple(subjects["3sg"]["names"]),
        nouns=tuple(subjects["3sg"]["nouns"]),
        markers={t: tuple(entry["markers"][t]) for t in _MARKED_TENSES},
        adverbs={t: tuple(v) for t, v in entry["adverbs"].items()},
        auxiliary=dict(entry["auxiliary"]),
        infinitive_frames={p: tuple(entry["infinitive_frames"][p]) for p in PERSONS},
        interjections=tuple(entry["interjections"]),
        complements={verb: tuple(c) for verb, c in entry["complements"].items()},
        overregularised={
            verb: {t: tuple(forms) for t, forms in by_tense.items()}
            for verb, by_tense in entry["overregularised"].items()
        },
        plural_subjects={p: tuple(s) for p, s in entry["plural_subjects"].items()},
    )
