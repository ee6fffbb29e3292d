"""Faults of one probe record that once slipped through validation: every one named, located on
its line and field, in the same run as the others."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.probeset_factory import cli_merged, dump_jsonl, write_base

PROBES = Path("data/eval/probes.jsonl")


def _findings(cfg: Path, *extra: str) -> tuple[int, list[dict]]:
    code, out = cli_merged("validate", "--config", str(cfg), "--format", "json", *extra)
    return code, json.loads(out)["findings"]


def _with_probe(root: Path, **fields) -> Path:
    """The base set plus one probe `odd` (line 9): the first core probe with `fields` changed."""
    cfg = write_base(root)
    rec = json.loads((root / PROBES).read_text(encoding="utf-8").splitlines()[0])
    with (root / PROBES).open("ab") as fh:
        fh.write(dump_jsonl([{**rec, "id": "odd", **fields}]))
    return cfg


def _located(findings: list[dict]) -> list[tuple[str, str, int, str]]:
    return sorted(
        (f["check"], f["field"], f["line"], f["file"]) for f in findings if f.get("probe_id") == "odd"
    )


def test_expected_that_is_another_candidate_but_not_the_tables_form_is_refused(tmp_path):
    # base probe: en 'work' present_simple 3sg, candidates work/works/worked, expected "works"
    cfg = _with_probe(tmp_path / "wrong", expected="worked")
    code, findings = _findings(cfg)
    assert code == 2
    assert _located(findings) == [("expected-form", "expected", 9, str(PROBES))]
    [f] = [f for f in findings if f.get("probe_id") == "odd"]
    assert (
        "'works'" in f["message"] and "past_simple" in f["message"]
    )  # the table's form, and where "worked" is

    cfg = _with_probe(tmp_path / "tense", tense="past_simple")  # the label moved, the form did not
    code, findings = _findings(cfg)
    assert code == 2 and _located(findings) == [("expected-form", "expected", 9, str(PROBES))]

    fine = {
        "auxiliary": {
            "tense": "past_participle",
            "candidates": ["has worked", "works"],
            "expected": "has worked",
        },
        "ambiguous": {"expected": "work", "label": "ambiguous"},
    }
    for name, fields in fine.items():
        assert _findings(_with_probe(tmp_path / name, **fields)) == (0, []), name


def test_every_fault_of_one_record_is_named_even_when_the_schema_fails_too(tmp_path):
    cases = {
        # uniqueItems fails, and expected is in none of them
        "dup-and-missing": (
            {"candidates": ["work", "work", "worked"], "expected": "zzz"},
            [("expected-not-candidate", "expected"), ("schema", "candidates")],
        ),
        # over the length limit, and two blanks
        "long-two-blanks": (
            {"prompt": "She ___ and ___ " + "x " * 1100},
            [("blank", "prompt"), ("schema", "prompt")],
        ),
        # an unknown language and a verb of no language
        "language-and-verb": (
            {"language": "fr", "verb": "fly"},
            [("schema", "language"), ("verb-unknown", "verb")],
        ),
    }
    for name, (fields, expected) in cases.items():
        code, findings = _findings(_with_probe(tmp_path / name, **fields))
        assert code == 2, name
        assert [(c, f) for c, f, line, _ in _located(findings) if line == 9] == expected, name


def test_candidates_with_control_characters_or_the_blank_and_a_prompt_of_only_the_blank(tmp_path):
    cases = {
        "newline": (
            {"candidates": ["work", "wor\nks", "worked"], "expected": "work"},
            "candidates",
            "control",
        ),
        "blank-candidate": ({"candidates": ["works", "___", "worked"]}, "candidates", "blank ___"),
        "only-blank": ({"prompt": "___"}, "prompt", "no words"),
        "blank-and-punctuation": ({"prompt": "¿ ___ ?"}, "prompt", "no words"),
    }
    for name, (fields, field, words) in cases.items():
        code, findings = _findings(_with_probe(tmp_path / name, **fields))
        assert code == 2, name
        hits = [f for f in findings if f.get("probe_id") == "odd" and f["field"] == field]
        assert hits and all(f["line"] == 9 for f in hits), (name, findings)
        assert any(words in f["message"] for f in hits), (name, hits)


def test_a_numeric_id_is_named_by_its_spelling(tmp_path):
    cfg = write_base(tmp_path)
    lines = (tmp_path / PROBES).read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[2])
    lines[2] = json.dumps({**rec, "id": 1.5, "expected": "zzz"})
    (tmp_path / PROBES).write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    assert sorted((f["check"], f["probe_id"], f["field"], f["line"]) for f in findings) == [
        ("expected-not-candidate", "1.5", "expected", 3),
        ("schema", "1.5", "id", 3),
    ]


def test_a_broken_line_names_the_probe_and_the_field_it_broke_in(tmp_path):
    cfg = write_base(tmp_path)
    lines = (tmp_path / PROBES).read_text(encoding="utf-8").splitlines()
    pid = json.loads(lines[1])["id"]
    lines[1] = "[" + lines[1] + "]"  # a probe wrapped in an array
    lines[2] = re.sub(r'"expected": "(\w+)"', r'"expected": \1', lines[2])  # an unquoted value
    lines[3] = lines[3].replace('"label": "correct",', '"label": "correct"')  # a missing comma
    lines[4] = lines[4][:-1] + ",}"  # a trailing comma: between members, no field to blame
    (tmp_path / PROBES).write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    got = [(f["check"], f["line"], f.get("probe_id"), f.get("field")) for f in findings]
    assert ("jsonl-not-object", 2, pid, None) in got
    assert [g[3] for g in got if g[0] == "jsonl-syntax"] == ["expected", "label", None]
    assert all(g[2] for g in got if g[0].startswith("jsonl-"))  # every broken line still names its probe


def test_a_mistyped_adversarial_reason_code_is_refused_and_a_new_category_is_not(tmp_path):
    for code, refused in (("PAST-IREG", True), ("PRES-3SG", True), ("MODAL-VERB", False)):
        cfg = write_base(tmp_path / code)
        path = tmp_path / code / "data/eval/adversarial.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines()
        rec = json.loads(lines[1])
        lines[1] = json.dumps({**rec, "reason_code": code})
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        code_, findings = _findings(cfg)
        got = [(f["check"], f["file"], f["line"], f["probe_id"], f["field"]) for f in findings]
        if refused:
            assert code_ == 2
            assert got == [
                ("reason-code-unknown", "data/eval/adversarial.jsonl", 2, rec["id"], "reason_code")
            ]
            assert "did you mean" in findings[0]["message"]
        else:
            assert (code_, got) == (0, [])


def test_a_leak_is_reported_in_the_same_run_as_a_schema_error_of_that_probe(tmp_path):
    # "The children played in the garden all afternoon." is a training sentence of the base set
    leak = {
        "prompt": "The children ___ in the garden all afternoon.",
        "verb": "play",
        "regularity": "regular",
        "tense": "past_simple",
        "candidates": ["played", "plays"],
        "expected": "played",
        "source": "web",  # not hand/generated: a schema error
    }
    code, findings = _findings(_with_probe(tmp_path, **leak))
    assert code == 2
    mine = [f for f in findings if f.get("probe_id") == "odd" and f["line"] == 9]
    got = {(f["check"], f["field"]) for f in mine}
    assert {("schema", "source"), ("leak-exact", "prompt")} <= got
    # one finding for the leak, naming every detector that found it
    [leak] = [f for f in mine if f["check"].startswith("leak-")]
    assert {"exact", "ngram"} <= set(leak["evidence"]["detectors"])


def test_an_ordinal_probe_that_lost_its_kind_and_a_comment_line_say_so(tmp_path):
    scale = {"candidates": ["1", "2", "3", "4", "5"], "expected": "5", "prompt": "Rate it from 1 to 5: ___"}
    code, findings = _findings(_with_probe(tmp_path / "kind", **scale))
    assert code == 2
    [f] = [f for f in findings if f.get("probe_id") == "odd"]
    assert (f["check"], f["field"]) == ("expected-form", "expected") and '"kind": "ordinal"' in f["message"]

    cfg = write_base(tmp_path / "comment")
    lines = (tmp_path / "comment" / PROBES).read_text(encoding="utf-8").splitlines()
    lines.insert(2, "# irregular verbs below")
    (tmp_path / "comment" / PROBES).write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "jsonl-syntax"]
    assert f["line"] == 3 and "no comments" in f["message"]


def test_a_template_with_a_bom_crlf_or_an_invisible_character_is_refused(tmp_path):
    cases = {
        "bom": (b"\xef\xbb\xbfComplete the sentence.\n{prompt}\n", 1),
        "crlf": (b"Complete the sentence.\r\n{prompt}\r\n", 1),
        "zwsp": ("Complete the sentence.\n{prompt}\u200b\n".encode(), 2),
    }
    for name, (data, line) in cases.items():
        cfg = write_base(tmp_path / name)
        (tmp_path / name / "data/eval/probe_prompt.txt").write_bytes(data)
        code, findings = _findings(cfg)
        assert code == 2, name
        [f] = findings
        assert (f["check"], f["file"], f["line"]) == ("template", "data/eval/probe_prompt.txt", line), name


def test_a_broken_verb_table_is_named_and_does_not_flood_template_leaks(tmp_path):
    cases = {
        # a verb written twice: YAML would keep the second silently
        "twice": lambda t: t.replace("  go:\n", "  go:\n    regularity: irregular\n  go:\n", 1),
        # a schema error: without the table every verb form would read as a noun
        "short": lambda t: t.replace("[went, went, went]", "[went, went]", 1),
    }
    for name, edit in cases.items():
        cfg = write_base(tmp_path / name)
        path = tmp_path / name / "data/grammar/verbs.yaml"
        path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
        code, out = cli_merged("validate", "--config", str(cfg), "--format", "json")
        doc = json.loads(out)
        assert code == 2, name
        assert [f["check"] for f in doc["findings"]] == ["grammar"], (name, doc["findings"])
        assert any(w["check"] == "leaks-skipped" and "template" in w["message"] for w in doc["warnings"])
        if name == "twice":
            [f] = doc["findings"]
            assert (
                "'go' appears twice" in f["message"] and f["line"] and f["file"] == "data/grammar/verbs.yaml"
            )


@pytest.mark.integration
def test_every_underscore_look_alike_is_named_when_the_blank_is_missing(tmp_path):
    lookalikes = {
        "‗‗‗": "U+2017",
        "﹍﹍﹍": "U+FE4D",
        "ˍˍˍ": "U+02CD",
        "▁▁▁": "U+2581",
        "———": "U+2014",
        "_\u0332_\u0332_": "U+0332",
    }
    for i, (blank, code) in enumerate(lookalikes.items()):
        cfg = _with_probe(tmp_path / str(i), prompt=f"Every day Maria {blank} at the office.")
        status, findings = _findings(cfg)
        assert status == 2
        hits = [f for f in findings if f.get("probe_id") == "odd" and f["check"] == "blank"]
        assert len(hits) == 1 and code in hits[0]["message"], (blank, findings)


def test_import_and_deprecate_refuse_json_nested_past_the_recursion_limit(tmp_path):
    cfg = write_base(tmp_path / "set")
    deep = "[" * 60000 + "]" * 60000
    header = "id,language,verb,regularity,tense,person,prompt,candidates,expected,label,category\n"
    row = f'n1,en,work,regular,present_simple,3sg,Each week Tom ___ late.,"{deep}",works,correct,core\n'
    (tmp_path / "deep.csv").write_text(header + row, encoding="utf-8")
    code, out = cli_merged("probes", "import", str(tmp_path / "deep.csv"), "--config", str(cfg))
    assert code == 2 and "[csv-cell]" in out and "unexpected error" not in out
    (tmp_path / "deep.json").write_text(deep, encoding="utf-8")
    pid = json.loads((tmp_path / "set" / PROBES).read_text(encoding="utf-8").splitlines()[0])["id"]
    code, out = cli_merged(
        "probes", "deprecate", pid, "--replacement", str(tmp_path / "deep.json"), "--config", str(cfg)
    )
    assert code == 2 and "nested too deeply" in out and "unexpected error" not in out


def test_a_probe_moved_to_another_verb_is_told_which_verb_its_form_belongs_to(tmp_path):
    # base probe: en 'work' present_simple 3sg "works"; 'play' is regular too, so regularity agrees
    cfg = _with_probe(tmp_path, verb="play")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f.get("probe_id") == "odd"]
    assert (f["check"], f["field"], f["line"]) == ("expected-form", "expected", 9)
    assert "form of 'work': check `verb`" in f["message"]
