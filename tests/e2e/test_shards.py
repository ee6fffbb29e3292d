"""Sharded runs: `run --shard I/N` parts merge into the unsharded result, byte for byte."""

from __future__ import annotations

import pytest
from helpers.paths import REPO

from evalgate.cli import main
from evalgate.edges import plot
from evalgate.errors import RefusedError
from evalgate.gate.shards import blocks, merge_parts, select_shard
from evalgate.pipeline import BASE_KEYS


def test_shards_are_disjoint_cover_and_balanced():
    items = list(range(10))
    parts = [select_shard(items, i, 3) for i in (1, 2, 3)]
    assert sorted(x for p in parts for x in p) == items
    assert [len(p) for p in parts] == [4, 3, 3]
    assert blocks(items, 4) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    with pytest.raises(RefusedError):
        select_shard(items, 4, 3)


def _part(index, count, ids, order, **extra):
    base = {key: {"same": True} for key in BASE_KEYS}
    return {
        **base,
        "verdict": "pass",
        "perplexity": {"value": 2.0} if index == 1 else None,
        "probes": [{"id": i} for i in ids],
        "shard": {"index": index, "count": count, "order": order},
        **extra,
    }


def test_merge_restores_probe_order_and_takes_perplexity_from_shard_one():
    order = ["a", "b", "c", "d", "e"]
    parts = [_part(2, 2, ["b", "d"], order), _part(1, 2, ["a", "c", "e"], order)]
    base, entries = merge_parts(parts, BASE_KEYS)
    assert [e["id"] for e in entries] == order
    assert base["perplexity"] == {"value": 2.0}


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ([_part(1, 2, ["a"], ["a", "b"])], "missing \\[2\\]"),
        ([_part(1, 2, ["a"], ["a", "b"]), _part(1, 2, ["b"], ["a", "b"])], "repeated \\[1\\]"),
        ([_part(1, 2, ["a"], ["a", "b"]), _part(2, 3, ["b"], ["a", "b"])], "different splits"),
        ([_part(1, 2, ["a"], ["a", "b"]), _part(2, 2, ["b"], ["a", "c"])], "different probe set"),
        ([_part(1, 2, ["a"], ["a", "b"]), _part(2, 2, ["b"], ["a", "b"], manifest={"x": 1})], "manifest"),
        ([_part(1, 2, ["a"], ["a", "b"]), _part(2, 2, [], ["a", "b"])], "do not add up"),
    ],
)
def test_merge_refuses_parts_that_are_not_one_run(parts, message):
    with pytest.raises(RefusedError, match=message):
        merge_parts(parts, BASE_KEYS)


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """The real demo checkpoint, the shipped probes, a short test set (perplexity is shard 1's):
    scored whole and as three shards, then merged. Once per module: the model runs four times, and
    each test below checks one part of the result.

    per_slice.png is not compared (tests/edges/test_plot.py holds its bytes), so it is not drawn:
    it cost a third of each run's time."""
    tmp_path = tmp_path_factory.mktemp("shards")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        mp.setattr(plot, "render_png", lambda results: b"not drawn")
        lines = (REPO / "data/corpus/test.jsonl").read_text(encoding="utf-8").splitlines()[:40]
        (tmp_path / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        common = ["--baseline", "none", "--test", str(tmp_path / "test.jsonl")]
        assert main(["run", *common, "--out", str(tmp_path / "whole")]) == 0
        for i in (1, 2, 3):
            assert main(["run", *common, "--shard", f"{i}/3", "--out", str(tmp_path / f"part{i}")]) == 0
        parts = [str(tmp_path / f"part{i}" / "results.json") for i in (3, 1, 2)]
        assert main(["merge", *parts, "--baseline", "none", "--out", str(tmp_path / "merged")]) == 0
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize("name", ["results.json", "REPORT.md", "per_slice.csv", "badge.json"])
def test_three_shards_merge_into_the_unsharded_results_byte_for_byte(sharded, name):
    assert (sharded / "merged" / name).read_bytes() == (sharded / "whole" / name).read_bytes(), name


@pytest.mark.slow
def test_a_partial_result_is_not_the_whole(sharded):
    """Its probes are a third of the set."""
    assert (sharded / "part1" / "results.json").stat().st_size < (
        sharded / "whole" / "results.json"
    ).stat().st_size
