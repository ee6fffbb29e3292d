"""One problem, one instruction: sealed edits, a late --bump, a long grammar error."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.probeset_factory import CORE, cli_merged, dump_jsonl, probe, write_base

PROBES = Path("data/eval/probes.jsonl")


def _sealed(root: Path) -> Path:
    cfg = write_base(root)
    assert cli_merged("probes", "seal", "--config", str(cfg))[0] == 0
    return cfg


def test_a_hand_edited_sealed_probe_gets_one_consistent_instruction(tmp_path):
    cfg = _sealed(tmp_path)
    recs = [
        {**r, "prompt": r["prompt"].replace("___", "often ___")} if i == 0 else r for i, r in enumerate(CORE)
    ]
    (tmp_path / PROBES).write_bytes(dump_jsonl(recs))
    code, out = cli_merged("validate", "--config", str(cfg), "--format", "json")
    assert code == 2
    findings = json.loads(out)["findings"]
    assert {f["check"] for f in findings} >= {"manifest-file-changed", "lock-changed"}
    hints = {f["hint"] for f in findings}
    assert len(hints) == 1 and "a sealed probe never changes" in hints.pop()


def test_seal_bump_after_an_import_that_sealed_says_what_to_do(tmp_path):
    cfg = _sealed(tmp_path)
    row = probe("new-en-walk-past-1sg-001", "en", "walk", "regular", "past_simple", "1sg",
                "Yesterday after lesson 1 I ___ home.", ["walk", "walked", "walks"], "walked")  # fmt: skip
    (tmp_path / "new.jsonl").write_bytes(dump_jsonl([row]))
    code, out = cli_merged("probes", "import", str(tmp_path / "new.jsonl"), "--config", str(cfg))
    assert code == 0, out
    code, out = cli_merged("probes", "seal", "--bump", "minor", "--config", str(cfg))
    assert code == 0
    assert "--bump minor was not applied" in out and "probes import FILE --bump minor" in out


def test_a_long_grammar_error_is_summarised(tmp_path):
    import yaml

    cfg = write_base(tmp_path)
    grammar = tmp_path / "data/grammar/verbs.yaml"
    table = yaml.safe_load(grammar.read_text(encoding="utf-8"))
    table["en"] = [table["en"]]  # a list where a mapping goes: jsonschema repeats the whole table
    grammar.write_text(yaml.safe_dump(table), encoding="utf-8")
    code, out = cli_merged("validate", "--config", str(cfg), "--format", "json")
    assert code == 2
    [f] = [f for f in json.loads(out)["findings"] if f["check"] == "grammar"]
    assert len(f["message"]) < 400 and "en" in f["message"] and "type" in f["message"]
