"""`TorchScorer`: batched log-likelihoods and perplexity for any causal LM; the only torch math.

Token alignment (the convention of lm-evaluation-harness's model guide; docs/scoring.md), for context "Ayer"
and continuation " fui" (trailing whitespace of a context is moved to its continuation first):

    whole       = encode(context + continuation)            [bos]? Ayer  ·fui
    context_enc = encode(context)                           [bos]? Ayer
    cont_enc    = whole[len(context_enc):]                                ·fui

    input  (fed to the model)  [bos]  Ayer           (= (context_enc + cont_enc)[:-1])
    logits                      ↓      ↓
    predicts                   Ayer   ·fui           logit at position i predicts token i+1
                                       └─ CONT ─┘    summed: log p(·fui | [bos] Ayer)

An empty context is the BOS token (or EOS when the tokenizer has no BOS), as lm-eval's
`prefix_token_id`. Each request needs the model input
`context_enc + cont_enc[:-1]`. Requests with the same input (candidates of one token after one
context, repeated probes) share one row, and within a request group (a probe's candidates,
`LoglikRequest.group`) sharing a `context_enc`, one forward over the longest input serves every
request whose input is a prefix of it (a causal model gives the same logits at those positions).
Which row serves a request thus depends on its group alone. Reuse never crosses different
`context_enc`s within a group, which is where lm-eval 0.4.13's logits cache goes wrong.

Prefix tree (models with a key/value cache: the native GPT, and Hugging Face causal LMs whose
cache hf_loader checks at loading; the LogitsFn's `cached` attribute, a `CachedLM`): every row is
cut at fixed positions (1, 2, 4, ..., 64, then every CUT_STEP = 64 tokens: 128, 192, ...; _bounds)
into pieces, and each piece runs from the keys/values of the pieces before it. Rows sharing a
prefix share its pieces, so a piece runs once for every probe, candidate and test sentence that
starts with it: the first tokens of many inputs, a context followed by several candidates, a long
instruction before every item, the 500-800-token 5-shot prefix of a few-shot suite (cut every 64
tokens, so all but its last < 64 tokens are shared). The cuts do not depend on the other rows, so
a row's pieces, and its bits, are the same whatever else is scored (a pass that runs out of
TREE_CACHE leaves the rest to a later pass, which computes the pieces they share again, to the
same bits). Models without such a cache (plugin loaders, Hugging Face models without
`logits_to_keep` or failing the check, sliding-window caches) run every input whole, as above.

Fixed-shape forwards: a batch holds rows of exactly one length, so nothing is padded to suit
another row (a tree's last piece pads to a power of two by a rule of its own row, _run_width), and a
row's logits are the same bits whatever other rows share its forward (CPU matmuls and attention
give a row the same result for any batch size at a fixed length; tests/scorers/test_prefix_sharing.py
checks it; so do the tree's forwards, whose attention is eager after the first piece because
PyTorch's fused CPU attention sums otherwise in a batch of another size when queries and keys
differ in length). So a
request's log-likelihood depends on the request alone: a probe scored with the
whole set, in a shard, alone, or read back from the score cache (edges/score_cache.py) has the
same numbers to the last bit. Only the positions that predict a target are projected onto the
vocabulary when the model supports it.
"""

from __future__ import annotations

import bisect
import inspect
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch

from evalgate.errors import CheckpointError, RefusedError
from evalgate.scorers.base import ScorerInfo, TokenizerAdapter
from evalgate.types import Loglik, LoglikRequest, Perplexity

# (B, T) ids, (B, T) bool mask of wanted positions -> (N, V) logits for the True positions, row-major.
LogitsFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

# Every layer's (keys, values) for B rows, batch first: each (B, heads, T, head_size).
KVCache = tuple[tuple[torch.Tensor, torch.Tensor], ...]


class CachedLM(Protocol):
    """A model that runs a context once and continues from its keys/values (the `cached` attribute
    of a LogitsFn; the module docstring). Both calls return the (N, V) logits of the True positions
    of `keep`, row-major, as a LogitsFn does."""

    # cache elements (keys and values, all layers) per row and token: sizes the context batches
    kv_per_token: int

    def start(self, ids: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, KVCache]:
        """(B, T) ids from position 0 -> logits, and the keys/values of the T positions."""
        ...

    def extend(self, ids: torch.Tensor, past: KVCache, keep: torch.Tensor) -> tuple[torch.Tensor, KVCache]:
        """(B, M) ids at positions P..P+M-1 after `past` (P positions, row b continuing row b)
        -> logits, and the keys/values of all P+M positions."""
        ...


# Smallest forward, in rows and in token positions (body and vocabulary projection alike): CPU
# matmuls take another code path (another float rounding) for one row or for fewer than ~12
# positions (measured on x86 with torch's default BLAS), so a smaller batch is filled with
# copies of its first row whose outputs are computed and ignored. Above these sizes a row's
# result does not depend on the batch (tests/scorers/test_prefix_sharing.py holds it to the bit).
MIN_ROWS, MIN_POSITIONS = 2, 16

# Largest logits tensor (elements) one forward may produce: 2**24 float32 = 64 MiB (+ its float64 copy).
MAX_LOGITS = 1 << 24

# Largest key/value cache (elements) held for one batch of contexts, and gathered for one batch of
# continuations: 2**25 float32 = 128 MiB (GPT-2-medium: ~45 contexts of 30 tokens).
MAX_CACHE = 1 << 25

# Rows of one length shorter than POSITIONS_PER_FORWARD / batch_size go more than batch_size to a
# forward, up to this many positions: probes and test sentences are a few tokens long, and a
# forward of 64 such rows leaves the matmuls small (measured on the GPT-2-small shape: about 10%
# off the shipped probes' scoring time, docs/scoring.md "Speed"). A row's bits do not depend on
# how many rows share its forward (above MIN_ROWS/MIN_POSITIONS), so results stay the same.
POSITIONS_PER_FORWARD = 4096

# `scoring.max_positions` (docs/scoring.md "Memory"): the most token positions (rows x width,
# fillers included) one forward may run, whatever batch_size says. The tree's pieces are at most
# CUT_STEP wide, so a cached model can keep any cap of at least MIN_CAP; a model that runs its
# inputs whole needs MIN_ROWS rows of its longest input. A row's bits do not depend on how many
# rows share its forward, so the cap moves no number, only peak memory and speed.
MAX_POSITIONS = 8192
MIN_CAP = 128

# Prefix tree (module docstring): a row of a cached model is cut at these positions, then every
# CUT_STEP positions after the last of them (_bounds), each piece run from the keys/values of the
# pieces before it. Fixed cuts make a row's pieces, and so its bits, a function of the row alone;
# powers of two share the first tokens, where inputs share the most, one by one, and the steps of
# 64 share a long few-shot prefix to within 64 tokens while keeping every forward at most 64
# positions wide (scoring.max_positions then caps a forward by its rows alone). Scoring version 3
# (version 2 cut only rows of at most 128 tokens and ran longer ones whole).
CUTS = (1, 2, 4, 8, 16, 32, 64)
CUT_STEP = 64

# Keys/values (elements) the tree holds for the pieces that others continue: 2**26 float32 =
# 256 MiB; rows beyond it go to a later pass, which computes again the few pieces they share.
TREE_CACHE = 1 << 26


def full_logits_fn(model: Callable) -> LogitsFn:
    """For models that return every position: `model(ids)` -> logits, an object with `.logits`,
    or a tuple whose first item is the logits (minGPT's `(logits, loss)`, `return_dict=False`)."""

    def call(ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        out = model(ids)
        logits = getattr(out, "logits", out)
        if isinstance(logits, tuple | list) and logits and isinstance(logits[0], torch.Tensor):
            logits = logits[0]
        if not isinstance(logits, torch.Tensor) or logits.dim() != 3 or logits.shape[:2] != ids.shape:
            shape = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
            raise CheckpointError(
                f"the model returned logits of shape {shape} for input ids of shape {tuple(ids.shape)}",
                hint="model(ids) must return (batch, time, vocab) logits, or an object with .logits",
            )
        return logits[keep]

    call.selects_positions = False  # type: ignore[attr-defined]
    call.model = model  # type: ignore[attr-defined]
    return call


def hf_logits_fn(model: torch.nn.Module) -> LogitsFn:
    """Hugging Face causal LMs that take a boolean `logits_to_keep`: the LM head runs on N rows only."""

    def call(ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        return model(input_ids=ids, logits_to_keep=keep, use_cache=False).logits

    call.selects_positions = True  # type: ignore[attr-defined]
    call.model = model  # type: ignore[attr-defined]
    return call


def kv_tensors(cache: Any, shape: tuple[int, ...]) -> KVCache:
    """The (keys, values) of every layer of a transformers cache for (B, T) ids of `shape`: a
    DynamicCache of full-attention layers (transformers >= 4.56 `.layers`, older `.key_cache`) or
    the legacy tuple. Anything else (sliding windows, layers sharing a cache, recurrent states)
    raises ValueError: such a model is scored without sharing contexts."""
    layers = getattr(cache, "layers", None)
    if layers is not None:
        if any(getattr(layer, "is_sliding", False) for layer in layers):
            raise ValueError("a sliding-window cache")
        kv = tuple((getattr(layer, "keys", None), getattr(layer, "values", None)) for layer in layers)
    elif getattr(cache, "key_cache", None) is not None:
        kv = tuple(zip(cache.key_cache, cache.value_cache, strict=True))
    elif isinstance(cache, tuple | list):
        kv = tuple((layer[0], layer[1]) for layer in cache)
    else:
        raise ValueError(f"an unknown cache {type(cache).__name__}")
    for k, v in kv:
        for t in (k, v):
            if (
                not isinstance(t, torch.Tensor)
                or t.dim() != 4
                or t.shape[0] != shape[0]
                or t.shape[2] != shape[1]
            ):
                raise ValueError("a cache that does not hold every position's keys and values")
    if not kv:
        raise ValueError("an empty cache")
    return kv  # type: ignore[return-value]


class HFCachedLM:
    """`CachedLM` for a Hugging Face causal LM that takes a boolean `logits_to_keep` (hf_logits_fn):
    the model's own cache, a DynamicCache rebuilt from the gathered rows for every continuation
    batch, with explicit position ids. hf_loader checks it against a full forward before use."""

    def __init__(self, model: torch.nn.Module):
        self.model = model
        params = inspect.signature(model.forward).parameters
        # transformers renames `past_key_values` to `cache` (5.x deprecates the old name)
        self.cache_arg = "cache" if "cache" in params else "past_key_values"
        self.kv_per_token = 0  # measured by the first start()

    def start(self, ids: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, KVCache]:
        out = self.model(input_ids=ids, use_cache=True, logits_to_keep=keep)
        cache = getattr(out, "cache", None)
        kv = kv_tensors(cache if cache is not None else out.past_key_values, ids.shape)
        self.kv_per_token = self.kv_per_token or sum(k.numel() + v.numel() for k, v in kv) // ids.numel()
        return out.logits, kv

    def extend(self, ids: torch.Tensor, past: KVCache, keep: torch.Tensor) -> tuple[torch.Tensor, KVCache]:
        from transformers import DynamicCache

        cache = DynamicCache()
        for layer, (k, v) in enumerate(past):
            cache.update(k, v, layer)
        start = past[0][0].shape[2]
        positions = torch.arange(start, start + ids.shape[1], device=ids.device).expand(ids.shape[0], -1)
        # PyTorch's CPU scaled_dot_product_attention gives a row other bits in a batch of another
        # size when queries and keys differ in length (measured with torch 2.13), so continuations
        # use transformers' eager attention, where they do not (hf_loader checks it at loading).
        config = getattr(self.model, "config", None)
        impl = getattr(config, "_attn_implementation", None)
        if impl == "sdpa":
            config._attn_implementation = "eager"  # type: ignore[union-attr]
        try:
            out = self.model(
                input_ids=ids,
                position_ids=positions,
                use_cache=True,
                logits_to_keep=keep,
                **{self.cache_arg: cache},
            )
        finally:
            if impl == "sdpa":
                config._attn_implementation = impl  # type: ignore[union-attr]
        after = getattr(out, "cache", None)
        kv = kv_tensors(
            after if after is not None else out.past_key_values, (ids.shape[0], start + ids.shape[1])
        )
        return out.logits, kv


def leaks_the_future(fn: LogitsFn, ids: Sequence[int], vocab_size: int) -> bool:
    """True when changing the last token changes the logits before it: the model attends to
    later tokens (BERT-style bidirectional attention, or a forgotten causal mask). Its
    log-likelihoods would be computed with the answer in view, and right-padding would leak
    into them, so such a model cannot be scored left to right."""
    if len(ids) < 2 or vocab_size < 2:
        return False
    base = [int(i) % vocab_size for i in ids[:8]]
    other = [*base[:-1], (base[-1] + 1) % vocab_size]
    batch = torch.tensor([base, other], dtype=torch.long)
    keep = torch.ones_like(batch, dtype=torch.bool)
    with torch.inference_mode():
        logits = fn(batch, keep).reshape(2, len(base), -1)[:, :-1].double()
    scale = max(1.0, float(logits.abs().max()))
    return not torch.allclose(logits[0], logits[1], rtol=0.0, atol=1e-4 * scale)


@dataclass
class _Row:
    """One model input and the (position, target token, owner) triples read from its logits."""

    tokens: tuple[int, ...]
    targets: list[tuple[int, int, int]] = field(default_factory=list)


@dataclass
class _Node:
    """A node of the prefix tree (module docstring, "Prefix tree"): the positions
    `tokens[start:]` of the prefix `tokens`, run from the keys/values of `parent` (the prefix
    `tokens[:start]`). `targets` are (position - start, token, owner); `kv` holds this node's own
    positions' keys/values (level tensor, row) while nodes below it wait."""

    tokens: tuple[int, ...]
    start: int
    parent: _Node | None
    targets: list[tuple[int, int, int]] = field(default_factory=list)
    has_children: bool = False
    kv: int = -1  # row of this node in its level's kept keys/values
    width: int = 0  # positions its forward runs: its own, padded (see _run_width)


def _bounds(n: int) -> list[int]:
    """Where a row of n tokens is cut into tree nodes: 0, the CUTS below n, every CUT_STEP after
    the last of them below n, n."""
    steps = range(CUTS[-1] + CUT_STEP, n, CUT_STEP)
    return [0, *(c for c in CUTS if c < n), *steps, n]


def _is_cut(end: int) -> bool:
    return end in CUTS or (end > CUTS[-1] and (end - CUTS[-1]) % CUT_STEP == 0)


def _run_width(start: int, end: int, limit: int | None) -> int:
    """Positions a node's forward runs. A row's last piece that stops short of a cut is padded
    at its end to the next power of two: the pieces after one cut then come in a few widths, so
    they share a few forwards instead of one small forward per length. The padding is a
    function of the row alone (its length), and comes after every position read: a causal model
    gives those positions exactly zero weight, and nothing continues a padded piece. Never past
    `limit`, the model's longest input."""
    width = end - start
    if _is_cut(end):
        return width
    padded = 1 << (width - 1).bit_length()
    return padded if limit is None or start + padded <= limit else max(width, limit - start)


class TorchScorer:
    def __init__(
        self,
        model_fn: LogitsFn,
        tokenizer: TokenizerAdapter,
        batch_size: int = 32,
        *,
        info: ScorerInfo,
        max_length: int | None = None,
        append_eos: bool = False,
        vocab_size: int | None = None,
        dtype: torch.dtype = torch.float32,
        threads: int = 0,
        max_positions: int = MAX_POSITIONS,
    ):
        """`max_length`: longest input the model accepts (longer inputs are left-truncated, as
        lm-eval does); `append_eos`: perplexity texts end with EOS (the model was trained so)."""
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if max_positions < MIN_CAP:
            raise RefusedError(
                f"scoring.max_positions {max_positions} is below {MIN_CAP}",
                hint=f"set scoring.max_positions to at least {MIN_CAP} in evalgate.yml",
            )
        self.max_positions = max_positions
        self.model_fn = model_fn
        self.tok = tokenizer
        self.batch_size = batch_size
        self.info = info
        self.max_length = max_length
        self.append_eos = append_eos
        self.vocab_size = vocab_size
        self.dtype = dtype
        # Called as on_progress(done, total) after every forward (token positions): the run's
        # progress bar (progress.py) for the long phases, perplexity above all.
        self.on_progress: Callable[[int, int], None] | None = None
        # Forwards and token positions run through the model so far (the benchmark reads them).
        # "projected": positions projected onto the vocabulary (every position of a full-logits model).
        self.counters = {"forwards": 0, "positions": 0, "projected": 0}
        self._done = self._total = 0  # progress of the current _run
        if threads > 0:
            torch.set_num_threads(threads)
        # Pads are never read, but the embedding still looks them up: a pad token added to the
        # tokenizer after the model (id == vocab_size) would crash the forward, so use id 0 then.
        pad = tokenizer.pad_id
        self.pad_id = pad if pad is not None and (vocab_size is None or 0 <= pad < vocab_size) else 0

    # --- encoding -------------------------------------------------------------------------

    def prefix_id(self) -> int | None:
        """The token standing for "start of text": BOS, else EOS (lm-eval's prefix_token_id)."""
        return self.tok.bos_id if self.tok.bos_id is not None else self.tok.eos_id

    def encode_pair(self, context: str, continuation: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(context_enc, continuation_enc) per the module docstring's diagram."""
        n_spaces = len(context) - len(context.rstrip())
        if n_spaces:
            continuation = context[-n_spaces:] + continuation
            context = context[:-n_spaces]
        head = (self.tok.bos_id,) if self.tok.uses_bos else ()
        context_enc = head + tuple(self.tok.encode(context)) if context else ()
        if not context_enc:  # an empty context (or one the tokenizer encodes to nothing)
            prefix = self.prefix_id()
            if prefix is None:
                raise RefusedError(
                    f"cannot score {continuation!r} with an empty context: "
                    "the tokenizer has no BOS or EOS token",
                    hint="use method `candidate` with prompts that have text before the blank, "
                    "or give the tokenizer a bos/eos token",
                )
            return (prefix,), tuple(self.tok.encode(context + continuation))
        whole = head + tuple(self.tok.encode(context + continuation))
        return context_enc, whole[len(context_enc) :]

    def _truncate(self, ctx: tuple[int, ...], cont: tuple[int, ...]) -> tuple[int, ...]:
        """Left-truncate the context so that context + continuation fits (lm-eval)."""
        if self.max_length is None or len(ctx) + len(cont) - 1 <= self.max_length:
            return ctx
        return (ctx + cont)[-(self.max_length + 1) : -len(cont)]

    # --- the public interface -------------------------------------------------------------

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> list[Loglik]:
        encoded, planned, windowed = [], [], []
        for i, req in enumerate(requests):
            ctx, cont = self.encode_pair(req.context, req.continuation)
            encoded.append((ctx, cont))
            if self.max_length is not None and len(cont) > self.max_length:
                # A continuation longer than the window (a whole sentence, method `sentence`) is
                # scored like a perplexity text: each token sees as much preceding text as fits.
                windowed += self._windows(ctx + cont, i, first=len(ctx))
                planned.append(((), ()))
            else:
                planned.append((self._truncate(ctx, cont), cont))
        rows = self._group_rows(planned, [r.group for r in requests]) + windowed
        sums, _ = self._run(rows, len(encoded))
        out = []
        for (_, cont), logprob in zip(encoded, sums, strict=True):
            out.append(
                Loglik(
                    logprob=logprob,
                    n_tokens=len(cont),
                    decoded=self.tok.decode(cont),
                    oov=self.tok.unk_id is not None and self.tok.unk_id in cont,
                    tokens=tuple(self.tok.decode([t]) for t in cont),
                )
            )
        return out

    def perplexity(self, texts: Sequence[str]) -> Perplexity:
        prefix = self.tok.bos_id if self.tok.uses_bos else self.prefix_id()
        tail = (self.tok.eos_id,) if self.append_eos and self.tok.eos_id is not None else ()
        rows: list[_Row] = []
        for owner, text in enumerate(texts):
            seq = ((prefix,) if prefix is not None else ()) + tuple(self.tok.encode(text)) + tail
            rows.extend(self._windows(seq, owner))
        sums, counts = self._run(rows, len(texts))
        broken = next((i for i, v in enumerate(sums) if not math.isfinite(v)), None)
        if broken is not None:
            raise CheckpointError(
                f"perplexity: the model gave a non-finite log-likelihood (probability 0 or NaN) "
                f"to test sentence {broken + 1} ({texts[broken][:60]!r})",
                hint="the checkpoint's weights or logits are broken (NaN/inf); retrain or restore it",
            )
        nll, n_tokens = -math.fsum(sums), sum(counts)
        if n_tokens == 0:
            raise RefusedError("perplexity: the texts hold no token to predict")
        return Perplexity(
            value=math.exp(nll / n_tokens),
            n_tokens=n_tokens,
            nll=nll,
            sentence_nll=tuple(-v for v in sums),
            sentence_tokens=tuple(counts),
        )

    # --- planning -------------------------------------------------------------------------

    @staticmethod
    def _group_rows(
        encoded: Sequence[tuple[tuple[int, ...], tuple[int, ...]]], groups: Sequence[str | None]
    ) -> list[_Row]:
        """Rows per the module docstring: identical inputs share a row, and within a request
        group sharing a context, a request whose input is a prefix of a longer one reads it."""
        buckets: dict[tuple[str | None, tuple[int, ...]], list[int]] = {}
        for i, (ctx, cont) in enumerate(encoded):
            if cont:  # an empty continuation has nothing to score (the core refuses it)
                buckets.setdefault((groups[i], ctx), []).append(i)
        by_input: dict[tuple[int, ...], _Row] = {}  # identical inputs: one row, whatever the group
        rows: list[_Row] = []
        for (_, ctx), members in buckets.items():
            members.sort(key=lambda i: (-len(encoded[i][1]), encoded[i][1]))
            # every prefix (>= ctx) of a row this bucket uses -> that row; never another bucket's,
            # whose presence in the call would change this request's row length (and rounding)
            by_prefix: dict[tuple[int, ...], _Row] = {}
            for i in members:
                cont = encoded[i][1]
                inp = ctx + cont[:-1]
                row = by_prefix.get(inp)
                if row is None:
                    row = by_input.get(inp)
                    if row is None:
                        row = by_input[inp] = _Row(inp)
                        rows.append(row)
                    for end in range(len(ctx), len(inp) + 1):
                        by_prefix.setdefault(inp[:end], row)
                for j, token in enumerate(cont):
                    row.targets.append((len(ctx) - 1 + j, token, i))
        return rows

    def _windows(self, seq: tuple[int, ...], owner: int, first: int = 1) -> list[_Row]:
        """Rows predicting seq[first:]; texts longer than the window are cut into disjoint target
        spans, each seeing as much preceding text as fits (lm-eval's rolling windows)."""
        span = self.max_length or max(len(seq) - 1, 1)
        rows = []
        for start in range(max(first, 1), len(seq), span):
            end = min(start + span, len(seq))
            lo = max(0, end - 1 - span)
            rows.append(_Row(seq[lo : end - 1], [(k - 1 - lo, seq[k], owner) for k in range(start, end)]))
        return rows

    def _batches(self, rows: list[_Row]) -> list[list[_Row]]:
        """Rows of one length per batch (see the module docstring), longest first; a batch ends
        at batch_size rows (more for short rows: POSITIONS_PER_FORWARD), at MAX_LOGITS logits or
        at max_positions positions. (Rows of a cached model go to the tree, _waves.)"""
        order = sorted(rows, key=lambda r: (-len(r.tokens), r.tokens))
        selects = getattr(self.model_fn, "selects_positions", False)
        if order and MIN_ROWS * len(order[0].tokens) > self.max_positions:
            need = MIN_ROWS * len(order[0].tokens)
            raise RefusedError(
                f"scoring.max_positions {self.max_positions} is too small for this model: it has no "
                f"key/value cache the scorer can use, so it runs each input whole, and its longest "
                f"input here is {len(order[0].tokens)} tokens (a forward runs at least {MIN_ROWS} rows)",
                hint=f"set scoring.max_positions to at least {need} in evalgate.yml",
            )
        batches: list[list[_Row]] = []
        current: list[_Row] = []
        elements = 0
        for row in order:
            # a full-logits model materialises (B, T, V); one that selects, only the kept positions
            n = max(MIN_POSITIONS, len({p for p, _, _ in row.targets})) if selects else len(row.tokens)
            if current:
                too_big = self.vocab_size is not None and (elements + n) * self.vocab_size > MAX_LOGITS
                rows_max = max(self.batch_size, POSITIONS_PER_FORWARD // max(1, len(row.tokens)))
                rows_max = min(rows_max, self.max_positions // len(row.tokens))
                if len(row.tokens) != len(current[0].tokens) or len(current) >= rows_max or too_big:
                    batches.append(current)
                    current, elements = [], 0
            current.append(row)
            elements += n
        if current:
            batches.append(current)
        return batches

    # --- the forward passes ---------------------------------------------------------------

    def _check_ids(self, batch: Sequence[Sequence[int]]) -> None:
        """Token ids the embedding cannot look up fail in the forward as an IndexError (or read
        out of bounds): name the token instead. The targets are checked against the logits."""
        if self.vocab_size is None:
            return
        bad = next((t for row in batch for t in row if not 0 <= t < self.vocab_size), None)
        if bad is not None:
            try:
                piece = repr(self.tok.decode([bad]))
            except Exception:  # the tokenizer cannot decode its own id: the number says enough
                piece = "?"
            raise CheckpointError(
                f"the tokenizer produced token id {bad} ({piece}) but the model's vocabulary has "
                f"{self.vocab_size} entries",
                hint="the tokenizer does not belong to this model (config.json vocab_size is smaller "
                "than the tokenizer's)",
            )

    def _fill(self, tokens: list[tuple[int, ...]], kept: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(ids, keep) for rows of one length: the rows, then copies of the first that keep every
        position until the forward reaches MIN_ROWS rows and MIN_POSITIONS positions and
        projected positions (see MIN_ROWS; `kept`: positions the rows project). keep marks only
        the fillers here."""
        width = len(tokens[0])
        fill = 0
        while (
            len(tokens) + fill < MIN_ROWS
            or (len(tokens) + fill) * width < MIN_POSITIONS
            or kept + fill * width < MIN_POSITIONS
        ):
            fill += 1
        ids = torch.tensor(tokens + [tokens[0]] * fill, dtype=torch.long)
        keep = torch.zeros(ids.shape, dtype=torch.bool)
        keep[len(tokens) :] = True
        return ids, keep

    def _gather(
        self,
        logits: torch.Tensor,
        keep: torch.Tensor,
        reads: list[tuple[int, int, int, int]],
        values: list[float],
    ) -> None:
        """Store log p(token) of each (row, position, token, slot) read in values[slot]."""
        n_kept = int(keep.sum())
        if logits.dim() != 2 or logits.shape[0] != n_kept:
            raise CheckpointError(
                f"the model returned logits of shape {tuple(logits.shape)} for {n_kept} positions"
            )
        # flat index of every kept (row, position), in the row-major order the logits come in
        flat = torch.full(keep.shape, -1, dtype=torch.long)
        flat[keep] = torch.arange(n_kept)
        if not reads:  # tree nodes that others continue but nobody reads
            return
        # float64 normaliser: batched and one-at-a-time then agree to ~1e-7, not float32's ~1e-6
        logp = torch.log_softmax(logits.to(torch.float64), dim=-1)
        tokens = [token for _, _, token, _ in reads]
        if max(tokens) >= logp.shape[1] or min(tokens) < 0:
            bad = max(tokens) if max(tokens) >= logp.shape[1] else min(tokens)
            raise CheckpointError(
                f"token id {bad} is outside the model's vocabulary of {logp.shape[1]}",
                hint="the tokenizer does not belong to this model",
            )
        where = [int(flat[b, pos]) for b, pos, _, _ in reads]
        got = logp[torch.tensor(where), torch.tensor(tokens)].double().tolist()
        for (_, _, _, slot), value in zip(reads, got, strict=True):
            values[slot] = value

    def _count(self, ids: torch.Tensor, keep: torch.Tensor, real: int) -> None:
        """Counters and progress after a forward of `real` real positions."""
        self.counters["forwards"] += 1
        self.counters["positions"] += ids.numel()
        self.counters["projected"] += int(keep.sum())
        self._done += real
        if self.on_progress is not None:
            self.on_progress(self._done, self._total)

    @torch.inference_mode()
    def _run(self, rows: list[_Row], n_owners: int) -> tuple[list[float], list[int]]:
        """Sum of target log-probs and target count per owner (float64, in position order)."""
        # Each target gets a slot, numbered in its owner's own order (its rows as planned, then
        # positions), and owners are summed over their slots in that order at the end: the
        # order in which forwards run (which the other rows decide) never reaches the sums,
        # not even for an owner with several rows (a long text's windows) in different passes.
        slots: list[int] = []  # slot -> owner
        for row in rows:
            numbered = []
            for pos, token, owner in row.targets:
                numbered.append((pos, token, len(slots)))
                slots.append(owner)
            row.targets = numbered
        values = [0.0] * len(slots)
        cached: CachedLM | None = getattr(self.model_fn, "cached", None)
        self._check_ids([r.tokens for r in rows])  # before any forward: name the token
        whole = rows if cached is None else []
        waves = [] if cached is None else self._waves(rows, cached)
        self._done = 0
        self._total = sum(len(r.tokens) for r in whole)
        self._total += sum(len(n.tokens) - n.start for wave in waves for n in wave)
        for wave in waves:
            self._tree(cached, wave, values)  # type: ignore[arg-type]
        for batch in self._batches(whole):
            width = len(batch[0].tokens)  # every row of a batch has this length (_batches)
            # too few projected positions are topped up from the rows themselves (_top_up), so
            # fillers never take a forward past max_positions
            ids, keep = self._fill([r.tokens for r in batch], MIN_POSITIONS)
            reads = []
            for b, row in enumerate(batch):
                for pos, token, owner in row.targets:
                    keep[b, pos] = True
                    reads.append((b, pos, token, owner))
            self._top_up(keep)
            logits = self.model_fn(ids, keep)
            self._gather(logits, keep, reads, values)
            self._count(ids, keep, len(batch) * width)  # real rows only: the bar ends at its total
        sums = [0.0] * n_owners
        counts = [0] * n_owners
        for slot, owner in enumerate(slots):
            sums[owner] += values[slot]
            counts[owner] += 1
        return sums, counts

    @staticmethod
    def _top_up(keep: torch.Tensor) -> None:
        """Too few projected positions are topped up with other positions of the rows themselves
        (their logits are ignored) rather than with filler rows: a lone long row then costs
        MIN_ROWS rows, not one more row per missing position. (_fill made rows x width >=
        MIN_POSITIONS, so there are enough positions.)"""
        short = MIN_POSITIONS - int(keep.sum())
        if short > 0:
            spare = (~keep).nonzero()[:short]
            keep[spare[:, 0], spare[:, 1]] = True

    # --- the prefix tree (cached models) ----------------------------------------------------

    def _waves(self, rows: list[_Row], cached: CachedLM) -> list[list[_Node]]:
        """The tree nodes of `rows` (module docstring, "Prefix tree"), in passes that each hold at
        most TREE_CACHE keys/values for the nodes others continue. A node is one row's tokens
        between two of its _bounds; the same prefix cut the same way is one node."""
        budget = TREE_CACHE // cached.kv_per_token if cached.kv_per_token else None
        waves: list[list[_Node]] = []
        nodes: dict[tuple[int, ...], _Node] = {}
        held = 0  # positions of the nodes of this pass that others may continue
        for row in sorted(rows, key=lambda r: r.tokens):
            bounds = _bounds(len(row.tokens))
            inner = list(itertools.pairwise(bounds[:-1]))
            if budget is not None and nodes:
                known = (nodes.get(row.tokens[:b]) for _, b in inner)
                more = sum(
                    b - a for (a, b), n in zip(inner, known, strict=True) if n is None or not n.has_children
                )
                if held + more > budget:
                    waves.append(list(nodes.values()))
                    nodes, held = {}, 0
            parent: _Node | None = None
            for a, b in itertools.pairwise(bounds):
                node = nodes.get(row.tokens[:b])
                if node is None:
                    node = nodes[row.tokens[:b]] = _Node(
                        row.tokens[:b], a, parent, width=_run_width(a, b, self.max_length)
                    )
                if parent is not None and not parent.has_children:
                    parent.has_children = True
                    held += len(parent.tokens) - parent.start
                parent = node
            for pos, token, owner in row.targets:
                i = bisect.bisect_right(bounds, pos) - 1
                nodes[row.tokens[: bounds[i + 1]]].targets.append((pos - bounds[i], token, owner))
        if nodes:
            waves.append(list(nodes.values()))
        return waves

    def _tree(self, cached: CachedLM, wave: list[_Node], values: list[float]) -> None:
        """Run one pass of nodes, shallowest first: nodes of one (start, width) share forwards
        (one shape; a last piece padded by its own rule, _run_width), each continuing the kept
        keys/values of its ancestors. The keys/values a level keeps (its nodes that others
        continue) go into tensors allocated once for the level, not gathered per forward and
        concatenated: the level is held once, never twice (docs/scoring.md "Memory")."""
        groups: dict[tuple[int, int], list[_Node]] = {}
        for node in wave:
            groups.setdefault((node.start, node.width), []).append(node)
        # start -> keys/values of the nodes starting there that others continue, one row each
        levels: dict[int, KVCache] = {}
        for start, width in sorted(groups):
            todo = groups[(start, width)]
            n_keep = sum(node.has_children for node in todo)
            level: list[tuple[torch.Tensor, torch.Tensor]] = []
            n_held = 0
            while todo:
                n = self._tree_rows(cached, start, width)
                chunk, todo = todo[:n], todo[n:]
                tokens = [
                    node.tokens[start:] + (self.pad_id,) * (start + width - len(node.tokens))
                    for node in chunk
                ]
                ids, keep = self._fill(tokens, MIN_POSITIONS)
                reads = []
                for b, node in enumerate(chunk):
                    for pos, token, owner in node.targets:
                        keep[b, pos] = True
                        reads.append((b, pos, token, owner))
                self._top_up(keep)
                if start == 0:
                    logits, kv = cached.start(ids, keep)
                else:
                    logits, kv = cached.extend(ids, self._past(chunk, levels, ids.shape[0]), keep)
                self._gather(logits, keep, reads, values)
                held = [b for b, node in enumerate(chunk) if node.has_children]
                if held:
                    rows = torch.tensor(held)
                    if not level:  # shapes are known from the first forward
                        level = [
                            tuple(  # type: ignore[misc]
                                t.new_empty((n_keep, t.shape[1], t.shape[2] - start, t.shape[3]))
                                for t in layer
                            )
                            for layer in kv
                        ]
                    for (k, v), (lk, lv) in zip(kv, level, strict=True):
                        torch.index_select(k[:, :, start:], 0, rows, out=lk[n_held : n_held + len(held)])
                        torch.index_select(v[:, :, start:], 0, rows, out=lv[n_held : n_held + len(held)])
                    for j, b in enumerate(held):
                        chunk[b].kv = n_held + j
                    n_held += len(held)
                del kv
                self._count(ids, keep, sum(len(node.tokens) - start for node in chunk))
            if level:
                levels[start] = tuple(level)  # type: ignore[arg-type]

    @staticmethod
    def _past(chunk: list[_Node], levels: dict[int, KVCache], n_rows: int) -> KVCache:
        """The keys/values of every position before `chunk`'s nodes (one start, so ancestors cut
        alike), gathered from the levels; rows past the chunk (fillers) copy its first node's."""
        chains = []
        for node in chunk:
            chain = []
            up = node.parent
            while up is not None:
                chain.append(up)
                up = up.parent
            chains.append(chain[::-1])
        chains += [chains[0]] * (n_rows - len(chunk))
        picks = [
            (chains[0][j].start, torch.tensor([chain[j].kv for chain in chains]))
            for j in range(len(chains[0]))
        ]
        n_layers = len(levels[picks[0][0]])
        return tuple(
            (
                torch.cat([levels[s][layer][0].index_select(0, rows) for s, rows in picks], dim=2),
                torch.cat([levels[s][layer][1].index_select(0, rows) for s, rows in picks], dim=2),
            )
            for layer in range(n_layers)
        )

    def _tree_rows(self, cached: CachedLM, start: int, width: int) -> int:
        """Nodes one tree forward may take: as _batches (max_positions included), and the
        keys/values it gathers and returns within MAX_CACHE (at least one)."""
        n = max(self.batch_size, POSITIONS_PER_FORWARD // width)
        n = min(n, self.max_positions // width)
        if self.vocab_size:
            n = min(n, MAX_LOGITS // (self.vocab_size * width))
        if cached.kv_per_token:
            n = min(n, MAX_CACHE // (cached.kv_per_token * (start + width)))
        return max(n, 1)
