"""Regressions found by the adversarial review of probe-set validation, authoring and the CLI.

Each test drives the real command line on a small set written to tmp_path (probeset_factory)
and asserts what a user sees: exit code, the finding's check/file/line/probe/field, well-formed
output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers.paths import GOLDEN
from helpers.probeset_factory import cli, dump_jsonl, write_base

PROBES = Path("data/eval/probes.jsonl")


def _findings(cfg: Path, *extra: str) -> tuple[int, list[dict]]:
    code, out = cli("validate", "--config", str(cfg), "--format", "json", *extra)
    return code, json.loads(out)["findings"]


def test_each_missing_field_is_reported_once(tmp_path):
    cfg = write_base(tmp_path)
    with (tmp_path / PROBES).open("ab") as fh:
        fh.write(dump_jsonl([{"id": "only-id", "language": "en"}]))
    code, findings = _findings(cfg)
    assert code == 2
    missing = [f["field"] for f in findings if f["check"] == "schema" and f.get("probe_id") == "only-id"]
    assert sorted(missing) == sorted(
        ["verb", "regularity", "tense", "person", "prompt", "candidates", "expected", "label", "category"]
    )


def test_a_record_whose_id_cannot_be_read_is_not_called_deleted(tmp_path):
    cfg = write_base(tmp_path)
    assert cli("probes", "seal", "--config", str(cfg))[0] == 0
    path = tmp_path / PROBES
    lines = path.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[1])
    rec["id"] = 123  # a typo: the probe is still there, its id just does not read as one
    lines[1] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    assert [(f["check"], f["line"], f["field"]) for f in findings if f["check"] == "schema"] == [
        ("schema", 2, "id")
    ]
    assert "lock-removed" not in {f["check"] for f in findings}


def test_a_template_with_its_own_blank_is_refused_by_validate(tmp_path):
    # The scorer splits the rendered text at the one ___; a template holding one would make every
    # probe unscorable, so validate (which runs before any model is loaded) must refuse it.
    cfg = write_base(tmp_path)
    (tmp_path / "data/eval/probe_prompt.txt").write_text("Fill in the ___:\n{prompt}\n", encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "template"]
    assert f["file"] == "data/eval/probe_prompt.txt" and f["line"] == 1
    assert "___" in f["message"] and f["hint"]
    code, out = cli(
        "run", "--config", str(cfg), "--checkpoint", str(tmp_path / "no-such-checkpoint"),
        "--baseline", "none", "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert code == 2 and "[template]" in out and "checkpoint" not in out.split("[template]")[0]


def test_a_template_that_is_not_utf8_is_located_with_a_hint(tmp_path):
    cfg = write_base(tmp_path)
    (tmp_path / "data/eval/probe_prompt.txt").write_bytes("Línea\nCompleta: {prompt}\n".encode("latin-1"))
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "template"]
    assert f["line"] == 1 and "UTF-8" in f["hint"]


def _broken_set(tmp_path: Path) -> Path:
    cfg = write_base(tmp_path)
    rec = json.loads((tmp_path / PROBES).read_text(encoding="utf-8").splitlines()[0])
    with (tmp_path / PROBES).open("ab") as fh:
        fh.write(dump_jsonl([{**rec, "id": "two-blanks", "prompt": "I ___ and ___ it."}]))
    return cfg


def _evalgate(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("evalgate")
    full_env = {**os.environ, **env}
    return subprocess.run(
        [str(exe), *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=120
    )


def test_json_stays_one_document_under_github_actions_and_annotations_still_print(tmp_path):
    cfg = _broken_set(tmp_path)
    gha = {"GITHUB_ACTIONS": "true"}
    done = _evalgate("validate", "--config", str(cfg), "--format", "json", cwd=tmp_path, env=gha)
    assert done.returncode == 2
    doc = json.loads(done.stdout)  # nothing else on standard output
    assert any(f["probe_id"] == "two-blanks" for f in doc["findings"])
    assert "::error file=data/eval/probes.jsonl,line=9,title=evalgate blank (two-blanks)::" in done.stderr

    out = tmp_path / "out"
    args = ("run", "--config", str(cfg), "--baseline", "none", "--out", str(out), "--format", "json")
    done = _evalgate(*args, cwd=tmp_path, env=gha)
    assert done.returncode == 2
    assert json.loads(done.stdout)["verdict"] == "refused"
    assert "::error file=data/eval/probes.jsonl,line=9,title=evalgate blank (two-blanks)::" in done.stderr


def test_a_config_that_is_not_utf8_is_refused_not_a_crash(tmp_path):
    cfg = write_base(tmp_path)
    cfg.write_bytes("# configuración\nprobes: [data/eval/probes.jsonl]\n".encode("latin-1"))
    code, out = cli("validate", "--config", str(cfg))
    assert code == 2, out
    assert "evalgate.yml" in out and "UTF-8" in out and "unexpected error" not in out


def test_a_config_typo_suggests_the_key_and_the_hint_names_a_real_file(tmp_path):
    cfg = write_base(tmp_path)
    cfg.write_text("probe: [data/eval/probes.jsonl]\ncoverage: {per_languge: 3}\n", encoding="utf-8")
    code, out = cli("validate", "--config", str(cfg))
    assert code == 2
    assert "unknown key(s) probe (did you mean 'probes'?)" in out
    assert "coverage: unknown key(s) per_languge (did you mean 'per_language'?)" in out
    hint = next(line for line in out.splitlines() if "hint:" in line)
    assert "evalgate config" not in hint  # there is no such command
    assert Path(hint.split("defaults: ", 1)[1].strip()).is_file()


def test_invisible_characters_do_not_hide_a_leak(tmp_path):
    # TRAIN holds "The children played in the garden all afternoon." A zero-width space or a soft
    # hyphen inside a word is invisible on screen and must not turn a verbatim copy into a new probe.
    cfg = write_base(tmp_path)
    rec = json.loads((tmp_path / PROBES).read_text(encoding="utf-8").splitlines()[0])
    copy = {
        **rec, "id": "zw-copy", "verb": "play", "regularity": "regular", "tense": "past_simple",
        "person": "3sg", "prompt": "The chil\u200bdren ___ in the garden all after\u00adnoon.",
        "candidates": ["played", "plays", "play"], "expected": "played",
    }  # fmt: skip
    with (tmp_path / PROBES).open("ab") as fh:
        fh.write(dump_jsonl([copy]))
    with (tmp_path / "data/corpus/train.jsonl").open("ab") as fh:  # and the other way round
        fh.write(dump_jsonl([{"text": "Every day Maria wor\u200bks at the office."}]))
    code, findings = _findings(cfg)
    assert code == 2
    exact = {(f["probe_id"], f["evidence"]["train_line"]) for f in findings if f["check"] == "leak-exact"}
    assert exact == {("zw-copy", 1), ("en-work-pres-3sg-001", 7)}


def _with_probe(tmp_path: Path, **fields) -> Path:
    cfg = write_base(tmp_path)
    rec = json.loads((tmp_path / PROBES).read_text(encoding="utf-8").splitlines()[0])
    with (tmp_path / PROBES).open("ab") as fh:
        fh.write(dump_jsonl([{**rec, "id": "odd", **fields}]))
    return cfg


def test_candidates_that_only_look_distinct_are_refused(tmp_path):
    nfc, nfd = "cociné", "cocine\u0301"
    cases = {
        "same-after-nfc": ([nfc, nfd, "cocino"], nfc),
        "surrounding-space": (["works ", " worked", "work"], "work"),
        "invisible-only": (["works", "\u200b", "worked"], "works"),
        "invisible-inside": (["wor\u200bks", "worked"], "worked"),
    }
    for name, (candidates, expected) in cases.items():
        cfg = _with_probe(
            tmp_path / name, prompt="Ayer yo ___ arroz.", candidates=candidates, expected=expected
        )
        code, findings = _findings(cfg)
        assert code == 2, name
        hits = [f for f in findings if f.get("probe_id") == "odd" and f["field"] == "candidates"]
        assert [f["check"] for f in hits] == ["text-form"] * len(hits) and hits, (name, findings)
        assert all(f["line"] == 9 and f["hint"] for f in hits)


def test_expected_that_differs_only_in_unicode_form_says_so(tmp_path):
    cfg = _with_probe(
        tmp_path, prompt="Ayer yo ___ arroz.", candidates=["cociné", "cocino"], expected="cocine\u0301"
    )
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "expected-not-candidate"]
    assert "Unicode" in f["message"] and "NFC" in f["message"]


def test_text_the_model_would_see_differently_from_the_reader_is_refused(tmp_path):
    # A decomposed accent or a zero-width space is tokenized as extra pieces: the probe would be
    # scored on text that only looks like the one a reviewer read.
    cases = {
        "decomposed-prompt": ({"prompt": "Ayer yo ___ arroz en la cocina\u0301."}, "prompt"),
        "invisible-prompt": ({"prompt": "Ayer yo ___ arroz\u200b en casa."}, "prompt"),
        "decomposed-candidates": (
            {"prompt": "Hoy yo ___ arroz.", "candidates": ["cocine\u0301", "cocino"], "expected": "cocino"}
            | {"language": "es", "verb": "cocinar", "tense": "present_simple", "person": "1sg"},
            "candidates",
        ),
    }
    for name, (fields, field) in cases.items():
        cfg = _with_probe(tmp_path / name, **fields)
        code, findings = _findings(cfg)
        assert code == 2, name
        hits = [f for f in findings if f.get("probe_id") == "odd"]
        assert [(f["check"], f["field"], f["line"]) for f in hits] == [("text-form", field, 9)], (name, hits)


def test_a_blank_glued_to_a_word_is_refused(tmp_path):
    glued = {"before": "Ayer yo coc___ arroz.", "after": "Ayer yo ___ado arroz."}
    for name, prompt in glued.items():
        cfg = _with_probe(tmp_path / name, prompt=prompt)
        code, findings = _findings(cfg)
        assert code == 2
        [f] = [f for f in findings if f.get("probe_id") == "odd"]
        assert (f["check"], f["field"], f["line"]) == ("blank", "prompt", 9)
        assert "glued" in f["message"]


def test_a_full_width_blank_is_named(tmp_path):
    cfg = _with_probe(tmp_path, prompt="Ayer yo ＿＿＿ arroz.")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f.get("probe_id") == "odd"]
    assert f["check"] == "blank" and "U+FF3F" in f["message"]


def test_a_lock_entry_deleted_by_hand_is_found_and_sealing_restores_it(tmp_path):
    cfg = write_base(tmp_path)
    assert cli("probes", "seal", "--config", str(cfg))[0] == 0
    path = tmp_path / "data/eval/MANIFEST.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    del manifest["lock"]["en-go-past-1sg-001"]
    path.write_text(json.dumps(manifest), encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = findings
    assert (f["check"], f["file"], f["probe_id"]) == (
        "manifest-lock",
        "data/eval/MANIFEST.json",
        "en-go-past-1sg-001",
    )
    assert f["hint"]
    assert cli("probes", "seal", "--config", str(cfg))[0] == 0
    assert json.loads(path.read_text(encoding="utf-8"))["lock"]["en-go-past-1sg-001"]
    assert _findings(cfg) == (0, [])


def test_a_json_array_or_pretty_printed_file_gets_one_clear_finding(tmp_path):
    cfg = write_base(tmp_path)
    path = tmp_path / PROBES
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    layouts = {
        "array": json.dumps(records, indent=2),
        "one-line array": json.dumps(records),
        "pretty objects": "\n".join(json.dumps(r, indent=2) for r in records),
    }
    for name, text in layouts.items():
        path.write_text(text + "\n", encoding="utf-8")
        code, findings = _findings(cfg)
        assert code == 2
        mine = [f for f in findings if f["file"] == "data/eval/probes.jsonl"]
        assert len(mine) == 1, (name, mine)
        assert mine[0]["line"] == 1 and f"{len(records)} " in mine[0]["message"], (name, mine)
        assert "one JSON object per line" in mine[0]["hint"]


def test_an_out_path_that_is_a_file_is_refused_before_any_work(tmp_path):
    cfg = write_base(tmp_path)
    taken = tmp_path / "results.json"
    taken.write_text("{}", encoding="utf-8")
    for out in (taken, taken / "sub"):
        code, text = cli("run", "--config", str(cfg), "--baseline", "none", "--out", str(out))
        assert code == 2, text
        assert "output folder" in text and "not a folder" in text and "unexpected error" not in text
        code, text = cli("compare", str(taken), str(taken), "--config", str(cfg), "--out", str(out))
        assert code == 2 and "not a folder" in text, text
    assert taken.read_text(encoding="utf-8") == "{}"


def test_config_type_errors_and_contradictions_read_plainly(tmp_path):
    cfg = write_base(tmp_path)
    cases = {
        "probes: []\n": "probes: [] is not a string or a list of strings (at least 1)",
        "train: null\n": "train: null is not a string or a list of strings",
        "coverage: {adversarial_per_category_min: 6, adversarial_per_category_max: 2}\n": (
            "coverage.adversarial_per_category_min (6) is above coverage.adversarial_per_category_max (2)"
        ),
        "probes: [data/eval/probes.jsonl]\nprobes: [data/eval/adversarial.jsonl]\n": (
            "evalgate.yml:2: key 'probes' appears twice"
        ),
    }
    for text, want in cases.items():
        cfg.write_text(text, encoding="utf-8")
        code, out = cli("validate", "--config", str(cfg))
        assert code == 2 and want in out, (text, out)


def test_turning_every_leak_detector_off_is_said_plainly(tmp_path):
    cfg = write_base(tmp_path)
    cfg.write_text(cfg.read_text(encoding="utf-8") + "leaks: {detectors: []}\n", encoding="utf-8")
    code, out = cli("validate", "--config", str(cfg))
    assert code == 0, out
    assert "()" not in out and "no training files" not in out
    assert "leak detection is off" in out and "[leaks-skipped]" in out


def test_coverage_short_because_no_adversarial_file_is_configured_says_so(tmp_path):
    cfg = write_base(tmp_path)
    code, out = cli("validate", "--config", str(cfg), "--probes", str(tmp_path / PROBES), "--format", "json")
    assert code == 2
    [total] = [
        f for f in json.loads(out)["findings"] if f.get("evidence", {}).get("cell") == "adversarial_total"
    ]
    assert "no probe file here holds adversarial probes" in total["message"]


def test_export_to_a_folder_is_refused_not_a_crash(tmp_path):
    cfg = write_base(tmp_path)
    code, out = cli("probes", "export", "--format", "csv", "--config", str(cfg), "-o", str(tmp_path / "data"))
    assert code == 2, out
    assert "--output" in out and "folder" in out and "unexpected error" not in out


def test_a_file_holding_only_a_byte_order_mark_is_empty():
    from evalgate.probeset.jsonl import parse_jsonl

    records, findings = parse_jsonl(b"\xef\xbb\xbf\n", "p.jsonl")
    assert records == []
    assert [f.check for f in findings] == ["jsonl-bom", "jsonl-empty"]


def test_json_summary_does_not_claim_coverage_it_did_not_check(tmp_path):
    cfg = write_base(tmp_path)
    with (tmp_path / PROBES).open("ab") as fh:
        fh.write(b"{not json\n")
    code, out = cli("validate", "--config", str(cfg), "--format", "json")
    assert code == 2
    doc = json.loads(out)
    assert "coverage-skipped" in {w["check"] for w in doc["warnings"]}
    assert doc["summary"]["coverage_ok"] is None


def test_a_missing_probe_file_skips_coverage_in_plain_words(tmp_path):
    cfg = write_base(tmp_path)
    (tmp_path / "data/eval/adversarial.jsonl").unlink()
    code, out = cli("validate", "--config", str(cfg))
    assert code == 2
    assert "coverage not checked: a probe file could not be read [coverage-skipped]" in out


def test_a_probe_file_named_twice_is_refused_by_validate_and_exported_once(tmp_path):
    cfg = write_base(tmp_path)
    core, adv = str(tmp_path / PROBES), str(tmp_path / "data/eval/adversarial.jsonl")
    # each configured file counts once, as itself: naming one twice is refused, not merged
    code, out = cli("validate", "--config", str(cfg), "--probes", core, adv, core)
    assert code == 2 and "[file-twice]" in out, out
    code, out = cli(
        "probes", "export", "--format", "jsonl", "--config", str(cfg), "--probes", core, adv, core
    )
    assert code == 0 and out.count('"id": "en-work-pres-3sg-001"') == 1
    lines = [json.loads(line)["id"] for line in out.splitlines() if line.startswith("{")]
    assert lines[0] == "en-work-pres-3sg-001" and lines[-1] == "adv-go-past-1sg-001"  # the order as named


def test_probes_build_refuses_unusable_paths_instead_of_crashing(tmp_path):
    taken = tmp_path / "afile"
    taken.write_text("", encoding="utf-8")
    code, out = cli("probes", "build", "--out-dir", str(taken))
    assert code == 2 and "unexpected error" not in out and str(taken) in out, out
    code, out = cli("probes", "build", "--grammar", str(tmp_path), "--out-dir", str(tmp_path / "o"))
    assert code == 2 and "unexpected error" not in out and "folder" in out, out


def test_a_manifest_path_that_is_a_folder_is_a_finding_and_seal_refuses(tmp_path):
    cfg = write_base(tmp_path)
    (tmp_path / "data/eval/MANIFEST.json").mkdir()
    code, findings = _findings(cfg)
    assert code == 2
    assert [(f["check"], f["file"]) for f in findings] == [("file-missing", "data/eval/MANIFEST.json")]
    assert "manifest:" in findings[0]["hint"]
    code, out = cli("probes", "seal", "--config", str(cfg))
    assert code == 2 and "unexpected error" not in out, out


def test_seal_that_cannot_write_the_manifest_is_refused(tmp_path):
    cfg = write_base(tmp_path)
    (tmp_path / "afile").write_text("", encoding="utf-8")
    cfg.write_text(cfg.read_text(encoding="utf-8") + "manifest: afile/MANIFEST.json\n", encoding="utf-8")
    code, out = cli("probes", "seal", "--config", str(cfg))
    assert code == 2 and "unexpected error" not in out and "MANIFEST.json" in out, out


def test_baseline_update_that_cannot_write_is_refused(tmp_path):
    cfg = write_base(tmp_path)
    (tmp_path / "baselines").write_text("not a folder", encoding="utf-8")
    results = GOLDEN / "REPORT-fail.results.json"
    code, out = cli("baseline", "update", "--config", str(cfg), "--from-results", str(results), "--name", "t")
    assert code == 2 and "unexpected error" not in out and "baselines" in out, out


def test_odd_whitespace_next_to_the_blank_is_refused(tmp_path):
    # The whitespace before the blank is scored with the candidate (lm-eval convention): two spaces,
    # a tab or a no-break space there measured a different continuation than the one a reader sees.
    prompts = {
        "nbsp": "Ayer yo\u00a0___ arroz.",
        "two-spaces": "Ayer yo  ___ arroz.",
        "tab": "Ayer yo\t___ arroz.",
    }
    for name, prompt in prompts.items():
        cfg = _with_probe(tmp_path / name, prompt=prompt)
        code, findings = _findings(cfg)
        assert code == 2, name
        [f] = [f for f in findings if f.get("probe_id") == "odd" and f["check"] != "control-character"]
        assert (f["check"], f["field"]) == ("blank", "prompt"), (name, f)
        assert "one plain space" in f["message"]
    cfg = _with_probe(tmp_path / "fine", prompt="¿___ tú arroz   ayer?")  # after the blank: not scored
    assert _findings(cfg) == (0, [])
