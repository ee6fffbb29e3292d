"""`evalgate validate` reports each problem once and in plain words: missing fields, unreadable ids,
config typos and contradictions, coverage it skipped, and one JSON document under GitHub Actions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.probeset_factory import cli_merged, dump_jsonl, write_base

PROBES = Path("data/eval/probes.jsonl")


def _findings(cfg: Path, *extra: str) -> tuple[int, list[dict]]:
    code, out = cli_merged("validate", "--config", str(cfg), "--format", "json", *extra)
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
    assert cli_merged("probes", "seal", "--config", str(cfg))[0] == 0
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


@pytest.mark.integration
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
    code, out = cli_merged("validate", "--config", str(cfg))
    assert code == 2, out
    assert "evalgate.yml" in out and "UTF-8" in out and "unexpected error" not in out


def test_a_config_typo_suggests_the_key_and_the_hint_names_a_real_file(tmp_path):
    cfg = write_base(tmp_path)
    cfg.write_text("probe: [data/eval/probes.jsonl]\ncoverage: {per_languge: 3}\n", encoding="utf-8")
    code, out = cli_merged("validate", "--config", str(cfg))
    assert code == 2
    assert "unknown key(s) probe (did you mean 'probes'?)" in out
    assert "coverage: unknown key(s) per_languge (did you mean 'per_language'?)" in out
    hint = next(line for line in out.splitlines() if "hint:" in line)
    assert "evalgate config" not in hint  # there is no such command
    assert Path(hint.split("defaults: ", 1)[1].strip()).is_file()


@pytest.mark.integration
def test_a_lock_entry_deleted_by_hand_is_found_and_sealing_restores_it(tmp_path):
    cfg = write_base(tmp_path)
    assert cli_merged("probes", "seal", "--config", str(cfg))[0] == 0
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
    assert cli_merged("probes", "seal", "--config", str(cfg))[0] == 0
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
        code, out = cli_merged("validate", "--config", str(cfg))
        assert code == 2 and want in out, (text, out)


def test_turning_every_leak_detector_off_is_said_plainly(tmp_path):
    cfg = write_base(tmp_path)
    cfg.write_text(cfg.read_text(encoding="utf-8") + "leaks: {detectors: []}\n", encoding="utf-8")
    code, out = cli_merged("validate", "--config", str(cfg))
    assert code == 0, out
    assert "()" not in out and "no training files" not in out
    assert "leak detection is off" in out and "[leaks-skipped]" in out


def test_coverage_short_because_no_adversarial_file_is_configured_says_so(tmp_path):
    cfg = write_base(tmp_path)
    code, out = cli_merged(
        "validate", "--config", str(cfg), "--probes", str(tmp_path / PROBES), "--format", "json"
    )
    assert code == 2
    [total] = [
        f for f in json.loads(out)["findings"] if f.get("evidence", {}).get("cell") == "adversarial_total"
    ]
    assert "no probe file here holds adversarial probes" in total["message"]


def test_a_file_holding_only_a_byte_order_mark_is_empty():
    from evalgate.probeset.jsonl import parse_jsonl

    records, findings = parse_jsonl(b"\xef\xbb\xbf\n", "p.jsonl")
    assert records == []
    assert [f.check for f in findings] == ["jsonl-bom", "jsonl-empty"]


def test_json_summary_does_not_claim_coverage_it_did_not_check(tmp_path):
    cfg = write_base(tmp_path)
    with (tmp_path / PROBES).open("ab") as fh:
        fh.write(b"{not json\n")
    code, out = cli_merged("validate", "--config", str(cfg), "--format", "json")
    assert code == 2
    doc = json.loads(out)
    assert "coverage-skipped" in {w["check"] for w in doc["warnings"]}
    assert doc["summary"]["coverage_ok"] is None


def test_a_missing_probe_file_skips_coverage_in_plain_words(tmp_path):
    cfg = write_base(tmp_path)
    (tmp_path / "data/eval/adversarial.jsonl").unlink()
    code, out = cli_merged("validate", "--config", str(cfg))
    assert code == 2
    assert "coverage not checked: a probe file could not be read [coverage-skipped]" in out


@pytest.mark.integration
def test_a_probe_file_named_twice_is_refused_by_validate_and_exported_once(tmp_path):
    cfg = write_base(tmp_path)
    core, adv = str(tmp_path / PROBES), str(tmp_path / "data/eval/adversarial.jsonl")
    # each configured file counts once, as itself: naming one twice is refused, not merged
    code, out = cli_merged("validate", "--config", str(cfg), "--probes", core, adv, core)
    assert code == 2 and "[file-twice]" in out, out
    code, out = cli_merged(
        "probes", "export", "--format", "jsonl", "--config", str(cfg), "--probes", core, adv, core
    )
    assert code == 0 and out.count('"id": "en-work-pres-3sg-001"') == 1
    lines = [json.loads(line)["id"] for line in out.splitlines() if line.startswith("{")]
    assert lines[0] == "en-work-pres-3sg-001" and lines[-1] == "adv-go-past-1sg-001"  # the order as named
