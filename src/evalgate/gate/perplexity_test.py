"""The paired perplexity test: is the mean per-token NLL increase above log(max ratio)?

Both runs score the same held-out sentences with the same tokenizer, so the noise that matters
is which sentences the test set happens to hold, and it is shared by the two runs. Per sentence
i with total NLLs `new_i`, `old_i` (nats) over `n_i` predicted tokens, the difference of the two
log-perplexities is the token-weighted mean of the per-token differences

    D = sum(new_i - old_i) / sum(n_i)          (exactly log(new ppl / old ppl))

The gate's promise is the configured ratio (docs/gate.md, "Perplexity"): an increase up to
x max_ratio is never a regression. The null hypothesis is that promise,
H0: E[D] <= log(max_ratio), tested one-sided against "the increase is above it".

D is a ratio estimator over sentences (the sentences are the sampled units, the token counts
their weights), so its standard error is the sentence-level (cluster-robust) one,

    se^2 = m / (m - 1) * sum((Δ_i - D n_i)^2) / (sum n_i)^2,       Δ_i = new_i - old_i,

and t = (D - log max_ratio) / se is referred to Student's t with m - 1 degrees of freedom. With
equal token counts this is exactly the paired t-test (tests/gate/test_perplexity_test.py checks it
against Student's sleep data). A t-test rather than a sign-flip permutation: the null is a shifted
mean, not symmetry about zero, so sign flips would need the shift assumed anyway; with the
hundreds to thousands of sentences a test set holds, the mean of the differences is close to
normal; and it is O(m), deterministic and gives an interval in closed form.

The interval is the two-sided 1 - 2·alpha one on the perplexity ratio, exp(D ± t_q se): its lower
end is the one-sided 1 - alpha bound, so the test fails exactly when that bound lies above
max_ratio. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from evalgate.gate.binomial import betainc

TEST_NAME = "paired-t-token-weighted"


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with `df` degrees of freedom."""
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = 0.5 * float(betainc(df / 2.0, 0.5, df / (df + t * t)))
    return tail if t >= 0 else 1.0 - tail


def t_isf(q: float, df: float) -> float:
    """The t with P(T > t) = q (0 < q < 1), by bisection on `t_sf` (monotone)."""
    lo, hi = -1.0, 1.0
    while t_sf(lo, df) < q:
        lo *= 2.0
    while t_sf(hi, df) > q:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_sf(mid, df) > q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, abs(mid)):
            break
    return (lo + hi) / 2.0


def sentence_record(nll: Sequence[float], tokens: Sequence[int]) -> dict[str, list]:
    """results.json's `sentence_nll`/`sentence_tokens`, or {} when unknown or not all finite.

    Rounded to 1e-4 nats (far below any sentence's NLL noise) so that the same inputs give
    byte-identical results.json even when the last float bits of a summation order differ.
    """
    if not nll or len(nll) != len(tokens) or not all(math.isfinite(v) for v in nll):
        return {}
    return {"sentence_nll": [round(v, 4) + 0.0 for v in nll], "sentence_tokens": [int(n) for n in tokens]}


def _exp(x: float) -> float:
    # A hostile baseline can claim absurd NLLs: a ratio past float range is shown as the largest.
    return math.exp(min(x, 700.0))


def pairing_problem(new: Any, old: Any) -> str | None:
    """Why the two runs' per-sentence NLLs cannot be paired, or None when they can.

    `new`/`old` are results.json / baseline "perplexity" objects. Pairing is by position: the
    caller has already checked that the test set (test_sha256) and tokenizer are the same; the
    per-sentence token counts must then agree too, which catches a reordered or edited set.
    """
    for side, doc in (("this run", new), ("the baseline", old)):
        nll, tok = (doc or {}).get("sentence_nll"), (doc or {}).get("sentence_tokens")
        if not isinstance(nll, list) or not isinstance(tok, list):
            return f"{side} records no per-sentence NLLs"
        if len(nll) != len(tok) or len(nll) < 2:
            return f"{side}'s per-sentence NLLs are incomplete"
        if not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in nll):
            return f"{side}'s per-sentence NLLs are not all finite numbers"
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in tok):
            return f"{side}'s per-sentence token counts are not all non-negative integers"
        if sum(tok) == 0:
            return f"{side}'s sentences hold no token"
    if len(new["sentence_nll"]) != len(old["sentence_nll"]):
        return "the two runs scored different numbers of sentences"
    if new["sentence_tokens"] != old["sentence_tokens"]:
        return "the per-sentence token counts differ, so the sentences are not the same"
    return None


def paired_nll_test(
    new_nll: Sequence[float],
    old_nll: Sequence[float],
    tokens: Sequence[int],
    max_ratio: float,
    alpha: float,
) -> dict[str, Any]:
    """The test of H0 "mean per-token NLL increase <= log(max_ratio)" (module docstring).

    Returns the comparison keys: `test`, `n_sentences`, `nll_increase` (D, nats per token),
    `p_value` (one-sided), `ratio_low`/`ratio_high` (the 1 - 2·alpha interval on the ratio),
    `interval_level` and `regressed` (p_value < alpha).
    """
    m, total = len(tokens), sum(tokens)
    diffs = [a - b for a, b in zip(new_nll, old_nll, strict=True)]
    d = math.fsum(diffs) / total
    margin = math.log(max_ratio)
    ss = math.fsum((x - d * n) ** 2 for x, n in zip(diffs, tokens, strict=True))
    se = math.sqrt(m / (m - 1) * ss) / total
    if se == 0.0:  # every sentence moved by the same per-token amount: no sampling noise to weigh
        p = 0.0 if d > margin else 1.0
        half = 0.0
    else:
        p = t_sf((d - margin) / se, m - 1)
        half = t_isf(alpha, m - 1) * se
    return {
        "test": TEST_NAME,
        "n_sentences": m,
        "nll_increase": d,
        "p_value": p,
        "ratio_low": _exp(d - half),
        "ratio_high": _exp(d + half),
        "interval_level": 1 - 2 * alpha,
        "regressed": p < alpha,
    }
