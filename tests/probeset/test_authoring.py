"""Probe-set authoring: `evalgate probes import | export | deprecate` through the real CLI, on real files.

Most tests use the small valid set of tests/helpers/probeset_factory.py (fast: a 6-sentence corpus); the
round trip and deprecate also run on a copy of the shipped set (data/eval, the real corpus).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import REPO
from helpers.probeset_factory import ADVERSARIAL, CORE, EVAL, TRAIN, cli_merged, dump_jsonl, probe, write_base

from evalgate.config import load_config
from evalgate.probeset.authoring import (
    COLUMNS,
    default_destinations,
    deprecated_line,
    escape_cell,
    next_id,
    parse_csv,
    unescape_cell,
)
from evalgate.types import Probe

MANIFEST = EVAL / "MANIFEST.json"


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under data/eval (probe files, template, manifest), by name."""
    return {p.name: p.read_bytes() for p in sorted((root / EVAL).iterdir())}


def run(root: Path, *args: str) -> tuple[int, str]:
    return cli_merged(*args, "--config", str(root / "evalgate.yml"))


def validate(root: Path) -> tuple[int, dict]:
    code, out = run(root, "validate", "--format", "json")
    return code, json.loads(out)


def manifest(root: Path) -> dict:
    return json.loads((root / MANIFEST).read_text(encoding="utf-8"))


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    return value


def write_csv(path: Path, records: list[dict], columns: tuple[str, ...] | list[str] = COLUMNS) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        for rec in records:
            writer.writerow([cell(rec.get(c)) for c in columns])
    return path


def fresh(i: int, **fields: Any) -> dict:
    """A valid core probe that is new to the small set (no twin, no leak); `fields` override."""
    rec = probe(
        f"new-en-walk-past-1sg-{i:03d}", "en", "walk", "regular", "past_simple", "1sg",
        f"Yesterday after lesson {i} I ___ home.", ["walk", "walked", "walks"], "walked",
    )  # fmt: skip
    rec.update(fields)
    return rec


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """The factory's valid set, sealed at 0.1.0."""
    root = tmp_path / "repo"
    write_base(root)
    code, out = run(root, "probes", "seal")
    assert code == 0, out
    return root


def empty_like(root: Path, dest: Path) -> Path:
    """The same repository without probe files or manifest: an empty set to import into."""
    shutil.copytree(root, dest)
    for path in [*(dest / EVAL).glob("*.jsonl"), dest / MANIFEST]:
        path.unlink(missing_ok=True)
    return dest


@pytest.fixture
def shipped(tmp_path: Path) -> Path:
    """A copy of the repository's own configuration and data (never the originals)."""
    root = tmp_path / "shipped"
    for part in ("data/eval", "data/grammar", "data/corpus"):
        shutil.copytree(REPO / part, root / part)
    shutil.copy(REPO / "evalgate.yml", root / "evalgate.yml")
    (root / MANIFEST).unlink(missing_ok=True)
    return root


# --- import: all or nothing ---------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_one_bad_row_among_many_adds_nothing_and_every_bad_row_is_named(small, fmt):
    rows = [fresh(i) for i in range(1, 13)]
    rows[2] = fresh(3, expected="walking")  # expected not among the candidates
    rows[6] = fresh(7, candidates=["walked"])  # one candidate: could never fail
    rows[9] = fresh(10, verb="wakl")  # not a target verb
    rows[10] = fresh(11, tense="pluperfect")  # outside the enum
    if fmt == "csv":
        source = write_csv(small / "new.csv", rows)
        row_of = {i: i + 2 for i in range(len(rows))}  # header is row 1
    else:
        source = small / "new.jsonl"
        source.write_bytes(dump_jsonl(rows))
        row_of = {i: i + 1 for i in range(len(rows))}
    before = snapshot(small)
    code, out = run(small, "probes", "import", str(source))
    assert code == 2, out
    assert snapshot(small) == before
    name = str(source)
    for i, field in [(2, "expected"), (6, "candidates"), (9, "verb"), (10, "tense")]:
        assert f"{name}:{row_of[i]}: {rows[i]['id']}: {field}: " in out, out
    assert "could never fail" in out
    bad = sorted(row_of[i] for i in (2, 6, 9, 10))
    assert f"4 of 12 row(s) of {name} are invalid: rows {', '.join(map(str, bad))}" in out
    assert validate(small)[0] == 0


def test_a_leak_found_by_the_full_validation_is_named_on_its_row(small):
    # The filled prompt of row 3 is a training sentence: only the leak detectors (pass 2) see it.
    leaking = probe(
        "new-en-play-past-3pl-001", "en", "play", "regular", "past_simple", "3sg",
        "The children ___ in the garden all afternoon.", ["play", "played", "plays"], "played",
    )  # fmt: skip
    assert TRAIN[0] == "The children played in the garden all afternoon."
    source = write_csv(small / "new.csv", [fresh(1), leaking, fresh(2)])
    before = snapshot(small)
    code, out = run(small, "probes", "import", str(source))
    assert code == 2, out
    assert snapshot(small) == before
    assert f"{source}:3: new-en-play-past-3pl-001: " in out and "[leak-exact]" in out
    assert f"1 of 3 row(s) of {source} are invalid: row 3 (the header is row 1)" in out


def test_an_unknown_column_is_refused_with_the_closest_known_name(small):
    columns = [c if c != "explanation" else "explanaton" for c in COLUMNS]
    rec = fresh(1, explanation="'yesterday' asks for the past.")
    source = small / "new.csv"
    with source.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        writer.writerow([cell(rec.get(c if c != "explanaton" else "explanation")) for c in columns])
    before = snapshot(small)
    code, out = run(small, "probes", "import", str(source))
    assert code == 2
    assert snapshot(small) == before
    assert "unknown column 'explanaton'" in out and "did you mean 'explanation'?" in out
    assert "header row" in out


def test_a_missing_required_column_and_a_malformed_list_cell_are_named(small, tmp_path):
    source = tmp_path / "no_expected.csv"
    write_csv(source, [fresh(1)], [c for c in COLUMNS if c != "expected"])
    code, out = run(small, "probes", "import", str(source))
    assert code == 2 and "required column(s) 'expected' missing" in out

    source = tmp_path / "pipes.csv"
    write_csv(source, [fresh(1, candidates="walk|walked"), fresh(2)])
    code, out = run(small, "probes", "import", str(source))
    assert code == 2
    assert f"{source}:2: new-en-walk-past-1sg-001: candidates: 'walk|walked' is not a JSON list" in out
    assert "missing required field 'candidates'" not in out  # one problem, said once
    assert '["works", "worked", "will work"]' in out  # the hint shows the format


def test_duplicate_ids_within_the_file_and_against_the_set_are_refused(small):
    rows = [fresh(1), fresh(2, id="new-en-walk-past-1sg-001"), fresh(3, id=CORE[4]["id"])]
    source = small / "dups.jsonl"
    source.write_bytes(dump_jsonl(rows))
    before = snapshot(small)
    code, out = run(small, "probes", "import", str(source))
    assert code == 2 and snapshot(small) == before
    first = "new-en-walk-past-1sg-001"
    assert f"{source}:2: {first}: id: id '{first}' is already used at {source}:1" in out
    assert (
        f"{source}:3: {CORE[4]['id']}: id: id '{CORE[4]['id']}' is already used at data/eval/probes.jsonl:5"
        in out
    )


def test_a_twin_is_refused_unless_allowed(small):
    # Same prompt as a probe of the set, ignoring case and whitespace; and a twin inside the file.
    twin_of_set = fresh(1, prompt="  every DAY maria ___   at the office.")
    rows = [twin_of_set, fresh(2), fresh(3, prompt="Yesterday after LESSON 2 I ___ home.")]
    source = write_csv(small / "twins.csv", rows)
    before = snapshot(small)
    code, out = run(small, "probes", "import", str(source))
    assert code == 2 and snapshot(small) == before
    assert f"{source}:2: new-en-walk-past-1sg-001: prompt: the prompt repeats probe {CORE[0]['id']}'s" in out
    assert (
        f"{source}:4: new-en-walk-past-1sg-003: prompt: the prompt repeats probe new-en-walk-past-1sg-002's"
        in out
    )
    assert "rows 2, 4" in out

    code, out = run(small, "probes", "import", str(source), "--allow-twins")
    assert code == 0, out
    assert "accepted with --allow-twins: 2 twin(s)" in out
    added = (small / EVAL / "probes.jsonl").read_bytes()
    assert added.startswith(before["probes.jsonl"])
    assert [json.loads(x)["id"] for x in added[len(before["probes.jsonl"]) :].splitlines()] == [
        r["id"] for r in rows
    ]
    code, doc = validate(small)
    assert code == 0 and {w["check"] for w in doc["warnings"]} == {"twin"}


def test_import_routes_by_category_appends_and_reseals_a_new_version(small):
    adv = probe(
        "new-adv-eat-past-3sg-001", "en", "eat", "irregular", "past_simple", "3sg",
        "Last night the cat ___ the fish.", ["eated", "ate"], "ate", "adversarial", reason_code="PAST-IRREG",
    )  # fmt: skip
    source = write_csv(small / "new.csv", [fresh(1), adv, fresh(2)])
    before = snapshot(small)
    code, out = run(small, "probes", "import", str(source))
    assert code == 0, out
    assert "2 into data/eval/probes.jsonl (lines 9-10; from rows 2, 4)" in out
    assert "1 into data/eval/adversarial.jsonl (line 4; from row 3)" in out
    assert "version 0.1.0 -> 0.1.1 (patch)" in out
    core = (small / EVAL / "probes.jsonl").read_bytes()
    assert core == before["probes.jsonl"] + dump_jsonl(
        [Probe.from_record(fresh(1)).to_record(), Probe.from_record(fresh(2)).to_record()]
    )
    assert (small / EVAL / "adversarial.jsonl").read_bytes() == before["adversarial.jsonl"] + dump_jsonl(
        [adv]
    )
    m = manifest(small)
    assert m["version"] == "0.1.1" and {fresh(1)["id"], adv["id"]} <= set(m["lock"])
    code, doc = validate(small)
    assert code == 0 and doc["summary"]["version"] == "0.1.1", doc

    source = write_csv(small / "more.csv", [fresh(3)])
    code, out = run(small, "probes", "import", str(source), "--bump", "minor")
    assert code == 0 and "version 0.1.1 -> 0.2.0 (minor)" in out


def test_into_must_be_a_configured_file_and_agree_with_the_category(small, tmp_path):
    source = write_csv(tmp_path / "new.csv", [fresh(1)])
    before = snapshot(small)
    code, out = run(small, "probes", "import", str(source), "--into", str(small / EVAL / "adversarial.jsonl"))
    assert code == 2 and snapshot(small) == before
    assert "category: category is 'core' but data/eval/adversarial.jsonl holds adversarial probes" in out
    code, out = run(small, "probes", "import", str(source), "--into", str(tmp_path / "other.jsonl"))
    assert code == 2 and "not a probe file of the configuration" in out


def test_import_refuses_an_unknown_format_and_a_missing_file(small, tmp_path):
    (tmp_path / "probes.xlsx").write_bytes(b"PK\x03\x04")
    code, out = run(small, "probes", "import", str(tmp_path / "probes.xlsx"))
    assert code == 2 and "cannot tell the format" in out and "CSV UTF-8" in out
    code, out = run(small, "probes", "import", str(tmp_path / "nope.csv"))
    assert code == 2 and "file not found" in out


def test_a_spreadsheet_csv_with_bom_crlf_upper_case_booleans_and_empty_rows_imports(small):
    rec = fresh(1)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    dep = fresh(2, deprecated=True)
    for r in (rec, dep):
        writer.writerow(["TRUE" if c == "deprecated" and r.get(c) else cell(r.get(c)) for c in COLUMNS])
    writer.writerow([""] * len(COLUMNS))
    source = small / "sheet.csv"
    source.write_bytes(b"\xef\xbb\xbf" + buf.getvalue().encode("utf-8"))
    code, out = run(small, "probes", "import", str(source))
    assert code == 0, out
    tail = (small / EVAL / "probes.jsonl").read_bytes().splitlines()[-2:]
    assert [json.loads(x) for x in tail] == [rec, dep]


# --- export and the round trip ----------------------------------------------------------------


def test_cell_escaping_adds_one_quote_and_import_removes_exactly_one():
    for text in ("=1+1", "+1", "-x", "@x", "'quoted", "\tTab", "\rCR"):
        assert escape_cell(text) == "'" + text
        assert unescape_cell(escape_cell(text)) == text
    assert escape_cell("plain") == "plain" and unescape_cell("plain") == "plain"
    assert unescape_cell("''quoted") == "'quoted"  # exactly one removed
    assert unescape_cell("'hello") == "'hello"  # hand-written: export would not have escaped it


FORMULAS = [
    (
        '=HYPERLINK("http://example.com/x?a=1","click") I ___ home.',
        "=SUM(A1:A9) is text here, not a formula.",
    ),
    ("+1 day later I ___ home.", "@mention in an explanation."),
    ("-x marks the spot where I ___ home.", "-- a dash first."),
    ("@x: then I ___ home.", "+ a plus first."),
    ("'quoted' is how I ___ home.", "'single quotes' first."),
    # (no tab or line break: control characters are refused in every text field)
    ("=1+1, then I ___ home.", 'Comma, quote " and ; inside.'),
]


def test_csv_formula_escaping_round_trips(small, tmp_path):
    extra = [
        fresh(100 + i, prompt=prompt, explanation=explanation)
        for i, (prompt, explanation) in enumerate(FORMULAS)
    ]
    extra.append(fresh(200, prompt="Ayer a las tres I ___ home, señor.", deprecated=True, source="hand"))
    with (small / EVAL / "probes.jsonl").open("ab") as fh:  # in the spelling evalgate writes
        fh.write(dump_jsonl([Probe.from_record(r).to_record() for r in extra]))
    original = snapshot(small)
    out_csv = tmp_path / "set.csv"
    code, out = run(small, "probes", "export", "--format", "csv", "--output", str(out_csv))
    assert code == 0 and f"to {out_csv}" in out
    data = out_csv.read_bytes()
    table = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    assert table[0] == list(COLUMNS)
    by_id = {row[0]: dict(zip(COLUMNS, row, strict=True)) for row in table[1:]}
    for rec in extra[:-1]:
        row = by_id[rec["id"]]
        assert row["prompt"] == "'" + rec["prompt"]  # a spreadsheet shows it, never runs it
        assert row["explanation"] == (
            "'" + rec["explanation"] if rec["explanation"][0] in "=@-+'" else rec["explanation"]
        )
        assert row["candidates"] == '["walk", "walked", "walks"]'
    assert by_id[extra[-1]["id"]]["deprecated"] == "true"

    target = empty_like(small, tmp_path / "empty")
    code, out = run(target, "probes", "import", str(out_csv))
    assert code == 0, out
    after = snapshot(target)
    assert after["probes.jsonl"] == original["probes.jsonl"]
    assert after["adversarial.jsonl"] == original["adversarial.jsonl"]
    again = tmp_path / "again.csv"
    assert run(target, "probes", "export", "--format", "csv", "-o", str(again))[0] == 0
    assert again.read_bytes() == data


@pytest.mark.integration
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_import_export_of_the_shipped_set_is_byte_identical(shipped, tmp_path, fmt):
    first = tmp_path / f"export.{fmt}"
    code, out = run(shipped, "probes", "export", "--format", fmt, "--output", str(first))
    assert code == 0, out
    names = load_config(shipped / "evalgate.yml").probes  # every probe file, in the configured order
    target = empty_like(shipped, tmp_path / "empty")
    assert not any((target / name).exists() for name in names)
    code, out = run(target, "probes", "import", str(first))
    assert code == 0, out
    assert "version 0.1.0 (first seal)" in out
    for name in names:
        assert (target / name).read_bytes() == (shipped / name).read_bytes(), name
    second = tmp_path / f"again.{fmt}"
    assert run(target, "probes", "export", "--format", fmt, "--output", str(second))[0] == 0
    assert second.read_bytes() == first.read_bytes()
    if fmt == "jsonl":  # the export is the probe files, in order
        assert first.read_bytes() == b"".join((shipped / name).read_bytes() for name in names)
    assert validate(target)[0] == 0


def test_export_to_stdout_and_its_refusals(small, capsys):
    code, out = run(small, "probes", "export", "--format", "jsonl")
    assert code == 0
    assert out.startswith(dump_jsonl(CORE + ADVERSARIAL).decode("utf-8"))
    assert out.endswith("as JSONL\n")  # the summary (stderr) after the data

    with (small / EVAL / "probes.jsonl").open("ab") as fh:
        fh.write(dump_jsonl([fresh(1, explanation="")]))
    code, out = run(small, "probes", "export", "--format", "csv")
    assert code == 2 and "field 'explanation' is an empty string" in out and "--format jsonl" in out
    with (small / EVAL / "probes.jsonl").open("ab") as fh:
        fh.write(b'{"id": "broken", "prompt": \n')
    code, out = run(small, "probes", "export", "--format", "jsonl")
    assert code == 2 and "data/eval/probes.jsonl:10" in out and "[jsonl-syntax]" in out


# --- deprecate ------------------------------------------------------------------------------------


@pytest.mark.integration
def test_deprecate_with_replacement_keeps_the_old_probe_and_reseals(shipped, tmp_path):
    assert run(shipped, "probes", "seal")[0] == 0
    path = shipped / EVAL / "probes.jsonl"
    before = path.read_bytes().split(b"\n")
    old = json.loads(before[4])
    old_hash = manifest(shipped)["lock"][old["id"]]
    # Fix a distractor: same prompt (so no new leak), new candidates, a new id.
    new = {**old, "id": next_id(old["id"], set()), "candidates": [*old["candidates"][:2], "zzz"]}
    if new["expected"] not in new["candidates"]:
        new["candidates"][0] = new["expected"]
    replacement = tmp_path / "replacement.json"
    replacement.write_text(json.dumps(new, indent=2), encoding="utf-8")

    code, out = run(shipped, "probes", "deprecate", old["id"], "--replacement", str(replacement))
    assert code == 0, out
    after = path.read_bytes().split(b"\n")
    assert after[:4] == before[:4] and after[5:-2] == before[5:-1]  # every other line untouched
    assert json.loads(after[4]) == {**old, "deprecated": True}
    assert after[4] == before[4][:-1] + b', "deprecated": true}'
    assert json.loads(after[-2]) == Probe.from_record(new).to_record() and after[-1] == b""
    assert f"appended its replacement {new['id']} at data/eval/probes.jsonl:{len(before)}" in out
    m = manifest(shipped)
    assert "version 0.1.0 -> 0.1.1" in out and m["version"] == "0.1.1"
    assert m["lock"][old["id"]] == old_hash and new["id"] in m["lock"]
    code, doc = validate(shipped)
    assert code == 0, doc
    assert doc["summary"]["deprecated"] == 1


@pytest.mark.integration
def test_deprecate_without_replacement_and_its_refusals(small, tmp_path):
    target = CORE[1]["id"]
    before = snapshot(small)
    reuse = tmp_path / "reuse.jsonl"
    reuse.write_bytes(dump_jsonl([{**CORE[1], "candidates": ["go", "went"]}]))
    code, out = run(small, "probes", "deprecate", target, "--replacement", str(reuse))
    assert code == 2 and snapshot(small) == before
    assert "reuses the id" in out and f"e.g. {target[:-3]}002" in out and "[duplicate-id]" not in out
    taken = tmp_path / "taken.jsonl"
    taken.write_bytes(dump_jsonl([{**CORE[1], "id": CORE[0]["id"], "prompt": "Today I ___ away."}]))
    code, out = run(small, "probes", "deprecate", target, "--replacement", str(taken))
    assert code == 2 and snapshot(small) == before and "already used at data/eval/probes.jsonl:1" in out
    two = tmp_path / "two.jsonl"
    two.write_bytes(dump_jsonl([fresh(1), fresh(2)]))
    code, out = run(small, "probes", "deprecate", target, "--replacement", str(two))
    assert code == 2 and snapshot(small) == before and "a replacement is exactly one" in out
    code, out = run(small, "probes", "deprecate", "en-go-past-1sg-01")
    assert code == 2 and f"did you mean {target}" in out

    code, out = run(small, "probes", "deprecate", target)
    assert code == 0, out
    assert "version 0.1.0 -> 0.1.1" in out
    lines = (small / EVAL / "probes.jsonl").read_bytes().split(b"\n")
    assert lines[1] == json.dumps({**CORE[1], "deprecated": True}, ensure_ascii=False).encode()
    assert (
        lines[:1] + lines[2:]
        == before["probes.jsonl"].split(b"\n")[:1] + before["probes.jsonl"].split(b"\n")[2:]
    )
    assert validate(small)[0] == 0
    code, out = run(small, "probes", "deprecate", target)
    assert code == 2 and "already deprecated" in out


# --- pure helpers -----------------------------------------------------------------------------


def test_deprecated_line_keeps_the_spelling_and_the_line_ending():
    rec = {"id": "a-1", "prompt": "x ___"}
    assert deprecated_line('{"id": "a-1", "prompt": "x ___"}', rec) == (
        '{"id": "a-1", "prompt": "x ___", "deprecated": true}'
    )
    assert deprecated_line('{"id":"a-1","prompt":"x ___"}  \r', rec) == (
        '{"id":"a-1","prompt":"x ___", "deprecated": true}  \r'
    )
    assert deprecated_line('{"id": "a-1", "deprecated": false}', {"id": "a-1", "deprecated": False}) == (
        '{"id": "a-1", "deprecated": true}'
    )


def test_default_destinations_follow_category_then_kind_in_the_file_name():
    files = ["data/eval/probes.jsonl", "data/eval/adversarial.jsonl", "data/eval/ordinal.jsonl"]
    assert default_destinations(files) == {
        ("core", "form"): "data/eval/probes.jsonl",
        ("core", "ordinal"): "data/eval/ordinal.jsonl",
        ("adversarial", "form"): "data/eval/adversarial.jsonl",
        ("adversarial", "ordinal"): "data/eval/adversarial.jsonl",
    }
    assert default_destinations(["a/ordinal.jsonl"]) == {
        ("core", "form"): "a/ordinal.jsonl",
        ("core", "ordinal"): "a/ordinal.jsonl",
    }


def test_next_id_counts_up_past_taken_ids():
    assert next_id("probe-en-go-001", {"probe-en-go-002"}) == "probe-en-go-003"
    assert next_id("custom", set()) == "custom-002"


def test_parse_csv_reports_broken_quoting_and_extra_cells_on_their_rows():
    header = ",".join(COLUMNS)
    rows, found = parse_csv(f'{header}\nx,"unclosed\n'.encode(), "f.csv")
    assert rows == [] and found[0].check == "csv-syntax"
    rows, found = parse_csv(f"{header}\n{'a,' * len(COLUMNS)}extra\n".encode(), "f.csv")
    assert rows == [] and (found[0].check, found[0].line) == ("csv-extra-cells", 2)
    rows, found = parse_csv(b"\xff\xfeid\n", "f.csv")
    assert found[0].check == "csv-encoding"


def test_commands_use_the_evalgate_yml_where_they_run_and_never_change_the_bundled_demo(
    small, tmp_path, monkeypatch
):
    write_csv(small / "new.csv", [fresh(1)])
    monkeypatch.chdir(small)
    code, out = cli_merged("probes", "import", "new.csv")
    assert code == 0, out
    assert "1 into data/eval/probes.jsonl (line 9; from row 2)" in out
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    write_csv(elsewhere / "new.csv", [fresh(2)])
    for args in (["probes", "import", "new.csv"], ["probes", "deprecate", CORE[0]["id"]]):
        code, out = cli_merged(*args)
        assert code == 2 and "bundled demo set" in out and "--config" in out
