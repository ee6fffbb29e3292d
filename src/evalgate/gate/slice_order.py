"""One reading order for slice keys ("family:value"), shared by the report, the CSV and the plot.

Families in the order of results.json (gate/slices.py), values in their natural order (en before es, tenses
from infinitive to future, 1sg before 3sg); anything unknown sorts alphabetically after. A run with
several suites also has "SUITE/overall" and "SUITE/family:value" keys: they follow the run's own
keys, suite by suite (alphabetically), each suite in the same order as a run of that suite alone.
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


def slice_sort_key(key: str) -> tuple[int, str, int, int, str]:
    suite, inner = split_suite(key)
    family, _, value = inner.partition(":")
    f = FAMILIES.index(family) if family in FAMILIES else len(FAMILIES)
    values = _VALUES.get(family, ())
    v = values.index(value) if value in values else len(values)
    return (0 if suite is None else 1, suite or "", f, v, inner)


def split_suite(key: str) -> tuple[str | None, str]:
    """("quiz", "topic:x") for "quiz/topic:x"; (None, key) for a key of the whole run."""
    head, sep, tail = key.partition(":")
    if "/" not in head:
        return None, key
    suite, _, family = head.partition("/")
    return suite, family + sep + tail


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
