"""The per-probe lists of the report: flipped, new, confident errors, review, per verb.

(The ordinal probes have their own section: report/ordinal.py.)

Each is a `Section` tied to a `Listing` of the budget, so the size cap can shorten it; a list
longer than FOLD_ROWS folds into <details>. Probe text only reaches Markdown through `table` cells.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalgate.gate.document import Comparison, ProbeEntry, ResultsDocument
from evalgate.gate.slice_order import value
from evalgate.report.budget import Budget, Section
from evalgate.report.markdown import count, details, num, table

FOLD_ROWS = 10  # lists longer than this fold into <details>


def probes_by_id(results: ResultsDocument) -> dict[str, ProbeEntry]:
    return {e["id"]: e for e in results["probes"]}


# A probe id listed in the comparison or the calibration lists but missing from `probes` (a
# hand-edited artifact) renders with empty cells: each lookup below takes `ProbeEntry | None`.


def _candidates(entry: ProbeEntry | None) -> str:
    return " / ".join(str(c.get("text", "")) for c in (entry.get("candidates") if entry else None) or [])


def _prompt(entry: ProbeEntry | None) -> str:
    if not entry:
        return "___"
    return str(entry.get("prompt") or (entry.get("context") or "") + "___")


def ids_of(items: Any) -> list[str]:
    out = []
    for item in items or []:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Mapping) and "id" in item:
            out.append(str(item["id"]))
    return out


def details_if_long(summary: str, body: str, n: int) -> str:
    """Fold a list of n rows into <details> when it is longer than FOLD_ROWS."""
    return details(summary, body) if n > FOLD_ROWS else body


def _folded(budget: Budget, key: str, summary: str, body: str, n: int) -> str:
    note = budget.note(key)
    return details_if_long(summary, f"{body}\n\n{note}" if note else body, n)


def flipped(results: ResultsDocument, budget: Budget, max_flipped: int) -> Section | None:
    comparison = results.get("comparison")
    if not comparison:
        return None
    lost = _flips(comparison, "right_to_wrong")
    won = _flips(comparison, "wrong_to_right")
    by_id = probes_by_id(results)
    head = f"### Flipped probes\n\n{len(lost):,} right → wrong, {len(won):,} wrong → right (shared probes)."
    if not lost:
        return Section(head)
    shown = budget.take(
        "flipped",
        sorted(lost),
        title="probes that flipped right → wrong",
        where="results.json `comparison.flipped`",
        cap=max_flipped,
    )
    rows = []
    for pid in shown:
        e = by_id.get(pid)
        expected, pred = (e.get("expected"), e.get("pred")) if e else (None, None)
        # right → wrong: the baseline chose the expected form unless the comparison says otherwise
        base = lost[pid] or expected
        rows.append([pid, _prompt(e), _candidates(e), expected, base, pred])
    body = table(["id", "prompt", "candidates", "expected", "baseline", "new"], rows)
    summary = f"{len(lost):,} probes flipped right → wrong"
    return Section(head + "\n\n" + _folded(budget, "flipped", summary, body, len(lost)), "flipped")


def _flips(comparison: Comparison, direction: str) -> dict[str, str | None]:
    """{id: baseline pred or None}; accepts {direction: [ids or {id, baseline_pred}]} or a flat list."""
    raw = comparison.get("flipped") or {}
    if isinstance(raw, Mapping):
        items = raw.get(direction) or []
    else:
        items = [i for i in raw if isinstance(i, Mapping) and i.get("direction") == direction]
    out: dict[str, str | None] = {}
    for item in items:
        if isinstance(item, Mapping):
            out[str(item.get("id"))] = item.get("baseline_pred")
        else:
            out[str(item)] = None
    return out


def per_verb(results: ResultsDocument, budget: Budget) -> Section | None:
    cells = results.get("per_verb") or {}
    if not cells:
        return None
    keys = budget.take("per_verb", sorted(cells), title="verbs", where="results.json `per_verb`")
    rows = []
    for key in keys:
        c = cells[key]
        n, k = int(c["n"]), int(c["correct"])
        rows.append(
            [value(key), key.partition(":")[0] if ":" in key else "", count(n), count(k), count(n - k)]
        )
    body: str = table(["verb", "language", "n", "correct", "wrong"], rows, "llrrr")
    body += "\n\nRaw counts only: with 2-4 probes per verb an interval would span most of 0-100% (seed 004)."
    note = budget.note("per_verb")
    body += f"\n\n{note}" if note else ""
    return Section("### Per verb\n\n" + details(f"Per-verb counts ({len(cells)} verbs)", body), "per_verb")


_MARKS: dict[bool | None, str] = {True: "✅", False: "❌"}


def new_probes(results: ResultsDocument, budget: Budget) -> Section | None:
    ids = ids_of((results.get("comparison") or {}).get("new_probes"))
    if not ids:
        return None
    by_id = probes_by_id(results)
    shown = budget.take(
        "new_probes", sorted(ids), title="new probes", where="results.json `comparison.new_probes`"
    )
    rows = []
    for pid in shown:
        e = by_id.get(pid)
        if e is None:
            rows.append([pid, "", _prompt(e), None, None, None])
            continue
        where = _where(e)
        ok = _MARKS.get(e.get("correct"), e.get("status"))
        rows.append([pid, where, _prompt(e), e.get("expected"), e.get("pred"), ok])
    body = table(["id", "slice", "prompt", "expected", "new", "right?"], rows)
    head = f"### New probes (reported, not gated)\n\n{len(ids):,} probe(s) the baseline never scored."
    return Section(
        head + "\n\n" + _folded(budget, "new_probes", f"{len(ids):,} new probes", body, len(ids)),
        "new_probes",
    )


def _where(entry: ProbeEntry) -> str:
    """The probe's slice values: language · tense · person, or an item's declared dimensions
    (docs/suites.md), after its suite's name when the run has several."""
    e: Mapping[str, Any] = entry
    dims = e.get("slices")
    if isinstance(dims, Mapping):
        parts = [f"{k}:{v}" for k, v in dims.items()]
    else:
        parts = [str(v) for v in (e.get("language"), e.get("tense"), e.get("person")) if v]
    if e.get("suite"):
        parts.insert(0, str(e["suite"]))
    return " · ".join(parts)


def probe_list(
    results: ResultsDocument, budget: Budget, key: str, ids: list[str], title: str, head: str
) -> Section | None:
    """A folded table of probes with their prediction and entropy (confident errors, review, ambiguous)."""
    if not ids:
        return None
    by_id = probes_by_id(results)
    shown = budget.take(key, ids, title=title, where=f"results.json `probes` ({key})")
    rows = []
    for pid in shown:
        e = by_id.get(pid)
        rows.append(
            [
                pid,
                _prompt(e),
                _candidates(e),
                e.get("expected") if e else None,
                e.get("pred") if e else None,
                num(e.get("confidence") if e else None),
                num(e.get("entropy_norm") if e else None),
            ]
        )
    body = table(["id", "prompt", "candidates", "expected", "pred", "confidence", "H/log K"], rows, "lllllrr")
    return Section(f"{head}\n\n" + _folded(budget, key, f"{len(ids):,} {title}", body, len(ids)), key)
