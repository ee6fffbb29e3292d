"""Rules on the text of every field of a probe record, and the linear blank checks.

Kept apart from probeset/records.py (schema and grammar rules) because they apply to every string a
record holds, whatever the field: a control character in `explanation` hides text in a terminal
as well as one in `prompt` does. Every function here runs in time linear in its input, and the
callers check the length limits first (docs/probes.md, "Bounded work").
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from evalgate.probeset.normalize import normalize, strip_ignorable
from evalgate.probeset.scripts import confusables, mixed_script_words, skeleton

BLANK = "___"

HINT_CONTROL = (
    "remove the control character: text fields hold printable text only (ESC can hide text in a "
    "terminal, CR rewrites a line, NUL truncates it); write a line break as a space"
)
HINT_CONFUSABLE = (
    "retype the form with plain Latin letters: a look-alike letter makes a different string the "
    "model is scored on, though it reads the same"
)
HINT_CONFUSABLE_PROMPT = (
    "retype the word in the letters of one script: a look-alike letter makes the prompt a "
    "different text for the model and for the leak check, though it reads the same"
)


def _strings(rec: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, text) for every string in a record: top-level values and list items."""
    for field, value in rec.items():
        if isinstance(value, str):
            yield field, value
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, str):
                    yield f"{field}[{i}]", item


# C0 and C1 controls, exactly Unicode category Cc: NUL, TAB, LF, CR, ESC, DEL, U+0080-U+009F.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def is_control(ch: str) -> bool:
    return CONTROL.match(ch) is not None


def control_problems(rec: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for every text field holding a control character, the first one named."""
    out = []
    for field, text in _strings(rec):
        if field.startswith("candidates["):
            continue  # the candidate rules name it with the rest of the candidate's form problems
        if (first := CONTROL.search(text)) is not None:
            at = first.start()
            n = len(CONTROL.findall(text))
            ch = text[at]
            name = _CONTROL_NAMES.get(ch, "a control character")
            more = f" ({n} control characters in all)" if n > 1 else ""
            out.append(
                (
                    field.split("[", 1)[0],
                    f"`{field}` holds {name} U+{ord(ch):04X} at character {at + 1}{more}",
                )
            )
    return out


_CONTROL_NAMES = {
    "\x00": "NUL",
    "\t": "a tab",
    "\n": "a line break (LF)",
    "\r": "a carriage return (CR)",
    "\x1b": "ESC (a terminal escape)",
    "\x7f": "DEL",
}


def confusable_problems(candidates: list[str]) -> list[str]:
    """One message per candidate holding a full-width form or a word mixing scripts through a
    look-alike letter, and one per pair that reads the same through look-alikes (`easy` and the
    Cyrillic `еаѕу`); pairs equal once normalised are the distinctness rule's (probeset/scripts.py)."""
    out = []
    first: dict[str, int] = {}
    # a candidate wholly of look-alikes is judged by the script of the candidates together: `Реru`
    # all in Cyrillic beside `Lima` and `Quito` is a Latin word in disguise
    around = " ".join(candidates)
    for i, cand in enumerate(candidates):
        found = confusables(cand, around)
        if found:
            out.append(f"item [{i}]: {json.dumps(cand, ensure_ascii=False)} holds {'; '.join(found)}")
        key = skeleton(cand)
        j = first.setdefault(key, i)
        if j != i and normalize(candidates[j]) != normalize(cand):
            out.append(
                f"items [{j}] and [{i}] read the same ({reveal(candidates[j])} vs {reveal(cand)}): "
                "they differ only by look-alike letters of another script"
            )
    return out


def prompt_confusable_problems(prompt: str) -> list[str]:
    """One message per word of the prompt that mixes scripts through a look-alike letter (`cаpital`
    with a Cyrillic а). Only words: a whole Greek or Russian question, `2π` or `kΩ` are text, and
    full-width punctuation is how Chinese and Japanese are written (probeset/scripts.py)."""
    return [f"the prompt holds {problem}" for problem in mixed_script_words(prompt)]


def same_form(a: str, b: str) -> bool:
    """Two candidates a reader cannot tell apart (probeset/normalize.py)."""
    return normalize(a) == normalize(b)


def only_invisible(text: str) -> bool:
    return not strip_ignorable(text).strip()


def space_before_blank(prompt: str) -> str | None:
    """The whitespace right before the first blank, or None without a blank (linear scan)."""
    at = prompt.find(BLANK)
    if at < 0:
        return None
    start = at
    while start > 0 and prompt[start - 1].isspace():
        start -= 1
    return prompt[start:at]


def _is_letter(ch: str) -> bool:
    return ch.isalnum()


def glued_word(prompt: str) -> str | None:
    """The word a blank is written against ("ate___", "___s"), or None (linear scan).

    Only the first blank is looked at: more than one blank is its own finding. The word shown is
    clipped to 40 characters on each side.
    """
    at = prompt.find(BLANK)
    if at < 0:
        return None
    end = at + len(BLANK)
    while end < len(prompt) and prompt[end] == "_":
        end += 1
    left = at
    while left > 0 and at - left < 40 and _is_letter(prompt[left - 1]):
        left -= 1
    right = end
    while right < len(prompt) and right - end < 40 and _is_letter(prompt[right]):
        right += 1
    if left == at and right == end:
        return None
    return prompt[left:right]


def short(value: Any, limit: int = 60) -> str:
    """A value as JSON, cut to `limit` characters: enough to find it, never a whole prompt."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def reveal(text: str) -> str:
    """JSON-quoted, with invisible, combining and unusual space characters as \\u escapes."""
    return "".join(
        f"\\u{ord(ch):04x}"
        if unicodedata.category(ch) in ("Cf", "Mn", "Zs", "Zl", "Zp") and ch != " "
        else ch
        for ch in json.dumps(text, ensure_ascii=False)
    )
