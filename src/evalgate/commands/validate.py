"""`evalgate validate`: every problem of the probe set at once; exit 0 when clean, 2 otherwise.

The console prints the report in its format (console.py); under GitHub Actions
(GITHUB_ACTIONS=true) the problems are also `::error` workflow commands whatever --format says,
so they show on the pull request's diff.
"""

from __future__ import annotations

import argparse
from typing import Any

from evalgate.commands._args import cli_paths
from evalgate.config import GateConfig, SuiteConfig, load_config
from evalgate.console import Console, ValidationReport
from evalgate.errors import EXIT_PASS, EXIT_REFUSED, ConfigError
from evalgate.paths import display_path
from evalgate.probeset.coverage import coverage_rows
from evalgate.probeset_io import ValidationOutcome, cross_checked_by, validate
from evalgate.report.coverage_table import coverage_text
from evalgate.report.findings import render_text
from evalgate.types import MULTIPLE_CHOICE


def summary(cfg: GateConfig, outcome: ValidationOutcome) -> dict:
    probes = outcome.probes
    live = [p for p in probes if not p.deprecated]
    train = [k for k, v in outcome.inputs.items() if v["role"] == "train"]
    coverage_ok = not any(f.check == "coverage" for f in outcome.findings)
    if any(w.check == "coverage-skipped" for w in outcome.warnings):
        coverage_ok = None  # not judged: some records could not be read
    return {
        "probes": len(probes),
        "core": sum(p.category == "core" and p.kind != "ordinal" for p in live),
        "adversarial": sum(p.category == "adversarial" and p.kind != "ordinal" for p in live),
        "ordinal": sum(p.kind == "ordinal" for p in live),
        "deprecated": len(probes) - len(live),
        "files": list(outcome.probe_set["files"]),
        "coverage_ok": coverage_ok,
        # every cell with its count and bounds (report/coverage_table.py); empty when not checked
        "coverage": coverage_rows(outcome.coverage) if coverage_ok is not None else [],
        "leaks": len(outcome.leaks),
        "excluded": sorted(outcome.excluded),
        # the detectors that ran, when a suite says which (a multiple-choice one runs no template)
        "leak_detectors": (
            list(dict.fromkeys(d for suite in cfg.suites for d in _ran(cfg, suite)))
            if _itemised(cfg)
            else list(cfg.leaks.detectors)
        ),
        "train_files": train,
        "version": outcome.probe_set["version"],
        "digest": outcome.probe_set["digest"],
    }


def clean_text(cfg: GateConfig, s: dict, matrix: dict) -> str:
    detectors = ", ".join(f"{cfg.leaks.window}-gram" if d == "ngram" else d for d in cfg.leaks.detectors)
    against = ", ".join(s["train_files"]) or "no training files"
    leaks = f"{s['leaks']} leaks ({detectors}) against {against}" if detectors else "leak detection is off"
    if s["excluded"]:
        leaks += f"; {len(s['excluded'])} leaking probe(s) excluded"
    version = s["version"] or "unsealed"
    return "\n".join(
        [
            "evalgate validate: OK",
            f"  probes:   {s['probes']} ({s['core']} core, {s['adversarial']} adversarial, "
            f"{s['ordinal']} ordinal, {s['deprecated']} deprecated) in {len(s['files'])} file(s)",
            "  coverage: OK",
            f"  leaks:    {leaks}",
            f"  version:  {version} (digest {s['digest'][:12]})",
            "",
            "coverage matrix (scored probes per cell, with the bounds of evalgate.yml `coverage:`):",
            _indent(coverage_text(matrix, only_families=True)),
        ]
    )


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


# -- suites (docs/suites.md): a multiple-choice suite holds items, and several suites each say their own


def _itemised(cfg: GateConfig) -> bool:
    """The text speaks of suites: several of them, or a multiple-choice one (a configuration of
    one verb-forms suite reads as before suites existed)."""
    return len(cfg.suites) > 1 or any(s.kind == MULTIPLE_CHOICE for s in cfg.suites)


def _ran(cfg: GateConfig, suite: SuiteConfig) -> list[str]:
    """The leak detectors that ran on the suite: none without training files; a multiple-choice
    suite has no verb table for the template detector (probeset_io._leaks)."""
    if not suite.train:
        return []
    return [d for d in cfg.leaks.detectors if not (suite.kind == MULTIPLE_CHOICE and d == "template")]


def _suite_lines(cfg: GateConfig, outcome: ValidationOutcome, suite: SuiteConfig) -> list[str]:
    several = len(cfg.suites) > 1
    record = outcome.probe_set["suites"][suite.name] if several else outcome.probe_set
    files = list(record["files"])
    probes = [p for p in outcome.probes if not several or p.suite == suite.name]
    live = [p for p in probes if not p.deprecated]
    ordinal = sum(p.kind == "ordinal" for p in live)
    if suite.kind == MULTIPLE_CHOICE:
        counts = (
            f"items:    {len(probes)} ({len(live) - ordinal} choice, {ordinal} ordinal, "
            f"{len(probes) - len(live)} deprecated) in {len(files)} file(s)"
        )
    else:
        core = sum(p.category == "core" and p.kind != "ordinal" for p in live)
        counts = (
            f"probes:   {len(probes)} ({core} core, {len(live) - core - ordinal} adversarial, {ordinal} "
            f"ordinal, {len(probes) - len(live)} deprecated) in {len(files)} file(s)"
        )
    ran = _ran(cfg, suite)
    detectors = ", ".join(f"{cfg.leaks.window}-gram" if d == "ngram" else d for d in ran)
    if not cfg.leaks.detectors:
        leaks = "leak detection is off"
    elif not ran and (others := cross_checked_by(cfg, suite)):
        # checked against the other suites' training files all the same (leaks between suites)
        n = sum(
            1
            for w in [*outcome.findings, *outcome.warnings]
            if w.check == "leak-cross-suite" and w.file in files
        )
        leaks = (
            f"{n} leaks, checked only against the training files of suite {', '.join(others)} (it names none)"
        )
        excluded = [p for p in probes if p.id in outcome.excluded]
        if excluded:
            leaks += f"; {len(excluded)} leaking item(s) excluded"
    elif not ran:
        leaks = "not checked: the suite names no training files (`train:`)"
    else:
        n = sum(1 for f in outcome.leaks if f.file in files)
        against = ", ".join(display_path(cfg.root, cfg.path(t)) for t in suite.train)
        leaks = f"{n} leaks ({detectors}) against {against}"
        excluded = [p for p in probes if p.id in outcome.excluded]
        if excluded:
            leaks += f"; {len(excluded)} leaking item(s) excluded"
    return [
        counts,
        f"leaks:    {leaks}",
        f"version:  {record['version'] or 'unsealed'} (digest {record['digest'][:12]})",
    ]


def _suite_coverage(cfg: GateConfig, coverage: Any) -> list[str]:
    """Each suite's coverage table under its own heading."""
    out = []
    for suite in cfg.suites:
        matrix = coverage[suite.name] if len(cfg.suites) > 1 else coverage
        if suite.kind == MULTIPLE_CHOICE:
            least = suite.min_per_value
            what = f"live items per slice value; the suite's `coverage.min_per_value` is {least}"
        else:
            what = "scored probes per cell, with the bounds of the suite's `coverage:`"
        out += ["", f"coverage of suite {suite.name} ({what}):"]
        out.append(_indent(coverage_text(matrix, only_families=True)))
    return out


def suites_text(cfg: GateConfig, outcome: ValidationOutcome) -> str:
    lines = ["evalgate validate: OK"]
    empty = sum(w.check == "slice-empty" for w in outcome.warnings)
    # a retired or excluded slice is not "OK" without a word: it drops out of the gate
    covered = (
        f"OK, but {empty} suite(s) or slice value(s) have no live item (see the warnings)" if empty else "OK"
    )
    if len(cfg.suites) == 1:
        suite = cfg.suites[0]
        lines.append(f"  suite:    {suite.name} ({suite.kind})")
        parts = _suite_lines(cfg, outcome, suite)
        lines += ["  " + parts[0], f"  coverage: {covered}", *("  " + x for x in parts[1:])]
    else:
        for suite in cfg.suites:
            lines.append(f"  suite {suite.name} ({suite.kind}):")
            lines += ["    " + x for x in _suite_lines(cfg, outcome, suite)]
        lines.append(f"  coverage: {covered}")
    return "\n".join(lines + _suite_coverage(cfg, outcome.coverage))


def one_line(s: dict) -> str:
    return (
        f"probe set OK: {s['probes']} probes, coverage OK, {s['leaks']} leaks, "
        f"version {s['version'] or 'unsealed'}"
    )


def text_report(cfg: GateConfig, outcome: ValidationOutcome, s: dict) -> str:
    """The report for people: a short summary when clean, else every problem and the coverage."""
    if outcome.ok:
        lines = [suites_text(cfg, outcome) if _itemised(cfg) else clean_text(cfg, s, outcome.coverage)]
        if outcome.warnings:
            lines += ["", render_text((), outcome.warnings)]
        return "\n".join(lines)
    closing = "the probe set is refused (nothing was scored)"
    lines = [render_text(outcome.findings, outcome.warnings, closing=closing)]
    if s["coverage_ok"] is not None and _itemised(cfg):
        lines += _suite_coverage(cfg, outcome.coverage)
    elif s["coverage_ok"] is not None:
        lines += ["", "coverage (cells outside their bounds are marked):"]
        lines.append(_indent(coverage_text(outcome.coverage, only_families=True)))
    return "\n".join(lines)


SECTION = "power: the smallest drop each gated slice detects with power 0.8 (MDE, points; `evalgate power`)"


def check_history(cfg: GateConfig) -> None:
    """The configured baseline's history (docs/gate.md, "Drift"): a broken or rewritten chain is
    refused here as in `run` (exit 2, file, line and field named). A baseline that cannot be read
    is the power section's to say, not this check's; an unfinished update beside it (a journal)
    is refused here as in `run`, never swallowed with the unreadable baseline."""
    from evalgate.edges.journal import refuse_unfinished_update
    from evalgate.errors import EvalgateError
    from evalgate.probeset_io import load_baseline, load_history

    if cfg.baseline is not None:
        refuse_unfinished_update(cfg.path(cfg.baseline).parent, cfg.baseline)
    try:
        baseline = load_baseline(cfg)
    except EvalgateError:
        return
    load_history(cfg, baseline)


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(args.config)
    from evalgate.edges.journal import refuse_pending

    refuse_pending(cfg)  # a journal is never applied by a reader (edges/journal.py)
    if cfg.suites:
        # as `run` refuses them (config.py): a flag that was silently dropped would validate
        # something other than what the operator named (docs/suites.md)
        for flag, given in (("probes", args.probes), ("train", args.train)):
            if given:
                raise ConfigError(
                    f"--{flag}: with `suites:` in {cfg.source} each suite names its own files; "
                    "edit the suite instead"
                )
    outcome = validate(cfg, cli_paths(args.probes), cli_paths(args.train))
    check_history(cfg)
    s = summary(cfg, outcome)
    text = text_report(cfg, outcome, s)
    if outcome.ok:
        # What the gated slices can see, after the rest (docs/gate.md, "What your suite can see").
        from evalgate.pipeline import probe_set_power
        from evalgate.report.power import power_text

        s["power"] = doc = probe_set_power(cfg, outcome, strict=False, needed=False)
        text += "\n\n" + power_text(doc, short=True, title=SECTION)
    console.validation(ValidationReport(outcome.findings, outcome.warnings, s, text, one_line(s)))
    return EXIT_PASS if outcome.ok else EXIT_REFUSED
