"""The paired comparison with a baseline, the two gate rules and the verdict.

`compare(results, baseline, rules, baseline_path)` returns results.json's "comparison" object;
`verdict(comparison)` turns it into "pass"/"fail" with one human reason per regression.

Pairing is by probe id: only probes scored (status "scored") in both runs are compared, so a
slice's baseline and new accuracies are measured on exactly the same items. New probes are
reported, not gated; deprecated ones are left out; a probe whose content changed under the same id
is refused (deprecate it and add a replacement). A run measured differently (method,
normalisation, template, dtype, scoring version) is refused as not comparable. A new tokenizer
is what the gate exists for, so it never blocks accuracy; it only makes perplexity incomparable.

The baseline may be a baseline document (gate/baseline.py) or another results.json: both are
read into one `_View` first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalgate.errors import NotComparableError, RefusedError
from evalgate.gate import cluster, inconclusive, noninferiority, perplexity_test, power, westfall_young
from evalgate.gate.baseline import BASELINE_KIND, validate_baseline
from evalgate.gate.document import (
    ClusterSummary,
    Comparison,
    Inconclusive,
    PerplexityComparison,
    SliceComparison,
    SliceStatus,
)
from evalgate.gate.floors import floor_of
from evalgate.gate.results import refuse_partial
from evalgate.gate.rules import GateRules  # the rules only: a configuration is never loaded here
from evalgate.gate.slice_order import slice_sort_key
from evalgate.gate.slices import slice_keys
from evalgate.gate.stats import (
    exceeds,
    holm,
    mcnemar_exact_one_sided,
    mde_wilson,
    p_is,
    wilson_interval,
)
from evalgate.scoring.ordinal import is_ordinal
from evalgate.types import STATUS_DEPRECATED, STATUS_SCORED, Finding

# Manifest keys that must match for two runs to be comparable at all (docs/gate.md, "The comparison").
# The probe-set digest is deliberately absent: new probes are allowed, and immutability is
# enforced per id through content hashes.
COMPARABLE_KEYS = ("method", "normalization", "template_sha256", "dtype", "scoring_version")
# Keys that only make perplexity incomparable (a different tokenizer or test set).
PERPLEXITY_KEYS = ("tokenizer_sha256", "test_sha256")


class BlindClustersError(RefusedError):
    """`gate.cluster` leaves no gated slice enough clusters to ever fail the gate (exit 2)."""


@dataclass(frozen=True)
class _View:
    """A baseline document or a results.json, reduced to what the comparison needs."""

    manifest: dict[str, Any]
    outcomes: dict[str, dict[str, Any]]  # id -> {status, correct, content_hash}
    slices: frozenset[str]  # slices with at least one scored probe
    perplexity: dict[str, Any] | None
    name: str | None
    suite_perplexity: dict[str, Any]  # several suites: a suite's own test set's (docs/suites.md)


def _as_view(doc: Any, source: str) -> _View:
    refuse_partial(doc, source, "holds only part of the probes, so it cannot be gated or gate anything")
    if isinstance(doc, dict) and doc.get("kind") == BASELINE_KIND:
        validate_baseline(doc, source)
        outcomes = doc["outcomes"]
    elif (
        isinstance(doc, dict)
        and isinstance(doc.get("probes"), list)
        and isinstance(doc.get("manifest"), dict)
    ):
        bad = [
            i
            for i, e in enumerate(doc["probes"])
            if not (isinstance(e, dict) and "id" in e and "status" in e)
        ]
        if bad:
            raise RefusedError(
                f"{source}: probes[{bad[0]}] (and {len(bad) - 1} more) lack an 'id' or a 'status'",
                hint="pass a results.json written by `evalgate run`, or a baseline file",
            )
        outcomes = {e["id"]: e for e in doc["probes"]}
    else:
        raise RefusedError(
            f"{source}: neither an evalgate baseline nor a results.json",
            hint="pass baselines/<name>.json or the results.json of an earlier `evalgate run`",
        )
    if doc.get("kind") == BASELINE_KIND:
        # a baseline document keeps no slice metadata per probe: its slices table says which
        # slices it scored (only ever adding candidates: the shared ones come from the probes)
        slices = frozenset(
            k for k, s in (doc.get("slices") or {}).items() if isinstance(s, dict) and s.get("n")
        )
    else:
        slices = scored_slices(doc["probes"])
    suite_ppl = doc.get("suite_perplexity")
    return _View(
        doc["manifest"],
        outcomes,
        slices,
        doc.get("perplexity"),
        doc.get("name"),
        dict(suite_ppl) if isinstance(suite_ppl, dict) else {},
    )


def scored_slices(entries: list[dict[str, Any]]) -> frozenset[str]:
    """The slices holding at least one scored entry, from the entries themselves: never from a
    results file's `slices` table, which a hand-edited file can make say anything (docs/gate.md)."""
    return frozenset(k for e in entries if isinstance(e, dict) and _scored(e) for k in slice_keys(e))


def suite_templates(manifest: Mapping[str, Any], config: Any) -> dict[str, Any] | None:
    """Each suite's template hash by name: the manifest's record (several suites), or the one
    template's hash under the name of a configuration's only suite; None for a run without
    `suites:` or a record too old to say."""
    by_suite = manifest.get("template_sha256_by_suite")
    if isinstance(by_suite, Mapping):
        return dict(by_suite)
    suites = config.get("suites") if isinstance(config, Mapping) else None
    if isinstance(suites, Mapping) and len(suites) == 1:
        return {str(next(iter(suites))): manifest.get("template_sha256")}
    return None


def device_of(manifest: Mapping[str, Any]) -> str:
    """The device a result was scored on: the manifest's `device`, absent for cpu (every result
    written before the key existed was scored on a CPU)."""
    return str(manifest.get("device") or "cpu")


def _check_device(new: Mapping[str, Any], base: Mapping[str, Any], baseline_path: str) -> None:
    """A baseline measured on one device never gates a run on another: GPU kernels sum in another
    order, so log-likelihoods differ in their last bits and a near-tie can flip (docs/scoring.md,
    "Device"). Refused before anything is compared, with the command that renews the baseline."""
    run_dev, base_dev = device_of(new), device_of(base)
    if run_dev == base_dev:
        return
    raise NotComparableError(
        f"baseline {baseline_path} was measured on {base_dev}, this run on {run_dev}: scores from "
        "different devices differ in their last bits, so the baseline cannot gate this run",
        hint=f"score on {base_dev} (scoring.device: {base_dev} in evalgate.yml), or renew the baseline on "
        f"{run_dev}: `evalgate baseline update` with scoring.device: {run_dev} (in CI, a PR labelled "
        "evalgate:update-baseline; docs/approval.md)",
    )


def _check_comparable(
    new: dict[str, Any],
    base: dict[str, Any],
    baseline_path: str,
    templates: tuple[dict[str, Any] | None, dict[str, Any] | None] = (None, None),
) -> None:
    """`templates`: (the run's, the baseline's) `suite_templates`. Where both are known and share
    a suite, the templates are compared suite by suite: adding or removing a suite is a gate
    change of its own (gate/yardstick.py), not a template every other suite measured with
    differently (docs/suites.md)."""
    _check_device(new, base, baseline_path)
    keys = list(COMPARABLE_KEYS)
    run_t, base_t = templates
    diffs = []
    if run_t is not None and base_t is not None and set(run_t) & set(base_t):
        keys.remove("template_sha256")
        diffs += [
            f"template_sha256 of suite {name}: baseline {base_t[name]!r}, this run {run_t[name]!r}"
            for name in sorted(set(run_t) & set(base_t))
            if run_t[name] != base_t[name]
        ]
    diffs += [
        f"{key}: baseline {base.get(key)!r}, this run {new.get(key)!r}"
        for key in keys
        if new.get(key) != base.get(key)
    ]
    if diffs:
        raise NotComparableError(
            f"baseline {baseline_path} was measured differently from this run, so it cannot gate it:\n  "
            + "\n  ".join(diffs),
            hint="run with the baseline's settings, or regenerate the baseline for the new settings "
            "(`evalgate baseline update` in a PR labelled evalgate:update-baseline)",
        )


def _check_suite_names(results: dict[str, Any], base: _View, baseline_path: str) -> None:
    """Several suites whose names differ from the baseline's: say so, rather than the template
    digest that differs because of it (it covers each suite's name, pipeline._template_digest).
    A renamed suite's slices are new slices, so it would gate nothing: refused either way."""
    if results["manifest"].get("template_sha256") == base.manifest.get("template_sha256"):
        return
    old = {str(o["suite"]) for o in base.outcomes.values() if isinstance(o, dict) and o.get("suite")}
    new = {str(e["suite"]) for e in results["probes"] if isinstance(e, dict) and e.get("suite")}
    if not old or not new or old <= new:
        return  # the same suites, or suites added: the baseline's own still gate their items
    gone, added = ", ".join(sorted(old - new)) or "none", ", ".join(sorted(new - old)) or "none"
    raise NotComparableError(
        f"baseline {baseline_path} was measured on other suites (gone: {gone}; new: {added}): a suite's "
        "name is part of its template digest and of every slice key, so a renamed suite would gate "
        "nothing against it",
        hint="keep the suites' names, or write a new baseline for them (`evalgate baseline update` in a "
        "PR labelled evalgate:update-baseline)",
    )


def _check_locks(entries: list[dict[str, Any]], base: _View, baseline_path: str) -> None:
    findings = []
    for e in entries:
        old = base.outcomes.get(e["id"], {}).get("content_hash")
        if old and e.get("content_hash") and old != e["content_hash"]:
            findings.append(
                Finding(
                    check="probe-changed",
                    message=f"probe {e['id']} changed under the same id: "
                    "deprecate it and add a replacement with a new id",
                    probe_id=e["id"],
                    evidence={"baseline": baseline_path, "baseline_hash": old, "hash": e["content_hash"]},
                )
            )
    if findings:
        raise RefusedError(
            "\n".join(f.message for f in findings),
            hint='set "deprecated": true on the old probe (`evalgate probes deprecate ID`) and add the '
            "changed content under a new id; ids are compared with the baseline forever",
            findings=findings,
        )


def _check_overlap(
    entries: list[dict[str, Any]],
    shared: list[str],
    manifest: dict[str, Any],
    base: _View,
    baseline_path: str,
) -> None:
    """Refuse a baseline that shares no scored probe with a run that has some to gate.

    New probes are allowed (so the probe-set digest alone never refuses), but a baseline of
    another probe set, or one whose outcomes are empty, would let every slice through as "new":
    a gate that checked nothing must not report a pass. Likewise a run that could score none of
    the probes the baseline scored (every one model_oov with a new tokenizer, say).
    """
    if shared:
        return
    n_live = sum(1 for e in entries if _paired(e))
    lost = [
        e
        for e in entries
        if not is_ordinal(e) and e["status"] != STATUS_DEPRECATED and _scored(base.outcomes.get(e["id"], {}))
    ]
    if n_live == 0 and lost:
        statuses: dict[str, int] = {}
        for e in lost:
            statuses[str(e["status"])] = statuses.get(str(e["status"]), 0) + 1
        listing = ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items()))
        raise RefusedError(
            f"none of the {len(lost)} probes baseline {baseline_path} scored could be scored in this run "
            f"({listing}), so nothing could be gated",
            hint="a candidate that tokenizes to the unknown token makes its probe model_oov: check the "
            "checkpoint's tokenizer, or run with `--baseline none` to see the run without a gate",
        )
    if n_live == 0:
        return
    n_base = sum(1 for o in base.outcomes.values() if _scored(o))
    old, new = base.manifest.get("probe_set_digest"), manifest.get("probe_set_digest")
    differs = f"\n  probe_set_digest: baseline {old!r}, this run {new!r}" if old != new else ""
    raise NotComparableError(
        f"baseline {baseline_path} shares no scored probe with this run ({n_live} scored here, "
        f"{n_base} in the baseline), so nothing could be gated (is it the baseline of another probe set?)"
        + differs,
        hint="gate against the baseline of this probe set, regenerate it (`evalgate baseline update` "
        "in a PR labelled evalgate:update-baseline), or run with `--baseline none`",
    )


def _perplexity(results: dict[str, Any], base: _View, max_ratio: float, alpha: float) -> PerplexityComparison:
    changed = [k for k in PERPLEXITY_KEYS if results["manifest"].get(k) != base.manifest.get(k)]
    return _perplexity_of(results.get("perplexity"), base.perplexity, changed, max_ratio, alpha)


def _suite_perplexity(
    results: dict[str, Any], base: _View, max_ratio: float, alpha: float
) -> dict[str, PerplexityComparison]:
    """Per suite with its own test set (either run): the same check, comparable when the
    tokenizer and that suite's test set are the same."""
    new = results.get("suite_perplexity") or {}
    out = {}
    for name in sorted(set(new) | set(base.suite_perplexity)):
        mine, theirs = new.get(name), base.suite_perplexity.get(name)
        mine = mine if isinstance(mine, dict) else None
        theirs = theirs if isinstance(theirs, dict) else None
        changed = [k for k in ("tokenizer_sha256",) if results["manifest"].get(k) != base.manifest.get(k)]
        if mine and theirs and mine.get("test_sha256") != theirs.get("test_sha256"):
            changed.append("test_sha256")
        out[name] = _perplexity_of(mine, theirs, changed, max_ratio, alpha)
    return out


def _perplexity_of(
    new_ppl: Any, old_ppl: Any, changed: list[str], max_ratio: float, alpha: float
) -> PerplexityComparison:
    baseline = old_ppl.get("value") if old_ppl else None
    value = new_ppl.get("value") if new_ppl else None
    out: PerplexityComparison = {
        "baseline": baseline,
        "value": value,
        "ratio": None,
        "max_ratio": max_ratio,
        "comparable": True,
        "reason": None,
    }
    if not (isinstance(baseline, int | float) and baseline > 0) or value is None:
        out.update(
            {"status": "missing", "comparable": False, "reason": "perplexity missing from one of the runs"}
        )
    elif changed:
        out.update(
            {
                "status": "not_comparable",
                "comparable": False,
                "reason": f"{' and '.join(changed)} differ: "
                "perplexities over different tokens are not comparable",
            }
        )
    else:
        out["ratio"] = ratio = value / baseline
        out.update(_perplexity_test(new_ppl, old_ppl, max_ratio, alpha, ratio))
    return out


def _perplexity_test(
    new: Any, old: Any, max_ratio: float, alpha: float, ratio: float
) -> PerplexityComparison:
    """The paired per-sentence test by betting (gate/perplexity_test.py), else the bare ratio rule.

    The ratio is the tolerance (docs/gate.md "Perplexity"): with per-sentence NLLs on both sides
    the check fails only when the increase is significantly above log(max_ratio), its p-value
    adjusted in the gated slices' family (`_family`, which sets the final status); an older
    baseline without them (or sentences that do not pair) falls back to "ratio > max_ratio",
    with a note saying why, and stays outside the family (it has no p-value).
    """
    problem = perplexity_test.pairing_problem(new, old)
    if problem is not None:
        return {
            "test": "ratio",
            "note": f"{problem}: gated by the ratio alone",
            "status": "regressed" if ratio > max_ratio else "ok",
        }
    res = perplexity_test.betting_test(
        new["sentence_nll"], old["sentence_nll"], old["sentence_tokens"], max_ratio
    )
    return {
        "test": res["test"],
        "n_sentences": res["n_sentences"],
        "nll_increase": res["nll_increase"],
        "p_value": res["p_value"],
        # no interval: a valid upper bound would need an upper bound on a sentence's NLL, and
        # the keys stay (null) for readers of the t-test's results
        "ratio_low": None,
        "ratio_high": None,
        "interval_level": None,
        "status": "regressed" if res["p_value"] < alpha else "ok",  # provisional: `_family` decides
    }


def _tested_perplexities(
    ppl: PerplexityComparison, suites: dict[str, PerplexityComparison]
) -> dict[str, PerplexityComparison]:
    """The perplexity checks with a p-value (the betting test ran), by a family key no slice key
    can take (slice keys never start with a space)."""
    named = {" perplexity": ppl, **{f" suite_perplexity:{k}": v for k, v in suites.items()}}
    return {k: v for k, v in named.items() if isinstance(v.get("p_value"), int | float)}


def _scored(outcome: dict[str, Any]) -> bool:
    # A scored entry always carries a boolean; one without is not evidence either way.
    return outcome.get("status") == STATUS_SCORED and isinstance(outcome.get("correct"), bool)


def _paired(entry: dict[str, Any]) -> bool:
    # Ordinal probes are reported apart (scoring/ordinal.py): never paired, gated or listed as flipped.
    return _scored(entry) and not is_ordinal(entry)


def _slice_row(
    ids: list[str], new: dict, old: dict, rules: GateRules, status: SliceStatus, tolerance: float
) -> SliceComparison:
    n = len(ids)
    b = sum(1 for i in ids if old[i]["correct"] and not new[i]["correct"])
    c = sum(1 for i in ids if not old[i]["correct"] and new[i]["correct"])
    if n == 0:
        return {
            "n_shared": n,
            "b": b,
            "c": c,
            "baseline_accuracy": None,
            "accuracy": None,
            "delta": None,
            "wilson_low": None,
            "wilson_high": None,
            "p_value": None,
            "p_mcnemar": None,
            "disagreement": None,
            "mde": None,
            "status": status,
        }
    base_acc = sum(1 for i in ids if old[i]["correct"]) / n
    k_new = sum(1 for i in ids if new[i]["correct"])
    lo, hi = wilson_interval(k_new, n, rules.z)
    # The gate's p-value tests the promise "drops up to the tolerance are never a regression"
    # (gate/noninferiority.py); McNemar's "no change" p-value stays beside it for reference.
    row: SliceComparison = {
        "n_shared": n,
        "b": b,
        "c": c,
        "baseline_accuracy": base_acc,
        "accuracy": k_new / n,
        "delta": (c - b) / n,
        "wilson_low": lo,
        "wilson_high": hi,
        "p_value": noninferiority.pvalue(b, c, n, tolerance),
        "p_mcnemar": mcnemar_exact_one_sided(b, c),
        "disagreement": (b + c) / n,
        "status": status,
    }
    if rules.rule == "wilson":
        row["mde"] = mde_wilson(n, base_acc, rules.z, tolerance)
    return row


def _shared(x: float | None) -> float:
    """A number every slice that shares probes has (`_slice_row`): only such a slice is gated."""
    if x is None:
        raise AssertionError("a gated slice lacks a number that only an empty slice lacks")
    return x


def _regressed(row: SliceComparison, rules: GateRules, tolerance: float) -> bool:
    if rules.rule == "wilson":
        return _shared(row["baseline_accuracy"]) > _shared(row["wilson_high"]) + tolerance
    drop = -_shared(row["delta"])
    return _shared(row["p_adjusted"]) < rules.alpha and exceeds(drop, tolerance)


def _tolerance(row: SliceComparison, rules: GateRules) -> float:
    return row.get("tolerance", rules.tolerance)


def _adjusted(
    rows: dict[str, SliceComparison],
    gated: list[str],
    members: dict[str, list[str]],
    rules: GateRules,
    flips: dict[str, int],
    others: dict[str, float],
) -> dict[str, float]:
    """The gated slices' and the tested perplexities' (`others`) p-values adjusted across one
    family (docs/gate.md "Multiplicity"). Holm over all of them; or Westfall–Young step-down
    min-P over the slices' shared probes (gate/westfall_young.py), `flips` (each paired probe's
    change) giving it the sign-flip null at tolerance 0, joined with the perplexities by
    Bonferroni between the two blocks (`westfall_young.with_others`)."""
    raw = {k: _shared(rows[k]["p_value"]) for k in gated}
    tolerances = {k: _tolerance(rows[k], rules) for k in gated}
    if (
        rules.multiplicity != westfall_young.METHOD
        or not gated
        or westfall_young.too_large({k: members[k] for k in gated}, tolerances, flips)
    ):
        return holm({**raw, **others})
    within = westfall_young.adjust(
        raw,
        {k: members[k] for k in gated},
        {k: (rows[k]["b"], rows[k]["c"]) for k in gated},
        tolerances,
        flips,
    )
    return westfall_young.with_others(within, others)


def _undecided(row: SliceComparison, tolerance: float) -> bool:
    """A gated slice its test did not flag, whose observed drop is beyond its tolerance and which
    is low power: the test cannot tell a real drop from noise there (docs/gate.md, "Verdict")."""
    return bool(row.get("underpowered")) and exceeds(-_shared(row["delta"]), tolerance)


def _inconclusive_entry(
    key: str,
    row: SliceComparison,
    rules: GateRules,
    level: float,
    background: float,
    deff: float | None,
) -> Inconclusive:
    """`comparison.inconclusive`'s entry of one undecided slice: its numbers and what would make
    it decidable (the items it would need for that drop, or the clusters its level asks for)."""
    tolerance = _tolerance(row, rules)
    drop = -_shared(row["delta"])
    entry: Inconclusive = {
        "slice": key,
        "why": inconclusive.LOW_POWER,
        "n": row["n_shared"],
        "drop": drop,
        "tolerance": tolerance,
        "mde": row["mde"],
        "p_value": row["p_value"],
        "p_adjusted": row["p_adjusted"],
    }
    if (floor := floor_of(key, rules.min_accuracy)) is not None:
        entry["floor"] = floor
    if "clusters_needed" in row:
        entry["why"] = inconclusive.TOO_FEW_CLUSTERS
        entry["n_clusters"] = row.get("n_clusters", 0)
        entry["clusters_needed"] = row["clusters_needed"]
        entry["level"] = level
        return entry
    entry["items_needed"] = inconclusive.items_needed(
        drop,
        n_now=row["n_shared"],
        tolerance=tolerance,
        level=level,
        background=background,
        rule=rules.rule,
        baseline_accuracy=row["baseline_accuracy"],
        z=rules.z,
        design_effect=deff,
    )
    return entry


def _ppl_undecided(c: PerplexityComparison) -> bool:
    """A tested perplexity its test did not flag whose observed ratio is beyond the limit.

    Unlike a slice, no power figure can clear it: the betting test's power depends on the
    sentences' spread as well as their number, so there is no MDE to hold against a limit, and
    every such increase is undecided (docs/gate.md, "Verdict", `perplexity_undecided`)."""
    ratio, limit = c.get("ratio"), c.get("max_ratio")
    return isinstance(ratio, int | float) and isinstance(limit, int | float) and ratio > limit


def _perplexity_entry(key: str, c: PerplexityComparison) -> Inconclusive:
    """`comparison.inconclusive`'s entry of an undecided perplexity (`_tested_perplexities`'s
    key: the run's, or a suite's own test set's)."""
    entry: Inconclusive = {
        "slice": None,
        "why": inconclusive.PERPLEXITY_UNDECIDED,
        "n": int(c.get("n_sentences") or 0),
        "drop": None,
        "ratio": c.get("ratio"),
        "max_ratio": c.get("max_ratio"),
        "p_value": c.get("p_value"),
        "p_adjusted": c.get("p_adjusted"),
    }
    suite = key.removeprefix(" suite_perplexity:") if key.startswith(" suite_perplexity:") else None
    if suite is not None:
        entry["suite"] = suite
    return entry


def _unseen_drops(
    rows: dict[str, SliceComparison], rules: GateRules, level: float, background: float, deff: float | None
) -> list[Inconclusive]:
    """The entries of the slices under `gate.min_n` whose observed drop is beyond their tolerance:
    no test was run on them, so the gate did not see that drop (issue 25: a 5-item slice going
    from 5/5 to 0/5 passed, unnamed). A floor does not decide them either: one that held says
    nothing about the drop above it, one that broke fails the run anyway (docs/gate.md,
    "Verdict"). Each says what would make it decidable: the items the test needs for that drop
    (never fewer than the slice's `gate.min_n`)."""
    out: list[Inconclusive] = []
    for key, row in rows.items():
        if row["status"] != "too_small" or not row["n_shared"]:
            continue
        tolerance = _tolerance(row, rules)
        drop = -_shared(row["delta"])
        if not exceeds(drop, tolerance):
            continue
        min_n = rules.min_n_for(key)
        needed = inconclusive.items_needed(
            drop,
            n_now=min_n,
            tolerance=tolerance,
            level=level,
            background=background,
            rule=rules.rule,
            baseline_accuracy=row["baseline_accuracy"],
            z=rules.z,
            design_effect=deff,
        )
        entry: Inconclusive = {
            "slice": key,
            "why": inconclusive.TOO_SMALL,
            "n": row["n_shared"],
            "drop": drop,
            "tolerance": tolerance,
            "min_n": min_n,
            "items_needed": needed,
        }
        if (floor := floor_of(key, rules.min_accuracy)) is not None:
            entry["floor"] = floor
        out.append(entry)
    return out


def _nothing_gated(
    rows: dict[str, SliceComparison], shared: list[str], flips: dict[str, int], rules: GateRules
) -> Inconclusive:
    """The entry of a comparison that gated no slice: how far the largest slice is from `min_n`."""
    sizes = [(r["n_shared"], k) for k, r in rows.items() if r["n_shared"]]
    n_largest, largest = max(sizes, key=lambda t: (t[0], -len(t[1]))) if sizes else (0, None)
    return {
        "slice": None,
        "why": inconclusive.NOTHING_GATED,
        "n": len(shared),
        "drop": sum(flips[i] for i in shared) / len(shared) if shared else None,
        "min_n": rules.min_n_for(largest) if largest else rules.min_n,
        "largest_slice": largest,
        "largest_n": n_largest,
    }


def _refuse_blind_clusters(
    rows: dict[str, SliceComparison], gated: list[str], rules: GateRules, level: float
) -> None:
    """No gated slice has the clusters to reach its level: the gate could not fail on accuracy
    whatever the checkpoint did (issue 25: `gate.cluster: language` passed 97.7% -> 2.3%)."""
    most = max(rows[k].get("n_clusters", 0) for k in gated)
    needed = inconclusive.clusters_needed(level)
    need = f"at least {needed} clusters" if needed else "more clusters than any sign-flip test can use"
    raise BlindClustersError(
        f"gate.cluster: {rules.cluster} leaves every gated slice too few clusters to ever fail: the most "
        f"any of the {len(gated)} gated slices has is {most}, so no p-value can be below "
        f"{inconclusive.smallest_pvalue(most):.3g}, while a slice needs one below {level:.3g} (alpha "
        f"{rules.alpha} over {len(gated)} gated slices) to fail the gate; a slice needs {need}",
        hint="cluster by a finer field (e.g. gate.cluster: verb, or an item dimension with many values), "
        'or unset gate.cluster (docs/gate.md, "Clustered flips")',
    )


def _cluster_inputs(
    entries: list[dict[str, Any]], shared: list[str], new: dict, old: dict, rules: GateRules
) -> tuple[dict[str, int], dict[str, str], ClusterSummary | None]:
    """Signed flips and cluster labels of the paired probes, and `comparison.cluster`.

    With `gate.cluster` set, the summary is always there. Unset, the verb-form probes' `verb` is
    measured anyway, and the summary is added only when it carries a warning (docs/gate.md,
    "Clustered flips"): a run whose flips are not correlated keeps its results byte for byte.
    """
    field = rules.cluster or "verb"
    flips = {i: int(old[i]["correct"]) - int(new[i]["correct"]) for i in shared}
    labels = {i: cluster.cluster_label(new[i], field) for i in shared}
    if not rules.cluster and not any("verb" in e for e in entries):
        return flips, labels, None
    info = cluster.summary(
        field, [flips[i] for i in shared], [labels[i] for i in shared], configured=bool(rules.cluster)
    )
    if not rules.cluster and "warning" not in info:
        return flips, labels, None
    return flips, labels, info  # type: ignore[return-value]


def _clustered(
    key: str,
    ids: list[str],
    flips: dict[str, int],
    labels: dict[str, str],
    field: str,
    row: SliceComparison,
    tolerance: float,
) -> None:
    """The slice's clustered p-value (gate/cluster.py) replaces the per-probe one, which stays
    as `p_unclustered`."""
    d, _ = cluster.cluster_sums([flips[i] for i in ids], [labels[i] for i in ids], tolerance)
    res = cluster.signflip_pvalue(d, seed_key=f"{field}|{key}")
    row["p_unclustered"] = row["p_value"]
    row["p_value"] = res["p_value"]
    row["cluster_test"] = res["cluster_test"]
    row["n_clusters"] = res["n_clusters"]
    row["cluster_draws"] = res["cluster_draws"]
    row["t_cluster"] = res["t_cluster"]


def compare(
    results: dict[str, Any], baseline: dict[str, Any], rules: GateRules, baseline_path: str
) -> Comparison:
    """results.json's "comparison": per gated slice, perplexity, flipped/new/gone probes.

    Raises NotComparableError when the manifests differ, RefusedError when a probe changed
    under the same id or the baseline is not a valid baseline/results document.
    """
    base = _as_view(baseline, baseline_path)
    _as_view(results, "results")
    entries = results["probes"]
    _check_suite_names(results, base, baseline_path)
    templates = (
        suite_templates(results["manifest"], results.get("config")),
        suite_templates(base.manifest, baseline.get("config")),
    )
    _check_comparable(results["manifest"], base.manifest, baseline_path, templates)
    _check_locks(entries, base, baseline_path)

    new_by_id = {e["id"]: e for e in entries}
    shared = [e["id"] for e in entries if _paired(e) and _scored(base.outcomes.get(e["id"], {}))]
    _check_overlap(entries, shared, results["manifest"], base, baseline_path)
    shared_set = set(shared)
    members: dict[str, list[str]] = {}  # slice -> shared ids, in the new run's order
    n_new: dict[str, int] = {}  # slice -> scored probes the baseline does not know
    for e in entries:
        if e["id"] in shared_set:
            for key in slice_keys(e):
                members.setdefault(key, []).append(e["id"])
        elif e["status"] == STATUS_SCORED and e["id"] not in base.outcomes:
            for key in slice_keys(e):
                n_new[key] = n_new.get(key, 0) + 1
    new_slices = scored_slices(entries)
    families = set(rules.slices)
    candidates = sorted(
        (k for k in new_slices | base.slices if k.partition(":")[0] in families), key=slice_sort_key
    )

    flips, labels, cluster_info = _cluster_inputs(entries, shared, new_by_id, base.outcomes, rules)
    rows: dict[str, SliceComparison] = {}
    gated: list[str] = []
    for key in candidates:
        ids = members.get(key, [])
        status: SliceStatus
        if not ids:
            status = "new" if key in new_slices else "too_small"
        elif len(ids) < rules.min_n_for(key):
            status = "too_small"
        else:
            status = "ok"  # provisional: decided below, once every slice's p-value is known
            gated.append(key)
        tolerance = rules.tolerance_for(key)
        rows[key] = _slice_row(ids, new_by_id, base.outcomes, rules, status, tolerance)
        rows[key]["n_new"] = n_new.get(key, 0)
        if rules.cluster and ids:
            _clustered(key, ids, flips, labels, rules.cluster, rows[key], tolerance)
        if tolerance != rules.tolerance:
            # a slice gated with its own tolerance (gate.tolerances, docs/suites.md) says so; the
            # key is absent otherwise, so results without per-slice tolerances keep their bytes
            rows[key]["tolerance"] = tolerance

    # The perplexity checks with a p-value join the slices' family (docs/gate.md, "Perplexity"):
    # tested apart at alpha, a run's false-fail rate would approach twice alpha.
    ppl = _perplexity(results, base, rules.perplexity_max_ratio, rules.alpha)
    suite_ppl = (
        _suite_perplexity(results, base, rules.perplexity_max_ratio, rules.alpha)
        if results.get("suite_perplexity") or base.suite_perplexity
        else None
    )
    tested = _tested_perplexities(ppl, suite_ppl or {})
    # The paired MDE is the test's own (gate/noninferiority.py) at the observed disagreement and
    # at alpha / (gated slices + tested perplexities), the level the first Holm step needs: the
    # level a slice really faces when the whole family competes (docs/gate.md, "Low power").
    mde_level = rules.alpha / max(1, len(gated) + len(tested))
    n_lost = sum(1 for i in shared if flips[i] > 0)
    n_won = sum(1 for i in shared if flips[i] < 0)
    mde_bg = power.background_disagreement(n_lost, n_won, len(shared), rules.assumed_disagreement)
    # Clustered (gate.cluster): probes of a cluster flip together, so a slice holds fewer
    # independent probes than it counts. The MDE uses the effective n = n / design effect
    # (Kish 1965, Survey Sampling, 8.2), the run's own estimate (comparison.cluster); without
    # that, "low power" would be as optimistic as the per-probe test is liberal.
    found = cluster_info.get("design_effect") if cluster_info is not None and rules.cluster else None
    deff = float(found) if isinstance(found, int | float) and found > 1 else None
    for key, row in rows.items():
        # "low power" is gate/power.py's `judge`, the one rule init, validate and `evalgate power`
        # use too (docs/gate.md, "Minimum detectable effect"; issue 25)
        blind = (
            bool(rules.cluster)
            and key in gated
            and not inconclusive.reaches(row.get("n_clusters", 0), mde_level)
        )
        if blind:
            # Too few clusters to ever give a p-value below the first Holm step's level: it can
            # catch no drop at all (docs/gate.md, "Clustered flips"), so it has no MDE.
            row["clusters_needed"] = inconclusive.clusters_needed(mde_level)
        judged = (
            power.judge(
                row["n_shared"],
                tolerance=_tolerance(row, rules),
                level=mde_level,
                background=mde_bg,
                rules=rules,
                baseline_accuracy=row["baseline_accuracy"],
                design_effect=deff,
                reaches=not blind,
            )
            if row["n_shared"]
            else None
        )
        if judged is not None:
            row["mde"] = judged.mde
        # A slice that cannot reliably catch an `mde_max` drop is still gated: the exact test keeps
        # its false alarms at alpha, and left ungated, 60 probes going from all right to all wrong
        # would pass. It is marked `underpowered`, so a pass there reads as weak evidence, and a
        # drop beyond its tolerance that its test cannot decide makes the run inconclusive.
        row["underpowered"] = judged is not None and judged.low_power
    if rules.cluster and gated and all("clusters_needed" in rows[k] for k in gated):
        _refuse_blind_clusters(rows, gated, rules, mde_level)
    fallback = (
        westfall_young.too_large(
            {k: members[k] for k in gated}, {k: _tolerance(rows[k], rules) for k in gated}, flips
        )
        if rules.rule == "paired" and rules.multiplicity == westfall_young.METHOD
        else None
    )
    others = {k: float(c["p_value"]) for k, c in tested.items()}  # type: ignore[arg-type]
    # the Wilson rule has no p-values for its slices: its perplexities are a family of their own
    adjusted = (
        _adjusted(rows, gated, members, rules, flips, others) if rules.rule == "paired" else holm(others)
    )
    for k, c in tested.items():
        c["p_adjusted"] = adjusted[k]
        c["status"] = "regressed" if adjusted[k] < rules.alpha else "ok"
        if c["status"] == "ok" and _ppl_undecided(c):
            # an increase beyond the limit the betting test could not tell from sentence noise:
            # never a green check for it (docs/gate.md, "Verdict")
            c["status"] = "inconclusive"
    for key, row in rows.items():
        row["gated"] = key in gated
        row["p_adjusted"] = adjusted.get(key)
        if row["gated"]:
            tolerance = _tolerance(row, rules)
            if _regressed(row, rules, tolerance):
                row["status"] = "regressed"
            elif _undecided(row, tolerance):
                # a floor that held does not decide it: a floor makes a collapse fail, it cannot
                # tell a drop above it from noise (docs/gate.md, "Verdict"); a broken floor
                # fails the run in pipeline.gate, and fail dominates inconclusive
                row["status"] = "inconclusive"
            else:
                row["status"] = "ok"
    undecided = [
        _inconclusive_entry(k, r, rules, mde_level, mde_bg, deff)
        for k, r in rows.items()
        if r["status"] == "inconclusive"
    ]
    if not gated and not rules.min_accuracy:
        undecided.append(_nothing_gated(rows, shared, flips, rules))
    undecided += [_perplexity_entry(k, c) for k, c in tested.items() if c["status"] == "inconclusive"]
    undecided += _unseen_drops(rows, rules, mde_level, mde_bg, deff)

    old = base.outcomes
    return {
        "baseline": baseline_path,
        "baseline_name": base.name,
        "rule": "wilson" if rules.rule == "wilson" else "paired",
        "thresholds": {
            "alpha": rules.alpha,
            "tolerance": rules.tolerance,
            "min_n": rules.min_n,
            "mde_max": rules.mde_max,
            "z": rules.z,
            "perplexity_max_ratio": rules.perplexity_max_ratio,
            "assumed_disagreement": rules.assumed_disagreement,
        },
        "n_paired": len(shared),
        "test": "noninferiority-exact-unconditional" if rules.rule == "paired" else "wilson",
        "mde_level": mde_level if rules.rule == "paired" else None,
        "mde_disagreement": mde_bg if rules.rule == "paired" else None,
        **({"mde_design_effect": round(deff, 4)} if deff and rules.rule == "paired" else {}),
        # present only when gate.multiplicity is set, so results of a configuration without it
        # keep their bytes (absent: Holm)
        **(
            {"multiplicity": "westfall-young" if rules.multiplicity == westfall_young.METHOD else "holm"}
            if rules.rule == "paired" and rules.multiplicity
            else {}
        ),
        **(
            {"multiplicity_null": westfall_young.null_kind({k: _tolerance(rows[k], rules) for k in gated})}
            # a family of one slice is not adjusted at all: no null to name
            if rules.rule == "paired"
            and rules.multiplicity == westfall_young.METHOD
            and len(gated) > 1
            and not fallback
            else {}
        ),
        # present only when Westfall-Young fell back to Holm for its memory bound (docs/gate.md,
        # "Multiplicity"), so results that did not keep their bytes
        **({"multiplicity_fallback": fallback} if fallback else {}),
        "slices": rows,
        **({"cluster": cluster_info} if cluster_info is not None else {}),
        "regressed": [k for k, r in rows.items() if r["status"] == "regressed"],
        # present only when the gate could not decide something (docs/gate.md, "Verdict"), so a
        # decided run keeps its bytes
        **({"inconclusive": undecided} if undecided else {}),
        "perplexity": ppl,
        **({"suite_perplexity": suite_ppl} if suite_ppl is not None else {}),
        "flipped": {
            "right_to_wrong": [i for i in shared if old[i]["correct"] and not new_by_id[i]["correct"]],
            "wrong_to_right": [i for i in shared if not old[i]["correct"] and new_by_id[i]["correct"]],
        },
        "new_probes": [e["id"] for e in entries if e["status"] != STATUS_DEPRECATED and e["id"] not in old],
        "gone_probes": sorted(i for i in old if i not in new_by_id),
        "deprecated": [e["id"] for e in entries if e["status"] == STATUS_DEPRECATED and e["id"] in old],
        "unpaired": [
            {"id": e["id"], "baseline_status": old[e["id"]]["status"], "status": e["status"]}
            for e in entries
            if e["id"] in old
            and e["status"] != STATUS_DEPRECATED
            and not is_ordinal(e)
            and not (_scored(e) and _scored(old[e["id"]]))
        ],
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def verdict(comparison: dict[str, Any] | None) -> tuple[str, list[str]]:
    """("pass" | "fail" | "inconclusive", reasons) of a comparison alone (docs/gate.md, "Verdict").

    A regression fails, with one reason per regressed slice or perplexity; otherwise a slice the
    gate could not decide (or a comparison that gated nothing) makes it inconclusive, with one
    reason per `comparison.inconclusive` entry; otherwise it passes. `pipeline.gate` adds the
    floors and the perplexity holds between the two: fail dominates inconclusive, which
    dominates pass.
    """
    if not comparison:
        return "pass", []
    reasons = regression_reasons(comparison)
    if reasons:
        return "fail", reasons
    undecided = inconclusive_reasons(comparison)
    return ("inconclusive", undecided) if undecided else ("pass", [])


def _head(key: str, r: Mapping[str, Any]) -> str:
    return (
        f"{key}: accuracy {_pct(r['baseline_accuracy'])} → {_pct(r['accuracy'])} "
        f"({100 * r['delta']:+.1f} points) on {r['n_shared']} shared probes"
    )


def regression_reasons(comparison: Mapping[str, Any]) -> list[str]:
    """One human reason per regressed slice or perplexity regression."""
    t = comparison["thresholds"]
    reasons = []
    for key, r in comparison["slices"].items():
        if r["status"] != "regressed":
            continue
        head = _head(key, r)
        if comparison["rule"] == "wilson":
            reasons.append(
                f"{head}; the baseline lies above the new Wilson upper bound {_pct(r['wilson_high'])} "
                f"+ tolerance {_pct(r.get('tolerance', t['tolerance']))}"
            )
        else:
            test = "exact test"
            if r.get("cluster_test"):
                test = f"sign-flip test over {r['n_clusters']} {comparison['cluster']['field']} clusters"
            reasons.append(
                f"{head}; {r['b']} right → wrong vs {r['c']} wrong → right, {test} of a drop above "
                f"the tolerance {_pct(r.get('tolerance', t['tolerance']))} p {p_is(r['p_value'])}, "
                f"{westfall_young.adjustment_name(comparison)}-adjusted "
                f"{p_is(r['p_adjusted']).removeprefix('= ')}, below alpha {t['alpha']}"
            )
    named = [("", comparison.get("perplexity") or {})]
    named += [(f"{name}: ", c) for name, c in (comparison.get("suite_perplexity") or {}).items()]
    for prefix, ppl in named:
        if ppl.get("status") != "regressed":
            continue
        why = f"(×{ppl['ratio']:.3f}, limit ×{ppl['max_ratio']:.2f}"
        if ppl.get("p_value") is not None:
            why += (
                f"; paired test of an increase above the limit over {ppl['n_sentences']} sentences "
                f"p {p_is(ppl['p_value'])}"
            )
            if ppl.get("p_adjusted") is not None:
                name = westfall_young.adjustment_name(comparison)
                why += f", {name}-adjusted {p_is(ppl['p_adjusted']).removeprefix('= ')}"
            why += f", below alpha {t['alpha']}"
            if ppl.get("ratio_low") is not None and ppl.get("ratio_high") is not None:
                why += (
                    f", {100 * ppl['interval_level']:.0f}% interval "
                    f"×{ppl['ratio_low']:.3f}–×{ppl['ratio_high']:.3f}"
                )
        reasons.append(f"{prefix}perplexity rose {ppl['baseline']:.3f} → {ppl['value']:.3f} {why})")
    return reasons


def _points(x: float | None) -> str:
    return "?" if x is None else f"{100 * x:.1f}"


def inconclusive_reasons(comparison: Mapping[str, Any]) -> list[str]:
    """One human reason per `comparison.inconclusive` entry: what the gate could not decide and
    what would make it decidable. Never an all-clear: each names what was not judged."""
    t = comparison["thresholds"]
    rows = comparison.get("slices") or {}
    out = []
    for entry in comparison.get("inconclusive") or []:
        why = entry.get("why")
        if why == inconclusive.NOTHING_GATED:
            largest = entry.get("largest_slice")
            biggest = (
                f"the largest, {largest}, shares {entry.get('largest_n', 0)}"
                if largest
                else "no slice shares any"
            )
            drop = entry.get("drop")
            moved = (
                # + 0.0: no "-0.0" when nothing moved
                f"; on the {entry['n']} paired probes accuracy moved {-100 * drop + 0.0:+.1f} points"
                if isinstance(drop, int | float)
                else ""
            )
            out.append(
                f"nothing was gated: no slice shares gate.min_n ({entry.get('min_n')}) probes with the "
                f"baseline ({biggest}){moved}; lower gate.min_n, set a floor (gate.min_accuracy) or add "
                "items to decide"
            )
            continue
        if why == inconclusive.PERPLEXITY_UNDECIDED:
            out.append(_perplexity_undecided_reason(entry, comparison))
            continue
        key = entry["slice"]
        r = rows.get(key) or {}
        head = _head(key, r) if r else f"{key}: a drop of {_points(entry.get('drop'))} points"
        tol = _pct(entry.get("tolerance", t["tolerance"]))
        floor = entry.get("floor")
        held = (
            f"; its floor gate.min_accuracy held (≥ {_pct(floor)}), "
            "but a floor does not decide a drop above it"
            if isinstance(floor, int | float)
            else ""
        )
        if why == inconclusive.TOO_SMALL:
            needed = entry.get("items_needed")
            need = (
                f"about {needed:,} shared probes"
                if needed is not None
                else f"over {inconclusive.ITEMS_CAP:,} shared probes"
            )
            out.append(
                f"{head}, beyond the tolerance {tol} but not tested: under gate.min_n "
                f"({entry.get('min_n')}){held}; decidable with {need}"
                + (
                    ""
                    if isinstance(floor, int | float)
                    else " or a floor (gate.min_accuracy) to fail a collapse"
                )
            )
            continue
        if why == inconclusive.TOO_FEW_CLUSTERS:
            needed = entry.get("clusters_needed")
            field = (comparison.get("cluster") or {}).get("field", "cluster")
            k = entry.get("n_clusters", 0)
            out.append(
                f"{head}, beyond the tolerance {tol} but undecided: {k} {field} clusters give no p-value "
                f"below {inconclusive.smallest_pvalue(k):.3g}, failing needs one below "
                f"{entry['level']:.3g}{held}; "
                + (
                    f"decidable with {needed} clusters (a finer gate.cluster)"
                    if needed
                    else "decidable with a finer gate.cluster"
                )
                + " or a floor (gate.min_accuracy)"
            )
            continue
        if comparison.get("rule") == "wilson":
            test = "the baseline is within the new Wilson upper bound + tolerance"
        else:
            adjusted = entry.get("p_adjusted")
            shown = "unknown" if adjusted is None else p_is(adjusted)
            test = f"{westfall_young.adjustment_name(comparison)}-adjusted p {shown}"
        mde = entry.get("mde")
        power = (
            f"MDE {_points(mde)} points, above gate.mde_max {_points(t['mde_max'])}"
            if mde is not None
            else "no MDE"
        )
        needed = entry.get("items_needed")
        fixes = []
        if needed is not None and needed > entry["n"]:
            fixes.append(f"about {needed:,} shared probes")
        elif needed is None:
            fixes.append(f"over {inconclusive.ITEMS_CAP:,} shared probes")
        if comparison.get("rule") != "wilson" and _wilson_flags(r, entry.get("tolerance", t["tolerance"])):
            # only where the Wilson rule would flag this very drop (issue 25: the hint was false)
            fixes.append("rule: wilson")
        if not isinstance(floor, int | float):
            fixes.append("a floor (gate.min_accuracy) to fail a collapse")
        fixes = fixes or ["more shared probes"]
        decidable = fixes[0] if len(fixes) == 1 else f"{', '.join(fixes[:-1])} or {fixes[-1]}"
        out.append(
            f"{head}, beyond the tolerance {tol} but undecided ({test}; low power: {power}){held}; "
            f"decidable with {decidable}"
        )
    return out


def _perplexity_undecided_reason(entry: Mapping[str, Any], comparison: Mapping[str, Any]) -> str:
    """The reason of a `perplexity_undecided` entry: the increase, the test's p-values and what
    would decide it (more test sentences, docs/gate.md "Perplexity": a few hundred)."""
    suite = entry.get("suite")
    ppl: Mapping[str, Any] = (
        ((comparison.get("suite_perplexity") or {}).get(suite) or {})
        if suite is not None
        else (comparison.get("perplexity") or {})
    )
    prefix = f"{suite}: " if suite is not None else ""
    ratio, limit = entry.get("ratio"), entry.get("max_ratio")
    rose = (
        f"perplexity rose {ppl['baseline']:.3f} → {ppl['value']:.3f} "
        if isinstance(ppl.get("baseline"), int | float) and isinstance(ppl.get("value"), int | float)
        else "perplexity rose "
    )
    adjusted = entry.get("p_adjusted")
    shown = "unknown" if adjusted is None else p_is(adjusted).removeprefix("= ")
    p = entry.get("p_value")
    return (
        f"{prefix}{rose}(×{ratio:.3f}, limit ×{limit:.2f}) over {entry['n']:,} sentences, beyond the "
        f"limit but undecided (paired test by betting p {'unknown' if p is None else p_is(p)}, "
        f"{westfall_young.adjustment_name(comparison)}-adjusted {shown}, not below alpha "
        f"{comparison['thresholds']['alpha']}: too few sentences to tell the increase from sentence "
        "noise); decidable with a larger perplexity test set (a few hundred sentences)"
    )


def _wilson_flags(row: Mapping[str, Any], tolerance: float) -> bool:
    """Would `rule: wilson` flag this slice's observed numbers: the baseline above the new Wilson
    upper bound + tolerance (`_regressed`)?"""
    base, high = row.get("baseline_accuracy"), row.get("wilson_high")
    return isinstance(base, int | float) and isinstance(high, int | float) and base > high + tolerance
