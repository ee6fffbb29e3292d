"""`evalgate baseline anchor`: mark the current baselines/NAME.json as the anchor.

Drift is measured from the anchor (docs/gate.md, "Drift"): the first baseline, until a maintainer
marks a later one. The command appends an `anchor` line to baselines/history/NAME.jsonl and keeps
the baseline's bytes as NAME.anchor.json, all or nothing. In a pull request it is a change of the
gate's history, which the gate accepts only under the label evalgate:update-baseline
(docs/approval.md).
"""

from __future__ import annotations

import argparse

from evalgate.config import load_config
from evalgate.console import Console
from evalgate.edges.files import refused_if_unwritable
from evalgate.errors import EXIT_PASS
from evalgate.pipeline import anchor_baseline, baseline_name, display_path


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(args.config)
    name = baseline_name(args.name, None)
    with refused_if_unwritable(
        f"baselines/history/{name}.anchor.json",
        "the anchor",
        "the anchor goes to baselines/history/ beside the baseline: make that folder writable",
    ):
        path, changed = anchor_baseline(cfg, name)
    if changed:
        print(f"evalgate: baselines/{name}.json is the anchor now ({display_path(cfg, path)})")
    else:
        print(f"evalgate: baselines/{name}.json is already the anchor; nothing changed")
    return EXIT_PASS
