"""`FakeScorer`: a `Scorer` from a lookup table or a function, for fast tests above the model.

It lives with the tests, not in src/: the gate takes its scorer from an injected factory
(pipeline/scoring.ScorerFactory), so a test hands this one in through the composition root
(`use_scorer`, or a `Collaborators` of its own) and the code it tests is the shipped code.

No torch, no tokenizer: a "token" is a whitespace-separated word of the continuation. Typical use:

    scorer = FakeScorer({"works": -1.0, "work": -3.0})           # by continuation (stripped)
    scorer = FakeScorer({("She", " works"): -1.0}, default=-9.0)  # by exact (context, continuation)
    scorer = FakeScorer(fn=lambda context, continuation: -len(continuation))

Lookup order for a request: the exact (context, continuation) pair, then the stripped
continuation, then `fn(context, continuation)`, then `default`; nothing found is a KeyError (a
test that forgot an entry should fail loudly). Values are summed log-probabilities (natural log).
`oov` lists continuations (stripped) to report as containing the unknown token; `decode` maps a
continuation to what its tokens would decode to (to provoke the boundary check). Every request
is kept in `.requests`, in call order, so a test can assert what was asked.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from evalgate.scorers.base import Scorer, ScorerInfo
from evalgate.types import Loglik, LoglikRequest, Perplexity, sha256_text


class FakeScorer(Scorer):
    def __init__(
        self,
        table: Mapping[str | tuple[str, str], float] | None = None,
        *,
        fn: Callable[[str, str], float] | None = None,
        default: float | None = None,
        oov: Collection[str] = (),
        decode: Mapping[str, str] | None = None,
        perplexity_value: float = 10.0,
    ):
        self.table = dict(table or {})
        self.fn = fn
        self.default = default
        self.oov = frozenset(oov)
        self.decode = dict(decode or {})
        self.perplexity_value = perplexity_value
        self.requests: list[LoglikRequest] = []
        self.texts: list[str] = []
        self.info = ScorerInfo(
            # an injected scorer, not one of the built-in loaders': what results.json calls a plugin
            format="plugin",
            files={},
            digest=sha256_text(repr(sorted(self.table.items(), key=repr))),
            tokenizer_sha256=sha256_text("fake-whitespace-tokenizer"),
            dtype="float32",
            n_parameters=0,
        )

    def _lookup(self, context: str, continuation: str) -> float:
        if (context, continuation) in self.table:
            return float(self.table[(context, continuation)])
        if continuation.strip() in self.table:
            return float(self.table[continuation.strip()])
        if self.fn is not None:
            return float(self.fn(context, continuation))
        if self.default is not None:
            return float(self.default)
        raise KeyError(f"FakeScorer has no entry for context {context!r}, continuation {continuation!r}")

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> list[Loglik]:
        out = []
        for req in requests:
            self.requests.append(req)
            words = req.continuation.split()
            out.append(
                Loglik(
                    logprob=self._lookup(req.context, req.continuation),
                    n_tokens=len(words),
                    decoded=self.decode.get(req.continuation.strip(), req.continuation),
                    oov=req.continuation.strip() in self.oov,
                    tokens=tuple(words),
                )
            )
        return out

    def perplexity(self, texts: Sequence[str]) -> Perplexity:
        """Every text costs log(perplexity_value) nats per word (+1 for the end of the text)."""
        self.texts.extend(texts)
        counts = tuple(len(t.split()) + 1 for t in texts)
        n_tokens = sum(counts)
        nll = n_tokens * math.log(self.perplexity_value)
        per = tuple(n * math.log(self.perplexity_value) for n in counts)
        return Perplexity(
            value=self.perplexity_value, n_tokens=n_tokens, nll=nll, sentence_nll=per, sentence_tokens=counts
        )


def use_scorer(monkeypatch: Any, scorer: Any) -> list[Any]:
    """Every gate the CLI runs in this test scores with `scorer` (the composition root's scorer
    factory, commands/_args.SCORER_FACTORY); returns the list of the configurations it was asked
    to score, so a test can assert the model was (or was not) built."""
    import evalgate.commands._args as wiring

    asked: list[Any] = []

    def factory(cfg: Any, given: str | None) -> Any:
        asked.append(cfg)
        return scorer

    monkeypatch.setattr(wiring, "SCORER_FACTORY", factory)
    return asked
