"""What the commands share about their flags: paths as the caller typed them, `--loader`, and the
`--out` folder (checked before anything runs; a failure to write there is the caller's to fix);
and, for the commands that gate (`run`, `compare`, `merge`, `baseline update`), the one request
their flags make (`gate_request`) and every collaborator of the composition root, built in one
place (`gate_root`, pipeline/root.py).

Commands never import each other (tests/project/test_command_boundaries.py): what two of them share lives
here when it is about their arguments, and in the module that owns it otherwise (the probe set's
edits in probeset_io.py, the PR comment in github/, the output rules in console.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalgate.config import GateConfig
from evalgate.errors import RefusedError
from evalgate.pipeline.root import Collaborators, GateRequest, GateRoot
from evalgate.pipeline.scoring import ScorerFactory, load_configured_scorer
from evalgate.schemas import loader_spec

# The scorer every gate of this process builds its model with: scorers/loaders.load_scorer. The
# one seam for a test's scorer (tests/helpers/fake_scorer.py), as check-jsonschema's
# `build_checker` is for its checker.
SCORER_FACTORY: ScorerFactory = load_configured_scorer


def cli_path(value: str | None) -> str | None:
    """A path flag is relative to where the command runs, not to the configuration's folder."""
    if value is None or value.lower() == "none":
        return value
    return str(Path(value).absolute())


def cli_paths(values: list[str] | None) -> list[str] | None:
    """Path flags given several times (`--probes A B`), each as `cli_path`; None when not given."""
    return None if not values else [str(Path(v).absolute()) for v in values]


def cli_loader(value: str | None) -> str | None:
    """--loader checked as the flag it is (the schema would name it "effective configuration")."""
    if value is not None and not loader_spec().match(value):
        raise RefusedError(
            f"--loader {value}: expected package.module:function",
            hint="e.g. --loader mylab.model:load (a module importable from your repository)",
        )
    return value


def output_folder(cfg: GateConfig) -> Path:
    """The output folder; refused up front when it (or a parent) is a file, since even a refusal
    writes its results there."""
    out_dir = cfg.path(cfg.out)
    from evalgate.edges.outputs import refuse_symlinked

    refuse_symlinked(out_dir)
    for path in (out_dir, *out_dir.parents):
        if path.exists():
            if not path.is_dir():
                raise RefusedError(
                    f"output folder {out_dir}: {path} exists and is not a folder",
                    hint="choose an output folder (default evalgate-out), or set `out:` in evalgate.yml",
                )
            if not os.access(path, os.W_OK | os.X_OK):
                # Found before any model is loaded, not as a PermissionError after scoring.
                raise RefusedError(
                    f"output folder {out_dir}: {path} is not writable",
                    hint="choose a writable output folder with --out (or `out:` in evalgate.yml)",
                )
            break
    return out_dir


def write_outputs(results: Mapping[str, Any], out_dir: Path, cfg: GateConfig) -> None:
    """Every output of the run into `out_dir` (edges/outputs.py); a folder that cannot take them is
    a refusal naming --out, not a bug. Only the writing is the folder's: the outputs are drawn
    first, and a failure to draw them (an `OSError` inside a library) is not blamed on the folder
    (it is exit 3, named as what it is)."""
    from evalgate.edges.outputs import render_outputs, write_rendered

    files = render_outputs(results, cfg.report)
    try:
        write_rendered(files, out_dir)
    except OSError as exc:  # read-only folder, disk full: the user's to fix, not a bug (exit 2)
        raise RefusedError(
            f"output folder {out_dir}: cannot write the outputs there: {exc.strerror or exc}",
            hint="choose a writable output folder with --out (or `out:` in evalgate.yml)",
        ) from None


class OutputFolder:
    """The output sink of a gate (pipeline/root.OutputSink): the --out folder."""

    def folder(self, cfg: GateConfig) -> Path:
        return output_folder(cfg)

    def clear(self, out_dir: Path) -> None:
        from evalgate.edges.outputs import clear_outputs

        clear_outputs(out_dir)

    def write(self, results: Mapping[str, Any], out_dir: Path, cfg: GateConfig) -> None:
        write_outputs(results, out_dir, cfg)


def scorer_factory() -> ScorerFactory:
    """The scorer factory of this process (`SCORER_FACTORY`, read when asked), for the commands
    that score without a gate (`init`, `power --against`)."""
    return SCORER_FACTORY


def gate_root(console: Any) -> GateRoot:
    """The composition root with every collaborator a gate talks to (pipeline/root.py)."""
    return GateRoot(Collaborators(console=console, outputs=OutputFolder(), scorer_factory=scorer_factory()))


def config_overrides(args: Any) -> dict[str, Any]:
    """`run`'s flags in the configuration's own shape (None = not given)."""
    return {
        "checkpoint": cli_path(getattr(args, "checkpoint", None)),
        "loader": cli_loader(getattr(args, "loader", None)),
        "test": cli_path(getattr(args, "test", None)),
        "baseline": cli_path(getattr(args, "baseline", None)),
        "out": cli_path(getattr(args, "out", None)),
        # --probes/--train replace the configured files: the pinned configuration of results.json
        # (and of a baseline) must name the files that were used, not the ones in evalgate.yml.
        "probes": cli_paths(getattr(args, "probes", None)),
        "train": cli_paths(getattr(args, "train", None)),
    }


def gate_request(args: Any, overrides: Mapping[str, Any]) -> GateRequest:
    """The one typed request a gate's command line makes; a flag a command lacks is not given."""
    return GateRequest(
        config=args.config,
        overrides=overrides,
        probes=cli_paths(getattr(args, "probes", None)),
        train=cli_paths(getattr(args, "train", None)),
        checkpoint_arg=getattr(args, "checkpoint", None),
        shard=getattr(args, "shard", None),
        cache=getattr(args, "cache", None),
        gate_changes=getattr(args, "gate_changes", None),
        base_inputs_changed=getattr(args, "base_inputs_changed", None),
        approve_gate_changes=bool(getattr(args, "approve_gate_changes", False)),
        verify_baseline=bool(getattr(args, "verify_baseline", False)),
        fail_on_inconclusive=bool(getattr(args, "fail_on_inconclusive", False)),
        results=getattr(args, "results", None),
        parts=tuple(getattr(args, "parts", None) or ()),
    )
