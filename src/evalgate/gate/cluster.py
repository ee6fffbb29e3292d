"""Clustered paired test and the within-cluster correlation of flips (`gate.cluster`, issue 14).

The per-slice test (gate/noninferiority.py) treats probes as independent. Probes of one verb (or
one topic of a multiple-choice suite) share part of their noise: a checkpoint that unlearns
"ir" loses several of its forms at once. Then b - c varies more than the trinomial model says,
and the exact test is liberal (docs/gate.md, "Clustered flips"). With `gate.cluster: FIELD`
the unit of the test is the cluster, not the probe.

The test. Per cluster j of a slice, with n_j shared probes of which b_j went right -> wrong and
c_j wrong -> right, and the slice's tolerance d:

    D_j = b_j - c_j - n_j d

The slice's observed drop exceeds the tolerance exactly when sum_j D_j > 0, and under the
boundary of H0 "true drop <= d" every E[D_j] = 0. The statistic is the cluster-robust score
statistic with the null imposed, T = sum D_j / sqrt(sum D_j^2) (a self-normalised sum). Its
p-value comes from the wild cluster bootstrap with Rademacher weights on the restricted
residuals (Cameron, Gelbach & Miller 2008, "Bootstrap-based improvements for inference with
clustered errors", Review of Economics and Statistics 90:414-427): T* = sum e_j D_j /
sqrt(sum D_j^2) with independent signs e_j = +-1. sum D_j^2 does not change under sign flips,
so T* >= T is sum e_j D_j >= sum D_j. As a randomization test this is exact when the D_j are
symmetric about 0 (no tolerance, no change) and asymptotically valid as clusters grow otherwise
(Canay, Romano & Shaikh 2017, "Randomization tests under an approximate symmetry assumption",
Econometrica 85:1013-1030). At a positive tolerance D_j is skewed to the right (mostly -n_j d,
sometimes a large positive value), which makes this upper-tail test conservative rather than
liberal; tests/gate/test_clustered_gate.py checks the size at drop = tolerance by exact
enumeration and by a seeded simulation with correlated flips.

- At most `EXACT_MAX_CLUSTERS` clusters: every one of the 2^G sign vectors is enumerated and
  p = #{e : sum e_j D_j >= sum D_j} / 2^G (the identity counts, so p >= 2^-G).
- More: `DRAWS` sign vectors drawn from SHAKE-256 of the slice key and the field (the same
  inputs give the same bits on every platform and numpy version), p = (1 + #{...}) / (DRAWS + 1),
  which is itself a valid p-value (Phipson & Smyth 2010, "Permutation p-values should never be
  zero", Statistical Applications in Genetics and Molecular Biology 9:39).

A slice whose observed drop is not above the tolerance gets p = 1.0, as in the unclustered test.
With G clusters no p-value is below 2^-G: a slice of few clusters cannot fail the gate, which
is what few clusters honestly allow.

The correlation. `icc_anova` is the one-way ANOVA estimator of the intraclass correlation
(Fleiss 1981, Statistical Methods for Rates and Proportions, 2nd ed., ch. 13; for binary data
Ridout, Demetrio & Firth 1999, "Estimating intraclass correlation for binary data", Biometrics
55:137-148) of each paired probe's signed flip X = +1 (right -> wrong), -1 (wrong -> right),
0: the test's numerator is sum(X - d), so the correlation of X, not of "flipped at all", is the
one that inflates its variance. The design effect is the variance of a sum of exchangeably
correlated values over that of independent ones, 1 + (m - 1) rho with m = sum n_j^2 / N, the
size-weighted mean cluster size (Kish 1965, Survey Sampling, Wiley). Above
`WARN_DESIGN_EFFECT` the unclustered test's variance is understated by more than a fifth; the
warning also needs the ANOVA F test of "no between-cluster variance" below `WARN_LEVEL`.

Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from evalgate.gate.binomial import betainc
from evalgate.gate.stats import p_is

EXACT_MAX_CLUSTERS = 16  # 2^16 = 65,536 sign vectors: enumerated
DRAWS = 9999  # Monte Carlo sign vectors beyond that (p-values on a 1/10,000 grid)
WARN_DESIGN_EFFECT = 1.2
WARN_LEVEL = 0.05  # ... and the between-cluster variance is significant at this level
_CHUNK_CELLS = 1 << 22  # signs per matrix product: 32 MB of float64 whatever the cluster count

# Verb-form probes: fields a cluster may be (docs/gate.md). `verb` is a lemma within a language,
# so its clusters are "language:verb", the per_verb cells of results.json.
VERB_FORM_FIELDS = ("verb", "language", "regularity", "tense", "person", "category", "reason_code", "label")
TEST_EXACT = "sign-flip-exact"
TEST_MONTE_CARLO = "sign-flip-monte-carlo"


def cluster_label(entry: Mapping[str, Any], field: str) -> str:
    """The cluster a per-probe entry belongs to under `field`.

    A multiple-choice item's field is one of its suite's declared dimensions (`slices`); a
    verb-form probe's is a probe field. A probe without the field is a cluster of its own (its
    id), so it is treated exactly as the unclustered test treats every probe. The suite name
    prefixes the label: suites never share a cluster.
    """
    suite = entry.get("suite") or ""
    dims = entry.get("slices")
    if isinstance(dims, Mapping):
        value = dims.get(field)
    else:
        value = entry.get(field)
        if field == "verb" and value is not None:
            value = f"{entry.get('language')}:{value}"
    if value is None or value == "":
        return f"{suite}/#{entry.get('id')}"
    return f"{suite}/{field}={value}"


def cluster_sums(
    flips: Sequence[int], labels: Sequence[Hashable], tolerance: float
) -> tuple[np.ndarray, np.ndarray]:
    """(D_j, n_j) per cluster, in order of first appearance; flips are +1, -1 or 0 per probe."""
    index: dict[Hashable, int] = {}
    for lab in labels:
        index.setdefault(lab, len(index))
    sums = np.zeros(len(index))
    sizes = np.zeros(len(index), dtype=np.int64)
    for x, lab in zip(flips, labels, strict=True):
        j = index[lab]
        sums[j] += x
        sizes[j] += 1
    return sums - sizes * tolerance, sizes


def _signs(seed_key: str, rows: int, cols: int) -> np.ndarray:
    """rows x cols signs +-1 from SHAKE-256(seed_key): deterministic everywhere."""
    nbytes = (rows * cols + 7) // 8
    bits = np.unpackbits(np.frombuffer(hashlib.shake_256(seed_key.encode()).digest(nbytes), dtype=np.uint8))
    return 1.0 - 2.0 * bits[: rows * cols].reshape(rows, cols)


def _all_signs(g: int) -> np.ndarray:
    codes = np.arange(2**g, dtype=np.int64)[:, None]
    return 1.0 - 2.0 * ((codes >> np.arange(g)) & 1)


def signflip_pvalue(d: np.ndarray, seed_key: str, draws: int = DRAWS) -> dict[str, Any]:
    """The wild cluster sign-flip p-value of sum D_j > 0 (module docstring).

    Returns {p_value, cluster_test, n_clusters, cluster_draws, t_cluster}; `t_cluster` is the
    statistic T (None when every D_j is 0).
    """
    d = np.asarray(d, dtype=np.float64)
    g = len(d)
    total = float(math.fsum(d))
    q = float(math.fsum(d * d))
    t = total / math.sqrt(q) if q > 0 else None
    exact = g <= EXACT_MAX_CLUSTERS
    out: dict[str, Any] = {
        "cluster_test": TEST_EXACT if exact else TEST_MONTE_CARLO,
        "n_clusters": g,
        "cluster_draws": 2**g if exact else draws,
        "t_cluster": t,
    }
    # Inclusive of ties up to float noise: counting a near-tie as "at least as large" can only
    # make p larger (never liberal).
    threshold = total - 1e-9 * max(1.0, float(np.abs(d).sum()))
    if not total > 1e-9 * max(1.0, float(np.abs(d).sum())):
        out["p_value"] = 1.0
        return out
    if exact:
        hits = int((_all_signs(g) @ d >= threshold).sum())
        out["p_value"] = hits / 2**g
        return out
    hits = 0
    chunk = max(1, _CHUNK_CELLS // g)
    for start in range(0, draws, chunk):
        rows = min(chunk, draws - start)
        hits += int((_signs(f"{seed_key}#{start}", rows, g) @ d >= threshold).sum())
    out["p_value"] = (1 + hits) / (draws + 1)
    return out


def anova(values: Sequence[float], labels: Sequence[Hashable]) -> tuple[float | None, float | None]:
    """(intraclass correlation, p-value of "no between-cluster variance") of `values` by `labels`.

    The one-way ANOVA estimator (module docstring): (MSB - MSW) / (MSB + (n0 - 1) MSW),
    n0 = (N - sum n_j^2 / N) / (G - 1), and the F test of MSB / MSW on (G - 1, N - G) degrees of
    freedom. Either is None when it is not defined: fewer than two clusters, no within-cluster
    degree of freedom, or no variation (no probe flipped). The estimate can be negative.
    """
    groups: dict[Hashable, list[float]] = {}
    for v, lab in zip(values, labels, strict=True):
        groups.setdefault(lab, []).append(float(v))
    n_total, g = len(values), len(groups)
    if g < 2 or n_total - g < 1:
        return None, None
    grand = math.fsum(values) / n_total
    # each cluster's mean once: recomputed per probe it made this quadratic (73 s at 100,000
    # probes in two clusters); the same numbers
    means = [(xs, math.fsum(xs) / len(xs)) for xs in groups.values()]
    ssb = math.fsum(len(xs) * (mean - grand) ** 2 for xs, mean in means)
    ssw = math.fsum((x - mean) ** 2 for xs, mean in means for x in xs)
    d1, d2 = g - 1, n_total - g
    msb, msw = ssb / d1, ssw / d2
    n0 = (n_total - sum(len(xs) ** 2 for xs in groups.values()) / n_total) / d1
    denom = msb + (n0 - 1) * msw
    icc = (msb - msw) / denom if denom > 0 else None
    p = None
    if msw > 0:
        f = msb / msw
        p = float(betainc(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * f)))  # P(F(d1, d2) >= f)
    return icc, p


def icc_anova(values: Sequence[float], labels: Sequence[Hashable]) -> float | None:
    """The ANOVA intraclass correlation alone (`anova`)."""
    return anova(values, labels)[0]


def weighted_cluster_size(labels: Sequence[Hashable]) -> float:
    """sum n_j^2 / N: the cluster size a randomly chosen probe sits in (the design effect's m)."""
    sizes: dict[Hashable, int] = {}
    for lab in labels:
        sizes[lab] = sizes.get(lab, 0) + 1
    return sum(n * n for n in sizes.values()) / len(labels) if labels else 0.0


def summary(field: str, flips: Sequence[int], labels: Sequence[Hashable], configured: bool) -> dict[str, Any]:
    """results.json `comparison.cluster`: the run's own within-cluster correlation of flips.

    `flips` and `labels` cover every paired probe. `warning` is set when the design effect is
    above WARN_DESIGN_EFFECT and the gate does not cluster; with `gate.cluster` set the test
    already accounts for it.
    """
    icc, p = anova(flips, labels)
    m = weighted_cluster_size(labels)
    deff = None if icc is None else 1.0 + (m - 1.0) * icc
    out: dict[str, Any] = {
        "field": field,
        "clustered": configured,
        "n_clusters": len(set(labels)),
        "n_probes": len(labels),
        "n_flipped": sum(1 for x in flips if x),
        "mean_cluster_size": m,
        "icc": icc,
        "design_effect": deff,
        "icc_p_value": p,
    }
    # Both: a design effect that matters, and evidence that it is not the estimate's own noise
    # (with 40 verbs its standard error is about 0.015, so independent flips alone pass 1.2 in
    # about one run in six; the F test keeps that to about one in twenty; docs/gate.md).
    if deff is not None and deff > WARN_DESIGN_EFFECT and p is not None and p < WARN_LEVEL and not configured:
        out["warning"] = (
            f"flips are correlated within {field} (intraclass correlation {icc:.3f}, design effect "
            f"{deff:.2f} > {WARN_DESIGN_EFFECT}, F test p {p_is(p, 2)}): the per-probe test understates "
            f"the noise and can raise false alarms; set `gate.cluster: {field}` to test whole clusters "
            "(docs/gate.md)"
        )
    return out
