"""What a run with `suites:` (docs/suites.md) adds to the report, read from results.json alone.

A run with several suites names its slices "SUITE/overall" and "SUITE/dim:value" beside the whole
run's `overall`; the report shows one table per suite (`by_suite`). A run with multiple-choice items
shows each slice's chance level (mean 1/K over its scored items, gate/floors.py) beside its accuracy,
and the absolute floors (`gate.min_accuracy`) when the configuration sets any. A run without
`suites:` (the verb-forms demo) takes none of these paths, so its report keeps its bytes.

Pure: the results dict in, plain values out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evalgate.gate.document import ResultsDocument
from evalgate.gate.slice_order import gated_families, ordered, split_suite
from evalgate.report.markdown import inline

FLOOR_FAILED = ("below", "missing")


def doc(results: ResultsDocument) -> Mapping[str, Any]:
    """The document as a plain mapping: the keys suites add (`floors`, `config.suites`, `config.test`,
    an item's `slices`) are not in the typed contract (gate/document.py), so they are read with .get."""
    return results


def suite_kinds(results: ResultsDocument) -> dict[str, str]:
    """{suite name: kind} in the order the configuration declares them; {} for a run without suites."""
    suites = (doc(results).get("config") or {}).get("suites")
    if not isinstance(suites, Mapping):
        return {}
    declared = [split_suite(f)[0] for f in gated_families(results)]
    names = [s for s in dict.fromkeys(declared) if s is not None and s in suites]
    names += sorted(s for s in suites if s not in names)
    kinds = {}
    for s in names:
        part = suites[s]
        kinds[str(s)] = str((part.get("kind") if isinstance(part, Mapping) else None) or "?")
    return kinds


def has_suites(results: ResultsDocument) -> bool:
    return bool(suite_kinds(results))


def multi_suite(results: ResultsDocument) -> bool:
    return len(suite_kinds(results)) > 1


def has_items(results: ResultsDocument) -> bool:
    """Whether any probe is a multiple-choice item (its dimensions in `slices`, docs/suites.md)."""
    return any(isinstance(e.get("slices"), Mapping) for e in doc(results).get("probes") or ())


def chance(results: ResultsDocument) -> dict[str, float]:
    """slice key -> chance level, for a run with multiple-choice items; {} otherwise."""
    if not has_items(results):
        return {}
    # imported here: gate/floors.py reaches numpy (gate/stats.py), which the PR comment job, a
    # user of this module, does not install (tests/github/test_comment_trusted.py)
    from evalgate.gate.floors import chance_levels

    return chance_levels(doc(results)["probes"])


def floors(results: ResultsDocument) -> dict[str, Mapping[str, Any]]:
    """results.json `floors` (gate/floors.py): slice key -> floor, accuracy, n, chance, status."""
    given = doc(results).get("floors")
    if not isinstance(given, Mapping):
        return {}
    # not in the results schema: a hand-edited artifact may hold anything, so only numbers pass
    return {
        str(k): {
            "min_accuracy": _number(v.get("min_accuracy")),
            "accuracy": _number(v.get("accuracy")),
            "chance": _number(v.get("chance")),
            "n": n if isinstance(n := v.get("n"), int) and not isinstance(n, bool) else None,
            "status": str(v.get("status")),
        }
        for k, v in given.items()
        if isinstance(v, Mapping)
    }


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def failed_floors(results: ResultsDocument) -> dict[str, Mapping[str, Any]]:
    return {k: f for k, f in floors(results).items() if f.get("status") in FLOOR_FAILED}


def test_skipped(results: ResultsDocument) -> bool:
    """The configuration sets `test: null`: perplexity was not measured, on purpose."""
    config = doc(results).get("config") or {}
    return "test" in config and config["test"] is None


def by_suite(results: ResultsDocument, keys: Iterable[str]) -> list[tuple[str | None, list[str]]]:
    """The keys in slice order, grouped: the whole run's (None) first, then each suite's in the
    configuration's order (a suite the configuration does not name follows, alphabetically)."""
    groups: dict[str | None, list[str]] = {None: []}
    groups.update({s: [] for s in suite_kinds(results)})
    for key in ordered(keys):
        groups.setdefault(split_suite(key)[0], []).append(key)
    return [(s, ks) for s, ks in groups.items() if ks]


def suite_title(results: ResultsDocument, suite: str | None) -> str:
    """ "Suite quiz (multiple-choice)", or "Whole run" for the keys of no suite."""
    return "Whole run" if suite is None else f"Suite {suite_label(results, suite)}"


def suite_label(results: ResultsDocument, suite: str) -> str:
    """ "quiz (multiple-choice)": the suite's name and kind, as inline Markdown."""
    kind = suite_kinds(results).get(suite)
    return f"{inline(suite)}" + (f" ({inline(kind)})" if kind else "")


def doc_entry(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    """A probe entry as a plain mapping: `suite` and an item's `slices` are not typed keys."""
    return entry
