"""What the commands share about their flags: paths as the caller typed them, `--loader`, and the
`--out` folder (checked before anything runs; a failure to write there is the caller's to fix).

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
from evalgate.schemas import loader_spec


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
