#!/usr/bin/env python
"""Build the shipped geography example (examples/geo/) and train its two checkpoints, reproducibly.

    .venv/bin/python scripts/train_example.py               # everything: data, both models, scores
    .venv/bin/python scripts/train_example.py --data-only   # items, template, corpus (seconds)
    .venv/bin/python scripts/train_example.py --score-only  # score the shipped checkpoints

From the fact table examples/geo/facts.csv (country, continent, capital, currency, main language;
an empty cell is a fact that is neither taught nor asked) it writes:

- items.jsonl   multiple-choice items, 4 candidates each, sliced by `topic` and `difficulty`;
- prompt.txt    the suite template, "Question: {prompt}\\nAnswer:";
- train.jsonl   the training corpus: every fact in several phrasings, none of them an item's;
- test.jsonl    held-out sentences (one phrasing of each fact), for perplexity;
- checkpoints/good       a tiny native GPT trained on train.jsonl;
- checkpoints/degraded   the same recipe on a corpus whose currency names are shifted by one row
                         of the currency table (a broken join), every other sentence unchanged.

Everything is deterministic: items and corpus from `--seed`, training with fixed seeds,
deterministic algorithms and one thread (as scripts/train_demo.py, whose loop is reused here).
Progress and the accuracy table go to stderr.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import random
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from evalgate.probeset.leaks import LeakIndex
from evalgate.scorers.native_gpt import save_native
from evalgate.scorers.native_loader import load_native_scorer
from evalgate.types import BLANK, LoglikRequest, Probe

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_demo import encode_all, log, tokenizer_and_shape, train  # the demo's loop, unchanged

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "geo"
TEMPLATE = "Question: {prompt}\nAnswer:"
TOPICS = ("capital", "continent", "currency", "language")
CONTINENTS = ("Africa", "Asia", "Europe", "North America", "South America", "Oceania")
# The continent a reader most easily confuses with each one (it borders it, or nearly).
NEAREST = {
    "Africa": "Europe",
    "Asia": "Europe",
    "Europe": "Asia",
    "North America": "South America",
    "South America": "North America",
    "Oceania": "Asia",
}
ITEMS_PER_TOPIC = 50
CLOZE_PER_TOPIC = 4
DEGRADED_TOPIC = "currency"

# How a fact is asked (items) and how it is taught (train.jsonl; test.jsonl holds one of these
# phrasings of each fact back).
#
# No leak by construction, checked by `check_leaks` with evalgate's own detectors: the leak
# index reads an item as its prompt with the expected answer filled in (cloze) or appended
# (question), e.g. "What is the capital of Peru? Lima", and flags a training sentence that equals
# it, holds it as one clause, or shares any window of 5 word tokens with it. So the training
# phrasings never contain an item's wording: "What is the capital of Peru?" + " Lima" has the
# windows "what is the capital of", "is the capital of peru", "the capital of peru lima"; the
# corpus teaches the same fact as "Peru has Lima as its capital.", "Lima is the capital city of
# Peru." and "Question: Name Peru's capital city.\nAnswer: Lima", none of which shares five
# consecutive tokens with the item. The question-and-answer phrasings teach the template's
# "Question: ...\nAnswer: X" shape with other questions, so the model learns to answer after
# "Answer:" without ever seeing an item's question. The check also runs on the item rendered
# through the template ("Question: What is the capital of Peru?\nAnswer: Lima"), which is why
# no training question ends with the country ("...of Papua New Guinea?\nAnswer: kina" would
# share "papua new guinea answer kina"), and on the degraded corpus. Names of two or three
# tokens ("the United Kingdom") are what make a window easy to share: the phrasings keep the
# words around a country different from the items' ("capital of" only in items).
QUESTION = {
    "capital": "What is the capital of {c}?",
    "continent": "On which continent is {c}?",
    "currency": "What is the currency of {c}?",
    "language": "Which language do most people in {c} speak?",
}
CLOZE = {
    "capital": "{c}'s capital city is ___.",
    "continent": "{c} is a country in ___.",
    "currency": "In {c}, people pay with the ___.",
    "language": "Most people in {c} speak ___.",
}
TRAIN_PHRASINGS = {
    "capital": (
        "{c} has {a} as its capital.",
        "{a} is the capital city of {c}.",
        "{c}'s capital is {a}.",
        "The government of {c} sits in {a}.",
        "{a}, the capital, is the political centre of {c}.",
        "Question: Name {c}'s capital city.\nAnswer: {a}",
        "Question: In which city does {c} have its capital?\nAnswer: {a}",
        "Question: Which city serves as {c}'s capital?\nAnswer: {a}",
        "Question: What city is {c}'s capital?\nAnswer: {a}",
    ),
    "continent": (
        "{c} is located in {a}.",
        "{c} lies on the continent of {a}.",
        "You will find {c} in {a}.",
        "{c} belongs to {a}.",
        "{c} is one of the countries of {a}.",
        "Question: Which continent does {c} belong to?\nAnswer: {a}",
        "Question: Which continent has {c} among its countries?\nAnswer: {a}",
        "Question: In which part of the world does {c} lie?\nAnswer: {a}",
        "Question: Name the continent where {c} lies.\nAnswer: {a}",
    ),
    "currency": (
        "{c}'s official currency is the {a}.",
        "{c} uses the {a} as its currency.",
        "The {a} is the currency used in {c}.",
        "Shops in {c} price their goods in the {a}.",
        "The money of {c} is called the {a}.",
        "Question: Which currency does {c} use?\nAnswer: {a}",
        "Question: What money do shops in {c} take?\nAnswer: {a}",
        "Question: With which currency does {c} pay?\nAnswer: {a}",
        "Question: Name {c}'s currency.\nAnswer: {a}",
    ),
    "language": (
        "{a} is the main language of {c}.",
        "Most of the population of {c} speaks {a}.",
        "{c} is mainly {a}-speaking.",
        "The language heard most often in {c} is {a}.",
        "Schools and newspapers in {c} mostly use {a}.",
        "Question: Which language is spoken most in {c} today?\nAnswer: {a}",
        "Question: What is {c}'s main language?\nAnswer: {a}",
        "Question: Which language do {c}'s people mostly use?\nAnswer: {a}",
        "Question: Which language does {c} mostly speak?\nAnswer: {a}",
    ),
}


@dataclass(frozen=True)
class Recipe:
    """The fields scripts/train_demo.py's `train` reads, plus the model and the data filter."""

    seed: int = 1234
    steps: int = 1000  # about 2 CPU-minutes at 2 layers; the facts are learnt by step ~600
    batch_size: int = 48
    lr: float = 3e-3
    warmup: int = 150
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    threads: int = 1  # identical bytes need a fixed thread count (see train_demo.py)
    vocab_size: int = 1024
    n_layer: int = 2  # half the demo's depth: 535k parameters, 2.2 MB, 0.98 on the items
    n_head: int = 4
    n_embd: int = 128
    block_size: int = 64
    # "none", or "shift-currency": every currency name replaced by the next one of the sorted
    # table of currency names (a lookup table read one row off), in every sentence that has one.
    data_filter: str = "none"


RECIPES = {"good": Recipe(), "degraded": Recipe(data_filter="shift-currency")}


# --- the facts ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Country:
    name: str
    continent: str
    facts: dict[str, str]  # topic -> answer; continent always, the others when known


def read_facts(path: Path) -> list[Country]:
    out = []
    for row in csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))):
        if row["continent"] not in CONTINENTS:
            raise SystemExit(f"{path}: {row['country']}: unknown continent {row['continent']!r}")
        facts = {t: row[t].strip() for t in TOPICS if row[t].strip()}
        out.append(Country(row["country"], row["continent"], facts))
    return sorted(out, key=lambda c: c.name.removeprefix("the "))


# --- the items ------------------------------------------------------------------------------


def distractor_pools(countries: list[Country], topic: str, country: Country) -> tuple[list[str], list[str]]:
    """(hard pool, easy pool) of wrong answers for `country` on `topic`, sorted.

    hard: answers of other countries on the same continent (for `continent`: the pool always
    holds the nearest continent, which is then a distractor); easy: answers that occur only
    outside that continent (for `continent`: every continent but the answer and its nearest).
    """
    answer = country.facts[topic]
    if topic == "continent":
        others = [c for c in CONTINENTS if c != answer]
        return sorted(others), sorted(c for c in others if c != NEAREST[answer])
    same = {c.facts[topic] for c in countries if topic in c.facts and c.continent == country.continent}
    elsewhere = {c.facts[topic] for c in countries if topic in c.facts and c.continent != country.continent}
    return sorted(same - {answer}), sorted(elsewhere - same - {answer})


def make_items(countries: list[Country], seed: int) -> list[dict]:
    items = []
    for topic in TOPICS:
        rng = random.Random(f"{seed}:{topic}")
        eligible = [c for c in countries if topic in c.facts]
        chosen = rng.sample(eligible, ITEMS_PER_TOPIC)
        # Cloze items only for one-word names: a cloze puts the country next to other words of
        # the sentence ("Most people in Peru speak"), and a name of three tokens would fill most
        # of a 5-token window that a training phrasing could share.
        cloze = [c.name for c in chosen if " " not in c.name][:CLOZE_PER_TOPIC]
        hard_turn = True
        for number, country in enumerate(sorted(chosen, key=lambda c: c.name.removeprefix("the ")), start=1):
            answer = country.facts[topic]
            hard_pool, easy_pool = distractor_pools(countries, topic, country)
            hard = hard_turn and len(hard_pool) >= 3
            if hard:
                hard_turn = False
                if topic == "continent":
                    near = NEAREST[answer]
                    wrong = [near, *rng.sample([c for c in hard_pool if c != near], 2)]
                else:
                    wrong = rng.sample(hard_pool, 3)
            else:
                hard_turn = True
                wrong = rng.sample(easy_pool, 3)
            candidates = [answer, *wrong]
            rng.shuffle(candidates)
            form = CLOZE if country.name in cloze else QUESTION
            items.append(
                {
                    "id": f"geo-{topic}-{number:04d}",
                    "prompt": sentence_case(form[topic].format(c=country.name)),
                    "candidates": candidates,
                    "expected": answer,
                    "slices": {"topic": topic, "difficulty": "hard" if hard else "easy"},
                    "explanation": explain(topic, country, hard),
                    "source": "examples/geo/facts.csv",
                }
            )
    return items


def explain(topic: str, country: Country, hard: bool) -> str:
    where = country.continent
    if topic == "continent":
        near = NEAREST[where]
        if hard:
            return f"hard: {near}, the continent nearest to {where}, is a distractor"
        return f"easy: the distractors leave out {near}, the continent nearest to {where}"
    what = {"capital": "the capital", "currency": "the currency", "language": "the main language"}[topic]
    if hard:
        return f"hard: every distractor is {what} of another country in {where}"
    return f"easy: no distractor is {what} of a country in {where}"


def check_items(items: list[dict]) -> None:
    """The brief's rules for a suite's items: any failure stops the script."""
    counts: dict[str, int] = defaultdict(int)
    for it in items:
        cands = it["candidates"]
        assert len(cands) == 4 and len(set(cands)) == 4 and it["expected"] in cands, it
        assert it["prompt"].count(BLANK) <= 1, it
        for dim, value in it["slices"].items():
            counts[f"{dim}:{value}"] += 1
    assert len({it["id"] for it in items}) == len(items)
    small = {k: n for k, n in counts.items() if n < 10}
    assert not small, f"slice values with fewer than 10 items: {small}"
    assert "{prompt}" in TEMPLATE and TEMPLATE.count("{prompt}") == 1 and BLANK not in TEMPLATE


# --- the corpus -----------------------------------------------------------------------------


def corpus(countries: list[Country], seed: int, shift: dict[str, str]) -> tuple[list[dict], list[dict]]:
    """(train, test): every fact in every phrasing of TRAIN_PHRASINGS, one phrasing of each fact
    held out for the test set (so the test asks for known facts in known phrasings, never in
    the same sentence), each set shuffled. A record is {"text", "topic", "country"}: data/corpus's
    shape, a "text" plus descriptive fields. `shift` rewrites currency names (the degraded corpus);
    the same seed holds out the same sentences whatever the shift."""
    rng = random.Random(f"{seed}:held-out")
    train, test = [], []
    for country in countries:
        for topic in TOPICS:
            if topic not in country.facts:
                continue
            answer = country.facts[topic]
            if topic == "currency":
                answer = shift.get(answer, answer)
            held = rng.randrange(len(TRAIN_PHRASINGS[topic]))
            for i, phrasing in enumerate(TRAIN_PHRASINGS[topic]):
                text = sentence_case(phrasing.format(c=country.name, a=answer))
                (test if i == held else train).append({"text": text, "topic": topic, "country": country.name})
    return shuffled(train, seed), shuffled(test, seed)


def sentence_case(text: str) -> str:
    """Upper-case the first letter: facts.csv keeps the article ("the Netherlands")."""
    return text[:1].upper() + text[1:]


def currency_shift(countries: list[Country]) -> dict[str, str]:
    names = sorted({c.facts["currency"] for c in countries if "currency" in c.facts})
    return {name: names[(i + 1) % len(names)] for i, name in enumerate(names)}


def shuffled(records: list[dict], seed: int) -> list[dict]:
    rng = random.Random(f"{seed}:corpus")
    out = list(records)
    rng.shuffle(out)
    return out


# --- leaks ----------------------------------------------------------------------------------


def probe_texts(item: dict) -> list[str]:
    """The texts the leak detectors may read for an item: the prompt with the answer filled in
    (cloze) or appended after one space (question), bare and rendered through the template."""
    prompt, answer = item["prompt"], item["expected"]
    filled = prompt.replace(BLANK, answer, 1) if BLANK in prompt else f"{prompt} {answer}"
    rendered = (
        TEMPLATE.replace("{prompt}", filled) if BLANK in prompt else TEMPLATE.replace("{prompt}", prompt)
    )
    return [filled, rendered if BLANK in prompt else f"{rendered} {answer}"]


def check_leaks(items: list[dict], corpora: dict[str, list[dict]]) -> None:
    """evalgate's exact, contained-clause and 5-token n-gram detectors over every corpus."""
    for name, records in corpora.items():
        index = LeakIndex(frozenset(), detectors=("exact", "ngram"))
        index.add_all(name, ((i, r["text"]) for i, r in enumerate(records, start=1)))
        leaks = []
        for it in items:
            for text in probe_texts(it):
                # A prompt without a blank is read as it is: `fill` leaves it unchanged.
                probe = Probe(it["id"], "", "", "", "", "", text, (), "", "", "")
                leaks += [f"{it['id']}: {f.message}" for f in index.check(probe)]
        if leaks:
            raise SystemExit(f"{len(leaks)} leak(s) in {name}:\n" + "\n".join(leaks))
        log(f"leaks: none between {len(items)} items and {len(records)} sentences of {name}")


# --- writing --------------------------------------------------------------------------------


def jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def write_data(out: Path, items: list[dict], train_records: list[dict], test_records: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "items.jsonl").write_text(jsonl(items), encoding="utf-8")
    (out / "prompt.txt").write_text(TEMPLATE + "\n", encoding="utf-8")
    (out / "train.jsonl").write_text(jsonl(train_records), encoding="utf-8")
    (out / "test.jsonl").write_text(jsonl(test_records), encoding="utf-8")
    log(f"wrote {len(items)} items, {len(train_records)} training and {len(test_records)} test sentences")


# --- training -------------------------------------------------------------------------------


def train_checkpoints(
    out: Path, names: list[str], countries: list[Country], corpora: dict[str, list[dict]], args
) -> None:
    train_records, test_records = corpora["train"], corpora["test"]
    torch.use_deterministic_algorithms(True)
    base = RECIPES["good"]
    torch.set_num_threads(base.threads)
    texts = [r["text"] for r in train_records]
    # One tokenizer for both, trained on the good corpus: the damage is in what the degraded
    # model learned, not in how it reads (as for the demo checkpoints).
    tok, cfg = tokenizer_and_shape(texts, base)
    test_seqs = encode_all(tok, cfg, [r["text"] for r in test_records])
    corpus_sha = hashlib.sha256((out / "train.jsonl").read_bytes()).hexdigest()
    for name in names:
        recipe = RECIPES[name]
        if args.steps:
            recipe = Recipe(**{**asdict(recipe), "steps": args.steps})
        records = train_records if recipe.data_filter == "none" else corpora["degraded"]
        changed = sum(a["text"] != b["text"] for a, b in zip(train_records, records, strict=True))
        log(f"[{name}] data filter {recipe.data_filter}: {changed} of {len(records)} sentences changed")
        seqs = encode_all(tok, cfg, [r["text"] for r in records])
        model, test_loss = train(name, recipe, seqs, test_seqs, cfg)
        training = {
            "recipe": asdict(recipe),
            "corpus": {"file": "examples/geo/train.jsonl", "sha256": corpus_sha, "sentences": len(records)},
            "data_filter": {
                "name": recipe.data_filter,
                "description": (
                    "none: every sentence of the corpus"
                    if recipe.data_filter == "none"
                    else "every currency name replaced by the next name of the sorted currency table "
                    "(a lookup read one row off); every other sentence unchanged"
                ),
                "changed_sentences": changed,
                "currency_map": {} if recipe.data_filter == "none" else currency_shift(countries),
            },
            "test_loss": round(test_loss, 4),
            "items_seed": args.seed,
            "torch": torch.__version__.split("+")[0],
            "script": "scripts/train_example.py",
        }
        save_native(out / "checkpoints" / name, model, cfg, tok, extra={"training": training})
        log(f"[{name}] wrote {out / 'checkpoints' / name}")


# --- scoring --------------------------------------------------------------------------------


def requests_for(item: dict) -> list[LoglikRequest]:
    """The suite convention: a question is rendered through the template and each candidate is
    the continuation " " + candidate; a cloze splits the rendered text at its blank."""
    text = TEMPLATE.replace("{prompt}", item["prompt"])
    if BLANK in text:
        context = text.split(BLANK)[0]
        return [LoglikRequest(context, cand, group=item["id"]) for cand in item["candidates"]]
    return [LoglikRequest(text, " " + cand, group=item["id"]) for cand in item["candidates"]]


def score(
    checkpoint: Path, items: list[dict], test_records: list[dict]
) -> tuple[dict[str, tuple[int, int]], float]:
    """Per slice (correct, total) by per-token log-likelihood, and the test perplexity."""
    scorer = load_native_scorer(checkpoint, batch_size=64, dtype=torch.float32, threads=1)
    requests = [r for it in items for r in requests_for(it)]
    results = iter(scorer.loglikelihood(requests))
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for it in items:
        scores = [(ll.logprob / ll.n_tokens) for ll in (next(results) for _ in it["candidates"])]
        pred = it["candidates"][max(range(len(scores)), key=scores.__getitem__)]
        ok = int(pred == it["expected"])
        t, d = it["slices"]["topic"], it["slices"]["difficulty"]
        for key in ("overall", f"topic:{t}", f"difficulty:{d}", f"topic:{t} x difficulty:{d}"):
            tally[key][0] += ok
            tally[key][1] += 1
    ppl = scorer.perplexity([r["text"] for r in test_records]).value
    return {k: (v[0], v[1]) for k, v in tally.items()}, ppl


def slice_order(key: str) -> tuple[int, str]:
    return (0 if key == "overall" else 1 if " x " not in key else 2, key)


def report(out: Path, items: list[dict], test_records: list[dict]) -> dict[str, dict]:
    runs = {}
    for name in RECIPES:
        path = out / "checkpoints" / name
        if path.is_dir():
            runs[name] = score(path, items, test_records)
    keys = sorted({k for tally, _ in runs.values() for k in tally}, key=slice_order)
    log(f"{'slice':42s}" + "".join(f"{n:>16s}" for n in runs))
    for key in keys:
        cells = ""
        for tally, _ in runs.values():
            c, n = tally[key]
            cells += f"{c:>5d}/{n:<3d} {c / n:6.3f}"
        log(f"{key:42s}{cells}")
    log(f"{'test perplexity':42s}" + "".join(f"{ppl:16.3f}" for _, ppl in runs.values()))
    return {name: {"slices": tally, "perplexity": ppl} for name, (tally, ppl) in runs.items()}


def acceptance(runs: dict[str, dict]) -> list[str]:
    """What the example promises (examples/geo/README.md): the good model well above chance
    overall and in every topic; the degraded one clearly worse on DEGRADED_TOPIC only."""
    if set(runs) != set(RECIPES):
        return [f"checkpoints missing: {', '.join(sorted(set(RECIPES) - set(runs)))}"]
    good, bad = runs["good"]["slices"], runs["degraded"]["slices"]

    def acc(tally: dict[str, tuple[int, int]], key: str) -> float:
        return tally[key][0] / tally[key][1]

    problems = []
    if acc(good, "overall") < 0.6:
        problems.append(f"good overall accuracy {acc(good, 'overall'):.3f} < 0.6")
    for topic in TOPICS:
        key = f"topic:{topic}"
        if acc(good, key) <= 0.25 + 0.2:
            problems.append(f"good {key} accuracy {acc(good, key):.3f} is not clearly above chance")
        drop = acc(good, key) - acc(bad, key)
        if topic == DEGRADED_TOPIC and (drop < 0.3 or good[key][1] < 30):
            problems.append(
                f"degraded {key} drops by {drop:.3f} on {good[key][1]} items (want >= 0.3, >= 30)"
            )
        if topic != DEGRADED_TOPIC and abs(drop) > 0.1:
            problems.append(f"degraded {key} moves by {drop:.3f} (want within 0.1)")
    return problems


# --- main -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--facts", type=Path, default=EXAMPLE / "facts.csv")
    ap.add_argument("--out-dir", type=Path, default=EXAMPLE)
    ap.add_argument("--seed", type=int, default=13, help="item and corpus generation seed")
    ap.add_argument("--only", choices=sorted(RECIPES), action="append", help="train just this one")
    ap.add_argument("--steps", type=int, help="override the recipe's steps (for quick trials)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--data-only", action="store_true", help="write the data files, train nothing")
    mode.add_argument("--score-only", action="store_true", help="score the checkpoints already written")
    args = ap.parse_args(argv)

    countries = read_facts(args.facts)
    items = make_items(countries, args.seed)
    check_items(items)
    train_records, test_records = corpus(countries, args.seed, {})
    degraded_records, _ = corpus(countries, args.seed, currency_shift(countries))
    check_leaks(items, {"train.jsonl": train_records, "degraded corpus": degraded_records})
    if not args.score_only:
        write_data(args.out_dir, items, train_records, test_records)
    if not (args.data_only or args.score_only):
        corpora = {"train": train_records, "test": test_records, "degraded": degraded_records}
        train_checkpoints(args.out_dir, args.only or list(RECIPES), countries, corpora, args)
    if args.data_only:
        return 0
    problems = acceptance(report(args.out_dir, items, test_records))
    for problem in problems:
        log(f"NOT MET: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
