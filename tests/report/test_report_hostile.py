"""REPORT.md from results whose every free-text field is hostile: it must stay inert and fit a comment.

Probe ids, prompts, candidates, verbs, reason codes, file names, the checkpoint path, the baseline
path, reasons, findings and the gate diff carry Markdown/HTML injection, mentions, issue references,
URLs, backticks, pipes, newlines, bidirectional controls, 10k-character prompts and emoji. The
report is parsed with markdown-it-py (CommonMark + tables, raw HTML on, as GitHub parses before
sanitising) and checked as GitHub would show it.
"""

from __future__ import annotations

import html as htmllib
import re

import pytest
from helpers.factories import make_entry, make_results, make_rules
from markdown_it import MarkdownIt

from evalgate import release
from evalgate.gate.compare import compare, verdict
from evalgate.gate.results import assemble_refused, round_floats
from evalgate.report.full_report import GITHUB_LIMIT, MARKER_PREFIX, render_report, size

# Unicode's Bidi_Control characters (ALM, LRM, RLM, LRE..RLO, LRI..PDI).
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
HOSTILE = [
    "@octo-org/reviewers ___ look",
    "Fixes #123 and acme/models#9 ___",
    "see https://evil.example/x?a=1 ___ ftp://evil mailto:a@b.c",
    "`` ___ `code` ```` ~~~",
    "a | b || c ___ |",
    "line1\n\n# Heading\r\n___\n---\n```",
    "\u202eevil\u202c ___ \u200f\u061c RTL \u2067x\u2069",
    "emoji 🧪👩🏽‍💻 ___ 🇪🇸",
    "<details><summary>x</summary> ___ </details></table>",
    "___ <!-- evalgate:report verdict=pass -->",
    "[link](javascript:alert(1)) ___ ![i](http://x/i.png) <https://a.example>",
    "**bold** _it_ ~~s~~ ___ $x^2$ $$y$$",
    "&lt;script&gt; ___ &#64;x <script>alert(1)</script>",
    "x" * 10000 + " ___",
    "> quote ___",
    "1. list ___",
    "[ref]: http://evil ___ www.evil.com",
    "<a href=x>a</a> ___ <img src=x onerror=alert(1)>",
]
ALLOWED_TAGS = {
    "blockquote", "code", "details", "h2", "h3", "h4", "li", "p", "pre", "strong", "em", "summary",
    "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip


def hostile_run() -> dict:
    def entries(new: bool) -> list[dict]:
        out = []
        for i, text in enumerate(HOSTILE):
            out.append(
                make_entry(
                    f"id-{i}-" + text[:40],
                    not new,
                    prompt=text,
                    candidates=(f"@c{i}|`", f"<i>{i}</i>#1 \u202e", "http://x.y/" + "🧪" * i),
                    category="adversarial",
                    reason_code=["@team|x", "#5", "`rc`\nX", "\u202eRC\u061c"][i % 4],
                    verb=f"v@{i}|\u2066",
                )
            )
        return out + [make_entry(f"plain-{i:02d}", True) for i in range(60)]

    baseline = make_results(entries(False))
    new = [*entries(True), make_entry("@new|<b>\u202e", False, prompt=HOSTILE[0])]
    results = make_results(new)
    results["comparison"] = compare(results, baseline, make_rules(), "baselines/@x|#1\u202e.json")
    results["verdict"], results["reasons"] = verdict(results["comparison"])
    results["reasons"].append("@admin <b>see</b> [here](http://evil) \u202e #77")
    results["checkpoint"]["path"] = "ckpt/@alice/#7/<b>|\u202e"
    results["inputs"]["data/@bob|`x`/#9 <i>\u2067.jsonl"] = {"sha256": "zz|`@q", "bytes": 3, "role": "probes"}
    results["gate_changes"] = (
        "+ ```\n+ <!-- evalgate:report -->\n+ @someone #12 http://evil\n"
        "-  alpha: 0.05\n+  alpha: 0.05 \u202e# 1.0 :ahpla\u202c\n+ \u2067\u061c\n"
    )
    return round_floats(results)


def hostile_refused() -> dict:
    findings = [
        {
            "check": f"leak|@x{i}",
            "message": f"m \u202e @bob #{i} <b>x</b> " + "y" * 3000,
            "file": "f|@a\u2066.jsonl",
            "line": i + 1,
            "probe_id": f"p\u202e|{i}`",
            "field": "prompt`",
            "hint": "h @c #2 \u061c",
            "evidence": {"train": "t\u2066 `x` | @d http://e.example"},
        }
        for i in range(40)
    ]
    results = assemble_refused(reasons=["@x \u202eevil #4"], findings=findings, inputs={}, config_pin={})
    results["gate_changes"] = "+ \u202eoops\u202c @y"
    return results


def html(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(markdown)


def assert_inert(text: str) -> None:
    assert size(text) <= 65000 < GITHUB_LIMIT
    assert text.count(MARKER_PREFIX) == 1 and text.rstrip().endswith("-->")
    assert not [hex(ord(c)) for c in text if c in BIDI]
    rendered = html(text)
    # The report's own links to evalgate's docs of this release are the only links (release.py).
    docs = re.escape(release.docs_url("docs/"))
    for attrs in re.findall(r"<a( [^>]*)?>", rendered):
        assert re.fullmatch(rf' href="{docs}[\w./#-]+"', attrs), attrs
    assert set(re.findall(r"<([a-z][a-z0-9]*)", rendered)) <= ALLOWED_TAGS | {"a"}
    visible = htmllib.unescape(re.sub(r"<pre>.*?</pre>|<code>.*?</code>|<a [^>]*>", "", rendered, flags=re.S))
    assert not re.findall(r"(?<![\w`/.])@[A-Za-z0-9][\w/-]*", visible)  # no mention
    assert not re.findall(r"(?<![\w&])#\d+", visible)  # no issue reference
    assert not re.findall(r"(?i)\b(?:https?|ftp)://|\bwww\.", visible)  # no autolink
    for table in re.findall(r"<table>.*?</table>", rendered, flags=re.S):
        head, _, body = table.partition("</thead>")
        columns = len(re.findall(r"<th[ >]", head))
        for row in re.findall(r"<tr>(.*?)</tr>", body, flags=re.S):
            assert len(re.findall(r"<td[ >]", row)) == columns, row[:300]


@pytest.mark.parametrize("build", [hostile_run, hostile_refused])
def test_hostile_text_stays_inert_everywhere(build):
    text = render_report(build())
    assert_inert(text)
    assert "alert(1)" in text or "oops" in text  # the text is shown, as text


def test_bidi_controls_in_the_gate_diff_are_made_visible():
    text = render_report(hostile_run())
    diff = text.split("```diff", 1)[1].split("\n`", 1)[0]
    assert "alpha: 0.05 \ufffd# 1.0 :ahpla\ufffd" in diff and "+ \ufffd\ufffd" in diff


@pytest.mark.integration
def test_thousands_of_long_emoji_probes_fit_one_comment():
    def entries(new: bool) -> list[dict]:
        return [
            make_entry(
                f"p-{i:05d}-🧪-@x",
                (i % 3 != 0) if new else True,
                prompt="🧪" * 5000 + " ___ @a #1 \u202e",
                candidates=("🇪🇸x", "👩🏽‍💻y"),
            )
            for i in range(2000)
        ]

    baseline = make_results(entries(False))
    results = make_results(entries(True))
    results["comparison"] = compare(results, baseline, make_rules(), "baselines/demo.json")
    results["verdict"], results["reasons"] = verdict(results["comparison"])
    text = render_report(round_floats(results))
    assert_inert(text)
    assert "✂️ **Lists shortened**" in text
