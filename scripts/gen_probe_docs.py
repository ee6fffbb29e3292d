"""Write docs/probes.md and docs/items.md from their schemas: `.venv/bin/python scripts/gen_probe_docs.py`."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from evalgate.edges.files import atomic_write_text  # noqa: E402
from evalgate.probeset.field_docs import render, render_items  # noqa: E402

if __name__ == "__main__":
    atomic_write_text(REPO / "docs" / "probes.md", render())
    atomic_write_text(REPO / "docs" / "items.md", render_items())
    print("wrote docs/probes.md and docs/items.md")
