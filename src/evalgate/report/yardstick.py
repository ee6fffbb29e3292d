"""The report's yardstick sections (docs/approval.md): what the PR changes in its own gate, and the
probes counted wrong because this run could not score them.

"What this PR changes in its own gate" opens the report whenever results.json lists gate
changes: a reviewer must see that the yardstick moved before reading any verdict measured with it.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalgate.gate.document import CountedWrong, GateChange, ResultsDocument
from evalgate.gate.yardstick import WHAT, shown_value
from evalgate.report.budget import Budget, Section
from evalgate.report.markdown import code, table

LABEL = "evalgate:approve-gate-change"


def _changes(results: ResultsDocument) -> list[GateChange]:
    return [c for c in results.get("gate_changes_vs_baseline") or [] if isinstance(c, Mapping)]


def own_gate(results: ResultsDocument, budget: Budget) -> Section | None:
    """The opening section when the run changes its yardstick; None otherwise."""
    changes = _changes(results)
    if not changes:
        return None
    if results["verdict"] == "refused":
        status = (
            f"**Not approved, so this run is refused.** A maintainer approves these changes with the "
            f"label {code(LABEL)} on the pull request (the workflow then runs "
            f"{code('evalgate run --approve-gate-changes')}); otherwise undo them."
        )
    else:
        status = (
            f"**Approved** ({code('--approve-gate-changes')}): gated against the approved yardstick, "
            "on the probes this run shares with the baseline. Review each change as carefully as "
            "the checkpoint: a gate can be made to pass by changing what it measures."
        )
    shown = budget.take(
        "gate_changes_vs_baseline",
        changes,
        title="gate changes",
        where="results.json `gate_changes_vs_baseline`",
        protected=True,
    )
    rows = [
        [
            WHAT.get(str(c["kind"]), str(c["kind"])),
            c["key"],
            shown_value(c["old"]),
            shown_value(c["new"]),
            c["file"],
        ]
        for c in shown
    ]
    body = table(["change", "what", "baseline", "this run", "file"], rows)
    head = (
        f"## What this PR changes in its own gate\n\n{len(changes):,} change(s) to what this run is "
        f"gated with, compared with the baseline (the yardstick). {status}"
    )
    note = budget.note("gate_changes_vs_baseline")
    return Section(
        "\n\n".join(p for p in (head, body, note) if p), "gate_changes_vs_baseline", essential=True
    )


def counted_wrong(results: ResultsDocument, budget: Budget) -> Section | None:
    """Probes the baseline scored that this run could not score: they count as wrong."""
    items: list[CountedWrong] = [
        i for i in (results.get("comparison") or {}).get("counted_wrong") or [] if isinstance(i, Mapping)
    ]
    if not items:
        return None
    shown = budget.take(
        "counted_wrong", items, title="probes counted wrong", where="results.json `comparison.counted_wrong`"
    )
    rows = [[i["id"], i["status"], {True: "✅", False: "❌"}.get(i["baseline_correct"])] for i in shown]
    head = (
        f"### Probes this run could not score (counted wrong)\n\n{len(items):,} probe(s) the baseline "
        "scored could not be scored here (e.g. a candidate the tokenizer cannot spell): each counts as "
        "wrong in the paired comparison, so a slice cannot leave the gate by becoming unscorable."
    )
    body = table(["id", "status here", "baseline right?"], rows)
    note = budget.note("counted_wrong")
    return Section("\n\n".join(p for p in (head, body, note) if p), "counted_wrong")
