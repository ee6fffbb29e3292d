"""REPORT.md's coverage matrix: every cell with its count and bounds, shortfalls marked.

Read from results.json `probe_set.coverage` (rows of report/coverage_table.py, written by
validation); a results.json without it (older, or coverage not checked) shows no section.
"""

from __future__ import annotations

from collections.abc import Mapping

from tabulate import tabulate

from evalgate.gate.document import ResultsDocument
from evalgate.report.budget import Section


def coverage(results: ResultsDocument) -> Section | None:
    # `probe_set` is an object the schema leaves open: every key of it is read with .get.
    probe_set = results.get("probe_set")
    rows = probe_set.get("coverage") if isinstance(probe_set, Mapping) else None
    if not isinstance(rows, list) or not rows:
        return None
    good = [r for r in rows if isinstance(r, Mapping)]
    short = [r for r in good if r.get("status") != "ok"]
    shown = [r for r in good if r.get("family") != "verb" or r.get("status") != "ok"]
    body = [
        [r.get("family"), r.get("cell"), r.get("n"), r.get("min"), "" if r.get("max") is None else r["max"],
         "ok" if r.get("status") == "ok" else f"**{r.get('status')}**"]
        for r in shown
    ]  # fmt: skip
    table = tabulate(body, headers=["family", "cell", "probes", "min", "max", "status"], tablefmt="github")
    hidden = len(good) - len(shown)
    note = f"\n\n{hidden} verb cells at or above their minimum are not listed." if hidden else ""
    head = f"{len(short)} cell(s) outside their bounds" if short else "every cell within its bounds"
    return Section(
        f"### Coverage matrix\n\n<details><summary>{head}</summary>\n\n{table}{note}\n\n</details>"
    )
