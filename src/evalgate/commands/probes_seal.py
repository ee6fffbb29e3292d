"""`evalgate probes seal [--suite NAME]`: write the sealed manifest (file hashes, version, digest,
probe lock).

Sealing runs the whole validation first and refuses anything but "the files changed since the
last seal" (which is what sealing is for): an invalid set, a leaking set and, above all, a set
that breaks the probe lock are refused, or re-sealing would be a way around immutability.

With `suites:` in evalgate.yml (docs/suites.md) every suite has its own manifest: `--suite NAME`
seals that one, and without it every suite's is sealed, after all of them passed the checks (one
suite's problem seals none). An id used by two suites refuses both.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalgate.commands._args import cli_paths
from evalgate.config import GateConfig, load_config
from evalgate.console import Console
from evalgate.edges.files import atomic_write_json, refused_if_unwritable
from evalgate.edges.journal import recover_set
from evalgate.errors import EXIT_PASS, EXIT_REFUSED, RefusedError
from evalgate.probeset.manifest import SEALABLE_CHECKS
from evalgate.probeset.outcome import APPROVABLE_CHECKS
from evalgate.probeset_io import ValidationOutcome, display_path, sealed_manifest, validate
from evalgate.report.findings import render_text
from evalgate.types import Finding


@dataclass(frozen=True)
class _Checked:
    cfg: GateConfig
    outcome: ValidationOutcome
    blocking: list[Finding]
    approvable: list[Finding]


def _check(cfg: GateConfig, probe_files: Sequence[str] | None, more: Sequence[Finding] = ()) -> _Checked:
    recover_set(cfg)  # a change a killed run left half-done: finished or dropped first
    outcome = validate(cfg, probe_files)
    approvable = [f for f in outcome.findings if f.check in APPROVABLE_CHECKS]
    outcome = outcome.with_approvable_as_warnings()
    # A partial seal would drop the other files from the manifest while their ids stay locked.
    blocking = [f for f in outcome.findings if f.check not in SEALABLE_CHECKS]
    blocking += [w for w in outcome.warnings if w.check == "manifest-partial"]
    return _Checked(cfg, outcome, [*blocking, *more], approvable)


def _seal(checked: _Checked, probe_files: Sequence[str] | None, bump_flag: str | None) -> None:
    cfg, outcome = checked.cfg, checked.outcome
    bump = bump_flag or "patch"
    path, previous, new = sealed_manifest(cfg, outcome, probe_files, bump)
    shown = display_path(cfg.root, path)
    if previous == new:
        print(f"evalgate: {shown} is up to date (version {new['version']}); nothing to seal")
        if bump_flag:
            # `probes import`/`deprecate` seal as they write: a --bump here comes after the fact
            print(
                f"  --bump {bump_flag} was not applied: the probes are the ones already sealed as "
                f"{new['version']}, and a version moves only when the probes change. To choose the part, "
                f"pass it with the change: `evalgate probes import FILE --bump {bump_flag}` (or `probes "
                f"deprecate ... --bump {bump_flag}`)"
            )
        return
    with refused_if_unwritable(
        shown, "the manifest", "check `manifest:` in evalgate.yml and that its folder is writable"
    ):
        atomic_write_json(path, new)
    print(f"evalgate: sealed {shown}: {_change(previous, new, bump)}; {_counts(new)}")


def _change(previous: dict[str, Any] | None, new: dict[str, Any], bump: str) -> str:
    if previous is None:
        return f"version {new['version']} (first seal)"
    if previous["version"] == new["version"]:
        return f"version {new['version']} unchanged (same probes; file list updated)"
    return f"version {previous['version']} -> {new['version']} ({bump})"


def _counts(new: dict[str, Any]) -> str:
    return (
        f"{new['n_probes']} probes in {len(new['files'])} file(s), {len(new['lock'])} ids locked, "
        f"digest {new['digest'][:12]}"
    )


def _cross_suite(whole: ValidationOutcome, parts: Sequence[_Checked]) -> dict[str, list[Finding]]:
    """The findings only the whole configuration shows (an id two suites use), by suite."""
    own = {f for part in parts for f in part.outcome.findings}
    out: dict[str, list[Finding]] = {}
    for part in parts:
        assert part.cfg.suite is not None
        files = set(part.outcome.probe_set["files"])
        out[part.cfg.suite.name] = [
            f for f in whole.findings if f.check == "duplicate-id" and f not in own and f.file in files
        ]
    return out


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(args.config)
    probe_files = cli_paths(args.probes)
    if args.suite is None and not cfg.suites:
        checked = _check(cfg, probe_files)
        return _report_and_seal([checked], probe_files, args.bump)
    if probe_files:
        raise RefusedError(
            "--probes: with `suites:` in evalgate.yml every suite names its own files",
            hint="seal one suite with --suite NAME, or every suite without it",
        )
    suites = [cfg.suite_named(args.suite)] if args.suite else list(cfg.suites)
    parts = [_check(cfg.for_suite(s), None) for s in suites]
    if len(cfg.suites) > 1:
        cross = _cross_suite(validate(cfg), parts)
        parts = [
            _Checked(p.cfg, p.outcome, [*p.blocking, *cross[s.name]], p.approvable)
            for p, s in zip(parts, suites, strict=True)
        ]
    return _report_and_seal(parts, None, args.bump)


def _report_and_seal(parts: Sequence[_Checked], probe_files: Sequence[str] | None, bump: str | None) -> int:
    blocking = [f for p in parts for f in p.blocking]
    if blocking:
        print(render_text(blocking, closing="nothing was sealed"))
        return EXIT_REFUSED
    approvable = [f for p in parts for f in p.approvable]
    if approvable:
        # Sealed as they are: the run refuses them as gate changes until a maintainer approves.
        print(render_text((), approvable))
        print(
            "evalgate: warning: sealing a set that differs from the baseline; the gate refuses it as a "
            "gate change until a maintainer approves (docs/approval.md)"
        )
    for part in parts:
        _seal(part, probe_files, bump)
    return EXIT_PASS
