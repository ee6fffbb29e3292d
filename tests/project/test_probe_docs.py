"""docs/probes.md is generated from the probe schema; it fails here when they drift apart."""

from __future__ import annotations

import copy

import pytest
from helpers.paths import REPO

from evalgate.probeset import field_docs as probe_docs
from evalgate.probeset import records as probes

DOC = REPO / "docs" / "probes.md"


def test_the_committed_field_reference_matches_the_schema():
    assert DOC.read_text(encoding="utf-8") == probe_docs.render(), (
        "docs/probes.md is stale: run `.venv/bin/python scripts/gen_probe_docs.py`"
    )


def test_every_field_of_the_schema_is_in_the_reference_with_its_values():
    text = probe_docs.render()
    schema = probes.probe_schema()
    for field, spec in schema["properties"].items():
        row = next(line for line in text.splitlines() if line.startswith(f"| `{field}` |"))
        for value in spec.get("enum", []):
            assert f"`{value}`" in row
        if "maxLength" in spec:
            assert f"max length {spec['maxLength']}" in row


def test_a_schema_change_changes_the_reference(monkeypatch):
    changed = copy.deepcopy(probes.probe_schema())
    changed["properties"]["language"]["enum"].append("fr")
    monkeypatch.setattr(probe_docs, "probe_schema", lambda: changed)
    assert "`fr`" in probe_docs.render() and probe_docs.render() != DOC.read_text(encoding="utf-8")
    del changed["properties"]["kind"]
    with pytest.raises(ValueError):
        probe_docs.render()  # a documented field the schema lost


def test_the_committed_item_reference_matches_the_item_schema():
    text = probe_docs.render_items()
    assert (REPO / "docs" / "items.md").read_text(encoding="utf-8") == text, (
        "docs/items.md is stale: run `.venv/bin/python scripts/gen_probe_docs.py`"
    )
    for field in ("id", "prompt", "candidates", "expected", "slices", "kind", "explanation", "source"):
        assert f"| `{field}` |" in text
    assert "| `slices` | yes | object |" in text
