"""Fixed fake runs for the renderer tests: results dicts built with the real aggregation and comparison.

`fake_run()` is the golden case: a ~100-probe bilingual set scored twice (baseline, new) with a
deterministic pattern of right and wrong answers, so that the Spanish past tense regresses; it
carries every optional part the report knows (gate changes, leak exclusion with both series,
an ordinal probe, new probes, a validation warning). `no_baseline_run()` and `refused_run()` are
the other two shapes. Nothing here is random: the same call gives the same dict.
"""

from __future__ import annotations

import copy
from typing import Any

from evalgate.gate import results as results_mod
from evalgate.gate.compare import compare, verdict
from evalgate.gate.slices import aggregate
from evalgate.types import PERSONS, TENSES
from helpers.factories import make_entry, make_results, make_rules

VERBS = {
    "en": [("work", "regular"), ("play", "regular"), ("go", "irregular"), ("eat", "irregular")],
    "es": [("hablar", "regular"), ("comer", "regular"), ("ir", "irregular"), ("tener", "irregular")],
}
FORMS = {"en": ("works", "work"), "es": ("habla", "hablar")}
ADVERSARIAL = ("PAST-IRREG", "PRES-3SG-S", "TENSE-MARKER", "AUX-MISMATCH", "EN-ES-MISMATCH")


def core_entries(new: bool) -> list[dict[str, Any]]:
    """120 core probes; in the new run most Spanish past-tense probes turn wrong."""
    entries = []
    i = 0
    for language, verbs in VERBS.items():
        for verb, regularity in verbs:
            for tense in TENSES:
                for person in PERSONS:
                    pid = f"probe-{language}-{verb}-{tense}-{person}-{i:03d}"
                    right = (i * 7) % 10 < 8  # 80% right in both runs
                    if new and language == "es" and tense in ("past_simple", "past_participle"):
                        right = i % 4 == 0
                    prompt = (
                        f"Yesterday she ___ ({verb}, {tense})."
                        if language == "en"
                        else f"Ayer ella ___ ({verb})."
                    )
                    entries.append(
                        make_entry(
                            pid,
                            right,
                            language=language,
                            verb=verb,
                            regularity=regularity,
                            tense=tense,
                            person=person,
                            prompt=prompt,
                            candidates=FORMS[language],
                            source="generated" if i % 5 else "hand",
                            margin=0.2 if i % 9 == 0 else 2.0,
                        )
                    )
                    i += 1
    return entries


def adversarial_entries() -> list[dict[str, Any]]:
    out = []
    for k, code in enumerate(ADVERSARIAL):
        for j in range(4):
            out.append(
                make_entry(
                    f"adv-{code.lower()}-{j}",
                    (k + j) % 3 != 0,
                    category="adversarial",
                    reason_code=code,
                    tense="past_simple",
                    regularity="irregular",
                    verb="go",
                    prompt="Yesterday he ___ home.",
                    candidates=("went", "goed"),
                    source="hand",
                )
            )
    out.append(
        make_entry(
            "adv-plural-oos-0",
            None,
            category="adversarial",
            reason_code="PLURAL-OOS",
            label="ambiguous",
            status="ambiguous",
            prompt="You ___ hard.",
            candidates=("work", "works"),
            margin=0.1,
        )
    )
    out.append(make_entry("probe-en-oov-001", None, status="model_oov", candidates=("works", "wørks")))
    out.append(make_entry("probe-en-old-001", None, status="deprecated"))
    return out


def ordinal_entry() -> dict[str, Any]:
    e = make_entry(
        "ord-accept-001",
        True,
        prompt="How acceptable is 'she goed'? ___",
        candidates=("1", "2", "3", "4", "5"),
    )
    scores = [-1.0, -1.2, -2.5, -3.0, -3.5]
    e["kind"] = "ordinal"
    e["candidates"] = [
        {
            "text": str(k + 1),
            "continuation": f" {k + 1}",
            "loglik": s,
            "n_tokens": 1,
            "score": s,
            "surprisal": -s,
        }
        for k, s in enumerate(scores)
    ]
    e.update(expected="1", pred="1", correct=True, confidence=0.41, entropy=1.3, entropy_norm=0.81)
    return e


def _with_comparison(results: dict[str, Any], baseline: dict[str, Any]) -> dict[str, Any]:
    comparison = compare(results, baseline, make_rules(mde_max=0.3), "baselines/demo.json")
    out = dict(results)
    out["comparison"] = comparison
    out["verdict"], out["reasons"] = verdict(comparison)
    out["inputs"] = {
        **results["inputs"],
        "baselines/demo.json": {"sha256": "5" * 64, "bytes": 4321, "role": "baseline"},
        "evalgate.yml": {"sha256": "6" * 64, "bytes": 2100, "role": "config"},
        "data/eval/probe_prompt.txt": {"sha256": "7" * 64, "bytes": 9, "role": "template"},
    }
    return results_mod.round_floats(out)


def fake_run() -> dict[str, Any]:
    """The golden case: a failing comparison with every optional section present."""
    base_entries = core_entries(new=False) + adversarial_entries()
    baseline = make_results(base_entries, perplexity=12.5)
    new_entries = core_entries(new=True) + adversarial_entries()
    new_entries.append(make_entry("probe-en-new-001", True, source="hand"))
    new_entries.append(ordinal_entry())
    # leaks: exclude — two probes overlap the training corpus: the full series keeps them
    full = aggregate(copy.deepcopy(new_entries), 1.96)
    excluded = [new_entries[0]["id"], new_entries[70]["id"]]
    for e in new_entries:
        if e["id"] in excluded:
            e["status"] = "excluded"
    results = make_results(new_entries, perplexity=14.2)
    results["perplexity"]["file"] = "data/corpus/test.jsonl"
    results["slices_full"] = full["slices"]
    results["leaks"] = results_mod.leak_summary(new_entries, excluded, "exclude")
    results["warnings"] = [
        {
            "check": "twin",
            "message": "prompt duplicates probe-en-work-future-003 (ignoring case and spaces)",
            "file": "data/eval/probes.jsonl",
            "line": 12,
            "probe_id": "probe-en-play-future-008",
            "field": "prompt",
        }
    ]
    results = _with_comparison(results, baseline)
    results["gate_changes"] = (
        "--- a/evalgate.yml\n+++ b/evalgate.yml\n@@ -40,3 +40,3 @@\n gate:\n-  alpha: 0.05\n+  alpha: 0.001\n"
    )
    return results


def no_baseline_run() -> dict[str, Any]:
    results = make_results(core_entries(new=False) + adversarial_entries())
    results["comparison"] = None
    return results


def refused_run() -> dict[str, Any]:
    findings = [
        {
            "check": "schema",
            "message": "'tense' is a required property",
            "file": "data/eval/probes.jsonl",
            "line": 3,
            "probe_id": "probe-go-past-3sg-001",
            "field": "tense",
            "hint": "add the missing field (see the probe schema)",
        },
        {
            "check": "schema",
            "message": "'futur' is not one of the tenses",
            "file": "data/eval/probes.jsonl",
            "line": 9,
            "probe_id": "probe-eat-fut-1sg-002",
            "field": "tense",
        },
        {
            "check": "leak-ngram",
            "message": "shares the 5-gram 'to the office every day' with a training sentence",
            "file": "data/eval/probes.jsonl",
            "line": 17,
            "probe_id": "probe-work-pres-3sg-004",
            "field": "prompt",
            "hint": "rewrite the probe or deprecate it and add a replacement",
            "evidence": {"train": "data/corpus/train.jsonl:5121", "ngram": "to the office every day"},
        },
        {"check": "coverage", "message": "tense:future has 7 core probes, needs 10 (3 short)"},
    ]
    return results_mod.assemble_refused(
        reasons=["the probe set is invalid: 4 problem(s); nothing was scored"],
        findings=findings,
        inputs={"data/eval/probes.jsonl": {"sha256": "1" * 64, "bytes": 1000, "role": "probes"}},
        config_pin={"gate": make_rules().__dict__ | {"slices": list(make_rules().slices)}},
    )
