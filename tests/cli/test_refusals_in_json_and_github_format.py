"""`--format json` and `--format github` on early errors: one JSON document, one annotation per refusal;
the Action's command line logged quoted, run warnings in the console and the annotations.
No model is scored here: every case stops at validation or before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli_output import json_stdout

from evalgate.cli import main

pytestmark = pytest.mark.usefixtures("in_repo")  # tests/conftest.py: run from the repository


def test_run_json_config_error_is_one_json_document(tmp_path, capsys):
    bad = tmp_path / "bad.yml"
    bad.write_text("gate:\n  rule: pairs\n", encoding="utf-8")
    code = main(["run", "--config", str(bad), "--format", "json", "--out", str(tmp_path / "o")])
    doc = json_stdout(capsys)
    assert code == 2
    assert doc["verdict"] == "refused" and "pairs" in doc["reasons"][0]
    assert doc["findings"][0]["check"] == "config"


def test_validate_json_config_error_is_one_json_document(tmp_path, capsys):
    bad = tmp_path / "bad.yml"
    bad.write_text("scoring:\n  batch_size: 0\n", encoding="utf-8")
    assert main(["validate", "--config", str(bad), "--format", "json"]) == 2
    doc = json_stdout(capsys)
    assert doc["ok"] is False and "batch_size" in doc["findings"][0]["message"]


def test_compare_json_refusal_prints_the_summary(tmp_path, capsys):
    out = str(tmp_path / "o")
    code = main(
        ["compare", str(tmp_path / "nosuch.json"), "baselines/demo.json", "--format", "json", "--out", out]
    )
    doc = json_stdout(capsys)
    assert code == 2 and doc["verdict"] == "refused"
    assert "nosuch.json: results not found" in doc["reasons"][0]
    assert (tmp_path / "o" / "results.json").is_file()


@pytest.mark.integration
def test_run_json_refusal_after_config_prints_exactly_one_document(tmp_path, capsys):
    code = main(["--probes", str(tmp_path / "nosuch.jsonl"), "--format", "json", "--out", str(tmp_path)])
    doc = json_stdout(capsys)  # json.loads fails on two documents
    assert code == 2 and doc["verdict"] == "refused"


@pytest.mark.integration
def test_github_format_annotates_a_refusal_without_findings(tmp_path, capsys):
    code = main(
        ["--format", "github", "--checkpoint", str(tmp_path / "nosuch"), "--out", str(tmp_path / "o")]
    )
    out = capsys.readouterr().out
    assert code == 2
    assert "::error title=evalgate refused::checkpoint not found" in out


def test_github_format_annotates_a_config_error(tmp_path, capsys):
    bad = tmp_path / "bad.yml"
    bad.write_text("gate: [\n", encoding="utf-8")
    assert main(["validate", "--config", str(bad), "--format", "github"]) == 2
    assert "::error title=evalgate refused::" in capsys.readouterr().out


def test_the_action_logs_the_command_quoted(tmp_path, capsys):
    from evalgate.github.action import main as action_main

    env = {"INPUT_OUT": str(tmp_path / "out dir"), "INPUT_CHECKPOINT": "my ckpt"}
    action_main(env, run=lambda args: 2)
    first = capsys.readouterr().out.splitlines()[0]
    assert f"--out '{tmp_path / 'out dir'}'" in first and "--checkpoint 'my ckpt'" in first


def test_under_github_actions_an_early_refusal_is_annotated_without_format(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert main(["validate", "--config", str(tmp_path / "nosuch.yml")]) == 2
    assert "::error title=evalgate refused::" in capsys.readouterr().out


def test_run_warnings_reach_the_console_and_annotations(capsys):
    from evalgate.console import console_for

    results = {  # the keys the schema requires, and the warning
        "schema_version": 1,
        "evalgate_version": "0",
        "verdict": "pass",
        "reasons": [],
        "inputs": {},
        "config": {},
        "probes": [],
        "slices": {
            "overall": {"n": 10, "correct": 9, "accuracy": 0.9, "wilson_low": None, "wilson_high": None}
        },
        "per_verb": {},
        "perplexity": None,
        "calibration": {},
        "warnings": [
            {"check": "manifest-partial", "message": "part of the set", "file": "data/eval/MANIFEST.json"}
        ],
    }
    console_for("text").summary(results, Path("out"))
    assert "evalgate: warning: data/eval/MANIFEST.json: part of the set" in capsys.readouterr().err
    console_for("github").summary(results, Path("out"))
    assert "::warning file=data/eval/MANIFEST.json,title=evalgate manifest-partial::part of the set" in (
        capsys.readouterr().out
    )
    console_for("json").summary(results, Path("out"))
    assert json.loads(capsys.readouterr().out)["warnings"][0]["check"] == "manifest-partial"
