"""Rows of an exported benchmark (MMLU, ARC, HellaSwag, or any --map) become multiple-choice items."""

from __future__ import annotations

import json

import pytest

from evalgate.probeset.import_map import PRESETS, convert, parse_map, read_rows
from evalgate.types import Finding

FILE = "bench/test.jsonl"

MMLU_ROW = {
    "question": "Find the degree for the given field extension Q(sqrt(2), sqrt(3), sqrt(18)) over Q.",
    "subject": "abstract_algebra",
    "choices": ["0", "4", "2", "6"],
    "answer": 1,
}
MMLU_STATEMENTS = {
    "question": "Statement 1 | Every element of a group generates a cyclic subgroup of the group. "
    "Statement 2 | The symmetric group S_10 has 10 elements.",
    "subject": "abstract_algebra",
    "choices": ["True, True", "False, False", "True, False", "False, True"],
    "answer": 2,
}
ARC_HF = {
    "id": "Mercury_7175875",
    "question": "An astronomer observes that a planet rotates faster after a meteorite impact. "
    "Which is the most likely effect of this increase in rotation?",
    "choices": {
        "text": [
            "Planetary density will decrease.",
            "Planetary years will become longer.",
            "Planetary days will become shorter.",
            "Planetary gravity will become stronger.",
        ],
        "label": ["A", "B", "C", "D"],
    },
    "answerKey": "C",
}
ARC_NUMERIC = {
    "id": "NYSEDREGENTS_2015_4_8",
    "question": "Which object is the best conductor of electricity?",
    "choices": {
        "text": ["a wax crayon", "a plastic spoon", "a rubber eraser", "an iron nail"],
        "label": ["1", "2", "3", "4"],
    },
    "answerKey": "3",
}
ARC_ORIGINAL = {
    "id": "Mercury_SC_405487",
    "question": {
        "stem": "One year, the oak trees in a park began producing more acorns than usual. The next "
        "year, the population of chipmunks in the park also increased. Which best explains why "
        "there were more chipmunks the next year?",
        "choices": [
            {"text": "Shady areas increased.", "label": "A"},
            {"text": "Food sources increased.", "label": "B"},
            {"text": "Oxygen levels increased.", "label": "C"},
            {"text": "Available water increased.", "label": "D"},
        ],
    },
    "answerKey": "B",
}
HELLASWAG = {
    "ind": 4,
    "activity_label": "Removing ice from car",
    "ctx_a": "Then, the man writes over the snow covering the window of a car, and a woman wearing "
    "winter clothes smiles.",
    "ctx_b": "then",
    "ctx": "Then, the man writes over the snow covering the window of a car, and a woman wearing "
    "winter clothes smiles. then",
    "endings": [
        " , the man adds wax to the windshield and cuts it.",
        ", a person board a ski lift, while two men supporting the head of the person wearing "
        "winter clothes snow as the we girls sled. ",
        ", the man puts on a christmas coat, knitted with netting.",
        ", the man continues removing the snow on his car.\n",
    ],
    "source_id": "activitynet~v_-1IBHYS3L-Y",
    "split": "train",
    "split_type": "indomain",
    "label": "3",
}


def run(preset_or_map, *rows, dims=None, prefix="bench", start=1):
    mapping = PRESETS[preset_or_map] if isinstance(preset_or_map, str) else preset_or_map
    numbered = list(enumerate(rows, start=start))
    return convert(numbered, mapping, file=FILE, id_prefix=prefix, dims=dims)


def only(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, [f.message for f in findings]
    return findings[0]


# ---------------------------------------------------------------------------------------- presets


def test_an_mmlu_row_becomes_an_item_in_the_documented_field_order():
    records, findings = run("mmlu", MMLU_ROW)
    assert findings == []
    assert records == [
        {
            "id": "bench-00001",
            "prompt": MMLU_ROW["question"],
            "candidates": ["0", "4", "2", "6"],
            "expected": "4",
            "slices": {"subject": "abstract_algebra"},
        }
    ]
    assert list(records[0]) == ["id", "prompt", "candidates", "expected", "slices"]


@pytest.mark.parametrize("answer", [2, "2", "C", "True, False", " True, False "])
def test_an_mmlu_answer_may_be_an_index_a_digit_string_a_letter_or_the_text(answer):
    records, findings = run("mmlu", {**MMLU_STATEMENTS, "answer": answer})
    assert findings == []
    assert records[0]["expected"] == "True, False"


def test_a_digit_answer_out_of_index_range_that_is_a_choice_text_is_that_text():
    # "4" can only be the text: index 4 of four choices does not exist
    records, findings = run("mmlu", {**MMLU_ROW, "answer": "4"})
    assert findings == []
    assert records[0]["expected"] == "4"


def test_an_arc_hf_row_keeps_its_id_and_maps_the_answer_key_through_its_labels():
    records, findings = run("arc", ARC_HF)
    assert findings == []
    assert records == [
        {
            "id": "Mercury_7175875",
            "prompt": ARC_HF["question"],
            "candidates": ARC_HF["choices"]["text"],
            "expected": "Planetary days will become shorter.",
            "slices": {},
        }
    ]


def test_arc_numeric_labels_are_labels_not_indexes():
    records, findings = run("arc", ARC_NUMERIC)
    assert findings == []
    # answerKey "3" is the third choice (label "3"), not index 3 (the fourth)
    assert records[0]["expected"] == "a rubber eraser"


def test_an_arc_row_of_the_original_release_reads_the_stem_and_the_choice_objects():
    records, findings = run("arc", ARC_ORIGINAL)
    assert findings == []
    assert records[0]["prompt"].startswith("One year, the oak trees")
    assert records[0]["candidates"] == [
        "Shady areas increased.",
        "Food sources increased.",
        "Oxygen levels increased.",
        "Available water increased.",
    ]
    assert records[0]["expected"] == "Food sources increased."
    assert records[0]["id"] == "Mercury_SC_405487"


def test_a_hellaswag_row_continues_its_context_with_stripped_endings():
    records, findings = run("hellaswag", HELLASWAG)
    assert findings == []
    rec = records[0]
    assert rec["prompt"] == HELLASWAG["ctx"]
    assert rec["candidates"][0] == ", the man adds wax to the windshield and cuts it."
    assert rec["candidates"][1].endswith("we girls sled.")
    assert rec["expected"] == ", the man continues removing the snow on his car."
    assert rec["slices"] == {"activity": "Removing ice from car"}
    assert rec["id"] == "bench-00001"  # "ind" is no id


def test_a_hellaswag_row_without_ctx_joins_ctx_a_and_ctx_b():
    row = {k: v for k, v in HELLASWAG.items() if k != "ctx"}
    records, findings = run("hellaswag", {**row, "label": 3})
    assert findings == []
    assert records[0]["prompt"] == HELLASWAG["ctx_a"] + " then"
    assert records[0]["expected"] == ", the man continues removing the snow on his car."


# ---------------------------------------------------------------------------------------- bad rows


def test_missing_choices_are_named_with_file_line_and_field():
    row = {k: v for k, v in MMLU_ROW.items() if k != "choices"}
    records, findings = run("mmlu", row, start=7)
    assert records == []
    f = only(findings)
    assert (f.file, f.line, f.field, f.probe_id) == (FILE, 7, "choices", None)
    assert f.message == "missing" and f.field == "choices"
    assert f.hint


def test_an_index_past_the_choices_is_a_finding():
    f = only(run("mmlu", {**MMLU_ROW, "answer": 7})[1])
    assert f.message.startswith("index 7 but only 4 choices")
    assert f.field == "answer"


@pytest.mark.parametrize(
    ("answer", "says"),
    [(-1, "index -1 is negative"), (True, "a boolean"), (1.5, "a number"), ([1], "a list")],
)
def test_an_answer_that_is_no_index_letter_or_text_is_a_finding(answer, says):
    f = only(run("mmlu", {**MMLU_ROW, "answer": answer})[1])
    assert f.check == "import-answer" and says in f.message


def test_an_arc_answer_key_outside_its_labels_names_the_labels_and_the_row_id():
    f = only(run("arc", {**ARC_HF, "answerKey": "E"})[1])
    assert f.message == "'E' is not one of the labels A, B, C, D"
    assert (f.probe_id, f.field) == ("Mercury_7175875", "answerKey")


def test_a_letter_past_the_choices_of_an_unlabelled_row_is_a_finding():
    f = only(run("mmlu", {**MMLU_STATEMENTS, "answer": "E"})[1])
    assert f.message == "'E' is not one of the labels A, B, C, D"


def test_an_answer_text_that_is_no_choice_is_a_finding_with_the_closest():
    f = only(run("mmlu", {**MMLU_STATEMENTS, "answer": "True, Flase"})[1])
    assert "is not one of the 4 choices" in f.message and "'True, False'" in f.message


def test_a_digit_answer_that_reads_as_two_different_choices_is_ambiguous():
    row = {"question": "How many moons has Mars?", "choices": ["3", "2", "1", "0"], "answer": "1"}
    f = only(run("mmlu", row)[1])
    assert "ambiguous" in f.message and "choice 3" in f.message and "index 1" in f.message


def test_endings_equal_after_stripping_are_a_finding():
    endings = [" walks home.", "walks home. ", "runs away.", "sits down."]
    f = only(run("hellaswag", {**HELLASWAG, "endings": endings})[1])
    assert f.check == "import-candidates"
    assert f.message == "choices 1 and 2 are both 'walks home.' (after stripping whitespace)"


def test_a_blank_ending_is_a_finding():
    f = only(run("hellaswag", {**HELLASWAG, "endings": ["a.", "   ", "c.", "d."]})[1])
    assert f.message == "choice 2 is empty (after stripping whitespace)"


@pytest.mark.parametrize(
    ("choices", "says"),
    [
        (["only one"], "1 choice(s), an item needs at least 2"),
        ("A; B; C", "expected a list of choices, got text"),
        (["a", 2, "c"], "choice 2 is a number, not text"),
    ],
)
def test_choices_that_are_no_list_of_two_texts_are_a_finding(choices, says):
    f = only(run("mmlu", {**MMLU_ROW, "choices": choices, "answer": 0})[1])
    assert f.field == "choices" and says in f.message


def test_labels_that_do_not_match_the_choices_are_a_finding():
    row = {**ARC_HF, "choices": {**ARC_HF["choices"], "label": ["A", "B", "C"]}}
    f = only(run("arc", row)[1])
    assert f.message == "3 label(s) for 4 choices"


def test_an_unlabelled_hellaswag_row_says_it_has_no_answer():
    f = only(run("hellaswag", {**HELLASWAG, "label": ""})[1])
    assert f.field == "label" and "the row has no answer" in f.message


def test_a_missing_context_names_every_alternative():
    row = {k: v for k, v in HELLASWAG.items() if k not in ("ctx", "ctx_b")}
    f = only(run("hellaswag", row)[1])
    assert f.message == "missing (and no ctx_a + ctx_b either)"


def test_a_row_that_is_no_object_is_a_finding():
    f = only(run("mmlu", ["not", "a", "row"])[1])
    assert (f.check, f.line) == ("import-not-object", 1)


def test_an_id_that_breaks_the_id_rule_is_a_finding():
    f = only(run("arc", {**ARC_HF, "id": "Mercury 7175875"})[1])
    assert (f.check, f.field) == ("import-id", "id")


def test_an_id_given_twice_ignoring_case_is_a_finding_on_the_second_row():
    records, findings = run("arc", ARC_HF, ARC_NUMERIC, {**ARC_HF, "id": "mercury_7175875"})
    f = only(findings)
    assert (f.check, f.line, f.probe_id) == ("import-duplicate-id", 3, "mercury_7175875")
    assert "row 1" in f.message
    assert [r["id"] for r in records] == ["Mercury_7175875", "NYSEDREGENTS_2015_4_8"]


def test_every_problem_of_every_row_comes_at_once():
    rows = [
        MMLU_ROW,
        {"subject": "anatomy", "choices": ["a", "a"], "answer": 0},  # no question; duplicate choice
        MMLU_STATEMENTS,
        {**MMLU_ROW, "answer": 9},
        {**MMLU_ROW, "question": "   ", "answer": None},  # empty prompt; null answer
    ]
    records, findings = run("mmlu", *rows)
    assert [r["id"] for r in records] == ["bench-00001", "bench-00003"]
    got = [(f.line, f.field) for f in findings]
    assert got == [(2, "question"), (2, "choices"), (4, "answer"), (5, "question"), (5, "answer")]
    assert findings[-1].message == "missing (null)"


# ---------------------------------------------------------------------------------------- --map


def test_a_map_reads_nested_columns_slices_and_the_optional_fields():
    mapping = parse_map(
        "qid=id, q=prompt, opts.text=candidates, opts.label=labels, gold=expected, "
        "topic=slices.topic, why=explanation, origin=source"
    )
    row = {
        "qid": "k8s-net-001",
        "q": "Which object gives a set of Pods one stable virtual IP?",
        "opts": {"text": ["Service", "Deployment", "ConfigMap", "Ingress"], "label": ["w", "x", "y", "z"]},
        "gold": "w",
        "topic": "networking",
        "why": "A Service selects Pods by label.",
        "origin": "handbook ch. 4",
    }
    records, findings = run(mapping, row)
    assert findings == []
    assert records == [
        {
            "id": "k8s-net-001",
            "prompt": "Which object gives a set of Pods one stable virtual IP?",
            "candidates": ["Service", "Deployment", "ConfigMap", "Ingress"],
            "expected": "Service",
            "slices": {"topic": "networking"},
            "explanation": "A Service selects Pods by label.",
            "source": "handbook ch. 4",
        }
    ]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("question=prompt,choices,answer=expected", "'choices' has no '='"),
        ("question=prompt,choices=candidate,answer=expected", "unknown target 'candidate'"),
        (
            "question=prompt,choices=candidates,answer=expected,topic=slice.topic",
            "did you mean 'slices.topic'",
        ),
        ("question=prompt,choices=candidates,answer=expected=gold", "more than one '='"),
        ("question=prompt,choices=candidates", "maps no column to expected"),
        ("question=prompt,,choices=candidates,answer=expected", "empty piece"),
        ("question=prompt,choices=candidates,answer=expected,topic=slices", "say which dimension"),
        ("question=prompt,choices=candidates,answer=expected,topic=slices.a b", "not a dimension name"),
        ("=prompt,choices=candidates,answer=expected", "no source column"),
    ],
)
def test_a_bad_map_is_refused_naming_the_bad_piece(spec, says):
    with pytest.raises(ValueError, match=r".") as err:
        parse_map(spec)
    assert says in str(err.value)


def test_a_target_given_twice_names_both_pieces():
    with pytest.raises(ValueError) as err:
        parse_map("question=prompt,title=prompt,choices=candidates,answer=expected")
    assert "target 'prompt' is given twice (also by 'question=prompt')" in str(err.value)


def test_a_map_on_a_preset_adds_a_slice_and_replaces_a_column():
    mapping = parse_map("level=slices.difficulty,gold=expected", base=PRESETS["mmlu"])
    records, findings = run(mapping, {**MMLU_ROW, "answer": 0, "gold": "B", "level": 2})
    assert findings == []
    assert records[0]["expected"] == "4"
    assert records[0]["slices"] == {"subject": "abstract_algebra", "difficulty": "2"}


def test_labels_without_candidates_are_refused():
    with pytest.raises(ValueError, match="map candidates too"):
        parse_map("opts.label=labels", base=PRESETS["mmlu"])


# ---------------------------------------------------------------------------------------- ids


def test_ids_come_from_the_prefix_and_the_row_and_do_not_move_when_rows_are_appended():
    first, _ = run("mmlu", MMLU_ROW, MMLU_STATEMENTS, prefix="mmlu-algebra")
    again, _ = run("mmlu", MMLU_ROW, MMLU_STATEMENTS, {**MMLU_ROW, "answer": 0}, prefix="mmlu-algebra")
    assert [r["id"] for r in first] == ["mmlu-algebra-00001", "mmlu-algebra-00002"]
    assert [r["id"] for r in again][:2] == [r["id"] for r in first]
    assert again[2]["id"] == "mmlu-algebra-00003"


def test_an_id_prefix_that_cannot_start_an_id_is_refused():
    with pytest.raises(ValueError, match="cannot start an id"):
        run("mmlu", MMLU_ROW, prefix="my bench")


# ---------------------------------------------------------------------------------------- dims


def test_a_mapped_slice_the_suite_does_not_declare_is_one_finding_for_the_file():
    mapping = parse_map("question=prompt,choices=candidates,answer=expected,subject=slices.area")
    _, findings = run(mapping, MMLU_ROW, MMLU_STATEMENTS, dims=["difficulty"])
    checks = [(f.check, f.line, f.field) for f in findings]
    assert checks == [
        ("import-slice-undeclared", None, "slices.area"),
        ("import-slice-unmapped", None, "slices.difficulty"),
    ]
    assert "declares: difficulty" in findings[0].message


def test_a_declared_slice_missing_from_a_row_is_a_finding_on_that_row():
    row = {k: v for k, v in MMLU_STATEMENTS.items() if k != "subject"}
    records, findings = run("mmlu", MMLU_ROW, row, dims=["subject"])
    f = only(findings)
    assert (f.line, f.field, f.check) == (2, "subject", "import-slice")
    assert [r["slices"] for r in records] == [{"subject": "abstract_algebra"}]


def test_slices_follow_the_declared_order_and_are_text():
    mapping = parse_map("q=prompt,c=candidates,a=expected,hard=slices.hard,grade=slices.grade")
    row = {"q": "2 + 2 = ?", "c": ["3", "4"], "a": "4", "grade": 3, "hard": False}
    records, findings = run(mapping, row, dims=["grade", "hard"])
    assert findings == []
    assert json.dumps(records[0]["slices"]) == '{"grade": "3", "hard": "false"}'


def test_a_preset_slice_is_optional_unless_the_suite_declares_it():
    row = {k: v for k, v in MMLU_ROW.items() if k != "subject"}
    records, findings = run("mmlu", row)
    assert findings == [] and records[0]["slices"] == {}
    records, findings = run("mmlu", MMLU_ROW, dims=[])
    assert findings == [] and records[0]["slices"] == {}


# ---------------------------------------------------------------------------------------- bytes


def test_jsonl_rows_keep_their_lines_and_a_broken_line_does_not_stop_the_rest():
    data = (
        json.dumps(ARC_HF) + "\n\n" + '{"id": "broken", "question": \n' + json.dumps(ARC_NUMERIC) + "\n"
    ).encode()
    rows, found = read_rows(data, "arc.jsonl")
    assert [n for n, _ in rows] == [1, 4]
    assert [(f.check, f.line, f.probe_id) for f in found] == [("jsonl-syntax", 3, "broken")]
    records, findings = convert(rows, PRESETS["arc"], file="arc.jsonl", id_prefix="arc")
    assert findings == [] and [r["id"] for r in records] == ["Mercury_7175875", "NYSEDREGENTS_2015_4_8"]


def test_a_json_array_numbers_rows_by_element():
    data = json.dumps([MMLU_ROW, "oops", MMLU_STATEMENTS], indent=2).encode()
    rows, found = read_rows(data, "mmlu.json")
    assert [n for n, _ in rows] == [1, 3]
    assert [(f.check, f.line) for f in found] == [("json-not-object", 2)]
    records, _ = convert(rows, PRESETS["mmlu"], file="mmlu.json", id_prefix="mmlu")
    assert [r["id"] for r in records] == ["mmlu-00001", "mmlu-00003"]


def test_a_broken_json_array_is_one_finding_with_its_text_line():
    rows, found = read_rows(b'[\n  {"question": "x",\n  }\n]', "mmlu.json")
    f = only(found)
    assert rows == [] and f.check == "json-syntax" and "text line 3" in f.message


def test_a_csv_export_with_list_cells_and_flattened_columns_converts():
    data = (
        b"id,question,choices.text,choices.label,answerKey\r\n"
        b'Mercury_7175875,"Which is the most likely effect?","[""density"", ""years"", ""days""]",'
        b'"[""A"", ""B"", ""C""]",C\r\n'
        b'\r\nNYSED_1,"Which conducts?","crayon; nail","[""1"", ""2""]",2\r\n'
    )
    rows, found = read_rows(data, "arc.csv")
    assert found == [] and [n for n, _ in rows] == [2, 4]
    records, findings = convert(rows, PRESETS["arc"], file="arc.csv", id_prefix="arc")
    assert records[0]["candidates"] == ["density", "years", "days"] and records[0]["expected"] == "days"
    f = only(findings)
    assert (f.line, f.field, f.probe_id) == (4, "choices.text", "NYSED_1")
    assert "write a JSON list" in f.message
