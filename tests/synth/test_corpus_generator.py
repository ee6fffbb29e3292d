"""The corpus generator: deterministic, balanced, disjoint splits, and no sentence leaking a probe."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml
from helpers.paths import REPO

from evalgate.cli import main
from evalgate.probeset import text as T
from evalgate.probeset.grammar import grammar_from_dict
from evalgate.probeset.leaks import LeakIndex, find_leaks
from evalgate.synth.corpus import DETECTORS, ProbeFilter, build_corpus, split_sizes
from evalgate.synth.lexicon import lexicon_from_dict
from evalgate.types import BLANK, LANGUAGES, PERSONS, TENSES, Probe

GRAMMAR_FILE = REPO / "data" / "grammar" / "verbs.yaml"
CORPUS = REPO / "data" / "corpus"
EVAL = REPO / "data" / "eval"
SPLITS = ("train", "val", "test")


@pytest.fixture(scope="module")
def grammar():
    return grammar_from_dict(yaml.safe_load(GRAMMAR_FILE.read_text("utf-8")))


@pytest.fixture(scope="module")
def lexicon(grammar):
    return lexicon_from_dict(yaml.safe_load((REPO / "data/grammar/lexicon.yaml").read_text("utf-8")), grammar)


@pytest.fixture(scope="module")
def probes() -> list[Probe]:
    out = []
    for name in ("probes.jsonl", "adversarial.jsonl"):
        for line, text in enumerate((EVAL / name).read_text("utf-8").splitlines(), start=1):
            out.append(Probe.from_record(json.loads(text), f"data/eval/{name}", line))
    return out


@pytest.fixture(scope="module")
def shipped() -> dict[str, list[dict]]:
    return {
        split: [json.loads(line) for line in (CORPUS / f"{split}.jsonl").read_text("utf-8").splitlines()]
        for split in SPLITS
    }


def _config(root: Path) -> Path:
    """A config whose probe files live in root/eval (built there by the test)."""
    cfg = root / "evalgate.yml"
    cfg.write_text(
        yaml.safe_dump(
            {"probes": ["eval/probes.jsonl", "eval/adversarial.jsonl"], "grammar": str(GRAMMAR_FILE)}
        ),
        "utf-8",
    )
    return cfg


@pytest.mark.integration
def test_same_seed_gives_byte_identical_files(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    cfg = _config(tmp_path)
    assert main(["probes", "build", "--seed", "42", "--out-dir", str(tmp_path / "eval")]) == 0
    for out in ("a", "b"):
        argv = ["corpus", "build", "--seed", "42", "--train-size", "1200", "--config", str(cfg)]
        assert main([*argv, "--out-dir", str(tmp_path / out)]) == 0
    assert main(["corpus", "build", "--seed", "3", "--train-size", "1200", "--config", str(cfg),
                 "--out-dir", str(tmp_path / "c")]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "train.jsonl: 1200 sentences" in printed and "val.jsonl: 100 sentences" in printed
    assert "decontamination against 625 probes: dropped" in printed
    for split in SPLITS:
        first = (tmp_path / "a" / f"{split}.jsonl").read_bytes()
        assert first == (tmp_path / "b" / f"{split}.jsonl").read_bytes(), split
        assert first != (tmp_path / "c" / f"{split}.jsonl").read_bytes(), "the seed is used"


@pytest.mark.integration
def test_committed_corpus_equals_a_fresh_default_build(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    assert main(["corpus", "build", "--out-dir", str(tmp_path)]) == 0
    for split in SPLITS:
        assert (tmp_path / f"{split}.jsonl").read_bytes() == (CORPUS / f"{split}.jsonl").read_bytes(), (
            f"data/corpus/{split}.jsonl is stale: rerun `evalgate corpus build --seed 42`"
        )


def test_sizes_and_disjoint_splits(shipped):
    assert [len(shipped[s]) for s in SPLITS] == [24000, 2000, 2000]
    keys = {s: [T.normalize_exact(r["text"]) for r in shipped[s]] for s in SPLITS}
    for split in SPLITS:
        assert len(keys[split]) == len(set(keys[split])), f"{split} repeats a sentence"
    assert not set(keys["test"]) & (set(keys["train"]) | set(keys["val"]))
    assert not set(keys["val"]) & set(keys["train"])


@pytest.mark.integration
def test_no_split_leaks_any_probe_under_the_validators_detectors(shipped, probes, grammar):
    # The validator's own index, over all three files: test is kept clean too (it is held out).
    index = LeakIndex(grammar.all_forms(), window=5)
    for split in SPLITS:
        index.add_all(f"{split}.jsonl", ((i, r["text"]) for i, r in enumerate(shipped[split], 1)))
    assert find_leaks(probes, index) == []


def test_the_filter_really_drops_what_would_leak(grammar, lexicon, probes):
    held_out = [(p.id, T.fill(p.prompt, p.expected)) for p in probes]
    flt = ProbeFilter(held_out, grammar.all_forms(), window=5)
    probe = next(p for p in probes if p.prompt.startswith("Every day") and p.language == "en")
    filled = T.fill(probe.prompt, probe.expected)
    assert flt.collision(filled.upper()) == ("exact", probe.id)
    assert flt.collision("Nothing about verbs here.") is None
    assert flt.collision("Yesterday the doctor said something.") is None
    # Same sentence with another content noun at the end: the template detector fires.
    head = filled.rstrip(".").split()[:-1]
    assert flt.collision(" ".join([*head, "zeppelin"]) + ".") in {("template", probe.id), ("ngram", probe.id)}
    # Same five words in a longer sentence: the n-gram detector fires.
    window = " ".join(T.word_tokens(filled)[:5])
    assert flt.collision(f"Then {window} again and again.") == ("ngram", probe.id)

    # Without the filter the same seed draws colliding sentences; with it none survives.
    sizes = split_sizes(1200)
    raw = build_corpus(grammar, lexicon, 11, sizes)
    clean = build_corpus(grammar, lexicon, 11, sizes, flt.collision)
    raw_texts = [r["text"] for r in raw.train + raw.val + raw.test]
    assert any(flt.collision(t) for t in raw_texts)
    assert not any(flt.collision(r["text"]) for r in clean.train + clean.val + clean.test)
    assert clean.stats.dropped_total == sum(clean.stats.dropped.values()) > 0
    assert set(clean.stats.dropped) == set(DETECTORS)
    assert sum(clean.stats.dropped_by_probe.values()) == clean.stats.dropped_total


def test_records_are_balanced_and_say_what_they_hold(shipped, grammar):
    train = shipped["train"]
    for key, values in (("language", LANGUAGES), ("tense", TENSES), ("person", PERSONS)):
        counts = Counter(r[key] for r in train)
        assert set(counts) == set(values)
        # Within 25% of an even share: no slice is starved.
        assert min(counts.values()) >= 0.75 * len(train) / len(values), (key, counts)
    cells = Counter((r["language"], r["verb"], r["tense"], r["person"]) for r in train)
    assert len(cells) == 600 and min(cells.values()) >= 10
    for r in train[:3000]:
        verb = grammar.get(r["language"], r["verb"])
        assert verb is not None
        form = verb.form(r["tense"], r["person"])
        assert f" {form} " in f" {' '.join(T.word_tokens(r['text']))} ", r
        assert r["text"][0].isupper() and r["text"].endswith(".")


def test_plural_subjects_stay_out_of_the_corpus(shipped):
    plural = {"we", "they", "nosotros", "nosotras", "ellos", "ellas"}
    for split in SPLITS:
        assert not any(plural & set(T.word_tokens(r["text"])) for r in shipped[split])


@pytest.mark.integration
def test_the_corpus_still_teaches_every_core_probe(shipped, probes, grammar):
    """Each probe's cell is well represented, and its cue words appear with the same tense and person."""
    train = shipped["train"]
    cells = Counter((r["language"], r["verb"], r["tense"], r["person"]) for r in train)
    keep = grammar.all_forms() | T.FUNCTION_WORDS
    by_slot: dict[tuple[str, str, str], list[set[str]]] = {}
    for r in train:
        by_slot.setdefault((r["language"], r["tense"], r["person"]), []).append(set(T.word_tokens(r["text"])))
    four_grams = {g for r in train for g in T.ngrams(T.word_tokens(r["text"]), 4)}
    with_window = jointly_missing = 0
    for p in probes:
        if p.category != "core":
            continue
        assert cells[(p.language, p.verb, p.tense, p.person)] >= 10, p.id
        context = T.word_tokens(p.prompt.split(BLANK)[0])
        cue = {t for t in context if t in keep}
        slot = by_slot[(p.language, p.tense, p.person)]
        assert all(any(word in toks for toks in slot) for word in cue), (p.id, cue)
        jointly_missing += not any(cue <= toks for toks in slot)
        window = (context + T.word_tokens(p.expected))[max(0, len(context) - 3) : len(context) + 1]
        with_window += len(window) < 4 or tuple(window) in four_grams
    # Many probes even have their longest window allowed (3 context words + the answer) in train.
    n_core = sum(p.category == "core" for p in probes)
    # Every cue word is taught with the probe's tense and person, and for nearly every probe all
    # its cue words also occur together in one such sentence (decontamination may take a rare
    # combination away).
    assert jointly_missing <= 0.01 * n_core, jointly_missing
    assert with_window >= 0.4 * n_core, (with_window, n_core)


def test_corpus_build_refuses_without_probes(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    cfg = _config(tmp_path)
    assert main(["corpus", "build", "--config", str(cfg), "--out-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "eval/probes.jsonl: probe file not found" in err and "evalgate probes build" in err
    assert not (tmp_path / "out").exists()
