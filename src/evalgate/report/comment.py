"""results → the sticky PR comment: what a reviewer reads in one screen (docs/report.md).

The full REPORT.md stays in the job summary and the artifact; the comment carries only: who it is
for (head SHA, run link, the run's conclusion), the verdict and why, the slices that regressed (or
the closest to the line when none did), what the PR changes in its own gate, the new probes, links,
and how to accept an intended regression. It is rendered by the trusted side from results.json
only, so every string taken from the results goes through `markdown.inline`/`table`, and the whole
body is defused once more (`defuse_references`) before posting. Pure and deterministic.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from evalgate.gate.baseline_diff import baseline_changes
from evalgate.gate.document import ResultsDocument, SliceComparison
from evalgate.gate.slice_order import family, gated_families, ordered, split_suite
from evalgate.gate.yardstick import describe
from evalgate.report import headline
from evalgate.report.baseline_change import change_table
from evalgate.report.markdown import (
    ZWSP,
    Md,
    code,
    count,
    doc,
    inline,
    interval,
    pct,
    points,
    pvalue,
    size_points,
    table,
)
from evalgate.report.suites import by_suite, multi_suite, suite_label

MAINTAINER_SETUP = doc(
    "docs/security.md", "What the maintainer must configure", "what-the-maintainer-must-configure"
)
MARKER_PREFIX = "<!-- evalgate:report"  # the one sticky marker (full_report.py, github/sticky.py)
APPROVE_GATE_LABEL = "evalgate:approve-gate-change"
UPDATE_BASELINE_LABEL = "evalgate:update-baseline"
MAX_REASONS = 6
# A reason is cut only past this many characters: the longest the gate writes (a drift reason with
# its test, MDE and fixes, about 330) reads whole, a hostile slice key is still bounded (issue 25:
# reasons were cut mid-phrase at 300).
REASON_CHARS = 700
MAX_ROWS = 8
MAX_CLOSEST = 3
MAX_LIST = 10
_VERDICT_HEAD = {
    "pass": "✅ evalgate: pass",
    "fail": "❌ evalgate: fail",
    "inconclusive": "⚠️ evalgate: inconclusive",
    "refused": "⛔ evalgate: refused",
    "error": "⚠️ evalgate: error",
}
_URL_RE = re.compile(r"https://[A-Za-z0-9.-]+(?::\d+)?/[A-Za-z0-9._~/%+-]*")
_SHA_RE = re.compile(r"[0-9a-f]{7,64}")


def focus_slices(results: ResultsDocument) -> tuple[str, list[dict[str, Any]]]:
    """("regressed" | "inconclusive" | "closest" | "none", rows): the comment's slice table as
    plain numbers.

    The slices that regressed; else those the gate could not decide (docs/gate.md, "Verdict"),
    never called "closest to the line"; else the closest to the line: the gated slices that did
    not regress, lowest p (adjusted across the gated slices where there is one) first, then the
    largest drop, the ones a reviewer should look at next.
    `--format json` prints the same rows (console.comment_numbers).
    """
    slices: Mapping[str, SliceComparison] = (results.get("comparison") or {}).get("slices") or {}
    rows = [_row(k, slices[k]) for k in ordered(slices) if isinstance(slices[k], Mapping)]
    regressed = [r for r in rows if r["status"] == "regressed"]
    if regressed:
        return "regressed", regressed
    # a slice under gate.min_n keeps its status "too_small"; an entry of comparison.inconclusive
    # names it when its drop was beyond the tolerance (gate/inconclusive.py)
    named = {
        e.get("slice")
        for e in (results.get("comparison") or {}).get("inconclusive") or []
        if isinstance(e, Mapping)
    }
    undecided = [r for r in rows if r["status"] == "inconclusive" or r["slice"] in named]
    if undecided:
        return "inconclusive", undecided
    if results.get("verdict") == "inconclusive":
        return "none", []  # nothing was gated: the reasons say so, no slice is an all-clear
    gated = [r for r in rows if r["status"] == "ok"]
    if not gated:
        return "none", []

    def closeness(r: dict[str, Any]) -> tuple[float, float, str]:
        p = r["p_adjusted"] if r["p_adjusted"] is not None else r["p_value"]
        return (1.0 if p is None else float(p), float(r["delta"] or 0.0), r["slice"])

    return "closest", sorted(gated, key=closeness)[:MAX_CLOSEST]


def slice_rows(results: ResultsDocument) -> list[dict[str, Any]]:
    """Every gated slice as the comment's table numbers (`--format json`'s `slices`).

    With a baseline, the compared slices; without one, the gated families' slices, with
    baseline, delta, p and MDE None.
    """
    compared: Mapping[str, SliceComparison] = (results.get("comparison") or {}).get("slices") or {}
    if compared:
        return [_row(k, compared[k]) for k in ordered(compared) if isinstance(compared[k], Mapping)]
    slices = results["slices"]
    families = gated_families(results)
    rows = []
    for key in ordered(slices):
        s = slices[key]
        if family(key) in families and isinstance(s, Mapping):
            rows.append(_row(key, {**s, "n_shared": s["n"], "status": "not_gated"}))
    return rows


def _row(key: str, c: Mapping[str, Any]) -> dict[str, Any]:
    def number(name: str) -> float | None:
        v = c.get(name)
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None

    n = c.get("n_shared")
    return {
        "slice": key,
        "n": n if isinstance(n, int) and not isinstance(n, bool) else None,
        "baseline": number("baseline_accuracy"),
        "new": number("accuracy"),
        "wilson_low": number("wilson_low"),
        "wilson_high": number("wilson_high"),
        "delta": number("delta"),
        "p_value": number("p_value"),
        "p_adjusted": number("p_adjusted"),
        "mde": number("mde"),
        "status": str(c["status"]),
    }


def render_comment(results: ResultsDocument, provenance: Mapping[str, Any] | None = None) -> str:
    """The sticky comment for `results`; `provenance` (head_sha, run_url, conclusion, head_repo,
    head_branch) comes from the trusted workflow_run event, never from the artifact."""
    prov = provenance or {}
    from evalgate.report.drift import comment as drift_comment

    parts = [_provenance(prov), _verdict(results), _slices(results), drift_comment(results)]
    parts += [_gate_changes(results)]
    parts += [_new_probes(results), _links(prov), _accept(results)]
    body = "\n\n".join(p for p in parts if p)
    verdict = re.sub(r"[^a-z]", "", str(results["verdict"]))
    return defuse_references(body) + f"\n\n{MARKER_PREFIX} verdict={verdict} -->\n"


def render_no_verdict(provenance: Mapping[str, Any] | None, why: str, paths: Sequence[str] = ()) -> str:
    """The sticky comment for a run whose verdict the bot must not vouch for (the PR changed the
    gate's own workflow or action, so its `pull_request` run executed the PR's copy; or that could
    not be told; or the PR targets another branch than the default one): no verdict, no number
    from its results, only why and what decides instead. `why` is one sentence of evalgate's own
    text; `paths` are the PR's file names (data: shown as code, at most MAX_LIST)."""
    prov = provenance or {}
    parts = [_provenance(prov), "## ⚠️ evalgate: no verdict from this run", why]
    if paths:
        shown = ", ".join(code(p) for p in paths[:MAX_LIST])
        more = f" and {len(paths) - MAX_LIST:,} more" if len(paths) > MAX_LIST else ""
        parts.append(f"The pull request changes {shown}{more}.")
    parts.append(
        "What decides instead: the `eval-gate` workflow a repository ruleset requires (it runs the "
        "default branch's file, not the pull request's), or the gate's run on the default branch "
        "once a maintainer has reviewed and merged the change to the gate (CODEOWNERS on `.github/`). "
        "A maintainer who has reviewed it re-runs the gate under the required workflow "
        f"({MAINTAINER_SETUP})."
    )
    body = "\n\n".join(p for p in parts if p)
    return defuse_references(body) + f"\n\n{MARKER_PREFIX} verdict=none -->\n"


def safe_url(value: Any) -> str | None:
    """An https URL made only of path characters (no spaces, quotes, brackets or `#`), else None."""
    text = str(value or "")
    return text if _URL_RE.fullmatch(text) else None


def _provenance(prov: Mapping[str, Any]) -> str:
    bits = []
    sha = str(prov.get("head_sha") or "").lower()
    if _SHA_RE.fullmatch(sha):
        bits.append(f"head {code(sha[:12])}")
    if prov.get("head_repo") or prov.get("head_branch"):
        bits.append(f"from {inline(prov.get('head_repo') or '?')}:{inline(prov.get('head_branch') or '?')}")
    url = safe_url(prov.get("run_url"))
    if url:
        bits.append(f"[gate run]({url})")
    if prov.get("conclusion"):
        bits.append(f"run conclusion: **{inline(prov['conclusion'])}**")
    if not bits:
        return ""
    return (
        "<sub>Rendered by the base repository's evalgate from results.json · " + " · ".join(bits) + "</sub>"
    )


def _verdict(results: ResultsDocument) -> str:
    v = str(results["verdict"])
    head = _VERDICT_HEAD.get(v, f"evalgate: {inline(v)}")
    line = f"## {head}"
    if v != "refused" and headline.run_accuracy(results)[1]:
        # like with like: the pair is on the probes both runs scored (report/headline.py)
        line += f" — {inline(headline.overall_text(results))}"
    if v == "fail" and (drifted := headline.drifted_names(results)):
        line += "\n\nDrifted beyond `gate.drift_tolerance` since the anchor: " + ", ".join(
            inline(n, 120) for n in drifted
        )
    if v == "inconclusive":
        line += "\n\nThe gate could not decide: " + "; ".join(
            inline(n, 300) for n in headline.undecided_names(results)
        )
    reasons = [r for r in results.get("reasons") or [] if r is not None]
    why = [f"- {inline(r, REASON_CHARS)}" for r in reasons[:MAX_REASONS]]
    if len(reasons) > MAX_REASONS:
        why.append(f"- … and {len(reasons) - MAX_REASONS:,} more (full report)")
    findings = results.get("findings") or []
    if v == "refused" and findings:
        why.append(f"- {len(findings):,} problem(s) in the input, each listed in the full report")
    return line + ("\n\n" + "\n".join(why) if why else "")


def _slices(results: ResultsDocument) -> str:
    kind, rows = focus_slices(results)
    if kind == "none":
        return ""
    title = {
        "regressed": "Slices that regressed",
        "inconclusive": "Slices the gate could not decide",
    }.get(kind, "No slice regressed; closest to the line")
    shown = rows[:MAX_ROWS]
    cells = [
        [
            r["slice"],
            count(r["n"]),
            pct(r["baseline"]),
            pct(r["new"]),
            interval(r["wilson_low"], r["wilson_high"]),
            points(r["delta"]),
            # a slice under gate.min_n was not tested: no p-value beside the tested ones' (issue 25)
            pvalue(
                None
                if r["status"] == "too_small"
                else r["p_adjusted"]
                if r["p_adjusted"] is not None
                else r["p_value"]
            ),
            size_points(r["mde"]),
        ]
        for r in shown
    ]
    # the column shows the adjusted p where there is one: say which adjustment (issue 25)
    adjusted = any(r["p_adjusted"] is not None for r in shown)
    p_head = f"p ({headline.adjustment_label(results.get('comparison'))})" if adjusted else "p"
    body = table(
        ["slice", "n", "baseline", "new", "Wilson 95%", "Δ pts", p_head, "MDE pts"], cells, "lrrrrrrr"
    )
    if kind == "regressed" and multi_suite(results):
        body = Md(_per_suite(results, rows) + "\n\n" + body)
    more = f"\n\n… and {len(rows) - len(shown):,} more in the full report." if len(rows) > len(shown) else ""
    comparison = results.get("comparison") or {}
    ppls = [("Perplexity", comparison.get("perplexity") or {})]
    per_suite = comparison.get("suite_perplexity") or {}
    ppls += [(f"Suite {inline(n)}: perplexity", c) for n, c in per_suite.items()]
    for who, ppl in ppls:
        if ppl.get("status") == "regressed" and isinstance(ppl.get("ratio"), int | float):
            more += f"\n\n{who} regressed: ×{ppl['ratio']:.3f} against the baseline."
    return f"### {title}\n\n{body}{more}"


def _per_suite(results: ResultsDocument, rows: list[dict[str, Any]]) -> str:
    """Several suites: every suite's regressed slices by name, even those the table leaves out."""
    lines = []
    for suite, keys in by_suite(results, [r["slice"] for r in rows]):
        names = ", ".join(inline(split_suite(k)[1]) for k in keys)
        lines.append(f"- {'whole run' if suite is None else suite_label(results, suite)}: {names}")
    return "\n".join(lines)


def _describe(change: Any) -> str:
    """One gate change, as the full report words it (gate/yardstick.py), as inline text."""
    if isinstance(change, Mapping):
        return str(inline(describe(change), 200))
    return str(inline(change, 200))


def _gate_changes(results: ResultsDocument) -> str:
    changes = results.get("gate_changes_vs_baseline")
    lines = []
    if isinstance(changes, Sequence) and not isinstance(changes, str) and changes:
        lines += [f"- {_describe(c)}" for c in list(changes)[:MAX_LIST]]
        if len(changes) > MAX_LIST:
            lines.append(f"- … and {len(changes) - MAX_LIST:,} more (full report)")
    diff = results.get("gate_changes")
    tables = []
    if isinstance(diff, str) and diff.strip():
        edits, rest = baseline_changes(diff)
        tables = [change_table(c, MAX_ROWS) for c in edits]
        n = len(rest.splitlines())
        if n:
            lines.append(f"- edits to the gate's files ({n:,} diff lines; the full report shows them)")
    if not lines and not tables:
        return ""
    parts = ["### What this PR changes in its own gate", "\n".join(lines), *tables]
    return "\n\n".join(p for p in parts if p)


def _new_probes(results: ResultsDocument) -> str:
    ids = [str(i) for i in (results.get("comparison") or {}).get("new_probes") or []]
    if not ids:
        return ""
    by_id: dict[str, Mapping[str, Any]] = {p["id"]: p for p in results["probes"]}
    right = sum(1 for i in ids if by_id.get(i, {}).get("correct") is True)
    marks: dict[bool | None, str] = {True: "✅", False: "❌"}
    shown = [f"{code(i)} {marks.get(by_id.get(i, {}).get('correct'), '·')}" for i in sorted(ids)[:MAX_LIST]]
    more = f" … and {len(ids) - MAX_LIST:,} more" if len(ids) > MAX_LIST else ""
    return (
        f"### New probes (scored, not gated yet)\n\n{len(ids):,} new, {right:,} right "
        f"({pct(right / len(ids))}): " + ", ".join(shown) + more
    )


def _links(prov: Mapping[str, Any]) -> str:
    url = safe_url(prov.get("run_url"))
    if not url:
        return "The full report is in the gate run's job summary; REPORT.md and results.json in its artifact."
    return (
        f"**Full report:** [job summary]({url}) · [artifact `evalgate-report`]({url}#artifacts)"
        f" · [the run]({url})"
    )


def _accept(results: ResultsDocument) -> str:
    if results["verdict"] not in ("fail", "refused"):
        return ""
    return (
        "<details><summary>The regression or gate change is intended?</summary>\n\n"
        f"A maintainer with write permission who is not the PR's author adds the label "
        f"`{UPDATE_BASELINE_LABEL}` (regenerates the baseline from this checkpoint) or "
        f"`{APPROVE_GATE_LABEL}` (accepts the gate changes listed above). A label counts only on a "
        f"same-repository PR and only for the commit it was applied to; see {doc('docs/approval.md')}.\n\n"
        "</details>"
    )


# -- defusing references and mentions ------------------------------------------------------------

# Entities that decode to `@` or `#` (`&#64;`, `&#x40;`, `&commat;`, `&num;`, ...).
_ENTITY_RE = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);?")
# Every character whose NFKC form is `@` or `#` (tests/github/test_comment_trusted.py: the list is whole).
_ESCAPED_ENTITY_RE = re.compile(r"&amp;(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]*;?)")
_AT_LIKE = frozenset("\ufe6b\uff20")  # small and full-width commercial at
_HASH_LIKE = frozenset("\ufe5f\uff03")  # small and full-width number sign
# `@x` at a word start (not inside an e-mail address `a@b.c`); `_@x_` counts: `_` is no letter.
_MENTION_RE = re.compile(r"(?<![A-Za-z0-9`/.@-])@(?=[A-Za-z0-9])")
# `#12`, `owner/repo#12`, `GH-12`: issue references, wherever they stand.
_REF_RE = re.compile(r"#(?=[0-9])|(?<=\bGH)-(?=[0-9])", re.IGNORECASE)


def defuse_references(text: str) -> str:
    """Neither pings nor links an issue: a zero-width space after every `@`/`#` that would.

    Forms GitHub might decode first are brought to the plain character first: HTML entities that
    decode to `@`/`#` and characters whose NFKC form is `@`/`#` (full-width `＠`, small `﹫`).
    """

    def entity(m: re.Match[str]) -> str:
        decoded = html.unescape(m.group(0))
        return decoded if decoded in ("@", "#") else m.group(0)

    text = _ENTITY_RE.sub(entity, text)
    # `&amp;#64;` (escaped text) shows `&#64;`: inert on GitHub, but a second decoding anywhere
    # (a mail client, a copy) would make it a mention: break the entity too.
    text = _ESCAPED_ENTITY_RE.sub(
        lambda m: (
            "&amp;" + ZWSP + m.group(1) if html.unescape("&" + m.group(1)) in ("@", "#") else m.group(0)
        ),
        text,
    )
    text = "".join("@" if c in _AT_LIKE else "#" if c in _HASH_LIKE else c for c in text)
    text = _MENTION_RE.sub("@" + ZWSP, text)
    return _REF_RE.sub(lambda m: m.group(0) + ZWSP, text)


__all__ = ["Md", "defuse_references", "focus_slices", "render_comment", "safe_url", "slice_rows"]
