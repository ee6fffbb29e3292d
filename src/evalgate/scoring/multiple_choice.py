"""Multiple-choice scoring (docs/scoring.md): requests out, per-probe entries in.

Pure: the model sits behind any object with `loglikelihood(requests) -> list[Loglik]` (the
`Scorer` protocol of scorers/base.py; `FakeScorer` in tests), so this module never sees torch.

Render the template with the probe, split at `___` into context and suffix, and score each
candidate by one of three methods:

- `candidate` (default): log p(candidate | context) / normaliser;
- `candidate-raw`: log p(candidate | context), unnormalised (favours short candidates);
- `sentence`: log p(context + candidate + suffix) from the start of text (BLiMP's minimal
  pairs), divided by the normaliser of the whole sentence.

Normalisers: `tokens` (the continuation's token count; the default), `chars` (characters, as
lm-eval's acc_norm: independent of the tokenizer), `bytes` (UTF-8 bytes), `none`. Runs with
different methods or normalisations are not comparable (the manifest records both).

The context's trailing whitespace moves to the front of the continuation before scoring
("She " + "works" is scored as "She" + " works", lm-eval's convention); the entry records the
strings exactly as scored, so `context + continuation` is always the scored text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from typing import Any, Protocol

from evalgate.errors import CheckpointError, RefusedError
from evalgate.types import (
    BLANK,
    STATUS_AMBIGUOUS,
    STATUS_DEPRECATED,
    STATUS_EXCLUDED,
    STATUS_OOV,
    STATUS_SCORED,
    Finding,
    Loglik,
    LoglikRequest,
    Probe,
)

METHODS = ("candidate", "candidate-raw", "sentence")
NORMALIZATIONS = ("tokens", "chars", "bytes", "none")
PLACEHOLDER = "{prompt}"


class LoglikScorer(Protocol):
    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> list[Loglik]: ...


def render(template_text: str, probe: Probe) -> tuple[str, str]:
    """(context, suffix): the template with the prompt in place, split at the blank.

    One trailing newline of the template is the file's, not the prompt's, and is dropped.
    """
    template = template_text[:-1] if template_text.endswith("\n") else template_text
    if template.count(PLACEHOLDER) != 1:
        raise RefusedError(
            f"prompt template: must contain {PLACEHOLDER} exactly once (found {template.count(PLACEHOLDER)})",
            hint="edit data/eval/probe_prompt.txt (or the `template:` file of evalgate.yml)",
        )
    if BLANK in template:
        raise RefusedError(
            f"prompt template: must not contain {BLANK} itself (only the prompt has the blank)"
        )
    text = template.replace(PLACEHOLDER, probe.prompt)
    if probe.is_item and BLANK not in probe.prompt:
        # A question (docs/suites.md): each candidate follows the rendered text after one space,
        # which `split_whitespace` moves onto the candidate ("Answer:" + " Paris", lm-eval's way).
        return text.rstrip() + " ", ""
    if text.count(BLANK) != 1:
        raise RefusedError(f"probe {probe.id}: the prompt must contain {BLANK} exactly once")
    context, suffix = text.split(BLANK)
    return context, suffix


def split_whitespace(context: str, continuation: str) -> tuple[str, str]:
    """Move the context's trailing whitespace to the front of the continuation (lm-eval)."""
    n = len(context) - len(context.rstrip())
    return (context[:-n], context[-n:] + continuation) if n else (context, continuation)


def normaliser(normalization: str, text: str, n_tokens: int) -> float:
    if normalization == "tokens":
        return float(n_tokens)
    if normalization == "chars":
        return float(len(text))
    if normalization == "bytes":
        return float(len(text.encode("utf-8")))
    return 1.0


def softmax(scores: Sequence[float]) -> list[float]:
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = math.fsum(exps)
    return [e / total for e in exps]


def entropy(probs: Sequence[float]) -> float:
    """Shannon entropy in nats (0 log 0 = 0)."""
    return -math.fsum(p * math.log(p) for p in probs if p > 0)


def _requests(probe: Probe, context: str, suffix: str, method: str) -> list[tuple[str, str, str]]:
    """(context, continuation, normalised text) per candidate, in candidate order."""
    out = []
    for cand in probe.candidates:
        if method == "sentence":
            sentence = context + cand + suffix
            out.append(("", sentence, sentence))
        else:
            ctx, cont = split_whitespace(context, cand)
            out.append((ctx, cont, cand))
    return out


def _metadata(probe: Probe) -> dict[str, Any]:
    if probe.is_item:
        out: dict[str, Any] = {
            "prompt": probe.prompt,
            "slices": dict(probe.dims),
            "source": probe.source,
            "kind": probe.kind,
            "content_hash": probe.content_hash(),
        }
        if probe.suite:
            out["suite"] = probe.suite
        return out
    if probe.suite:  # a verb-form suite among several (docs/suites.md)
        return {**_verb_metadata(probe), "suite": probe.suite}
    return _verb_metadata(probe)


def _verb_metadata(probe: Probe) -> dict[str, Any]:
    return {
        "prompt": probe.prompt,
        "language": probe.language,
        "verb": probe.verb,
        "regularity": probe.regularity,
        "tense": probe.tense,
        "person": probe.person,
        "category": probe.category,
        "label": probe.label,
        "reason_code": probe.reason_code,
        "source": probe.source,
        "kind": probe.kind,
        "content_hash": probe.content_hash(),
    }


def entry_skeleton(probe: Probe) -> dict[str, Any]:
    """A probe's per-probe entry before it is scored: its metadata, no outcome (the slice
    structure the gate can know before any model is loaded, pipeline.refuse_blind_clusters)."""
    return _unscored(probe, STATUS_SCORED)


def _unscored(probe: Probe, status: str) -> dict[str, Any]:
    return {
        "id": probe.id,
        "status": status,
        "candidates": [{"text": c} for c in probe.candidates],
        "pred": None,
        "expected": probe.expected,
        "correct": None,
        "confidence": None,
        "entropy": None,
        "entropy_norm": None,
        **_metadata(probe),
    }


def _as_decoded(text: str) -> str:
    """Text modulo what a tokenizer may legitimately change on the way back: case (a lowercasing
    normaliser) and whitespace (word-level and WordPiece decoders join tokens with spaces:
    "a report ."). A continuation scored on the wrong span gains or loses other characters."""
    return "".join(text.casefold().split())


def _boundary_problem(
    probe: Probe, cand: str, ctx: str, cont: str, res: Loglik, twin: str | None = None
) -> str | None:
    if twin is not None:  # a normalising tokenizer (lowercase) made two candidates one
        why = f"the tokenizer makes it the same tokens as candidate {twin!r}"
    elif res.n_tokens == 0:
        why = "the continuation has no tokens of its own"
    elif res.decoded.strip() != cont.strip() and _as_decoded(res.decoded) != _as_decoded(cont):
        why = f"its tokens decode to {res.decoded!r}"
    else:
        return None
    split = " ".join(repr(t) for t in res.tokens) or "(none)"
    where = (
        f"{probe.file}:{probe.line}: "
        if probe.file and probe.line
        else f"{probe.file}: "
        if probe.file
        else ""
    )
    return (
        f"{where}probe {probe.id}, candidate {cand!r}: context {ctx[-30:]!r} + continuation {cont!r}: "
        f"{why}; continuation tokens: {split}"
    )


def score_probes(
    probes: Sequence[Probe],
    template: str | Callable[[Probe], str],
    scorer: LoglikScorer,
    method: str = "candidate",
    normalization: str = "tokens",
    excluded: Collection[str] = frozenset(),
) -> list[dict[str, Any]]:
    """The results.json "probes" entries, in probe order (docs/ARCHITECTURE.md).

    `template` is the prompt template's text, or (several suites, docs/suites.md) a function
    giving each probe its suite's: every request goes to the scorer in one call, so the model
    batches across suites.
    """
    if method not in METHODS:
        raise RefusedError(f"scoring.method {method!r}: expected one of {', '.join(METHODS)}")
    if normalization not in NORMALIZATIONS:
        raise RefusedError(
            f"scoring.normalization {normalization!r}: expected one of {', '.join(NORMALIZATIONS)}"
        )
    norm = "none" if method == "candidate-raw" else normalization
    excluded = frozenset(excluded)
    plans: list[tuple[Probe, str, list[tuple[str, str, str]]] | None] = []
    requests: list[LoglikRequest] = []
    for probe in probes:
        if probe.deprecated or probe.id in excluded:
            plans.append(None)
            continue
        context, suffix = render(template if isinstance(template, str) else template(probe), probe)
        reqs = _requests(probe, context, suffix, method)
        plans.append((probe, "" if method == "sentence" else reqs[0][0], reqs))
        requests.extend(LoglikRequest(ctx, cont, probe.id) for ctx, cont, _ in reqs)
    results = scorer.loglikelihood(requests) if requests else []
    if len(results) != len(requests):
        raise CheckpointError(f"the scorer returned {len(results)} results for {len(requests)} requests")

    entries: list[dict[str, Any]] = []
    boundary: list[Finding] = []
    broken: list[str] = []
    it = iter(results)
    for probe, plan in zip(probes, plans, strict=True):
        if plan is None:
            entries.append(_unscored(probe, STATUS_DEPRECATED if probe.deprecated else STATUS_EXCLUDED))
            continue
        _, shown_context, reqs = plan
        res = [next(it) for _ in reqs]
        oov = any(r.oov for r in res)
        if not oov:
            seen: dict[tuple[str, tuple[str, ...]], str] = {}
            for cand, (ctx, cont, _), r in zip(probe.candidates, reqs, res, strict=True):
                problem = _boundary_problem(probe, cand, ctx, cont, r)
                twin = seen.setdefault((r.decoded, r.tokens), cand)
                if problem is None and twin != cand:
                    problem = _boundary_problem(probe, cand, ctx, cont, r, twin=twin)
                if problem:
                    boundary.append(
                        Finding(
                            check="tokenization-boundary",
                            message=problem,
                            file=probe.file or None,
                            line=probe.line or None,
                            probe_id=probe.id,
                            field="candidates",
                        )
                    )
        if any(not math.isfinite(r.logprob) for r in res):
            broken.append(probe.id)
            continue
        cands, scores = [], []
        for cand, (_, cont, text), r in zip(probe.candidates, reqs, res, strict=True):
            denom = normaliser(norm, text, r.n_tokens) or 1.0
            score = r.logprob / denom
            scores.append(score)
            entry = {
                "text": cand,
                "continuation": cont,
                "loglik": r.logprob,
                "n_tokens": r.n_tokens,
                "score": score,
                "surprisal": -r.logprob,
            }
            if r.oov:
                entry["oov"] = True
            cands.append(entry)
        probs = softmax(scores)
        k = max(range(len(scores)), key=lambda i: (scores[i], -i))  # ties -> first candidate
        # A top score shared by several candidates is no answer: counting the first one right
        # would hand a degenerate checkpoint (all logits equal) every item whose answer is listed
        # first, enough to pass a floor (docs/scoring.md).
        tie = scores.count(scores[k]) > 1
        h = entropy(probs)
        status = STATUS_OOV if oov else STATUS_AMBIGUOUS if probe.label == "ambiguous" else STATUS_SCORED
        entries.append(
            {
                "id": probe.id,
                "status": status,
                "context": shown_context,
                "candidates": cands,
                "pred": probe.candidates[k],
                "expected": probe.expected,
                "correct": probe.candidates[k] == probe.expected and not tie,
                "confidence": probs[k],
                "entropy": h,
                "entropy_norm": h / math.log(len(scores)) if len(scores) > 1 else 0.0,
                **_metadata(probe),
                **({"tie": True} if tie else {}),
            }
        )
    if boundary:
        raise RefusedError(
            f"tokenization boundary: {len(boundary)} candidate(s) would be scored on the wrong span:\n  "
            + "\n  ".join(f.message for f in boundary),
            hint=(
                "the tokenizer does not give these texts back when decoding its tokens (it "
                "normalises them), so their scores cannot be attributed"
                if method == "sentence"
                else "the tokenizer merges the candidate with the text around the blank; put a "
                "space before ___ in the prompt or the template, or use method `sentence`"
            ),
            findings=boundary,
        )
    if broken:
        raise CheckpointError(
            f"the model gave a non-finite log-likelihood (probability 0 or NaN) on probe(s) "
            f"{', '.join(broken)}",
            hint="the checkpoint's weights are broken (NaN/inf); retrain or restore it",
        )
    return entries
