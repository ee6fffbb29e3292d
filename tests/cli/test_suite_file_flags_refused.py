"""Under `suites:` every suite names its own files: `validate --probes/--train` are refused as
`run` refuses them, never silently dropped (docs/suites.md)."""

from __future__ import annotations

import pytest
from helpers.items import write_items


@pytest.fixture
def one_suite(tmp_path, monkeypatch):
    write_items(tmp_path / "quiz" / "items.jsonl", "quiz", 6, 1)
    (tmp_path / "notes.txt").write_text("some training text\n", encoding="utf-8")
    (tmp_path / "evalgate.yml").write_text(
        "suites:\n  quiz:\n    kind: multiple-choice\n    probes: [quiz/items.jsonl]\n    slices: [topic]\n"
        "test: null\nbaseline: none\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--train", "notes.txt"), ("--train", "no-such-file.txt"), ("--probes", "quiz/items.jsonl"),
     ("--probes", "missing.jsonl")],
)  # fmt: skip
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_file_flag_under_suites_is_refused_not_ignored(one_suite, cli, command, flag, value):
    assert cli("validate").code == 0  # the suite itself is fine
    got = cli(command, flag, value)
    assert got.code == 2, (got.out, got.err)
    assert f"{flag}: with `suites:` in evalgate.yml each suite names its own files" in got.err
