"""The GitHub Action's entry point: `evalgate action` (`python -m evalgate.github.action` still works).

Reads the Action's inputs from `INPUT_*` (GitHub keeps an input's hyphen in the variable name,
`INPUT_FAIL-ON-REGRESSION`, which a shell cannot set, so `INPUT_FAIL_ON_REGRESSION` is accepted
too), runs `evalgate run` in-process, then writes the step outputs (`verdict`, `accuracy`,
`report-path`) to `$GITHUB_OUTPUT`, appends REPORT.md to `$GITHUB_STEP_SUMMARY`, and exits with
the gate's code: 0 pass or inconclusive, 1 regression (0 when fail-on-regression is false) or
inconclusive with fail-on-inconclusive, 2 refused, 3 error.
The pieces are pure functions of the environment so they are tested without a model.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from evalgate.console import print_commands, print_mask
from evalgate.errors import EXIT_PASS, EXIT_REFUSED, EXIT_REGRESSION
from evalgate.report.findings import escape_data

DEFAULT_OUT = "evalgate-out"
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
_VERDICT_BY_CODE = {0: "pass", 1: "fail", 2: "refused"}
# (input name, `evalgate run` flag) for the inputs that are passed through as they are.
_PATH_INPUTS = (
    ("config", "--config"),
    ("checkpoint", "--checkpoint"),
    ("baseline", "--baseline"),
    ("gate-changes", "--gate-changes"),
    # action.yml mounts the runner's cache folder here, only ever from outside the workspace
    ("cache", "--cache"),
    # the workflow's list of gate files the PR changed and it replaced with the base's (mounted
    # read-only from outside the workspace, like gate-changes)
    ("base-inputs-changed", "--base-inputs-changed"),
)


class InputError(ValueError):
    pass


def input_value(env: Mapping[str, str], name: str) -> str | None:
    """An input's value (stripped), or None when unset or empty, under either spelling."""
    upper = name.upper()
    for key in (f"INPUT_{upper}", f"INPUT_{upper.replace('-', '_')}"):
        value = env.get(key)
        if value is not None and value.strip():
            return value.strip()
    return None


def input_bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = input_value(env, name)
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise InputError(f"input `{name}`: expected true or false, got {value!r}")


def out_dir(env: Mapping[str, str]) -> str:
    return input_value(env, "out") or DEFAULT_OUT


_SHARD = re.compile(r"[1-9][0-9]{0,2}/[1-9][0-9]{0,2}")
# What `merge` takes of the passed-through inputs: it scores nothing, so no checkpoint or cache.
_MERGE_INPUTS = ("config", "baseline", "gate-changes", "base-inputs-changed")


def _merge_parts(folder: str) -> list[str]:
    """The partial results in the folder action.yml mounted (`merge` input): one sub-folder per
    shard artifact (download-artifact's layout), each with its results.json; merge itself checks
    that they are the N shards of one run, each exactly once."""
    parts = sorted(str(p) for p in Path(folder).glob("*/results.json"))
    if not parts:
        raise InputError(f"input `merge`: no partial results (*/results.json) in {folder}")
    return parts


def build_run_args(env: Mapping[str, str]) -> list[str]:
    """The `evalgate run` argument list for these inputs; --out is always given so we know it.

    With the `merge` input (the sharded gate's merge job, docs/github.md "Sharded gate") it is
    `evalgate merge PARTS...` with the same gate inputs instead; with `shard` (I/N), a shard's run."""
    merge, shard = input_value(env, "merge"), input_value(env, "shard")
    if merge is not None and shard is not None:
        raise InputError("inputs `merge` and `shard`: a job either scores a shard or merges them")
    if shard is not None and not _SHARD.fullmatch(shard):
        raise InputError(f"input `shard`: expected I/N, e.g. 2/4, got {shard!r}")
    if merge is not None:
        args = ["merge", *_merge_parts(merge), "--format", "github", "--out", out_dir(env)]
    else:
        args = ["run", "--format", "github", "--out", out_dir(env)]
    for name, flag in _PATH_INPUTS:
        value = input_value(env, name)
        if value is not None and (merge is None or name in _MERGE_INPUTS):
            args += [flag, value]
    if shard is not None:
        args += ["--shard", shard]
    if input_bool(env, "comment", False) and merge is None:
        args.append("--comment")
    # Decided by the workflow with the base branch's code (docs/security.md), never by the PR.
    if input_bool(env, "approve-gate-changes", False):
        args.append("--approve-gate-changes")
    # The workflow took the PR's own baseline (an approved baseline update): it must be this
    # checkpoint's, number for number (docs/approval.md).
    if input_bool(env, "verify-baseline", False):
        args.append("--verify-baseline")
    # An inconclusive verdict exits 1 instead of 0 (docs/gate.md, "Verdict"); the base's
    # `gate.inconclusive: fail` does so too, and nothing here can make it exit 0.
    if input_bool(env, "fail-on-inconclusive", False):
        args.append("--fail-on-inconclusive")
    return args


Stamp = tuple[int, int, int] | None
_RECENT_NS = 2_000_000_000


def stamps(out: str) -> dict[str, Stamp]:
    """(inode, mtime, size) of results.json and REPORT.md: tells a run's own files from older ones."""
    found: dict[str, Stamp] = {}
    for name in ("results.json", "REPORT.md"):
        try:
            st = os.stat(Path(out) / name)
            found[name] = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            found[name] = None
    return found


def gate_outputs(
    out: str, code: int, before: Mapping[str, Stamp] | None = None, started_ns: int = 0
) -> dict[str, str]:
    """verdict / accuracy / report-path, from results.json when this run wrote one.

    With `before` (the `stamps` taken when the run started at `started_ns`), files an earlier run
    left in the folder are ignored: a run that stopped before writing anything (a bad flag, a
    missing config) must not report the old verdict or post the old report. A file untouched but
    written in the last seconds before the start gets the benefit of the doubt (coarse file clocks).
    """
    now = stamps(out)

    def fresh(name: str) -> bool:
        stamp = now[name]
        if before is None or stamp is None or stamp != before.get(name):
            return True
        return stamp[1] > started_ns - _RECENT_NS

    verdict, accuracy = _VERDICT_BY_CODE.get(code, "error"), ""
    if fresh("results.json"):
        try:
            results = json.loads((Path(out) / "results.json").read_text(encoding="utf-8"))
            verdict = str(results.get("verdict") or verdict)
            value = ((results.get("slices") or {}).get("overall") or {}).get("accuracy")
            accuracy = "" if value is None else repr(float(value))
        except (OSError, ValueError, TypeError, AttributeError):
            pass
    report = Path(out) / "REPORT.md"
    shown = report.is_file() and fresh("REPORT.md")
    return {"verdict": verdict, "accuracy": accuracy, "report-path": str(report) if shown else ""}


def output_lines(outputs: Mapping[str, str]) -> str:
    """`name<<DELIMITER` blocks: safe for any value, newlines included.

    The delimiter is derived from the value (not random) so the file is reproducible; a value
    cannot contain the hash of itself.
    """
    chunks = []
    for name, value in outputs.items():
        delimiter = "EVALGATE_EOF_" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:24]
        chunks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(chunks)


def write_outputs(path: str | None, outputs: Mapping[str, str]) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(output_lines(outputs))


def append_summary(path: str | None, report_path: str, verdict: str, since: int = 0) -> None:
    """Append the report to the job summary, unless the run already did after byte `since`.

    `run --comment` on a read-only token writes the report there itself, under its notice.
    """
    if not path:
        return
    if report_path:
        text = Path(report_path).read_text(encoding="utf-8", errors="replace").rstrip("\n") + "\n"
    else:
        text = f"## evalgate: {verdict}\n\nNo REPORT.md was written; see the step log.\n"
    if report_path and since < _size(path):
        with open(path, "rb") as fh:
            fh.seek(since)
            if text.rstrip("\n") in fh.read().decode("utf-8", errors="replace"):
                return
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def exit_code(code: int, fail_on_regression: bool, verdict: str = "fail") -> int:
    """The step's exit code: a regression passes when fail-on-regression is false; an
    inconclusive run that exits 1 (fail-on-inconclusive, or the base's gate.inconclusive: fail)
    keeps its 1, which is that switch's own."""
    if code == EXIT_REGRESSION and not fail_on_regression and verdict != "inconclusive":
        return EXIT_PASS
    return code


def main(env: Mapping[str, str] | None = None, run: Callable[[Sequence[str]], int] | None = None) -> int:
    """`run` is `evalgate.cli.main` unless a test passes its own."""
    env = os.environ if env is None else env
    try:
        args = build_run_args(env)
        fail_on_regression = input_bool(env, "fail-on-regression", True)
    except InputError as exc:
        print_commands(f"::error title=evalgate action::{escape_data(str(exc))}")
        return EXIT_REFUSED
    print(shlex.join(["evalgate", *args]), flush=True)  # quoted: a path may hold spaces
    token = input_value(env, "github-token")
    if token and not (env.get("GITHUB_TOKEN") or env.get("GH_TOKEN")) and env is os.environ:
        # The `github-token` input, when the entry runs without action.yml mapping it to GITHUB_TOKEN
        # (the comment reads GITHUB_TOKEN); masked, since the log may echo it otherwise.
        print_mask(token)
        os.environ["GITHUB_TOKEN"] = token
    if run is None:
        from evalgate.cli import main as run
    before, started = stamps(out_dir(env)), time.time_ns()
    summary = env.get("GITHUB_STEP_SUMMARY")
    summary_size = _size(summary) if summary else 0
    code = run(args)
    outputs = gate_outputs(out_dir(env), code, before, started)
    for what, write in (
        ("GITHUB_OUTPUT", lambda: write_outputs(env.get("GITHUB_OUTPUT"), outputs)),
        (
            "GITHUB_STEP_SUMMARY",
            lambda: append_summary(summary, outputs["report-path"], outputs["verdict"], since=summary_size),
        ),
    ):
        try:
            write()
        except OSError as exc:  # the gate's verdict and the report on disk stand: warn, keep the exit code
            print_commands(
                "::warning title=evalgate action::"
                + escape_data(f"could not write {what} ({exc}); the report is in {out_dir(env)}")
            )
    if code >= EXIT_REFUSED and not outputs["report-path"]:
        print_commands(
            f"::error title=evalgate::evalgate run ended with exit code {code} and no report; see the log"
        )
    final = exit_code(code, fail_on_regression, outputs["verdict"])
    if final != code:
        print_commands(
            "::warning title=evalgate::a slice regressed, but fail-on-regression is false: the step passes"
        )
    return final


if __name__ == "__main__":
    sys.exit(main())
