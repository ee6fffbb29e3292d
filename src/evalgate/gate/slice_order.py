"""One reading order for slice keys ("family:value"), shared by the report, the CSV and the plot.

Families in the order of results.json (gate/slices.py), values in their natural order (en before es, tenses
from infinitive to future, 1sg before 3sg); anything unknown sorts alphabetically after.
"""

from __future__ import annotations

from typing import Any

from evalgate.gate.document import GateSettings, ResultsDocument
from evalgate.types import CATEGORIES, LABELS, LANGUAGES, PERSONS, REGULARITIES, TENSES

FAMILIES = ("overall", "language", "regularity", "tense", "person", "category", "reason_code", "label")
DEFAULT_GATED = ("overall", "language", "regularity", "tense", "person", "category")
_VALUES: dict[str, tuple[str, ...]] = {
    "language": LANGUAGES,
    "regularity": REGULARITIES,
    "tense": TENSES,
    "person": PERSONS,
    "category": CATEGORIES,
    "label": LABELS,
}


def slice_sort_key(key: str) -> tuple[int, int, str]:
    family, _, value = key.partition(":")
    f = FAMILIES.index(family) if family in FAMILIES else len(FAMILIES)
    values = _VALUES.get(family, ())
    v = values.index(value) if value in values else len(values)
    return (f, v, key)


def ordered(keys: Any) -> list[str]:
    return sorted(keys, key=slice_sort_key)


def family(key: str) -> str:
    return key.partition(":")[0]


def value(key: str) -> str:
    return key.partition(":")[2] or key


def gate_settings(results: ResultsDocument) -> GateSettings:
    """alpha, tolerance, min_n, z, ...: the comparison's own thresholds over the pinned config."""
    gate = GateSettings(**(results["config"].get("gate") or {}))
    gate.update((results.get("comparison") or {}).get("thresholds") or {})
    return gate


def gated_families(results: ResultsDocument) -> tuple[str, ...]:
    """The slice families the configuration gates (results.json keeps the pinned config)."""
    gate: GateSettings = results["config"].get("gate") or {}
    families = gate.get("slices")
    return tuple(families) if families else DEFAULT_GATED
