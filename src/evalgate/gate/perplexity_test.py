"""The paired perplexity test: is the per-token NLL increase above log(max ratio)?

Both runs score the same held-out sentences with the same tokenizer, so the noise that matters
is which sentences the test set happens to hold, and it is shared by the two runs. Sentence i has
total NLLs `new_i`, `old_i` (nats) over `n_i` predicted tokens; the runs' log-perplexity ratio is
D = sum(new_i - old_i) / sum(n_i), and the gate's promise is the configured ratio (docs/gate.md,
"Perplexity"): an increase up to x max_ratio is never a regression.

The test (`betting_test`) is a test by betting on the sentences (Waudby-Smith & Ramdas 2024,
"Estimating means of bounded random variables by betting", JRSS B 86(1), sections 3-4). Each
sentence's tolerated NLL is t_i = old_i + n_i log(max_ratio), and

    z_i = new_i / t_i - 1  >= -1          (a sentence's NLL is never negative)

H0 is "E[z] <= 0": on average a sentence's new NLL is within its tolerated one. The wealth
W_k = prod_{i<=k} (1 + lambda_i z_i), with each bet lambda_i in [0, 0.9] chosen from the sentences
before i only, is then a nonnegative supermartingale under H0, so by Ville's inequality
P(sup_k W_k >= 1/alpha) <= alpha, and p = min(1, 1 / sup_k W_k) is a valid p-value for any
distribution of the sentences: no normality, no symmetry, whatever the skew. That is why it
replaced the paired t-test (and why not a sign-flip test): with left-skewed per-sentence
differences (a few sentences the new model does much better on) both are liberal, the t-test's
size 0.16 at 30 sentences and 0.08 at 2,000 for lognormal(sigma = 1) differences, and a
sign-flip test's the same, since symmetry is what such differences lack (bench/perplexity_size.py,
table M). The price is power: the bet can never risk more than a sentence's whole NLL, so a
test set of m sentences shows an increase only once the wealth clears 1/alpha (a mean z of
about ln(1/alpha)/m at the least). When the increase does not depend on the sentence (the
change of per-token NLL is independent of the sentence's length and difficulty), E[z] <= 0 is
exactly "the ratio is at most max_ratio"; otherwise it is its sentence-averaged version.

The bets follow aGRAPA (ibid., section 5): lambda_i = mu / (var + mu^2) of the earlier z's
(shrunk towards 0 and a variance of 1/4 by one pseudo-sentence), clipped to [0, 0.9] so that one
sentence the new model predicts perfectly (z = -1) cannot end the bet. Deterministic: the
sentences' order is the test set's. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from evalgate.gate.binomial import betainc

TEST_NAME = "betting-nll-ratio"
T_TEST_NAME = "paired-t-token-weighted"  # the test before betting_test (kept for the bench)
_MAX_BET = 0.9
_PRIOR_VAR = 0.25


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
        if any(x < 0 for x in nll):  # an NLL is never negative: the betting test relies on it
            return f"{side}'s per-sentence NLLs are not all non-negative"
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in tok):
            return f"{side}'s per-sentence token counts are not all non-negative integers"
        if sum(tok) == 0:
            return f"{side}'s sentences hold no token"
    if len(new["sentence_nll"]) != len(old["sentence_nll"]):
        return "the two runs scored different numbers of sentences"
    if new["sentence_tokens"] != old["sentence_tokens"]:
        return "the per-sentence token counts differ, so the sentences are not the same"
    return None


def betting_test(
    new_nll: Sequence[float],
    old_nll: Sequence[float],
    tokens: Sequence[int],
    max_ratio: float,
) -> dict[str, Any]:
    """The test of H0 "E[new_i / (old_i + n_i log max_ratio)] <= 1" by betting (module docstring).

    Returns the comparison keys: `test`, `n_sentences`, `nll_increase` (D, nats per token),
    `p_value` (min(1, 1 / the largest wealth)) and `wealth` (that largest wealth, an e-value).
    A sentence whose tolerated NLL is 0 (no token, or an NLL of 0 at max_ratio 1) is no evidence
    either way: it bets nothing.
    """
    new = np.asarray(new_nll, dtype=np.float64)
    old = np.asarray(old_nll, dtype=np.float64)
    tok = np.asarray(tokens, dtype=np.float64)
    if new.shape != old.shape or old.shape != tok.shape:
        raise ValueError("the per-sentence NLLs and token counts differ in length")
    if (new < 0).any() or (old < 0).any() or not (np.isfinite(new).all() and np.isfinite(old).all()):
        raise ValueError("a per-sentence NLL is negative or not finite (pairing_problem refuses those)")
    tolerated = old + tok * math.log(max_ratio)
    live = tolerated > 0
    z = np.where(live, new / np.where(live, tolerated, 1.0) - 1.0, 0.0)
    # the earlier sentences' mean and variance, with one pseudo-sentence at z = 0, variance 1/4
    k = np.arange(len(z), dtype=np.float64)
    s1 = np.concatenate(([0.0], np.cumsum(z)[:-1]))
    s2 = np.concatenate(([0.0], np.cumsum(z * z)[:-1]))
    mean = s1 / (k + 1.0)
    var = np.maximum((_PRIOR_VAR + s2 - (k + 1.0) * mean * mean) / (k + 1.0), 1e-12)
    bet = np.clip(mean / (var + mean * mean), 0.0, _MAX_BET)
    log_wealth = np.cumsum(np.log1p(bet * z))
    best = max(0.0, float(log_wealth.max())) if len(z) else 0.0
    total = float(tok.sum())
    return {
        "test": TEST_NAME,
        "n_sentences": len(z),
        "nll_increase": math.fsum(a - b for a, b in zip(new_nll, old_nll, strict=True)) / total
        if total
        else 0.0,
        "p_value": math.exp(-best),
        "wealth": _exp(best),
    }


def paired_nll_test(
    new_nll: Sequence[float],
    old_nll: Sequence[float],
    tokens: Sequence[int],
    max_ratio: float,
    alpha: float,
) -> dict[str, Any]:
    """The paired t-test this module used before `betting_test`: liberal under left skew (module
    docstring), kept for the bench's comparison (bench/perplexity_size.py) and its tests.

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
        "test": T_TEST_NAME,
        "n_sentences": m,
        "nll_increase": d,
        "p_value": p,
        "ratio_low": _exp(d - half),
        "ratio_high": _exp(d + half),
        "interval_level": 1 - 2 * alpha,
        "regressed": p < alpha,
    }
