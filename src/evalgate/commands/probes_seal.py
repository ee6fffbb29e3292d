"""`evalgate probes seal`: write the sealed manifest (file hashes, version, digest, probe lock).

Sealing runs the whole validation first and refuses anything but "the files changed since the
last seal" (which is what sealing is for): an invalid set, a leaking set and, above all, a set
that breaks the probe lock are refused, or re-sealing would be a way around immutability.
"""

from __future__ import annotations

import argparse

from evalgate.commands._args import cli_paths
from evalgate.config import load_config
from evalgate.console import Console
from evalgate.edges.files import atomic_write_json, refused_if_unwritable
from evalgate.edges.journal import recover_set
from evalgate.errors import EXIT_PASS, EXIT_REFUSED
from evalgate.probeset.manifest import SEALABLE_CHECKS
from evalgate.probeset.outcome import APPROVABLE_CHECKS
from evalgate.probeset_io import display_path, sealed_manifest, validate
from evalgate.report.findings import render_text


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(args.config)
    recover_set(cfg)  # a change a killed run left half-done: finished or dropped first
    probe_files = cli_paths(args.probes)
    outcome = validate(cfg, probe_files)
    approvable = [f for f in outcome.findings if f.check in APPROVABLE_CHECKS]
    outcome = outcome.with_approvable_as_warnings()
    # A partial seal would drop the other files from the manifest while their ids stay locked.
    blocking = [f for f in outcome.findings if f.check not in SEALABLE_CHECKS]
    blocking += [w for w in outcome.warnings if w.check == "manifest-partial"]
    if blocking:
        print(render_text(blocking, closing="nothing was sealed"))
        return EXIT_REFUSED
    if approvable:
        # Sealed as they are: the run refuses them as gate changes until a maintainer approves.
        print(render_text((), approvable))
        print(
            "evalgate: warning: sealing a set that differs from the baseline; the gate refuses it as a "
            "gate change until a maintainer approves (docs/approval.md)"
        )
    bump = args.bump or "patch"
    path, previous, new = sealed_manifest(cfg, outcome, probe_files, bump)
    shown = display_path(cfg.root, path)
    if previous == new:
        print(f"evalgate: {shown} is up to date (version {new['version']}); nothing to seal")
        if args.bump:
            # `probes import`/`deprecate` seal as they write: a --bump here comes after the fact
            print(
                f"  --bump {args.bump} was not applied: the probes are the ones already sealed as "
                f"{new['version']}, and a version moves only when the probes change. To choose the part, "
                f"pass it with the change: `evalgate probes import FILE --bump {args.bump}` (or `probes "
                f"deprecate ... --bump {args.bump}`)"
            )
        return EXIT_PASS
    with refused_if_unwritable(
        shown, "the manifest", "check `manifest:` in evalgate.yml and that its folder is writable"
    ):
        atomic_write_json(path, new)
    if previous is None:
        change = f"version {new['version']} (first seal)"
    elif previous["version"] == new["version"]:
        change = f"version {new['version']} unchanged (same probes; file list updated)"
    else:
        change = f"version {previous['version']} -> {new['version']} ({bump})"
    print(
        f"evalgate: sealed {shown}: {change}; {new['n_probes']} probes in {len(new['files'])} file(s), "
        f"{len(new['lock'])} ids locked, digest {new['digest'][:12]}"
    )
    return EXIT_PASS
