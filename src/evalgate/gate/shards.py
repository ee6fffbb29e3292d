"""Sharding a probe set for runs spread over several machines (an Actions matrix).

Probes are cut into fixed blocks of BLOCK_SIZE consecutive probes (in probe-file order); shard
i of n takes every block whose index is i-1 modulo n. A probe's numbers never depend on which
other probes were scored in the same run (scorers/torch_lm.py, "Fixed-shape forwards"), so
`merge` gives back the unsharded results.json byte for byte. Shards are disjoint, cover the set, and
depend only on the probe files, so every runner computes the same split without talking to
the others.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TypeGuard, TypeVar

from evalgate.errors import RefusedError

T = TypeVar("T")

BLOCK_SIZE = 64  # probes per scoring block; changing it changes float noise, not results


def blocks(items: Sequence[T], size: int = BLOCK_SIZE) -> list[list[T]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def select_shard(items: Sequence[T], index: int, count: int) -> list[T]:
    """Shard `index` (1-based) of `count`: every item whose position is index-1 modulo count."""
    if count < 1 or not 1 <= index <= count:
        raise RefusedError(f"shard {index}/{count}: I must be between 1 and N")
    return [item for pos, item in enumerate(items) if pos % count == index - 1]


def _is_int(v: object) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def merge_parts(parts: Sequence[dict], base_keys: Sequence[str]) -> tuple[dict, list[dict]]:
    """Check that the partial results are the shards of one run; return (base, entries in order).

    `base` holds the run-invariant fields (`base_keys`, taken from shard 1, which is also the one
    that measured perplexity); `entries` are every shard's probes back in probe-file order.
    """
    problems: list[str] = []
    shards: list[dict] = []
    for p in parts:
        shard = p.get("shard")
        if not isinstance(shard, dict):
            raise RefusedError(
                "merge needs partial results written by `evalgate run --shard I/N`",
                hint="a part without a 'shard' record is a whole run, not a shard",
            )
        shards.append(shard)
    for n, s in enumerate(shards, 1):
        index, count, order = s.get("index"), s.get("count"), s.get("order")
        if not (_is_int(index) and _is_int(count) and 1 <= index <= count) or not (
            isinstance(order, list) and all(isinstance(i, str) for i in order)
        ):
            raise RefusedError(
                f"part {n}: its 'shard' record is not one `evalgate run --shard I/N` writes "
                "(needs integers 1 <= index <= count and the probe order)",
                hint="rerun that shard rather than editing its results.json",
            )
    counts = {s["count"] for s in shards}
    if len(counts) != 1:
        raise RefusedError(f"the parts come from different splits: N = {sorted(counts)}")
    count = counts.pop()
    indices = sorted(s["index"] for s in shards)
    if indices != list(range(1, count + 1)):
        missing = sorted(set(range(1, count + 1)) - set(indices))
        dup = sorted({i for i in indices if indices.count(i) > 1})
        raise RefusedError(
            f"need each of the {count} shards exactly once"
            + (f"; missing {missing}" if missing else "")
            + (f"; repeated {dup}" if dup else "")
        )
    by_index = {s["index"]: p for s, p in zip(shards, parts, strict=True)}
    first = by_index[1]
    for index in range(2, count + 1):
        part = by_index[index]
        for key in (*base_keys, "verdict"):
            if key != "perplexity" and part.get(key) != first.get(key):
                problems.append(f"shard {index}/{count} differs from shard 1/{count} in '{key}'")
        if part["shard"].get("order") != first["shard"].get("order"):
            problems.append(f"shard {index}/{count} was cut from a different probe set")
    if problems:
        raise RefusedError("the parts are not shards of one run:\n  " + "\n  ".join(problems))
    order = first["shard"]["order"]
    position = {pid: i for i, pid in enumerate(order)}
    entries = [e for index in range(1, count + 1) for e in by_index[index]["probes"]]
    seen = sorted(e["id"] for e in entries)
    if seen != sorted(order):
        raise RefusedError("the shards' probes do not add up to the probe set they were cut from")
    entries.sort(key=lambda e: position[e["id"]])
    base = {key: first.get(key) for key in base_keys}
    base["perplexity"] = first.get("perplexity")
    if "suite_perplexity" in first:  # several suites, one naming its own test set (docs/suites.md)
        base["suite_perplexity"] = first["suite_perplexity"]
    return base, entries


# Keys of the pinned configuration a merge does not decide: the measured inputs `run` takes as
# flags (the parts hashed what they read in `inputs`) and the baseline, which `merge` takes itself
# and records as its own (the shards never load one).
MERGE_UNPINNED = ("checkpoint", "loader", "test", "probes", "train", "baseline")


def _flat(value: object, prefix: str = "") -> dict[str, object]:
    if isinstance(value, dict) and value:
        out: dict[str, object] = {}
        for key, sub in value.items():
            out.update(_flat(sub, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def pin_differences(parts_pin: dict, merge_pin: dict) -> list[str]:
    """Where the merge's pinned configuration differs from the parts': one line per dotted key.

    The parts were scored and aggregated under their configuration, and the merged result records
    it, so the merge must gate under the same one (docs/approval.md: a run cannot change its own
    gate); a merge with other rules is refused rather than gated with rules the result does not show.
    """
    parts = {k: v for k, v in _flat(parts_pin).items() if k.split(".")[0] not in MERGE_UNPINNED}
    mine = {k: v for k, v in _flat(merge_pin).items() if k.split(".")[0] not in MERGE_UNPINNED}
    lines = []
    for key in sorted(set(parts) | set(mine)):
        if parts.get(key, _UNSET) != mine.get(key, _UNSET):
            theirs, ours = _shown(parts.get(key, _UNSET)), _shown(mine.get(key, _UNSET))
            lines.append(f"{key}: parts {theirs}, this merge {ours}")
    return lines


_UNSET = object()


def _shown(value: object) -> str:
    return "unset" if value is _UNSET else json.dumps(value, sort_keys=True)
