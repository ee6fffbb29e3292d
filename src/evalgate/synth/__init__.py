"""Deterministic generators of the shipped data: the probe set and the synthetic corpus.

Pure like the core (grammar, lexicon and a seed in; records out; one `random.Random(seed)` per
build, never the global generator or set order), so the same seed gives byte-identical files on
any machine. Reading and writing files is left to `evalgate.commands.probes_build` and
`evalgate.commands.corpus_build`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


def jsonl_text(records: Iterable[dict[str, Any]]) -> str:
    """One JSON object per line, UTF-8 kept readable (ñ, á), keys in the order given."""
    return "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in records)
