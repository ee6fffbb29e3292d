"""Checkpoint loading: native, Hugging Face or plugin, behind one function, `load_scorer`.

Loading never executes code from the checkpoint: native and Hugging Face weights are read from
safetensors (headers checked first); a `pytorch_model.bin` is scanned opcode by opcode and then
loaded only through `torch.load(weights_only=True)`; any other pickle (`.pt`, `.pth`, `.ckpt`)
is refused; `trust_remote_code` is off and a config with `auto_map` is refused before anything
is loaded. Every failure is a `CheckpointError` (exit 2) whose one-line message names the file.
A plugin (`--loader pkg.module:function`) is the user's own code, imported and called as is.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from evalgate.console import clean
from evalgate.edges import json_input
from evalgate.edges.inputs import allowed_roots
from evalgate.errors import CheckpointError
from evalgate.scorers.adapters import TokenizersAdapter
from evalgate.scorers.base import ScorerInfo, files_digest
from evalgate.scorers.safety import (
    PICKLE_SUFFIXES,
    check_regular_files,
    checkpoint_files,
    refuse_pickle_file,
)
from evalgate.scorers.torch_lm import TorchScorer, full_logits_fn

DTYPES = {"float32": torch.float32, "float64": torch.float64}
HINT_DIR = (
    "--checkpoint takes a native evalgate directory (config.json with 'evalgate_native') or a "
    "Hugging Face model directory (config.json + model.safetensors + tokenizer files)"
)


def load_scorer(
    checkpoint: Path | None,
    loader: str | None,
    *,
    root: Path,
    roots: Sequence[Path] | None = None,
    batch_size: int = 32,
    dtype: str = "float32",
    threads: int = 0,
) -> TorchScorer:
    """The scorer for a checkpoint directory, or for what a plugin loader returns."""
    if dtype not in DTYPES:
        raise CheckpointError(f"scoring.dtype {dtype!r} is not supported; use one of {', '.join(DTYPES)}")
    opts = {"batch_size": batch_size, "dtype": DTYPES[dtype], "threads": threads}
    if loader:
        from evalgate.scorers.plugin_loader import load_plugin

        return load_plugin(loader, checkpoint, root=root, **opts)
    if checkpoint is None:
        raise CheckpointError(
            "no checkpoint given", hint="pass --checkpoint DIR (or --loader pkg.module:function)"
        )
    path = Path(checkpoint)
    if not path.exists():
        raise CheckpointError(f"checkpoint not found: {path}", hint=HINT_DIR)
    if not path.is_dir():
        if path.suffix.lower() in PICKLE_SUFFIXES:
            raise refuse_pickle_file(path)
        raise CheckpointError(f"{path}: not a checkpoint directory", hint=HINT_DIR)
    # Inside the repository (or where the operator pointed --checkpoint): edges/inputs.py.
    check_regular_files(path, roots if roots is not None else allowed_roots(root, [path]))
    config_path = path / "config.json"
    if not config_path.is_file():
        pickles = sorted(p for p in path.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES)
        if pickles:
            raise refuse_pickle_file(pickles[0])
        raise CheckpointError(f"not a model directory: {path} has no config.json", hint=HINT_DIR)
    doc = read_json(config_path)
    if isinstance(doc, dict) and "evalgate_native" in doc:
        return load_native_scorer(path, **opts)
    from evalgate.scorers.hf_loader import load_hf_scorer  # transformers is imported only here

    return load_hf_scorer(path, doc, **opts)


def read_json(path: Path) -> Any:
    """A checkpoint's JSON file (config, tokenizer config, shard index): any failure, a deep
    nesting or a 5,000-digit number included, is a located refusal (edges/json_input.py)."""
    try:
        return json_input.loads(path.read_bytes())
    except json_input.UntrustedJSON as exc:
        where = f":{exc.line}" if exc.line else ""
        raise CheckpointError(f"{clean(path, 300)}{where}: not valid UTF-8 JSON ({exc.why})") from None


def n_parameters(model: Any) -> int:
    if not isinstance(model, torch.nn.Module):
        return 0
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# --- native --------------------------------------------------------------------------------


def load_native_scorer(path: Path, *, batch_size: int, dtype: torch.dtype, threads: int) -> TorchScorer:
    from evalgate.scorers import native_gpt

    model, tok, cfg = native_gpt.load_native(path)
    files = checkpoint_files(path)
    adapter = TokenizersAdapter(
        tok,
        bos_id=cfg.bos_token_id,
        eos_id=cfg.eos_token_id,
        pad_id=cfg.pad_token_id,
        unk_id=cfg.unk_token_id,
        sha256=files[native_gpt.TOKENIZER_FILE]["sha256"],
        source=str(path / native_gpt.TOKENIZER_FILE),
    )
    info = ScorerInfo(
        format="native",
        files=files,
        digest=files_digest(files),
        tokenizer_sha256=adapter.sha256,
        dtype=dtype_name(dtype),
        n_parameters=n_parameters(model),
    )
    return TorchScorer(
        full_logits_fn(model.to(dtype).eval()),
        adapter,
        batch_size,
        info=info,
        max_length=cfg.block_size,
        append_eos=True,
        vocab_size=cfg.vocab_size,
        dtype=dtype,
        threads=threads,
    )


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")
