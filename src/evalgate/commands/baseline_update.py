"""`evalgate baseline update`: score a checkpoint and write baselines/NAME.json atomically.

The baseline is the one file the gate trusts; it moves only through a labelled PR (see the
update-baseline workflow). It carries no wall-clock time, so rewriting it from the same inputs on
the same commit changes no byte.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from evalgate.commands._args import cli_loader, cli_path
from evalgate.config import GateConfig, load_config
from evalgate.console import Console
from evalgate.edges.files import atomic_write_json, refused_if_unwritable
from evalgate.edges.json_input import load_json_file
from evalgate.errors import EXIT_PASS, RefusedError
from evalgate.gate.baseline import baseline_from_results, validate_baseline
from evalgate.gate.results import refuse_partial, validate_results
from evalgate.pipeline import display_path, score


def git_commit(root: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and len(sha) == 40 else None


def pr_from_event() -> int | None:
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        return None
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    number = (event.get("pull_request") or {}).get("number")
    return number if isinstance(number, int) else None


def baseline_home(cfg: GateConfig) -> Path:
    """The folder whose baselines/ receives the file: the configuration's folder, except when the
    embedded default borrowed the bundled demo's inputs (no evalgate.yml and no probe set where the
    command runs): then, like the other outputs, where the command runs, not inside the package or
    the image's read-only bundle."""
    cwd = Path.cwd()
    if cfg.source == "embedded default" and cfg.root.resolve() != cwd.resolve():
        return cwd
    return cfg.root


def baseline_name(given: str | None, checkpoint_path: str | None) -> str:
    """--name, else the checkpoint folder's name; refused unless it makes a plain file name."""
    name = given or (Path(checkpoint_path).name if checkpoint_path else "") or "baseline"
    if not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        if given:
            raise RefusedError(f"--name {name!r}: use letters, digits, '-', '_' and '.' only")
        raise RefusedError(
            f"no --name given, and the checkpoint folder name {name!r} cannot name a baseline file",
            hint="pass --name NAME (letters, digits, '-', '_' and '.'): it writes baselines/NAME.json",
        )
    return name


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(
        args.config, {"checkpoint": cli_path(args.checkpoint), "loader": cli_loader(args.loader)}
    )
    progress = console.progress()
    if not args.from_results:  # a name that cannot be written is refused before the scoring, not after
        baseline_name(args.name, str(cfg.path(cfg.checkpoint)) if cfg.checkpoint else None)
    if args.from_results:
        results: dict[str, Any] = load_json_file(Path(args.from_results), "results")
        validate_results(results, args.from_results)
        if results.get("verdict") == "refused":
            raise RefusedError(f"{args.from_results}: a refused run cannot become a baseline")
        refuse_partial(
            results, args.from_results, "cannot become a baseline: it holds only part of the probes"
        )
    else:
        from evalgate.probeset_io import validate

        with progress.phase("validate probe set"):
            # Updating the baseline is what accepts a deletion or a version set back.
            outcome = validate(cfg).with_approvable_as_warnings()
        if not outcome.ok:
            from evalgate.report.findings import render_findings

            print(render_findings(list(outcome.findings), "text"))
            raise RefusedError(
                f"the probe set is invalid: {len(outcome.findings)} problem(s); no baseline written",
                findings=list(outcome.findings),
            )
        results = score(cfg, outcome, progress)
    name = baseline_name(args.name, results["checkpoint"]["path"])
    home = baseline_home(cfg)
    provenance = {"git_commit": args.commit or git_commit(home), "pr_number": args.pr or pr_from_event()}
    doc = baseline_from_results(results, name, provenance)
    validate_baseline(doc, f"baselines/{name}.json")
    target = home / "baselines" / f"{name}.json"
    with refused_if_unwritable(
        str(display_path(cfg, target)),
        "the baseline",
        "the baseline goes to baselines/NAME.json beside evalgate.yml: make that folder writable",
    ):
        atomic_write_json(target, doc)
    overall = (results.get("slices") or {}).get("overall") or {}
    acc = overall.get("accuracy")
    shown = f"{acc:.1%}" if isinstance(acc, float) else "n/a"
    print(f"evalgate: wrote {display_path(cfg, target)} (overall accuracy {shown})")
    return EXIT_PASS
