"""The sections of a scored run's report, each a pure function of the results dict.

Every string taken from the results (probe text, ids, reason codes, file names) goes through
`markdown.inline` or a `markdown.table` cell; every long list goes through the `Budget`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from evalgate.gate.document import Comparison, LeakSummary, ResultsDocument, Slice, SliceComparison
from evalgate.gate.slice_order import family, gate_settings, gated_families, ordered
from evalgate.gate.stats import p_is, wilson_interval
from evalgate.gate.westfall_young import adjustment_name
from evalgate.report import suites
from evalgate.report.budget import Budget, Section
from evalgate.report.markdown import (
    Md,
    count,
    details,
    doc,
    inline,
    interval,
    pct,
    points,
    pvalue,
    size_points,
    table,
)
from evalgate.report.probes import ids_of

STATUS_TEXT = {
    "ok": "✅ ok",
    "regressed": "❌ regressed",
    "inconclusive": "⚠️ inconclusive",
    "too_small": "⚪ too small to gate",
    "new": "🆕 new",
    "not_comparable": "⚪ not comparable",
}


def _status_text(row: SliceComparison) -> str:
    text = STATUS_TEXT.get(row["status"], inline(row["status"]))
    if row.get("underpowered") and row["status"] in ("ok", "regressed", "inconclusive"):
        text += " · low power"
    return text


# -- the gate ----------------------------------------------------------------------------------------


def gated_table(results: ResultsDocument) -> Section:
    comparison: Comparison = results.get("comparison") or {}
    gate = gate_settings(results)
    rows_in: Mapping[str, SliceComparison] = comparison.get("slices") or {}
    rule = comparison.get("rule") or gate.get("rule") or "?"
    if rule == "wilson":
        how = (
            "a slice regresses when the baseline lies above the new Wilson upper bound plus the"
            " tolerance; p (the exact non-inferiority test of a drop beyond the tolerance) is shown"
            " for information"
        )
    else:
        how = (
            'a slice regresses when the exact non-inferiority test of H0 "the true drop is at most'
            f' the tolerance", {adjustment_name(comparison)}-adjusted across the gated slices, is below'
            f" alpha and the observed drop exceeds the tolerance ({doc('docs/gate.md')})"
        )
    head = (
        f"### Gated slices\n\nAgainst {inline(comparison.get('baseline', '?'))}, rule **{inline(rule)}**"
        f" (alpha {gate.get('alpha', '?')}, tolerance {size_points(gate.get('tolerance'))} pts,"
        f" min_n {gate.get('min_n', '?')}): {how}. n counts the probes both runs scored; Δ is in"
        " percentage points; MDE is the smallest drop the rule would catch at this n with 80% power"
        f' ("low power": above {size_points(gate.get("mde_max"))} pts, gated all the same, a pass there is'
        " weak evidence; a drop beyond the tolerance that its test does not flag is inconclusive, not a"
        " pass, unless a floor decides the slice)."
    )
    tally = [f"{comparison['n_paired']:,} probes paired"] if comparison.get("n_paired") is not None else []
    for ids, what in (
        (comparison.get("new_probes"), "new (reported below, not gated)"),
        (comparison.get("gone_probes"), "gone from the probe set"),
        (comparison.get("deprecated"), "deprecated since the baseline"),
    ):
        if ids:
            tally.append(f"{len(ids):,} {what}")
    # e.g. a new tokenizer that maps a candidate to its unknown token: the probe leaves the gate
    lost = [
        u
        for u in comparison.get("unpaired") or []
        if (u["baseline_status"] == "scored") != (u["status"] == "scored")
    ]
    if lost:
        tally.append(f"{len(lost):,} scored in only one of the two runs (not gated; see the limitations)")
    if tally:
        head += "\n\n" + ", ".join(tally) + "."
    cluster_info = comparison.get("cluster")
    clustered = bool(cluster_info and cluster_info.get("clustered"))
    note = cluster_note(comparison)
    if note:
        head += "\n\n" + note
    chance = suites.chance(results)
    if chance:
        head += CHANCE_NOTE

    def row(key: str) -> list[Any]:
        c = rows_in[key]
        return [
            key,
            count(c.get("n_shared")),
            pct(c.get("baseline_accuracy")),
            pct(c.get("accuracy")),
            *([pct(chance.get(key))] if chance else []),
            interval(c.get("wilson_low"), c.get("wilson_high")),
            points(c.get("delta")),
            pvalue(c.get("p_value")),
            pvalue(c.get("p_adjusted")),
            *([count(c.get("n_clusters"))] if clustered else []),
            size_points(c.get("mde")),
            Md(_status_text(c)),
        ]

    adjusted = f"p ({adjustment_name(comparison)})"
    headers = ["slice", "n", "baseline", "new", "Wilson 95%", "Δ", "p", adjusted, "MDE", "status"]
    align = "lrrrrrrrrl"
    if clustered:
        headers.insert(8, "clusters")
        align = align[:-1] + "rl"
    if chance:
        headers.insert(4, "chance")
        align = align[:-1] + "rl"
    if not rows_in:
        return Section(f"{head}\n\n_No slice was compared._", essential=True)
    body = _tables(results, list(rows_in), lambda keys: table(headers, [row(k) for k in keys], align))
    return Section(f"{head}\n\n{body}", essential=True)


def cluster_note(comparison: Comparison) -> str | None:
    """`comparison.cluster` in a sentence or two (gate/cluster.py, docs/gate.md "Clustered flips")."""
    info = comparison.get("cluster")
    if not info:
        return None
    field = inline(info["field"])
    icc, deff, p = info.get("icc"), info.get("design_effect"), info.get("icc_p_value")
    measured = (
        f"intraclass correlation of flips within {field} {icc:.3f}"
        + (f" (F test p {p_is(p, 2)})" if p is not None else "")
        + f", design effect {deff:.2f}"
        if icc is not None and deff is not None
        else f"the intraclass correlation of flips within {field} is undefined (too few flips or clusters)"
    )
    where = f"{info['n_clusters']:,} clusters of mean size {info['mean_cluster_size']:.1f}"
    if info.get("clustered"):
        return (
            f"**Clustered by {field}** (`gate.cluster`): p is a wild cluster sign-flip test over whole"
            f" {field} clusters (exact up to 16 clusters, else 9,999 seeded draws), so flips shared"
            f" within a cluster do not make it liberal; {where}, {measured}."
        )
    return (
        f"⚠️ **Correlated flips**: {measured}, above 1.2 ({where}). The per-probe test assumes"
        " independent probes, so it understates the noise here and can raise false alarms; with"
        f" `gate.cluster: {info['field']}` the gate tests whole clusters"
        f" ({doc('docs/gate.md', 'Clustered flips')})."
    )


CHANCE_NOTE = (
    " Chance is the mean of 1/K over the slice's scored items (K candidates each): what guessing scores."
)


def _tables(results: ResultsDocument, keys: list[str], render: Callable[[list[str]], str]) -> str:
    """One table, or with several suites one per suite (the whole run's `overall` first)."""
    if not suites.multi_suite(results):
        return render(ordered(keys))
    return "\n\n".join(
        f"#### {suites.suite_title(results, suite)}\n\n{render(group)}"
        for suite, group in suites.by_suite(results, keys)
    )


def slices_table(results: ResultsDocument) -> Section:
    """Without a baseline: the gated families' accuracy, for the record."""
    slices = results["slices"]
    families = gated_families(results)
    chance = suites.chance(results)

    def row(k: str) -> list[Any]:
        s = slices[k]
        return [
            k,
            count(s["n"]),
            count(s["correct"]),
            pct(s["accuracy"]),
            *([pct(chance.get(k))] if chance else []),
            interval(s["wilson_low"], s["wilson_high"]),
        ]

    keys = [k for k in ordered(slices) if family(k) in families]
    gated = "only the floors below were checked" if suites.floors(results) else "nothing was gated"
    head = (
        f"### Slices\n\nNo baseline (`--baseline none`): {gated}. This is the record a first"
        " baseline of this checkpoint line would start from."
    )
    headers = ["slice", "n", "correct", "accuracy", "Wilson 95%"]
    if chance:
        head += CHANCE_NOTE
        headers.insert(4, "chance")
    align = "l" + "r" * (len(headers) - 1)
    body = _tables(results, keys, lambda ks: table(headers, [row(k) for k in ks], align)) if keys else ""
    return Section(f"{head}\n\n{body}".rstrip(), essential=True)


FLOOR_STATUS = {"ok": "✅ ok", "below": "❌ below the floor", "missing": "❌ no scored item"}


def floors_table(results: ResultsDocument) -> Section | None:
    """`gate.min_accuracy`: each floored slice's floor, accuracy, chance and status (gate/floors.py)."""
    floors = suites.floors(results)
    if not floors:
        return None
    shared = any("shared_accuracy" in f for f in floors.values())
    rows = [
        [
            key,
            count(f.get("n")),
            pct(f.get("accuracy")),
            *([pct(f.get("shared_accuracy")) if "shared_accuracy" in f else "–"] if shared else []),
            pct(f.get("chance")),
            pct(f.get("min_accuracy")),
            Md(FLOOR_STATUS.get(str(f.get("status")), inline(f.get("status")))),
        ]
        for key in ordered(floors)
        for f in [floors[key]]
    ]
    head = (
        "### Floors\n\nAbsolute floors (`gate.min_accuracy`), checked on this run alone, with a baseline"
        " or without: a slice below its floor fails the gate, and so does a floor whose slice has no"
        " scored item. Accuracy is over every scored item of the slice"
        + (
            "; with a baseline, the items it scored too must reach the floor as well (`baseline's`),"
            " so new items cannot lift a slice over it."
            if shared
            else "."
        )
    )
    header = ["slice", "n", "accuracy", *(["baseline's"] if shared else []), "chance", "floor", "status"]
    body = table(header, rows, "lrr" + ("r" if shared else "") + "rrl")
    return Section(f"{head}\n\n{body}", essential=True)


def _series_cells(s: Slice | None) -> list[Any]:
    """n, accuracy and interval of one series' slice (blank when the slice is not in that series)."""
    if not s:
        return [count(None), pct(None), interval(None, None)]
    return [count(s.get("n")), pct(s.get("accuracy")), interval(s.get("wilson_low"), s.get("wilson_high"))]


def leak_series(results: ResultsDocument, budget: Budget) -> Section | None:
    """Policy `leaks: exclude`: the strict (gated) and the full series side by side (docs/report.md)."""
    leaks = results.get("leaks")
    full = results.get("slices_full")
    if not leaks or full is None:
        return None
    strict = results["slices"]
    families = gated_families(results)
    rows = []
    for key in ordered(set(strict) | set(full)):
        if family(key) not in families:
            continue
        s, f = strict.get(key), full.get(key)  # a slice may be in one series only
        s_acc = s.get("accuracy") if s else None
        f_acc = f.get("accuracy") if f else None
        diff = f_acc - s_acc if s_acc is not None and f_acc is not None else None
        rows.append([key, *_series_cells(s), *_series_cells(f), points(diff)])
    excluded = ids_of(leaks.get("excluded"))
    lines = [
        "### Strict and full series (leaks: exclude)",
        "",
        f"{len(excluded):,} probe(s) overlap the training material and are left out of the strict series,"
        " which is the one the gate reads. The full series keeps them, for comparison with earlier runs.",
        "",
        table(
            [
                "slice",
                "strict n",
                "strict",
                "strict Wilson",
                "full n",
                "full",
                "full Wilson",
                "full − strict",
            ],
            rows,
            "lrrrrrrr",
        ),
        "",
        honesty_note(leaks),
    ]
    shown = budget.take(
        "excluded", excluded, title="excluded probe ids", where="results.json `leaks.excluded`"
    )
    if shown:
        ids = ", ".join(inline(i) for i in shown)
        note = budget.note("excluded")
        lines += ["", details(f"{len(excluded):,} excluded probe(s)", ids + (f"\n\n{note}" if note else ""))]
    return Section("\n".join(lines), "excluded")


def honesty_note(leaks: LeakSummary) -> Md:
    """docs/report.md: which share of each label and category the exclusion removed, and if it is even."""
    parts = []
    for groups, name in (
        (leaks.get("by_label") or {}, "label"),
        (leaks.get("by_category") or {}, "category"),
    ):
        shares = []
        for label in sorted(groups):
            g = groups[label]
            total, hit = int(g.get("total", 0)), int(g.get("excluded", 0))
            frac = g.get("fraction", hit / total if total else 0.0)
            shares.append((frac, label, f"{inline(label)} {hit}/{total} ({100 * frac:.1f}%)"))
        if not shares:
            continue
        text = f"by {name}: " + ", ".join(s for _, _, s in shares)
        if len(shares) > 1:
            lo, hi = min(shares), max(shares)
            spread = 100 * (hi[0] - lo[0])
            if spread <= 2.0:
                text += f" — within {spread:.1f} points of each other: the strict series favours no {name}"
            else:
                text += (
                    f" — {inline(hi[1])} loses {spread:.1f} points more than {inline(lo[1])}:"
                    " read the strict series with that in mind"
                )
        parts.append(text)
    return Md("**Honesty note.** Excluded " + "; ".join(parts) + "." if parts else "")


def adversarial(results: ResultsDocument) -> Section | None:
    """Accuracy by reason_code of the adversarial probes: which trap the model falls into (docs/report.md)."""
    tally: dict[str, Counter] = {}
    for e in results["probes"]:
        if e.get("category") == "adversarial" and e["status"] != "deprecated":
            t = tally.setdefault(str(e.get("reason_code") or "(none)"), Counter())
            t[e["status"]] += 1
            t["correct"] += e["status"] == "scored" and e.get("correct") is True
    if not tally:
        return None
    z = float(gate_settings(results).get("z", 1.96))
    rows = []
    for code in sorted(tally):
        t = tally[code]
        n, k = t["scored"], t["correct"]
        lo, hi = wilson_interval(k, n, z) if n else (None, None)
        rows.append(
            [
                code,
                count(n),
                count(k),
                pct(k / n if n else None),
                interval(lo, hi),
                count(t["ambiguous"]),
                count(t["model_oov"] + t["excluded"]),
            ]
        )
    headers = ["reason_code", "n", "correct", "accuracy", "Wilson 95%", "ambiguous", "not scored"]
    return Section("### Adversarial probes by reason_code\n\n" + table(headers, rows, "lrrrrrr"))
