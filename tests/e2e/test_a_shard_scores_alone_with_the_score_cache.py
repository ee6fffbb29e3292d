"""A shard's numbers never depend on another shard (issue 29, section 2): with the score cache
shared by the shards of a matrix (warmed by the others first) or a fresh one per shard, and with
the prefix tree cutting only what one shard scores, the merged results.json is the whole run's,
byte for byte; and a shard scored again from a cache the other shards filled is its own bytes."""

from __future__ import annotations

import pytest
from helpers.paths import REPO

from evalgate.cli import main
from evalgate.edges import plot

pytestmark = pytest.mark.slow
SHARDS = 4


def _run(*args: str) -> None:
    assert main(["run", "--baseline", "none", *args]) == 0


def test_shards_with_a_shared_or_a_fresh_score_cache_merge_into_the_whole_runs_bytes(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setattr(plot, "render_png", lambda results: b"not drawn")  # tests/edges/test_plot.py
    _run("--out", str(tmp_path / "whole"))
    whole = (tmp_path / "whole" / "results.json").read_bytes()

    shared = tmp_path / "shared-cache"
    # One cache for every shard, filled in an order other than the shards' own.
    for i in (3, 1, 4, 2):
        _run("--shard", f"{i}/{SHARDS}", "--cache", str(shared), "--out", str(tmp_path / f"shared{i}"))
    # A fresh cache per shard: each shard's runner alone.
    for i in range(1, SHARDS + 1):
        cache = tmp_path / f"cache{i}"
        _run("--shard", f"{i}/{SHARDS}", "--cache", str(cache), "--out", str(tmp_path / f"fresh{i}"))
    assert any(shared.rglob("*")), "the shards wrote no cache entries: nothing was tested"

    for kind in ("shared", "fresh"):
        parts = [str(tmp_path / f"{kind}{i}" / "results.json") for i in range(1, SHARDS + 1)]
        out = tmp_path / f"merged-{kind}"
        assert main(["merge", *parts, "--baseline", "none", "--out", str(out)]) == 0
        assert (out / "results.json").read_bytes() == whole, f"{kind} cache: the merge is not the whole run"

    # Shard 2 again, every one of its probes now in the cache the others filled: the same part.
    _run("--shard", f"2/{SHARDS}", "--cache", str(shared), "--out", str(tmp_path / "again2"))
    again = (tmp_path / "again2" / "results.json").read_bytes()
    assert again == (tmp_path / "shared2" / "results.json").read_bytes()
    assert again == (tmp_path / "fresh2" / "results.json").read_bytes()
