"""Loading a native evalgate checkpoint (scorers/native_gpt.py) into a `TorchScorer`.

The weights are read from safetensors by `native_gpt.load_native`; the files are hashed here
for the result's comparability manifest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from evalgate.scorers import native_gpt
from evalgate.scorers.adapters import TokenizersAdapter
from evalgate.scorers.base import ScorerInfo, files_digest
from evalgate.scorers.loading import dtype_name, n_parameters
from evalgate.scorers.safety import checkpoint_files
from evalgate.scorers.torch_lm import MAX_POSITIONS, KVCache, TorchScorer, full_logits_fn
from evalgate.types import canonical_json, sha256_text


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


def tokenizer_identity(file_sha256: str, tok: Any, cfg: native_gpt.GPTConfig) -> str:
    """The tokenizer's SHA-256 (results.json `manifest.tokenizer_sha256`): tokenizer.json's own,
    and, when config.json sets a special-token id other than the tokenizer implies, those ids too.

    The ids are part of what the tokenizer means to scoring: an `unk_token_id` set in config.json
    marks every candidate holding that token `model_oov` (unscorable), and a hash of
    tokenizer.json alone did not move (docs/scoring.md, "Checkpoints and safety"). The ids are
    hashed in only when they differ from the tokenizer's own (its <|bos|>, <|eos|>, <|pad|>
    tokens, and its model's unknown token, none for byte-level BPE), so that every checkpoint
    saved as evalgate saves it, the demo's included, keeps the hash of its tokenizer.json and
    every baseline stays comparable."""
    used = {
        "bos_token_id": cfg.bos_token_id,
        "eos_token_id": cfg.eos_token_id,
        "pad_token_id": cfg.pad_token_id,
        "unk_token_id": cfg.unk_token_id,
    }
    implied = {
        "bos_token_id": tok.token_to_id(native_gpt.BOS),
        "eos_token_id": tok.token_to_id(native_gpt.EOS),
        "pad_token_id": tok.token_to_id(native_gpt.PAD),
        "unk_token_id": own_unk_id(tok),
    }
    if used == implied:
        return file_sha256
    return sha256_text(canonical_json({native_gpt.TOKENIZER_FILE: file_sha256, "special_token_ids": used}))


def own_unk_id(tok: Any) -> int | None:
    """The id of the unknown token the tokenizer's model declares (BPE/WordLevel/WordPiece
    `unk_token`, Unigram `unk_id`), or None."""
    try:
        model = json.loads(tok.to_str()).get("model") or {}
    except (ValueError, TypeError, AttributeError):
        return None
    if isinstance(model.get("unk_token"), str):
        return tok.token_to_id(model["unk_token"])
    unk = model.get("unk_id")
    return unk if isinstance(unk, int) and not isinstance(unk, bool) else None


def load_native_scorer(
    path: Path, *, batch_size: int, dtype: torch.dtype, threads: int, max_positions: int = MAX_POSITIONS
) -> TorchScorer:
    model, tok, cfg = native_gpt.load_native(path)
    files = checkpoint_files(path)
    adapter = TokenizersAdapter(
        tok,
        bos_id=cfg.bos_token_id,
        eos_id=cfg.eos_token_id,
        pad_id=cfg.pad_token_id,
        unk_id=cfg.unk_token_id,
        sha256=tokenizer_identity(files[native_gpt.TOKENIZER_FILE]["sha256"], tok, cfg),
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
        max_positions=max_positions,
    )
