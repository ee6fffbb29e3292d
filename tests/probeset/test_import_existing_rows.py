"""`probes import` of a full export with new rows appended: the rows already in the set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.probeset_factory import EVAL, cli_merged, dump_jsonl, probe, write_base


def run(root: Path, *args: str) -> tuple[int, str]:
    return cli_merged(*args, "--config", str(root / "evalgate.yml"))


@pytest.fixture
def small(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write_base(root)
    assert run(root, "probes", "seal")[0] == 0
    return root


def _new(i: int, **fields) -> dict:
    rec = probe(
        f"new-en-walk-past-1sg-{i:03d}", "en", "walk", "regular", "past_simple", "1sg",
        f"Yesterday after lesson {i} I ___ home.", ["walk", "walked", "walks"], "walked",
    )  # fmt: skip
    rec.update(fields)
    return rec


@pytest.mark.integration
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_rows_identical_to_existing_probes_are_skipped_and_counted(small, tmp_path, fmt):
    export = tmp_path / f"all.{fmt}"
    code, out = run(small, "probes", "export", "--format", fmt, "--output", str(export))
    assert code == 0, out
    n_existing = len((small / EVAL / "probes.jsonl").read_bytes().splitlines()) + len(
        (small / EVAL / "adversarial.jsonl").read_bytes().splitlines()
    )
    if fmt == "jsonl":
        with export.open("ab") as fh:
            fh.write(dump_jsonl([_new(1), _new(2)]))
    else:
        import csv

        with export.open("a", newline="", encoding="utf-8") as fh:
            header = next(csv.reader(export.read_text(encoding="utf-8").splitlines()))
            writer = csv.writer(fh)
            for rec in (_new(1), _new(2)):
                writer.writerow(
                    [json.dumps(rec[c]) if isinstance(rec.get(c), list) else rec.get(c, "") for c in header]
                )
    code, out = run(small, "probes", "import", str(export))
    assert code == 0, out
    assert f"skipped {n_existing} row(s) identical to probes already in the set" in out
    assert "imported 2 probe(s)" in out
    assert run(small, "validate")[0] == 0
    # importing the same file again: everything is already there
    code, out = run(small, "probes", "import", str(export))
    assert code == 0 and "holds nothing new, nothing changed" in out


def test_a_changed_existing_row_is_refused_with_the_locks_hint(small, tmp_path):
    export = tmp_path / "all.jsonl"
    assert run(small, "probes", "export", "--format", "jsonl", "--output", str(export))[0] == 0
    lines = export.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    lines[0] = json.dumps({**first, "prompt": first["prompt"].replace("___", "often ___")})
    export.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = (small / EVAL / "probes.jsonl").read_bytes()
    code, out = run(small, "probes", "import", str(export))
    assert code == 2
    assert "importing this row would change that probe [duplicate-id]" in out and first["id"] in out
    assert "a sealed probe never changes" in out  # the lock's instruction, the same as validate's
    assert (small / EVAL / "probes.jsonl").read_bytes() == before


def test_the_twin_refusal_names_allow_twins(small, tmp_path):
    twin = _new(7, prompt="Every day Maria ___ at the office.", verb="work", candidates=["work", "works"],
                expected="works", tense="present_simple", person="3sg")  # fmt: skip
    path = tmp_path / "twin.jsonl"
    path.write_bytes(dump_jsonl([twin]))
    code, out = run(small, "probes", "import", str(path))
    assert code == 2 and "[twin]" in out and "--allow-twins" in out
