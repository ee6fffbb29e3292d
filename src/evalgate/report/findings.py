"""Findings -> text, JSON or GitHub workflow commands. Pure: strings out, nothing printed.

text    one line per finding, `file:line: probe-id: field: message`, grouped by file in line order,
        then the hints (each said once), then the summary ("3 problems; nothing was scored.").
json    {"ok", "findings": [Finding.to_dict()...], "warnings": [...], "summary": {...}}.
github  `::error file=F,line=L,title=T::message` (and `::warning`), escaped as the runner requires
        (https://docs.github.com/actions/reference/workflow-commands-for-github-actions): `%`, CR
        and LF in the message; the same plus `:` and `,` in properties, which they would end.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from evalgate.types import Finding

FORMATS = ("text", "json", "github")


def _order(findings: Sequence[Finding]) -> list[Finding]:
    """By file (in order of first appearance; file-less last), then by line, else stable."""
    files: dict[str | None, int] = {}
    for f in findings:
        files.setdefault(f.file, len(files))
    rank = {k: (k is None, i) for k, i in files.items()}
    return sorted(findings, key=lambda f: (rank[f.file], f.line or 0))


def finding_line(f: Finding) -> str:
    """`file:line: probe-id: field: message [check]`, leaving out the parts we do not know."""
    parts = []
    if f.file:
        parts.append(f.file + (f":{f.line}" if f.line else ""))
    elif f.line:
        parts.append(f"line {f.line}")
    if f.probe_id:
        parts.append(f.probe_id)
    if f.field:
        parts.append(f.field)
    parts.append(f"{f.message} [{f.check}]")
    return ": ".join(parts)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def render_text(
    findings: Sequence[Finding],
    warnings: Sequence[Finding] = (),
    closing: str = "nothing was scored",
) -> str:
    lines: list[str] = []
    current: object = object()
    for f in _order(findings):
        if f.file != current and len({x.file for x in findings}) > 1:
            if lines:
                lines.append("")
            lines.append(f"{f.file or '(probe set)'}:")
            current = f.file
        lines.append("  error: " + finding_line(f))
    if warnings:
        if lines:
            lines.append("")
        lines.extend("  warning: " + finding_line(w) for w in _order(warnings))
    hints: dict[str, list[str]] = {}
    for f in [*findings, *warnings]:
        if f.hint:
            checks = hints.setdefault(f.hint, [])
            if f.check not in checks:
                checks.append(f.check)
    if hints:
        lines.append("")
        lines.append("what to do:")
        lines.extend(f"  - [{', '.join(checks)}] {hint}" for hint, checks in hints.items())
    lines.append("")
    summary = f"{_plural(len(findings), 'problem')}; {closing}." if findings else "no problems."
    if warnings:
        summary += f" ({_plural(len(warnings), 'warning')})"
    lines.append(summary)
    return "\n".join(lines).lstrip("\n")


def render_json(
    findings: Sequence[Finding], warnings: Sequence[Finding] = (), summary: Mapping[str, Any] | None = None
) -> str:
    doc = {
        "ok": not findings,
        "findings": [f.to_dict() for f in _order(findings)],
        "warnings": [w.to_dict() for w in _order(warnings)],
        "summary": {"problems": len(findings), "warnings": len(warnings), **(summary or {})},
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True)


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_command(level: str, f: Finding) -> str:
    props = []
    if f.file:
        props.append(f"file={escape_property(f.file)}")
        if f.line:
            props.append(f"line={f.line}")
    title = f"evalgate {f.check}" + (f" ({f.probe_id})" if f.probe_id else "")
    props.append(f"title={escape_property(title)}")
    where = ": ".join(x for x in (f.probe_id, f.field) if x)
    message = (f"{where}: " if where else "") + f.message + (f"\nhint: {f.hint}" if f.hint else "")
    return f"::{level} {','.join(props)}::{escape_data(message)}"


def render_github(findings: Sequence[Finding], warnings: Sequence[Finding] = ()) -> str:
    lines = [github_command("error", f) for f in _order(findings)]
    lines += [github_command("warning", w) for w in _order(warnings)]
    return "\n".join(lines)


def render_findings(
    findings: Sequence[Finding],
    fmt: str = "text",
    *,
    warnings: Sequence[Finding] = (),
    summary: Mapping[str, Any] | None = None,
) -> str:
    """The one entry point the commands use."""
    if fmt == "text":
        return render_text(findings, warnings)
    if fmt == "json":
        return render_json(findings, warnings, summary)
    if fmt == "github":
        return render_github(findings, warnings)
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
