"""Which letters look alike across scripts, and the two rules built on that (docs/validate.md,
"Scripts and look-alikes").

A Greek or Cyrillic *letter* is a real letter: π, λ, Ω and 2π are answers of maths and physics
items, and a Russian or Greek suite is written wholly in its script. What misleads a reader is a
*word* that mixes scripts through a look-alike (`Мoscow`: a Cyrillic М in a Latin word), or two
strings that differ only by look-alikes (`easy` and the Cyrillic `еаѕу`): they read the same and
are different strings to the model and to every table.

No well-kept confusables library is a dependency of this project, so `_SKELETON` is a small table
taken from the Unicode confusables data (UTS #39, confusables.txt): the Cyrillic and Greek letters
whose prototype there is a single Latin letter. `skeleton` maps a text through it (after
`normalize`: NFKC, case-folded), so two strings with one skeleton look the same.
"""

from __future__ import annotations

import unicodedata

from evalgate.probeset.normalize import normalize, strip_ignorable

# Cyrillic and Greek letters -> the Latin letter they are confusable with (UTS #39 confusables.txt,
# single-letter prototypes only). Lower and upper case are listed apart and never derived from each
# other: `Κ` looks like `K`, but `κ` does not look like `k`, nor `μ` like `m`, `η` like `h`, `τ` like
# `t`, `в` like `b` or `н` like `h` (docs/validate.md, "Scripts and look-alikes"). A lower-case
# letter is listed only where its own glyph is the Latin letter's.
_SKELETON = {
    # Cyrillic lower case
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s", "і": "i",
    "ј": "j", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ѵ": "v", "г": "r", "ү": "y",
    # Cyrillic upper case
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "У": "Y", "Ѕ": "S", "І": "I", "Ј": "J", "Ԛ": "Q", "Ԝ": "W", "Ү": "Y",
    "Ӏ": "l", "Ѵ": "V", "Ԍ": "G",
    # Greek lower case
    "α": "a", "ο": "o", "ν": "v", "ι": "i", "ρ": "p", "υ": "u", "γ": "y", "ϲ": "c", "ϳ": "j",
    "σ": "o",
    # Greek upper case
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C", "Ϳ": "J",
}  # fmt: skip
# The scripts each Latin letter has a look-alike in: `o` in Cyrillic and Greek, `k` nowhere.
_LATIN_LOOKALIKE_IN: dict[str, set[str]] = {}
for _ch, _latin in _SKELETON.items():
    _LATIN_LOOKALIKE_IN.setdefault(_latin, set()).add(unicodedata.name(_ch).split(" ")[0])

# Scripts one language writes together (Japanese mixes kana and kanji): one script for the rule.
_ONE_SCRIPT = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HANGUL": "CJK"}


def script(ch: str) -> str:
    """The script a letter belongs to, from its Unicode name ("LATIN", "GREEK", "CYRILLIC", ...)."""
    first = unicodedata.name(ch, "UNKNOWN").split(" ")[0]
    return _ONE_SCRIPT.get(first, first)


def skeleton(text: str) -> str:
    """`text` normalised, each Cyrillic or Greek look-alike replaced by its Latin letter: two texts
    with one skeleton read the same (`easy`, `еаѕу`, `EASY`)."""
    if text.isascii():
        return normalize(text)
    # each letter is mapped in its own case, before case folding: folding first would turn `Κ`
    # into `κ`, and `κ` is no look-alike of `k`. NFKC first, so that a compatibility form (the
    # micro sign `µ`, a full-width letter) is mapped as the letter it stands for.
    text = unicodedata.normalize("NFKC", strip_ignorable(text))
    return normalize("".join(_SKELETON.get(ch, ch) for ch in text))


def _words(text: str) -> list[str]:
    """Maximal runs of letters (digits, signs and spaces end a word: `2π` is the word `π`)."""
    out, word = [], []
    for ch in text:
        if ch.isalpha() or unicodedata.category(ch) == "Mn":
            word.append(ch)
        elif word:
            out.append("".join(word))
            word = []
    if word:
        out.append("".join(word))
    return out


def _lookalike_scripts(ch: str) -> set[str]:
    """The scripts other than its own in which `ch` has a look-alike letter."""
    own = script(ch)
    latin = ch if own == "LATIN" else _SKELETON.get(ch)
    if latin is None:
        return set()
    found = set(_LATIN_LOOKALIKE_IN.get(latin, set()))
    if own != "LATIN":
        found.add("LATIN")
    return found - {own}


def _reads_as(word: str, scripts: set[str]) -> str | None:
    """The script the word reads as, or None: one whose letters are most of the word (two at
    least) and that would hold all of it if its few letters of another script, each a look-alike
    of one of its own, were swapped. `Мoscow` reads as Latin; `ΔH`, `hν`, `kΩ` read as nothing:
    notation, one letter of each script, no word to imitate."""
    letters = [ch for ch in word if ch.isalpha()]
    for t in sorted(scripts):
        own = sum(script(ch) == t for ch in letters)
        if own < 2 or own <= len(letters) - own:
            continue
        if all(script(ch) == t or t in _lookalike_scripts(ch) for ch in letters):
            return t
    return None


# Greek lower-case letters that are symbols of their own in maths and physics (ρ density, ν
# frequency, α, γ, σ): inside a short token of Latin letters (`ρgh`, `ρgV`, `hν`) they are notation,
# though their glyphs are in `_SKELETON` (docs/validate.md, "Scripts and look-alikes").
_SYMBOLS = frozenset("αγνρσ")
NOTATION_MAX_LETTERS = 3


def _notation(letters: list[str]) -> bool:
    """A formula token: at most 3 letters, each Latin or one of the Greek symbol letters (`ρgh`,
    `hν`, `ρ`)."""
    return len(letters) <= NOTATION_MAX_LETTERS and all(
        ch in _SYMBOLS or script(ch) == "LATIN" for ch in letters
    )


def _latin_text(text: str) -> bool:
    """Whether most of the letters of `text` are Latin (the setting a look-alike word hides in)."""
    letters = [ch for ch in text if ch.isalpha()]
    return sum(script(ch) == "LATIN" for ch in letters) * 2 > len(letters)


def mixed_script_words(text: str, around: str | None = None) -> list[str]:
    """Each word of `text` that reads as a Latin word through look-alike letters of another script,
    those letters named:
      - a word of Latin letters and others, every other one a look-alike of a Latin letter, in any
        proportion: `Мoscow`, `Реru`, `сарitаl`, `Nіlе`, `СНІLЕ`;
      - a word wholly of Cyrillic or Greek look-alikes (`іѕ`, `Реru` all Cyrillic) where most of the
        letters of `around` (default: `text`) are Latin: a Russian or Greek question is its own script;
      - a word that mixes scripts and would read as a word of one of them if its few look-alike
        letters were swapped: `Мosква` (a Latin o in a Cyrillic word).
    Notation is not refused: a word whose other letters look like nothing Latin (`kΩ`, `μm`,
    `λmax`, `2πr`, `ΔH`), and a token of at most 3 letters whose non-Latin letters are Greek
    symbol letters (`ρgh`, `ρgV`, `hν`, `ρ`)."""
    if text.isascii():
        return []
    latin_setting: bool | None = None
    out = []
    for word in _words(text):
        letters = [ch for ch in word if ch.isalpha()]
        scripts = {script(ch) for ch in letters}
        others = [ch for ch in letters if script(ch) != "LATIN"]
        target = None
        if _notation(letters):
            continue
        if others and all(ch in _SKELETON for ch in others):
            if len(others) < len(letters):
                target = "LATIN"
            else:
                if latin_setting is None:
                    latin_setting = _latin_text(text if around is None else around)
                if latin_setting:
                    target = "LATIN"
        if target is None and len(scripts) >= 2:
            target = _reads_as(word, scripts)
        if target is not None:
            bad = [ch for ch in dict.fromkeys(word) if ch.isalpha() and script(ch) != target]
            named = ", ".join(f"{ch!r} U+{ord(ch):04X} {unicodedata.name(ch, '?')}" for ch in bad)
            reads = f" {''.join(_SKELETON.get(ch, ch) for ch in word)!r}" if target == "LATIN" else ""
            out.append(
                f"the word {word!r}, which reads as the {target.title()} word{reads}"
                f" through look-alikes ({named})"
            )
    return out


def confusables(text: str, around: str | None = None) -> list[str]:
    """What makes a text read like another: full-width forms, and words that mix scripts through
    a look-alike letter (`mixed_script_words`). A Greek or Cyrillic letter on its own (`π`, `2π`,
    `kΩ`) or a word wholly in one script is not one. Each is named with its code point, so the
    author can find it in an editor."""
    if text.isascii():
        return []
    out: list[str] = []
    seen: set[str] = set()
    for ch in text:
        if ch not in seen and 0xFF01 <= ord(ch) <= 0xFF5E:
            seen.add(ch)
            out.append(f"{ch!r} U+{ord(ch):04X} {unicodedata.name(ch, '?')} (a full-width form)")
    return out + mixed_script_words(text, around)
