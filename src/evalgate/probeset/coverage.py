"""The coverage matrix (docs/validate.md, "Coverage") and one finding per short cell.

Counted on the probes that will be scored: live (not deprecated), and not excluded by the leak
policy, since the gate reads only those. Core cells count core probes; the adversarial cells
count adversarial probes by reason_code. Every cell of the grid is listed, zero counts included,
so a report can show what is missing and not only what is there.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evalgate.probeset.grammar import Grammar
from evalgate.probeset.records import expected_category
from evalgate.types import LANGUAGES, PERSONS, REGULARITIES, TENSES, Finding, Probe


@dataclass(frozen=True)
class CoverageConfig:
    """`coverage:` of evalgate.yml (config.py builds it; defined here, the core imports no config)."""

    per_language: int
    per_regularity: int
    per_tense: int
    per_person: int
    adversarial_total: int
    adversarial_per_category_min: int
    adversarial_per_category_max: int
    adversarial_categories: tuple[str, ...]  # reason_codes that must each have min..max probes
    regular_verb_min: int
    irregular_verb_min: int


HINT_CORE = "add core probes for the short cells (or lower the threshold under `coverage:` in evalgate.yml)"
HINT_ADV = (
    "add or retire adversarial probes of that reason_code (thresholds under `coverage:` in evalgate.yml)"
)


def _cells(counts: Counter[str], keys: Iterable[str], minimum: int) -> dict[str, dict[str, int]]:
    return {k: {"n": counts.get(k, 0), "min": minimum} for k in keys}


def coverage_matrix(
    probes: Sequence[Probe], rules: CoverageConfig, grammar: Grammar | None, excluded: Iterable[str] = ()
) -> dict[str, Any]:
    """Counts per cell with their thresholds; JSON-able, keys in a fixed order."""
    left_out = set(excluded)
    live = [p for p in probes if not p.deprecated and p.id not in left_out]
    # Ordinal probes (scoring/ordinal.py) judge sentences on a scale: they are reported apart and
    # fill no verb-form cell.
    ordinal = [p for p in live if p.kind == "ordinal"]
    live = [p for p in live if p.kind != "ordinal"]
    core = [p for p in live if p.category == "core"]
    adv = [p for p in live if p.category == "adversarial"]
    matrix: dict[str, Any] = {
        "language": _cells(Counter(p.language for p in core), LANGUAGES, rules.per_language),
        "regularity": _cells(Counter(p.regularity for p in core), REGULARITIES, rules.per_regularity),
        "tense": _cells(Counter(p.tense for p in core), TENSES, rules.per_tense),
        "person": _cells(Counter(p.person for p in core), PERSONS, rules.per_person),
    }
    if grammar is not None:
        per_verb = Counter(f"{p.language}:{p.verb}" for p in core)
        verbs: dict[str, dict[str, int]] = {}
        for language in LANGUAGES:
            for v in grammar.of_language(language):
                minimum = rules.regular_verb_min if v.regularity == "regular" else rules.irregular_verb_min
                key = f"{language}:{v.infinitive}"
                verbs[key] = {"n": per_verb.get(key, 0), "min": minimum}
        matrix["verb"] = verbs
    by_code = Counter(p.reason_code or "(none)" for p in adv)
    codes = list(rules.adversarial_categories) + sorted(set(by_code) - set(rules.adversarial_categories))
    matrix["adversarial_total"] = {"n": len(adv), "min": rules.adversarial_total}
    matrix["adversarial_category"] = {
        code: {
            "n": by_code.get(code, 0),
            # codes outside the configured list are counted, never checked
            "min": rules.adversarial_per_category_min if code in rules.adversarial_categories else 0,
            "max": rules.adversarial_per_category_max if code in rules.adversarial_categories else None,
        }
        for code in codes
    }
    matrix["n_core"] = len(core)
    matrix["n_adversarial"] = len(adv)
    matrix["n_ordinal"] = len(ordinal)
    return matrix


def _no_file(category: str) -> str:
    where = "whose name contains" if category == "adversarial" else "whose name does not contain"
    return f" (no probe file here holds {category} probes: they go in a file {where} 'adversarial')"


def coverage_findings(
    matrix: dict[str, Any],
    core_file: str | None,
    adv_file: str | None,
    probes: Sequence[Probe] = (),
    retired: Sequence[Probe] = (),
) -> list[Finding]:
    """One finding per cell below its minimum (or above its maximum), saying by how much.

    A category over its maximum is located at its first probe past the maximum (file order of
    `probes`, the scored ones). A short cell is located at a `retired` probe of that cell
    (deprecated, or left out as a leak) when there is one: retiring it is what made the cell short.
    """
    out: list[Finding] = []

    def short_at(family: str, key: str) -> tuple[dict[str, Any], str]:
        kinds = [p for p in retired if p.kind != "ordinal"]
        if family == "adversarial_total":
            hits = [p for p in kinds if p.category == "adversarial"]
        elif family == "adversarial_category":
            hits = [p for p in kinds if p.category == "adversarial" and (p.reason_code or "(none)") == key]
        else:
            value = {
                "language": lambda p: p.language,
                "regularity": lambda p: p.regularity,
                "tense": lambda p: p.tense,
                "person": lambda p: p.person,
                "verb": lambda p: f"{p.language}:{p.verb}",
            }[family]
            hits = [p for p in kinds if p.category == "core" and value(p) == key]
        if not hits:
            return {}, ""
        first = hits[0]
        why = "deprecated" if first.deprecated else "left out as a leak"
        note = f"; {len(hits)} retired probe(s) of this cell are not counted, e.g. {first.id} ({why})"
        return {"file": first.file, "line": first.line, "probe_id": first.id}, note

    core_note = "" if core_file else _no_file("core")
    adv_note = "" if adv_file else _no_file("adversarial")
    for family in ("language", "regularity", "tense", "person", "verb"):
        for key, cell in matrix.get(family, {}).items():
            if cell["n"] < cell["min"]:
                short = cell["min"] - cell["n"]
                at, note = short_at(family, key)
                out.append(
                    Finding(
                        "coverage",
                        f"{family} {key}: {cell['n']} core probe(s), needs at least {cell['min']} "
                        f"({short} short){core_note}{note}",
                        **{"file": core_file, **at},
                        field=family,
                        hint=HINT_CORE,
                        evidence={"cell": f"{family}:{key}", "n": cell["n"], "min": cell["min"]},
                    )
                )
    total = matrix["adversarial_total"]
    if total["n"] < total["min"]:
        at, note = short_at("adversarial_total", "")
        out.append(
            Finding(
                "coverage",
                f"adversarial total: {total['n']} probe(s), needs at least {total['min']} "
                f"({total['min'] - total['n']} short){adv_note}{note}",
                **{"file": adv_file, **at},
                field="category",
                hint=HINT_ADV,
                evidence={"cell": "adversarial_total", **total},
            )
        )
    for code, cell in matrix["adversarial_category"].items():
        n, lo, hi = cell["n"], cell["min"], cell["max"]
        at = {}
        if n < lo:
            at, note = short_at("adversarial_category", code)
            msg = f"adversarial {code}: {n} probe(s), needs {lo} to {hi} ({lo - n} short){adv_note}{note}"
        elif hi is not None and n > hi:
            msg = f"adversarial {code}: {n} probe(s), at most {hi} allowed ({n - hi} over)"
        else:
            continue
        of_code = [
            p
            for p in probes
            if p.category == "adversarial" and p.kind != "ordinal" and (p.reason_code or "(none)") == code
        ]
        extra = of_code[hi] if hi is not None and n > hi and len(of_code) > hi else None
        if extra is not None:
            msg += f"; the first past the maximum is {extra.id}"
        out.append(
            Finding(
                "coverage",
                msg,
                file=extra.file if extra else at.get("file", adv_file),
                line=extra.line if extra else at.get("line"),
                probe_id=extra.id if extra else at.get("probe_id"),
                field="reason_code",
                hint=HINT_ADV,
                evidence={"cell": f"adversarial_category:{code}", **cell},
            )
        )
    return out


def reason_code_findings(probes: Sequence[Probe], categories: Sequence[str]) -> list[Finding]:
    """Adversarial probes whose reason_code is a near miss of a configured category (a typo).

    A code far from every category is a category of its own (counted, never checked); one a letter
    or two away from PAST-IRREG is PAST-IRREG mistyped, and would silently leave that cell.
    """
    out: list[Finding] = []
    known = list(categories)
    for p in probes:
        if p.deprecated or p.kind == "ordinal" or p.category != "adversarial" or not p.reason_code:
            continue
        if p.reason_code in known:
            continue
        close = difflib.get_close_matches(p.reason_code, known, n=1, cutoff=0.8)
        if close:
            out.append(
                Finding(
                    "reason-code-unknown",
                    f"'{p.reason_code}' is not one of the adversarial categories "
                    f"(did you mean '{close[0]}'?)",
                    p.file,
                    p.line,
                    p.id,
                    "reason_code",
                    "use one of `coverage.adversarial_categories` in evalgate.yml: " + ", ".join(known),
                )
            )
    return out


def checked_coverage(
    matrix: dict[str, Any],
    file_names: Sequence[str],
    probes: Sequence[Probe],
    excluded: frozenset[str],
    complete: bool,
    unreadable: int,
) -> tuple[list[Finding], list[Finding]]:
    """(the coverage findings, the warning that coverage was not checked).

    Checked only on a `complete` set (every probe file read, every record parsed): a probe we
    could not read would make a cell look short. `unreadable` counts the records not read.
    """
    if not complete:
        return [], [
            Finding(
                "coverage-skipped",
                f"coverage not checked: {unreadable} probe record(s) could not be read"
                if unreadable
                else "coverage not checked: a probe file could not be read",
                hint="fix the problems above; coverage is checked on a readable set",
            )
        ]
    core_file = next((f for f in file_names if expected_category(f) == "core"), None)
    adv_file = next((f for f in file_names if expected_category(f) == "adversarial"), None)
    scored = [p for p in probes if not p.deprecated and p.id not in excluded]
    retired = [p for p in probes if p.deprecated or p.id in excluded]
    return coverage_findings(matrix, core_file, adv_file, scored, retired), []


# (the matrix's key, the row's family), in the order a table lists them
ROW_FAMILIES = (
    ("language", "language"),
    ("regularity", "regularity"),
    ("tense", "tense"),
    ("person", "person"),
    ("verb", "verb"),
    ("adversarial_total", "adversarial"),
    ("adversarial_category", "adversarial category"),
)
SHORT = "SHORT"
OVER = "OVER"


def coverage_rows(matrix: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per cell: {"family", "cell", "n", "min", "max", "status"}; status "ok", SHORT, OVER."""
    rows = []
    # a multiple-choice suite's cells: live items per declared slice value (probeset/items.py)
    families = [*ROW_FAMILIES, *((k, k.removeprefix("slices.")) for k in matrix if k.startswith("slices."))]
    for key, family in families:
        cells = matrix.get(key)
        if not isinstance(cells, dict):
            continue
        if "n" in cells:  # a single cell (adversarial_total)
            cells = {"total": cells}
        for cell, c in cells.items():
            n, lo, hi = c.get("n", 0), c.get("min", 0), c.get("max")
            status = SHORT if n < lo else OVER if hi is not None and n > hi else "ok"
            rows.append({"family": family, "cell": cell, "n": n, "min": lo, "max": hi, "status": status})
    return rows
