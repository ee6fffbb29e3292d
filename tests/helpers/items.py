"""Multiple-choice item files for suite tests (docs/suites.md): questions no model knows."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

WORDS = ["river", "stone", "cloud", "garden", "window", "summer", "engine", "letter"]


def write_items(
    path: Path, prefix: str, n: int, seed: int, topics: Sequence[str] = ("astronomy", "biology", "chemistry")
) -> None:
    """n four-way questions cycling through `topics`; the expected answer is drawn at random, so a
    model scores them at chance."""
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        cands = rng.sample(WORDS, 4)
        rec = {
            "id": f"{prefix}-{i:03d}",
            "prompt": f"Which word goes with question {i} of set {prefix}?",
            "candidates": cands,
            "expected": rng.choice(cands),
            "slices": {"topic": topics[i % len(topics)]},
        }
        lines.append(json.dumps(rec))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
