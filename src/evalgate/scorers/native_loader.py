"""Loading a native evalgate checkpoint (scorers/native_gpt.py) into a `TorchScorer`.

The weights are read from safetensors by `native_gpt.load_native`; the files are hashed here
for the result's comparability manifest.
"""

from __future__ import annotations

from pathlib import Path

import torch

from evalgate.scorers import native_gpt
from evalgate.scorers.adapters import TokenizersAdapter
from evalgate.scorers.base import ScorerInfo, files_digest
from evalgate.scorers.loading import dtype_name, n_parameters
from evalgate.scorers.safety import checkpoint_files
from evalgate.scorers.torch_lm import TorchScorer, full_logits_fn


def load_native_scorer(path: Path, *, batch_size: int, dtype: torch.dtype, threads: int) -> TorchScorer:
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
