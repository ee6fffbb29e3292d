"""probeset/leaks.py: the three detectors on real grammar forms, their evidence, and the index's shape."""

from __future__ import annotations

import pytest
import yaml
from helpers.paths import REPO

from evalgate.probeset import leaks as leaks_mod
from evalgate.probeset.grammar import grammar_from_dict
from evalgate.probeset.leaks import LeakIndex, find_leaks
from evalgate.types import Probe

KEEP = frozenset(
    grammar_from_dict(yaml.safe_load((REPO / "data/grammar/verbs.yaml").read_text("utf-8"))).all_forms()
)


def mk(prompt: str, expected: str, pid: str = "p-1", **kw) -> Probe:
    return Probe(
        id=pid,
        language="en",
        verb="work",
        regularity="regular",
        tense="present_simple",
        person="3sg",
        prompt=prompt,
        candidates=(expected, "zzz"),
        expected=expected,
        label="correct",
        category="core",
        file="data/eval/probes.jsonl",
        line=4,
        **kw,
    )


def index(*sentences: str, **kw) -> LeakIndex:
    idx = LeakIndex(KEEP, **kw)
    idx.add_all("data/corpus/train.jsonl", enumerate(sentences, start=1))
    return idx


PROBE = mk("Every day Maria ___ at the office.", "works")


def test_exact_ignores_case_and_whitespace_and_names_the_training_line():
    (f,) = [
        f
        for f in index("A cat.", "EVERY DAY maria works at the\toffice.").check(PROBE)
        if f.check == "leak-exact"
    ]
    assert (f.file, f.line, f.probe_id, f.field) == ("data/eval/probes.jsonl", 4, "p-1", "prompt")
    assert f.evidence["train_file"] == "data/corpus/train.jsonl" and f.evidence["train_line"] == 2
    assert f.evidence["train_text"] == "EVERY DAY maria works at the\toffice."
    assert "data/corpus/train.jsonl:2" in f.message


def test_template_masks_content_nouns_but_keeps_verb_form_and_time_marker():
    hits = index("Every day Pedro works at the school.").check(PROBE)
    assert [f.check for f in hits] == ["leak-template"]
    assert hits[0].evidence["template"] == "every day <NOUN> works at the <NOUN>"
    # another verb form, or another time marker, is another template
    assert index("Every day Pedro worked at the school.").check(PROBE) == []
    assert index("Yesterday Pedro works at the school.").check(PROBE) == []


def test_ngram_finds_a_shared_window_and_names_it():
    hits = index("Her cousin said that Maria works at the office on Mondays.").check(PROBE)
    ngram = [f for f in hits if f.check == "leak-ngram"]
    assert ngram and ngram[0].evidence["ngram"] == "maria works at the office"
    assert ngram[0].evidence["window"] == 5
    # four shared tokens are not a 5-token window
    assert [f.check for f in index("Nobody works at the office.").check(PROBE)] == []


def test_window_is_configurable():
    train = "Her cousin said that Maria works at the office on Mondays."
    assert [f.check for f in index(train, window=6, detectors=["ngram"]).check(PROBE)] == []
    assert [f.check for f in index(train, window=4, detectors=["ngram"]).check(PROBE)] == ["leak-ngram"]


def test_every_detector_fires_on_a_verbatim_copy_and_only_enabled_ones_run():
    verbatim = "Every day Maria works at the office."
    # one problem, one finding: the three detectors that agree are listed in it
    (hit,) = index(verbatim).check(PROBE)
    assert hit.check == "leak-exact"
    assert hit.evidence["detectors"] == ["exact", "template", "ngram"]
    assert "(detectors: exact, template, ngram)" in hit.message
    assert [f.check for f in index(verbatim, detectors=["template"]).check(PROBE)] == ["leak-template"]


def test_accents_and_enye_are_kept_by_the_normalisation():
    probe = mk("Ayer la niña ___ al mercado con su abuela.", "fue")
    exact = {"detectors": ["exact"]}
    assert index("Ayer la nina fue al mercado con su abuela.", **exact).check(probe) == []
    hits = index("ayer la NIÑA fue al mercado con su abuela.", **exact).check(probe)
    assert [f.check for f in hits] == ["leak-exact"]


def test_deprecated_probes_are_not_checked():
    retired = mk("Every day Maria ___ at the office.", "works", deprecated=True)
    assert index("Every day Maria works at the office.").check(retired) == []


def test_first_training_occurrence_is_the_evidence():
    idx = LeakIndex(KEEP)
    idx.add_all("train.jsonl", [(10, "Every day Maria works at the office.")])
    idx.add_all("val.jsonl", [(3, "Every day Maria works at the office.")])
    assert {(f.evidence["train_file"], f.evidence["train_line"]) for f in idx.check(PROBE)} == {
        ("train.jsonl", 10)
    }


def test_find_leaks_over_many_probes():
    probes = [PROBE, mk("Yesterday I ___ to the market.", "went", pid="p-2")]
    found = find_leaks(probes, index("They said I went to the market today."))
    assert [(f.probe_id, f.check) for f in found] == [("p-2", "leak-ngram")]


def test_checking_a_probe_does_not_scan_the_sentences(monkeypatch):
    """The index is built once; each probe costs one normalisation per detector, whatever the corpus size."""
    idx = index(*[f"Sentence number {i} about the weather in town." for i in range(3000)])
    calls = {"fold": 0}
    for name in calls:
        real = getattr(leaks_mod, name)

        def counted(*a, _real=real, _name=name):
            calls[_name] += 1
            return _real(*a)

        monkeypatch.setattr(leaks_mod, name, counted)
    probes = [mk(f"Every day person {i} ___ at the office.", "works", pid=f"p-{i}") for i in range(20)]
    assert find_leaks(probes, idx) == []
    assert calls == {"fold": 20}  # one normalisation (folded) per probe, every key derived from it


def test_bad_settings_are_refused():
    with pytest.raises(ValueError):
        LeakIndex(KEEP, detectors=["fuzzy"])
