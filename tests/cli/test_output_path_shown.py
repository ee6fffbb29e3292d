"""The run's last line names the report as the caller sees it (issue 15): relative to the working
folder when the output folder is inside it, as `docker run -v "$PWD:/work" -w /work` users see it."""

from __future__ import annotations

from evalgate.console import console_for

RESULTS = {"verdict": "pass", "slices": {"overall": {"accuracy": 0.9}}, "reasons": []}


def test_an_output_folder_inside_the_working_folder_is_shown_relative(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    console_for("text").summary(RESULTS, tmp_path / "evalgate-out")
    assert "report in evalgate-out/REPORT.md" in capsys.readouterr().out


def test_an_output_folder_elsewhere_is_shown_in_full(tmp_path, monkeypatch, capsys):
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    console_for("text").summary(RESULTS, tmp_path / "out")
    assert f"report in {tmp_path / 'out' / 'REPORT.md'}" in capsys.readouterr().out
