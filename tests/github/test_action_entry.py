"""The Action's entry: INPUT_* → `evalgate run` arguments, GITHUB_OUTPUT, step summary, exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalgate.gate.results import assemble_refused
from evalgate.github.action import build_run_args, exit_code, gate_outputs, main, output_lines


def parse_github_output(text: str) -> dict[str, str]:
    """GitHub's reading of a GITHUB_OUTPUT file: `name=value` lines and `name<<DELIM` blocks."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block = []
            while lines[i] != delimiter:
                block.append(lines[i])
                i += 1
            i += 1
            out[name] = "\n".join(block)
        else:
            name, value = line.split("=", 1)
            out[name] = value
    return out


def test_inputs_become_run_arguments():
    env = {
        "INPUT_CHECKPOINT": "data/checkpoints/new ",
        "INPUT_CONFIG": "evalgate.yml",
        "INPUT_BASELINE": "none",
        "INPUT_OUT": "gate-out",
        "INPUT_COMMENT": "true",
        "INPUT_GATE-CHANGES": ".evalgate/gate-changes.diff",
        "INPUT_CACHE": "/evalgate-cache",
        "INPUT_IMAGE": "ignored-here",
    }
    assert build_run_args(env) == [
        "run",
        "--format",
        "github",
        "--out",
        "gate-out",
        "--config",
        "evalgate.yml",
        "--checkpoint",
        "data/checkpoints/new",
        "--baseline",
        "none",
        "--gate-changes",
        ".evalgate/gate-changes.diff",
        "--cache",
        "/evalgate-cache",
        "--comment",
    ]


def test_empty_inputs_are_left_to_the_configuration():
    env = {"INPUT_CHECKPOINT": "", "INPUT_CONFIG": "  ", "INPUT_COMMENT": "false"}
    assert build_run_args(env) == ["run", "--format", "github", "--out", "evalgate-out"]


@pytest.mark.parametrize("key", ["INPUT_FAIL-ON-REGRESSION", "INPUT_FAIL_ON_REGRESSION"])
def test_fail_on_regression_is_read_under_both_spellings(tmp_path, key, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main({key: "false"}, run=fake_run("fail", 1)) == 0
    assert main({key: "TRUE"}, run=fake_run("fail", 1)) == 1


def test_a_bad_boolean_is_refused_before_running(capsys):
    calls = []
    assert main({"INPUT_COMMENT": "maybe"}, run=calls.append) == 2
    assert calls == [] and "::error" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("code", "fail_on_regression", "expected"),
    [(0, True, 0), (1, True, 1), (1, False, 0), (2, False, 2), (3, False, 3), (2, True, 2)],
)
def test_exit_codes(code, fail_on_regression, expected):
    assert exit_code(code, fail_on_regression) == expected


def test_outputs_are_multiline_safe():
    tricky = {"verdict": "pass", "accuracy": "0.875", "report-path": "a\nb=c\nEOF\nverdict<<EOF"}
    assert parse_github_output(output_lines(tricky)) == tricky
    assert output_lines(tricky) == output_lines(dict(tricky))  # no randomness in the file


def fake_run(verdict: str, code: int, accuracy: float | None = 0.8125):
    """Stands in for `evalgate run`: writes what it writes (results.json, REPORT.md), returns its code."""

    def run(args):
        out = Path(args[args.index("--out") + 1])
        out.mkdir(parents=True, exist_ok=True)
        doc = assemble_refused(reasons=[], findings=[], inputs={}, config_pin={})
        doc["verdict"] = verdict
        if accuracy is not None:
            doc["slices"] = {"overall": {"n": 16, "correct": 13, "accuracy": accuracy}}
        (out / "results.json").write_text(json.dumps(doc), encoding="utf-8")
        (out / "REPORT.md").write_text(f"# evalgate: {verdict.upper()}\n\n| a | b |\n", encoding="utf-8")
        return code

    return run


def test_outputs_and_step_summary_are_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    output, summary = tmp_path / "output.txt", tmp_path / "summary.md"
    output.write_text("earlier=step\n", encoding="utf-8")
    summary.write_text("## earlier step\n", encoding="utf-8")
    env = {"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary), "INPUT_OUT": "out dir"}

    assert main(env, run=fake_run("fail", 1)) == 1

    parsed = parse_github_output(output.read_text(encoding="utf-8"))
    assert parsed == {
        "earlier": "step",
        "verdict": "fail",
        "accuracy": "0.8125",
        "report-path": str(Path("out dir") / "REPORT.md"),
    }
    assert summary.read_text(encoding="utf-8") == "## earlier step\n# evalgate: FAIL\n\n| a | b |\n"


def test_a_crash_without_outputs_is_still_reported(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    output, summary = tmp_path / "output.txt", tmp_path / "summary.md"
    env = {
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "INPUT_FAIL-ON-REGRESSION": "false",
    }
    assert main(env, run=lambda args: 3) == 3  # unexpected errors are never turned into a pass
    assert parse_github_output(output.read_text(encoding="utf-8")) == {
        "verdict": "error",
        "accuracy": "",
        "report-path": "",
    }
    assert "No REPORT.md was written" in summary.read_text(encoding="utf-8")


@pytest.mark.parametrize("key", ["INPUT_FAIL-ON-INCONCLUSIVE", "INPUT_FAIL_ON_INCONCLUSIVE"])
def test_fail_on_inconclusive_becomes_the_run_flag(key):
    assert "--fail-on-inconclusive" in build_run_args({key: "true"})
    assert "--fail-on-inconclusive" not in build_run_args({key: "false"})
    assert "--fail-on-inconclusive" not in build_run_args({})


def test_an_inconclusive_run_reports_its_verdict_and_keeps_its_exit_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    output = tmp_path / "output.txt"
    env = {"GITHUB_OUTPUT": str(output), "INPUT_FAIL-ON-REGRESSION": "false"}
    assert main(env, run=fake_run("inconclusive", 0)) == 0
    assert parse_github_output(output.read_text(encoding="utf-8"))["verdict"] == "inconclusive"
    # under fail-on-inconclusive the run exits 1: fail-on-regression=false does not turn that into
    # a pass, it is the other switch's
    output.write_text("", encoding="utf-8")
    env["INPUT_FAIL-ON-INCONCLUSIVE"] = "true"
    assert main(env, run=fake_run("inconclusive", 1)) == 1
    assert parse_github_output(output.read_text(encoding="utf-8"))["verdict"] == "inconclusive"
    assert exit_code(1, False, "inconclusive") == 1 and exit_code(1, False, "fail") == 0


def test_refused_keeps_its_code_even_without_fail_on_regression(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {"INPUT_FAIL-ON-REGRESSION": "false"}
    assert main(env, run=fake_run("refused", 2, accuracy=None)) == 2
    assert gate_outputs("evalgate-out", 2)["verdict"] == "refused"
    assert gate_outputs("evalgate-out", 2)["accuracy"] == ""


def test_the_real_cli_refusing_a_missing_config_is_non_zero(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    output = tmp_path / "output.txt"
    env = {"GITHUB_OUTPUT": str(output), "INPUT_CONFIG": "nowhere.yml", "INPUT_FAIL-ON-REGRESSION": "false"}
    assert main(env) == 2
    assert parse_github_output(output.read_text(encoding="utf-8"))["verdict"] == "refused"


def test_an_unwritable_summary_or_output_file_keeps_the_gates_exit_code(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "gone"
    env = {"GITHUB_OUTPUT": str(missing / "output.txt"), "GITHUB_STEP_SUMMARY": str(missing / "summary.md")}
    assert main(env, run=fake_run("fail", 1)) == 1
    out = capsys.readouterr().out
    assert "could not write GITHUB_OUTPUT" in out and "could not write GITHUB_STEP_SUMMARY" in out


def test_the_approval_input_adds_the_flag_only_when_true():
    assert "--approve-gate-changes" in build_run_args({"INPUT_APPROVE-GATE-CHANGES": "true"})
    assert "--approve-gate-changes" in build_run_args({"INPUT_APPROVE_GATE_CHANGES": "yes"})
    assert "--approve-gate-changes" not in build_run_args({"INPUT_APPROVE_GATE_CHANGES": "false"})
    assert "--approve-gate-changes" not in build_run_args({})
