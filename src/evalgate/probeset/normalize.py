"""The one text normalisation every detector and comparison uses (docs/probes.md, "Equal text").

Two texts a reader cannot tell apart must compare equal, wherever they are compared: leak keys,
n-gram windows, candidate uniqueness, `expected` among the candidates, id uniqueness, twins.
`normalize` is, in order:

1. every default-ignorable or format character removed: category Cf (zero-width space and
   joiners, bidi marks, soft hyphen, BOM, tag characters U+E0000-E007F), the combining grapheme
   joiner U+034F, variation selectors, Hangul fillers, Mongolian free variation selectors;
2. Unicode NFKC (full-width letters become ASCII, ligatures split, composed accents);
3. every run of Unicode whitespace collapsed to one space, ends stripped;
4. case-folded (then NFKC again: folding can leave a decomposed sequence).

Look-alike letters of another script (Cyrillic "а" in a Latin word) are not folded - no
normalisation can decide which is meant - but probeset/scripts.py names a word that mixes them
(`confusables`) and compares texts by their look-alike skeleton.
"""

from __future__ import annotations

import re
import unicodedata

# Format characters (category Cf, Unicode 14; a test checks this list against unicodedata) and
# the Default_Ignorable_Code_Point ranges that are not Cf (DerivedCoreProperties). One character
# class, so removing them is one regex pass, not a Python loop per character.
_IGNORABLE_RANGES = (
    (0x00AD, 0x00AD),  # SOFT HYPHEN
    (0x034F, 0x034F),  # COMBINING GRAPHEME JOINER
    (0x0600, 0x0605),  # Arabic number signs
    (0x061C, 0x061C),  # ARABIC LETTER MARK
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),  # HANGUL CHOSEONG/JUNGSEONG FILLER
    (0x17B4, 0x17B5),  # KHMER VOWEL INHERENT AQ/AA
    (0x180B, 0x180F),  # MONGOLIAN FREE VARIATION SELECTORS, VOWEL SEPARATOR
    (0x200B, 0x200F),  # zero-width space, joiners, LRM/RLM
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, bidi isolates
    (0x3164, 0x3164),  # HANGUL FILLER
    (0xFE00, 0xFE0F),  # VARIATION SELECTORS
    (0xFEFF, 0xFEFF),  # ZERO WIDTH NO-BREAK SPACE (BOM)
    (0xFFA0, 0xFFA0),  # HALFWIDTH HANGUL FILLER
    (0xFFF0, 0xFFFB),  # unassigned default-ignorables, interlinear annotation
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),  # Egyptian hieroglyph format controls
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol format controls
    (0xE0000, 0xE0FFF),  # tag characters, VARIATION SELECTORS SUPPLEMENT
)
IGNORABLE = re.compile("[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in _IGNORABLE_RANGES) + "]")
_SPACE_RUN = re.compile(r"\s+")


def is_ignorable(ch: str) -> bool:
    """A character that changes nothing a reader sees (format or default-ignorable)."""
    return IGNORABLE.match(ch) is not None


def has_ignorable(text: str) -> bool:
    return not text.isascii() and IGNORABLE.search(text) is not None


def strip_ignorable(text: str) -> str:
    return text if text.isascii() else IGNORABLE.sub("", text)


def normalize(text: str) -> str:
    """The normal form under which two texts that read the same are equal (see the module doc)."""
    if text.isascii():
        return " ".join(text.split()).casefold()
    text = unicodedata.normalize("NFKC", strip_ignorable(text))
    text = strip_ignorable(text)  # NFKC can map a compatibility character onto an ignorable one
    text = _SPACE_RUN.sub(" ", text).strip()
    return unicodedata.normalize("NFKC", text.casefold())
