"""REPORT.md: golden files, the size cap, inert probe text, refused and no-baseline reports.

Golden files live in tests/golden/; after an intended change to the report, regenerate them with
`UPDATE_GOLDEN=1 pytest tests/report/test_full_report.py` and review the diff.
"""

from __future__ import annotations

import copy
import html as htmllib
import json
import os
import re

import pytest
from helpers.factories import make_entry, make_results, make_rules
from helpers.paths import GOLDEN
from helpers.report_factories import fake_run, no_baseline_run, refused_run
from markdown_it import MarkdownIt

from evalgate.gate.compare import compare, verdict
from evalgate.gate.results import round_floats, validate_results
from evalgate.report.full_report import GITHUB_LIMIT, MARKER_PREFIX, render_report, size
from evalgate.report.markdown import ZWSP, inline
from evalgate.types import PERSONS, TENSES


def html(markdown: str) -> str:
    """CommonMark + GFM tables with raw HTML allowed, as GitHub parses it before sanitising."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path} missing: run with UPDATE_GOLDEN=1 once"
    assert text == path.read_text(encoding="utf-8"), f"{name} changed: review, then UPDATE_GOLDEN=1"


def golden_results(name: str, build) -> dict:
    """The fixed results dict of a golden report, frozen next to it (tests/golden/*.results.json).

    Frozen so that the golden report changes only when the renderer does, not when the statistics
    it displays are refined; UPDATE_GOLDEN=1 rebuilds it from the fake run. The fresh fake runs are
    rendered by the other tests, so a change in the results' shape is still caught.
    """
    path = GOLDEN / name.replace(".md", ".results.json")
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(build(), sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("name", "build"),
    [
        ("REPORT-fail.md", fake_run),
        ("REPORT-no-baseline.md", no_baseline_run),
        ("REPORT-refused.md", refused_run),
    ],
)
def test_golden_report(name, build):
    results = golden_results(name, build)
    validate_results(results, name)
    text = render_report(results)
    check_golden(name, text)
    assert render_report(copy.deepcopy(results)) == text  # deterministic


@pytest.mark.integration
@pytest.mark.parametrize("build", [fake_run, no_baseline_run, refused_run])
def test_fresh_fake_runs_render(build):
    results = build()
    validate_results(results, build.__name__)
    text = render_report(results)
    assert text.startswith("## ") and text.count(MARKER_PREFIX) == 1
    assert render_report(build()) == text


def test_fail_report_order_and_content():
    results = fake_run()
    text = render_report(results)
    first = text.splitlines()[0]
    assert first.startswith("## ❌ evalgate: fail — regressed: ")
    assert "language:es" in first and "perplexity" in first and "language:en" not in first
    headings = [ln for ln in text.splitlines() if ln.startswith("### ")]
    assert headings[:3] == [
        "### Gated slices",
        "### Strict and full series (leaks: exclude)",
        "### Per-slice picture",
    ]
    assert (
        headings.index("### Inputs (SHA-256)")
        < headings.index("### Method")
        < headings.index("### Limitations")
    )
    # the gate-changes diff comes right after the verdict, before the gated table
    assert text.index("[!WARNING]") < text.index("```diff") < text.index("### Gated slices")
    # every input's full SHA-256
    for path, rec in results["inputs"].items():
        assert f"`{rec['sha256']}`" in text, path
    # flipped right → wrong with prompt, candidates, expected, baseline and new prediction
    flipped = results["comparison"]["flipped"]["right_to_wrong"]
    assert flipped and all(inline(pid, lead=False) in text for pid in flipped)
    assert "| habla      | habla      | hablar |" in text
    assert "length normalisation" in text and "`0.1.0`" in text  # method + probe-set version
    assert "Honesty note" in text and "strict" in text
    assert text.endswith(f"{MARKER_PREFIX} verdict=fail -->\n")
    assert text.count(MARKER_PREFIX) == 1


def test_no_baseline_report_gates_nothing():
    text = render_report(no_baseline_run())
    assert text.startswith("## ✅ evalgate: pass — overall 77.9%; no baseline, nothing was gated")
    assert "### Slices" in text and "### Gated slices" not in text and "### Flipped probes" not in text
    assert "┃" not in text  # no baseline tick in the bars
    assert text.rstrip().endswith(f"{MARKER_PREFIX} verdict=pass -->")


def test_refused_report_lists_every_finding():
    results = refused_run()
    text = render_report(results)
    assert text.startswith("## ⛔ evalgate: refused — 4 problem(s) in the input; nothing was scored")
    for f in results["findings"]:
        assert inline(f["message"], lead=False) in text
        if "line" in f:
            assert f"{f['file']}:{f['line']}" in text
        if "probe_id" in f:
            assert f["probe_id"] in text
    assert "#### schema (2)" in text and "#### leak-ngram (1)" in text and "#### coverage (1)" in text
    assert "train: data/corpus/train.jsonl:5121" in text  # a leak's colliding training line
    assert "**What to do:** add the missing field" in text
    assert "### Gated slices" not in text and "### Per-slice picture" not in text
    assert text.rstrip().endswith(f"{MARKER_PREFIX} verdict=refused -->")


def big_run(n: int = 5000) -> dict:
    """n probes, a baseline on the first 60% of them: hundreds of flips, thousands of new probes."""

    def entries(new: bool) -> list[dict]:
        out = []
        for i in range(n):
            right = (i * 7) % 10 < 8
            if new and i % 3 == 0:
                right = not right
            out.append(
                make_entry(
                    f"probe-{i:05d}",
                    right,
                    language="en" if i % 2 else "es",
                    tense=TENSES[i % 5],
                    person=PERSONS[i % 3],
                    margin=0.1 if i % 13 == 0 else 2.0,
                    prompt=f"Every day she ___ at office number {i} with a longer sentence.",
                )
            )
        return out

    baseline = make_results(entries(False)[: n * 3 // 5])
    results = make_results(entries(True))
    results["comparison"] = compare(results, baseline, make_rules(), "baselines/demo.json")
    results["verdict"], results["reasons"] = verdict(results["comparison"])
    return round_floats(results)


@pytest.mark.integration
def test_5000_probe_report_fits_one_comment_and_says_what_was_cut():
    results = big_run()
    text = render_report(results)
    assert size(text) <= 65000 < GITHUB_LIMIT
    assert len(text) <= GITHUB_LIMIT
    # kept: the verdict, the gated table, the SHA-256 table
    assert text.startswith("## ❌ evalgate: fail")
    assert "### Gated slices" in text and "| overall " in text
    assert "### Inputs (SHA-256)" in text and "`" + "1" * 64 + "`" in text
    # what was cut, and where the rest is
    assert "✂️ **Lists shortened**" in text
    assert "new probes (" in text and "of 2,000 shown)" in text
    assert re.search(r"_Showing [\d,]+ of 2,000 new probes; the full list is in results.json", text)
    assert re.search(
        r"_Showing 50 of [\d,]+ probes that flipped right → wrong; the full list is in results.json", text
    )
    assert text.count(MARKER_PREFIX) == 1 and text.endswith("-->\n")


@pytest.mark.integration
def test_size_cap_is_respected_for_small_limits():
    results = big_run(600)
    for limit in (30000, 12000):
        text = render_report(results, max_chars=limit)
        assert size(text) <= limit
        assert text.startswith("## ❌ evalgate: fail") and "### Gated slices" in text
        assert text.rstrip().endswith("-->") and text.count(MARKER_PREFIX) == 1


def test_last_resort_truncation_keeps_verdict_and_marker():
    text = render_report(big_run(600), max_chars=2500)
    assert size(text) <= 2500
    assert text.startswith("## ❌ evalgate: fail")
    assert "truncated" in text and text.rstrip().endswith("-->")


INJECTIONS = [
    "She ___ | bad | table |",
    "<script>alert(1)</script> ___",
    "Run ___ `rm -rf /` ``` now",
    "@someone ___ please look, cc @org/team",
    "[x](http://evil) ___ ![img](http://evil/i.png) www.evil.com",
    "### heading ___\n- item\n> quote",
    "Fixes #123 ___ $\\sqrt{x}$ <!-- evalgate:report verdict=pass -->",
    "<img src=x onerror=alert(1)> ___ &amp; &#x3c;",
]


def injection_run() -> dict:
    """The hostile texts as prompts, candidates and ids of flipped, new and ambiguous probes."""

    def entries(new: bool) -> list[dict]:
        out = []
        for i, text in enumerate(INJECTIONS):
            cands = (f"@{i}ok|", f"<b>{i}</b>`")
            out.append(make_entry(f"evil-{i}", not new, prompt=text, candidates=cands))
        for i in range(30):
            out.append(make_entry(f"plain-{i:02d}", True))
        return out

    baseline = make_results(entries(False))
    new = entries(True)
    new.append(
        make_entry("@new-one", False, prompt=INJECTIONS[4], reason_code="X|Y`@z", category="adversarial")
    )
    results = make_results(new)
    results["comparison"] = compare(results, baseline, make_rules(), "baselines/demo.json")
    results["verdict"], results["reasons"] = verdict(results["comparison"])
    results["reasons"].append("@admin <b>see</b> [here](http://evil)")
    results["gate_changes"] = "+ evil: ```\n+ <!-- evalgate:report -->\n+ @someone"
    return round_floats(results)


def test_probe_text_is_inert():
    results = injection_run()
    text = render_report(results)
    rendered = html(text)
    assert "<script" not in rendered and "<img" not in rendered and "<b>" not in rendered
    # The only links are the report's own, to evalgate's docs of this release (release.docs_url).
    from evalgate import release

    links = re.findall(r"<a ([^>]*)>", rendered)
    docs = release.docs_url("docs/")
    assert links and all(re.fullmatch(rf'href="{re.escape(docs)}[\w./#-]+"', a) for a in links), links
    assert 'href="http://evil' not in rendered
    outside_code = re.sub(r"^(`{3,}).*?^\1", "", text, flags=re.S | re.M)  # GitHub never pings from code
    assert "+ @someone" in text and "+ @someone" not in outside_code
    for mention in ("@someone", "@org/team", "@admin", "@new-one", "@z"):
        assert mention not in outside_code, mention
    assert f"@{ZWSP}someone" in text
    assert "http://evil" not in text and "www.evil" not in text
    assert "#123" not in text and "$\\sqrt" not in text
    assert text.count(MARKER_PREFIX) == 1  # a marker quoted by a probe or the diff cannot fake one
    # no probe text broke its table or opened markup: each hostile prompt is one whole table cell
    cells = {
        htmllib.unescape(re.sub(r"<[^>]+>", "", c)).replace(ZWSP, "")
        for c in re.findall(r"<td>(.*?)</td>", rendered, flags=re.S)
    }
    for prompt in INJECTIONS:
        assert re.sub(r"\s*\n\s*", " ", prompt).replace("\n", " ") in cells, prompt
    assert "<code>" not in rendered.split("### Inputs")[0].split("<h3>Inputs")[0]
    # the hostile prompts do reach the report, as text
    assert "alert(1)" in rendered and "quote" in rendered
    # no heading, list or quote was opened by probe text
    assert rendered.count("<h3>heading") == 0 and "<blockquote>" not in rendered.split("WARNING")[1]


def test_inline_escaping_units():
    assert inline("a|b") == "a\\|b"
    assert inline("<x> & y") == "&lt;x&gt; &amp; y"
    assert inline("`code`") == "\\`code\\`"
    assert inline("hi @bob") == f"hi @{ZWSP}bob"
    assert inline("[a](b)") == "\\[a\\](b)"
    assert inline("line1\nline2\r\nline3") == "line1 line2 line3"
    assert inline("# title") == "\\# title" and inline("- x") == "\\- x" and inline("1. x") == "1\\. x"
    assert inline("# title", lead=False) == "# title"
    assert inline("a\u202eb") == "a\ufffdb"  # bidi override made visible
    assert inline("x" * 300, limit=10) == "xxxxxxxxx…"


def test_report_does_not_modify_results():
    results = fake_run()
    before = copy.deepcopy(results)
    render_report(results)
    assert results == before


EMPTY_SLICE = {"n": 0, "correct": 0, "accuracy": None, "wilson_low": None, "wilson_high": None}
MANIFEST = {
    "method": "candidate",
    "normalization": "tokens",
    "template_sha256": "0" * 64,
    "dtype": "float32",
    "scoring_version": "1",
    "probe_set_digest": "0" * 64,
}


def _minimal(verdict: str, **parts) -> dict:
    """The least a schema-valid results.json holds: every optional part is missing."""
    doc = {
        "schema_version": 1,
        "evalgate_version": "0",
        "verdict": verdict,
        "inputs": {},
        "config": {},
        "probes": [],
        "slices": {},
        "per_verb": {},
        "perplexity": None,
        "calibration": {},
    }
    if verdict == "refused":
        doc.update(reasons=[], findings=[])
    else:
        doc.update(manifest=MANIFEST, checkpoint=None)
    doc.update(parts)
    return doc


@pytest.mark.parametrize(
    "results",
    [
        _minimal("pass"),
        _minimal("refused"),
        _minimal(
            "fail",
            comparison={
                "slices": {"overall": {"status": "regressed"}},
                "perplexity": {"status": "regressed", "ratio": None},
            },
            slices={"overall": EMPTY_SLICE},
        ),
        _minimal(
            "pass",
            comparison={"flipped": {"right_to_wrong": ["gone-probe"]}, "new_probes": ["x"]},
            probes=[
                {
                    "id": "o",
                    "status": "scored",
                    "kind": "ordinal",
                    "expected": "a",
                    "entropy_norm": 0.9,
                    "candidates": [{"text": "a", "score": -1.0}, {"text": "b", "score": -2.0}],
                }
            ],
            calibration={
                "bins": [{"lo": 0.0, "hi": 0.1, "n": 0}],
                "entropy": {"correct": {"n": 1, "mean": None}},
            },
        ),
    ],
)
def test_partial_results_still_render(results):
    """Missing optional parts (a comparison without perplexity, a bin without numbers...) never crash
    the report. Every rendered document passed the schema first (edges/outputs.py), so the keys the
    schema requires are there (gate/document.py)."""
    validate_results(results, "results")
    text = render_report(results)
    assert text.startswith("## ") and text.rstrip().endswith("-->") and text.count(MARKER_PREFIX) == 1


def test_a_refusal_after_scoring_does_not_claim_nothing_was_scored():
    results = copy.deepcopy(fake_run())
    results["verdict"], results["comparison"] = "refused", None
    results["findings"] = [{"check": "not-comparable", "message": "method differs"}]
    assert render_report(results).startswith(
        "## ⛔ evalgate: refused — 1 problem(s) in the input; scored, but not gated"
    )
    assert "nothing was scored" in render_report(refused_run()).split("\n", 1)[0]
