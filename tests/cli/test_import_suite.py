"""`evalgate probes import FILE --suite NAME [--from mmlu|arc|hellaswag] [--map MAPPING]` into a suite of
evalgate.yml, `probes seal --suite`, and what `validate` says of a multiple-choice suite: through
the real command line, on real files in a folder of their own (docs/suites.md)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.probeset_factory import EVAL, dump_jsonl, probe, verb_forms_suite, write_base

from evalgate.cli import IMPORT_PRESETS
from evalgate.probeset.import_map import PRESETS

SUBJECTS = ("astronomy", "biology", "chemistry", "geology", "history")


def suite_repo(root: Path, suites: dict[str, Any] | None = None, min_per_value: int = 1) -> Path:
    """A folder with evalgate.yml declaring `suites` (default: one multiple-choice suite `quiz`
    sliced by subject, with an empty probe file and a small training file)."""
    (root / "quiz").mkdir(parents=True, exist_ok=True)
    (root / "quiz/items.jsonl").write_bytes(b"")
    (root / "quiz/train.jsonl").write_bytes(
        dump_jsonl([{"text": "The moon goes around the earth once a month."}])
    )
    if suites is None:
        suites = {
            "quiz": {
                "kind": "multiple-choice",
                "probes": ["quiz/items.jsonl"],
                "slices": ["subject"],
                "train": ["quiz/train.jsonl"],
                "coverage": {"min_per_value": min_per_value},
            }
        }
    config = {"suites": suites, "test": None, "baseline": "none"}
    (root / "evalgate.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return root


def mmlu_rows(n: int, start: int = 0) -> list[dict[str, Any]]:
    """Rows as `datasets` exports cais/mmlu: question, subject, choices, answer (a 0-based index)."""
    return [
        {
            "question": f"In {SUBJECTS[i % len(SUBJECTS)]}, which choice answers question number {i}?",
            "subject": SUBJECTS[i % len(SUBJECTS)],
            "choices": [f"first {i}", f"second {i}", f"third {i}", f"fourth {i}"],
            "answer": i % 4,
        }
        for i in range(start, start + n)
    ]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_bytes(dump_jsonl(rows))
    return path


def items(root: Path, name: str = "quiz/items.jsonl") -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / name).read_text(encoding="utf-8").splitlines()]


def every_byte(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def manifest(root: Path, name: str = "quiz/MANIFEST.json") -> dict[str, Any]:
    return json.loads((root / name).read_text(encoding="utf-8"))


def test_the_cli_offers_every_preset_the_import_maps_know():
    assert tuple(PRESETS) == IMPORT_PRESETS


# --- a benchmark's export into a multiple-choice suite ----------------------------------------


@pytest.mark.integration
def test_an_mmlu_export_with_a_subject_column_imports_into_a_sliced_suite_and_seals(tmp_path, cli):
    root = suite_repo(tmp_path / "repo", min_per_value=50)
    source = write_jsonl(tmp_path / "mmlu.jsonl", mmlu_rows(300))
    config = root / "evalgate.yml"

    done = cli("probes", "import", source, "--suite", "quiz", "--from", "mmlu", "--config", config)
    assert done.code == 0, done.out + done.err
    assert "imported 300 item(s) from" in done.out and "into suite quiz" in done.out
    assert "300 into quiz/items.jsonl (lines 1-300; from rows 1-300)" in done.out
    assert "sealed quiz/MANIFEST.json: version 0.1.0 (first seal); 300 probes, 300 ids locked" in done.out

    written = items(root)
    assert len(written) == 300
    assert written[7] == {
        "id": "quiz-mmlu-00008",
        "prompt": "In chemistry, which choice answers question number 7?",
        "candidates": ["first 7", "second 7", "third 7", "fourth 7"],
        "expected": "fourth 7",
        "slices": {"subject": "chemistry"},
    }
    sealed = manifest(root)
    assert sealed["version"] == "0.1.0" and len(sealed["lock"]) == 300
    assert list(sealed["files"]) == ["items.jsonl"]

    checked = cli("validate", "--config", config)
    assert checked.code == 0, checked.out
    assert "items:    300 (300 choice, 0 ordinal, 0 deprecated) in 1 file(s)" in checked.out
    assert "version:  0.1.0" in checked.out
    report = json.loads(cli("validate", "--format", "json", "--config", config).out)
    assert {r["cell"]: r["n"] for r in report["summary"]["coverage"]} == dict.fromkeys(SUBJECTS, 60)


def test_importing_the_same_export_again_adds_nothing_and_new_rows_seal_a_new_version(tmp_path, cli):
    root = suite_repo(tmp_path / "repo")
    config = root / "evalgate.yml"
    first = write_jsonl(tmp_path / "mmlu.jsonl", mmlu_rows(20))
    assert cli("probes", "import", first, "--from", "mmlu", "--config", config).code == 0
    before = every_byte(root)

    again = cli("probes", "import", first, "--from", "mmlu", "--config", config)
    assert again.code == 0 and "skipped 20 row(s) identical to items already in the suite" in again.out
    assert every_byte(root) == before

    more = [{**r, "id": f"extra-{n}"} for n, r in enumerate(mmlu_rows(10, start=100))]
    grown = cli("probes", "import", write_jsonl(tmp_path / "more.jsonl", more), "--from", "mmlu",
                "--bump", "minor", "--config", config)  # fmt: skip
    assert grown.code == 0, grown.out
    assert "version 0.1.0 -> 0.2.0 (minor)" in grown.out
    assert [r["id"] for r in items(root)][-10:] == [f"extra-{n}" for n in range(10)]


def test_a_bad_row_among_good_ones_changes_no_byte_and_names_every_bad_row(tmp_path, cli):
    root = suite_repo(tmp_path / "repo")
    config = root / "evalgate.yml"
    assert cli("probes", "import", write_jsonl(tmp_path / "seed.jsonl", mmlu_rows(10)), "--from", "mmlu",
               "--config", config).code == 0  # fmt: skip
    rows = [{**r, "id": f"new-{n:03d}"} for n, r in enumerate(mmlu_rows(200, start=1000))]
    rows[56]["answer"] = 9  # row 57: no such choice
    rows[120]["choices"] = ["same", "same", "other", "more"]  # row 121: two equal choices
    rows[150]["subject"] = "astro/physics"  # row 151: a slice value cannot hold '/'
    source = write_jsonl(tmp_path / "mmlu.jsonl", rows)
    before = every_byte(root)

    refused = cli("probes", "import", source, "--suite", "quiz", "--from", "mmlu", "--config", config)
    assert refused.code == 2
    assert every_byte(root) == before
    out = refused.out
    assert "refused; nothing was added" in out
    assert "3 of 200 row(s) of" in out and "rows 57, 121, 151" in out
    assert f"{source}:57: new-056: answer: index 9 but only 4 choices" in out
    assert f"{source}:121: new-120: choices: choices 1 and 2 are both 'same'" in out
    assert f"{source}:151: new-150: slices.subject:" in out
    assert "nothing was written." in out


def test_an_item_whose_filled_text_is_in_the_training_file_is_refused_naming_its_file_and_line(tmp_path, cli):
    root = suite_repo(tmp_path / "repo")
    with (root / "quiz/train.jsonl").open("ab") as fh:
        fh.write(dump_jsonl([{"text": "Which planet is called the red planet? Mars"}]))
    rows = mmlu_rows(5)
    rows[3] = {"question": "Which planet is called the red planet?", "subject": "astronomy",
               "choices": ["Venus", "Mars", "Jupiter"], "answer": "Mars"}  # fmt: skip
    source = write_jsonl(tmp_path / "mmlu.jsonl", rows)
    before = every_byte(root)

    refused = cli("probes", "import", source, "--from", "mmlu", "--config", root / "evalgate.yml")
    assert refused.code == 2 and every_byte(root) == before
    assert f"{source}:4: quiz-mmlu-00004: prompt:" in refused.out
    assert "training sentence quiz/train.jsonl:2" in refused.out
    assert "[leak-exact]" in refused.out


# --- every layout: the presets, --map, and the three spellings of an answer -------------------


def test_arc_exports_import_in_both_layouts_with_their_own_labels(tmp_path, cli):
    suites = {"arc": {"kind": "multiple-choice", "probes": ["arc/items.jsonl"]}}
    root = suite_repo(tmp_path / "repo", suites)
    (root / "arc").mkdir()
    (root / "arc/items.jsonl").write_bytes(b"")
    hf = {"id": "Mercury_7175875", "question": "Which gas do plants take in from the air?",
          "choices": {"text": ["oxygen", "carbon dioxide", "helium", "argon"], "label": ["A", "B", "C", "D"]},
          "answerKey": "B"}  # fmt: skip
    choices = [{"text": "ruler", "label": "1"}, {"text": "thermometer", "label": "2"},
               {"text": "balance", "label": "3"}]  # fmt: skip
    stem = "Which tool measures the mass of a rock?"
    original = {
        "id": "NYSEDREGENTS_2015_4_27",
        "answerKey": "3",
        "question": {"stem": stem, "choices": choices},
    }
    source = write_jsonl(tmp_path / "arc.jsonl", [hf, original])

    config = root / "evalgate.yml"
    done = cli("probes", "import", source, "--suite", "arc", "--from", "arc", "--config", config)
    assert done.code == 0, done.out + done.err
    assert [(r["id"], r["expected"], r["slices"]) for r in items(root, "arc/items.jsonl")] == [
        ("Mercury_7175875", "carbon dioxide", {}),
        ("NYSEDREGENTS_2015_4_27", "balance", {}),
    ]


def test_a_hellaswag_export_imports_its_context_and_endings(tmp_path, cli):
    suites = {
        "hs": {"kind": "multiple-choice", "probes": ["hs/items.jsonl"], "slices": ["activity"]},
    }
    root = suite_repo(tmp_path / "repo", suites)
    (root / "hs").mkdir()
    (root / "hs/items.jsonl").write_bytes(b"")
    row = {"ind": 4, "activity_label": "Removing ice from car",
           "ctx_a": "Then, the man writes over the snow.", "ctx_b": "then",
           "ctx": "Then, the man writes over the snow. then",
           "endings": [" the man sprays the window.", " the man stops.", " he leaves.", " it snows."],
           "label": "2", "split": "val"}  # fmt: skip
    source = write_jsonl(tmp_path / "hellaswag.jsonl", [row])

    done = cli("probes", "import", source, "--from", "hellaswag", "--config", root / "evalgate.yml")
    assert done.code == 0, done.out + done.err
    assert items(root, "hs/items.jsonl") == [
        {
            "id": "hs-hellaswag-00001",
            "prompt": "Then, the man writes over the snow. then",
            "candidates": ["the man sprays the window.", "the man stops.", "he leaves.", "it snows."],
            "expected": "he leaves.",
            "slices": {"activity": "Removing ice from car"},
        }
    ]


def test_map_names_the_columns_of_a_csv_and_answers_read_as_letter_index_or_text(tmp_path, cli):
    root = suite_repo(tmp_path / "repo")
    source = tmp_path / "sheet.csv"
    with source.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["qid", "text", "options", "gold", "area", "why"])
        writer.writerow(["k-1", "Which body orbits the earth?", '["the sun", "the moon", "mars"]', "B",
                         "astronomy", "It is our satellite."])  # fmt: skip
        writer.writerow(["k-2", "Which is a noble gas?", '["neon", "iron", "salt"]', "0", "chemistry", ""])
        writer.writerow(["k-3", "Which cell makes energy?", '["nucleus", "mitochondrion"]', "mitochondrion",
                         "biology", ""])  # fmt: skip
    spec = "qid=id,text=prompt,options=candidates,gold=expected,area=slices.subject,why=explanation"

    done = cli("probes", "import", source, "--map", spec, "--config", root / "evalgate.yml")
    assert done.code == 0, done.out + done.err
    got = items(root)
    assert [(r["id"], r["expected"]) for r in got] == [
        ("k-1", "the moon"),  # a letter
        ("k-2", "neon"),  # a 0-based index
        ("k-3", "mitochondrion"),  # the choice's text
    ]
    assert got[0]["explanation"] == "It is our satellite." and "explanation" not in got[1]
    assert list(got[0]) == ["id", "prompt", "candidates", "expected", "slices", "explanation"]


def test_map_pieces_that_do_not_fit_the_suite_are_refused_before_any_row(tmp_path, cli):
    root = suite_repo(tmp_path / "repo")
    source = write_jsonl(tmp_path / "rows.jsonl", [{"q": "Why?", "c": ["a", "b"], "a": 0, "t": "x"}])
    bad = cli("probes", "import", source, "--map", "q=prompt,c=candidates,a=expected,t=slices.topic",
              "--config", root / "evalgate.yml")  # fmt: skip
    assert bad.code == 2
    assert "suite declares no dimension 'topic' (it declares: subject)" in bad.out
    assert "slices.subject: the suite declares this dimension, but no column maps to it" in bad.out
    typo = cli("probes", "import", source, "--map", "q=promt", "--config", root / "evalgate.yml")
    assert typo.code == 2 and "unknown target 'promt' (did you mean 'prompt'?)" in typo.err


def test_items_in_the_item_format_import_without_a_mapping_and_a_csv_needs_one(tmp_path, cli):
    root = suite_repo(tmp_path / "repo")
    config = root / "evalgate.yml"
    good = {"id": "q-1", "prompt": "Which is the largest planet?", "candidates": ["Jupiter", "Mars"],
            "expected": "Jupiter", "slices": {"subject": "astronomy"}, "source": "hand"}  # fmt: skip
    off = {**good, "id": "q-2", "slices": {"topic": "space"}}
    source = write_jsonl(tmp_path / "items.jsonl", [good, off])

    refused = cli("probes", "import", source, "--config", config)
    assert refused.code == 2 and (root / "quiz/items.jsonl").read_bytes() == b""
    assert f"{source}:2: q-2: slices.subject: missing the suite's dimension 'subject'" in refused.out

    done = cli("probes", "import", write_jsonl(tmp_path / "one.jsonl", [good]), "--config", config)
    assert done.code == 0, done.out
    assert items(root) == [good]
    sheet = tmp_path / "items.csv"
    sheet.write_text("id,prompt\n", encoding="utf-8")
    assert "--from mmlu|arc|hellaswag, or --map" in cli("probes", "import", sheet, "--config", config).err


# --- which suite ---------------------------------------------------------------------------------


def test_a_suite_that_does_not_exist_is_refused_listing_the_suites(tmp_path, cli):
    root = suite_repo(tmp_path / "repo")
    source = write_jsonl(tmp_path / "mmlu.jsonl", mmlu_rows(3))
    bad = cli("probes", "import", source, "--suite", "quizz", "--config", root / "evalgate.yml")
    assert bad.code == 2
    assert "--suite quizz: no such suite (suites: quiz)" in bad.err


def test_from_and_map_need_a_multiple_choice_suite(tmp_path, cli):
    source = write_jsonl(tmp_path / "mmlu.jsonl", mmlu_rows(3))
    plain = tmp_path / "plain"
    write_base(plain)
    before = every_byte(plain)
    bad = cli("probes", "import", source, "--from", "mmlu", "--config", plain / "evalgate.yml")
    assert bad.code == 2 and every_byte(plain) == before
    assert "the configuration declares no multiple-choice suite" in bad.err
    assert "evalgate init --suite NAME --items FILE" in bad.err

    mixed = mixed_repo(tmp_path / "mixed")
    bad = cli("probes", "import", source, "--suite", "verbs", "--map", "question=prompt",
              "--config", mixed / "evalgate.yml")  # fmt: skip
    assert bad.code == 2 and "suite verbs is a verb-forms suite" in bad.err
    assert "quiz (multiple-choice)" in bad.err
    bad = cli("probes", "import", source, "--from", "mmlu", "--config", mixed / "evalgate.yml")
    assert bad.code == 2 and "several suites" in bad.err and "--suite NAME (suites: verbs, quiz)" in bad.err


def mixed_repo(root: Path) -> Path:
    """The small verb-form set of tests/helpers/probeset_factory.py as suite `verbs`, beside `quiz`."""
    write_base(root)
    verbs = verb_forms_suite()
    quiz = {"kind": "multiple-choice", "probes": ["quiz/items.jsonl"], "slices": ["subject"]}
    return suite_repo(root, {"verbs": verbs, "quiz": quiz})


def test_a_verb_forms_suite_takes_probes_as_the_plain_import_does(tmp_path, cli):
    root = mixed_repo(tmp_path / "repo")
    new = probe("new-en-walk-past-1sg-001", "en", "walk", "regular", "past_simple", "1sg",
                "Yesterday after school I ___ home.", ["walk", "walked", "walks"], "walked")  # fmt: skip
    source = write_jsonl(tmp_path / "new.jsonl", [new])

    done = cli("probes", "import", source, "--suite", "verbs", "--config", root / "evalgate.yml")
    assert done.code == 0, done.out + done.err
    assert "1 into data/eval/probes.jsonl (line 9; from row 1)" in done.out
    assert "sealed data/eval/MANIFEST.json: version 0.1.0 (first seal)" in done.out
    assert json.loads((root / EVAL / "probes.jsonl").read_text(encoding="utf-8").splitlines()[-1]) == new


def test_ids_are_unique_across_every_suite(tmp_path, cli):
    root = mixed_repo(tmp_path / "repo")
    taken = {
        "id": "en-go-past-1sg-001",
        "prompt": "Which planet has rings?",
        "candidates": ["Saturn", "Mars"],
        "expected": "Saturn",
        "slices": {"subject": "astronomy"},
    }
    before = every_byte(root)
    bad = cli("probes", "import", write_jsonl(tmp_path / "i.jsonl", [taken]), "--suite", "quiz",
              "--config", root / "evalgate.yml")  # fmt: skip
    assert bad.code == 2 and every_byte(root) == before
    assert "id 'en-go-past-1sg-001' is already used at data/eval/probes.jsonl:2 (suite verbs)" in bad.out

    clash = probe("QUIZ-1", "en", "walk", "regular", "past_simple", "1sg",
                  "Yesterday after school I ___ home.", ["walk", "walked", "walks"], "walked")  # fmt: skip
    ok = {**taken, "id": "quiz-1"}
    assert cli("probes", "import", write_jsonl(tmp_path / "ok.jsonl", [ok]), "--suite", "quiz",
               "--config", root / "evalgate.yml").code == 0  # fmt: skip
    bad = cli("probes", "import", write_jsonl(tmp_path / "v.jsonl", [clash]), "--suite", "verbs",
              "--config", root / "evalgate.yml")  # fmt: skip
    assert bad.code == 2 and "quiz/items.jsonl:1" in bad.out


# --- seal and validate on suites ----------------------------------------------------------------


def test_seal_seals_every_suite_or_the_one_named(tmp_path, cli):
    root = mixed_repo(tmp_path / "repo")
    config = root / "evalgate.yml"
    write_jsonl(root / "quiz/items.jsonl", [
        {"id": "q-1", "prompt": "Which planet has rings?", "candidates": ["Saturn", "Mars"],
         "expected": "Saturn", "slices": {"subject": "astronomy"}},
    ])  # fmt: skip

    one = cli("probes", "seal", "--suite", "quiz", "--config", config)
    assert one.code == 0, one.out
    assert "sealed quiz/MANIFEST.json: version 0.1.0 (first seal); 1 probes in 1 file(s)" in one.out
    assert not (root / EVAL / "MANIFEST.json").exists()

    every = cli("probes", "seal", "--config", config)
    assert every.code == 0, every.out
    assert "quiz/MANIFEST.json is up to date (version 0.1.0)" in every.out
    assert "sealed data/eval/MANIFEST.json: version 0.1.0 (first seal); 11 probes" in every.out
    assert cli("validate", "--config", config).code == 0

    assert cli("probes", "seal", "--suite", "nope", "--config", config).code == 2
    partial = cli("probes", "seal", "--probes", root / EVAL / "probes.jsonl", "--config", config)
    assert partial.code == 2 and "every suite names its own files" in partial.err


def test_seal_refuses_every_suite_while_two_suites_share_an_id(tmp_path, cli):
    root = mixed_repo(tmp_path / "repo")
    write_jsonl(root / "quiz/items.jsonl", [
        {"id": "en-go-past-1sg-001", "prompt": "Which planet has rings?", "candidates": ["Saturn", "Mars"],
         "expected": "Saturn", "slices": {"subject": "astronomy"}},
    ])  # fmt: skip
    refused = cli("probes", "seal", "--config", root / "evalgate.yml")
    assert refused.code == 2 and "nothing was sealed" in refused.out
    assert "ids are unique across every suite" in refused.out
    assert not (root / "quiz/MANIFEST.json").exists() and not (root / EVAL / "MANIFEST.json").exists()


def test_validate_speaks_of_items_and_of_the_leak_detectors_that_ran(tmp_path, cli):
    root = suite_repo(tmp_path / "repo", min_per_value=2)
    config = root / "evalgate.yml"
    assert cli("probes", "import", write_jsonl(tmp_path / "m.jsonl", mmlu_rows(10)), "--from", "mmlu",
               "--config", config).code == 0  # fmt: skip
    out = cli("validate", "--config", config).out
    assert "  suite:    quiz (multiple-choice)\n  items:    10 (10 choice, 0 ordinal, 0 deprecated)" in out
    assert "leaks:    0 leaks (exact, 5-gram) against quiz/train.jsonl" in out
    assert "template" not in out and "probes:" not in out
    heading = "coverage of suite quiz (live items per slice value; the suite's `coverage.min_per_value` is 2)"
    assert heading in out
    doc = json.loads(cli("validate", "--format", "json", "--config", config).out)
    assert doc["summary"]["leak_detectors"] == ["exact", "ngram"]

    untrained = yaml.safe_load(config.read_text(encoding="utf-8"))
    del untrained["suites"]["quiz"]["train"]
    config.write_text(yaml.safe_dump(untrained), encoding="utf-8")
    out = cli("validate", "--config", config).out
    assert "leaks:    not checked: the suite names no training files (`train:`)" in out


def test_validate_lists_each_suite_of_several(tmp_path, cli):
    root = mixed_repo(tmp_path / "repo")
    write_jsonl(root / "quiz/items.jsonl", [
        {"id": "q-1", "prompt": "Which planet has rings?", "candidates": ["Saturn", "Mars"],
         "expected": "Saturn", "slices": {"subject": "astronomy"}},
    ])  # fmt: skip
    checked = cli("validate", "--config", root / "evalgate.yml")
    assert checked.code == 0, checked.out
    out = checked.out
    verbs = "  suite verbs (verb-forms):\n    probes:   11 (8 core, 3 adversarial, 0 ordinal, 0 deprecated)"
    assert verbs in out
    assert "leaks:    0 leaks (exact, template, 5-gram) against data/corpus/train.jsonl" in out
    assert "  suite quiz (multiple-choice):\n    items:    1 (1 choice, 0 ordinal, 0 deprecated)" in out
    assert "coverage of suite verbs (" in out and "coverage of suite quiz (" in out


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_validate_without_suites_reads_as_it_always_did(tmp_path, cli, fmt):
    root = tmp_path / "plain"
    write_base(root)
    out = cli("validate", "--format", fmt, "--config", root / "evalgate.yml").out
    if fmt == "text":
        assert "  probes:   11 (8 core, 3 adversarial, 0 ordinal, 0 deprecated) in 2 file(s)" in out
        assert "(exact, template, 5-gram) against data/corpus/train.jsonl, data/corpus/val.jsonl" in out
    else:
        assert json.loads(out)["summary"]["leak_detectors"] == ["exact", "template", "ngram"]


def test_a_json_array_row_is_shown_at_the_line_its_element_starts_on(tmp_path, cli):
    """Element 2 starts on line 13 of an indented array: once reported at `:2`."""
    root = suite_repo(tmp_path / "repo")
    rows = mmlu_rows(3)
    rows[1]["answer"] = 9
    source = tmp_path / "mmlu.json"
    source.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    start = source.read_text(encoding="utf-8").splitlines().index("  {", 2) + 1
    assert start == 13  # "[" and an element of eleven lines come first
    refused = cli(
        "probes", "import", source, "--suite", "quiz", "--from", "mmlu", "--config", root / "evalgate.yml"
    )
    assert refused.code == 2
    assert f"{source}:13: answer: element 2: " in refused.out
    assert "index 9 but only 4 choices" in refused.out
    assert "1 of 3 row(s) of" in refused.out and "row 2" in refused.out
    # all on one line: every element starts on line 1, so the element number tells them apart
    source.write_text(json.dumps(rows) + "\n", encoding="utf-8")
    refused = cli(
        "probes", "import", source, "--suite", "quiz", "--from", "mmlu", "--config", root / "evalgate.yml"
    )
    assert f"{source}:1: answer: element 2: " in refused.out


@pytest.mark.parametrize(
    ("name", "data", "flags"),
    [
        ("empty.jsonl", b"", ()),
        ("blank.jsonl", b"\n  \n\n", ()),
        ("bom.jsonl", b"\xef\xbb\xbf", ()),
        ("empty.jsonl", b"", ("--from", "mmlu")),
        ("blank.jsonl", b"\r\n\r\n", ("--from", "mmlu")),
        ("empty.csv", b"", ("--from", "mmlu")),
        ("header.csv", b"question,choices,answer,subject\r\n", ("--from", "mmlu")),
        ("header.csv", b"q,c,a,s\n", ("--map", "q=prompt,c=candidates,a=expected,s=slices.subject")),
    ],
)
def test_a_file_with_no_rows_changes_nothing_and_exits_0(tmp_path, monkeypatch, cli, name, data, flags):
    # docs/authoring.md: an export with no rows is no fault; nothing is written
    repo = suite_repo(tmp_path)
    monkeypatch.chdir(repo)
    write_jsonl(repo / "first.jsonl", mmlu_rows(5))
    assert cli("probes", "import", "first.jsonl", "--suite", "quiz", "--from", "mmlu").code == 0
    before = {p: p.read_bytes() for p in (repo / "quiz").iterdir()}
    (repo / name).write_bytes(data)
    got = cli("probes", "import", name, "--suite", "quiz", *flags)
    assert got.code == 0, got.out + got.err
    assert f"{name} holds no rows; nothing changed" in got.out
    assert {p: p.read_bytes() for p in (repo / "quiz").iterdir()} == before


@pytest.mark.parametrize(
    ("name", "answer", "said"),
    [
        ("big.jsonl", "9" * 5001, "answer: the number 999999999999…9999 has 5001 digits"),
        ("inf.jsonl", "1e400", "answer: the number 1e400 is beyond the range of a number"),
        ("neg.jsonl", "-1E+999", "answer: the number -1E+999 is beyond the range of a number"),
        ("big.json", "9" * 5001, "answer: the number 999999999999…9999 has 5001 digits"),
    ],
)
def test_a_number_no_field_can_mean_is_named_with_its_field_as_written(
    tmp_path, monkeypatch, cli, name, answer, said
):
    repo = suite_repo(tmp_path)
    monkeypatch.chdir(repo)
    row = '{"question": "Which river flows through Cairo?", "choices": ["Nile", "Amazon"], "answer": %s, '
    text = row % answer + '"subject": "geology"}'
    (repo / name).write_text(f"[{text}]" if name.endswith(".json") else text + "\n", encoding="utf-8")
    got = cli("probes", "import", name, "--suite", "quiz", "--from", "mmlu")
    assert got.code == 2, got.out + got.err
    assert said in got.out
    assert "Infinity" not in got.out and "set_int_max_str_digits" not in got.out
    assert (repo / "quiz" / "items.jsonl").read_bytes() == b""
