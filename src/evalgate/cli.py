"""Command line: parse, hand off to a command module, turn errors into exit codes.

The command line is a contract (scripts and the Action call it; docs/cli.md): flags are
added, never renamed. `run` is the default command: `evalgate --checkpoint X` is
`evalgate run --checkpoint X`.

Each sub-command lives in `evalgate.commands.<name>` as `main(args, console) -> int` and is
imported only when used, so `evalgate --help` and `evalgate validate` never pay for importing
torch. The console (console.py) is chosen here once, from `--format`: every rule of what goes to
stdout, stderr and as a workflow command is the console's, and an expected error is printed by it.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Sequence

from evalgate import __version__
from evalgate.console import clean, console_for, guarded_output
from evalgate.errors import EXIT_REFUSED, EXIT_UNEXPECTED, EvalgateError

COMMANDS = (
    "run",
    "validate",
    "baseline",
    "compare",
    "power",
    "comment",
    "approval",
    "probes",
    "corpus",
    "merge",
    "init",
    "action",
    "fetch",
)

# The benchmark layouts `--from` knows: probeset/import_map.PRESETS (named here so that parsing the
# command line imports nothing of the probe set; tests/cli/test_import_suite.py keeps them equal).
IMPORT_PRESETS = ("mmlu", "arc", "hellaswag")

_FORMAT_HELP = "output format: text (default), json, or github (workflow-command annotations)"
# Commands whose --format is text|json|github and chooses their console (`probes export --format`
# is csv|jsonl: the export's own format).
_CONSOLE_FORMAT_COMMANDS = ("run", "validate", "compare", "power", "merge")


def _add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        metavar="FILE",
        help="gate configuration (default: ./evalgate.yml, else the embedded default)",
    )


def _add_probe_inputs(p: argparse.ArgumentParser) -> None:
    # action="extend": `--probes A --probes B` means both files, not B alone (argparse's "store"
    # would keep only the last occurrence and silently validate and score part of the set).
    p.add_argument("--probes", nargs="+", action="extend", metavar="FILE", help="probe files (JSONL)")
    p.add_argument(
        "--train",
        nargs="+",
        action="extend",
        metavar="FILE",
        help="training material to check for leaks (.jsonl with 'text', or .txt)",
    )


def _add_format(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("text", "json", "github"), default=None, help=_FORMAT_HELP)


def _add_approve(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--approve-gate-changes",
        action="store_true",
        help="accept changes to the gate itself since the baseline (probes removed, deprecated or "
        "edited, test set, template, grammar, training files, rules): gate on what is shared and "
        "list them; without it such a run is refused (exit 2). See docs/approval.md",
    )


def _add_fail_on_inconclusive(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--fail-on-inconclusive",
        action="store_true",
        help="exit 1, not 0, when the verdict is inconclusive (a drop the gate could not decide, or "
        'nothing gated), whatever gate.inconclusive says; see docs/gate.md, "Verdict"',
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalgate",
        description=(
            "CI eval gate for language-model checkpoints: validate the probe set, score the "
            "checkpoint, compare with the baseline, report. `run` is the default command."
        ),
        epilog=(
            "Exit codes: 0 pass (and inconclusive, unless gate.inconclusive: fail or "
            "--fail-on-inconclusive), 1 regression, 2 refused (bad input), 3 unexpected error."
        ),
    )
    parser.add_argument("--version", action="version", version=f"evalgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="validate, score, compare with the baseline and write the report (default)",
        description=(
            "Validate the probe set (refuse before loading any model), score the checkpoint, "
            "compare every slice with the baseline, write results.json, per_slice.csv, "
            "per_slice.png, REPORT.md and the badge into --out."
        ),
    )
    _add_config(run)
    run.add_argument("--checkpoint", metavar="PATH", help="checkpoint directory (native or Hugging Face)")
    run.add_argument("--loader", metavar="PKG.MOD:FN", help="plugin loader returning (model, tokenizer)")
    _add_probe_inputs(run)
    run.add_argument("--test", metavar="FILE", help="held-out set for perplexity")
    run.add_argument("--baseline", metavar="FILE|none", help="baseline to gate against; 'none' = no gate")
    run.add_argument("--out", metavar="DIR", help="output folder (default: evalgate-out)")
    run.add_argument("--comment", action="store_true", help="post/update the sticky PR comment")
    run.add_argument("--shard", metavar="I/N", help="score only shard I of N (see `evalgate merge`)")
    run.add_argument(
        "--cache",
        metavar="DIR",
        help="score cache folder: probes scored before with the same checkpoint and scoring "
        "configuration are read from it, new ones scored and added (docs/scoring.md)",
    )
    run.add_argument(
        "--gate-changes",
        metavar="FILE",
        help="a diff of evalgate.yml/baselines made by the PR, shown at the top of the report",
    )
    run.add_argument(
        "--base-inputs-changed",
        metavar="FILE",
        help="files (one path a line) the PR changed that the workflow replaced with the base "
        "commit's (the configuration, the baseline): each is a gate change, refused unless approved "
        "(docs/security.md)",
    )
    run.add_argument(
        "--verify-baseline",
        action="store_true",
        help="the baseline must be the one this checkpoint scores, outcome for outcome (a labelled "
        "baseline update, docs/approval.md); otherwise the run is refused",
    )
    _add_approve(run)
    _add_fail_on_inconclusive(run)
    _add_format(run)

    val = sub.add_parser(
        "validate",
        help="check the probe set: schema, semantics, coverage, leaks, seal, immutability",
        description="Report every problem of the probe set at once. Exit 0 when clean, 2 otherwise.",
    )
    _add_config(val)
    _add_probe_inputs(val)
    _add_format(val)

    base = sub.add_parser("baseline", help="manage baseline files")
    base_sub = base.add_subparsers(dest="baseline_command", metavar="ACTION", required=True)
    upd = base_sub.add_parser(
        "update",
        help="score the checkpoint and write baselines/NAME.json (atomically)",
        description="Score the checkpoint and write the baseline file the gate compares against.",
    )
    _add_config(upd)
    upd.add_argument("--checkpoint", metavar="PATH", help="checkpoint to take the baseline from")
    upd.add_argument("--loader", metavar="PKG.MOD:FN", help="plugin loader returning (model, tokenizer)")
    upd.add_argument(
        "--name",
        metavar="NAME",
        help="baseline name: writes baselines/NAME.json (default: the configured baseline, when it is "
        "baselines/NAME.json, else the checkpoint folder's name)",
    )
    upd.add_argument(
        "--from-results", metavar="RESULTS.json", help="build it from an existing result instead of scoring"
    )
    upd.add_argument("--pr", type=int, metavar="N", help="pull request number for the provenance")
    upd.add_argument(
        "--commit", metavar="SHA", help="git commit for the provenance (default: git rev-parse HEAD)"
    )

    anc = base_sub.add_parser(
        "anchor",
        help="mark baselines/NAME.json as the anchor drift is measured from",
        description="Mark the current baseline as the anchor: every later run also compares with it "
        "under gate.drift_tolerance (docs/gate.md, 'Drift'). Appends an anchor line to "
        "baselines/history/NAME.jsonl and keeps the baseline as NAME.anchor.json.",
    )
    _add_config(anc)
    anc.add_argument("--name", metavar="NAME", required=True, help="the baseline: baselines/NAME.json")

    cmp_ = sub.add_parser(
        "compare",
        help="gate two existing results (no model needed)",
        description="Compare RESULTS.json with BASELINE.json and write the report into --out.",
    )
    cmp_.add_argument("results", metavar="RESULTS.json")
    cmp_.add_argument("baseline", metavar="BASELINE.json")
    cmp_.add_argument("--out", metavar="DIR", help="output folder (default: evalgate-out)")
    _add_config(cmp_)
    _add_approve(cmp_)
    _add_fail_on_inconclusive(cmp_)
    _add_format(cmp_)

    pw = sub.add_parser(
        "power",
        help="what each gated slice can see: its smallest detectable drop, and the items it needs",
        description=(
            "For every slice the gate would gate (gate.slices, min_n, tolerances, multiplicity), the "
            "smallest drop the gate's test detects with power 0.8 (the MDE, in points) and the items a "
            "slice needs to detect a drop of --drop points: at typical disagreement rates between "
            "equally good checkpoints (5%, 10%, 20%), with the baseline's per-slice accuracy; or at the "
            "disagreement measured between two checkpoints (--checkpoint A --against B, both scored). "
            '"Low power" is judged as the gate judges it: at gate.assumed_disagreement, or at the '
            "background measured between A and B. "
            'Exit 0; 2 when refused. See docs/gate.md, "What your suite can see".'
        ),
    )
    _add_config(pw)
    pw.add_argument(
        "--baseline",
        metavar="FILE|none",
        help="baseline whose per-slice accuracy the figures use (default: the configured one); 'none': "
        "no baseline, the accuracy is not assumed",
    )
    pw.add_argument("--checkpoint", metavar="PATH", help="with --against: the first checkpoint (default: "
                    "the configured one)")  # fmt: skip
    pw.add_argument(
        "--against",
        metavar="PATH",
        help="a second checkpoint: both are scored and each slice's disagreement is measured between them",
    )
    pw.add_argument("--loader", metavar="PKG.MOD:FN", help="plugin loader returning (model, tokenizer)")
    pw.add_argument(
        "--drop",
        type=float,
        default=10.0,
        metavar="POINTS",
        help="the drop, in accuracy points, whose items needed are shown (default 10)",
    )
    _add_format(pw)

    com = sub.add_parser(
        "comment",
        help="post or update the sticky PR comment from a report folder",
        description=(
            "Render the pull request's sticky comment from DIR/results.json with this evalgate and "
            "post it (found by its hidden marker and its author, edited in place); markdown in DIR "
            "is never posted. Reads GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL and the "
            "workflow_run event."
        ),
    )
    com.add_argument("--report", metavar="DIR", required=True, help="folder holding results.json")
    com.add_argument("--pr", type=int, metavar="N", help="pull request number (default: from the event)")
    com.add_argument("--repo", metavar="OWNER/NAME", help="repository (default: $GITHUB_REPOSITORY)")
    com.add_argument(
        "--sha", metavar="SHA", help="find the open PR whose head is SHA (default: from the event)"
    )
    com.add_argument("--run-url", metavar="URL", help="the gate run's page (default: from the event)")
    com.add_argument(
        "--conclusion", metavar="WORD", help="the gate run's conclusion (default: from the event)"
    )
    com.add_argument(
        "--head-repo", metavar="OWNER/NAME", help="the run's head repository (default: from the event)"
    )
    com.add_argument(
        "--head-branch", metavar="BRANCH", help="the run's head branch (default: from the event)"
    )

    appr = sub.add_parser(
        "approval",
        help="check through the GitHub API that a maintainer's label approves a PR at a commit",
        description=(
            "Exit 0 when LABEL is on same-repository PR N, applied by a user with write, maintain or "
            "admin permission who is not the PR's author, after SHA became the PR's head (which it "
            "still is); exit 1 when not (one line per reason); exit 2 on a usage or API error. "
            "Reads GITHUB_TOKEN. See docs/approval.md."
        ),
    )
    appr.add_argument("--repo", metavar="OWNER/NAME", required=True)
    appr.add_argument("--pr", type=int, metavar="N", required=True)
    appr.add_argument("--sha", metavar="SHA", required=True, help="the commit the gate runs on")
    appr.add_argument("--label", metavar="LABEL", required=True, help="e.g. evalgate:approve-gate-change")
    appr.add_argument(
        "--api-url", metavar="URL", help="GitHub API (default: $GITHUB_API_URL or api.github.com)"
    )

    fetch = sub.add_parser(
        "fetch",
        help="download a checkpoint by reference into the local cache, every file verified",
        description=(
            "Read the checkpoint reference (a JSON file naming a Hugging Face repo at a 40-hex commit, "
            "or an https:// URL per file, with each file's SHA-256 and size), download every file "
            "over HTTPS only (HF_ENDPOINT honoured, no credential sent), checking size and SHA-256 "
            "as it streams, and move the verified files into the cache folder; a warm cache "
            "downloads nothing. Scoring (`run`) never touches the network: it verifies the cached "
            'files. See docs/github.md, "Where the checkpoint lives".'
        ),
    )
    fetch.add_argument(
        "--checkpoint",
        metavar="REF_FILE",
        help="the checkpoint reference (default: evalgate.yml's checkpoint)",
    )
    _add_config(fetch)
    fetch.add_argument(
        "--cache",
        metavar="DIR",
        help="cache folder (default: $EVALGATE_CHECKPOINT_CACHE, else ~/.cache/evalgate/checkpoints)",
    )
    fetch.add_argument(
        "--max-bytes",
        type=int,
        metavar="N",
        help="refuse a reference whose files add up to more than N bytes (default 64 GiB)",
    )
    fetch.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="time limit of the whole fetch (default 3600)"
    )

    probes = sub.add_parser("probes", help="build, seal, import, export and deprecate probes")
    p_sub = probes.add_subparsers(dest="probes_command", metavar="ACTION", required=True)
    build = p_sub.add_parser("build", help="write the shipped probe set deterministically")
    build.add_argument("--seed", type=int, default=42, help="random seed (default 42)")
    build.add_argument("--out-dir", default="data/eval", metavar="DIR", help="default data/eval")
    build.add_argument("--grammar", metavar="FILE", help="verb table (default from the config)")
    _add_config(build)
    seal = p_sub.add_parser("seal", help="write MANIFEST.json: file hashes, version, probe lock")
    _add_config(seal)
    seal.add_argument("--probes", nargs="+", action="extend", metavar="FILE", help="probe files")
    seal.add_argument("--bump", choices=("patch", "minor", "major"), help="version bump when the set changed")
    seal.add_argument(
        "--suite", metavar="NAME", help="seal this suite's manifest (default: every suite's, one by one)"
    )
    imp = p_sub.add_parser("import", help="add probes, or a suite's items, from CSV or JSONL, all or nothing")
    imp.add_argument("file", metavar="FILE")
    imp.add_argument("--into", metavar="FILE", help="probe file to add to (default: by category)")
    imp.add_argument("--allow-twins", action="store_true", help="accept prompts that duplicate another's")
    imp.add_argument("--bump", choices=("patch", "minor", "major"), help="re-seal version bump (patch)")
    imp.add_argument(
        "--suite", metavar="NAME", help="the suite of evalgate.yml to add to (default: the only one)"
    )
    imp.add_argument(
        "--from",
        dest="from_",
        choices=tuple(IMPORT_PRESETS),
        help="FILE is that benchmark's export (JSONL, JSON or CSV): its rows become the suite's items",
    )
    imp.add_argument(
        "--map",
        metavar="MAPPING",
        help="which column is which, e.g. question=prompt,choices=candidates,answer=expected,"
        "topic=slices.topic; const:VALUE=slices.DIM gives every row one value "
        "(over --from's columns when both are given)",
    )
    _add_config(imp)
    exp = p_sub.add_parser("export", help="write the probe set as CSV or JSONL")
    exp.add_argument("--format", choices=("csv", "jsonl"), required=True)
    exp.add_argument("--output", "-o", metavar="FILE", help="default: standard output")
    exp.add_argument("--probes", nargs="+", action="extend", metavar="FILE", help="probe files")
    exp.add_argument(
        "--suite", metavar="NAME", help="export this suite's files only (default: every suite's)"
    )
    _add_config(exp)
    dep = p_sub.add_parser("deprecate", help="retire a probe (and append its replacement)")
    dep.add_argument("id", metavar="ID")
    dep.add_argument("--replacement", metavar="FILE", help="JSON/JSONL file with the replacement probe")
    dep.add_argument("--bump", choices=("patch", "minor", "major"), help="re-seal version bump (patch)")
    dep.add_argument(
        "--suite", metavar="NAME", help="look for ID in this suite's files only (default: every suite's)"
    )
    _add_config(dep)

    corpus = sub.add_parser("corpus", help="the synthetic EN+ES corpus")
    c_sub = corpus.add_subparsers(dest="corpus_command", metavar="ACTION", required=True)
    cb = c_sub.add_parser("build", help="write data/corpus/{train,val,test}.jsonl deterministically")
    cb.add_argument("--seed", type=int, default=42, help="random seed (default 42)")
    cb.add_argument("--out-dir", default="data/corpus", metavar="DIR")
    cb.add_argument("--train-size", type=int, default=24000, metavar="N")
    _add_config(cb)

    merge = sub.add_parser("merge", help="combine sharded partial results into one result and report")
    merge.add_argument("parts", nargs="+", metavar="PART")
    merge.add_argument("--out", metavar="DIR", help="output folder (default: evalgate-out)")
    _add_config(merge)
    merge.add_argument("--baseline", metavar="FILE|none", help="baseline to gate against")
    # The sharded gate's merge job (init --shards N) passes what the single-runner gate passes
    # to `run`: the same refusals of a PR's own gate changes (docs/github.md, "Sharded gate").
    merge.add_argument(
        "--gate-changes", metavar="FILE", help="as `run --gate-changes`: shown at the top of the report"
    )
    merge.add_argument(
        "--base-inputs-changed",
        metavar="FILE",
        help="as `run --base-inputs-changed`: each file listed is a gate change, refused unless approved",
    )
    merge.add_argument(
        "--verify-baseline",
        action="store_true",
        help="as `run --verify-baseline`: the baseline must be the one the merged outcomes score",
    )
    _add_format(merge)
    _add_approve(merge)
    _add_fail_on_inconclusive(merge)

    init = sub.add_parser(
        "init",
        help="set up the gate here from one multiple-choice suite: config, items, baseline, workflows",
        description=(
            "In the current folder (the repository's root), write evalgate.yml declaring one "
            "multiple-choice suite NAME, import FILE into evalgate/NAME/items.jsonl and seal it, "
            "score --checkpoint into the first baseline baselines/NAME.json, write the gate, comment, "
            "badge and baseline-update workflows into .github/workflows/ and the gate's code owners "
            "into .github/CODEOWNERS, and the output folder into .gitignore (once). Nothing is "
            "written unless every step succeeds. See docs/suites.md and docs/github.md."
        ),
    )
    init.add_argument("--suite", metavar="NAME", required=True, help="the suite's name, e.g. k8s")
    init.add_argument(
        "--items",
        metavar="FILE",
        required=True,
        help="the items (JSONL), or a benchmark's export with --from/--map",
    )
    init.add_argument(
        "--from",
        dest="from_",
        choices=IMPORT_PRESETS,
        help="FILE is that benchmark's export (JSONL, JSON or CSV): its rows become the items",
    )
    init.add_argument(
        "--map",
        metavar="MAPPING",
        help="which column is which, e.g. question=prompt,choices=candidates,answer=expected,"
        "topic=slices.topic; const:VALUE=slices.DIM gives every row one value",
    )
    init.add_argument(
        "--checkpoint",
        metavar="DIR",
        required=True,
        help="the checkpoint folder the gate scores, or a checkpoint reference (checkpoints/current.json)",
    )
    init.add_argument(
        "--train",
        nargs="+",
        action="extend",
        metavar="FILE",
        help="training material to check the items for leaks (.jsonl with 'text', or .txt)",
    )
    init.add_argument("--test", metavar="FILE", help="held-out text for perplexity (default: none)")
    init.add_argument(
        "--template",
        metavar="FILE",
        help="the prompt template, {prompt} once, e.g. 'Question: {prompt}\\nAnswer:' (default: the "
        "prompt as it is)",
    )
    init.add_argument(
        "--slices",
        metavar="DIM,DIM",
        help="the dimensions items are sliced by (default: --from's slice columns, mmlu: subject; "
        "--map's slices.*; else the items' own; 'none' for none)",
    )
    init.add_argument(
        "--action",
        metavar="OWNER/NAME@REF",
        help="the evalgate release the workflows pin (default: the commit this evalgate was installed "
        "from on GitHub, else the release of this version, evalgate/evalgate@action-vX.Y.Z)",
    )
    init.add_argument(
        "--shards",
        metavar="N",
        help="write the gate as N scoring jobs (an Actions matrix, each loading the model once) and a "
        "merge job `gate` that gates: for a model too slow for one runner (docs/github.md, "
        '"Sharded gate"); default 1',
    )
    init.add_argument(
        "--runner",
        nargs="+",
        action="extend",
        metavar="LABEL",
        help="the runner labels of the jobs that load the model (the gate or its shards, the badge, "
        "the baseline update's scoring), e.g. a GPU runner's (docs/github.md, \"A GPU runner\"); "
        "default: GitHub's hosted ubuntu-24.04",
    )
    init.add_argument(
        "--owners",
        nargs="+",
        action="extend",
        metavar="@ORG/TEAM",
        help="the code owners who must review a change to the gate's inputs: .github/CODEOWNERS gets "
        "their lines (default: the lines commented out; an existing CODEOWNERS keeps its own)",
    )
    init.add_argument(
        "--leak-policy",
        choices=("refuse", "exclude"),
        help="what a leak does (the `leaks.policy` evalgate.yml key): refuse (default) the set, or "
        "exclude the leaking items and gate the rest",
    )
    init.add_argument(
        "--leak-window",
        type=int,
        metavar="N",
        help="the n-gram leak detector's window in words, 2-50 (the `leaks.window` key; default 5)",
    )
    init.add_argument(
        "--force",
        action="store_true",
        help="replace an existing evalgate.yml, baseline and workflows (the items are added to the "
        "suite's file)",
    )

    # The Action's entry as an installed console script: `python -m evalgate.github.action` with the
    # workspace as working folder would import a PR's own `evalgate/` package first (docs/security.md).
    sub.add_parser(
        "action",
        help="the GitHub Action's entry: run the gate from INPUT_* and write the step outputs",
        description=(
            "Read the Action's inputs from INPUT_* variables, run `evalgate run`, write verdict, "
            "accuracy and report-path (see action.yml and docs/github.md)."
        ),
    )
    return parser


def _normalise_argv(argv: list[str]) -> list[str]:
    """`run` is the default command: insert it unless a command or a top-level flag leads."""
    if not argv:
        return ["run"]
    first = argv[0]
    if first in COMMANDS or first in ("-h", "--help", "--version"):
        return argv
    return ["run", *argv]


def _empty_value(args: argparse.Namespace) -> str | None:
    """The first flag or argument given as an empty string: `--out ""` would be the working folder
    (outputs over the user's own files), `--checkpoint ""` or `--baseline ""` a folder that is not one;
    a script passing `--out "$OUT"` with OUT unset means a mistake, not any of these."""
    for key, value in vars(args).items():
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and not v.strip() for v in values):
            positional = key in _POSITIONALS.get(args.command, ())
            return key.upper() if positional else f"--{key.replace('_', '-')}"
    return None


_POSITIONALS = {"compare": ("results", "baseline"), "merge": ("parts",), "probes": ("file", "id")}


def _default_sigpipe() -> None:
    """`evalgate validate | head` should end quietly like any Unix tool, not with a traceback."""
    if hasattr(signal, "SIGPIPE") and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        _default_sigpipe()
    # Every line printed from here on, by us or by a library, cannot start a workflow command.
    with guarded_output():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in COMMANDS and not argv[0].startswith("-"):
        # `run` takes no positional argument: a leading word is a mistyped command, which argparse
        # would report as "unrecognized arguments" of `run`.
        close = difflib.get_close_matches(argv[0], COMMANDS, n=1)
        guess = f" (did you mean '{close[0]}'?)" if close else ""
        if not close and os.path.isdir(argv[0]):
            guess = f" (to gate this checkpoint: evalgate --checkpoint {argv[0]})"
        print(
            f"evalgate: error: unknown command '{argv[0]}'{guess}; commands: {', '.join(COMMANDS)} "
            "(`evalgate --help`; `run` is the default: `evalgate --checkpoint PATH`)",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    parser = build_parser()
    try:
        args = parser.parse_args(_normalise_argv(argv))
    except SystemExit as exc:  # argparse: --help/--version exit 0, usage errors exit 2
        misplaced = [a for a in argv[1:] if a in COMMANDS]
        if exc.code == 2 and argv and argv[0].startswith("-") and misplaced:
            # `evalgate --config x.yml validate`: the flags went to the default `run`.
            print(f"  hint: the command comes first: evalgate {misplaced[0]} [flags]", file=sys.stderr)
        return int(exc.code or 0)
    empty = _empty_value(args)
    if empty:
        print(f"evalgate: error: {empty}: empty value (an unset shell variable?)", file=sys.stderr)
        return EXIT_REFUSED
    name = args.command
    sub_action = (
        getattr(args, "baseline_command", None)
        or getattr(args, "probes_command", None)
        or getattr(args, "corpus_command", None)
    )
    module_name = f"evalgate.commands.{name}" + (f"_{sub_action}" if sub_action else "")
    console = console_for((args.format or "text") if name in _CONSOLE_FORMAT_COMMANDS else None, name)
    try:
        module = importlib.import_module(module_name)
        return int(module.main(args, console))
    except EvalgateError as exc:
        console.error(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        print("evalgate: interrupted", file=sys.stderr)
        return EXIT_UNEXPECTED
    except SystemExit:
        raise
    except BaseException as exc:  # the one place an unforeseen failure becomes exit 3
        # BaseException, not Exception: a Rust panic (pyo3's PanicException) or a GeneratorExit
        # would otherwise escape with a traceback and Python's exit code 1, which reads as
        # "regression". Panics on checkpoint input are caught where they happen (exit 2, located).
        if os.environ.get("EVALGATE_DEBUG"):
            traceback.print_exc()
        else:
            tb = traceback.extract_tb(exc.__traceback__)
            where = f"{tb[-1].filename}:{tb[-1].lineno}" if tb else "?"
            print(
                f"evalgate: unexpected error: {type(exc).__name__}: {clean(exc, 300)}\n"
                f"  at {where}\n"
                "  This is a bug in evalgate; rerun with EVALGATE_DEBUG=1 for the full traceback.",
                file=sys.stderr,
            )
        return EXIT_UNEXPECTED


if __name__ == "__main__":
    raise SystemExit(main())
