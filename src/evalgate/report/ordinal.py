"""The report's "Ordinal probes" section (docs/ordinal.md): per group, per item, and the human-review list.

Reads results.json "ordinal" (scoring/ordinal.py); a results file written before that section existed
is summarised from its probes on the fly, so an older result still renders. Two budget listings,
the items and the review list, so the size cap can shorten each; long ones fold into <details>.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from evalgate.gate.document import Ordinal, ResultsDocument
from evalgate.report.budget import Budget, Section
from evalgate.report.markdown import Md, count, num, table
from evalgate.report.probes import details_if_long, probes_by_id
from evalgate.scoring.ordinal import summarize
from evalgate.scoring.ordinal_types import OrdinalItem, OrdinalSummary
from evalgate.types import DEFAULT_REVIEW_ENTROPY

SPARK = "▁▂▃▄▅▆▇█"


def ordinal_section(
    results: ResultsDocument, review_entropy: float = DEFAULT_REVIEW_ENTROPY
) -> Ordinal | None:
    """results.json "ordinal", or the same computed from the probes of an older result."""
    given = results.get("ordinal")
    if isinstance(given, Mapping) and isinstance(given.get("items"), list):
        return given
    return summarize(results["probes"], review_entropy)


def sparkline(points: Sequence[Mapping[str, Any]]) -> str:
    """The renormalised surprisal -ln p of each point, low to high on the scale, as bars.

    One fixed scale for every item, from 0 nats (▁, certain) up to (7/3) ln K (█): a flat curve
    (every point at ln K) is a row of ▄, the middle of a bar rather than the edge between two, so
    a nearly flat curve reads flat instead of being stretched to full height by min-max scaling.
    """
    k = len(points)
    top = math.log(k) * (len(SPARK) - 1) / 3 if k > 1 else 1.0
    bars = []
    for pt in points:
        p = pt.get("p")
        s = top if not isinstance(p, int | float) or p <= 0 else min(top, -math.log(p))
        bars.append(SPARK[min(len(SPARK) - 1, int(s / top * (len(SPARK) - 1) + 0.5))])
    return "".join(bars)


def _flag(item: OrdinalItem) -> Md:
    if item["review"]:
        return Md("👀 review")
    return Md("ambiguous") if item.get("status") == "ambiguous" else Md("")


def sections(
    results: ResultsDocument, budget: Budget, review_entropy: float = DEFAULT_REVIEW_ENTROPY
) -> list[Section]:
    """The ordinal section and its review list; [] when the run has no ordinal probe."""
    section = ordinal_section(results, review_entropy)
    if not section:
        return []
    threshold = section["review_entropy"]
    items = section["items"]
    overall = section["overall"]
    out = [_items(section, items, overall, threshold, budget)]
    review = _review(results, section, items, threshold, budget)
    if review is not None:
        out.append(review)
    return out


def _items(
    section: Ordinal,
    items: list[OrdinalItem],
    overall: OrdinalSummary,
    threshold: float,
    budget: Budget,
) -> Section:
    head = (
        f"### Ordinal probes\n\n{len(items):,} item(s) judged on an ordinal scale (seed 002), reported"
        " apart from the verb-form accuracy and never gated. Over the"
        f" {count(overall['n'])} scored item(s): mean absolute error of the expected value"
        f" {num(overall['mae'], 2)}, of the argmin {num(overall.get('mae_argmin'), 2)}, mean normalised"
        f" entropy {num(overall['mean_entropy_norm'])}. The curve is each point's surprisal after"
        " renormalising over the scale (low bar = preferred; a row of ▄ is a flat curve);"
        f" above {threshold:g} normalised entropy an item needs human review."
    )
    group_rows = [
        [
            g,
            count(s["n"]),
            num(s["mae"], 2),
            num(s.get("mae_argmin"), 2),
            num(s["mean_entropy_norm"]),
            count(s.get("n_review")),
            count(s.get("n_ambiguous")),
        ]
        for g, s in section["groups"].items()
    ]
    group_table = table(
        ["group", "n", "MAE E[x]", "MAE argmin", "mean H/log K", "review", "ambiguous"],
        group_rows,
        "lrrrrrr",
    )
    shown = budget.take("ordinal", items, title="ordinal items", where="results.json `ordinal.items`")
    rows = [
        [
            i["id"],
            i["group"],
            Md(sparkline(i["points"])),
            i["argmin"],
            num(i["expectation"], 2),
            i.get("expected"),
            num(i.get("abs_error"), 2),
            num(i["entropy_norm"]),
            _flag(i),
        ]
        for i in shown
    ]
    body: str = table(
        ["id", "group", "curve", "argmin", "E[x]", "expected", "abs error", "H/log K", "note"],
        rows,
        "lllrrlrrl",
    )
    note = budget.note("ordinal")
    body += f"\n\n{note}" if note else ""
    folded = details_if_long(f"{len(items):,} ordinal items", body, len(items))
    return Section(f"{head}\n\n{group_table}\n\n{folded}", "ordinal")


def _review(
    results: ResultsDocument,
    section: Ordinal,
    items: list[OrdinalItem],
    threshold: float,
    budget: Budget,
) -> Section | None:
    ids = [str(i) for i in section["review"]]
    if not ids:
        return None
    by_item = {str(i["id"]): i for i in items}
    by_probe = probes_by_id(results)
    shown = budget.take(
        "ordinal_review", ids, title="ordinal items to review", where="results.json `ordinal.review`"
    )
    rows = []
    for pid in shown:
        i, e = by_item.get(pid), by_probe.get(pid)
        rows.append(
            [
                pid,
                e.get("prompt") if e else None,
                Md(sparkline((i.get("points") if i else None) or [])),
                i.get("expected") if i else None,
                num(i.get("entropy_norm") if i else None),
            ]
        )
    body: str = table(["id", "prompt", "curve", "expected", "H/log K"], rows, "lllrr")
    note = budget.note("ordinal_review")
    body += f"\n\n{note}" if note else ""
    head = (
        f"#### Needs human review ({len(ids):,})\n\nThe model cannot place these items: their curve is"
        f" nearly flat (normalised entropy above {threshold:g}). Check the wording and the expected point"
        " before trusting their numbers."
    )
    return Section(
        f"{head}\n\n" + details_if_long(f"{len(ids):,} items to review", body, len(ids)), "ordinal_review"
    )
