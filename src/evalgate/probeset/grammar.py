"""The verb table: which verbs are targets, their regularity, and every form."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import jsonschema

from evalgate.errors import RefusedError
from evalgate.schemas import schema
from evalgate.types import PERSONS, TENSES


@dataclass(frozen=True)
class Verb:
    language: str
    infinitive: str
    regularity: str
    forms: dict[str, tuple[str, str, str]]  # tense -> (1sg, 2sg, 3sg)

    def form(self, tense: str, person: str) -> str:
        return self.forms[tense][PERSONS.index(person)]


@dataclass(frozen=True)
class Grammar:
    verbs: dict[tuple[str, str], Verb]  # (language, infinitive) -> Verb

    def get(self, language: str, verb: str) -> Verb | None:
        return self.verbs.get((language, verb))

    def of_language(self, language: str) -> list[Verb]:
        return [v for (lang, _), v in sorted(self.verbs.items()) if lang == language]

    def all_forms(self) -> set[str]:
        """Every verb form, word by word, lower-cased (the template detector keeps these)."""
        words: set[str] = set()
        for verb in self.verbs.values():
            for forms in verb.forms.values():
                for form in forms:
                    words.update(form.lower().split())
        return words


_MAX_ERRORS = 10


def _summary(e: jsonschema.ValidationError) -> str:
    """What is wrong, without jsonschema's copy of the whole value (kilobytes for a verb table)."""
    if len(e.message) <= 160:
        return e.message
    rule = json.dumps(e.validator_value, ensure_ascii=False, default=str)
    rule = rule if len(rule) <= 80 else rule[:79] + "…"
    return f"the {type(e.instance).__name__} value here fails the schema's `{e.validator}` rule ({rule})"


def grammar_from_dict(data: Any, source: str = "grammar") -> Grammar:
    """Schema-check a parsed verb table and build the Grammar; RefusedError lists every problem."""
    validator = jsonschema.Draft202012Validator(schema("grammar"))
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [
            f"{source}: {'.'.join(str(p) for p in e.absolute_path) or '(top level)'}: {_summary(e)}"
            for e in errors[:_MAX_ERRORS]
        ]
        if len(errors) > _MAX_ERRORS:
            lines.append(f"... and {len(errors) - _MAX_ERRORS} more problem(s) of the same table")
        raise RefusedError("invalid grammar table:\n  " + "\n  ".join(lines))
    verbs: dict[tuple[str, str], Verb] = {}
    for language in ("en", "es"):
        table = data[language]
        counts = {"regular": 0, "irregular": 0}
        for infinitive, entry in table.items():
            counts[entry["regularity"]] += 1
            verbs[(language, infinitive)] = Verb(
                language=language,
                infinitive=infinitive,
                regularity=entry["regularity"],
                forms={t: tuple(entry[t]) for t in TENSES},
            )
        if counts != {"regular": 12, "irregular": 8}:
            raise RefusedError(
                f"{source}: {language} must have 12 regular and 8 irregular verbs, "
                f"has {counts['regular']} and {counts['irregular']}"
            )
    return Grammar(verbs=verbs)
