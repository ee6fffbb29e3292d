"""Checkpoint loading: native, Hugging Face or plugin, behind one function, `load_scorer`.

Loading never executes code from the checkpoint: native and Hugging Face weights are read from
safetensors (headers checked first); a `pytorch_model.bin` is scanned opcode by opcode and then
loaded only through `torch.load(weights_only=True)`; any other pickle (`.pt`, `.pth`, `.ckpt`)
is refused; `trust_remote_code` is off and a config with `auto_map` is refused before anything
is loaded. Every failure is a `CheckpointError` (exit 2) whose one-line message names the file.
A plugin (`--loader pkg.module:function`) is the user's own code, imported and called as is.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import torch

from evalgate.edges.checkpoint_ref import is_reference_path, read_reference, verified_folder
from evalgate.errors import CheckpointError
from evalgate.paths import allowed_roots
from evalgate.scorers.hub_hint import hub_id_hint
from evalgate.scorers.loading import HINT_DIR, read_json
from evalgate.scorers.safety import PICKLE_SUFFIXES, check_regular_files, refuse_pickle_file
from evalgate.scorers.torch_lm import MAX_POSITIONS, TorchScorer

DTYPES = {"float32": torch.float32, "float64": torch.float64}


def load_scorer(
    checkpoint: Path | None,
    loader: str | None,
    *,
    root: Path,
    roots: Sequence[Path] | None = None,
    batch_size: int = 32,
    dtype: str = "float32",
    threads: int = 0,
    given: str | None = None,
    max_positions: int = MAX_POSITIONS,
) -> TorchScorer:
    """The scorer for a checkpoint directory, or for what a plugin loader returns.

    `given`: the checkpoint as the user wrote it (flag or evalgate.yml), judged by `hub_id_hint`
    when the folder is missing (`checkpoint` is already resolved: `./gpt2` would read `gpt2`)."""
    if dtype not in DTYPES:
        raise CheckpointError(f"scoring.dtype {dtype!r} is not supported; use one of {', '.join(DTYPES)}")
    opts = {
        "batch_size": batch_size,
        "dtype": DTYPES[dtype],
        "threads": threads,
        "max_positions": max_positions,
    }
    if loader:
        from evalgate.scorers.plugin_loader import load_plugin

        return load_plugin(loader, checkpoint, root=root, **opts)
    if checkpoint is None:
        raise CheckpointError(
            "no checkpoint given", hint="pass --checkpoint DIR (or --loader pkg.module:function)"
        )
    path = Path(checkpoint)
    if is_reference_path(path) and os.path.lexists(path):
        # A checkpoint by reference (edges/checkpoint_ref.py): its files from the local cache,
        # every size and SHA-256 verified before anything is loaded; never the network.
        ref = read_reference(path, roots=roots if roots is not None else allowed_roots(root, [path]))
        folder = verified_folder(ref)
        # The verified folder is the checkpoint: the cache is the operator's place (a read-only
        # mount in CI), so it is a root for its own files and nothing else.
        return load_scorer(
            folder,
            None,
            root=root,
            roots=(
                *(roots if roots is not None else allowed_roots(root, [])),
                Path(os.path.realpath(folder)),
            ),
            batch_size=batch_size,
            dtype=dtype,
            threads=threads,
            max_positions=max_positions,
        )
    if not path.exists():
        raise CheckpointError(
            f"checkpoint not found: {path}", hint=(hub_id_hint(given) if given else None) or HINT_DIR
        )
    if not path.is_dir():
        if path.suffix.lower() in PICKLE_SUFFIXES:
            raise refuse_pickle_file(path)
        raise CheckpointError(f"{path}: not a checkpoint directory", hint=HINT_DIR)
    # Inside the repository (or where the operator pointed --checkpoint): edges/inputs.py.
    check_regular_files(path, roots if roots is not None else allowed_roots(root, [path]))
    config_path = path / "config.json"
    if not os.path.lexists(config_path):  # anything there is read (and a folder refused) below
        pickles = sorted(p for p in path.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES)
        if pickles:
            raise refuse_pickle_file(pickles[0])
        raise CheckpointError(f"not a model directory: {path} has no config.json", hint=HINT_DIR)
    doc = read_json(config_path)
    if isinstance(doc, dict) and "evalgate_native" in doc:
        from evalgate.scorers.native_loader import load_native_scorer

        return load_native_scorer(path, **opts)
    from evalgate.scorers.hf_loader import load_hf_scorer  # transformers is imported only here

    return load_hf_scorer(path, doc, **opts)
