"""A multiple-choice suite's item file: every fault of every record at once, located (docs/suites.md)."""

from __future__ import annotations

import json

from evalgate.probeset.items import item_coverage, item_coverage_findings, read_item_file
from evalgate.probeset.leaks import LeakIndex, find_leaks
from evalgate.report.coverage_table import coverage_text
from evalgate.types import Probe

DIMS = {"topic": None, "difficulty": ("easy", "hard")}


def item(i: int, **over) -> dict:
    rec = {
        "id": f"k8s-{i:03d}",
        "prompt": f"Which object number {i} gives Pods a stable virtual IP?",
        "candidates": ["Service", "Deployment", "ConfigMap", "Ingress"],
        "expected": "Service",
        "slices": {"topic": "networking", "difficulty": "easy"},
    }
    rec.update(over)
    return rec


def jsonl(*recs: dict) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in recs).encode()


def test_good_items_become_probes_with_their_slices_and_own_lock():
    got = read_item_file(jsonl(item(1), item(2, kind="ordinal", candidates=["1", "2", "3"], expected="2")),
                         "items.jsonl", DIMS, None)  # fmt: skip
    assert got.findings == [] and got.parsed and got.unreadable == 0
    first = got.probes[0]
    assert first.is_item and first.dims == (("topic", "networking"), ("difficulty", "easy"))
    assert first.to_record() == item(1)  # written back in the documented order, nothing added
    assert first.slices() == ["overall", "topic:networking", "difficulty:easy"]
    assert got.probes[1].kind == "ordinal"
    # the lock covers what the item measures: an explanation may change, the answer may not
    same = Probe.from_item({**item(1), "explanation": "a Service has a ClusterIP"})
    assert same.content_hash() == first.content_hash()
    assert Probe.from_item(item(1, expected="Ingress")).content_hash() != first.content_hash()


def test_every_fault_of_every_record_is_named_with_file_line_id_and_field():
    data = jsonl(
        item(1),
        item(2, expected="Pod"),  # not a candidate
        item(3, slices={"topic": "networking"}),  # declared dimension missing
        item(4, slices={"topic": "networking", "difficulty": "medium"}),  # value not declared
        item(5, slices={"topic": "x", "difficulty": "easy", "team": "sre"}),  # undeclared dimension
        item(6, candidates=["Service"]),  # schema: fewer than 2
        item(7, prompt="A ___ gives Pods a ___ IP."),  # two blanks
        {**item(8), "answer": "Service"},  # unknown field
        item(9, slices={"topic": "net:work", "difficulty": "easy"}),  # ':' would break slice keys
    )
    got = read_item_file(data, "suites/k8s/items.jsonl", DIMS, None)
    where = {(f.line, f.probe_id, f.field, f.check) for f in got.findings}
    assert (2, "k8s-002", "expected", "expected-not-candidate") in where
    assert (3, "k8s-003", "slices.difficulty", "slices") in where
    assert (4, "k8s-004", "slices.difficulty", "slices") in where
    assert (5, "k8s-005", "slices.team", "slices") in where
    assert (6, "k8s-006", "candidates", "schema") in where
    assert (7, "k8s-007", "prompt", "blank") in where
    assert (8, "k8s-008", "answer", "schema") in where
    assert (9, "k8s-009", "slices.topic", "schema") in where
    assert all(f.file == "suites/k8s/items.jsonl" for f in got.findings)
    # only the good record is an item; the rest are refused, none silently dropped
    assert [p.id for p in got.probes] == ["k8s-001", "k8s-002", "k8s-007"]
    assert got.unreadable == 6
    messages = " ".join(f.message for f in got.findings)
    assert (
        "'medium' is not one of the values the suite declares for 'difficulty' (easy, hard)"
        in messages.replace('"', "'")
    )
    assert "'team' is not a dimension of this suite" in messages


def test_a_question_and_a_cloze_are_both_items_and_a_malformed_blank_is_not():
    data = jsonl(
        item(1, prompt="What does kubectl apply do?"),
        item(2, prompt="A ___ gives Pods a stable IP."),
        item(3, prompt="A _____ gives Pods a stable IP."),
        item(4, prompt="A___ gives Pods a stable IP."),
    )
    got = read_item_file(data, "items.jsonl", DIMS, None)
    assert [(f.line, f.check) for f in got.findings] == [(3, "blank"), (4, "blank")]


def test_coverage_counts_live_items_per_declared_value_and_names_the_short_one():
    probes = read_item_file(
        jsonl(
            *(item(i) for i in range(5)),
            item(9, deprecated=True, slices={"topic": "storage", "difficulty": "hard"}),
        ),
        "items.jsonl",
        DIMS,
        None,
    ).probes
    matrix = item_coverage(probes, DIMS, 3)
    # "hard" is declared: it shows up with 0 items (the deprecated one does not count)
    assert matrix["slices.difficulty"] == {"easy": {"n": 5, "min": 3}, "hard": {"n": 0, "min": 3}}
    assert matrix["slices.topic"] == {"networking": {"n": 5, "min": 3}}
    found = item_coverage_findings(matrix, ["items.jsonl"], "k8s")
    assert [(f.check, f.field, f.evidence["slice"]) for f in found] == [
        ("coverage", "slices.difficulty", "difficulty:hard")
    ]
    header = coverage_text(matrix).splitlines()[0]  # what `evalgate validate` prints
    assert "items" in header and "probes" not in header


def test_a_question_item_whose_answer_sits_in_a_training_sentence_is_a_leak_naming_the_line():
    leaky = Probe.from_item(item(1, prompt="Which object gives Pods a stable virtual IP?"), "items.jsonl", 4)
    clean = Probe.from_item(
        item(2, prompt="What does a ConfigMap hold?", expected="ConfigMap"), "items.jsonl", 5
    )
    index = LeakIndex(set(), window=5, detectors=("exact", "ngram"))
    index.add_all(
        "train.jsonl",
        [(1, "Deployments roll out Pods."), (7, "Which object gives Pods a stable virtual IP? Service")],
    )
    found = find_leaks([leaky, clean], index)
    assert [(f.probe_id, f.evidence["train_file"], f.evidence["train_line"]) for f in found] == [
        ("k8s-001", "train.jsonl", 7)
    ]


def test_a_slice_value_cannot_carry_markup_into_reports_and_slice_keys():
    # slice values become slice keys, table cells and headline words: only plain text passes
    values = ["<img src=x>", "[x](http://e.com)", "a|b", "`code`", "topic:x", "a/b", " lead", "*bold*"]
    recs = [item(i, slices={"topic": v, "difficulty": "easy"}) for i, v in enumerate(values)]
    plain = item(99, slices={"topic": "Cars & Other Vehicles", "difficulty": "easy"})
    got = read_item_file(jsonl(*recs, plain), "items.jsonl", DIMS, None)
    bad_lines = sorted(f.line for f in got.findings if f.field == "slices.topic")
    assert bad_lines == list(range(1, len(values) + 1))
    assert [p.id for p in got.probes] == ["k8s-099"]


def test_a_slice_value_with_look_alike_letters_is_refused_but_a_greek_name_is_not():
    # "nеtworking" with a Cyrillic e would be a second slice that reads like "networking"
    lookalikes = ["n\u0435tworking", "\uff4e\uff45\uff54", "st\u03bfrage"]
    recs = [item(i, slices={"topic": v, "difficulty": "easy"}) for i, v in enumerate(lookalikes, 1)]
    greek = item(9, slices={"topic": "Ιστορία", "difficulty": "easy"})
    got = read_item_file(jsonl(*recs, greek), "items.jsonl", DIMS, None)
    found = {(f.line, f.probe_id, f.field): f.message for f in got.findings}
    assert set(found) == {(1, "k8s-001", "slices.topic"), (2, "k8s-002", "slices.topic"),
                          (3, "k8s-003", "slices.topic")}  # fmt: skip
    assert "U+0435 CYRILLIC SMALL LETTER IE" in found[(1, "k8s-001", "slices.topic")]
    assert "full-width" in found[(2, "k8s-002", "slices.topic")]
    assert "GREEK SMALL LETTER OMICRON" in found[(3, "k8s-003", "slices.topic")]
    assert [p.id for p in got.probes] == ["k8s-009"]


def test_a_slice_value_mixing_scripts_or_in_compatibility_forms_is_refused():
    mixed = ["ge\u0585", "\U0001d420eo", "\u13acast"]  # Armenian o; maths bold g; Cherokee E
    fine = ["日本語のテスト", "Ιστορία", "networking 2"]
    recs = [item(i, slices={"topic": v, "difficulty": "easy"}) for i, v in enumerate(mixed + fine, 1)]
    got = read_item_file(jsonl(*recs), "items.jsonl", DIMS, None)
    found = {f.line: f.message for f in got.findings if f.field == "slices.topic"}
    assert set(found) == {1, 2, 3}
    assert "letters of several scripts (armenian, latin)" in found[1]
    assert "compatibility forms" in found[2] and "'geo'" in found[2]
    assert "several scripts (cherokee, latin)" in found[3]
    assert [p.id for p in got.probes] == ["k8s-004", "k8s-005", "k8s-006"]


def test_answers_piled_at_one_position_warn_naming_the_share():
    from evalgate.probeset.items import answer_position_warning

    def at(pos: int, i: int) -> Probe:
        cands = ["w", "x", "y", "z"]
        return Probe.from_item(item(i, candidates=cands, expected=cands[pos]), "items.jsonl", i, "k8s")

    piled = [at(0, i) for i in range(15)] + [at(i % 4, 100 + i) for i in range(10)]
    (warning,) = answer_position_warning(piled, ["items.jsonl"], "k8s")
    assert warning.check == "answer-position" and warning.field == "candidates"
    assert "18 of 25 live items (72%) list their answer at position 1 (A)" in warning.message
    spread = [at(i % 4, i) for i in range(40)]
    assert answer_position_warning(spread, ["items.jsonl"], "k8s") == []
    assert answer_position_warning(piled[:19], ["items.jsonl"], "k8s") == []  # too few to judge
