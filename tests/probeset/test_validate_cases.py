"""The broken probe sets of tests/helpers/fixtures/probesets/, one failure kind each, through the real CLI.

Each case is a few edits of the valid base set (probeset_factory.write_base); the test asserts
exit code 2 and that both the text and the JSON output name the right file, line, probe and field.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.paths import FIXTURES
from helpers.probeset_factory import (
    apply_step,
    case_names,
    cli_merged,
    dump_jsonl,
    load_case,
    probe,
    write_base,
)

REQUIRED_KINDS = {
    "bad_json",
    "bom",
    "non_utf8",
    "missing_field",
    "unknown_field",
    "wrong_enum",
    "duplicate_id_across_files",
    "expected_not_in_candidates",
    "no_blank",
    "two_blanks",
    "verb_not_in_table",
    "regularity_mismatch",
    "category_file_mismatch",
    "adversarial_without_reason_code",
    "coverage_short",
    "leak_exact",
    "leak_template",
    "leak_ngram",
    "probe_changed_after_sealing",
    "file_changed_after_sealing",
}


def _validate(cfg: Path, fmt: str) -> tuple[int, str]:
    return cli_merged("validate", "--config", str(cfg), "--format", fmt)


def _text_prefix(expected: dict) -> str:
    """The start of the finding's text line: `file:line: probe-id: field:`."""
    parts = [expected["file"] + (f":{expected['line']}" if "line" in expected else "")]
    parts += [expected[k] for k in ("probe_id", "field") if k in expected]
    return ": ".join(parts) + ": "


def test_the_base_set_is_valid(tmp_path):
    code, out = _validate(write_base(tmp_path), "text")
    assert code == 0, out
    assert "evalgate validate: OK" in out


def test_every_required_failure_kind_has_a_case():
    assert set(case_names()) >= REQUIRED_KINDS
    readme = (FIXTURES / "probesets" / "README.md").read_text(encoding="utf-8")
    for name in case_names():
        assert f"`{name}`" in readme, f"{name} is not listed in the fixtures README"


@pytest.mark.integration
@pytest.mark.parametrize("name", case_names())
def test_broken_set_is_refused_and_located(tmp_path, name):
    case = load_case(name)
    cfg = write_base(tmp_path)
    for step in case["steps"]:
        apply_step(tmp_path, step)

    code, out = _validate(cfg, "json")
    assert code == 2, out
    doc = json.loads(out)
    assert doc["ok"] is False
    for want in case["expect"]:
        hits = [f for f in doc["findings"] if all(f.get(k) == v for k, v in want.items())]
        assert hits, f"{name}: no finding {want} in {json.dumps(doc['findings'], indent=1)}"
        assert all(f["message"] and f.get("hint") for f in hits)
    for check in case.get("absent", []):
        assert check not in {f["check"] for f in doc["findings"]}, f"{name}: unexpected {check}"

    code, text = _validate(cfg, "text")
    assert code == 2
    for want in case["expect"]:
        assert _text_prefix(want) in text, f"{name}: {_text_prefix(want)!r} not in\n{text}"
    if "text" in case:
        assert case["text"] in text
    assert "the probe set is refused (nothing was scored)" in text


def test_several_faults_in_one_file_are_all_reported(tmp_path):
    cfg = write_base(tmp_path)
    good = probe("en-see-past-3sg-001", "en", "see", "irregular", "past_simple", "3sg",
                 "Last night Ana ___ a comet.", ["saw", "seed", "sees"], "saw")  # fmt: skip
    broken = [
        {**good, "id": "m-1", "candidates": ["seed", "sees"]},  # expected not among candidates
        {**good, "id": "m-2", "prompt": "Ana ___ a ___ comet."},  # two blanks
        {k: v for k, v in good.items() if k != "person"} | {"id": "m-3"},  # missing field
        {**good, "id": "m-4", "verb": "fly"},  # verb not in the table
        {**good, "id": "m-5", "regularity": "regular", "label": "maybe"},  # two faults in one probe
    ]
    data = dump_jsonl(broken).replace(b'"id": "m-4"', b'"id": "m-4",', 1)  # and m-4 is not JSON any more
    data += dump_jsonl([{**good, "id": "m-6", "verb": "fly"}])
    (tmp_path / "data/eval/probes.jsonl").write_bytes(data)
    code, out = _validate(cfg, "json")
    assert code == 2
    got = {
        (f["check"], f.get("line"), f.get("probe_id"), f.get("field")) for f in json.loads(out)["findings"]
    }
    path = "data/eval/probes.jsonl"
    assert {
        ("expected-not-candidate", 1, "m-1", "expected"),
        ("blank", 2, "m-2", "prompt"),
        ("schema", 3, "m-3", "person"),
        ("jsonl-syntax", 4, "m-4", None),
        ("regularity-mismatch", 5, "m-5", "regularity"),
        ("schema", 5, "m-5", "label"),
        ("verb-unknown", 6, "m-6", "verb"),
    } <= got
    code, text = _validate(cfg, "text")
    for line in (
        f"{path}:1: m-1: expected:",
        f"{path}:4: m-4:",
        f"{path}:5: m-5: label:",
        f"{path}:6: m-6: verb:",
    ):
        assert line in text
