"""Every line evalgate prints passes through here, so no data can start a workflow command.

A GitHub Actions runner reads each line of a step's stdout and stderr (split at CR and LF) and
obeys it when, after leading whitespace, it starts with `::` (`::stop-commands::`, `::add-mask::`,
`::error ...`); the older `##[command]` form is recognised anywhere in a line. Checkpoint tensor
names, file names, pickle globals, symlink targets and probe ids are the PR's data and reach our
messages, so:

- `safe_line(text)` defuses every line of `text`: a line that would start a command gets a
  leading backslash, `##[` becomes `#\\#[`;
- `guarded_output()` (installed by `cli.main`) wraps `sys.stdout` and `sys.stderr` so that every
  write, whoever makes it (argparse, a library warning, a traceback), goes through `safe_line`,
  even when a line arrives in several writes;
- `print_commands(text)` is the one way out for the workflow commands evalgate builds itself
  (`::error`/`::warning`/`::notice` annotations whose data is escaped by
  `report.findings.escape_data`): only those three commands pass, anything else is defused;
- `clean(value)` is for interpolating untrusted values into a message: CR, LF and other control
  characters are shown escaped and the value is cut to a short excerpt.

See docs/hostile-inputs.md ("Log injection").

Below those, the output rules: one `Console` per `--format` (text, json, github), chosen once by
`cli.main` (`console_for`) and handed to the command. A command says what happened (a summary, the
problems that stopped it, an error); its console decides what goes to stdout, to stderr and as a
workflow command. The JSON console remembers that it printed its one document, so an error raised
after the summary adds no second one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from evalgate.errors import EvalgateError
    from evalgate.progress import Progress
    from evalgate.types import Finding

_BREAKS = re.compile(r"(\r\n|\r|\n)")
_COMMAND = re.compile(r"::(error|warning|notice)( [^\r\n:]*)?::[^\r\n]*")
# Control characters (C0 but TAB, DEL, C1) and Unicode line/paragraph separators.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
EXCERPT = 120  # the most characters of a file's (or a name's) content a message quotes


def _defuse(line: str) -> str:
    line = line.replace("##[", "#\\#[")
    body = line.lstrip()
    if body.startswith("::"):
        indent = len(line) - len(body)
        return line[:indent] + "\\" + body
    return line


def safe_line(text: str) -> str:
    """`text` with no line able to start a workflow command (line breaks themselves are kept)."""
    parts = _BREAKS.split(str(text))
    return "".join(p if i % 2 else _defuse(p) for i, p in enumerate(parts))


def clean(value: Any, limit: int = EXCERPT) -> str:
    """An untrusted value fit to interpolate into one line: control characters escaped
    (`\\n`, `\\r`, `\\x1b`), at most `limit` characters (then `…`)."""
    text = str(value)
    cut = len(text) > limit
    text = text[:limit]

    def esc(m: re.Match[str]) -> str:
        c = m.group()
        return {"\n": "\\n", "\r": "\\r"}.get(c) or (
            f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
        )

    return _CONTROL.sub(esc, text) + ("…" if cut else "")


class SafeStream:
    """A text stream that writes through `safe_line`, line by line.

    The start of a line is held back until it is known not to begin a command (`print` writes
    its text and its newline separately; a `:` may be followed by another in the next write).
    """

    def __init__(self, raw: TextIO):
        self.raw = raw
        self._pending = ""  # start of the current line, not yet written
        self._open = False  # the current line has begun safely; the rest cannot make it a command

    def write(self, s: str) -> int:
        parts = _BREAKS.split(s)
        for i, part in enumerate(parts):
            if i % 2:  # a line break
                self._drain()
                self.raw.write(part)
                self._open = False
            elif part:
                self._text(part)
        return len(s)

    def _text(self, part: str) -> None:
        if self._open:
            self.raw.write(part.replace("##[", "#\\#["))
            return
        self._pending += part
        body = self._pending.lstrip()
        if len(body) >= 2 or (body and body != ":"):
            self._drain()

    def _drain(self) -> None:
        if self._pending:
            self.raw.write(_defuse(self._pending))
            self._open = True
        self._pending = ""

    def flush(self) -> None:
        self.raw.flush()

    def close_line(self) -> None:
        """Write what is held back (at the end, or before a trusted command)."""
        self._drain()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, ...
        return getattr(self.raw, name)


@contextlib.contextmanager
def guarded_output() -> Iterator[None]:
    """sys.stdout and sys.stderr through `SafeStream` for the duration (restored after)."""
    saved = sys.stdout, sys.stderr
    out = saved[0] if isinstance(saved[0], SafeStream) else SafeStream(saved[0])
    err = saved[1] if isinstance(saved[1], SafeStream) else SafeStream(saved[1])
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        for stream in (out, err):
            with contextlib.suppress(Exception):
                stream.close_line()
                stream.flush()
        sys.stdout, sys.stderr = saved


def print_commands(text: str, file: TextIO | None = None) -> None:
    """Print annotations evalgate built (one per line). A line that is not an `::error`,
    `::warning` or `::notice` command of one line is defused like any other text."""
    stream = sys.stdout if file is None else file
    if not text:
        return
    raw = stream
    if isinstance(stream, SafeStream):
        stream.close_line()
        if stream._open:  # something is on the current line: the command must start a fresh one
            stream.write("\n")
        raw = stream.raw
    for line in _BREAKS.split(text)[::2]:
        raw.write((line if _COMMAND.fullmatch(line) else safe_line(line)) + "\n")
    raw.flush()


def print_mask(secret: str, file: TextIO | None = None) -> None:
    """`::add-mask::` for a secret evalgate holds (a token): the one other command it may write.

    A value with a line break or control character is not a token; it is not echoed at all.
    """
    if not secret or _CONTROL.search(secret):
        return
    stream = sys.stdout if file is None else file
    raw = stream
    if isinstance(stream, SafeStream):
        stream.close_line()
        if stream._open:
            stream.write("\n")
        raw = stream.raw
    raw.write(f"::add-mask::{secret}\n")
    raw.flush()


# ---------------------------------------------------------------------------------------------
# One console per output format


def in_github_actions() -> bool:
    """Under GitHub Actions the runner reads workflow commands on both streams: problems and
    verdicts are annotated on the run whatever --format says (docs/github.md)."""
    return os.environ.get("GITHUB_ACTIONS") == "true"


def shown_path(path: Path) -> str:
    """`path` as the caller sees it: relative to the working folder when inside it, so that
    `docker run -v "$PWD:/work" -w /work` prints `evalgate-out/REPORT.md`, not the container's
    `/work/evalgate-out/REPORT.md`."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


@dataclass(frozen=True)
class ValidationReport:
    """What `evalgate validate` found, in the shapes its consoles print."""

    findings: Sequence[Finding]
    warnings: Sequence[Finding]
    summary: Mapping[str, Any]  # the JSON document's `summary`
    text: str  # the report for people
    headline: str  # one line, for the `::notice` of a clean set

    @property
    def ok(self) -> bool:
        return not self.findings


@dataclass(frozen=True)
class PowerReport:
    """What `evalgate power` found (gate/power.py's document), in the shapes its consoles print."""

    document: Mapping[str, Any]  # the JSON document (docs/gate.md, "What your suite can see")
    text: str  # the table for people
    annotations: str  # workflow commands for --format github


class Console:
    """`--format text` (the default): lines for people on stdout, problems on stderr, and under
    GitHub Actions the workflow commands besides.

    `command` is the sub-command being run; `errors_annotated` is False for the commands that take
    no text|json|github --format (their early errors are a line on stderr only).
    """

    format = "text"

    def __init__(self, command: str = "run", *, errors_annotated: bool = True):
        self.command = command
        self.errors_annotated = errors_annotated

    # -- where annotations go -------------------------------------------------------------------

    def _annotating(self) -> bool:
        """Verdict and error annotations beyond what the format itself prints."""
        return in_github_actions()

    def _annotations(self) -> TextIO:
        return sys.stdout

    # -- what commands call ---------------------------------------------------------------------

    def progress(self) -> Progress:
        """The phase lines on stderr."""
        from evalgate.progress import Progress

        return Progress(quiet=False)

    def aside(self) -> contextlib.AbstractContextManager[Any]:
        """Where side output goes (the PR comment's lines after a run): stdout, except for JSON."""
        return contextlib.nullcontext()

    def findings(self, findings: Sequence[Finding]) -> None:
        """The problems that stopped the command."""
        from evalgate.report.findings import render_github, render_text

        if not findings:
            return
        print(render_text(findings), file=sys.stderr)
        if in_github_actions():
            print_commands(render_github(findings))

    def summary(self, results: Mapping[str, Any], out_dir: Path) -> None:
        """The verdict of a run (or of `compare`, `merge`), its reasons and warnings."""
        self._verdict(results, out_dir)
        warnings = results_warnings(results)
        self._warnings(warnings)
        if self._annotating():
            from evalgate.report.findings import escape_data, render_github

            verdict = results["verdict"]
            # inconclusive is a warning: neither the all-clear of a notice nor a failure's error
            level = {"pass": "notice", "fail": "error", "inconclusive": "warning"}.get(verdict, "error")
            stream = self._annotations()
            for reason in results.get("reasons", []) or [f"evalgate: {verdict}, {_accuracy(results)}"]:
                print_commands(f"::{level} title=evalgate {verdict}::{escape_data(reason)}", file=stream)
            if warnings:
                print_commands(render_github((), warnings), file=stream)

    def refused(self, results: Mapping[str, Any], out_dir: Path, findings: Sequence[Finding]) -> None:
        """A run (or `compare`) refused after its results were written: the error itself follows
        through `error` once the refusal reaches `cli.main`."""
        self.findings(findings)

    def validation(self, report: ValidationReport) -> None:
        from evalgate.report.findings import render_github

        print(report.text)
        if in_github_actions() and (report.findings or report.warnings):
            print_commands(render_github(report.findings, report.warnings))

    def power(self, report: PowerReport) -> None:
        """`evalgate power`: the table."""
        print(report.text)

    def refusal(self, lead: str, problems: Sequence[Finding], warnings: Sequence[Finding] = ()) -> None:
        """A probe-set edit refused before anything was written."""
        from evalgate.report.findings import render_text

        print(lead)
        print(render_text(problems, warnings, closing="nothing was written"))

    def error(self, exc: EvalgateError) -> None:
        """An expected failure: the message, then a 'hint:' line when we know what to do."""
        from evalgate.errors import EXIT_REFUSED

        print(f"evalgate: error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"  hint: {exc.hint}", file=sys.stderr)
        if exc.exit_code == EXIT_REFUSED and exc.findings and "problem(s)" not in exc.message:
            # Not "nothing was scored": a probe changed under its id or a test-set problem is found
            # after (or while) scoring; the message itself says what happened.
            print(f"  ({len(exc.findings)} problem(s), listed above)", file=sys.stderr)
        if self.errors_annotated:
            self._error_for_machines(exc)

    # -- the parts the formats change -----------------------------------------------------------

    def _verdict(self, results: Mapping[str, Any], out_dir: Path) -> None:
        verdict, acc = results["verdict"], _accuracy(results)
        report = shown_path(out_dir / "REPORT.md")
        print(f"evalgate: verdict {verdict.upper()} ({acc}); report in {report}")
        for reason in results.get("reasons", []):
            print(f"  - {reason}")
        _print_approved_changes(results)

    def _warnings(self, warnings: Sequence[Finding]) -> None:
        # e.g. a partial probe set: the deleted-probe check was skipped
        from evalgate.report.findings import finding_line

        for w in warnings:
            print(f"evalgate: warning: {finding_line(w)}", file=sys.stderr)

    def _error_for_machines(self, exc: EvalgateError) -> None:
        """Under GitHub Actions the reason is an `::error` annotation on the run, not only a line
        in the log."""
        if self._annotating():
            from evalgate.errors import EXIT_REFUSED
            from evalgate.report.findings import escape_data

            verdict = "refused" if exc.exit_code == EXIT_REFUSED else "error"
            command = f"::error title=evalgate {verdict}::{escape_data(exc.message)}"
            print_commands(command, file=self._annotations())


class GithubConsole(Console):
    """`--format github`: the problems and the verdict as workflow commands (annotations)."""

    format = "github"

    def _annotating(self) -> bool:
        return True

    def findings(self, findings: Sequence[Finding]) -> None:
        from evalgate.report.findings import render_github

        if findings:
            print_commands(render_github(findings), file=sys.stderr)

    def _warnings(self, warnings: Sequence[Finding]) -> None:
        pass  # annotated with the verdict

    def validation(self, report: ValidationReport) -> None:
        from evalgate.report.findings import escape_data, render_github

        if report.findings or report.warnings:
            print_commands(render_github(report.findings, report.warnings))
        if report.ok:
            print_commands(f"::notice title=evalgate validate::{escape_data(report.headline)}")

    def power(self, report: PowerReport) -> None:
        print_commands(report.annotations)


class JsonConsole(Console):
    """`--format json`: stdout holds exactly one JSON document, whatever happens (a verdict, a
    refusal, an error before anything ran); everything else goes to stderr, workflow commands
    included (the runner reads those there too)."""

    format = "json"

    def __init__(self, command: str = "run", *, errors_annotated: bool = True):
        super().__init__(command, errors_annotated=errors_annotated)
        self.printed = False  # the one document is on stdout: nothing more may be

    def _annotations(self) -> TextIO:
        return sys.stderr

    def _document(self, text: str) -> None:
        print(text)
        self.printed = True

    def progress(self) -> Progress:
        from evalgate.progress import Progress

        return Progress(quiet=True)

    def aside(self) -> contextlib.AbstractContextManager[Any]:
        return contextlib.redirect_stdout(sys.stderr)

    def findings(self, findings: Sequence[Finding]) -> None:
        # The JSON document carries them; under Actions the annotations go to stderr.
        from evalgate.report.findings import render_github

        if findings and in_github_actions():
            print_commands(render_github(findings), file=sys.stderr)

    def refused(self, results: Mapping[str, Any], out_dir: Path, findings: Sequence[Finding]) -> None:
        self.findings(findings)
        self.summary(results, out_dir)  # stdout is one JSON document whatever the verdict

    def _verdict(self, results: Mapping[str, Any], out_dir: Path) -> None:
        from evalgate.report.headline import run_accuracy

        summary = {
            "verdict": results["verdict"],
            "accuracy": run_accuracy(results)[0],  # from the entries, never a stale table
            "reasons": results.get("reasons", []),
            "findings": results.get("findings", []),
            "warnings": results.get("warnings", []),
            "out": str(out_dir),
        }
        summary.update(comment_numbers(results))
        self._document(json.dumps(summary, indent=2, ensure_ascii=False))

    def _warnings(self, warnings: Sequence[Finding]) -> None:
        pass  # in the document

    def validation(self, report: ValidationReport) -> None:
        from evalgate.report.findings import render_github, render_json

        self._document(render_json(report.findings, report.warnings, report.summary))
        if in_github_actions() and (report.findings or report.warnings):
            print_commands(render_github(report.findings, report.warnings), file=sys.stderr)

    def power(self, report: PowerReport) -> None:
        self._document(json.dumps(report.document, indent=2, ensure_ascii=False))

    def _error_for_machines(self, exc: EvalgateError) -> None:
        """The document of a command that stopped early (a bad config, a missing results file, an
        unwritable --out), unless the command printed its own before it stopped."""
        if not self.printed:
            from evalgate.errors import EXIT_REFUSED, ConfigError
            from evalgate.report.findings import render_json
            from evalgate.types import Finding

            findings = list(exc.findings) or [
                Finding("config" if isinstance(exc, ConfigError) else "input", exc.message, hint=exc.hint)
            ]
            if self.command == "validate":
                self._document(render_json(findings))
            else:
                doc = {
                    "verdict": "refused" if exc.exit_code == EXIT_REFUSED else "error",
                    "accuracy": None,
                    "reasons": [exc.message],
                    "findings": [f.to_dict() for f in findings],
                    "out": None,
                }
                self._document(json.dumps(doc, indent=2, ensure_ascii=False))
        super()._error_for_machines(exc)


_CONSOLES: dict[str, type[Console]] = {"text": Console, "json": JsonConsole, "github": GithubConsole}


def console_for(fmt: str | None, command: str = "run") -> Console:
    """The console of one invocation; `fmt` None for a command without a text|json|github --format."""
    if fmt is None:
        return Console(command, errors_annotated=False)
    return _CONSOLES[fmt](command)


def _accuracy(results: Mapping[str, Any]) -> str:
    """The headline's overall numbers (report/headline.py): like with like on the probes both
    runs scored, computed from the per-probe entries and the comparison, never from the `slices`
    table a results file read back could carry stale."""
    from evalgate.report.headline import overall_text, run_accuracy

    if not run_accuracy(results)[1]:
        return "overall n/a"
    return overall_text(results)


def comment_numbers(results: Mapping[str, Any]) -> dict[str, Any]:
    """The PR comment's numbers for `--format json`: every gated slice (`slices`), and which of
    them the comment's table shows (`comment_slices`: regressed, else closest to the line)."""
    from evalgate.report.comment import focus_slices, slice_rows

    kind, rows = focus_slices(results)
    return {
        "slices": slice_rows(results),
        "comment_slices": {"kind": kind, "slices": [r["slice"] for r in rows]},
    }


def _print_approved_changes(results: Mapping[str, Any], shown: int = 20) -> None:
    """An approved run still says, in its log, that it changed its own gate (docs/approval.md)."""
    from evalgate.gate.yardstick import describe

    changes = results.get("gate_changes_vs_baseline") or []
    if not changes or results.get("verdict") == "refused":
        return
    print(f"evalgate: {len(changes)} approved gate change(s) since the baseline:", file=sys.stderr)
    for change in changes[:shown]:
        print(f"  - {describe(change)}", file=sys.stderr)
    if len(changes) > shown:
        print(f"  ... and {len(changes) - shown} more (REPORT.md, results.json)", file=sys.stderr)


def results_warnings(results: Mapping[str, Any]) -> list[Finding]:
    """results.json `warnings` (validation warnings, as dicts) back as Findings for the renderers."""
    from evalgate.types import Finding

    keys = ("check", "message", "file", "line", "probe_id", "field", "hint")
    out = []
    for w in results.get("warnings") or []:
        if isinstance(w, dict) and isinstance(w.get("check"), str) and isinstance(w.get("message"), str):
            out.append(Finding(**{k: w[k] for k in keys if k in w}))
    return out
