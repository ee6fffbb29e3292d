"""The small reference GPT shipped with evalgate, its tokenizer and its safe checkpoint format.

A nanoGPT-shaped decoder (token + position embeddings, pre-LayerNorm blocks, causal
self-attention, GELU MLP, output head tied to the token embedding). A native checkpoint is a
directory with `config.json` ("evalgate_native": "gpt-v1"), `model.safetensors` and a byte-level
BPE `tokenizer.json`. Loading reads tensors through safetensors only (never `torch.load`) and
checks every name and shape before a single weight reaches the model, so a broken or hostile
directory ends in a one-line `CheckpointError` naming the file.

The model sees every sequence as `[bos] + tokens`; `tokenizer.encode` adds no special tokens.
Attention is causal and positions are absolute, so right-padded batches need no mask: real
tokens never attend to later pads, and the padded positions' outputs are simply ignored.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import safetensors
import safetensors.torch
import tokenizers
import torch
from tokenizers import decoders, models, pre_tokenizers, trainers
from torch import nn
from torch.nn import functional as F

from evalgate.console import clean
from evalgate.edges.files import atomic_write_bytes, atomic_write_text
from evalgate.edges.inputs import read_checked
from evalgate.edges.json_input import finite_float
from evalgate.errors import CheckpointError

FORMAT = "gpt-v1"
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"
BOS, EOS, PAD = "<|bos|>", "<|eos|>", "<|pad|>"
SPECIAL_TOKENS = (BOS, EOS, PAD)

_INT_FIELDS = ("vocab_size", "n_layer", "n_head", "n_embd", "block_size")
_TOKEN_FIELDS = ("bos_token_id", "eos_token_id", "pad_token_id")
_MAX_COUNT, _MAX_SIZE = 4_096, 1 << 24  # layers and heads; widths, vocabulary, positions, ids
_STORAGE_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int  # rows of the (tied) token embedding; >= the tokenizer's vocabulary
    n_layer: int  # transformer blocks
    n_head: int  # attention heads; must divide n_embd
    n_embd: int  # residual stream width
    block_size: int  # longest sequence (bos included) the position embedding covers
    bos_token_id: int  # prepended to every sequence, in training and in scoring
    eos_token_id: int  # ends every training sentence
    pad_token_id: int  # right padding; never a target
    unk_token_id: int | None = None  # byte-level BPE has no unknown token: None

    @classmethod
    def from_dict(cls, d: Any, source: str = CONFIG_FILE) -> GPTConfig:
        """Validate a parsed config.json. Descriptive extra keys (e.g. "training") are ignored."""

        def bad(msg: str) -> CheckpointError:
            return CheckpointError(
                f"{source}: {msg}",
                hint="a native checkpoint's config.json is written by evalgate's save_native "
                "(see docs/demo-model.md); for a Hugging Face model directory use its own config",
            )

        if not isinstance(d, dict):
            raise bad("expected a JSON object")
        if d.get("evalgate_native") != FORMAT:
            raise bad(f'not an evalgate native config ("evalgate_native" must be "{FORMAT}")')
        missing = [k for k in (*_INT_FIELDS, *_TOKEN_FIELDS, "unk_token_id") if k not in d]
        if missing:
            raise bad(f"missing key(s): {', '.join(missing)}")
        for key in (*_INT_FIELDS, *_TOKEN_FIELDS):
            if not _is_int(d[key]) or d[key] < (1 if key in _INT_FIELDS else 0):
                raise bad(f"'{key}' must be a {'positive' if key in _INT_FIELDS else 'non-negative'} integer")
            cap = _MAX_COUNT if key in ("n_layer", "n_head") else _MAX_SIZE
            if d[key] > cap:  # the same hard caps as a Hugging Face config (scorers/hf_loader.py)
                raise bad(
                    f"'{key}' = {d[key]:,} is beyond any model evalgate can score (at most {cap:,}); "
                    "refused before allocating it"
                )
        unk = d["unk_token_id"]
        if unk is not None and (not _is_int(unk) or unk < 0):
            raise bad("'unk_token_id' must be a non-negative integer or null")
        for key in (*_TOKEN_FIELDS, "unk_token_id"):
            if d[key] is not None and d[key] >= d["vocab_size"]:
                raise bad(f"'{key}' = {d[key]} is outside the vocabulary (vocab_size {d['vocab_size']})")
        if d["n_embd"] % d["n_head"]:
            raise bad(f"n_embd ({d['n_embd']}) is not a multiple of n_head ({d['n_head']})")
        return cls(**{f: d[f] for f in (*_INT_FIELDS, *_TOKEN_FIELDS, "unk_token_id")})

    def to_dict(self) -> dict[str, Any]:
        return {"evalgate_native": FORMAT, **asdict(self)}


# One layer's cached keys and values, each (B, n_head, T, head_size).
KV = tuple[torch.Tensor, torch.Tensor]


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)  # q, k, v for all heads at once
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd)

    def forward(self, x: torch.Tensor, past: KV | None = None) -> tuple[torch.Tensor, KV]:
        """(B, T, C) -> (B, T, C) and this layer's keys/values of every position so far. With
        `past` (keys/values of P earlier positions), x holds positions P..P+T-1 (scorers/torch_lm.py
        continues a shared context this way)."""
        B, T, C = x.shape  # batch, time, channels (nanoGPT)
        q, k, v = self.c_attn(x).split(C, dim=2)
        # (B, T, C) -> (B, nh, T, hs)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        if past is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, nh, T, hs)
        else:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
            # query i is position P + i: it sees keys 0..P+i (is_causal would align the mask top-left).
            # Written out rather than F.scaled_dot_product_attention, whose CPU kernels give a row
            # other bits when the batch has another size if queries and keys differ in length
            # (measured with torch 2.13); a row's numbers must not depend on its batch
            # (scorers/torch_lm.py, "Fixed-shape forwards").
            P = past[0].shape[2]
            mask = torch.ones(T, P + T, dtype=torch.bool, device=x.device).tril(P)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
            y = torch.softmax(att.masked_fill(~mask, float("-inf")), dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble heads: (B, T, C)
        return self.c_proj(y), (k, v)


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    """Pre-LayerNorm block (GPT-2): x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor, past: KV | None = None) -> tuple[torch.Tensor, KV]:
        y, kv = self.attn(self.ln_1(x), past)
        x = x + y
        return x + self.mlp(self.ln_2(x)), kv


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.h = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        # The output head reuses wte (weight tying, Press & Wolf 2017): fewer parameters, and the
        # checkpoint holds each tensor once, which safetensors requires anyway.
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):  # GPT-2: scale residual projections by depth
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear | nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """(B, T) token ids -> (B, T, vocab_size) logits; position t sees tokens 0..t only."""
        return self.logits(self.hidden(idx)[0])

    def hidden(
        self, idx: torch.Tensor, past: tuple[KV, ...] | None = None
    ) -> tuple[torch.Tensor, tuple[KV, ...]]:
        """(B, T) token ids -> (B, T, C) final hidden states and every layer's keys/values. With
        `past` (each layer's keys/values of P earlier positions), idx holds positions P..P+T-1."""
        start = past[0][0].shape[2] if past else 0
        n_tokens = start + idx.shape[1]
        if n_tokens > self.cfg.block_size:
            raise ValueError(f"sequence of {n_tokens} tokens is longer than block_size {self.cfg.block_size}")
        pos = torch.arange(start, n_tokens, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)  # (B, T, C)
        cache = []
        for i, block in enumerate(self.h):
            x, kv = block(x, past[i] if past else None)
            cache.append(kv)
        return self.ln_f(x), tuple(cache)

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Hidden states (..., C) -> logits (..., vocab_size): the head tied to wte."""
        return F.linear(hidden, self.wte.weight)


def expected_shapes(cfg: GPTConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor of a native checkpoint, by state-dict name, with its shape."""
    C = cfg.n_embd
    shapes: dict[str, tuple[int, ...]] = {
        "wte.weight": (cfg.vocab_size, C),
        "wpe.weight": (cfg.block_size, C),
        "ln_f.weight": (C,),
        "ln_f.bias": (C,),
    }
    for i in range(cfg.n_layer):
        p = f"h.{i}."
        shapes |= {
            p + "ln_1.weight": (C,),
            p + "ln_1.bias": (C,),
            p + "attn.c_attn.weight": (3 * C, C),
            p + "attn.c_attn.bias": (3 * C,),
            p + "attn.c_proj.weight": (C, C),
            p + "attn.c_proj.bias": (C,),
            p + "ln_2.weight": (C,),
            p + "ln_2.bias": (C,),
            p + "mlp.c_fc.weight": (4 * C, C),
            p + "mlp.c_fc.bias": (4 * C,),
            p + "mlp.c_proj.weight": (C, 4 * C),
            p + "mlp.c_proj.bias": (C,),
        }
    return shapes


def train_tokenizer(sentences: Iterable[str], vocab_size: int) -> tokenizers.Tokenizer:
    """Byte-level BPE: every string (accents, ñ, emoji) encodes without an unknown token.

    No normaliser, so decode(encode(s)) == s byte for byte (the scorer's boundary check relies on
    it), and no post-processor: callers prepend the bos id themselves.
    """
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(sentences, trainer=trainer)
    return tok


def save_native(
    directory: str | Path,
    model: GPT,
    cfg: GPTConfig,
    tokenizer: tokenizers.Tokenizer,
    extra: dict[str, Any] | None = None,
    *,
    dtype: torch.dtype = torch.float32,
) -> None:
    """Write config.json (+ `extra` descriptive keys), model.safetensors and tokenizer.json.

    Files are written atomically and deterministically: the same weights give the same bytes.
    `dtype` is the storage type (float16 halves the size); loading always computes in float32.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to(dtype).contiguous() for k, v in model.state_dict().items()}
    if set(state) != set(expected_shapes(cfg)):
        raise ValueError("model does not match cfg: state-dict names differ from expected_shapes(cfg)")
    doc = {**(extra or {}), **cfg.to_dict()}
    atomic_write_text(out / CONFIG_FILE, json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    atomic_write_bytes(out / WEIGHTS_FILE, safetensors.torch.save(state, metadata={"format": "pt"}))
    atomic_write_text(out / TOKENIZER_FILE, tokenizer.to_str(pretty=True) + "\n")


def load_native(directory: str | Path) -> tuple[GPT, tokenizers.Tokenizer, GPTConfig]:
    """Load a native checkpoint safely (no pickle), in eval mode, float32 on the CPU."""
    root = Path(directory)
    hint = "point --checkpoint at a directory written by scripts/train_demo.py or save_native"
    if not root.is_dir():
        raise CheckpointError(f"not a directory: {root}", hint=hint)
    present = [n for n in (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE) if (root / n).is_file()]
    if not present:
        raise CheckpointError(
            f"not a native evalgate checkpoint: {root} has no {CONFIG_FILE}, {WEIGHTS_FILE} "
            f"or {TOKENIZER_FILE}",
            hint=hint,
        )
    for name in (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE):
        if name not in present:
            if os.path.lexists(root / name):  # a folder by that name (other kinds: safety.py)
                raise CheckpointError(f"{root / name}: a directory, not a regular file; refused", hint=hint)
            raise CheckpointError(f"missing file: {root / name}", hint=hint)
    cfg = _read_config(root / CONFIG_FILE)
    state = _read_weights(root / WEIGHTS_FILE, cfg)
    tok = _read_tokenizer(root / TOKENIZER_FILE, cfg)
    model = GPT(cfg)
    model.load_state_dict(state, strict=True)
    model.eval()
    return model, tok, cfg


def n_parameters(cfg: GPTConfig) -> int:
    """The parameter count `expected_shapes` describes, in closed form (no loop over layers)."""
    C = cfg.n_embd
    return (cfg.vocab_size + cfg.block_size + 2) * C + cfg.n_layer * (12 * C * C + 13 * C)


def _refuse_oversized(root: Path, cfg: GPTConfig) -> None:
    """A config.json describing more parameters than model.safetensors can hold (2 bytes each at
    the least) is refused before anything is sized from it: a 200-byte config with a huge
    n_layer would otherwise build names, tensors and modules until the memory runs out."""
    n = n_parameters(cfg)
    size = (root / WEIGHTS_FILE).stat().st_size
    if n * 2 > size:
        raise CheckpointError(
            f"{root / CONFIG_FILE}: describes a model of {n:,} parameters but {WEIGHTS_FILE} has only "
            f"{size:,} bytes; refused before allocating it",
            hint="the weights and config.json come from different checkpoints; re-save them with save_native",
        )


def _read_config(path: Path) -> GPTConfig:
    data = read_checked(path, "checkpoint-text", "checkpoint config", error=CheckpointError)
    try:
        doc = json.loads(data.decode("utf-8"), parse_float=finite_float)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        where = f":{exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        why = "nested too deeply" if isinstance(exc, RecursionError) else clean(exc)
        raise CheckpointError(
            f"{path}{where}: not valid UTF-8 JSON ({why})", hint="restore config.json"
        ) from None
    return GPTConfig.from_dict(doc, source=str(path))


def _read_weights(path: Path, cfg: GPTConfig) -> dict[str, torch.Tensor]:
    retrain = "the checkpoint does not match its config.json; re-save it with save_native"
    try:
        with safetensors.safe_open(str(path), framework="pt") as fh:
            # A readable header first (a corrupt file is named as one), then the sizes the
            # config describes against the file, before `expected_shapes` loops over n_layer.
            _refuse_oversized(path.parent, cfg)
            want = expected_shapes(cfg)
            names = set(fh.keys())
            missing, unexpected = sorted(set(want) - names), sorted(names - set(want))
            if missing or unexpected:
                parts = [f"missing tensor(s) {', '.join(missing)}"] if missing else []
                parts += (
                    [f"unexpected tensor(s) {', '.join(clean(n) for n in unexpected)}"] if unexpected else []
                )
                raise CheckpointError(f"{path}: {'; '.join(parts)}", hint=retrain)
            state = {}
            for name in sorted(want):
                sl = fh.get_slice(name)
                shape, dtype = tuple(sl.get_shape()), sl.get_dtype()
                if shape != want[name]:
                    raise CheckpointError(
                        f"{path}: tensor '{name}' has shape {list(shape)}, expected {list(want[name])}",
                        hint=retrain,
                    )
                if dtype not in _STORAGE_DTYPES:
                    raise CheckpointError(
                        f"{path}: tensor '{name}' is stored as {dtype}; expected one of "
                        f"{', '.join(_STORAGE_DTYPES)}",
                        hint=retrain,
                    )
                tensor = fh.get_tensor(name).to(torch.float32)
                if not torch.isfinite(tensor).all():
                    raise CheckpointError(
                        f"{path}: tensor '{name}' holds NaN or infinite values", hint=retrain
                    )
                state[name] = tensor
    except safetensors.SafetensorError as exc:
        raise CheckpointError(
            f"truncated or corrupt: {path} ({exc})", hint="re-download or re-save the checkpoint"
        ) from None
    return state


def _read_tokenizer(path: Path, cfg: GPTConfig) -> tokenizers.Tokenizer:
    # read through the bounded reader (a huge or sparse tokenizer.json would fill the memory)
    data = read_checked(path, "checkpoint-text", "tokenizer", error=CheckpointError)
    try:
        tok = tokenizers.Tokenizer.from_str(data.decode("utf-8"))
    except BaseException as exc:  # a bare Exception for a parse error, or a panic
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        raise CheckpointError(
            f"{path}: not a readable Hugging Face tokenizers file ({clean(exc)})",
            hint="restore tokenizer.json",
        ) from None
    hint = "tokenizer.json and config.json come from different checkpoints; re-save them together"
    if tok.get_vocab_size(with_added_tokens=True) > cfg.vocab_size:
        raise CheckpointError(
            f"{path}: {tok.get_vocab_size(with_added_tokens=True)} tokens but the model's "
            f"vocab_size is {cfg.vocab_size}",
            hint=hint,
        )
    for token, key in zip(SPECIAL_TOKENS, _TOKEN_FIELDS, strict=True):
        if tok.token_to_id(token) != getattr(cfg, key):
            raise CheckpointError(
                f"{path}: {token} has id {tok.token_to_id(token)} but config.json says {key} = "
                f"{getattr(cfg, key)}",
                hint=hint,
            )
    return tok
