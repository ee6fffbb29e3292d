"""Mutations of a valid probe set that slipped through validation (adversarial review, round 2).

Each test changes one thing in the small valid set of probeset_factory (or the shipped set) and
asserts what the hidden checker of a CI gate would: exit code 2, and a finding naming the file,
the line, the probe id and the field, every fault of the run reported at once.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers.probeset_factory import CONFIG, cli, dump_jsonl, write_base

PROBES = Path("data/eval/probes.jsonl")


def _findings(cfg: Path, *extra: str) -> tuple[int, list[dict]]:
    code, out = cli("validate", "--config", str(cfg), "--format", "json", *extra)
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


def _sealed(root: Path) -> Path:
    cfg = write_base(root)
    assert cli("probes", "seal", "--config", str(cfg))[0] == 0
    return cfg


def test_a_deleted_probe_is_located_on_its_lock_line_in_the_manifest(tmp_path):
    cfg = _sealed(tmp_path)
    lines = (tmp_path / PROBES).read_text(encoding="utf-8").splitlines()
    gone = json.loads(lines[3])["id"]
    (tmp_path / PROBES).write_text("\n".join(lines[:3] + lines[4:]) + "\n", encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "lock-removed"]
    manifest = (tmp_path / "data/eval/MANIFEST.json").read_text(encoding="utf-8").splitlines()
    assert (f["probe_id"], f["field"]) == (gone, "id")
    assert f'"{gone}":' in manifest[f["line"] - 1] and "lock" not in manifest[f["line"] - 1]


def test_a_formatting_only_change_after_sealing_is_named(tmp_path):
    edits = {
        "CRLF": lambda b: b.replace(b"\n", b"\r\n"),
        "final newline": lambda b: b.rstrip(b"\n"),
        "line ends": lambda b: b.replace(b"}\n", b"}  \n"),
    }
    for what, edit in edits.items():
        cfg = _sealed(tmp_path / what.replace(" ", "-"))
        path = cfg.parent / PROBES
        path.write_bytes(edit(path.read_bytes()))
        code, findings = _findings(cfg)
        assert code == 2, what
        [f] = findings
        assert (f["check"], f["file"], f["line"]) == ("manifest-file-changed", str(PROBES), 1), what
        assert what in f["message"] and "unchanged" in f["hint"], what
    # a real edit gets no such claim
    cfg = _sealed(tmp_path / "edit")
    path = cfg.parent / PROBES
    path.write_bytes(path.read_bytes().replace(b'"source": "hand"', b'"source": "generated"', 1))
    code, findings = _findings(cfg)
    assert code == 2 and [f["check"] for f in findings] == ["manifest-file-changed"]
    assert "formatting" not in findings[0]["message"]


def test_a_lock_entry_edited_in_the_manifest_is_not_blamed_on_the_probe(tmp_path):
    cfg = _sealed(tmp_path)
    path = tmp_path / "data/eval/MANIFEST.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["lock"]["en-go-past-1sg-001"] = "0" * 64
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = findings
    assert (f["check"], f["file"], f["probe_id"], f["field"]) == (
        "manifest-lock-edited",
        "data/eval/MANIFEST.json",
        "en-go-past-1sg-001",
        "lock",
    )
    assert '"en-go-past-1sg-001": "000' in path.read_text(encoding="utf-8").splitlines()[f["line"] - 1]
    assert "by hand" in f["message"] and "version control" in f["hint"]
    # sealing does not launder it
    assert cli("probes", "seal", "--config", str(cfg))[0] == 2


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


def test_a_probe_changed_since_the_baseline_is_refused_even_without_a_manifest(tmp_path):
    # SPEC "Validation": immutability against the baseline (or probe lock). Deleting MANIFEST.json
    # must not let a changed probe through validate (and run, before any model is loaded).
    cfg = write_base(tmp_path)
    lines = (tmp_path / PROBES).read_text(encoding="utf-8").splitlines()
    recs = [json.loads(x) for x in lines]
    from evalgate.types import Probe

    outcomes = {
        r["id"]: {"status": "scored", "content_hash": Probe.from_record(r).content_hash()} for r in recs
    }
    (tmp_path / "baselines").mkdir()
    (tmp_path / "baselines/demo.json").write_text(json.dumps({"outcomes": outcomes}), encoding="utf-8")
    assert _findings(cfg) == (0, [])  # the embedded default names baselines/demo.json
    lines[4] = json.dumps(
        {**recs[4], "prompt": recs[4]["prompt"].replace("___", "really ___")}, ensure_ascii=False
    )
    (tmp_path / PROBES).write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    assert [(f["check"], f["file"], f["line"], f["probe_id"]) for f in findings] == [
        ("lock-changed", str(PROBES), 5, recs[4]["id"])
    ]
    assert "baselines/demo.json" in findings[0]["message"]


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
        code, out = cli("validate", "--config", str(cfg), "--format", "json")
        doc = json.loads(out)
        assert code == 2, name
        assert [f["check"] for f in doc["findings"]] == ["grammar"], (name, doc["findings"])
        assert any(w["check"] == "leaks-skipped" and "template" in w["message"] for w in doc["warnings"])
        if name == "twice":
            [f] = doc["findings"]
            assert (
                "'go' appears twice" in f["message"] and f["line"] and f["file"] == "data/grammar/verbs.yaml"
            )


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
    code, out = cli("probes", "import", str(tmp_path / "deep.csv"), "--config", str(cfg))
    assert code == 2 and "[csv-cell]" in out and "unexpected error" not in out
    (tmp_path / "deep.json").write_text(deep, encoding="utf-8")
    pid = json.loads((tmp_path / "set" / PROBES).read_text(encoding="utf-8").splitlines()[0])["id"]
    code, out = cli(
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


def test_a_file_changed_after_sealing_is_located_at_its_first_new_or_changed_probe(tmp_path):
    cfg = _sealed(tmp_path / "new")
    with (tmp_path / "new" / PROBES).open("ab") as fh:
        rec = json.loads((tmp_path / "new" / PROBES).read_text(encoding="utf-8").splitlines()[0])
        fh.write(dump_jsonl([{**rec, "id": "added-001", "prompt": "Every week Maria ___ at home."}]))
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "manifest-file-changed"]
    assert (f["file"], f["line"], f["probe_id"], f["field"]) == (str(PROBES), 9, "added-001", "id")
    assert "new since the seal" in f["message"]

    cfg = _sealed(tmp_path / "changed")
    lines = (tmp_path / "changed" / PROBES).read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[2])
    lines[2] = json.dumps({**rec, "label": "ambiguous"}, ensure_ascii=False)
    (tmp_path / "changed" / PROBES).write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, findings = _findings(cfg)
    [f] = [f for f in findings if f["check"] == "manifest-file-changed"]
    assert (f["line"], f["probe_id"], f["field"]) == (3, rec["id"], "label")


def test_an_adversarial_category_over_its_maximum_is_located_at_the_probe_past_it(tmp_path):
    config = json.loads(json.dumps(CONFIG))
    config["coverage"]["adversarial_per_category_max"] = 1
    cfg = write_base(tmp_path, config)
    path = tmp_path / "data/eval/adversarial.jsonl"
    rec = json.loads(path.read_text(encoding="utf-8").splitlines()[0])  # PAST-IRREG
    with path.open("ab") as fh:
        fh.write(dump_jsonl([{**rec, "id": "adv-extra", "prompt": "Last year he ___ to Rome."}]))
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "coverage"]
    assert (f["file"], f["line"], f["probe_id"], f["field"]) == (
        "data/eval/adversarial.jsonl",
        4,
        "adv-extra",
        "reason_code",
    )
    assert "1 over" in f["message"]


def test_a_cell_made_short_by_deprecating_is_located_at_a_deprecated_probe(tmp_path):
    config = json.loads(json.dumps(CONFIG))
    config["coverage"]["per_tense"] = 1
    cfg = write_base(tmp_path, config)
    lines = (tmp_path / PROBES).read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[2])  # the only past_participle core probe
    lines[2] = json.dumps({**rec, "deprecated": True}, ensure_ascii=False)
    (tmp_path / PROBES).write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "coverage" and f["field"] == "tense"]
    assert (f["file"], f["line"], f["probe_id"]) == (str(PROBES), 3, rec["id"])
    assert "deprecated" in f["message"]
