"""report/findings.py: text lines, JSON shape, GitHub workflow-command escaping."""

from __future__ import annotations

import json

import pytest

from evalgate.report.findings import (
    escape_data,
    escape_property,
    finding_line,
    render_findings,
    render_github,
    render_json,
    render_text,
)
from evalgate.types import Finding

A = Finding("schema", "missing required field 'tense'", "p.jsonl", 4, "p-4", "tense", hint="add it")
B = Finding("blank", "the prompt has 2 blanks", "p.jsonl", 2, "p-2", "prompt", hint="one ___")
C = Finding(
    "coverage", "tense future: 0 core probe(s), needs at least 10 (10 short)", "p.jsonl", field="tense"
)
D = Finding(
    "duplicate-id", "id 'p-2' is already used at p.jsonl:2", "adv.jsonl", 1, "p-2", "id", hint="add it"
)
W = Finding("twin", "the prompt repeats probe p-1's", "p.jsonl", 3, "p-3", "prompt")


def test_one_line_per_finding_with_location_parts():
    assert finding_line(A) == "p.jsonl:4: p-4: tense: missing required field 'tense' [schema]"
    assert (
        finding_line(C)
        == "p.jsonl: tense: tense future: 0 core probe(s), needs at least 10 (10 short) [coverage]"
    )
    assert finding_line(Finding("x", "no location")) == "no location [x]"


def test_text_groups_by_file_in_line_order_then_hints_then_summary():
    text = render_text([A, D, B, C], [W])
    lines = text.splitlines()
    assert lines[0] == "p.jsonl:"
    assert [ln.split(": ")[1] for ln in lines[1:4]] == ["p.jsonl", "p.jsonl:2", "p.jsonl:4"]
    assert lines.index("adv.jsonl:") > 3
    assert "  warning: p.jsonl:3: p-3: prompt: the prompt repeats probe p-1's [twin]" in lines
    hints = lines[lines.index("what to do:") + 1 :]
    assert hints[0] == "  - [schema, duplicate-id] add it"  # said once for both checks
    assert lines[-1] == "4 problems; nothing was scored. (1 warning)"


def test_text_of_a_single_file_has_no_group_header():
    assert render_text([A]).splitlines()[0].startswith("  error: p.jsonl:4")
    assert render_text([], [W]).splitlines()[-1] == "no problems. (1 warning)"


def test_json_is_findings_plus_summary():
    doc = json.loads(render_json([A, C], [W], {"version": "0.1.0"}))
    assert doc["ok"] is False
    assert [f["check"] for f in doc["findings"]] == ["coverage", "schema"]
    assert doc["findings"][1] == A.to_dict()
    assert doc["summary"] == {"problems": 2, "warnings": 1, "version": "0.1.0"}


def test_github_commands_and_escaping():
    f = Finding(
        "leak-ngram",
        "shares '100% sure'\r\nwith x",
        "dir,a/b:c.jsonl",
        7,
        "p:1,2",
        "prompt",
        hint="fix it",
    )
    (line,) = render_github([f]).splitlines()
    assert line == (
        "::error file=dir%2Ca/b%3Ac.jsonl,line=7,title=evalgate leak-ngram (p%3A1%2C2)::"
        "p:1,2: prompt: shares '100%25 sure'%0D%0Awith x%0Ahint: fix it"
    )
    assert render_github([], [W]).startswith("::warning file=p.jsonl,line=3,")
    assert render_github([C]).startswith("::error file=p.jsonl,title=evalgate coverage::")  # no line


def test_escapes_follow_the_runner_rules():
    assert escape_data("a%b\rc\nd:e,f") == "a%25b%0Dc%0Ad:e,f"
    assert escape_property("a%b\rc\nd:e,f") == "a%25b%0Dc%0Ad%3Ae%2Cf"


def test_render_findings_dispatches_and_refuses_unknown_formats():
    assert render_findings([A], "text") == render_text([A])
    assert render_findings([A], "github") == render_github([A])
    with pytest.raises(ValueError):
        render_findings([A], "xml")
