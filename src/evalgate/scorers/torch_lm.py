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

Fixed-shape forwards: a batch holds rows of exactly one length, so nothing is ever padded, and a
row's logits are the same bits whatever other rows share its forward (CPU matmuls and attention
give a row the same result for any batch size at a fixed length; tests/scorers/test_prefix_sharing.py
checks it). So a request's log-likelihood depends on the request alone: a probe scored with the
whole set, in a shard, alone, or read back from the score cache (edges/score_cache.py) has the
same numbers to the last bit. Only the positions that predict a target are projected onto the
vocabulary when the model supports it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from evalgate.errors import CheckpointError, RefusedError
from evalgate.scorers.base import ScorerInfo, TokenizerAdapter
from evalgate.types import Loglik, LoglikRequest, Perplexity

# (B, T) ids, (B, T) bool mask of wanted positions -> (N, V) logits for the True positions, row-major.
LogitsFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

# Smallest forward, in rows and in token positions (body and vocabulary projection alike): CPU
# matmuls take another code path (another float rounding) for one row or for fewer than ~12
# positions (measured on x86 with torch's default BLAS), so a smaller batch is filled with
# copies of its first row whose outputs are computed and ignored. Above these sizes a row's
# result does not depend on the batch (tests/scorers/test_prefix_sharing.py holds it to the bit).
MIN_ROWS, MIN_POSITIONS = 2, 16

# Largest logits tensor (elements) one forward may produce: 2**24 float32 = 64 MiB (+ its float64 copy).
MAX_LOGITS = 1 << 24


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
    ):
        """`max_length`: longest input the model accepts (longer inputs are left-truncated, as
        lm-eval does); `append_eos`: perplexity texts end with EOS (the model was trained so)."""
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
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
        self.counters = {"forwards": 0, "positions": 0}
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
        at batch_size rows or at MAX_LOGITS logits."""
        order = sorted(rows, key=lambda r: (-len(r.tokens), r.tokens))
        selects = getattr(self.model_fn, "selects_positions", False)
        batches: list[list[_Row]] = []
        current: list[_Row] = []
        elements = 0
        for row in order:
            # a full-logits model materialises (B, T, V); one that selects, only the kept positions
            n = len({p for p, _, _ in row.targets}) if selects else len(row.tokens)
            if current:
                too_big = self.vocab_size is not None and (elements + n) * self.vocab_size > MAX_LOGITS
                if len(row.tokens) != len(current[0].tokens) or len(current) >= self.batch_size or too_big:
                    batches.append(current)
                    current, elements = [], 0
            current.append(row)
            elements += n
        if current:
            batches.append(current)
        return batches

    # --- the forward passes ---------------------------------------------------------------

    def _check_ids(self, batch: list[_Row]) -> None:
        """Token ids the embedding cannot look up fail in the forward as an IndexError (or read
        out of bounds): name the token instead. The targets are checked against the logits."""
        if self.vocab_size is None:
            return
        bad = next((t for row in batch for t in row.tokens if not 0 <= t < self.vocab_size), None)
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

    @torch.inference_mode()
    def _run(self, rows: list[_Row], n_owners: int) -> tuple[list[float], list[int]]:
        """Sum of target log-probs and target count per owner (float64, in target order)."""
        sums = [0.0] * n_owners
        counts = [0] * n_owners
        total, done = sum(len(r.tokens) for r in rows), 0
        for batch in self._batches(rows):
            width = len(batch[0].tokens)  # every row of a batch has this length (_batches)
            kept = sum(len({p for p, _, _ in r.targets}) for r in batch)
            fill = 0  # copies of batch[0] that keep every position (see MIN_ROWS)
            while (
                len(batch) + fill < MIN_ROWS
                or (len(batch) + fill) * width < MIN_POSITIONS
                or kept + fill * width < MIN_POSITIONS
            ):
                fill += 1
            ids = torch.tensor([r.tokens for r in batch] + [batch[0].tokens] * fill, dtype=torch.long)
            keep = torch.zeros(ids.shape, dtype=torch.bool)
            keep[len(batch) :] = True
            for b, row in enumerate(batch):
                for pos, _, _ in row.targets:
                    keep[b, pos] = True
            self._check_ids(batch)
            # flat index of every kept (row, position), in the row-major order the logits come in
            flat = torch.full(ids.shape, -1, dtype=torch.long)
            flat[keep] = torch.arange(int(keep.sum()))
            logits = self.model_fn(ids, keep)
            if logits.dim() != 2 or logits.shape[0] != int(keep.sum()):
                raise CheckpointError(
                    f"the model returned logits of shape {tuple(logits.shape)} "
                    f"for {int(keep.sum())} positions"
                )
            # float64 normaliser: batched and one-at-a-time then agree to ~1e-7, not float32's ~1e-6
            logp = torch.log_softmax(logits.to(torch.float64), dim=-1)
            where, tokens, owners = [], [], []
            for b, row in enumerate(batch):
                for pos, token, owner in row.targets:
                    where.append(int(flat[b, pos]))
                    tokens.append(token)
                    owners.append(owner)
            if max(tokens) >= logp.shape[1] or min(tokens) < 0:
                bad = max(tokens) if max(tokens) >= logp.shape[1] else min(tokens)
                raise CheckpointError(
                    f"token id {bad} is outside the model's vocabulary of {logp.shape[1]}",
                    hint="the tokenizer does not belong to this model",
                )
            values = logp[torch.tensor(where), torch.tensor(tokens)].double().tolist()
            for owner, value in zip(owners, values, strict=True):
                sums[owner] += value
                counts[owner] += 1
            done += len(batch) * width  # real rows only: the bar ends at its total
            self.counters["forwards"] += 1
            self.counters["positions"] += ids.numel()
            if self.on_progress is not None:
                self.on_progress(done, total)
        return sums, counts
