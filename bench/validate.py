"""Benchmark: a full `validate` of 10,000 probes against a 100,000-sentence corpus (target < 10 s).

    .venv/bin/python bench/validate.py [--probes 10000] [--sentences 100000] [--seed 0]
                                       [--import-rows 100000]

Then the leak phase of a multiple-choice suite (`--items` items, the same number of sentences, a
fifth of them sharing the items' boilerplate window, leaks planted behind them): time, and the
memory of the index with and without its word postings (docs/validate.md, "Leaks").

Then the first pass of `probes import --from mmlu` on an export of `--import-rows` rows, as a JSON
array and as JSONL: reading, element lines and converting must be linear, so the two take about
the same time (docs/probes.md, "Bounded work").

Builds a synthetic probe set from the real verb table and a synthetic corpus in a temporary
folder, then times `evalgate.probeset_io.validate` end to end (reading, JSONL, schema, semantics,
leak index and detectors, coverage) and the leak phase alone. A benchmark, not a test: it prints
numbers and the ratio to the target; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from evalgate.config import load_config  # noqa: E402
from evalgate.probeset.corpus import read_sentences  # noqa: E402
from evalgate.probeset.grammar import grammar_from_dict  # noqa: E402
from evalgate.probeset.import_map import PRESETS, array_element_lines, convert, read_rows  # noqa: E402
from evalgate.probeset.leaks import LeakIndex, find_leaks  # noqa: E402
from evalgate.probeset_io import validate  # noqa: E402
from evalgate.types import PERSONS, TENSES, Probe  # noqa: E402

TARGET_SECONDS = 10.0
SUBJECTS = {"en": {"1sg": "I", "2sg": "you", "3sg": "she"}, "es": {"1sg": "yo", "2sg": "tú", "3sg": "ella"}}
CODES = ["PAST-IRREG", "PRES-3SG-S", "TENSE-MARKER", "AUX-MISMATCH", "EN-ES-MISMATCH", "PLURAL-OOS"]


def words(rng: random.Random, n: int) -> str:
    # a large made-up vocabulary, so that random sentences rarely share five tokens with a probe
    return " ".join(f"w{rng.randrange(50_000)}" for _ in range(n))


def build(root: Path, n_probes: int, n_sentences: int, seed: int) -> None:
    rng = random.Random(seed)
    grammar = grammar_from_dict(yaml.safe_load((REPO / "data/grammar/verbs.yaml").read_text("utf-8")))
    verbs = [v for lang in ("en", "es") for v in grammar.of_language(lang)]
    (root / "data/eval").mkdir(parents=True)
    (root / "data/corpus").mkdir(parents=True)
    (root / "data/grammar").mkdir(parents=True)
    shutil.copy(REPO / "data/grammar/verbs.yaml", root / "data/grammar/verbs.yaml")
    n_adv = n_probes // 5
    core, adv = [], []
    for i in range(n_probes):
        v = rng.choice(verbs)
        tense, person = rng.choice(TENSES), rng.choice(PERSONS)
        right = v.form(tense, person)
        wrong = sorted({v.form(t, p) for t in TENSES for p in PERSONS} - {right})[:3] or [right + "x"]
        is_adv = i < n_adv
        rec = {
            "id": f"bench-{i:06d}",
            "language": v.language,
            "verb": v.infinitive,
            "regularity": v.regularity,
            "tense": tense,
            "person": person,
            "prompt": f"{words(rng, 2)} {SUBJECTS[v.language][person]} ___ {words(rng, 4)}.",
            "candidates": [right, *wrong],
            "expected": right,
            "label": "correct",
            "category": "adversarial" if is_adv else "core",
            "source": "generated",
        }
        if is_adv:
            rec["reason_code"] = CODES[i % len(CODES)]
        (adv if is_adv else core).append(rec)
    for name, recs in (("probes.jsonl", core), ("adversarial.jsonl", adv)):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)
        (root / "data/eval" / name).write_text(text, encoding="utf-8")
    (root / "data/eval/probe_prompt.txt").write_text("{prompt}\n", encoding="utf-8")
    # three verbatim copies of probes among the sentences, so that the detectors also hit at scale
    planted = [r["prompt"].replace("___", r["expected"]) for r in core[:3]]
    lines = [json.dumps({"text": words(rng, rng.randint(5, 14)) + "."}) for _ in range(n_sentences - 3)]
    lines[1000:1000] = [json.dumps({"text": t}, ensure_ascii=False) for t in planted]
    (root / "data/corpus/train.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = {
        "train": ["data/corpus/train.jsonl"],
        "coverage": {"adversarial_per_category_max": n_probes, "adversarial_categories": CODES},
    }
    (root / "evalgate.yml").write_text(yaml.safe_dump(config), encoding="utf-8")


def time_import(n_rows: int) -> None:
    """Pass 1 of an MMLU import of `n_rows` rows, as a JSON array and as JSONL."""
    rows = [
        {"question": f"Which choice answers question number {i}?", "subject": f"s{i % 57}",
         "choices": [f"a{i}", f"b{i}", f"c{i}", f"d{i}"], "answer": i % 4}
        for i in range(n_rows)
    ]  # fmt: skip
    for name, data in (
        ("json array", json.dumps(rows, indent=1).encode()),
        ("jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode()),
    ):
        start = time.perf_counter()
        read, _ = read_rows(data, "export")
        convert(read, PRESETS["mmlu"], file="export", id_prefix="quiz-export", dims=["subject"])
        if name == "json array":
            array_element_lines(data)
        took = time.perf_counter() - start
        print(f"import {name:10s} {took:6.2f} s   {n_rows / took:,.0f} rows/s ({n_rows:,} rows, pass 1)")


def time_item_leaks(n_items: int, n_sentences: int, seed: int) -> None:
    """A multiple-choice suite's leak phase: every item shares "which city is the capital of" with
    a fifth of the corpus, and 10 leaks are planted behind all of those sentences."""
    rng = random.Random(seed)
    items = [
        Probe.from_item(
            {"id": f"quiz-{i:06d}", "prompt": f"Which city is the capital of c{i}?",
             "candidates": [f"t{i}", "x"], "expected": f"t{i}"},
            "items.jsonl", i + 1,
        )
        for i in range(n_items)
    ]  # fmt: skip
    lines = [
        f"Which city is the capital of k{i}? Ask your teacher."
        if i % 5 == 0
        else words(rng, rng.randint(5, 14))
        for i in range(n_sentences - 10)
    ]
    lines += [f"Which city is the capital of the nation of c{i}? t{i}, of course." for i in range(10)]
    sentences = list(enumerate(lines, start=1))
    sizes = {}
    for by_word in (False, True):
        tracemalloc.start()
        index = LeakIndex(set(), window=5, detectors=("exact", "ngram"), by_word=by_word)
        index.add_all("train.txt", sentences)
        sizes[by_word] = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        del index
    start = time.perf_counter()
    index = LeakIndex(set(), window=5, detectors=("exact", "ngram"), by_word=True)
    index.add_all("train.txt", sentences)
    built = time.perf_counter() - start
    found = find_leaks(items, index)
    took = time.perf_counter() - start
    print(
        f"item leaks:     {took:6.2f} s   (index build {built:.2f} s; {n_items:,} items,"
        f" {n_sentences:,} sentences, {len(found)} of 10 planted leaks found)"
    )
    print(
        f"item index:     {sizes[True] / 2**20:6.1f} MiB  ({sizes[False] / 2**20:.1f} MiB without word"
        f" postings, {(sizes[True] - sizes[False]) / n_sentences:.0f} bytes a sentence more)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probes", type=int, default=10_000)
    ap.add_argument("--sentences", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--import-rows", type=int, default=100_000)
    ap.add_argument("--items", type=int, default=10_000)
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="evalgate-bench-") as tmp:
        root = Path(tmp)
        build(root, ns.probes, ns.sentences, ns.seed)
        cfg = load_config(root / "evalgate.yml")

        start = time.perf_counter()
        outcome = validate(cfg)
        total = time.perf_counter() - start

        # the leak phase alone, on the same data: read the corpus, build the index, check every probe
        start = time.perf_counter()
        data = (root / "data/corpus/train.jsonl").read_bytes()
        sentences, _ = read_sentences(data, "train.jsonl")
        grammar = grammar_from_dict(yaml.safe_load((root / "data/grammar/verbs.yaml").read_text("utf-8")))
        index = LeakIndex(grammar.all_forms(), window=cfg.leaks.window)
        index.add_all("train.jsonl", sentences)
        built = time.perf_counter() - start
        find_leaks(outcome.probes, index)
        leak_total = time.perf_counter() - start

    n = len(outcome.probes)
    print(f"probes: {n:,}  sentences: {ns.sentences:,}  leak findings: {len(outcome.leaks)}")
    print(f"full validate:  {total:6.2f} s   {n / total:,.0f} probes/s")
    rate = n / (leak_total - built)
    print(f"leak phase:     {leak_total:6.2f} s   (index build {built:.2f} s, then {rate:,.0f} probes/s)")
    print(
        f"target:         {TARGET_SECONDS:6.2f} s   ratio {total / TARGET_SECONDS:.2f} (below 1.00 meets it)"
    )
    time_item_leaks(ns.items, ns.sentences, ns.seed)
    time_import(ns.import_rows)


if __name__ == "__main__":
    main()
