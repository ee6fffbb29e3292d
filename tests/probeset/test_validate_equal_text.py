"""Text that reads the same compares the same; short probes, anchored fields, control characters.

Each test runs the real `evalgate validate` on the small valid set of probeset_factory with one
change, and asserts the exit code and the finding (check, field, probe id).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.probeset_factory import ADVERSARIAL, CORE, TRAIN, cli_merged, dump_jsonl, write_base

from evalgate.probeset.normalize import normalize
from evalgate.probeset.scripts import confusables

PROBES = Path("data/eval/probes.jsonl")
ADV = Path("data/eval/adversarial.jsonl")


def _findings(cfg: Path) -> tuple[int, list[dict]]:
    code, out = cli_merged("validate", "--config", str(cfg), "--format", "json")
    return code, json.loads(out)["findings"]


def _with_probe(root: Path, **fields) -> Path:
    cfg = write_base(root)
    with (root / PROBES).open("ab") as fh:
        fh.write(dump_jsonl([{**CORE[0], "id": "odd", **fields}]))
    return cfg


def _with_train(root: Path, *lines: str) -> Path:
    cfg = write_base(root)
    (root / "data/corpus/train.jsonl").write_bytes(dump_jsonl([{"text": t} for t in [*TRAIN, *lines]]))
    return cfg


def _leaks_of(findings: list[dict], pid: str) -> list[dict]:
    return [f for f in findings if f["check"].startswith("leak-") and f.get("probe_id") == pid]


# the first base probe, "Every day Maria ___ at the office." with "works", filled
FILLED = "Every day Maria works at the office."


def test_normalize_folds_what_a_reader_cannot_see():
    assert normalize("will write") == normalize("will  write") == normalize("will\u00a0write")
    assert normalize("Da\u034fnced") == normalize("dan\U000e0041ced") == "danced"
    assert normalize("wr\ufe0fote\u200b") == normalize("ＷＲＯＴＥ") == "wrote"
    assert normalize("STRASSE") == normalize("straße")
    assert normalize("went") != normalize("wеnt")  # Cyrillic е: not folded, named instead
    assert "U+0435 CYRILLIC SMALL LETTER IE" in confusables("wеnt")[0]


@pytest.mark.parametrize(
    "copy",
    [
        "Every day Ma\u034fria works at the office.",  # combining grapheme joiner
        "Every day Maria wor\U000e0020ks at the office.",  # tag character
        "Every\u2003day  Maria\u00a0works at the office.",  # em space, two spaces, no-break space
        "EVERY DAY MARIA WORKS AT THE OFFICE.",
        "Every day Mar\u200dia works at the of\ufe0ffice.",  # zero-width joiner, variation selector
        "Ｅvery day Maria works at the office.",  # full-width letter
    ],
)
def test_a_training_copy_with_invisible_or_odd_characters_is_a_leak(tmp_path, copy):
    code, findings = _findings(_with_train(tmp_path, copy))
    assert code == 2
    [leak] = _leaks_of(findings, CORE[0]["id"])
    assert leak["check"] == "leak-exact" and leak["field"] == "prompt"


@pytest.mark.parametrize("other", ["will  write", "will\u00a0write", "Will write", "will\u034f write"])
def test_candidates_that_read_the_same_are_one_candidate(tmp_path, other):
    cfg = _with_probe(
        tmp_path,
        verb="write",
        regularity="irregular",
        tense="future",
        prompt="Tomorrow she ___ a letter.",
        candidates=["will write", other, "wrote"],
        expected="will write",
    )
    code, findings = _findings(cfg)
    assert code == 2
    mine = [f for f in findings if f.get("probe_id") == "odd" and f["field"] == "candidates"]
    assert any("[0] and [1] are the same form" in f["message"] for f in mine), mine


def test_look_alike_letters_in_candidates_are_named_by_code_point(tmp_path):
    cfg = _with_probe(tmp_path, candidates=["work", "wоrks", "worked", "ｗorked"], expected="work")
    code, findings = _findings(cfg)
    assert code == 2
    found = [f for f in findings if f.get("probe_id") == "odd" and f["check"] == "confusable"]
    assert [f["field"] for f in found] == ["candidates", "candidates"]
    assert "item [1]" in found[0]["message"] and "U+043E CYRILLIC SMALL LETTER O" in found[0]["message"]
    assert "item [3]" in found[1]["message"] and "U+FF57" in found[1]["message"]


def test_ids_that_differ_only_in_case_are_one_id(tmp_path):
    cfg = _with_probe(tmp_path, id=CORE[1]["id"].upper(), prompt="Every night Maria ___ at home.")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "duplicate-id"]
    assert f["probe_id"] == CORE[1]["id"].upper() and CORE[1]["id"] in f["message"]


def test_twins_are_found_through_the_normalisation(tmp_path):
    cfg = _with_probe(tmp_path, prompt="Every\u00a0day  MARIA ___ at the of\u200bfice.")
    _, out = cli_merged("validate", "--config", str(cfg), "--format", "json")
    warnings = json.loads(out)["warnings"]
    assert any(w["check"] == "twin" and w["probe_id"] == "odd" for w in warnings)
    assert any("--allow-twins" in (w.get("hint") or "") for w in warnings if w["check"] == "twin")


# --- short probes ------------------------------------------------------------------------------

SHORT = {
    "id": "short",
    "verb": "dance",
    "regularity": "regular",
    "tense": "past_simple",
    "person": "1sg",
    "prompt": "Last week I ___.",
    "candidates": ["danced", "dances"],
    "expected": "danced",
}


@pytest.mark.parametrize(
    "copy",
    [
        "Last week I danced",
        "Last week, I danced.",
        "last week I danced!",
        "It was a long year. Last week I danced! Then I slept.",
        "After the wedding, last week I danced, and everyone laughed.",
    ],
)
def test_a_short_probe_copied_with_other_punctuation_or_inside_a_line_is_a_leak(tmp_path, copy):
    cfg = write_base(tmp_path)
    with (tmp_path / PROBES).open("ab") as fh:
        fh.write(dump_jsonl([{**CORE[0], **SHORT}]))
    (tmp_path / "data/corpus/train.jsonl").write_bytes(dump_jsonl([{"text": t} for t in [*TRAIN, copy]]))
    code, findings = _findings(cfg)
    assert code == 2, findings
    assert [f["check"] for f in _leaks_of(findings, "short")] == ["leak-exact"]


def test_a_short_probe_sharing_words_but_not_a_clause_is_not_a_leak(tmp_path):
    cfg = write_base(tmp_path)
    with (tmp_path / PROBES).open("ab") as fh:
        fh.write(dump_jsonl([{**CORE[0], **SHORT}]))
    line = "Last week I danced with my sister at the wedding."
    (tmp_path / "data/corpus/train.jsonl").write_bytes(dump_jsonl([{"text": t} for t in [*TRAIN, line]]))
    _, findings = _findings(cfg)
    assert _leaks_of(findings, "short") == []


# --- anchored fields and control characters ------------------------------------------------------


@pytest.mark.parametrize("field,value", [("id", "odd-1\n"), ("reason_code", "PAST-IRREG\n")])
def test_a_value_ending_in_a_line_break_does_not_pass_an_anchored_pattern(tmp_path, field, value):
    cfg = write_base(tmp_path)
    rec = {**ADVERSARIAL[0], "id": "adv-odd"}
    rec["prompt"] = "Last month he ___ to the river."
    rec[field] = value
    with (tmp_path / ADV).open("ab") as fh:
        fh.write(dump_jsonl([rec]))
    code, findings = _findings(cfg)
    assert code == 2
    assert any(f["check"] == "schema" and f["field"] == field for f in findings), findings


@pytest.mark.parametrize(
    "field,value",
    [
        ("prompt", "Every day Maria ___ at the \x1b[8mhidden\x1b[0m office."),
        ("prompt", "Every day Maria ___ at the office.\r"),
        ("explanation", "fine\x00 until here"),
        ("explanation", "C1 control \x85 here"),
        ("verb", "work\x07"),
    ],
)
@pytest.mark.integration
def test_control_characters_are_refused_in_every_text_field(tmp_path, field, value):
    code, findings = _findings(_with_probe(tmp_path, **{field: value}))
    assert code == 2
    [f] = [f for f in findings if f["check"] == "control-character"]
    assert (f["probe_id"], f["field"], f["line"]) == ("odd", field, 9)
    assert "U+" in f["message"]


def test_a_core_probe_with_a_reason_code_is_refused(tmp_path):
    code, findings = _findings(
        _with_probe(tmp_path, prompt="Each day Maria ___ here.", reason_code="PAST-IRREG")
    )
    assert code == 2
    [f] = [f for f in findings if f["check"] == "reason-code-core"]
    assert (f["probe_id"], f["field"]) == ("odd", "reason_code")


def test_every_anchored_schema_pattern_is_safe_from_a_trailing_line_break():
    # JSON-Schema `pattern` searches, and Python's `$` matches before a final "\n"
    import re as _re
    from importlib import resources

    from evalgate.probeset.manifest import MANIFEST_SCHEMA

    def patterns(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "pattern" and isinstance(v, str):
                    yield v
                else:
                    yield from patterns(v)
        elif isinstance(node, list):
            for v in node:
                yield from patterns(v)

    found = list(patterns(MANIFEST_SCHEMA))
    for name in ("probe", "config", "baseline", "results", "grammar"):
        text = resources.files("evalgate").joinpath("schemas", f"{name}.schema.json").read_text("utf-8")
        found += list(patterns(json.loads(text)))
    anchored = [p for p in found if p.endswith("$") or "$(?!\\n)" in p]
    assert anchored and all(not p.endswith("$") for p in anchored), anchored
    for p in anchored:
        assert not any(_re.search(p, s + "\n") and not _re.search(p, s) for s in ("a", "0.1.0", "x" * 64))


def test_every_format_character_of_this_unicode_version_is_ignorable():
    # the ignorable class is written out as ranges (one regex pass); a newer Unicode adds Cf
    # characters, and this says which are missing
    import sys
    import unicodedata

    from evalgate.probeset.normalize import is_ignorable

    missing = [
        f"U+{c:04X}"
        for c in range(sys.maxunicode + 1)
        if unicodedata.category(chr(c)) == "Cf" and not is_ignorable(chr(c))
    ]
    assert missing == []
