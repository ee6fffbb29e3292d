"""The Action's `shard` and `merge` inputs (the sharded gate init --shards N writes, docs/github.md
"Sharded gate"): a shard job's container runs `evalgate run --shard I/N`, the merge job's runs
`evalgate merge` over the mounted parts with the same gate inputs the single-runner gate passes to
`run`, and a bad value is refused before anything runs."""

from __future__ import annotations

import pytest

from evalgate.github.action import build_run_args, main

GATE_INPUTS = {
    "INPUT_CONFIG": "evalgate.yml",
    "INPUT_CHECKPOINT": "models/current",
    "INPUT_CACHE": "/evalgate-cache",
    "INPUT_GATE_CHANGES": "/evalgate-input/gate-changes.diff",
    "INPUT_BASE_INPUTS_CHANGED": "/evalgate-input/base-inputs-changed.txt",
    "INPUT_VERIFY_BASELINE": "true",
    "INPUT_APPROVE_GATE_CHANGES": "true",
    "INPUT_FAIL_ON_INCONCLUSIVE": "true",
}


def test_a_shard_input_scores_that_shard():
    args = build_run_args({**GATE_INPUTS, "INPUT_SHARD": "3/4"})
    assert args[0] == "run" and args[args.index("--shard") + 1] == "3/4"
    assert "--checkpoint" in args and "--cache" in args


def test_the_merge_input_merges_every_part_with_the_gate_inputs_and_no_checkpoint(tmp_path):
    for i in (2, 1, 10):
        (tmp_path / f"evalgate-shard-{i}").mkdir()
        (tmp_path / f"evalgate-shard-{i}" / "results.json").write_text("{}", encoding="utf-8")
    (tmp_path / "stray.json").write_text("{}", encoding="utf-8")
    args = build_run_args({**GATE_INPUTS, "INPUT_MERGE": str(tmp_path)})
    parts = [str(tmp_path / f"evalgate-shard-{i}" / "results.json") for i in (1, 10, 2)]
    assert args[: 1 + len(parts)] == ["merge", *parts]
    rest = args[1 + len(parts) :]
    for flag in ("--gate-changes", "--base-inputs-changed", "--verify-baseline", "--approve-gate-changes",
                 "--fail-on-inconclusive", "--config"):  # fmt: skip
        assert flag in rest, flag
    assert "--checkpoint" not in rest and "--cache" not in rest and "--shard" not in rest


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"INPUT_SHARD": "5/4x"}, "input `shard`"),
        ({"INPUT_SHARD": "0/4"}, "input `shard`"),
        ({"INPUT_SHARD": "1/4", "INPUT_MERGE": "/parts"}, "either scores a shard or merges"),
        ({"INPUT_MERGE": "/nonexistent-evalgate-parts"}, "no partial results"),
    ],
)
def test_a_bad_shard_or_merge_input_is_refused_before_running(env, said, capsys):
    ran = []
    assert main(env, run=lambda args: ran.append(args) or 0) == 2
    assert not ran and said in capsys.readouterr().out


def test_the_merge_cli_accepts_every_flag_the_action_passes(tmp_path, cli):
    """`merge` rejects an unknown flag with argparse's exit 2 before reading a part; here it reads
    the (missing) part, so every flag the Action passes is one merge knows."""
    (tmp_path / "evalgate-shard-1").mkdir()
    part = tmp_path / "evalgate-shard-1" / "results.json"
    part.write_text("{}", encoding="utf-8")
    (tmp_path / "changes.diff").write_text("", encoding="utf-8")
    (tmp_path / "changed.txt").write_text("", encoding="utf-8")
    env = {**GATE_INPUTS, "INPUT_MERGE": str(tmp_path), "INPUT_OUT": str(tmp_path / "out"),
           "INPUT_CONFIG": "", "INPUT_GATE_CHANGES": str(tmp_path / "changes.diff"),
           "INPUT_BASE_INPUTS_CHANGED": str(tmp_path / "changed.txt")}  # fmt: skip
    done = cli(*build_run_args(env))
    assert done.code == 2
    assert "unrecognized arguments" not in done.err, done.err
    assert str(part) in done.out + done.err
