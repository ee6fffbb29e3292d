"""Partial results of `run --shard I/N` are neither a baseline nor gated; a malformed shard record
is a refusal, not a crash (fast, no model)."""

from __future__ import annotations

import pytest
from helpers.factories import make_results, make_rules
from helpers.gate_inputs import baseline_of, entries_of, write_json
from helpers.paths import REPO

from evalgate.cli import main
from evalgate.errors import RefusedError
from evalgate.gate.compare import compare

pytestmark = pytest.mark.usefixtures("in_repo")  # tests/conftest.py: run from the repository


# --- partial results of `run --shard I/N` --------------------------------------------------------


def _partial(entries: list[dict], index: int = 1, count: int = 3) -> dict:
    doc = make_results(entries)
    doc["shard"] = {"index": index, "count": count, "order": [e["id"] for e in entries]}
    return doc


def test_partial_result_cannot_be_the_baseline():
    entries = entries_of()
    with pytest.raises(RefusedError, match=r"shard 2/3"):
        compare(make_results(entries), _partial(entries[::3], 2), make_rules(), "p2/results.json")


def test_partial_result_cannot_be_gated():
    entries = entries_of()
    with pytest.raises(RefusedError, match=r"shard 1/3"):
        compare(_partial(entries[::3]), baseline_of(entries), make_rules(), "baselines/demo.json")


def test_compare_cli_refuses_a_shard_naming_the_file(tmp_path, capsys):
    entries = entries_of()
    part = write_json(tmp_path / "part.json", _partial(entries[::3]))
    base = write_json(tmp_path / "base.json", baseline_of(entries))
    assert main(["compare", part, base, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "part.json" in err and "evalgate merge" in err


def test_baseline_update_refuses_a_shard(tmp_path, capsys):
    cfg = tmp_path / "evalgate.yml"  # baselines/ is written beside the configuration
    cfg.write_text((REPO / "evalgate.yml").read_text(encoding="utf-8"), encoding="utf-8")
    part = write_json(tmp_path / "part.json", _partial(entries_of()[::3]))
    argv = ["baseline", "update", "--config", str(cfg), "--from-results", part, "--name", "shard"]
    assert main(argv) == 2
    assert "shard 1/3" in capsys.readouterr().err
    assert not (tmp_path / "baselines" / "shard.json").exists()


# --- merge: a malformed shard record -------------------------------------------------------------


@pytest.mark.parametrize(
    "record",
    [
        {},
        {"index": 1, "count": "2"},
        {"index": None, "count": 2},
        {"index": 3, "count": 2},
        {"index": True, "count": 1},
    ],
)
def test_merge_refuses_a_malformed_shard_record_not_exit_3(record):
    from evalgate.gate.shards import merge_parts
    from evalgate.pipeline import BASE_KEYS

    good = {"index": 2, "count": 2, "order": ["a", "b"]}
    parts = [
        {"verdict": "pass", "probes": [{"id": "a"}], "shard": {"order": ["a", "b"], **record}},
        {"verdict": "pass", "probes": [{"id": "b"}], "shard": good},
    ]
    with pytest.raises(RefusedError, match="'shard' record"):
        merge_parts(parts, BASE_KEYS)


def test_merge_cli_malformed_shard_exits_2(tmp_path, capsys):
    entries = entries_of()
    order = [e["id"] for e in entries]
    one = _partial(entries[0::2], 1, 2)
    two = _partial(entries[1::2], 2, 2)
    one["shard"]["order"] = two["shard"]["order"] = order
    one["shard"]["count"] = "2"
    args = [write_json(tmp_path / "1.json", one), write_json(tmp_path / "2.json", two)]
    assert main(["merge", *args, "--out", str(tmp_path / "out")]) == 2
    assert "shard" in capsys.readouterr().err  # named by the schema or by merge_parts
