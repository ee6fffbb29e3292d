"""results → REPORT.md: the PR comment, the job summary and the file in the output folder.

Order: what the PR changes in its own gate (only when it does: docs/approval.md), the verdict
(one line), the gate-changes diff warning, the gated slices, the per-slice
picture in text, then the detail (adversarial, flipped probes, per verb, perplexity, calibration,
ordinal and new probes), the SHA-256 of every input, the method, the limitations, and last the
hidden sticky marker the comment job looks for.

The report must fit one GitHub comment (65,536 characters): while it is too long, the longest
list is shortened (report/budget.py) and says so; the verdict, the gated table and the SHA-256
table are never cut. Lengths are counted in UTF-16 code units, which is never less than what
GitHub counts. Pure and deterministic: the same results give the same text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from evalgate.gate.baseline_diff import baseline_changes
from evalgate.gate.document import Comparison, FindingDict, ResultsDocument, SliceComparison
from evalgate.gate.slice_order import ordered, split_suite
from evalgate.report import coverage as report_coverage
from evalgate.report import drift as report_drift
from evalgate.report import facts, headline, suites, yardstick
from evalgate.report import ordinal as report_ordinal
from evalgate.report import probes as lists
from evalgate.report import sections as gate
from evalgate.report.bars import render_bars
from evalgate.report.baseline_change import change_table
from evalgate.report.budget import ARTIFACT, Budget, Section, next_limits
from evalgate.report.comment import MARKER_PREFIX  # defined where the comment job needs no numpy
from evalgate.report.markdown import code, fence, inline, pct, points, table
from evalgate.report.markdown import utf16_len as size
from evalgate.types import DEFAULT_REVIEW_ENTROPY

GITHUB_LIMIT = 65536
_MAX_ROUNDS = 200


def render_report(
    results: ResultsDocument,
    *,
    max_chars: int = 65000,
    max_flipped: int = 50,
    review_entropy: float = DEFAULT_REVIEW_ENTROPY,
) -> str:
    """The whole REPORT.md, at most `max_chars` (UTF-16 code units), ending with the sticky marker."""
    limits: dict[str, int] = {}
    text = ""
    sections: list[Section] = []
    for _ in range(_MAX_ROUNDS):
        budget = Budget(dict(limits))
        sections = _sections(results, budget, max_flipped, review_entropy)
        text = _join(sections, budget, results)
        if size(text) <= max_chars:
            return text
        new = next_limits(sections, budget, size(text) - max_chars)
        if new is None:
            break
        limits = new
    return _truncate(sections, results, max_chars)


def marker(results: ResultsDocument) -> str:
    verdict = re.sub(r"[^a-z]", "", str(results["verdict"]))
    return f"{MARKER_PREFIX} verdict={verdict} -->"


def _sections(
    results: ResultsDocument, budget: Budget, max_flipped: int, review_entropy: float
) -> list[Section]:
    # A changed yardstick opens the report, before any verdict measured with it (docs/approval.md).
    out: list[Section | None] = [
        yardstick.own_gate(results, budget),
        verdict(results),
        gate_changes(results, budget),
    ]
    if results["verdict"] == "refused":
        out += [findings(results, budget), warnings(results, budget), report_coverage.coverage(results)]
        out.append(facts.inputs(results))
        out.append(Section(f"evalgate {code(results['evalgate_version'])}.", essential=True))
        return [s for s in out if s is not None]
    compared = bool(results.get("comparison"))
    out.append(gate.gated_table(results) if compared else gate.slices_table(results))
    out.append(gate.floors_table(results))
    out.append(report_drift.section(results))
    out.append(gate.leak_series(results, budget))
    bars = render_bars(results)
    if bars:
        out.append(Section("### Per-slice picture\n\n" + bars))
    out += [
        gate.adversarial(results),
        lists.flipped(results, budget, max_flipped),
        yardstick.counted_wrong(results, budget),
        lists.per_verb(results, budget),
        facts.perplexity(results),
        *facts.calibration(results, budget, review_entropy),
        *report_ordinal.sections(results, budget, review_entropy),
        lists.new_probes(results, budget),
        report_coverage.coverage(results),
        facts.inputs(results),
        facts.method(results),
        facts.limitations(results),
        warnings(results, budget),
    ]
    return [s for s in out if s is not None]


def _join(sections: list[Section], budget: Budget, results: ResultsDocument) -> str:
    parts = [s.text for s in sections]
    cut = budget.cut()
    if cut:
        shortened = "; ".join(f"{lst.title} ({lst.shown:,} of {lst.total:,} shown)" for lst in cut)
        parts.insert(
            1,
            f"✂️ **Lists shortened** to keep this comment readable and under GitHub's limit:"
            f" {shortened}. Every list is complete in results.json in {ARTIFACT}.",
        )
    return "\n\n".join(p for p in parts if p) + "\n\n" + marker(results) + "\n"


def _truncate(sections: list[Section], results: ResultsDocument, max_chars: int) -> str:
    """Last resort when every list is empty and it is still too long: essential sections first."""
    tail = (
        f"_This report was truncated to {max_chars:,} characters; REPORT.md and results.json in {ARTIFACT}"
        " are complete._"
    )
    end = "\n\n" + marker(results) + "\n"
    room = max_chars - size(tail) - size(end) - 2
    spare = room - sum(size(s.text) + 2 for s in sections if s.essential)
    kept = []
    for s in sections:
        if s.essential:
            kept.append(s.text)
        elif size(s.text) + 2 <= spare:
            kept.append(s.text)
            spare -= size(s.text) + 2
    body = "\n\n".join(kept)
    while size(body) > room:  # the essentials alone are too long: drop whole lines from the end
        cut = body.rfind("\n", 0, len(body) - 1)
        body = body[:cut] if cut > 0 else body[: max(0, room - 1)]
    return body + "\n\n" + tail + end


def verdict(results: ResultsDocument) -> Section:
    """One line: ✅ pass / ❌ fail naming the regressed slices / ⚠️ inconclusive naming the
    undecided ones / ⛔ refused; then the reasons. The overall pair is on the probes both runs
    scored (report/headline.py), and no all-clear is said about a slice the gate could not judge."""
    v = results["verdict"]
    comparison: Comparison = results.get("comparison") or {}
    rows: Mapping[str, SliceComparison] = comparison.get("slices") or {}
    _, overall_n = headline.run_accuracy(results)  # from the entries; n 0: nothing scored
    if v == "refused":
        n = len(results.get("findings") or [])
        problems = f"{n:,} problem(s) in the input; " if n else ""
        # A refusal after scoring (a baseline that is not comparable) did score: say what failed.
        outcome = "scored, but not gated" if overall_n else "nothing was scored"
        line = f"## ⛔ evalgate: refused — {problems}{outcome}"
    elif v == "fail":
        regressed = [k for k in ordered(rows) if rows[k]["status"] == "regressed"]
        several = suites.multi_suite(results)
        names = (
            _by_suite_names(results, regressed, rows)
            if several
            else [f"{inline(k)} ({points(rows[k].get('delta'))} pts)" for k in regressed]
        )
        ppls = [("", comparison.get("perplexity") or {})]
        ppls += [(f"{inline(n)} ", c) for n, c in (comparison.get("suite_perplexity") or {}).items()]
        for suite_prefix, ppl in ppls:
            if ppl.get("status") == "regressed":
                ratio = ppl.get("ratio")
                shown = f"perplexity (×{ratio:.2f})" if isinstance(ratio, int | float) else "perplexity"
                names.append(suite_prefix + shown)
        # several suites: "; " between them, as a comma already separates the slices of one
        joined = ("; " if several else ", ").join(names)
        line = "## ❌ evalgate: fail" + (" — regressed: " + joined if names else "")
        if drifted := headline.drifted_names(results):
            drift: Mapping[str, Any] = results.get("drift") or {}
            approved = drift.get("approved")
            if not approved:
                line += (
                    ("; " if names else " — ")
                    + "drifted since the anchor: "
                    + ", ".join(inline(n) for n in drifted)
                )
        if below := _below_floors(results):
            line += ("; " if names else " — ") + "below the floor: " + ", ".join(below)
    elif v == "inconclusive":
        named = "; ".join(inline(name) for name in headline.undecided_names(results))
        line = f"## ⚠️ evalgate: inconclusive — could not decide: {named}"
        line += f"; {inline(headline.overall_text(results))}"
    else:
        line = f"## ✅ evalgate: pass — {inline(headline.overall_text(results))}"
        if comparison:
            # never "no gated slice regressed" when no slice was tested (issue 25)
            compared = (comparison.get("slices") or {}).values()
            tested = any(isinstance(r, Mapping) and r.get("gated") for r in compared)
            line += (
                ", no gated slice regressed" if tested else "; no slice was tested (each under gate.min_n)"
            )
            line += ", every floor held" if suites.floors(results) else ""
        elif suites.floors(results):
            line += "; no baseline, only the floors (gate.min_accuracy) were checked"
        else:
            line += "; no baseline, nothing was gated"
    reasons = [f"- {inline(r)}" for r in results.get("reasons") or []]
    ckpt = (results.get("checkpoint") or {}).get("path")
    who = []
    if ckpt:
        who.append(f"checkpoint {inline(ckpt)}")
    if comparison.get("baseline"):
        who.append(f"baseline {inline(comparison['baseline'])}")
    text = "\n\n".join(p for p in (line, "\n".join(reasons), " · ".join(who)) if p)
    return Section(text, essential=True)


def _by_suite_names(
    results: ResultsDocument, keys: list[str], rows: Mapping[str, SliceComparison]
) -> list[str]:
    """Several suites: the regressed slices grouped by suite, "quiz: overall (-8.0 pts), topic:x (…)"."""
    out = []
    for suite, group in suites.by_suite(results, keys):
        named = ", ".join(f"{inline(split_suite(k)[1])} ({points(rows[k].get('delta'))} pts)" for k in group)
        out.append(named if suite is None else f"{inline(suite)}: {named}")
    return out


def _below_floors(results: ResultsDocument) -> list[str]:
    """The slices under their absolute floor (gate.min_accuracy), "quiz/overall (41.0% < 50.0%)"."""
    out = []
    for key, f in suites.failed_floors(results).items():
        acc = f.get("accuracy")
        floor = f.get("min_accuracy")
        if f.get("status") == "missing" or not isinstance(acc, int | float):
            out.append(f"{inline(key)} (no scored item)")
        elif isinstance(floor, int | float) and acc >= floor and "shared_accuracy" in f:
            out.append(f"{inline(key)} ({pct(f['shared_accuracy'])} on the baseline's items < {pct(floor)})")
        else:
            out.append(f"{inline(key)} ({pct(acc)} < {pct(floor)})")
    return out


def gate_changes(results: ResultsDocument, budget: Budget) -> Section | None:
    diff = results.get("gate_changes")
    if not diff:
        return None
    # A rewritten baseline file is shown as its accepted change per slice, not as raw JSON.
    changes, rest = baseline_changes(str(diff))
    lines = rest.splitlines()
    shown = budget.take(
        "gate_changes",
        lines,
        title="lines of the gate diff",
        where="results.json `gate_changes`",
        protected=True,
    )
    head = (
        "> [!WARNING]\n> **This pull request changes the gate itself** (evalgate.yml or a baseline)."
        " A gate can be made to pass by loosening it: review these edits as carefully as the checkpoint."
    )
    note = budget.note("gate_changes")
    tables = [change_table(c) for c in changes]
    body = fence("\n".join(shown), "diff") if shown else ""
    return Section("\n\n".join(p for p in (head, *tables, body, note) if p), "gate_changes")


def _finding_row(f: Mapping[str, Any]) -> list[Any]:
    """A finding or a warning; the schema leaves a warning open, so every key is read with .get."""
    where = str(f.get("file") or "") + (f":{f['line']}" if f.get("file") and f.get("line") else "")
    evidence = f.get("evidence") or {}
    ev = (
        "; ".join(f"{k}: {evidence[k]}" for k in sorted(evidence))
        if isinstance(evidence, Mapping)
        else evidence
    )
    return [where or None, f.get("probe_id"), f.get("field"), f.get("message"), ev or None]


def _finding_key(f: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        str(f.get("check")),
        str(f.get("file") or ""),
        int(f.get("line") or 0),
        str(f.get("probe_id") or ""),
    )


def findings(results: ResultsDocument, budget: Budget) -> Section:
    """Every finding, grouped by check, each naming file:line, probe id and field, with the hints."""
    all_findings = sorted(
        (f for f in results.get("findings") or [] if isinstance(f, Mapping)), key=_finding_key
    )  # a scored run has none
    shown = budget.take("findings", all_findings, title="findings", where="results.json `findings`")
    totals: dict[str, int] = {}
    for f in all_findings:
        totals[str(f["check"])] = totals.get(str(f["check"]), 0) + 1
    groups: dict[str, list[FindingDict]] = {}
    for f in shown:
        groups.setdefault(str(f["check"]), []).append(f)
    parts = [f"### Why it was refused ({len(all_findings):,} problem(s))"]
    for check, items in groups.items():
        parts.append(f"#### {inline(check)} ({totals[check]:,})")
        parts.append(
            table(["where", "probe", "field", "problem", "evidence"], [_finding_row(f) for f in items])
        )
        hints = sorted({str(f["hint"]) for f in items if f.get("hint")})
        if hints:
            parts.append("**What to do:** " + " · ".join(inline(h) for h in hints))
    note = budget.note("findings")
    if note:
        parts.append(note)
    return Section("\n\n".join(parts), "findings")


def warnings(results: ResultsDocument, budget: Budget) -> Section | None:
    items = sorted((w for w in results.get("warnings") or [] if isinstance(w, Mapping)), key=_finding_key)
    if not items:
        return None
    shown = budget.take("warnings", items, title="validation warnings", where="results.json `warnings`")
    rows = [[w.get("check"), *_finding_row(w)[:4]] for w in shown]
    body: str = table(["check", "where", "probe", "field", "warning"], rows)
    note = budget.note("warnings")
    body += f"\n\n{note}" if note else ""
    summary = f"{len(items):,} validation warning(s) (not failures)"
    return Section("### Warnings\n\n" + lists.details_if_long(summary, body, len(items)), "warnings")
