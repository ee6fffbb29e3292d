"""The report's factual sections: perplexity, calibration, the SHA-256 table, method, limitations."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from evalgate.gate.document import (
    Calibration,
    Perplexity,
    PerplexityComparison,
    ProbeEntry,
    ResultsDocument,
)
from evalgate.gate.slice_order import family, gate_settings, gated_families, ordered
from evalgate.gate.stats import p_is
from evalgate.report import suites
from evalgate.report.budget import Budget, Section
from evalgate.report.markdown import (
    MISSING,
    Md,
    code,
    count,
    details,
    doc,
    inline,
    num,
    pct,
    size_points,
    table,
)
from evalgate.report.probes import ids_of, probe_list

ROLE_ORDER = (
    "checkpoint",
    "probes",
    "adversarial",
    "template",
    "manifest",
    "grammar",
    "train",
    "test",
    "baseline",
    "config",
    "results",
)
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
NORMALISATION = {
    "tokens": "divided by the number of candidate tokens (length normalisation, seed 004: a form that"
    " happens to need more tokens is not penalised for it)",
    "chars": "divided by the candidate's length in characters (lm-evaluation-harness `acc_norm`;"
    " independent of the tokenizer)",
    "bytes": "divided by the candidate's length in UTF-8 bytes",
    "none": "not normalised (shorter candidates are favoured)",
}
METHOD = {
    "candidate": "sum of log p(candidate tokens | context)",
    "candidate-raw": "sum of log p(candidate tokens | context), no length normalisation",
    "sentence": "log-probability of the whole sentence with the candidate filled in"
    " (minimal pairs, as in BLiMP)",
}


def _sha(value: Any) -> Md:
    return code(value) if isinstance(value, str) and _HEX64.match(value) else inline(value or MISSING)


def counts(results: ResultsDocument) -> Counter:
    """Probes per status: results.json `counts` when present, else counted from the probes."""
    given = results.get("counts")
    if isinstance(given, Mapping):
        return Counter({k: int(v) for k, v in given.items() if isinstance(v, int)})
    return Counter(str(e["status"]) for e in results["probes"])


_PPL_STATUS = {
    "ok": "✅ ok",
    "regressed": "❌ regressed",
    "inconclusive": "⚠️ inconclusive",
    "failed": "❌ failed",
    "not_comparable": "⚪ not comparable",
}


def perplexity(results: ResultsDocument) -> Section:
    section = _run_perplexity(results)
    comp = (results.get("comparison") or {}).get("perplexity") or {}
    if "suite_perplexity" not in results and not (results.get("comparison") or {}).get("suite_perplexity"):
        return section
    text = section.text
    if not results["perplexity"] and suites.test_skipped(results) and comp.get("status") != "failed":
        text = (
            "### Perplexity\n\n_The run-wide `test:` is null: only the suites' own held-out test sets"
            " are measured._"
        )
    return Section(f"{text}\n\n{_suite_perplexity(results)}")


def _suite_perplexity(results: ResultsDocument) -> str:
    """Several suites: a row per suite with its own test set (docs/suites.md, "Perplexity")."""
    own = results.get("suite_perplexity") or {}
    comps = (results.get("comparison") or {}).get("suite_perplexity") or {}
    allowed = num(gate_settings(results).get("perplexity_max_ratio"), 2)
    rows, notes = [], []
    for name in sorted(set(own) | set(comps)):
        mine: Perplexity = own.get(name) or {}
        comp: PerplexityComparison = comps.get(name) or {}
        baseline = comp.get("baseline")
        status = comp.get("status")
        rows.append(
            [
                inline(name),
                inline(mine["file"]) if mine.get("file") else MISSING,
                num(comp.get("value", mine.get("value"))),
                num(baseline if not isinstance(baseline, Mapping) else baseline.get("value")),
                num(comp.get("ratio")),
                num(comp.get("max_ratio"), 2) if comp.get("max_ratio") is not None else allowed,
                _PPL_STATUS.get(status or "", inline(status or MISSING)) if comp else "not gated",
            ]
        )
        line = _perplexity_test_line(comp).strip()
        if comp.get("reason"):
            line += f" {inline(comp['reason'])}."
        if line:
            notes.append(f"- {inline(name)}: {line}")
    others = [s for s in suites.suite_kinds(results) if s not in own]
    head = "Suites with their own held-out test set, each gated like the run's perplexity:"
    header = ["suite", "test set", "perplexity", "baseline", "ratio", "allowed", "status"]
    body = table(header, rows, "llrrrrl")
    tail = "\n\n" + "\n".join(notes) if notes else ""
    if others:
        names = ", ".join(inline(s) for s in others)
        tail += f"\n\nNo test set of their own (`test: null` or none): {names}."
    return f"{head}\n\n{body}{tail}"


def _run_perplexity(results: ResultsDocument) -> Section:
    comp: PerplexityComparison = (results.get("comparison") or {}).get("perplexity") or {}
    own: Perplexity = results["perplexity"] or {}
    skipped = not own and suites.test_skipped(results)
    if skipped and comp.get("status") != "failed":
        # a baseline without perplexity gates none (gate/holds.py): nothing failed, nothing to show
        return Section(
            "### Perplexity\n\n_Not measured: the configuration sets `test: null`, so this run has no"
            " held-out test set; perplexity is neither reported nor gated._"
        )
    if not comp and not own:
        return Section("### Perplexity\n\n_Not measured in this run._")
    baseline = comp.get("baseline")
    if isinstance(baseline, Mapping):  # an older comparison kept the baseline's whole record
        baseline = baseline.get("value")
    status = comp.get("status")
    shown = _PPL_STATUS.get(status or "", inline(status or MISSING))
    row = [
        num(comp.get("value", own.get("value"))),
        num(baseline),
        num(comp.get("ratio")),
        num(comp.get("max_ratio", gate_settings(results).get("perplexity_max_ratio")), 2),
        shown,
    ]
    where = f" on {count(own.get('n_tokens'))} tokens" if own.get("n_tokens") is not None else ""
    where += f" of {inline(own['file'])}" if own.get("file") else " of the held-out test set"
    head = (
        f"### Perplexity\n\nMeasured{where}. The gate fails when new / baseline is significantly above"
        " the allowed ratio;"
        " with a different tokenizer the two are not comparable and are shown, not gated."
    )
    if skipped:
        head = (
            "### Perplexity\n\nNot measured: the configuration sets `test: null`. The baseline has a"
            " perplexity, so this run cannot show it did not regress, and the gate fails on it."
        )
    body: str = table(["perplexity", "baseline", "ratio", "allowed", "status"], [row], "rrrrl")
    body += _perplexity_test_line(comp)
    if comp.get("reason"):
        body += f"\n\n{inline(comp['reason'])}."
    return Section(f"{head}\n\n{body}")


def _perplexity_test_line(comp: PerplexityComparison) -> str:
    """The paired test's p-value (adjusted in the slices' family) and, for the t-test of older
    results, its interval (gate/perplexity_test.py), or why the ratio stood in."""
    if comp.get("test") == "ratio" and comp.get("note"):
        return f"\n\n{inline(comp['note'])}."
    p, low, high = comp.get("p_value"), comp.get("ratio_low"), comp.get("ratio_high")
    level, adjusted = comp.get("interval_level"), comp.get("p_adjusted")
    if not isinstance(p, int | float):
        return ""
    shown = f"p {p_is(p)}"
    if isinstance(adjusted, int | float):
        shown += f", adjusted with the gated slices {p_is(adjusted).removeprefix('= ')}"
    if isinstance(low, int | float) and isinstance(high, int | float) and isinstance(level, int | float):
        shown += f"; {100 * level:.0f}% interval of the ratio ×{low:.3f}–×{high:.3f}"
    return (
        f'\n\nPaired test over {count(comp.get("n_sentences"))} sentences of H0 "the ratio is at most'
        f' the allowed one": {shown}. It fails only when the adjusted p is below alpha'
        f" ({doc('docs/gate.md', 'Perplexity')})."
    )


def calibration(results: ResultsDocument, budget: Budget, review_entropy: float) -> list[Section]:
    cal: Calibration = results["calibration"]
    if not cal and not results["probes"]:
        return []
    lines = ["### Calibration"]
    ece = cal.get("ece")
    n = cal.get("n")
    lines.append(
        f"Expected calibration error **{num(ece)}**" + (f" over {count(n)} scored probes" if n else "") + ":"
        " how far the confidence (softmax of the scores over the candidates) is from the accuracy,"
        " averaged over equal-width confidence bins (0 = calibrated)."
    )
    bins = [b for b in cal.get("bins") or [] if isinstance(b, Mapping)]
    if bins:
        rows = [
            [
                Md(f"{b['lo']:.1f}–{b['hi']:.1f}"),
                count(b["n"]),
                num(b.get("mean_confidence")),
                pct(b.get("accuracy")),
                num(b.get("gap")),
            ]
            for b in bins
        ]
        reliability = table(["confidence", "n", "mean confidence", "accuracy", "gap"], rows, "lrrrr")
        lines.append(details("Reliability table", reliability))
    summaries = cal.get("entropy") or {}
    parts = [
        f"{name} {num(summary.get('mean'))}"
        for name in ("correct", "wrong", "ambiguous")
        if (summary := summaries.get(name)) and summary.get("n")
    ]
    if parts:
        lines.append(
            "Mean normalised entropy (H / log K, 0 = certain, 1 = undecided): " + ", ".join(parts) + "."
            " Ambiguous probes should sit high and errors low only when the model is confidently wrong."
        )
    out = [Section("\n\n".join(lines))]
    confident = ids_of(cal.get("confident_errors"))
    limit = cal.get("confident_entropy")
    rule = f" (H / log K below {limit:g})" if isinstance(limit, int | float) else ""
    probes = results["probes"]
    review = sorted(
        (e for e in probes if e["status"] == "scored" and (e.get("entropy_norm") or 0) > review_entropy),
        key=lambda e: (-(e.get("entropy_norm") or 0), e["id"]),
    )
    ambiguous = [e["id"] for e in probes if e["status"] == "ambiguous"]
    for key, ids, title, head in (
        (
            "confident_errors",
            confident,
            "confident errors",
            f"#### Confident errors\n\nWrong answers given with low entropy{rule}: the model is sure"
            " and wrong, a gap in what it learned rather than an ambiguous probe.",
        ),
        (
            "review",
            [e["id"] for e in review],
            "probes that need human review",
            f"#### Needs human review\n\nScored probes above {review_entropy:g} normalised entropy: the model"
            " cannot choose between the candidates; the probe itself may be ambiguous.",
        ),
        (
            "ambiguous",
            ambiguous,
            "ambiguous probes",
            "#### Ambiguous probes\n\nLabelled ambiguous: left out of every accuracy; high entropy is the"
            " expected behaviour here.",
        ),
    ):
        section = probe_list(results, budget, key, ids, title, head)
        if section is not None:
            out.append(section)
    return out


def inputs(results: ResultsDocument) -> Section:
    records = results["inputs"]

    def order(path: str) -> tuple[int, str]:
        role = str(records[path].get("role", ""))
        return (ROLE_ORDER.index(role) if role in ROLE_ORDER else len(ROLE_ORDER), path)

    rows = [
        [path, r.get("role"), count(r["bytes"]), _sha(r["sha256"])]
        for path in sorted(records, key=order)
        for r in [records[path]]
    ]
    lines = ["### Inputs (SHA-256)"]
    ckpt = results.get("checkpoint") or {}
    if ckpt:
        params = f", {ckpt['n_parameters']:,} parameters" if isinstance(ckpt.get("n_parameters"), int) else ""
        lines.append(
            f"Checkpoint {inline(ckpt.get('path', '?'))} ({inline(ckpt.get('format', '?'))}{params}),"
            f" digest {_sha(ckpt.get('sha256'))}."
        )
    lines.append(
        table(["file", "role", "bytes", "SHA-256"], rows, "llrl") if rows else "_No input was read._"
    )
    return Section("\n\n".join(lines), essential=True)


def method(results: ResultsDocument) -> Section:
    m = results.get("manifest")  # a refusal has none
    probe_set = results.get("probe_set") or {}
    name = m.get("method", "?") if m else "?"
    norm = m.get("normalization", "?") if m else "?"
    scoring = METHOD.get(name, inline(name))
    if name != "candidate-raw":
        scoring += ", " + NORMALISATION.get(norm, f"normalised by {inline(norm)}")
    version = (m.get("probe_set_version") if m else None) or probe_set.get("version")
    digest = (m.get("probe_set_digest") if m else None) or probe_set.get("digest")
    lines = [
        "### Method",
        "",
        f"- **Scoring** {code(name)}, normalisation {code(norm)}: each candidate's score is the {scoring}."
        " The prediction is the highest score; confidence is the softmax of the scores over the candidate"
        " set (not the vocabulary); entropy is that distribution's, in nats and divided by log K."
        " Results scored with another method or normalisation are not comparable.",
        f"- **Probe set** version {code(version or 'unsealed')}, digest {_sha(digest)};"
        f" template {_sha(m.get('template_sha256') if m else None)};"
        f" dtype {code(m.get('dtype', '?') if m else '?')};"
        f" scoring version {code(m.get('scoring_version', '?') if m else '?')};"
        f" tokenizer {_sha(m.get('tokenizer_sha256') if m else None)}.",
        f"- **evalgate** {code(results['evalgate_version'])}"
        f" (results schema {code(results['schema_version'])}).",
    ]
    per_suite = probe_set.get("suites")
    if suites.multi_suite(results) and isinstance(per_suite, Mapping):
        # the run's digest and template digest cover every suite; each suite's own set is sealed apart
        parts = [
            f"{suites.suite_label(results, str(name))} version {code(part.get('version') or 'unsealed')},"
            f" digest {_sha(part.get('digest'))}"
            for name, part in per_suite.items()
            if isinstance(part, Mapping)
        ]
        lines.insert(-1, "- **Suites**: " + "; ".join(parts) + ".")
    return Section("\n".join(lines))


def limitations(results: ResultsDocument) -> Section:
    probes = [e for e in results["probes"] if e["status"] != "deprecated"]
    status = counts(results)
    lines = ["### Limitations", ""]
    if suites.has_suites(results):
        lines += _suite_sources(results, probes)
    elif probes:
        lines.append(_generated(probes))
    small = _too_small(results)
    lines.append(
        f"- Too small to gate (shown, not gated): {', '.join(small)}."
        if small
        else "- No slice was too small to gate."
    )
    if weak := _low_power(results):
        lines.append(
            f"- Low power (gated, but a drop of {size_points(gate_settings(results).get('mde_max'))} points"
            f" would likely be missed; only larger drops are caught): {', '.join(weak)}."
        )
    lines.append(
        f"- {status['model_oov']:,} probe(s) could not be scored because a candidate maps to the tokenizer's"
        " unknown token (model_oov); they are left out of accuracy, not counted as errors."
    )
    excluded = status["excluded"] or len(ids_of((results.get("leaks") or {}).get("excluded")))
    if excluded or results.get("leaks"):
        lines.append(
            f"- {excluded:,} leaking probe(s) excluded from the gated series (policy `leaks: exclude`)."
        )
    if suites.has_suites(results) and not results.get("per_verb"):
        lines.append("- Wilson intervals of slices under ~30 items are wide; a pass there is weak evidence.")
    else:
        lines.append(
            "- Per-verb cells hold a handful of probes: read them as counts, not rates. Wilson intervals"
            " of slices under ~30 probes are wide; a pass there is weak evidence."
        )
    return Section("\n".join(lines))


MAX_SOURCES = 5


def _generated(probes: list[ProbeEntry], label: str = "") -> str:
    """How many verb-form probes are generated, hand-written, or say nothing."""
    sources = Counter(str(e.get("source") or "unspecified") for e in probes)
    return (
        f"- {label}{sources['generated']:,} of {len(probes):,} probes are generated, {sources['hand']:,}"
        f" hand-written{_unspecified(sources['unspecified'])}. Generated probes inherit the corpus"
        " generator's conventions (seed 000), so they may flatter a model trained on that corpus."
    )


def _suite_sources(results: ResultsDocument, probes: list[ProbeEntry]) -> list[str]:
    """Per suite, where its probes come from: a verb-forms suite's generated/hand-written split,
    a multiple-choice suite's `source` strings, most frequent first."""
    kinds = suites.suite_kinds(results)
    several = len(kinds) > 1
    lines = []
    for name, kind in kinds.items():
        own = [e for e in probes if not several or suites.doc_entry(e).get("suite") == name]
        if not own:
            continue
        label = f"{suites.suite_title(results, name)}: " if several else ""
        if kind == "verb-forms":
            lines.append(_generated(own, label))
            continue
        sources = Counter(str(e.get("source") or "unspecified") for e in own)
        named = sorted((-n, s) for s, n in sources.items() if s != "unspecified")
        text = f"- {label}{len(own):,} items"
        if named:
            shown = ", ".join(f"{inline(s, 60)} ({-n:,})" for n, s in named[:MAX_SOURCES])
            more = f" and {len(named) - MAX_SOURCES:,} more" if len(named) > MAX_SOURCES else ""
            text += f" by source: {shown}{more}{_unspecified(sources['unspecified'])}"
        else:
            text += ", none with a source"
        lines.append(
            text + ". Items drawn from a public benchmark may be in the model's training data: the leak"
            " check only compares them with the suite's own `train` files."
        )
    return lines


def _unspecified(n: int) -> str:
    return f", {n:,} without a source" if n else ""


def _low_power(results: ResultsDocument) -> list[str]:
    rows = (results.get("comparison") or {}).get("slices") or {}
    return [
        f"{inline(k)} (n={rows[k].get('n_shared', '?')}, MDE {size_points(rows[k].get('mde'))} pts"
        + (
            f"; {rows[k].get('n_clusters')} clusters, it needs {rows[k]['clusters_needed']} to ever fail"
            if rows[k].get("clusters_needed")
            else ""
        )
        + ")"
        for k in ordered(rows)
        if rows[k].get("underpowered") and rows[k]["status"] in ("ok", "regressed", "inconclusive")
    ]


def _too_small(results: ResultsDocument) -> list[str]:
    comparison = (results.get("comparison") or {}).get("slices")
    if comparison:
        keys = [k for k in ordered(comparison) if comparison[k]["status"] == "too_small"]
        return [f"{inline(k)} (n={comparison[k].get('n_shared', '?')})" for k in keys]
    min_n = int(gate_settings(results).get("min_n", 0) or 0)
    slices = results["slices"]
    families = gated_families(results)
    keys = [k for k in ordered(slices) if family(k) in families and int(slices[k]["n"]) < min_n]
    return [f"{inline(k)} (n={slices[k]['n']})" for k in keys]
