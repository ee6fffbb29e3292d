"""`evalgate run --cache DIR`: a probe-only change scores only its new probes, and the cache never
changes a byte of results.json (cold, warm, none), nor trusts an entry it cannot verify.

Real parts: the shipped demo checkpoint, a small probe set on disk (tests/helpers/probeset_factory.py),
the real command line.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from helpers.paths import REPO
from helpers.probeset_factory import CORE, EVAL, apply_step, cli_merged, dump_jsonl, probe, write_base

# Every test here scores the demo checkpoint several times.
pytestmark = pytest.mark.slow

DEMO = REPO / "data/checkpoints/demo"
NEW = probe("en-work-pres-3sg-new", "en", "work", "regular", "present_simple", "3sg",
            "Every morning she ___ at the bakery.", ["works", "work", "worked"], "works")  # fmt: skip


@pytest.fixture
def gate(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    root = tmp_path / "repo"
    cfg = write_base(root)
    apply_step(root, {"seal": None})
    (root / "data/corpus/test.jsonl").write_text(
        '{"text": "She works every day."}\n{"text": "Ella trabaja todos los días."}\n', encoding="utf-8"
    )
    out = tmp_path / "out"

    def run(*extra: str) -> tuple[bytes, str]:
        code, log = cli_merged("run", "--config", str(cfg), "--checkpoint", str(DEMO), "--baseline", "none",
                        "--out", str(out), *extra)  # fmt: skip
        assert code == 0, log
        return (out / "results.json").read_bytes(), log

    return root, run


def counts(log: str) -> tuple[int, int]:
    """(from the cache, scored) as the run's log line says."""
    m = re.search(r"score cache .*: (\d+) probe\(s\) from the cache, (\d+) scored", log)
    assert m, log
    return int(m[1]), int(m[2])


def add_probe_first(root: Path) -> None:
    """The new probe goes first, so every other probe's batch neighbours change."""
    (root / EVAL / "probes.jsonl").write_bytes(dump_jsonl([NEW, *CORE]))
    apply_step(root, {"seal": None})


def test_cold_warm_and_no_cache_give_the_same_bytes_and_one_new_probe_scores_one(gate, tmp_path):
    root, run = gate
    cache = str(tmp_path / "cache")
    cold, log = run("--cache", cache)
    n = len(json.loads(cold)["probes"])
    assert counts(log) == (0, n)
    warm, log = run("--cache", cache)
    assert counts(log) == (n, 0)
    plain, log = run()
    assert "score cache" not in log
    assert cold == warm == plain

    add_probe_first(root)
    warm_new, log = run("--cache", cache)
    assert counts(log) == (n, 1)  # only the new probe went through the model
    assert warm_new == run()[0]  # the same bytes as scoring everything afresh
    assert "en-work-pres-3sg-new" in json.loads(warm_new)["probes"][0]["id"]


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/*.json"))


def test_corrupt_or_hostile_entries_are_rescored_never_trusted(gate, tmp_path):
    _, run = gate
    cache = tmp_path / "cache"
    clean, _ = run("--cache", str(cache))
    files = entries(cache)
    assert len(files) >= 5
    # 1. garbage bytes
    files[0].write_bytes(b"\x80not json")
    # 2. a number changed without fixing the content hash (corruption)
    doc = json.loads(files[1].read_text(encoding="utf-8"))
    doc["results"][0]["logprob"] = -0.001
    files[1].write_text(json.dumps(doc), encoding="utf-8")
    # 3. a number changed and the content hash recomputed, but for another probe's requests
    from evalgate.types import canonical_json, sha256_text

    other = json.loads(files[3].read_text(encoding="utf-8"))
    doc = json.loads(files[2].read_text(encoding="utf-8"))
    doc["requests"] = other["requests"]
    body = {k: v for k, v in doc.items() if k != "sha256"}
    doc["sha256"] = sha256_text(canonical_json(body))
    files[2].write_text(json.dumps(doc), encoding="utf-8")
    # 4. a symlink pointing elsewhere (an entry is a regular file or nothing)
    target = tmp_path / "elsewhere.json"
    target.write_bytes(files[4].read_bytes())
    files[4].unlink()
    os.symlink(target, files[4])
    # 5. NaN smuggled in as a bare constant
    doc = json.loads(files[5].read_text(encoding="utf-8")) if len(files) > 5 else None
    if doc is not None:
        text = files[5].read_text(encoding="utf-8")
        files[5].write_text(re.sub(r'"logprob": -?[0-9.e-]+', '"logprob": NaN', text, count=1))
    again, log = run("--cache", str(cache))
    bad = 5 if doc is not None else 4
    hits, scored = counts(log)
    assert scored == bad and f"({bad} entry(ies) not trusted, rescored)" in log
    assert again == clean
    # the rescored entries were rewritten: the next run trusts every one
    assert counts(run("--cache", str(cache))[1]) == (hits + scored, 0)


def test_another_checkpoint_or_scoring_configuration_misses(gate, tmp_path):
    root, run = gate
    cache = str(tmp_path / "cache")
    _, log = run("--cache", cache)
    n = counts(log)[1]
    apply_step(root, {"config": {"scoring": {"normalization": "chars"}}})
    _, log = run("--cache", cache)
    assert counts(log) == (0, n)  # normalisation is part of the key, though logliks would agree
    code, log = cli_merged("run", "--config", str(root / "evalgate.yml"), "--checkpoint",
                    str(REPO / "data/checkpoints/demo-regressed"), "--baseline", "none",
                    "--out", str(tmp_path / "out2"), "--cache", cache)  # fmt: skip
    assert code == 0, log
    assert counts(log) == (0, n)


def test_another_kind_of_cpu_misses(gate, tmp_path, monkeypatch):
    # AVX2 and AVX-512 kernels give other last bits: an entry from one kind of runner must not
    # make a warm run on the other differ from its cold run (docs/scoring.md)
    from evalgate.edges import score_cache

    _, run = gate
    cache = str(tmp_path / "cache")
    monkeypatch.setattr(score_cache, "_cpu_kind", lambda: "AVX2/x86_64")
    _, log = run("--cache", cache)
    n = counts(log)[1]
    assert counts(run("--cache", cache)[1]) == (n, 0)
    monkeypatch.setattr(score_cache, "_cpu_kind", lambda: "AVX512/x86_64")
    assert counts(run("--cache", cache)[1]) == (0, n)
