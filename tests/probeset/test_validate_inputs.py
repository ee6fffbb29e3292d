"""probeset_io.py, the edge: files that are missing, empty or huge; flags; leak policy; outputs."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.probeset_factory import CORE, apply_step, cli_merged, dump_jsonl, write_base

from evalgate.config import load_config
from evalgate.probeset_io import validate

PROBES = Path("data/eval/probes.jsonl")


def run(root: Path, *extra: str, fmt: str = "json") -> tuple[int, str]:
    return cli_merged("validate", "--config", str(root / "evalgate.yml"), "--format", fmt, *extra)


def findings(out: str) -> list[dict]:
    return json.loads(out)["findings"]


def test_empty_probe_file(tmp_path):
    write_base(tmp_path)
    (tmp_path / PROBES).write_bytes(b"")
    code, out = run(tmp_path, fmt="text")
    assert code == 2
    assert "data/eval/probes.jsonl: the file is empty [jsonl-empty]" in out
    assert "Traceback" not in out


def test_a_10_mb_line_is_refused_with_a_message(tmp_path):
    write_base(tmp_path)
    huge = json.dumps({**CORE[0], "id": "huge", "explanation": "x" * 10_000_000}).encode()
    (tmp_path / PROBES).write_bytes(dump_jsonl(CORE[:3]) + huge + b"\n" + dump_jsonl(CORE[3:]))
    code, out = run(tmp_path)
    assert code == 2
    (f,) = [f for f in findings(out) if f["check"] == "jsonl-line-too-long"]
    assert f["line"] == 4 and "over the limit of 1,000,000" in f["message"]


def test_missing_files_are_findings_not_tracebacks(tmp_path):
    write_base(tmp_path)
    for rel in ("data/corpus/val.jsonl", "data/eval/probe_prompt.txt", "data/grammar/verbs.yaml"):
        (tmp_path / rel).unlink()
    code, out = run(tmp_path)
    assert code == 2
    missing = {f["file"]: f for f in findings(out) if f["check"] == "file-missing"}
    assert set(missing) == {"data/corpus/val.jsonl", "data/eval/probe_prompt.txt", "data/grammar/verbs.yaml"}
    assert "train: []" in missing["data/corpus/val.jsonl"]["hint"]


def test_a_missing_probe_file_given_by_flag_is_relative_to_the_working_directory(tmp_path, monkeypatch):
    write_base(tmp_path)
    monkeypatch.chdir(tmp_path / "data")
    code, out = run(tmp_path, "--probes", "eval/probes.jsonl", "nope.jsonl")
    assert code == 2
    (f,) = [f for f in findings(out) if f["check"] == "file-missing"]
    assert f["file"] == "data/nope.jsonl" and f["message"] == "probe file not found"


def test_a_directory_is_not_a_probe_file(tmp_path):
    write_base(tmp_path)
    code, out = run(tmp_path, "--probes", str(tmp_path / "data"))
    assert code == 2
    assert any("is a directory" in f["message"] for f in findings(out))


def test_train_flag_accepts_a_txt_file_and_names_it_in_the_evidence(tmp_path):
    write_base(tmp_path)
    notes = tmp_path / "notes.txt"
    notes.write_text("unrelated line\nThey say that I went to the market on Fridays.\n", encoding="utf-8")
    code, out = run(tmp_path, "--train", str(notes))
    assert code == 2
    (f,) = findings(out)
    assert (f["check"], f["probe_id"]) == ("leak-ngram", "en-go-past-1sg-001")
    assert (f["evidence"]["train_file"], f["evidence"]["train_line"]) == ("notes.txt", 2)


def test_no_training_files_skips_leak_detection_with_a_warning(tmp_path):
    write_base(tmp_path)
    apply_step(tmp_path, {"config": {"train": []}})
    code, out = run(tmp_path)
    assert code == 0
    assert "leaks-skipped" in {w["check"] for w in json.loads(out)["warnings"]}


def test_exclude_policy_continues_on_the_strict_subset(tmp_path):
    write_base(tmp_path)
    apply_step(tmp_path, {"config": {"leaks": {"policy": "exclude"}}})
    apply_step(tmp_path, {"train": "Every day Pedro works at the school."})
    outcome = validate(load_config(tmp_path / "evalgate.yml"))
    assert outcome.ok
    assert outcome.excluded == frozenset({"en-work-pres-3sg-001"})
    assert [f.check for f in outcome.leaks] == ["leak-template"]
    assert "leaks-excluded" in {w.check for w in outcome.warnings}
    assert outcome.coverage["language"]["en"]["n"] == 3  # counted on the strict subset

    apply_step(tmp_path, {"config": {"coverage": {"per_language": 4}}})
    code, out = run(tmp_path)
    assert code == 2  # the strict subset is short of English probes
    assert [f["message"] for f in findings(out)] == [
        "language en: 3 core probe(s), needs at least 4 (1 short); 1 retired probe(s) of this cell are "
        "not counted, e.g. en-work-pres-3sg-001 (left out as a leak)"
    ]


def test_outcome_lists_inputs_probes_and_template(tmp_path):
    write_base(tmp_path)
    retire = {"file": "probes.jsonl", "id": "en-eat-pp-3sg-001", "fields": {"deprecated": True}}
    apply_step(tmp_path, {"set": retire})
    apply_step(tmp_path, {"config": {"coverage": {"per_tense": 0}}})  # that was the only past participle
    outcome = validate(load_config(tmp_path / "evalgate.yml"))
    assert outcome.ok
    assert {k: v["role"] for k, v in outcome.inputs.items()} == {
        "data/grammar/verbs.yaml": "grammar",
        "data/eval/probes.jsonl": "probes",
        "data/eval/adversarial.jsonl": "probes",
        "data/eval/probe_prompt.txt": "template",
        "data/corpus/train.jsonl": "train",
        "data/corpus/val.jsonl": "train",
    }
    assert outcome.inputs["data/eval/probes.jsonl"]["bytes"] == (tmp_path / PROBES).stat().st_size
    assert [p.id for p in outcome.probes][:3] == [r["id"] for r in CORE[:3]]
    assert outcome.probes[2].deprecated and outcome.probes[2].line == 3
    assert outcome.template == "Complete the sentence.\n{prompt}\n"
    # the one generated probe was retired: live probes only
    assert (outcome.probe_set["n_hand"], outcome.probe_set["n_generated"]) == (2, 0)
    assert outcome.coverage["tense"]["past_participle"]["n"] == 0


def test_files_outside_the_root_are_shown_as_given(tmp_path, tmp_path_factory):
    write_base(tmp_path)
    elsewhere = tmp_path_factory.mktemp("x") / "train.jsonl"
    elsewhere.write_bytes(dump_jsonl([{"text": "Nothing to see."}]))
    outcome = validate(load_config(tmp_path / "evalgate.yml"), train_files=[str(elsewhere)])
    assert elsewhere.as_posix() in outcome.inputs


def test_twins_are_a_warning(tmp_path):
    write_base(tmp_path)
    twin = {**CORE[0], "id": "en-work-pres-3sg-009", "prompt": "every day  MARIA ___ at the office."}
    apply_step(tmp_path, {"append": {"file": "probes.jsonl", "record": twin}})
    code, out = run(tmp_path)
    assert code == 0
    (w,) = [w for w in json.loads(out)["warnings"] if w["check"] == "twin"]
    assert (w["probe_id"], w["line"], w["field"]) == ("en-work-pres-3sg-009", 9, "prompt")
    assert "en-work-pres-3sg-001" in w["message"]


def test_a_broken_grammar_table_is_a_finding(tmp_path):
    write_base(tmp_path)
    (tmp_path / "data/grammar/verbs.yaml").write_text("en: {}\nes: []\n", encoding="utf-8")
    code, out = run(tmp_path)
    assert code == 2
    assert {f["check"] for f in findings(out)} == {"grammar"}


def test_github_actions_also_prints_annotations(tmp_path, monkeypatch):
    write_base(tmp_path)
    apply_step(tmp_path, {"delete": {"file": "probes.jsonl", "id": "en-play-fut-2sg-001", "field": "person"}})
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, out = run(tmp_path, fmt="text")
    assert code == 2
    assert "data/eval/probes.jsonl:4: en-play-fut-2sg-001: person: missing required field 'person'" in out
    assert (
        "::error file=data/eval/probes.jsonl,line=4,title=evalgate schema (en-play-fut-2sg-001)::"
        "en-play-fut-2sg-001: person: missing required field 'person'%0Ahint: " in out
    )
    monkeypatch.setenv("GITHUB_ACTIONS", "false")
    assert "::error" not in run(tmp_path, fmt="text")[1]


def test_clean_text_output_is_a_short_summary(tmp_path):
    write_base(tmp_path)
    assert cli_merged("probes", "seal", "--config", str(tmp_path / "evalgate.yml"))[0] == 0
    code, out = run(tmp_path, fmt="text")
    assert code == 0
    assert out.splitlines()[:5] == [
        "evalgate validate: OK",
        "  probes:   11 (8 core, 3 adversarial, 0 ordinal, 0 deprecated) in 2 file(s)",
        "  coverage: OK",
        "  leaks:    0 leaks (exact, template, 5-gram) against "
        "data/corpus/train.jsonl, data/corpus/val.jsonl",
        f"  version:  0.1.0 (digest {json.loads(run(tmp_path)[1])['summary']['digest'][:12]})",
    ]
    # then the coverage matrix, every cell with its count and bounds
    assert "coverage matrix" in out
    assert "    language              en                      4      2         ok" in out
    code, out = run(tmp_path, fmt="github")
    assert code == 0 and out.startswith("::notice title=evalgate validate::probe set OK: 11 probes")
