"""The status badge: badge.json (shields.io endpoint schema) and a self-contained flat badge.svg.

badge.json is what `https://img.shields.io/endpoint?url=<raw badge.json URL>` reads
(https://shields.io/badges/endpoint-badge): schemaVersion 1, label, message, color. badge.svg is the
same badge drawn locally (shields' "flat" style) for places that cannot reach shields.io.
"""

from __future__ import annotations

import string
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from evalgate.gate.document import ResultsDocument
from evalgate.report.headline import run_accuracy

LABEL = "evalgate"
# inconclusive is yellow: never the green of a pass for what the gate could not see (docs/gate.md)
COLORS = {"pass": "green", "fail": "red", "inconclusive": "yellow", "refused": "lightgrey"}
# shields.io's named colours, so the local SVG looks like the endpoint badge.
HEX = {"green": "#97ca00", "red": "#e05d44", "yellow": "#dfb317", "lightgrey": "#9f9f9f"}

# Approximate advance widths (px) of Verdana 11px, the font shields.io measures with; close enough
# for a badge whose text is a verdict and a percentage.
_LOWER = (
    "6.8 6.9 5.9 6.9 6.6 3.9 6.9 7.0 3.0 3.8 6.5 3.0 10.7 7.0 6.7 6.9 6.9 4.7 5.7 4.3 7.0 6.5 8.9 6.5 6.5 5.8"
)
_WIDTHS = {
    **dict.fromkeys(string.digits, 7.0),
    **dict(zip(string.ascii_lowercase, map(float, _LOWER.split()), strict=True)),
    **{" ": 3.9, ".": 3.9, "·": 3.9, "%": 11.9, "-": 4.9, ":": 4.5},
}
_PAD = 10  # horizontal padding per half, px


def overall_accuracy(results: ResultsDocument) -> float | None:
    """This run's accuracy over its scored entries (None when nothing was scored)."""
    return run_accuracy(results)[0]


def badge_message(results: ResultsDocument) -> str:
    verdict = str(results["verdict"])
    acc = overall_accuracy(results)
    if verdict == "refused" or acc is None:
        return verdict
    return f"{verdict} · {100 * acc:.1f}%"


def badge_json(results: ResultsDocument) -> dict[str, Any]:
    verdict = str(results["verdict"])
    return {
        "schemaVersion": 1,
        "label": LABEL,
        "message": badge_message(results),
        "color": COLORS.get(verdict, "lightgrey"),
    }


def _text_width(text: str) -> int:
    return round(sum(_WIDTHS.get(ch.lower(), 7.5) for ch in text))


def badge_svg(results: ResultsDocument) -> str:
    """A 20-px-high flat badge; every number is an integer, so the same results give the same bytes."""
    badge = badge_json(results)
    label, message = badge["label"], badge["message"]
    color = HEX[badge["color"]]
    lw = _text_width(label) + 2 * _PAD
    mw = _text_width(message) + 2 * _PAD
    w = lw + mw
    title = f"{label}: {message}"
    texts = []
    for x, text in ((lw / 2, label), (lw + mw / 2, message)):
        t = escape(text)
        texts.append(
            f'<text x="{x:g}" y="15" fill="#010101" fill-opacity=".3">{t}</text>'
            f'<text x="{x:g}" y="14">{t}</text>'
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="20" role="img" '
        f"aria-label={quoteattr(title)}>"
        f"<title>{escape(title)}</title>"
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{w}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{lw}" height="20" fill="#555"/>'
        f'<rect x="{lw}" width="{mw}" height="20" fill="{color}"/>'
        f'<rect width="{w}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" '
        f'font-size="11">{"".join(texts)}</g></svg>\n'
    )
