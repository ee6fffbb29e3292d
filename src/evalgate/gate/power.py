"""What a suite can see: each gated slice's smallest detectable drop, and the items it needs.

`evalgate power`, and the power sections of `validate` and `init` (docs/gate.md, "What your suite
can see"). For every slice the gate would gate (its family in `gate.slices`, at least its
`min_n` shared items), at the configured alpha, tolerance and multiplicity:

- the MDE: the smallest true drop the shipped test (gate/noninferiority.py: its critical value and
  rejection region, never an approximation) detects with probability 0.8, at the disagreement
  measured between two checkpoints or at typical rates (5%, 10%, 20%);
- the items needed: the smallest slice size whose MDE is at most a drop of D points (bisection
  over n, as docs/gate.md table D; an exact test's power saws with n, so a few sizes just below
  also reach it and a few just above do not).

"Low power" is not judged from those columns but by `judge`, the one rule `compare` uses too
(docs/gate.md, "Minimum detectable effect"): the shipped test's MDE at the background
disagreement, measured between two runs as compare measures it (`background_disagreement`) or,
where nothing is measured, `gate.assumed_disagreement`. The columns are for information.

The level is the first Holm step, alpha / (gated slices + perplexity checks): the level a slice
faces when it is the only one to fail, the strictest it ever faces (later steps are easier), so the
MDE is an upper bound. The perplexity checks (the run's test set and each suite's own) are in the
gate's family (gate/compare.py, docs/gate.md "Perplexity"), so they count here as there.
Westfall–Young is taken at the same level: its first step is never below it (docs/gate.md,
table H), so the figure is an upper bound there too.

The model of two checkpoints. Equally good checkpoints disagree on a share s of the items, half
each way; a true drop D adds D to the right -> wrong share.

- With a baseline, its outcomes are fixed (the gate compares with that one file): of the k items
  of a slice of n it got right, each goes wrong with probability (h + D) / a, each of the n - k it
  got wrong goes right with h / (1 - a), a = k / n, h = s/2 capped at what the slice leaves room
  for (h <= a, h <= 1 - a: a slice at 98% has 2% of its items to gain on). Then b ~ Bin(k, .)
  and c ~ Bin(n - k, .) are independent and the power is an exact sum over c. A drop can be at
  most a - h: a slice the test cannot see within that range has no MDE.
- Without one, the baseline's outcomes are unknown too: each item goes right -> wrong with
  s/2 + D and wrong -> right with s/2 (the trinomial of gate/noninferiority.py's `power` and
  `mde`, the model of REPORT.md's MDE column), which assumes the accuracy leaves room for both.

Pure: entries and rules in, records out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from evalgate.gate import cluster, inconclusive, noninferiority, westfall_young
from evalgate.gate.binomial import binom_logpmf, binom_sf
from evalgate.gate.floors import chance_levels
from evalgate.gate.rules import GateRules
from evalgate.gate.slice_order import slice_sort_key
from evalgate.gate.slices import slice_keys
from evalgate.gate.stats import TARGET_POWER, exceeds, mde_wilson, wilson_interval
from evalgate.scoring.ordinal import is_ordinal
from evalgate.types import STATUS_SCORED, Probe

TYPICAL_DISAGREEMENTS = (0.05, 0.10, 0.20)
DEFAULT_DROP = 0.10
# The items-needed search stops here: beyond it a certified critical value costs seconds each.
ITEMS_NEEDED_MAX = 10_000
# The wilson rule without a baseline: its interval is widest at 50%, so the MDE there is the largest.
ASSUMED_ACCURACY = 0.5


@dataclass(frozen=True)
class SliceCounts:
    """One slice of a gated family: what the gate would pair in it."""

    key: str
    n: int  # items both sides hold (the gate's n_shared)
    gated: bool  # n >= its min_n
    min_n: int
    tolerance: float
    correct: int | None  # the reference's right answers among the n (None: no reference)
    b: int | None = None  # measured: reference right, candidate wrong
    c: int | None = None  # measured: reference wrong, candidate right
    chance: float | None = None  # mean 1/K over the slice's items
    clusters: int | None = None  # with gate.cluster: distinct clusters among the n

    @property
    def accuracy(self) -> float | None:
        return None if self.correct is None or not self.n else self.correct / self.n

    @property
    def disagreement(self) -> float | None:
        if self.b is None or self.c is None or not self.n:
            return None
        return (self.b + self.c) / self.n


def probe_entry(probe: Probe) -> dict[str, Any]:
    """The fields of a results.json entry that place a probe in its slices (gate/slices.py), for
    a probe set not yet scored: status "scored" for every probe the gate would pair."""
    entry: dict[str, Any] = {
        "id": probe.id,
        "status": "deprecated" if probe.deprecated else STATUS_SCORED,
        "kind": probe.kind,
        "candidates": [{"text": c} for c in probe.candidates],
    }
    if probe.label == "ambiguous":  # no single right answer: scored apart, never paired
        entry["status"] = "ambiguous"
    if probe.suite:
        entry["suite"] = probe.suite
    if probe.is_item:
        entry["slices"] = dict(probe.dims)
    else:
        for name in ("language", "verb", "regularity", "tense", "person", "category", "label", "reason_code"):
            entry[name] = getattr(probe, name)
    return entry


def _paired(entry: Mapping[str, Any]) -> bool:
    return entry.get("status") == STATUS_SCORED and not is_ordinal(entry)


def _right(outcome: Mapping[str, Any] | None) -> bool | None:
    """The outcome's right/wrong, None when it was not scored (not paired by the gate)."""
    if not outcome or outcome.get("status") != STATUS_SCORED or not isinstance(outcome.get("correct"), bool):
        return None
    return bool(outcome["correct"])


def gated_family(key: str, rules: GateRules) -> bool:
    """The slice's family is one `gate.slices` gates (gate/compare.py's candidates)."""
    return key.partition(":")[0] in set(rules.slices)


def slice_counts(
    entries: Iterable[Mapping[str, Any]],
    rules: GateRules,
    reference: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    measured: bool = False,
) -> list[SliceCounts]:
    """Every slice of a gated family, in report order, with what the gate would pair in it.

    `entries` are the candidate's (a scored run's results.json entries, or `probe_entry` of the
    probe set); `reference` maps id -> outcome ({"status", "correct"}: a baseline's outcomes or a
    second run's entries). With a reference an item counts only when the reference scored it, as
    the gate pairs; `measured` also counts the candidate's flips against it (b, c).
    """
    entries = [e for e in entries if _paired(e)]
    members: dict[str, list[tuple[Mapping[str, Any], bool | None]]] = {}
    for e in entries:
        ref = None
        if reference is not None:
            ref = _right(reference.get(str(e["id"])))
            if ref is None:
                continue
        if measured and not isinstance(e.get("correct"), bool):
            continue
        for key in slice_keys(dict(e)):
            if gated_family(key, rules):
                members.setdefault(key, []).append((e, ref))
    chance = chance_levels([e for e in entries if e.get("candidates")])
    out = []
    for key in sorted(members, key=slice_sort_key):
        rows = members[key]
        n = len(rows)
        correct = sum(1 for _, r in rows if r) if reference is not None else None
        b = c = None
        if measured and reference is not None:
            b = sum(1 for e, r in rows if r and not e["correct"])
            c = sum(1 for e, r in rows if r is False and e["correct"])
        clusters = None
        if rules.cluster:
            clusters = len({cluster.cluster_label(e, rules.cluster) for e, _ in rows})
        min_n = rules.min_n_for(key)
        out.append(
            SliceCounts(
                key=key,
                n=n,
                gated=n >= min_n and n > 0,
                min_n=min_n,
                tolerance=rules.tolerance_for(key),
                correct=correct,
                b=b,
                c=c,
                chance=chance.get(key),
                clusters=clusters,
            )
        )
    return out


# -- the exact power of the shipped test ------------------------------------------------------


def background(n: int, correct: int, disagreement: float) -> float:
    """h: the share of a slice's items that flip each way between equally good checkpoints, s/2
    capped at what a baseline with `correct` of `n` right leaves room for."""
    a = correct / n
    return max(0.0, min(disagreement / 2.0, a, 1.0 - a))


def power_given_baseline(
    n: int, correct: int, tolerance: float, level: float, drop: float, disagreement: float
) -> float:
    """Exact power of the shipped test at a true drop, the baseline's `correct` of `n` fixed.

    b ~ Bin(correct, (h + drop)/a), c ~ Bin(n - correct, h/(1 - a)), independent (module
    docstring); the region is the test's own {b >= b_min(c)} at the critical value for `level`.
    """
    if n <= 0 or correct <= 0:
        return 0.0
    z = noninferiority.critical_z(n, tolerance, level)
    if z is None:
        return 0.0
    # the shipped test's rejection region: for each c, the smallest b it rejects at `level`
    bmin = noninferiority._bmin_table(z, n, tolerance)
    a = correct / n
    h = background(n, correct, disagreement)
    q_b = min(1.0, (h + drop) / a)
    wrong = n - correct
    c = np.arange(wrong + 1)
    q_c = h / (1.0 - a) if wrong else 0.0
    weight = np.exp(binom_logpmf(c, wrong, np.full(c.shape, q_c)))
    tail = binom_sf(bmin[c], correct, np.full(c.shape, q_b))
    return float(min(1.0, (weight * tail).sum()))


@lru_cache(maxsize=8192)
def mde_given_baseline(
    n: int, correct: int, tolerance: float, level: float, disagreement: float, target: float = TARGET_POWER
) -> float | None:
    """Smallest true drop detected with probability `target`, the baseline fixed (None: not even
    the largest drop the slice can have, a - h). Bisected to 1e-4, as noninferiority.mde."""
    if n <= 0 or correct <= 0:
        return None
    top = correct / n - background(n, correct, disagreement)
    if top <= 0 or power_given_baseline(n, correct, tolerance, level, top, disagreement) < target:
        return None
    lo, hi = 0.0, top
    while hi - lo > 1e-4:
        mid = (lo + hi) / 2
        if power_given_baseline(n, correct, tolerance, level, mid, disagreement) >= target:
            hi = mid
        else:
            lo = mid
    return round(hi, 4)


@dataclass(frozen=True)
class Setting:
    """What the figures of one gate are computed at: the rule and the level a slice faces."""

    rule: str  # paired | wilson
    level: float  # paired: alpha / (gated slices + perplexity checks), Holm's first step; wilson: unused
    z: float  # wilson: the interval's z
    design_effect: float | None = None  # gate.cluster, measured: n is divided by it (Kish)
    perplexities: int = 0  # paired: the perplexity checks in the slices' family


def _effective(s: SliceCounts, setting: Setting) -> tuple[int, int | None]:
    """(n, correct) the figures use: n / design effect when the flips cluster (as gate/compare.py's
    MDE does), the accuracy kept."""
    if not setting.design_effect or setting.design_effect <= 1:
        return s.n, s.correct
    n = max(1, int(s.n / setting.design_effect))
    correct = None if s.correct is None else round(n * s.correct / s.n)
    return n, correct


def slice_mde(
    n: int, correct: int | None, tolerance: float, disagreement: float, setting: Setting
) -> float | None:
    """The MDE of a slice of n items (`correct` right in the baseline, None: no baseline)."""
    if setting.rule == "wilson":
        accuracy = ASSUMED_ACCURACY if correct is None else correct / n
        return mde_wilson(n, accuracy, setting.z, tolerance)
    if correct is None:
        return noninferiority.mde(n, tolerance, setting.level, disagreement)
    return mde_given_baseline(n, correct, tolerance, setting.level, disagreement)


def _detects(n: int, accuracy: float | None, tolerance: float, disagreement: float, drop: float, s: Setting):
    """Does a slice of n items at this baseline accuracy reach power 0.8 at `drop`?"""
    if s.rule == "wilson":
        found = mde_wilson(n, ASSUMED_ACCURACY if accuracy is None else accuracy, s.z, tolerance)
        return found is not None and found <= drop
    if accuracy is None:
        return noninferiority.power(n, tolerance, s.level, drop, disagreement) >= TARGET_POWER
    correct = int(accuracy * n + 0.5)
    if correct <= 0 or drop > correct / n - background(n, correct, disagreement):
        return False
    return power_given_baseline(n, correct, tolerance, s.level, drop, disagreement) >= TARGET_POWER


def items_needed(
    accuracy: float | None,
    tolerance: float,
    disagreement: float,
    drop: float,
    setting: Setting,
    start: int = 16,
    most: int = ITEMS_NEEDED_MAX,
) -> int | None:
    """Smallest slice size at which a true drop of `drop` is detected with power 0.8, at this
    baseline accuracy (None: no baseline) and disagreement; None when more than `most` (or never:
    a drop within the tolerance is what the test promises to let through).

    Doubling from `start`, then bisection (docs/gate.md table D's rule)."""
    if not exceeds(drop, tolerance):
        return None
    lo, hi = 1, max(2, start)
    while not _detects(hi, accuracy, tolerance, disagreement, drop, setting):
        if hi >= most:
            return None
        lo, hi = hi + 1, min(most, 2 * hi)
    while lo < hi:
        mid = (lo + hi) // 2
        if _detects(mid, accuracy, tolerance, disagreement, drop, setting):
            hi = mid
        else:
            lo = mid + 1
    return lo


# -- "low power": one rule for every tool -----------------------------------------------------


def background_disagreement(n_lost: int, n_won: int, n_paired: int, assumed: float) -> float:
    """The background disagreement "low power" is judged at (docs/gate.md, "Minimum detectable
    effect"): the disagreement two equally good checkpoints would show, not the one observed.

    The MDE's model has each probe go wrong -> right with h/2 and right -> wrong with h/2 + drop,
    so the flips in the direction that is not the excess, 2 * min(lost, won) / paired, estimate h
    without a real regression's own flips (which would make every slice look low power) and
    without an improvement's. It is never below the configured `assumed_disagreement`: a rerun of
    the same checkpoint disagrees on nothing, and an MDE at 0 would promise a power that any
    other checkpoint's churn takes away. Rounded up to the next half point (a larger
    disagreement only makes the MDE larger) so that runs with nearly equal disagreement share
    the cached computation. Where nothing is measured (init, validate, `evalgate power` without
    --against) it is `assumed_disagreement` itself: `background_disagreement(0, 0, 0, assumed)`.
    """
    seen = 2 * min(n_lost, n_won) / n_paired if n_paired else 0.0
    return max(assumed, math.ceil(seen * 200 - 1e-9) / 200)


@dataclass(frozen=True)
class Judged:
    """A slice's power as the gate judges it: its MDE (None: it catches no drop it can have) and
    whether that is above `gate.mde_max` ("low power", `underpowered` in results.json)."""

    mde: float | None
    low_power: bool


def judge(
    n: int,
    *,
    tolerance: float,
    level: float,
    background: float,
    rules: GateRules,
    baseline_accuracy: float | None,
    design_effect: float | None = None,
    reaches: bool = True,
) -> Judged:
    """THE definition of "low power" (docs/gate.md, "Minimum detectable effect"), used by
    `compare`, `init` (which slices get floors), `validate` and `evalgate power`, so that the same
    slice, n and level get the same answer everywhere (issue 25: init judged at a fixed 10% while
    compare judged at 5%).

    `n` shared items at `level` (the first Holm step: alpha / (gated slices + perplexity checks)),
    at the background disagreement `background` (`background_disagreement`). Paired rule: the
    shipped test's own MDE (gate/noninferiority.py's trinomial) on n / design effect items,
    none when above the baseline's accuracy (a drop cannot exceed it) or when the slice's
    clusters cannot reach the level (`reaches` False). Wilson rule: its interval's MDE at the
    baseline's accuracy (50%, its widest, when unknown). Low power: no MDE, or one above
    `gate.mde_max`.
    """
    if not reaches or not n:
        mde = None
    elif rules.rule == "wilson":
        accuracy = ASSUMED_ACCURACY if baseline_accuracy is None else baseline_accuracy
        mde = mde_wilson(n, accuracy, rules.z, tolerance)
    else:
        n_eff = max(1, int(n / design_effect)) if design_effect and design_effect > 1 else n
        mde = noninferiority.mde(n_eff, tolerance, level, background)
        if mde is not None and baseline_accuracy is not None and mde > baseline_accuracy:
            mde = None
    return Judged(mde=mde, low_power=mde is None or exceeds(mde, rules.mde_max))


# -- the table --------------------------------------------------------------------------------


def first_step_level(rules: GateRules, n_gated: int, perplexities: int = 0) -> float:
    """The level a gated slice faces at the first step of the multiplicity adjustment: the gate's
    `mde_level` (gate/compare.py), whose family holds the gated slices and the tested perplexities
    (under Westfall-Young the slices' block is scaled by (m + k) / m, the same first-step level)."""
    return rules.alpha / max(1, n_gated + perplexities)


def _cluster_floor(s: SliceCounts, setting: Setting) -> bool:
    """With gate.cluster the sign-flip test's smallest p-value is 2^-G (G clusters): a slice whose
    smallest p-value is not below its level can never fail (docs/gate.md, "Clustered flips"; the
    gate's own check, gate/inconclusive.py's `reaches`)."""
    return s.clusters is not None and not inconclusive.reaches(s.clusters, setting.level)


def power_table(
    counts: Sequence[SliceCounts],
    rules: GateRules,
    *,
    disagreements: Sequence[float] = TYPICAL_DISAGREEMENTS,
    measured: bool = False,
    drop: float = DEFAULT_DROP,
    design_effect: float | None = None,
    reference: str | None = None,
    needed: bool = True,
    perplexities: int = 0,
    background: float | None = None,
) -> dict[str, Any]:
    """The power document (docs/gate.md, "What your suite can see", for its shape).

    "Low power" (each row's `low_power` and `mde`) is `judge` at `background`, the background
    disagreement: measured, the whole comparison's (`measured_background`, as compare measures
    it); otherwise `gate.assumed_disagreement`. The columns at `disagreements` (or at each slice's
    own measured disagreement) are for information: they decide nothing.

    `perplexities`: the perplexity checks the configuration makes (its `test:` and each suite's
    own), members of the slices' family under the paired rule (`first_step_level`).

    `measured`: each slice at its own measured disagreement (`counts` carry b and c); otherwise at
    every rate of `disagreements`. `reference`: what the baseline accuracies come from ("the
    baseline baselines/x.json", "checkpoint B"), None when there is none.
    """
    gated = [s for s in counts if s.gated]
    # the Wilson rule's perplexities are a family of their own (gate/compare.py)
    k = perplexities if rules.rule == "paired" else 0
    setting = Setting(
        rule=rules.rule,
        level=first_step_level(rules, len(gated), k),
        perplexities=k,
        z=rules.z,
        design_effect=design_effect if rules.rule == "paired" and rules.cluster else None,
    )
    has_reference = any(s.correct is not None for s in counts)
    judged_at = rules.assumed_disagreement if background is None else background
    slices = []
    for s in counts:
        row: dict[str, Any] = {
            "slice": s.key,
            "n": s.n,
            "gated": s.gated,
            "tolerance": s.tolerance,
            "baseline_accuracy": s.accuracy,
            "chance": s.chance,
        }
        if s.b is not None:
            row["b"], row["c"] = s.b, s.c
        if s.clusters is not None:
            row["clusters"] = s.clusters
        if not s.gated:
            row["not_gated"] = f"{s.n} item(s), under min_n {s.min_n}"
            row["at"] = []
            row["low_power"] = True
            slices.append(row)
            continue
        rates = [s.disagreement or 0.0] if measured else list(disagreements)
        n_eff, correct = _effective(s, setting)
        at = []
        for rate in rates:
            figures: dict[str, Any] = {"disagreement": rate, "mde": None}
            if needed:
                figures["items_needed"] = None
            if not _cluster_floor(s, setting):
                figures["mde"] = slice_mde(n_eff, correct, s.tolerance, rate, setting)
            if needed and not _cluster_floor(s, setting):
                accuracy = None if correct is None else correct / n_eff
                found = items_needed(accuracy, s.tolerance, rate, drop, setting)
                if found is not None and setting.design_effect:
                    found = math.ceil(found * setting.design_effect)
                figures["items_needed"] = found
            at.append(figures)
        if _cluster_floor(s, setting):
            row["cannot_fail"] = (
                f"{s.clusters} {rules.cluster} cluster(s): no p-value below 2^-{s.clusters}, above the "
                f"level {setting.level:.3g}"
            )
        judged = judge(
            s.n,
            tolerance=s.tolerance,
            level=setting.level,
            background=judged_at,
            rules=rules,
            baseline_accuracy=s.accuracy,
            design_effect=setting.design_effect,
            reaches=not _cluster_floor(s, setting),
        )
        row["at"] = at
        row["mde"] = judged.mde
        row["low_power"] = judged.low_power
        slices.append(row)
    doc: dict[str, Any] = {
        "rule": rules.rule,
        "alpha": rules.alpha,
        "multiplicity": _multiplicity(rules),
        "gated": len(gated),
        "perplexities": k,
        "level": setting.level if rules.rule == "paired" else None,
        "target_power": TARGET_POWER,
        "mde_max": rules.mde_max,
        "drop": drop,
        "disagreement": "measured" if measured else "typical",
        "disagreements": [] if measured else list(disagreements),
        # the background disagreement "low power" is judged at (`judge`), measured or assumed
        "reference_disagreement": judged_at if rules.rule == "paired" else None,
        "baseline": reference if has_reference else None,
        "items_needed_max": ITEMS_NEEDED_MAX,
        "assumptions": assumptions(rules, measured=measured, has_baseline=has_reference, setting=setting),
        "slices": slices,
    }
    return doc


def _multiplicity(rules: GateRules) -> str | None:
    if rules.rule != "paired":
        return None
    return "westfall-young" if rules.multiplicity == westfall_young.METHOD else "holm"


def assumptions(rules: GateRules, *, measured: bool, has_baseline: bool, setting: Setting) -> list[str]:
    """What the figures assume, in words (printed with the table and in its JSON)."""
    out = []
    if rules.rule == "wilson":
        out.append(
            "wilson rule: the baseline's accuracy a is held fixed and the new run's right answers are "
            "Bin(n, a - drop); no multiplicity correction (the rule has none)"
        )
        if not has_baseline:
            out.append(f"no baseline: every slice's accuracy is taken as {ASSUMED_ACCURACY:.0%}")
        return out
    if measured:
        out.append("disagreement: each slice's own, measured between the two checkpoints, half each way")
    else:
        out.append(
            "disagreement: two equally good checkpoints disagree on "
            + ", ".join(f"{d:.0%}" for d in TYPICAL_DISAGREEMENTS)
            + " of the items, half each way (typical rates; measure yours with --checkpoint A --against B)"
        )
    if has_baseline:
        out.append(
            "baseline: its outcomes are fixed; of the items it got right each goes wrong with "
            "(s/2 + drop)/a, of those it got wrong each goes right with (s/2)/(1 - a), s/2 capped at "
            "what the slice's accuracy a leaves room for"
        )
    else:
        out.append(
            "no baseline: each item goes right -> wrong with s/2 + drop and wrong -> right with s/2, "
            "whatever the slice's accuracy (it must leave room for both)"
        )
    method = _multiplicity(rules)
    level = f"alpha / gated slices = {setting.level:.3g}"
    if setting.perplexities:
        level = f"alpha / (gated slices + {setting.perplexities} perplexity check(s)) = {setting.level:.3g}"
    if method == "westfall-young":
        out.append(
            f"multiplicity: Westfall-Young, taken at Holm's first-step level ({level}); its own first "
            "step is never below that level, so each MDE is an upper bound"
        )
    else:
        out.append(
            f"multiplicity: Holm's first step ({level}), the strictest level a slice faces; when "
            "other slices fail too its level rises, so each MDE is an upper bound"
        )
    if rules.cluster:
        if setting.design_effect:
            out.append(
                f"gate.cluster {rules.cluster}: n divided by the measured design effect "
                f"{setting.design_effect:.2f}"
            )
        else:
            out.append(
                f"gate.cluster {rules.cluster}: probes taken as independent (the design effect is known "
                "only once two checkpoints are compared), so each MDE is a lower bound"
            )
    else:
        out.append("probes flip independently of each other")
    return out


# -- init's floors ----------------------------------------------------------------------------


def guess_ceiling(chance: float, n: int, z: float) -> float:
    """What a model that guesses reaches on n items with chance `chance`, z standard deviations
    up: a floor below it would pass a guesser on a lucky draw (one-sided, z = gate.z)."""
    return chance + z * math.sqrt(chance * (1.0 - chance) / n)


def suggested_floor(n: int, correct: int, tolerance: float, chance: float | None, z: float) -> float | None:
    """init's floor for a slice the paired test cannot see well (docs/gate.md, "Floors from the
    first baseline"): the baseline's Wilson lower bound minus the tolerance, rounded down to a
    whole point; None when that lies within reach of guessing (chance + z sd of a guesser's
    accuracy on n items) or at 0."""
    if n <= 0:
        return None
    low = wilson_interval(correct, n, z)[0]
    floor = math.floor(round((low - tolerance) * 100, 6)) / 100
    if floor <= 0:
        return None
    if chance is not None and floor < guess_ceiling(chance, n, z):
        return None
    return floor


def floors(doc: Mapping[str, Any], counts: Sequence[SliceCounts], z: float) -> dict[str, dict[str, Any]]:
    """Slice key -> {"floor" or None, "why"} for every slice of `doc` that is low power (not gated,
    or `judge` calls it so), from the baseline in `counts`."""
    by_key = {s.key: s for s in counts}
    out: dict[str, dict[str, Any]] = {}
    for row in doc["slices"]:
        s = by_key[row["slice"]]
        if not row["low_power"] or s.correct is None or not s.n:
            continue
        floor = suggested_floor(s.n, s.correct, s.tolerance, s.chance, z)
        out[s.key] = {"floor": floor, "n": s.n, "correct": s.correct, "chance": s.chance}
    return out


# -- the inputs the commands have -------------------------------------------------------------


def probe_set_counts(
    probes: Iterable[Probe],
    excluded: Iterable[str],
    rules: GateRules,
    baseline: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[SliceCounts]:
    """The gated families' slices of a validated probe set, not yet scored: every live probe the
    gate would pair (leak-excluded, ambiguous and ordinal ones left out), and with a baseline's
    outcomes only those it scored, each with its right/wrong."""
    gone = set(excluded)
    entries = []
    for p in probes:
        entry = probe_entry(p)
        if p.id in gone:
            entry["status"] = "excluded"
        entries.append(entry)
    return slice_counts(entries, rules, baseline)


def measured_background(
    entries: Iterable[Mapping[str, Any]], reference: Mapping[str, Mapping[str, Any]], assumed: float
) -> float:
    """`background_disagreement` between the candidate and the reference over every item the gate
    would pair, as gate/compare.py measures it for its MDEs: the same h for the same two runs."""
    lost = won = paired = 0
    for e in entries:
        ref = _right(reference.get(str(e.get("id"))))
        if ref is None or not _paired(e) or not isinstance(e.get("correct"), bool):
            continue
        paired += 1
        lost += ref and not e["correct"]
        won += not ref and e["correct"]
    return background_disagreement(lost, won, paired, assumed)


def measured_design_effect(
    entries: Iterable[Mapping[str, Any]], reference: Mapping[str, Mapping[str, Any]], field: str
) -> float | None:
    """The design effect of the candidate's flips against the reference under `gate.cluster`
    (gate/cluster.py's summary, as gate/compare.py measures it); None below 1 or undefined."""
    flips, labels = [], []
    for e in entries:
        ref = _right(reference.get(str(e.get("id"))))
        if ref is None or not _paired(e) or not isinstance(e.get("correct"), bool):
            continue
        flips.append(int(ref) - int(e["correct"]))
        labels.append(cluster.cluster_label(e, field))
    if not flips:
        return None
    found = cluster.summary(field, flips, labels, configured=True).get("design_effect")
    return float(found) if isinstance(found, int | float) and found > 1 else None


def with_floors(doc: dict[str, Any], counts: Sequence[SliceCounts], z: float) -> dict[str, Any]:
    """The document with `suggested_floors`: init's rule for its low-power slices, when the
    baseline's accuracy is known (docs/gate.md, "Floors from the first baseline")."""
    found = floors(doc, counts, z)
    doc["suggested_floors"] = {k: v["floor"] for k, v in found.items() if v["floor"] is not None}
    return doc
