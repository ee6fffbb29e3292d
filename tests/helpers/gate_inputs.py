"""Results, baselines and their files for the gate's tests that drive the command line without a
model (tests/gate/): 120 entries over two languages, every fifth one wrong unless told otherwise."""

from __future__ import annotations

import json
from pathlib import Path

from evalgate.gate.baseline import baseline_from_results
from helpers.factories import make_entry, make_results


def entries_of(prefix: str = "p", n: int = 120, wrong_every: int = 5) -> list[dict]:
    return [
        make_entry(f"{prefix}-{i:03d}", i % wrong_every != 0, language=("en", "es")[i % 2]) for i in range(n)
    ]


def baseline_of(entries: list[dict]) -> dict:
    return baseline_from_results(make_results(entries), "demo", {"git_commit": None, "pr_number": None})


def write_json(path: Path, doc: dict) -> str:
    """Write `doc` as JSON to `path`; the path as a command-line argument."""
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)
