"""The coverage matrix as a table a reader checks at a glance (text, JSON rows, Markdown).

`evalgate validate` shows every cell with its count and its minimum (and maximum for an
adversarial category), and marks each cell outside its bounds, instead of only "coverage: OK".
The rows are probeset/coverage.py's `coverage_rows` (the rows results.json records), drawn here.
"""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from evalgate.probeset.coverage import ROW_FAMILIES, coverage_rows

_VERB_FAMILIES = frozenset(name for _, name in ROW_FAMILIES)


def count_header(rows: list[Any]) -> str:
    """The count column's name: "items" when every row is a multiple-choice suite's slice value
    (docs/suites.md calls them items), "probes" otherwise."""
    families = [r.get("family") for r in rows if isinstance(r, dict)]
    return "items" if families and not _VERB_FAMILIES.intersection(families) else "probes"


def _table(rows: list[dict[str, Any]], fmt: str) -> str:
    body = [
        [r["family"], r["cell"], r["n"], r["min"], "" if r["max"] is None else r["max"],
         "ok" if r["status"] == "ok" else f"**{r['status']}**" if fmt == "github" else r["status"]]
        for r in rows
    ]  # fmt: skip
    headers = ["family", "cell", count_header(rows), "min", "max", "status"]
    return tabulate(body, headers=headers, tablefmt=fmt)


def coverage_text(matrix: dict[str, Any], *, only_families: bool = False) -> str:
    """The plain-text table; `only_families` leaves out the per-verb rows (40 of them) unless short."""
    rows = coverage_rows(matrix)
    hidden = [r for r in rows if only_families and r["family"] == "verb" and r["status"] == "ok"]
    text = _table([r for r in rows if r not in hidden], "simple")
    if hidden:
        text += f"\n({len(hidden)} verb cells at or above their minimum not shown; --format json lists them)"
    return text


def coverage_markdown(matrix: dict[str, Any]) -> str:
    return _table(coverage_rows(matrix), "github")


def shortfalls(matrix: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in coverage_rows(matrix) if r["status"] != "ok"]
