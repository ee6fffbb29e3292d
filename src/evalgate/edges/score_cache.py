"""The content-addressed score cache of `evalgate run --cache DIR` (docs/scoring.md "Score cache").

One entry per probe: the log-likelihoods of its candidates' requests, keyed by the SHA-256 of
what determines them - the checkpoint files, the tokenizer, the scoring configuration (method,
normalisation, dtype, template), the evalgate scoring version, the torch version, the kind of
CPU (its vector instructions) and the probe's content hash. A rerun after a probe-only change
scores only the new or changed probes.

results.json is byte-identical with a cold cache, a warm cache and no cache on one kind of CPU
(the key keeps another kind's bits out): a request's numbers depend on its probe alone
(scorers/torch_lm.py, "Fixed-shape forwards"), and an entry gives back exactly the floats that
were computed (JSON round-trips a float exactly).

The cache folder is input like any other, possibly written by someone else: an entry is read
as JSON only (never unpickled, never executed), capped in size, must be a regular file, must
carry its own key, the exact requests asked and a SHA-256 of its content, and must hold finite
numbers of the right types. Anything else is ignored and the probe is scored (and the entry
rewritten). A well-formed entry with wrong numbers cannot be told from a right one: that is why
a pull request's cache must never feed the base branch's runs (docs/scoring.md).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from evalgate import SCORING_VERSION
from evalgate.edges.files import atomic_write_text
from evalgate.paths import read_regular
from evalgate.types import Loglik, LoglikRequest, canonical_json, sha256_text

FORMAT = "evalgate-score-cache-1"
MAX_ENTRY_BYTES = 1 << 20  # a probe's entry is a few KB; anything larger is not ours


def _cpu_kind() -> str:
    """The vector instructions PyTorch's CPU kernels use here (AVX2, AVX512, ...). They sum in
    other orders, so one checkpoint gives other last bits on another kind of CPU (docs/scoring.md,
    "Batching and determinism"): an entry computed on one kind would make a warm run on another
    differ from a cold one there."""
    try:
        import torch

        return f"{torch.backends.cpu.get_cpu_capability()}/{os.uname().machine}"
    except Exception:  # no torch (a plugin scorer): the machine is all there is to say
        return f"unknown/{os.uname().machine}"


def _torch_version() -> str:
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "none"


class ScoreCache:
    """Entries under `root/<2 hex>/<64 hex>.json`; counts hits, misses and rejected entries."""

    def __init__(self, root: Path, *, checkpoint: str, tokenizer: str | None, scoring: dict[str, Any]):
        self.root = Path(root)
        self.model_key = sha256_text(
            canonical_json(
                {
                    "format": FORMAT,
                    "checkpoint_sha256": checkpoint,
                    "tokenizer_sha256": tokenizer,
                    "scoring": scoring,
                    "scoring_version": SCORING_VERSION,
                    "torch": _torch_version(),
                    "cpu": _cpu_kind(),
                }
            )
        )
        self.hits = self.misses = self.rejected = 0

    def key(self, probe_content_hash: str) -> str:
        return sha256_text(canonical_json({"model": self.model_key, "probe": probe_content_hash}))

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def load(self, key: str, requests: Sequence[LoglikRequest]) -> list[Loglik] | None:
        """The cached results for exactly these requests, or None (missing, or not trusted)."""
        path = self._path(key)
        try:
            st = os.lstat(path)
        except OSError:
            self.misses += 1
            return None
        found = None
        if stat.S_ISREG(st.st_mode) and st.st_size <= MAX_ENTRY_BYTES:
            # read through the bounded reader, no link followed: an entry swapped for a FIFO or a
            # link after the lstat is refused on the open descriptor (not trusted, rescored)
            with contextlib.suppress(OSError, UnicodeDecodeError, ValueError, RecursionError):
                data = read_regular(path, MAX_ENTRY_BYTES, follow_links=False)
                found = _parse(data.decode("utf-8"), key, requests)
        if found is None:
            self.rejected += 1
            self.misses += 1
        else:
            self.hits += 1
        return found

    def store(self, key: str, requests: Sequence[LoglikRequest], results: Sequence[Loglik]) -> None:
        """Write an entry atomically; a read-only or full cache folder only costs the next run time."""
        if any(not math.isfinite(r.logprob) for r in results):
            return  # a broken checkpoint is refused; nothing worth keeping
        body = {
            "format": FORMAT,
            "key": key,
            "requests": [[r.context, r.continuation] for r in requests],
            "results": [
                {
                    "logprob": r.logprob,
                    "n_tokens": r.n_tokens,
                    "decoded": r.decoded,
                    "oov": r.oov,
                    "tokens": list(r.tokens),
                }
                for r in results
            ],
        }
        doc = {**body, "sha256": sha256_text(canonical_json(body))}
        with contextlib.suppress(OSError):
            atomic_write_text(self._path(key), json.dumps(doc, sort_keys=True, ensure_ascii=False))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _parse(text: str, key: str, requests: Sequence[LoglikRequest]) -> list[Loglik] | None:
    doc = json.loads(text, parse_constant=_no_constant)
    if not isinstance(doc, dict) or set(doc) != {"format", "key", "requests", "results", "sha256"}:
        return None
    body = {k: v for k, v in doc.items() if k != "sha256"}
    if doc["sha256"] != sha256_text(canonical_json(body)):
        return None  # corrupt (or edited without care)
    if doc["format"] != FORMAT or doc["key"] != key:
        return None
    if doc["requests"] != [[r.context, r.continuation] for r in requests]:
        return None
    results = doc["results"]
    if not isinstance(results, list) or len(results) != len(requests):
        return None
    out = []
    for rec in results:
        if not isinstance(rec, dict) or set(rec) != {"logprob", "n_tokens", "decoded", "oov", "tokens"}:
            return None
        logprob, n_tokens, decoded, oov, tokens = (
            rec["logprob"], rec["n_tokens"], rec["decoded"], rec["oov"], rec["tokens"]
        )  # fmt: skip
        if not (
            isinstance(logprob, float)
            and math.isfinite(logprob)
            and logprob <= 0.0
            and isinstance(n_tokens, int)
            and not isinstance(n_tokens, bool)
            and n_tokens >= 0
            and isinstance(decoded, str)
            and isinstance(oov, bool)
            and isinstance(tokens, list)
            and len(tokens) == n_tokens
            and all(isinstance(t, str) for t in tokens)
        ):
            return None
        out.append(Loglik(logprob=logprob, n_tokens=n_tokens, decoded=decoded, oov=oov, tokens=tuple(tokens)))
    return out


class CachedScorer:
    """Wraps a scorer: requests of probes (by `LoglikRequest.group`) found in the cache are
    answered from it; the rest go to the model in one call and are stored. `keys` maps a probe
    id to its cache key; requests of other groups are always scored."""

    def __init__(self, inner: Any, cache: ScoreCache, keys: dict[str, str]):
        self.inner = inner
        self.cache = cache
        self.keys = keys
        self.info = inner.info
        self.scored_groups: list[str] = []

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> list[Loglik]:
        groups: dict[str | None, list[int]] = {}
        for i, req in enumerate(requests):
            groups.setdefault(req.group, []).append(i)
        out: list[Loglik | None] = [None] * len(requests)
        todo: list[int] = []
        fresh_groups = []
        for group, idx in groups.items():
            key = self.keys.get(group) if group is not None else None
            cached = self.cache.load(key, [requests[i] for i in idx]) if key else None
            if cached is None:
                todo += idx
                if key:
                    fresh_groups.append((group, key, idx))
            else:
                for i, res in zip(idx, cached, strict=True):
                    out[i] = res
        if todo:
            for i, res in zip(todo, self.inner.loglikelihood([requests[i] for i in todo]), strict=True):
                out[i] = res
        for group, key, idx in fresh_groups:
            self.cache.store(key, [requests[i] for i in idx], [out[i] for i in idx])  # type: ignore[misc]
            self.scored_groups.append(group)  # type: ignore[arg-type]
        return out  # type: ignore[return-value]

    def perplexity(self, texts: Sequence[str]) -> Any:
        return self.inner.perplexity(texts)
