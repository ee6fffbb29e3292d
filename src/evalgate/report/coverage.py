"""REPORT.md's coverage matrix: every cell with its count and bounds, shortfalls marked.

Read from results.json `probe_set.coverage` (rows of report/coverage_table.py, written by
validation); a results.json without it (older, or coverage not checked) shows no section. A run with
several suites keeps each suite's rows in `probe_set.suites.SUITE.coverage`: one table per suite.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tabulate import tabulate

from evalgate.gate.document import ResultsDocument
from evalgate.report.budget import Section
from evalgate.report.coverage_table import count_header
from evalgate.report.markdown import Md, count, inline, table
from evalgate.report.suites import has_suites, suite_title


def coverage(results: ResultsDocument) -> Section | None:
    # `probe_set` is an object the schema leaves open: every key of it is read with .get.
    probe_set = results.get("probe_set")
    if not isinstance(probe_set, Mapping):
        return None
    # An item's slice values are the pull request's text: a run with suites escapes every cell.
    escape = has_suites(results)
    rows = probe_set.get("coverage")
    if isinstance(rows, list) and rows:
        return Section(f"### Coverage matrix\n\n{_details(rows, escape)}")
    per_suite = probe_set.get("suites")
    if not isinstance(per_suite, Mapping):
        return None
    parts = [
        f"#### {suite_title(results, str(name))}\n\n{_details(part['coverage'], escape)}"
        for name, part in per_suite.items()
        if isinstance(part, Mapping) and isinstance(part.get("coverage"), list) and part["coverage"]
    ]
    return Section("### Coverage matrix\n\n" + "\n\n".join(parts)) if parts else None


def _details(rows: list[Any], escape: bool) -> str:
    good = [r for r in rows if isinstance(r, Mapping)]
    short = [r for r in good if r.get("status") != "ok"]
    shown = [r for r in good if r.get("family") != "verb" or r.get("status") != "ok"]
    rendered = _escaped(shown) if escape else _plain(shown)
    hidden = len(good) - len(shown)
    note = f"\n\n{hidden} verb cells at or above their minimum are not listed." if hidden else ""
    head = f"{len(short)} cell(s) outside their bounds" if short else "every cell within its bounds"
    return f"<details><summary>{head}</summary>\n\n{rendered}{note}\n\n</details>"


def _escaped(shown: list[Mapping[str, Any]]) -> str:
    def number(v: Any) -> Any:
        return count(v) if isinstance(v, int) and not isinstance(v, bool) else v

    body = [
        [r.get("family"), r.get("cell"), number(r.get("n")), number(r.get("min")),
         Md("") if r.get("max") is None else number(r["max"]),
         Md("ok") if r.get("status") == "ok" else Md(f"**{inline(r.get('status'))}**")]
        for r in shown
    ]  # fmt: skip
    return table(["family", "cell", count_header(list(shown)), "min", "max", "status"], body, "llrrrl")


def _plain(shown: list[Mapping[str, Any]]) -> str:
    body = [
        [r.get("family"), r.get("cell"), r.get("n"), r.get("min"), "" if r.get("max") is None else r["max"],
         "ok" if r.get("status") == "ok" else f"**{r.get('status')}**"]
        for r in shown
    ]  # fmt: skip
    headers = ["family", "cell", count_header(list(shown)), "min", "max", "status"]
    return str(tabulate(body, headers=headers, tablefmt="github"))
