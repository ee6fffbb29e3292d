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
from evalgate.scorers.torch_lm import KVCache, TorchScorer, full_logits_fn


class NativeCachedLM:
    """`CachedLM` (scorers/torch_lm.py) for the native GPT: its own key/value path
    (`GPT.hidden` with `past`), projecting only the kept positions onto the vocabulary."""

    def __init__(self, model: native_gpt.GPT):
        self.model = model
        self.kv_per_token = 2 * model.cfg.n_layer * model.cfg.n_embd

    def start(self, ids: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, KVCache]:
        hidden, kv = self.model.hidden(ids)
        return self.model.logits(hidden[keep]), kv

    def extend(self, ids: torch.Tensor, past: KVCache, keep: torch.Tensor) -> tuple[torch.Tensor, KVCache]:
        hidden, kv = self.model.hidden(ids, past)
        return self.model.logits(hidden[keep]), kv


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
    model = model.to(dtype).eval()
    fn = full_logits_fn(model)
    fn.cached = NativeCachedLM(model)  # type: ignore[attr-defined]
    return TorchScorer(
        fn,
        adapter,
        batch_size,
        info=info,
        max_length=cfg.block_size,
        append_eos=True,
        vocab_size=cfg.vocab_size,
        dtype=dtype,
        threads=threads,
    )
