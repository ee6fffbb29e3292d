"""How often does the gate cry wolf, and how often does it catch a real drop? (issue 4, point 8)

Simulates pairs of runs on the same probes and reports, for both gate rules:

A. one slice on its own (no multiple testing): the false-alarm rate when nothing changed and the
   detection rate for 5-, 10- and 20-point drops, on slices of 30, 60 and 120 probes, next to the
   exact minimum detectable effect of the rule's own test at alpha (the paired rule's is
   gate/noninferiority.py's `mde`, the shipped test; the wilson rule's gate/stats.py's `mde_wilson`);
B. the real gate: `gate.compare.compare` on a 240-probe set with 15 gated slices (overall,
   language x2, regularity x2, tense x5, person x3, category x2), Holm across the gated ones, the
   drop confined to the Spanish probes (30, 60 or 120 of them); every slice of at least `min_n`
   probes is gated, those whose MDE is above `mde_max` marked low power;
G. (issue 14) family-wise false alarms of the 15 gated slices under Holm and under Westfall-Young
   (gate/westfall_young.py), with no change and with a true drop equal to the tolerance, at 5-40%
   disagreement, on probe sets whose language slices hold 60, 120, 600 and 2,000 probes;
H. the power for a 10-point drop on 60 probes at 5% disagreement, alone and inside the 15-slice
   gate, under both adjustments, and at tolerance 0 also under Westfall-Young's sign-flip null.

I. (issue 14, point 2) the whole gate on the shipped verb grid (40 verbs x 15 probes) when flips
   are correlated within a verb: family-wise false alarms with no change and at a true drop equal
   to the tolerance, probe by probe (today's test) and with `gate.cluster: verb`.
J. family-wise false alarms at tolerance 0 with no change, Holm vs Westfall-Young on the boundary
   draws vs Westfall-Young under the sign-flip null, at 5-40% disagreement and 60-2,000 probes.
K. (issue 25) `evalgate power`'s figures against simulation: the shipped test run on draws at the
   MDE gate/power.py reports (baseline outcomes fixed, or drawn anew when there is no baseline),
   and the whole gate (`compare`, Holm over a 4-subject suite of 35 items each) at the MDE of one
   subject: the MDE is the first Holm step's, so the gate catches the drop at least that often.

"Nothing changed" is not "identical outcomes": two equally good checkpoints disagree on some
probes. Each probe the baseline got right turns wrong with probability (churn/2)/p0, each wrong
one turns right with (churn/2)/(1-p0), so `churn` of the probes flip, half each way, and the
expected accuracy is unchanged. A drop of d adds d/p0 to the right->wrong probability.

    .venv/bin/python bench/gate_power.py [--seed 4] [--reps 2000] [--gate-reps 200] [--wy-reps 2000]
    .venv/bin/python bench/gate_power.py --quick    # tables E-K, G and J on 60 and 120 probes only

Prints tables only (no timings); the same seed prints the same numbers.
"""

from __future__ import annotations

import argparse
import dataclasses
from functools import cache

import numpy as np
from tabulate import tabulate

from evalgate.config import GateRules, default_config_dict
from evalgate.gate import noninferiority, power, westfall_young
from evalgate.gate.binomial import _lgamma
from evalgate.gate.compare import compare
from evalgate.gate.slices import aggregate_slices, slice_keys
from evalgate.gate.stats import mcnemar_rule_power, mde_wilson, wilson_interval

SIZES = (30, 60, 120)
DROPS = (0.0, 0.05, 0.10, 0.20)
CHURNS = (0.05, 0.10)
P0 = 0.75  # baseline accuracy of the slice
N_TOTAL = 240


def default_rules(**overrides) -> GateRules:
    gate = default_config_dict()["gate"]
    return dataclasses.replace(GateRules(**{**gate, "slices": tuple(gate["slices"])}), **overrides)


@cache
def _flagged(b: int, c: int, n: int, tolerance: float, alpha: float) -> bool:
    """The paired rule on one slice: the shipped test's p-value below alpha (gate/compare.py; a
    p-value below 1 already means a drop above the tolerance)."""
    return noninferiority.pvalue(b, c, n, tolerance) < alpha


@cache
def _whigh(k: int, n: int, z: float) -> float:
    return wilson_interval(k, n, z)[1]


def redraw(rng: np.random.Generator, base: np.ndarray, churn: float, drop: np.ndarray) -> np.ndarray:
    """New outcomes given baseline outcomes (bool array), churn and a per-probe drop."""
    to_wrong = np.minimum(1.0, (churn / 2 + drop) / P0)
    to_right = (churn / 2) / (1 - P0)
    u = rng.random(base.shape)
    return np.where(base, u >= to_wrong, u < to_right)


def single_slice(rng: np.random.Generator, rules: GateRules, reps: int) -> list[list]:
    rows = []
    for rule in ("paired", "wilson"):
        for churn in CHURNS:
            for n in SIZES:
                if rule == "paired":
                    mde = noninferiority.mde(n, rules.tolerance, rules.alpha, churn)
                else:
                    mde = mde_wilson(n, P0, rules.z, rules.tolerance)
                row = [rule, f"{churn:.0%}", n, "-" if mde is None else f"{100 * mde:.1f}"]
                for d in DROPS:
                    base = rng.random((reps, n)) < P0
                    new = redraw(rng, base, churn, np.full((reps, n), d))
                    b = (base & ~new).sum(axis=1)
                    c = (~base & new).sum(axis=1)
                    k0 = base.sum(axis=1)
                    hits = 0
                    for bi, ci, ki in zip(b.tolist(), c.tolist(), k0.tolist(), strict=True):
                        if rule == "paired":
                            hits += _flagged(bi, ci, n, rules.tolerance, rules.alpha)
                        else:
                            hits += ki / n > _whigh(ki - bi + ci, n, rules.z) + rules.tolerance
                    row.append(f"{hits / reps:.3f}")
                rows.append(row)
    return rows


def _probe_set(rng: np.random.Generator, n_es: int, n_total: int = N_TOTAL) -> list[dict]:
    langs = ["es"] * n_es + ["en"] * (n_total - n_es)
    return [
        {
            "id": f"p{i:03d}",
            "status": "scored",
            "language": lang,
            "verb": "v",
            "regularity": ("regular", "irregular")[int(rng.integers(2))],
            "tense": ("infinitive", "present_simple", "past_simple", "past_participle", "future")[
                int(rng.integers(5))
            ],
            "person": ("1sg", "2sg", "3sg")[int(rng.integers(3))],
            "category": "adversarial" if rng.random() < 0.2 else "core",
            "label": "correct",
            "content_hash": f"{i:064x}",
        }
        for i, lang in enumerate(langs)
    ]


def _results(probes: list[dict], correct: np.ndarray, slices: dict) -> dict:
    entries = [{**p, "correct": bool(ok)} for p, ok in zip(probes, correct.tolist(), strict=True)]
    manifest = {k: "x" for k in ("method", "normalization", "template_sha256", "dtype", "scoring_version")}
    return {"manifest": manifest, "probes": entries, "slices": slices, "perplexity": None}


def whole_gate(rng: np.random.Generator, reps: int, churn: float) -> list[list]:
    rows = []
    for rule in ("paired", "wilson"):
        rules = default_rules(rule=rule)
        for n_es in SIZES:
            probes = _probe_set(rng, n_es)
            slices = aggregate_slices([{**p, "correct": True} for p in probes], rules.z)
            is_es = np.array([p["language"] == "es" for p in probes])
            row = [rule, n_es]
            gated = es_low = 0
            for d in DROPS:
                fails = 0
                for _ in range(reps):
                    base = rng.random(N_TOTAL) < P0
                    new = redraw(rng, base, churn, np.where(is_es, d, 0.0))
                    cmp = compare(_results(probes, new, slices), _results(probes, base, slices), rules, "sim")
                    fails += bool(cmp["regressed"])
                    if d == 0.0:
                        gated += sum(r["gated"] for r in cmp["slices"].values())
                        es_low += cmp["slices"]["language:es"]["underpowered"]
                row.append(f"{fails / reps:.3f}")
            row[2:2] = [f"{gated / reps:.1f}", f"{es_low / reps:.0%}"]
            rows.append(row)
    return rows


def _gate_false_alarms(rng: np.random.Generator, reps: int, rule: str, churn: float) -> float:
    rules = default_rules(rule=rule, mde_max=1.0)
    probes = _probe_set(rng, 60)
    slices = aggregate_slices([{**p, "correct": True} for p in probes], rules.z)
    fails = 0
    for _ in range(reps):
        base = rng.random(N_TOTAL) < P0
        new = redraw(rng, base, churn, np.zeros(N_TOTAL))
        fails += bool(
            compare(_results(probes, new, slices), _results(probes, base, slices), rules, "sim")["regressed"]
        )
    return fails / reps


def false_alarms_by_churn(rng: np.random.Generator, reps: int) -> list[list]:
    """Family-wise false alarms of the whole gate (every slice gated) as checkpoints disagree more."""
    churns = (0.05, 0.10, 0.20, 0.40)
    return [
        [rule, *(f"{_gate_false_alarms(rng, reps, rule, ch):.3f}" for ch in churns)]
        for rule in ("paired", "wilson")
    ]


def _smallest_n(mde_at, target: float = 0.10, hi: int = 4096) -> int | None:
    """Smallest slice size whose MDE is at most `target` (the MDE shrinks as n grows)."""
    if (mde_at(hi) or 1.0) > target:
        return None
    lo = 1
    while lo < hi:
        mid = (lo + hi) // 2
        if (mde_at(mid) or 1.0) <= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


def sizes_needed(rules: GateRules) -> list[list]:
    """Probes a slice needs before a 10-point drop is caught with power 0.8 (exact MDEs of the
    shipped test, gate/noninferiority.py; docs/gate.md table D, checked by
    tests/gate/test_gate_doc_power_figures.py)."""
    rows = []
    for churn in (0.0, *CHURNS):
        alone = _smallest_n(lambda n, ch=churn: noninferiority.mde(n, rules.tolerance, rules.alpha, ch))
        holm_worst = _smallest_n(
            lambda n, ch=churn: noninferiority.mde(n, rules.tolerance, rules.alpha / 15, ch)
        )
        rows.append(["paired", f"{churn:.0%}", alone, holm_worst])
    rows.append(["wilson", "any", _smallest_n(lambda n: mde_wilson(n, P0, rules.z, rules.tolerance)), "-"])
    return rows


def fixed_baseline_draws(
    rng: np.random.Generator, n: int, correct: int, drop: float, churn: float, reps: int
) -> tuple[np.ndarray, np.ndarray]:
    """(b, c) of `reps` new runs against one fixed baseline (its first `correct` of n items right):
    gate/power.py's model, h = churn/2 capped by the slice's accuracy, the drop on the right ones."""
    a = correct / n
    h = power.background(n, correct, churn)
    base = np.arange(n) < correct
    to_wrong = min(1.0, (h + drop) / a)
    to_right = h / (1.0 - a) if correct < n else 0.0
    u = rng.random((reps, n))
    new = np.where(base, u >= to_wrong, u < to_right)
    return (base & ~new).sum(axis=1), (~base & new).sum(axis=1)


def simulated_power(
    rng: np.random.Generator,
    n: int,
    correct: int | None,
    tolerance: float,
    level: float,
    drop: float,
    churn: float,
    reps: int,
) -> float:
    """Share of `reps` draws the shipped test flags at `level` (its p-value below it, as a slice at
    the first Holm step fails). `correct` None: no baseline, its outcomes drawn anew every time
    (accuracy P0, `redraw`), the trinomial of noninferiority.power."""
    if correct is None:
        base = rng.random((reps, n)) < P0
        new = redraw(rng, base, churn, np.full((reps, n), drop))
        b, c = (base & ~new).sum(axis=1), (~base & new).sum(axis=1)
    else:
        b, c = fixed_baseline_draws(rng, n, correct, drop, churn, reps)
    hits = sum(_flagged(bi, ci, n, tolerance, level) for bi, ci in zip(b.tolist(), c.tolist(), strict=True))
    return hits / reps


SUBJECTS = ("biology", "chemistry", "geography", "history")


def _suite_run(correct: np.ndarray, per: int) -> dict:
    """A results.json of a multiple-choice suite, `per` items per subject, for `compare`."""
    entries = [
        {
            "id": f"q{i:04d}",
            "status": "scored",
            "correct": bool(ok),
            "slices": {"subject": SUBJECTS[i // per]},
            "content_hash": f"{i:064x}",
        }
        for i, ok in enumerate(correct.tolist())
    ]
    manifest = {k: "x" for k in ("method", "normalization", "template_sha256", "dtype", "scoring_version")}
    return {
        "manifest": manifest,
        "probes": entries,
        "slices": aggregate_slices(entries, 1.96),
        "perplexity": None,
    }


def gate_power_at_mde(
    rng: np.random.Generator, rules: GateRules, base: np.ndarray, per: int, churn: float, reps: int
) -> tuple[float, float, float]:
    """(MDE of `geography` as gate/power.py reports it, its exact power alone at the first Holm
    step, the share of `reps` runs of the whole gate (`compare`, Holm over overall + 4 subjects)
    that fail `subject:geography`), the drop confined to geography at that MDE and `churn` of the
    items flipping with the fixed baseline `base`."""
    counts = power.slice_counts(_suite_run(base, per)["probes"], rules, {
        f"q{i:04d}": {"status": "scored", "correct": bool(ok)} for i, ok in enumerate(base.tolist())
    })  # fmt: skip
    table = power.power_table(counts, rules, disagreements=(churn,), needed=False)
    row = next(r for r in table["slices"] if r["slice"] == "subject:geography")
    mde = row["at"][0]["mde"]
    geo = SUBJECTS.index("geography")
    k = int(base[geo * per : (geo + 1) * per].sum())
    exact = power.power_given_baseline(per, k, rules.tolerance, table["level"], mde, churn)
    drop = np.zeros(len(base))
    drop[geo * per : (geo + 1) * per] = mde
    old = _suite_run(base, per)
    fails = 0
    for _ in range(reps):
        new = np.empty(len(base), dtype=bool)
        for s in range(len(SUBJECTS)):
            part = slice(s * per, (s + 1) * per)
            right = int(base[part].sum())
            b, c = fixed_baseline_draws(rng, per, right, float(drop[part][0]), churn, 1)
            # b of the right ones turn wrong, c of the wrong ones right (which ones does not matter)
            items = np.arange(per) < right
            out = items.copy()
            out[: int(b[0])] = False
            out[right : right + int(c[0])] = True
            new[part] = out
        cmp = compare(_suite_run(new, per), old, rules, "sim")
        fails += "subject:geography" in cmp["regressed"]
    return mde, exact, fails / reps


def mde_against_simulation(
    rng: np.random.Generator, rules: GateRules, reps: int, gate_reps: int
) -> list[list]:
    """Table K: `evalgate power`'s MDEs and items needed, each checked by drawing new runs there."""
    rows = []
    level = rules.alpha / 5  # Holm's first step over overall + 4 subjects
    setting = power.Setting("paired", level, rules.z)
    for n, correct, churn in ((35, None, 0.10), (35, 23, 0.10), (35, 34, 0.10), (120, 90, 0.05)):
        if correct is None:
            mde = noninferiority.mde(n, rules.tolerance, level, churn)
            exact = noninferiority.power(n, rules.tolerance, level, mde, churn)
        else:
            mde = power.mde_given_baseline(n, correct, rules.tolerance, level, churn)
            exact = power.power_given_baseline(n, correct, rules.tolerance, level, mde, churn)
        sim = simulated_power(rng, n, correct, rules.tolerance, level, mde, churn, reps)
        accuracy = None if correct is None else correct / n
        needed = power.items_needed(accuracy, rules.tolerance, churn, 0.10, setting)
        k = None if correct is None else int(accuracy * needed + 0.5)
        at_needed = simulated_power(rng, needed, k, rules.tolerance, level, 0.10, churn, reps)
        base = "-" if correct is None else f"{correct}/{n}"
        rows.append(
            [
                n,
                base,
                f"{churn:.0%}",
                f"{100 * mde:.1f}",
                f"{exact:.3f}",
                f"{sim:.3f}",
                needed,
                f"{at_needed:.3f}",
            ]
        )
    base = np.zeros(4 * 35, dtype=bool)
    for s in range(4):
        base[s * 35 : s * 35 + 23] = True  # 65.7% in every subject, as issue 25's geography
    mde, exact, gate = gate_power_at_mde(rng, dataclasses.replace(rules, slices=("overall", "subject")), base,
                                         35, 0.10, gate_reps)  # fmt: skip
    rows.append(
        [35, "23/35, in the gate", "10%", f"{100 * mde:.1f}", f"{exact:.3f}", f"{gate:.3f}", "-", "-"]
    )
    return rows


def floor_false_fail(
    n: int, accuracy: float, tolerance: float, chance: float, z: float
) -> tuple[float, float]:
    """(chance an equally good checkpoint fails init's floor, chance the baseline gets no floor),
    exactly: baseline and new run both Bin(n, accuracy) right answers, the floor gate/power.py's
    `suggested_floor` of the baseline's (a run fails it below the floor)."""
    pmf = np.exp([_log_binom(n, k, accuracy) for k in range(n + 1)])
    cdf = np.cumsum(pmf)
    fails = none = 0.0
    for k_base in range(n + 1):
        floor = power.suggested_floor(n, k_base, tolerance, chance, z)
        if floor is None:
            none += pmf[k_base]
            continue
        below = int(np.ceil(floor * n - 1e-9)) - 1  # the most right answers still under the floor
        fails += pmf[k_base] * (cdf[below] if below >= 0 else 0.0)
    return float(fails), float(none)


def _log_binom(n: int, k: int, p: float) -> float:
    if p in (0.0, 1.0):
        return 0.0 if k == (n if p == 1.0 else 0) else -np.inf
    return (
        float(_lgamma(n + 1.0) - _lgamma(k + 1.0) - _lgamma(n - k + 1.0))
        + k * np.log(p)
        + (n - k) * np.log1p(-p)
    )


FLOOR_SIZES = (10, 35, 50, 100)
FLOOR_ACCURACIES = (0.5, 0.66, 0.8, 0.9, 0.97)


def floor_false_fails(rules: GateRules) -> list[list]:
    """Table L: per floored slice (4 choices), the chance an equally good checkpoint fails init's floor."""
    rows = []
    for n in FLOOR_SIZES:
        cells = [floor_false_fail(n, p, rules.tolerance, 0.25, rules.z) for p in FLOOR_ACCURACIES]
        rows.append(
            [n, *(f"{f:.3f}" + (f" ({none:.0%} none)" if none >= 0.005 else "") for f, none in cells)]
        )
    return rows


NI_SIZES = (60, 120, 600, 2000)
NI_DISAGREEMENTS = (0.05, 0.10, 0.20, 0.40)


def size_at_tolerance(rules: GateRules, sizes=NI_SIZES) -> list[list]:
    """Exact chance one slice is flagged when its true drop equals the tolerance (no simulation).

    The old rule (McNemar "no change" + observed drop > tolerance) against the gate's
    non-inferiority test (gate/noninferiority.py); background disagreement h, so p_c = h/2 and
    p_b = h/2 + tolerance.
    """
    rows = []
    for h in NI_DISAGREEMENTS:
        for n in sizes:
            old = mcnemar_rule_power(n, rules.tolerance, rules.alpha, rules.tolerance, h)
            new = noninferiority.power(n, rules.tolerance, rules.alpha, rules.tolerance, h)
            rows.append([f"{h:.0%}", n, f"{old:.3f}", f"{new:.3f}"])
    return rows


def np_ceiling(
    n: int, delta: float, level: float, drop: float, background: float, points: int = 400
) -> float:
    """The most any level-`level` test of H0 "drop <= delta" on (b, c) can catch `drop` with.

    Neyman-Pearson: against one null point, the most powerful test (randomized) rejects the
    outcomes of largest likelihood ratio first until the null probability reaches `level`; a
    test of the composite null is a test of each of its points, so its power is at most the
    smallest of those bounds. The null points searched are the boundary p_b - p_c = delta at
    `points` disagreements s (the least favourable ones lie there). The alternative is the MDE
    model of gate/noninferiority.py: p_c = background / 2, p_b = p_c + drop.
    """
    b, c = (a.ravel() for a in np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"))
    keep = b + c <= n
    b, c = b[keep].astype(float), c[keep].astype(float)
    a = n - b - c
    log_coef = _lgamma(n + 1.0) - _lgamma(b + 1.0) - _lgamma(c + 1.0) - _lgamma(a + 1.0)

    def log_pmf(p_b: float, p_c: float) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = [
                np.where(k > 0, k * np.log(p), 0.0) for k, p in ((b, p_b), (c, p_c), (a, 1.0 - p_b - p_c))
            ]
        return log_coef + terms[0] + terms[1] + terms[2]

    p_c1 = background / 2.0
    alt = log_pmf(p_c1 + drop, p_c1)
    best = 1.0
    for s in delta + (1.0 - delta) * np.linspace(0.0, 1.0, points + 1)[1:-1] ** 2:
        null = log_pmf((s + delta) / 2.0, (s - delta) / 2.0)
        order = np.argsort(null - alt, kind="stable")  # largest ratio alt/null first
        p0, p1 = np.exp(null[order]), np.exp(alt[order])
        cum = np.cumsum(p0)
        full = int(np.searchsorted(cum, level, side="right"))  # outcomes wholly inside
        power = float(p1[:full].sum())
        if full < len(p0):  # randomize on the next outcome to spend the level exactly
            power += p1[full] * (level - (cum[full - 1] if full else 0.0)) / p0[full]
        best = min(best, power)
    return best


def power_targets(rules: GateRules) -> list[list]:
    """A 10-point drop on 60 probes at 5% disagreement: alone and at the 15-slice first Holm step.

    Beside each figure, the Neyman-Pearson ceiling (`np_ceiling`) under the gate's null and
    under the "no change" null the issue's target was set with.
    """
    rows = []
    for label, level, target in (
        ("alone (alpha)", rules.alpha, 0.62),
        ("in the gate (alpha/15)", rules.alpha / 15, 0.25),
    ):
        old = mcnemar_rule_power(60, 0.10, level, rules.tolerance, 0.05)
        new = noninferiority.power(60, rules.tolerance, level, 0.10, 0.05)
        ceiling = np_ceiling(60, rules.tolerance, level, 0.10, 0.05)
        ceiling_no_change = np_ceiling(60, 0.0, level, 0.10, 0.05)
        rows.append([label, f"{old:.3f}", f"{new:.3f}", target, f"{ceiling:.3f}", f"{ceiling_no_change:.3f}"])
    return rows


# --- multiplicity: Holm against Westfall-Young (gate/westfall_young.py, docs/gate.md) ---------

WY_SIZES = (60, 120, 600, 2000)


class _Family:
    """The 15 gated slices of a probe set and the joint null Westfall-Young draws for them.

    Each simulated run draws every probe's change at once (right -> wrong with p_b, wrong -> right
    with p_c) and reads every slice's p-value from the same exact table the adjustment uses
    (gate/westfall_young.py; within 1% of the marginal p-value, never above it, so both methods
    are judged a hair liberally here).
    """

    def __init__(self, probes: list[dict], rules: GateRules):
        families = set(rules.slices)
        members: dict[str, list[int]] = {}
        for i, p in enumerate(probes):
            for key in slice_keys({**p, "correct": True}):
                if key.partition(":")[0] in families:
                    members.setdefault(key, []).append(i)
        self.keys = sorted(k for k, ids in members.items() if len(ids) >= rules.min_n)
        self.incidence = np.zeros((len(probes), len(self.keys)), dtype=np.float32)
        for k, key in enumerate(self.keys):
            self.incidence[members[key], k] = 1.0
        self.sizes = [len(members[k]) for k in self.keys]
        self.tol, self.alpha = rules.tolerance, rules.alpha
        self.tables = [westfall_young._table(n, self.tol) for n in self.sizes]
        struct = tuple(tuple(members[k]) for k in self.keys)
        self.null = westfall_young._null(struct, (self.tol,) * len(self.keys), len(probes))

    def pvalues(self, rng: np.random.Generator, reps: int, p_b: np.ndarray, p_c: float) -> np.ndarray:
        u = rng.random((reps, self.incidence.shape[0]))
        b = np.rint((u < p_b).astype(np.float32) @ self.incidence).astype(np.int64)
        c = np.rint(((u >= p_b) & (u < p_b + p_c)).astype(np.float32) @ self.incidence).astype(np.int64)
        return np.stack([t(b[:, k], c[:, k]) for k, t in enumerate(self.tables)], axis=1)

    def any_rejected(self, g: np.ndarray) -> tuple[float, float]:
        """Family-wise rejection rate (the first step decides it) under Holm and Westfall-Young."""
        m, least = g.shape[1], g.min(axis=1)
        holm_first = np.minimum(1.0, m * least)
        wy_first = np.minimum(np.maximum(self.null.first_step(least), least), holm_first)
        return float((holm_first < self.alpha).mean()), float((wy_first < self.alpha).mean())

    def rejected(self, g: np.ndarray, key: str) -> tuple[float, float]:
        """How often slice `key` is rejected by the whole step-down, under Holm and Westfall-Young."""
        k = self.keys.index(key)
        hits_holm = hits_wy = 0
        m = g.shape[1]
        for row in g:
            order = sorted(range(m), key=lambda j: (row[j], self.keys[j]))
            raw = row[order]
            holm_adj = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * raw))
            wy_adj = np.maximum.accumulate(np.maximum(self.null.tail(order, raw), raw))
            wy_adj = np.minimum(wy_adj, holm_adj)
            pos = order.index(k)
            hits_holm += holm_adj[pos] < self.alpha
            hits_wy += wy_adj[pos] < self.alpha
        return hits_holm / len(g), hits_wy / len(g)

    def flip_runs(self, rng: np.random.Generator, reps: int, p_b: np.ndarray, p_c: float) -> list[dict]:
        """Simulated runs adjusted by Westfall-Young under the sign-flip null (every slice at
        tolerance 0, gate/westfall_young.py `_flip_adjust`): one {slice: adjusted p} per run."""
        ids = [f"p{i}" for i in range(self.incidence.shape[0])]
        members = {k: [ids[i] for i in np.flatnonzero(self.incidence[:, j])] for j, k in enumerate(self.keys)}
        zero = dict.fromkeys(self.keys, 0.0)
        runs = []
        for _ in range(reps):
            u = rng.random(len(ids))
            change = np.where(u < p_b, 1, np.where(u < p_b + p_c, -1, 0))
            b = np.rint((change == 1).astype(np.float32) @ self.incidence).astype(np.int64)
            c = np.rint((change == -1).astype(np.float32) @ self.incidence).astype(np.int64)
            raw = {
                k: float(t(b[j], c[j])) for j, (k, t) in enumerate(zip(self.keys, self.tables, strict=True))
            }
            counts = {k: (int(b[j]), int(c[j])) for j, k in enumerate(self.keys)}
            flips = dict(zip(ids, change.tolist(), strict=True))
            runs.append(westfall_young.adjust(raw, members, counts, zero, flips))
        return runs

    def first_level(self) -> float:
        """The level a slice faces at the first step: the largest t with sup_s P(min p <= t) <= alpha."""
        lo, hi = self.alpha / len(self.keys), self.alpha
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.null.first_step(np.array([mid]))[0] <= self.alpha else (lo, mid)
        return lo


def multiplicity_size(rng: np.random.Generator, rules: GateRules, reps: int, sizes=WY_SIZES) -> list[list]:
    """Family-wise false alarms of the 15 gated slices, no change and a true drop equal to the
    tolerance on every probe; the language slices hold n probes each (2n probes in all)."""
    rows = []
    for n in sizes:
        fam = _Family(_probe_set(rng, n, 2 * n), rules)
        for h in NI_DISAGREEMENTS:
            row = [n, 2 * n, f"{h:.0%}"]
            for drop in (0.0, rules.tolerance):
                p_b = np.full(2 * n, h / 2 + drop)
                holm_rate, wy_rate = fam.any_rejected(fam.pvalues(rng, reps, p_b, h / 2))
                row += [f"{holm_rate:.3f}", f"{wy_rate:.3f}"]
            rows.append(row)
    return rows


def flip_size(rng: np.random.Generator, rules: GateRules, reps: int, sizes=WY_SIZES) -> list[list]:
    """Family-wise false alarms at tolerance 0 with no change: Holm, Westfall-Young on the
    boundary draws, and Westfall-Young under the sign-flip null (which needs tolerance 0)."""
    zero = dataclasses.replace(rules, tolerance=0.0)
    rows = []
    for n in sizes:
        fam = _Family(_probe_set(rng, n, 2 * n), zero)
        for h in NI_DISAGREEMENTS:
            p_b = np.full(2 * n, h / 2)
            holm_rate, boundary_rate = fam.any_rejected(fam.pvalues(rng, reps, p_b, h / 2))
            runs = fam.flip_runs(rng, reps, p_b, h / 2)
            flip_rate = float(np.mean([min(r.values()) < rules.alpha for r in runs]))
            rows.append(
                [n, 2 * n, f"{h:.0%}", f"{holm_rate:.3f}", f"{boundary_rate:.3f}", f"{flip_rate:.3f}"]
            )
    return rows


def multiplicity_power(rng: np.random.Generator, rules: GateRules, reps: int) -> tuple[list[list], float]:
    """A 10-point drop on the 60 Spanish probes at 5% disagreement: alone and in the 15-slice gate."""
    alone = noninferiority.power(60, rules.tolerance, rules.alpha, 0.10, 0.05)
    probes = _probe_set(rng, 60)
    fam = _Family(probes, rules)
    is_es = np.array([p["language"] == "es" for p in probes])
    p_b = np.where(is_es, 0.025 + 0.10, 0.025)
    g = fam.pvalues(rng, reps, p_b, 0.025)
    holm_in, wy_in = fam.rejected(g, "language:es")
    # the sign-flip null exists only at tolerance 0; a family of one is its own exact test
    flip_alone, flip_in = "n/a (tolerance > 0)", "n/a (tolerance > 0)"
    if rules.tolerance == 0:
        runs = fam.flip_runs(rng, reps, p_b, 0.025)
        flip_alone = f"{alone:.3f}"
        flip_in = f"{np.mean([r['language:es'] < rules.alpha for r in runs]):.3f}"
    level = fam.first_level()
    ceiling_alone = np_ceiling(60, rules.tolerance, rules.alpha, 0.10, 0.05)
    # Inside the gate: the single-test ceiling at the level the slice faces at the first step.
    ceiling_in = np_ceiling(60, rules.tolerance, max(level, rules.alpha / 15), 0.10, 0.05)
    rows = [
        [
            "60 probes alone (alpha)",
            f"{alone:.3f}",
            f"{alone:.3f}",
            flip_alone,
            0.62,
            0.52,
            f"{ceiling_alone:.3f}",
        ],
        [
            f"inside the 15-slice gate ({reps} draws)",
            f"{holm_in:.3f}",
            f"{wy_in:.3f}",
            flip_in,
            0.25,
            0.11,
            f"{ceiling_in:.3f}",
        ],
    ]
    return rows, level


def print_multiplicity(rng: np.random.Generator, rules: GateRules, quick: bool, reps: int) -> None:
    sizes = WY_SIZES[:2] if quick else WY_SIZES
    print(
        f"\nG. Family-wise false alarms of the 15 gated slices, Holm vs Westfall-Young ({reps} draws per "
        f"cell; every probe flips with the disagreement, a true drop of 0 or of the tolerance on all)"
    )
    print(
        tabulate(
            multiplicity_size(rng, rules, reps, sizes),
            headers=[
                "n (language)",
                "probes",
                "disagreement",
                "no change: Holm",
                "no change: W-Y",
                "drop = tol: Holm",
                "drop = tol: W-Y",
            ],
            tablefmt="github",
        )
    )
    rows, level = multiplicity_power(rng, rules, max(reps, 400))
    # The same at tolerance 0, the "no change" null issue 14's power targets were set under:
    # a team that sets `gate.tolerance: 0` gets the unconditional exact test of that null.
    zero_rows, _ = multiplicity_power(rng, dataclasses.replace(rules, tolerance=0.0), max(reps, 400))
    rows += [[f"{r[0]}, tolerance 0", *r[1:]] for r in zero_rows]
    print(
        "\nH. Power for a 10-point drop on 60 probes, 5% disagreement, at the configured tolerance "
        "(non-inferiority null) and at tolerance 0 (no-change null)"
    )
    print(
        tabulate(
            rows,
            headers=[
                "where",
                "Holm",
                "Westfall-Young",
                "W-Y, sign flips",
                "issue target",
                "issue's figure (no-change null)",
                "ceiling at the first-step level",
            ],
            tablefmt="github",
        )
    )
    print(
        f"First-step level a slice faces in that gate: Holm alpha/15 = {rules.alpha / 15:.4f}, "
        f"Westfall-Young {level:.4f}"
    )


CLUSTER_RHOS = (0.0, 0.25, 0.5)
N_VERBS, PER_VERB = 40, 15  # the shipped core grid: 40 verbs x (5 tenses x 3 persons)


def _verb_probe_set() -> list[dict]:
    """40 verbs (20 per language, half irregular), each in 5 tenses x 3 persons: 14 gated slices."""
    tenses = ("infinitive", "present_simple", "past_simple", "past_participle", "future")
    return [
        {
            "id": f"v{v:02d}-{t}-{p}",
            "status": "scored",
            "language": ("en", "es")[v % 2],
            "verb": f"verb{v}",
            "regularity": ("regular", "irregular")[(v // 2) % 2],
            "tense": tenses[t],
            "person": ("1sg", "2sg", "3sg")[p],
            "category": "core",
            "label": "correct",
            "content_hash": f"{v * 100 + t * 10 + p:064x}",
        }
        for v in range(N_VERBS)
        for t in range(5)
        for p in range(3)
    ]


def correlated_flips(
    rng: np.random.Generator,
    churn: float,
    drop: float,
    rho: float,
    n_verbs: int = N_VERBS,
    per_verb: int = PER_VERB,
) -> np.ndarray:
    """Signed flips (+1 right->wrong, -1 wrong->right, 0) of the verb grid, P(+1) = (churn+drop)/2
    and P(-1) = (churn-drop)/2 for every probe, correlation rho between two probes of one verb:
    each probe copies its verb's common draw with probability sqrt(rho), else draws its own (the
    marginal stays the same, so the true drop is exactly `drop`). tests/gate/test_clustered_gate.py
    uses this same model."""
    p = [(churn + drop) / 2, (churn - drop) / 2, 1 - churn]
    values = np.array([1, -1, 0])
    common = values[rng.choice(3, size=(n_verbs, 1), p=p)]
    own = values[rng.choice(3, size=(n_verbs, per_verb), p=p)]
    copy = rng.random((n_verbs, per_verb)) < np.sqrt(rho)
    return np.where(copy, common, own).ravel()


def clustered_size(rng: np.random.Generator, reps: int, churn: float = 0.10) -> list[list]:
    """Family-wise false alarms of the whole gate when flips are correlated within a verb.

    The same draws go through `compare` twice: probe by probe (today's test) and with
    `gate.cluster: verb` (gate/cluster.py). "no change" and "drop = tolerance" are both inside
    H0, so every failure is a false alarm; a 5-point drop on every verb shows what clustering
    costs in power.
    """
    probes = _verb_probe_set()
    slices = aggregate_slices([{**p, "correct": True} for p in probes], 1.96)
    plain = default_rules(mde_max=1.0)
    clustered = dataclasses.replace(plain, cluster="verb")
    rows = []
    cells = ((0.0, "no change"), (plain.tolerance, "drop = tolerance"), (0.05, "drop 5 pts (power)"))
    for drop, label in cells:
        for rho in CLUSTER_RHOS:
            fails = {"plain": 0, "clustered": 0}
            deffs = []
            for _ in range(reps):
                flips = correlated_flips(rng, churn, drop, rho)
                base = np.where(flips == 1, True, np.where(flips == -1, False, rng.random(len(flips)) < P0))
                new = np.where(flips == 0, base, ~base)
                a, b = _results(probes, new, slices), _results(probes, base, slices)
                fails["plain"] += bool(compare(a, b, plain, "sim")["regressed"])
                got = compare(a, b, clustered, "sim")
                fails["clustered"] += bool(got["regressed"])
                if got["cluster"]["design_effect"] is not None:
                    deffs.append(got["cluster"]["design_effect"])
            rows.append(
                [
                    label,
                    f"{rho:.2f}",
                    f"{np.median(deffs):.2f}" if deffs else "-",
                    f"{fails['plain'] / reps:.3f}",
                    f"{fails['clustered'] / reps:.3f}",
                ]
            )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=4)
    ap.add_argument("--reps", type=int, default=2000, help="draws per cell of table A")
    ap.add_argument("--gate-reps", type=int, default=200, help="draws per cell of table B")
    ap.add_argument("--churn", type=float, default=0.10, help="disagreement used in table B")
    ap.add_argument("--quick", action="store_true", help="tables E-I only, fewer draws (a minute or two)")
    ap.add_argument("--wy-reps", type=int, default=None, help="draws per cell of tables G and H")
    ap.add_argument("--cluster-reps", type=int, help="draws per cell of table I (200; quick 40)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    rules = default_rules()
    print("E. One slice with a true drop equal to the tolerance: exact chance it is flagged")
    print(
        tabulate(
            size_at_tolerance(rules, NI_SIZES[:2] if args.quick else NI_SIZES),
            headers=["disagreement", "n", "old rule (McNemar)", "non-inferiority test"],
            tablefmt="github",
        )
    )
    print("\nF. Power for a 10-point drop on 60 probes, 5% disagreement (exact)")
    print(
        tabulate(
            power_targets(rules),
            headers=[
                "level",
                "old rule",
                "non-inferiority",
                "issue target",
                "ceiling, any test",
                "ceiling, no-change null",
            ],
            tablefmt="github",
        )
    )
    wy_reps = args.wy_reps or (300 if args.quick else 2000)
    print_multiplicity(np.random.default_rng([args.seed, 14]), rules, args.quick, wy_reps)
    reps = args.cluster_reps if args.cluster_reps is not None else (40 if args.quick else 200)
    print(
        f"\nI. Whole gate, 600 probes = 40 verbs x 15, 14 gated slices, churn 10%, flips correlated "
        f"within a verb ({reps} draws per cell): share of runs that fail, per-probe test vs "
        "gate.cluster: verb"
    )
    print(
        tabulate(
            clustered_size(rng, reps),
            headers=["true change", "within-verb rho", "design effect (median)", "per-probe", "clustered"],
            tablefmt="github",
        )
    )
    flip_reps = args.wy_reps or (100 if args.quick else 500)
    print(
        f"\nJ. Family-wise false alarms of the 15 gated slices at tolerance 0 with no change ({flip_reps} "
        "draws per cell): Holm, Westfall-Young on the boundary draws, Westfall-Young under the "
        "sign-flip null (gate.multiplicity: westfall-young when every gated slice has tolerance 0)"
    )
    print(
        tabulate(
            flip_size(
                np.random.default_rng([args.seed, 15]),
                rules,
                flip_reps,
                WY_SIZES[:2] if args.quick else WY_SIZES,
            ),
            headers=["n (language)", "probes", "disagreement", "Holm", "W-Y boundary", "W-Y sign flips"],
            tablefmt="github",
        )
    )
    k_reps = 1000 if args.quick else args.reps
    k_gate = 200 if args.quick else args.gate_reps
    print(
        f"\nK. `evalgate power` against simulation ({k_reps} draws per cell; the gate row {k_gate}): the "
        "MDE at alpha/5 (overall + 4 subjects), the exact power there, the share of draws the "
        "shipped test flags, the items a 10-point drop needs and the share flagged at that size"
    )
    print(
        tabulate(
            mde_against_simulation(np.random.default_rng([args.seed, 25]), rules, k_reps, k_gate),
            headers=[
                "n",
                "baseline",
                "disagreement",
                "MDE",
                "exact power",
                "simulated",
                "items for -10",
                "simulated",
            ],
            tablefmt="github",
            disable_numparse=True,
        )
    )
    print(
        "\nL. init's floors (the baseline's Wilson lower bound minus the tolerance, rounded down to a whole "
        "point, none within a guesser's reach; 4 choices): exact chance that a checkpoint as good as the "
        "baseline (both Bin(n, accuracy)) fails one floored slice, and how often the baseline gets none"
    )
    print(
        tabulate(
            floor_false_fails(rules),
            headers=["n", *(f"accuracy {p:.0%}" for p in FLOOR_ACCURACIES)],
            tablefmt="github",
            disable_numparse=True,
        )
    )
    if args.quick:
        return
    print(
        f"alpha {rules.alpha}, tolerance {rules.tolerance:.0%}, min_n {rules.min_n}, mde_max "
        f"{rules.mde_max:.0%}, baseline accuracy {P0:.0%}, seed {args.seed}\n"
    )
    head = ["drop 0 (false alarm)", "drop 5", "drop 10", "drop 20"]
    print(f"A. One slice, one test ({args.reps} draws per cell): share of draws flagged as regressed")
    print(
        tabulate(
            single_slice(rng, rules, args.reps),
            headers=["rule", "churn", "n", "MDE (points)", *head],
            tablefmt="github",
        )
    )
    print(
        f"\nB. The whole gate via gate.compare, {N_TOTAL} probes, 15 slices, drop on the Spanish "
        f"probes only, churn {args.churn:.0%} ({args.gate_reps} draws per cell): share of runs that fail"
    )
    print(
        tabulate(
            whole_gate(rng, args.gate_reps, args.churn),
            headers=["rule", "n (es)", "slices gated", "es low power", *head],
            tablefmt="github",
        )
    )
    print(
        f"\nC. False alarms of the whole gate (every slice of >= min_n gated, es = 60) as two equally "
        f"good checkpoints disagree more ({args.gate_reps} draws per cell)"
    )
    print(
        tabulate(
            false_alarms_by_churn(rng, args.gate_reps),
            headers=["rule", "churn 5%", "churn 10%", "churn 20%", "churn 40%"],
            tablefmt="github",
        )
    )
    print(
        "\nD. Probes a slice needs so that a 10-point drop is caught with power 0.8 (exact MDEs of the "
        "shipped test; wilson: its own rule)"
    )
    print(
        tabulate(
            sizes_needed(rules),
            headers=["rule", "churn", "alone (alpha)", "Holm worst case (alpha/15)"],
            tablefmt="github",
        )
    )


if __name__ == "__main__":
    main()
