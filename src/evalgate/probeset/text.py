"""Text normalisation shared by the leak detectors and the corpus generator's decontamination.

One definition, used on both sides of every comparison (a probe and a training sentence are
normalised by the same function, or the hashes could never meet):

Every form starts from `normalize` (probeset/normalize.py: NFKC, invisible characters removed,
whitespace collapsed, case-folded).

- exact:    the word tokens joined by one space: punctuation and whitespace do not count.
- tokens:   the word tokens (Unicode `\\w+`: ñ and accents are kept, punctuation dropped) - the
            unit of the n-gram window.
- template: the token sequence, where every word that is not a verb form of the grammar table, a
            function word or a time-marker word is replaced by <NOUN>, and runs of <NOUN> collapse
            into one. "At the office" and "at the school" become the same template; the verb form
            and the time marker ("yesterday", "every day", "la semana pasada") stay as they are.
- clauses:  the token keys of every sentence and every comma-separated clause of a text: a short
            probe copied as one sentence of a longer training line meets one of them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from evalgate.probeset.normalize import normalize

NOUN = "<NOUN>"

_WORD = re.compile(r"\w+", re.UNICODE)

# Closed-class words and time-marker words of both languages. Everything else that is not a
# verb form counts as content (masked by the template detector). Lower-case, NFC.
FUNCTION_WORDS_EN = frozenset(
    """
    i you he she it we they me him her us them my your his its our their mine yours
    a an the this that these those some any every each no all both another other
    and or but so because if when while than then as
    at in on to from with without for of by about into onto over under after before
    near behind between through during around up down out off
    am is are was were be been being do does did done not don't doesn't didn't
    has have had having will would shall should can could may might must
    there here very too also still just only again already yet never always often usually
    sometimes ever soon later early late well
    yesterday today tomorrow tonight now ago last next day days week weeks month months
    year years morning afternoon evening night weekend right moment currently
    monday tuesday wednesday thursday friday saturday sunday
    what who where why how which
    """.split()
)
FUNCTION_WORDS_ES = frozenset(
    """
    yo tú tu él ella usted nosotros nosotras vosotros ellos ellas me te se lo la le nos os
    los las les mi mis tus su sus nuestro nuestra
    un una unos unas el este esta estos estas ese esa esos esas aquel cada todo toda todos
    todas otro otra ningún ninguna algún alguna
    y o pero porque si cuando mientras que como ni
    a ante con contra de del al desde en entre hacia hasta para por sin sobre tras durante
    no sí muy también ya todavía nunca siempre casi solo sólo aún
    he has ha hemos habéis han había va voy vas
    ayer hoy mañana anoche ahora antes después luego pronto tarde temprano
    día días semana semanas mes meses año años noche tarde fin pasado pasada próximo
    próxima que viene cada mismo momento
    lunes martes miércoles jueves viernes sábado domingo
    qué quién dónde cuándo cómo cuál
    """.split()
)
FUNCTION_WORDS = FUNCTION_WORDS_EN | FUNCTION_WORDS_ES


def nfc_lower(text: str) -> str:
    """The shared normal form (probeset/normalize.py): NFKC, no invisible characters, one space, folded."""
    return normalize(text)


def normalize_exact(text: str) -> str:
    """Lower-case and remove all whitespace (the exact detector's normal form)."""
    return "".join(nfc_lower(text).split())


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def exact_key(text: str) -> str:
    """The exact detector's key: the word tokens, punctuation removed ("Last week, I danced!" is
    "last week i danced"), so a copy that only adds or drops punctuation still meets."""
    return sha256_hex(" ".join(word_tokens(text)))


def word_tokens(text: str) -> list[str]:
    """Normalised word tokens (no punctuation): the unit of the n-gram window."""
    return _WORD.findall(nfc_lower(text))


# Where a sentence or a clause ends: a probe copied into a longer line keeps its own boundaries.
_SENTENCE_END = re.compile(r"[.!?\u2026;:\u3002]+")
_CLAUSE_END = re.compile(r"[^\w\s'\u2019-]+")


def clause_keys(text: str) -> set[str]:
    """Token keys (as in `exact_key`, unhashed) of each sentence and each clause of `text`."""
    return clause_keys_normal(nfc_lower(text))


def clause_keys_normal(norm: str) -> set[str]:
    """`clause_keys` of a text already normalised (the leak index normalises each sentence once).

    A text of one clause has no key here: its only key is its exact key.
    """
    clauses = [key for part in _CLAUSE_END.split(norm) if (key := " ".join(_WORD.findall(part)))]
    if len(clauses) < 2:
        return set()
    out = set(clauses)
    for part in _SENTENCE_END.split(norm):
        if key := " ".join(_WORD.findall(part)):
            out.add(key)
    return out


def sentence_keys_normal(norm: str) -> set[str]:
    """Token keys of each sentence of a normalised text of two sentences or more (not its clauses:
    a short question matched against commas would meet every list in the corpus)."""
    keys = [key for part in _SENTENCE_END.split(norm) if (key := " ".join(_WORD.findall(part)))]
    return set(keys) if len(keys) > 1 else set()


def ngrams(tokens: list[str], n: int) -> Iterable[tuple[str, ...]]:
    for i in range(len(tokens) - n + 1):
        yield tuple(tokens[i : i + n])


def template_tokens(text: str, keep: frozenset[str] | set[str]) -> list[str]:
    """Tokens with content words masked; `keep` = verb forms (function words are always kept)."""
    return masked_tokens(_WORD.findall(nfc_lower(text)), keep)


def tokens_normal(norm: str) -> list[str]:
    """`word_tokens` of a text already normalised."""
    return _WORD.findall(norm)


def masked_tokens(tokens: list[str], keep: frozenset[str] | set[str]) -> list[str]:
    """The template detector's tokens from word tokens (see `template_tokens`)."""
    out: list[str] = []
    for tok in tokens:
        masked = NOUN if tok not in keep and tok not in FUNCTION_WORDS else tok
        if masked == NOUN and out and out[-1] == NOUN:
            continue
        out.append(masked)
    return out


def template_form(text: str, keep: frozenset[str] | set[str]) -> str:
    """The normalised template string (whitespace-free join, like the exact form)."""
    return "".join(template_tokens(text, keep))


def template_key(text: str, keep: frozenset[str] | set[str]) -> str:
    return sha256_hex(template_form(text, keep))


def fill(prompt: str, form: str) -> str:
    """The prompt with its blank replaced by a form: what the leak detectors compare.

    A question (a multiple-choice item without a blank, docs/suites.md) is followed by its answer.
    """
    if "___" not in prompt:
        return f"{prompt} {form}"
    return prompt.replace("___", form, 1)
