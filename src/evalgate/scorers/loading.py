"""What every checkpoint loader shares: reading a checkpoint's JSON, naming a dtype, counting
parameters, the one-line form of a library's exception, the hint for a wrong directory.

Imported by the loader of each kind (scorers/native_loader.py, scorers/hf_loader.py,
scorers/plugin_loader.py); `scorers/loaders.py` only chooses among them, so no loader imports
back from the dispatcher.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from evalgate.console import clean
from evalgate.edges import json_input
from evalgate.edges.inputs import read_checked
from evalgate.errors import CheckpointError

HINT_DIR = (
    "--checkpoint takes a native evalgate directory (config.json with 'evalgate_native') or a "
    "Hugging Face model directory (config.json + model.safetensors + tokenizer files)"
)


def read_json(path: Path) -> Any:
    """A checkpoint's JSON file (config, tokenizer config, shard index): any failure, a deep
    nesting or a 5,000-digit number included, is a located refusal (edges/json_input.py)."""
    data = read_checked(path, "checkpoint-text", "checkpoint file", error=CheckpointError)
    try:
        return json_input.loads(data)
    except json_input.UntrustedJSON as exc:
        where = f":{exc.line}" if exc.line else ""
        raise CheckpointError(f"{clean(path, 300)}{where}: not valid UTF-8 JSON ({exc.why})") from None


def n_parameters(model: Any) -> int:
    if not isinstance(model, torch.nn.Module):
        return 0
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")
