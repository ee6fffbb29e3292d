"""The power document of gate/power.py for people: a table (text), and annotations (github).

`evalgate power` prints the whole table; `validate` and `init` print the short one (the MDE at the
typical rates, after their own output). docs/gate.md, "What your suite can see", reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tabulate import tabulate

from evalgate.report.findings import escape_data

NOT_REACHED = "n/a"  # no drop the slice can have is detected with power 0.8


def _pts(x: float | None) -> str:
    return NOT_REACHED if x is None else f"{100 * x:.1f}"


def _whole(x: float) -> str:
    """10 points as "10", 2.5 as "2.5"."""
    return f"{round(100 * x, 2):g}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _rate(x: float) -> str:
    return f"{100 * x:.1f}%" if round(100 * x, 1) != round(100 * x) else f"{100 * x:.0f}%"


def _needed(n: int | None, doc: Mapping[str, Any], tolerance: float) -> str:
    if n is not None:
        return f"{n:,}"
    if doc["drop"] <= tolerance + 1e-9:
        return "never"  # a drop within the tolerance is what the test lets through
    return f">{doc['items_needed_max']:,}"


def _note(row: Mapping[str, Any]) -> str:
    if row.get("cannot_fail"):
        return "cannot fail: " + row["cannot_fail"]
    return "low power" if row["low_power"] else ""


def _level(doc: Mapping[str, Any]) -> str:
    if doc["rule"] == "wilson":
        return "wilson rule (the baseline above the new Wilson upper bound + tolerance), no multiplicity"
    method = "Westfall-Young" if doc["multiplicity"] == "westfall-young" else "Holm"
    ppl = doc.get("perplexities") or 0
    family = f"{doc['gated']} gated slice(s)" + (f" and {ppl} perplexity check(s)" if ppl else "")
    return (
        f"exact paired test at alpha {doc['alpha']}, {method} over {family}: "
        f"a slice's first step is at {doc['level']:.3g}"
    )


def _at_reference(doc: Mapping[str, Any]) -> str:
    """ " at 5% disagreement", the background "low power" is judged at, as compare judges it
    (gate/power.py, `judge`); nothing under the wilson rule, which has none."""
    rate = doc.get("reference_disagreement")
    return "" if rate is None else f" at {_rate(rate)} disagreement"


def _headline(doc: Mapping[str, Any]) -> str:
    """One line: how many gated slices cannot see a drop of gate.mde_max."""
    gated = [r for r in doc["slices"] if r["gated"]]
    if not gated:
        return (
            "no slice is gated: every slice holds fewer items than its min_n, so the paired test sees "
            "nothing (floors, gate.min_accuracy, still hold)"
        )
    weak = [r for r in gated if r["low_power"]]
    at = _at_reference(doc)
    if not weak:
        return f"every gated slice can see a drop of {_whole(doc['mde_max'])} points (gate.mde_max){at}"
    return (
        f"{len(weak)} of {len(gated)} gated slice(s) cannot see a drop of {_whole(doc['mde_max'])} points "
        f"(gate.mde_max){at}: a pass there is weak evidence"
    )


def _rows(doc: Mapping[str, Any], short: bool) -> tuple[list[str], list[list[str]]]:
    drop = _whole(doc["drop"])
    measured = doc["disagreement"] == "measured"
    rates = doc["disagreements"]
    headers = ["slice", "items", "baseline", "tol"]
    if measured:
        headers += ["disagreement", "MDE"]
    else:
        headers += [f"MDE {_rate(rates[0])}", *(_rate(r) for r in rates[1:])]
    if not short:
        if measured:
            headers.append(f"items for -{drop} pts")
        else:
            headers.append(f"items for -{drop} pts: " + " / ".join(_rate(r) for r in rates))
    # the figure "low power" is judged by, the gate's own (gate/power.py, `judge`)
    headers.append(f"gate MDE{_at_reference(doc).replace(' disagreement', '')}")
    # what that figure means for the slice: "low power", "cannot fail: ...", or nothing
    headers.append("power")
    body = []
    for row in doc["slices"]:
        if not row["gated"]:
            continue
        line = [row["slice"], f"{row['n']:,}", _pct(row["baseline_accuracy"]), _pts(row["tolerance"])]
        if measured:
            line.append(_pct(row["at"][0]["disagreement"]))
        line += [_pts(x["mde"]) for x in row["at"]]
        if not short:
            line.append(" / ".join(_needed(x["items_needed"], doc, row["tolerance"]) for x in row["at"]))
        line.append(_pts(row.get("mde")))
        line.append(_note(row))
        body.append(line)
    return headers, body


def power_text(doc: Mapping[str, Any], *, short: bool = False, title: str | None = None) -> str:
    """The table: one row per gated slice, the slices not gated named after it."""
    lines = [title or "evalgate power: the smallest drop each gated slice detects with power 0.8 (MDE)"]
    lines.append(f"  test: {_level(doc)}")
    if doc["disagreement"] == "measured":
        lines.append("  disagreement: measured per slice between the two checkpoints")
    else:
        lines.append(
            "  disagreement: "
            + ", ".join(_rate(r) for r in doc["disagreements"])
            + " (typical rates between equally good checkpoints; measure yours: "
            "evalgate power --checkpoint A --against B)"
        )
    if doc["baseline"]:
        lines.append(f"  baseline accuracy: per slice, from {doc['baseline']}")
    elif doc.get("baseline_note"):
        lines.append(f"  baseline accuracy: none known ({doc['baseline_note']})")
    else:
        lines.append("  baseline accuracy: none known (see the assumptions)")
    headers, body = _rows(doc, short)
    if body:
        table = tabulate(body, headers=headers, tablefmt="simple", disable_numparse=True)
        lines += ["", *("  " + x.rstrip() for x in str(table).splitlines())]
    lines += ["", "  " + _headline(doc)]
    skipped = [r for r in doc["slices"] if not r["gated"]]
    if skipped:
        shown = ", ".join(f"{r['slice']} ({r['n']})" for r in skipped[:12])
        more = f" and {len(skipped) - 12} more" if len(skipped) > 12 else ""
        lines.append(f"  not gated (fewer items than min_n): {shown}{more}")
    if any(x["mde"] is None for r in doc["slices"] for x in r["at"]):
        lines.append(f"  {NOT_REACHED}: not even the largest drop the slice can have is seen with power 0.8")
    floors = doc.get("suggested_floors")
    if floors:
        listed = ", ".join(f"{k} {v:.2f}" for k, v in floors.items())
        lines.append(
            f"  floors for the low-power slices (init's rule, docs/gate.md; gate.min_accuracy): {listed}"
        )
    if short:
        lines.append("  `evalgate power` shows the items each slice needs and what these figures assume")
    else:
        lines += ["", "  assumptions:", *(f"  - {a}" for a in doc["assumptions"])]
    return "\n".join(lines)


def power_annotations(doc: Mapping[str, Any]) -> str:
    """`--format github`: a warning per low-power gated slice, and a notice with the headline."""
    out = []
    at = _at_reference(doc)
    for row in doc["slices"]:
        if not (row["gated"] and row["low_power"]):
            continue
        if row.get("cannot_fail"):
            what = f"cannot fail at all ({row['cannot_fail']})"
        elif row.get("mde") is None:
            what = "cannot see any drop it can have with power 0.8"
        else:
            what = f"cannot see drops smaller than {_pts(row['mde'])} points{at}"
        message = f"{row['slice']} ({row['n']} items): {what} (gate.mde_max: {_whole(doc['mde_max'])} points)"
        out.append(f"::warning title=evalgate power::{escape_data(message)}")
    level = "warning" if not any(r["gated"] for r in doc["slices"]) else "notice"
    out.append(f"::{level} title=evalgate power::{escape_data(_headline(doc))}")
    return "\n".join(out)
