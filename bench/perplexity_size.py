"""Does the perplexity test hold its size when per-sentence changes are skewed? (issue 25 §4)

Simulates pairs of runs on the same held-out sentences whose true perplexity ratio is exactly
`gate.perplexity_max_ratio` (x1.10): each sentence has 5-40 tokens, an old per-token NLL uniform
in [2, 4] nats, and a per-token change of log(1.10) plus noise of mean 0:

- left-skewed: minus a lognormal(0, sigma) excess (a few sentences the new model does much better
  on), truncated where the new NLL would fall below 0 (a real NLL never does) and centred on the
  truncated mean, so the true ratio stays exactly x1.10;
- symmetric: normal noise; right-skewed: plus the lognormal excess.

Prints, per case, the share of runs each test fails at alpha 0.05 (the size; at or below alpha is
what a valid test must show): the paired t-test the gate used before (gate/perplexity_test.py
`paired_nll_test`), a sign-flip permutation test of the per-sentence differences against the
tolerated ratio (the issue's suggestion), and the betting test the gate uses now
(`betting_test`). Then the power of the old and the new test at true ratios above the limit.

    .venv/bin/python bench/perplexity_size.py [--seed 25] [--reps 1000] [--flips 999]

Prints tables only (no timings); the same seed prints the same numbers.
"""

from __future__ import annotations

import argparse
import math
from statistics import NormalDist

import numpy as np
from tabulate import tabulate

from evalgate.gate.perplexity_test import betting_test, paired_nll_test

MAX_RATIO = 1.10
ALPHA = 0.05
SCALE = 0.05  # nats per token per unit of noise: the new NLL stays positive (see CAP)
CAP = 40.0  # lognormal draws above it are redrawn: 2 + log(1.1) - SCALE * CAP > 0


def _truncated_lognormal(rng: np.random.Generator, sigma: float, m: int) -> tuple[np.ndarray, float]:
    draws = rng.lognormal(0.0, sigma, m)
    while (draws > CAP).any():
        draws[draws > CAP] = rng.lognormal(0.0, sigma, int((draws > CAP).sum()))
    nd = NormalDist()
    mean = math.exp(sigma**2 / 2) * nd.cdf((math.log(CAP) - sigma**2) / sigma) / nd.cdf(math.log(CAP) / sigma)
    return draws, mean


def sentences(
    rng: np.random.Generator, m: int, shape: str, sigma: float, ratio: float = MAX_RATIO
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """new NLL, old NLL, tokens of m sentences with true perplexity ratio `ratio`."""
    tok = rng.integers(5, 41, m)
    per = rng.uniform(2.0, 4.0, m)
    if shape == "normal":
        noise = rng.normal(0.0, sigma, m)
    else:
        draws, mean = _truncated_lognormal(rng, sigma, m)
        noise = (draws - mean) * (-1.0 if shape == "left" else 1.0)
    change = math.log(ratio) + SCALE * noise
    return tok * (per + change), tok * per, tok


def _t_fails(new: np.ndarray, old: np.ndarray, tok: np.ndarray) -> bool:
    return paired_nll_test(list(new), list(old), [int(n) for n in tok], MAX_RATIO, ALPHA)["regressed"]


def sign_flip_p(
    new: np.ndarray, old: np.ndarray, tok: np.ndarray, rng: np.random.Generator, flips: int
) -> float:
    """Monte Carlo sign-flip p-value of sum(new - old - tok log max_ratio) > 0."""
    resid = new - old - tok * math.log(MAX_RATIO)
    observed = resid.sum()
    signs = rng.choice(np.array([-1.0, 1.0]), size=(flips, len(resid)))
    return (1 + int(((signs @ resid) >= observed).sum())) / (1 + flips)


def size_rows(rng: np.random.Generator, reps: int, flips: int) -> list[list]:
    rows = []
    for shape, sigma in (("left", 1.0), ("left", 0.5), ("normal", 1.0), ("right", 1.0)):
        for m in (30, 200, 2000):
            t = s = b = 0
            for _ in range(reps):
                new, old, tok = sentences(rng, m, shape, sigma)
                t += _t_fails(new, old, tok)
                s += sign_flip_p(new, old, tok, rng, flips) < ALPHA
                b += betting_test(new, old, tok, MAX_RATIO)["p_value"] < ALPHA
            shares = (f"{x / reps:.3f}" for x in (t, s, b))
            rows.append([f"{shape} (sigma {sigma})", m, *shares])
    return rows


def power_rows(rng: np.random.Generator, reps: int) -> list[list]:
    rows = []
    for m in (30, 100, 400, 2000):
        cells: list = [m]
        for ratio in (1.15, 1.2, 1.5, 2.0):
            t = b = 0
            for _ in range(reps):
                new, old, tok = sentences(rng, m, "normal", 1.0, ratio)
                t += _t_fails(new, old, tok)
                b += betting_test(new, old, tok, MAX_RATIO)["p_value"] < ALPHA
            cells.append(f"{t / reps:.2f} / {b / reps:.2f}")
        rows.append(cells)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--reps", type=int, default=1000, help="runs per cell")
    ap.add_argument("--flips", type=int, default=999, help="sign flips per sign-flip p-value")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print(
        f"M. Perplexity test at a true ratio exactly the limit x{MAX_RATIO} ({args.reps} runs per cell, "
        f"alpha {ALPHA}): share of runs that fail (the size; valid means at most {ALPHA} up to noise, "
        f"sd {math.sqrt(ALPHA * (1 - ALPHA) / args.reps):.3f})"
    )
    print(
        tabulate(
            size_rows(rng, args.reps, args.flips),
            headers=["per-sentence change", "sentences", "paired t (old)", "sign flips", "betting (gate)"],
            tablefmt="github",
            disable_numparse=True,
        )
    )
    power_reps = max(50, args.reps // 5)
    print(
        f"\nN. Power, symmetric noise ({power_reps} runs per cell): share of runs failing at a true ratio "
        "above the limit, paired t (old) / betting (gate)"
    )
    print(
        tabulate(
            power_rows(rng, power_reps),
            headers=["sentences", "x1.15", "x1.20", "x1.50", "x2.00"],
            tablefmt="github",
            disable_numparse=True,
        )
    )


if __name__ == "__main__":
    main()
