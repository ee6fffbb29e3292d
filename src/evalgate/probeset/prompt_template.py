"""The prompt template file: UTF-8 text holding `{prompt}` exactly once and no blank of its own.

The model reads the template around every prompt, so what it must not hold is checked on its bytes:
a UTF-16 encoding, bytes that are not UTF-8, a byte-order mark, a carriage return or an invisible
character (each would change every scored sequence unseen), a missing or repeated slot, and the
blank `___`, which only a probe's prompt may bring (docs/probes.md).
"""

from __future__ import annotations

import unicodedata

from evalgate.probeset.encoding import utf16_kind, utf16_message
from evalgate.types import BLANK, Finding

TEMPLATE_SLOT = "{prompt}"


def check_template(data: bytes, shown: str) -> tuple[str | None, list[Finding]]:
    """(the template text, []) when `data` is a valid template; (None, [the finding]) else."""
    found: list[Finding] = []
    if kind := utf16_kind(data):
        message = utf16_message(kind, data.startswith((b"\xff\xfe", b"\xfe\xff")))
        found.append(Finding("template", message, shown, 1, hint="save the template as UTF-8"))
        return None, found
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        msg = f"byte {exc.start + 1} is not valid UTF-8"
        found.append(Finding("template", msg, shown, line, hint="save the template as UTF-8"))
        return None, found
    odd = [
        (i, what)
        for i, what in (
            (text.find("\ufeff"), "a byte-order mark (U+FEFF)"),
            (text.find("\r"), "a carriage return (CRLF line endings)"),
            (
                next((i for i, ch in enumerate(text) if unicodedata.category(ch) == "Cf"), -1),
                "an invisible character",
            ),
        )
        if i >= 0
    ]
    if odd:
        at, what = min(odd)
        found.append(
            Finding(
                "template",
                f"the prompt template holds {what}: the model would read it around every prompt",
                shown,
                text.count("\n", 0, at) + 1,
                hint="save the template as UTF-8 without a byte-order mark, with LF line endings (add "
                "`*.txt text eol=lf` to .gitattributes if git converts them)",
            )
        )
        return None, found
    n = text.count(TEMPLATE_SLOT)
    if n != 1:
        found.append(
            Finding(
                "template",
                f"the prompt template must contain {TEMPLATE_SLOT} exactly once (found {n})",
                shown,
                hint=f"write the template with a single {TEMPLATE_SLOT} where each probe's prompt goes",
            )
        )
        return None, found
    if BLANK in text:
        line = text[: text.index(BLANK)].count("\n") + 1
        found.append(
            Finding(
                "template",
                f"the prompt template contains {BLANK} itself; only the prompt may hold the blank",
                shown,
                line,
                hint=f"remove the {BLANK} from the template: each probe's prompt brings its own blank",
            )
        )
        return None, found
    return text, found
