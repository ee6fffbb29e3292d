"""The probe builder: deterministic, schema-valid, covering, and answerable from the left context."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
import yaml
from helpers.paths import REPO

from evalgate.cli import main
from evalgate.config import load_config
from evalgate.errors import RefusedError
from evalgate.probeset.grammar import grammar_from_dict
from evalgate.probeset.text import word_tokens
from evalgate.synth.lexicon import lexicon_from_dict
from evalgate.synth.probes import build_probes
from evalgate.types import BLANK, LANGUAGES, PERSONS, TENSES

GRAMMAR_FILE = REPO / "data" / "grammar" / "verbs.yaml"
LEXICON_FILE = REPO / "data" / "grammar" / "lexicon.yaml"
EVAL = REPO / "data" / "eval"
FILES = ("probes.jsonl", "adversarial.jsonl", "probe_prompt.txt")


@pytest.fixture(scope="module")
def grammar():
    return grammar_from_dict(yaml.safe_load(GRAMMAR_FILE.read_text("utf-8")))


@pytest.fixture(scope="module")
def lexicon_data():
    return yaml.safe_load(LEXICON_FILE.read_text("utf-8"))


@pytest.fixture(scope="module")
def lexicon(grammar, lexicon_data):
    return lexicon_from_dict(lexicon_data, grammar)


@pytest.fixture(scope="module")
def shipped():
    def read(name):
        return [json.loads(line) for line in (EVAL / name).read_text("utf-8").splitlines()]

    return read("probes.jsonl"), read("adversarial.jsonl")


def _build(out: Path, *extra: str) -> int:
    return main(["probes", "build", "--out-dir", str(out), *extra])


@pytest.mark.integration
def test_same_seed_gives_byte_identical_files_and_the_committed_ones(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    assert _build(tmp_path / "a", "--seed", "42") == 0
    assert "600 core probes (300 en, 300 es)" in capsys.readouterr().out
    assert _build(tmp_path / "b", "--seed", "42") == 0
    assert _build(tmp_path / "c", "--seed", "7") == 0
    for name in FILES:
        first = (tmp_path / "a" / name).read_bytes()
        assert first == (tmp_path / "b" / name).read_bytes(), name
        assert first == (EVAL / name).read_bytes(), (
            f"data/eval/{name} is stale: rerun `evalgate probes build`"
        )
    # The seed is really used: another seed draws other sentences.
    assert (tmp_path / "a" / "probes.jsonl").read_bytes() != (tmp_path / "c" / "probes.jsonl").read_bytes()
    assert not list((tmp_path / "a").glob("*.tmp")), "atomic writes leave no temporary files"


def test_template_is_just_the_prompt():
    text = (EVAL / "probe_prompt.txt").read_text("utf-8")
    assert text == "{prompt}\n" and text.count("{prompt}") == 1


def test_every_probe_is_schema_valid_and_consistent(shipped, grammar):
    schema = json.loads((REPO / "src/evalgate/schemas/probe.schema.json").read_text("utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    core, adversarial = shipped
    ids = [p["id"] for p in core + adversarial]
    assert len(ids) == len(set(ids))
    prompts = [" ".join(p["prompt"].lower().split()) for p in core + adversarial]
    assert len(prompts) == len(set(prompts)), "no two probes share a prompt"
    for category, probes in (("core", core), ("adversarial", adversarial)):
        for p in probes:
            assert not list(validator.iter_errors(p)), p["id"]
            assert p["category"] == category and p["source"] == "generated"
            assert p["prompt"].count(BLANK) == 1 and p["expected"] in p["candidates"]
            assert 2 <= len(p["candidates"]) <= 4 and len(set(p["candidates"])) == len(p["candidates"])
            verb = grammar.get(p["language"], p["verb"])
            assert verb is not None and verb.regularity == p["regularity"], p["id"]
            assert p["explanation"].endswith(".") and p["explanation"].count(". ") == 0, p["id"]
            assert p["id"].startswith(("probe-" if category == "core" else "adv-") + p["language"] + "-")


def test_core_coverage_is_well_above_the_minimums(shipped, grammar):
    core, _ = shipped
    cov = load_config(None, cwd=REPO).coverage
    counts = {key: Counter(p[key] for p in core) for key in ("language", "regularity", "tense", "person")}
    # The whole grid, every (verb, tense, person) cell once: each tense slice holds 120 probes,
    # enough to detect a 10-point drop (docs/gate.md).
    assert counts["language"] == {"en": 300, "es": 300}
    assert counts["regularity"] == {"regular": 360, "irregular": 240}
    assert counts["tense"] == dict.fromkeys(TENSES, 120)
    assert counts["person"] == dict.fromkeys(PERSONS, 200)
    assert min(counts["person"].values()) > 2 * cov.per_person
    cells = Counter((p["language"], p["verb"], p["tense"], p["person"]) for p in core)
    assert set(cells) == {
        (lang, name, tense, person)
        for (lang, name) in grammar.verbs
        for tense in TENSES
        for person in PERSONS
    }
    assert max(cells.values()) == 1
    labels = Counter(p["label"] for p in core)
    assert labels == {"correct": 597, "ambiguous": 3}


def test_adversarial_covers_the_six_categories(shipped):
    _, adversarial = shipped
    cov = load_config(None, cwd=REPO).coverage
    codes = Counter(p["reason_code"] for p in adversarial)
    assert set(codes) == set(cov.adversarial_categories)
    assert all(
        cov.adversarial_per_category_min <= n <= cov.adversarial_per_category_max for n in codes.values()
    )
    assert len(adversarial) >= cov.adversarial_total
    by_code = {code: [p for p in adversarial if p["reason_code"] == code] for code in codes}
    assert all(p["label"] == "ambiguous" for p in by_code["PLURAL-OOS"])
    assert all(p["label"] == "correct" for code, ps in by_code.items() if code != "PLURAL-OOS" for p in ps)
    plural_subjects = {"we", "they", "nosotros", "ellos"}
    assert all(plural_subjects & set(word_tokens(p["prompt"])) for p in by_code["PLURAL-OOS"])
    for p in by_code["AUX-MISMATCH"]:
        aux, participle = p["expected"].split()
        assert any(c.split()[0] != aux and c.split()[1] == participle for c in p["candidates"])
    for p in by_code["PAST-IRREG"]:
        assert p["regularity"] == "irregular" and p["tense"] == "past_simple"
    for p in by_code["PRES-3SG-S"]:
        assert p["person"] == "3sg" and p["expected"].endswith("s")


def test_en_es_mismatch_offers_the_same_form_in_the_other_language(shipped, grammar):
    _, adversarial = shipped
    probes = [p for p in adversarial if p["reason_code"] == "EN-ES-MISMATCH"]
    assert {p["language"] for p in probes} == set(LANGUAGES)
    for p in probes:
        other = "es" if p["language"] == "en" else "en"
        other_forms = {f for v in grammar.of_language(other) for fs in v.forms.values() for f in fs}
        own = grammar.get(p["language"], p["verb"])
        assert own is not None
        foreign = [c for c in p["candidates"] if c in other_forms and c not in own.forms[p["tense"]]]
        assert foreign, p["id"]


def _cues(lexicon, p) -> list[str]:
    """The lexicon entries that can decide this probe's tense (one must be left of the blank)."""
    lex = lexicon[p["language"]]
    if p["tense"] == "infinitive":
        return list(lex.infinitive_frames[p["person"]])
    if p["tense"] == "past_participle":
        return [lex.auxiliary[p["person"]]]
    return list(lex.markers[p["tense"]]) + list(lex.adverbs.get(p["tense"], ()))


def test_what_decides_the_answer_is_left_of_the_blank(shipped, lexicon, grammar):
    core, adversarial = shipped
    for p in core + adversarial:
        left = " ".join(word_tokens(p["prompt"].split(BLANK)[0]))
        if p.get("reason_code") == "AUX-MISMATCH":
            left_cues = [""]  # the auxiliary is part of the candidates; the subject decides it
        else:
            left_cues = [c for c in _cues(lexicon, p) if f" {' '.join(word_tokens(c))} " in f" {left} "]
        if p["label"] == "ambiguous" and p["category"] == "core":
            assert not left_cues, f"{p['id']}: an ambiguous core probe has no time marker"
        else:
            assert left_cues, f"{p['id']}: no cue for {p['tense']} before the blank in {p['prompt']!r}"
        lex = lexicon[p["language"]]
        subjects = {
            "1sg": lex.pronouns_1sg,
            "2sg": lex.pronouns_2sg,
            "3sg": lex.pronouns_3sg + lex.names + lex.nouns,
        }[p["person"]] + lex.plural_subjects.get(p["person"], ())
        assert any(f" {' '.join(word_tokens(s))} " in f" {left} " for s in subjects), p["id"]


def test_core_distractors_are_forms_of_the_same_verb_and_never_a_second_right_answer(
    shipped, lexicon, grammar
):
    core, _ = shipped
    for p in core:
        verb = grammar.get(p["language"], p["verb"])
        assert verb is not None
        forms = {f for fs in verb.forms.values() for f in fs}
        over = {f for fs in lexicon[p["language"]].overregularised.get(p["verb"], {}).values() for f in fs}
        assert set(p["candidates"]) <= forms | over, p["id"]
        assert p["expected"] == verb.form(p["tense"], p["person"])
        if p["label"] != "correct":
            continue
        # docs/data.md, "Core probes": a present marker excludes the habitual past, a future marker the
        # scheduled present; offering them would make two candidates right.
        if p["tense"] == "present_simple":
            assert verb.form("past_simple", p["person"]) not in p["candidates"], p["id"]
        if p["tense"] == "future":
            assert verb.form("present_simple", p["person"]) not in p["candidates"], p["id"]


def test_build_uses_only_its_seed(grammar, lexicon):
    first = build_probes(grammar, lexicon, 42)
    again = build_probes(grammar, lexicon, 42)
    assert [p.to_record() for p in first[0] + first[1]] == [p.to_record() for p in again[0] + again[1]]
    persons = Counter(p.person for p in first[0])
    assert set(persons) == set(PERSONS)


def test_a_broken_lexicon_is_refused_with_the_field_named(tmp_path, monkeypatch, capsys, lexicon_data):
    monkeypatch.chdir(REPO)
    shutil.copy(GRAMMAR_FILE, tmp_path / "verbs.yaml")
    broken = json.loads(json.dumps(lexicon_data))
    del broken["en"]["complements"]["go"]
    broken["es"]["markers"]["future"] = []
    (tmp_path / "lexicon.yaml").write_text(yaml.safe_dump(broken, allow_unicode=True), "utf-8")
    code = _build(tmp_path / "out", "--grammar", str(tmp_path / "verbs.yaml"))
    err = capsys.readouterr().err
    assert code == 2
    assert "es.markers.future" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
    del broken["es"]["markers"]
    broken["es"]["markers"] = lexicon_data["es"]["markers"]
    with pytest.raises(RefusedError, match=r"en\.complements\.go: missing"):
        lexicon_from_dict(broken, grammar_from_dict(yaml.safe_load(GRAMMAR_FILE.read_text("utf-8"))))


def test_a_missing_lexicon_is_a_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    shutil.copy(GRAMMAR_FILE, tmp_path / "verbs.yaml")
    assert _build(tmp_path / "out", "--grammar", str(tmp_path / "verbs.yaml")) == 2
    err = capsys.readouterr().err
    assert "lexicon.yaml: lexicon not found" in err and "Traceback" not in err
