"""A refusal tells the user what to type next: a mistyped command, a flag missing or misplaced,
an unsealed file, and never a claim about scoring that is not true."""

from __future__ import annotations

import pytest
from helpers.cli_output import json_stdout
from helpers.paths import REPO

from evalgate.cli import main

PROBES = REPO / "data" / "eval" / "probes.jsonl"
ADVERSARIAL = REPO / "data" / "eval" / "adversarial.jsonl"


pytestmark = pytest.mark.usefixtures("in_repo")  # tests/conftest.py: run from the repository


def test_a_mistyped_command_is_named_with_a_guess(capsys):
    assert main(["valdate"]) == 2
    assert "unknown command 'valdate' (did you mean 'validate'?)" in capsys.readouterr().err


def test_a_refusal_message_does_not_claim_nothing_was_scored_twice_or_wrongly(capsys):
    from evalgate.console import console_for
    from evalgate.errors import RefusedError
    from evalgate.types import Finding

    console = console_for("text")
    changed = RefusedError("probe p-1 changed since the baseline", findings=[Finding("probe-changed", "x")])
    console.error(changed)  # raised after scoring: the run was scored, only not gated
    invalid = RefusedError(
        "the probe set is invalid: 1 problem(s); nothing was scored", findings=[Finding("a", "b")]
    )
    console.error(invalid)
    err = capsys.readouterr().err
    assert err.count("nothing was scored") == 1 and "(1 problem(s), listed above)" in err


@pytest.mark.integration
def test_an_unsealed_file_given_with_probes_says_how_to_seal_it(tmp_path, capsys):
    mine = tmp_path / "mine.jsonl"
    mine.write_text((REPO / "data" / "eval" / "ordinal.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["validate", "--format", "json", "--probes", str(PROBES), str(ADVERSARIAL), str(mine)]) == 2
    (f,) = [f for f in json_stdout(capsys)["findings"] if f["check"] == "manifest-file-unsealed"]
    assert "evalgate probes seal --probes FILE ..." in f["hint"]


def test_a_checkpoint_folder_given_without_its_flag_gets_the_flag_in_the_hint(capsys):
    assert main(["data/checkpoints/demo"]) == 2
    assert "evalgate --checkpoint data/checkpoints/demo" in capsys.readouterr().err


def test_a_malformed_loader_flag_is_named_as_the_flag(tmp_path, capsys):
    assert main(["--loader", "mylab.model.load", "--out", str(tmp_path)]) == 2
    assert "--loader mylab.model.load: expected package.module:function" in capsys.readouterr().err


def test_a_command_after_the_flags_gets_a_hint(capsys):
    assert main(["--config", "evalgate.yml", "validate"]) == 2
    assert "the command comes first: evalgate validate" in capsys.readouterr().err
