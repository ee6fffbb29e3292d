"""scoring/multiple_choice.py on `FakeScorer`: rendering, methods, normalisation, argmax, statuses."""

from __future__ import annotations

import math

import pytest
from helpers.fake_scorer import FakeScorer

from evalgate.errors import CheckpointError, RefusedError
from evalgate.scoring.multiple_choice import entropy, render, score_probes, softmax, split_whitespace
from evalgate.types import LoglikRequest, Probe

TEMPLATE = "Complete the sentence.\n{prompt}\n"


def make_probe(pid="p-1", prompt="She ___ every day.", candidates=("work", "works"), expected="works", **kw):
    base = dict(
        id=pid,
        language="en",
        verb="work",
        regularity="regular",
        tense="present_simple",
        person="3sg",
        prompt=prompt,
        candidates=tuple(candidates),
        expected=expected,
        label="correct",
        category="core",
    )
    base.update(kw)
    return Probe(**base)


# --- rendering --------------------------------------------------------------------------------


def test_render_splits_at_the_blank_and_drops_the_files_final_newline():
    ctx, suffix = render(TEMPLATE, make_probe())
    assert ctx == "Complete the sentence.\nShe "
    assert suffix == " every day."


@pytest.mark.parametrize("template", ["no placeholder", "{prompt} and {prompt}", "___ {prompt}"])
def test_render_refuses_a_bad_template(template):
    with pytest.raises(RefusedError, match="template"):
        render(template, make_probe())


def test_each_suite_renders_its_own_template_in_one_scorer_call():
    # several suites (docs/suites.md): the template is chosen per probe, and every request still
    # reaches the model in one call so it batches across suites
    calls = []

    class Counting(FakeScorer):
        def loglikelihood(self, requests):
            calls.append(len(requests))
            return super().loglikelihood(requests)

    scorer = Counting({"works": -1.0, "work": -2.0})
    probes = [make_probe("a-1", suite="a"), make_probe("b-1", suite="b"), make_probe("a-2", suite="a")]
    templates = {"a": "A: {prompt}", "b": "B says {prompt}"}
    entries = score_probes(probes, lambda p: templates[p.suite], scorer)
    assert calls == [6]
    assert [e["id"] for e in entries] == ["a-1", "b-1", "a-2"]
    assert [e["context"] for e in entries] == ["A: She", "B says She", "A: She"]


def test_trailing_whitespace_moves_to_the_continuation():
    assert split_whitespace("Ayer ", "fui") == ("Ayer", " fui")
    assert split_whitespace("Ayer\n \t", "fui") == ("Ayer", "\n \tfui")
    assert split_whitespace("¿", "Vienes") == ("¿", "Vienes")


def test_requests_carry_the_lm_eval_split_and_entries_record_it():
    scorer = FakeScorer({"works": -1.0, "work": -2.0})
    (entry,) = score_probes([make_probe()], TEMPLATE, scorer)
    assert scorer.requests == [
        LoglikRequest("Complete the sentence.\nShe", " work"),
        LoglikRequest("Complete the sentence.\nShe", " works"),
    ]
    assert entry["context"] == "Complete the sentence.\nShe"
    assert [c["continuation"] for c in entry["candidates"]] == [" work", " works"]


# --- the seed's classification function -------------------------------------------------------


def test_picks_argmax_with_softmax_confidence_over_candidates_only():
    scorer = FakeScorer({"works": -1.0, "work": -3.0})
    (entry,) = score_probes([make_probe()], TEMPLATE, scorer, "candidate-raw")
    assert entry["pred"] == "works" and entry["correct"] is True and entry["status"] == "scored"
    p = 1 / (1 + math.exp(-2.0))
    assert entry["confidence"] == pytest.approx(p)
    h = -(p * math.log(p) + (1 - p) * math.log(1 - p))
    assert entry["entropy"] == pytest.approx(h)
    assert entry["entropy_norm"] == pytest.approx(h / math.log(2))
    works = entry["candidates"][1]
    assert works == {
        "text": "works",
        "continuation": " works",
        "loglik": -1.0,
        "n_tokens": 1,
        "score": -1.0,
        "surprisal": 1.0,
    }


def test_a_tie_at_the_top_shows_the_first_candidate_and_counts_wrong():
    # a checkpoint whose logits are all equal must not score every item whose answer is first
    scorer = FakeScorer(default=-2.0)
    (entry,) = score_probes([make_probe(candidates=("works", "work"))], TEMPLATE, scorer)
    assert entry["pred"] == "works" and entry["expected"] == "works"
    assert entry["correct"] is False and entry["tie"] is True
    assert entry["confidence"] == pytest.approx(0.5)
    assert entry["entropy_norm"] == pytest.approx(1.0)
    # a tie below the top is no tie
    scorer = FakeScorer({"works": -1.0}, default=-2.0)
    probe = make_probe(candidates=("works", "work", "worked"))
    (entry,) = score_probes([probe], TEMPLATE, scorer)
    assert entry["correct"] is True and "tie" not in entry


def test_length_normalisation_does_not_penalise_the_longer_candidate():
    # "has gone" is 2 tokens at -1.2 each; "went" is 1 token at -1.5: raw prefers the short one.
    probe = make_probe(prompt="Yesterday he ___ home.", candidates=("went", "has gone"), expected="has gone")
    scorer = FakeScorer({"went": -1.5, "has gone": -2.4})
    (raw,) = score_probes([probe], TEMPLATE, scorer, "candidate-raw")
    (norm,) = score_probes([probe], TEMPLATE, scorer, "candidate", "tokens")
    assert raw["pred"] == "went"
    assert norm["pred"] == "has gone"
    assert norm["candidates"][1]["score"] == pytest.approx(-1.2)
    assert norm["candidates"][1]["loglik"] == pytest.approx(-2.4)


@pytest.mark.parametrize(
    ("normalization", "denominators"),
    [("tokens", (1, 1)), ("chars", (4, 5)), ("bytes", (5, 5)), ("none", (1, 1))],
)
def test_normalisations(normalization, denominators):
    probe = make_probe(prompt="Yo ___ pan.", candidates=("comí", "comes"), expected="comí", language="es")
    scorer = FakeScorer({"comí": -2.0, "comes": -3.0})
    (entry,) = score_probes([probe], TEMPLATE, scorer, "candidate", normalization)
    got = [c["score"] for c in entry["candidates"]]
    assert got == pytest.approx([-2.0 / denominators[0], -3.0 / denominators[1]])


def test_candidate_raw_ignores_the_normalisation():
    scorer = FakeScorer({"has gone": -2.4, "went": -1.5})
    probe = make_probe(candidates=("went", "has gone"), expected="went")
    (entry,) = score_probes([probe], TEMPLATE, scorer, "candidate-raw", "chars")
    assert [c["score"] for c in entry["candidates"]] == [-1.5, -2.4]


def test_sentence_method_scores_the_whole_filled_sentence_from_an_empty_context():
    full = "Complete the sentence.\nShe works every day."
    scorer = FakeScorer(fn=lambda ctx, cont: -1.0 if "works" in cont else -5.0)
    (entry,) = score_probes([make_probe()], TEMPLATE, scorer, "sentence", "tokens")
    assert scorer.requests[1] == LoglikRequest("", full)
    assert entry["context"] == ""
    assert entry["candidates"][1]["continuation"] == full
    assert entry["candidates"][1]["n_tokens"] == len(full.split())
    assert entry["candidates"][1]["score"] == pytest.approx(-1.0 / len(full.split()))
    assert entry["pred"] == "works"
    (chars,) = score_probes([make_probe()], TEMPLATE, scorer, "sentence", "chars")
    assert chars["candidates"][1]["score"] == pytest.approx(-1.0 / len(full))


def test_unknown_method_or_normalisation_is_refused():
    with pytest.raises(RefusedError, match="method"):
        score_probes([make_probe()], TEMPLATE, FakeScorer(default=0.0), "vibes")
    with pytest.raises(RefusedError, match="normalization"):
        score_probes([make_probe()], TEMPLATE, FakeScorer(default=0.0), "candidate", "words")


# --- statuses ---------------------------------------------------------------------------------


def test_statuses_and_unscored_entries_keep_metadata():
    probes = [
        make_probe("p-scored"),
        make_probe("p-amb", label="ambiguous"),
        make_probe("p-dep", deprecated=True),
        make_probe("p-exc"),
        make_probe("p-oov", candidates=("works", "wrks")),
    ]
    scorer = FakeScorer({"works": -1.0, "work": -2.0, "wrks": -9.0}, oov={"wrks"})
    entries = score_probes(probes, TEMPLATE, scorer, excluded={"p-exc"})
    assert [e["status"] for e in entries] == ["scored", "ambiguous", "deprecated", "excluded", "model_oov"]
    # deprecated and excluded probes are never sent to the model
    assert len(scorer.requests) == 6
    dep = entries[2]
    assert dep["candidates"] == [{"text": "work"}, {"text": "works"}]
    assert dep["pred"] is dep["correct"] is dep["confidence"] is dep["entropy"] is dep["entropy_norm"] is None
    for entry, probe in zip(entries, probes, strict=True):
        assert entry["content_hash"] == probe.content_hash()
        assert entry["verb"] == "work" and entry["tense"] == "present_simple" and entry["kind"] == "form"
    assert entries[1]["correct"] is True  # ambiguous probes are scored (reported apart)
    assert entries[4]["candidates"][1]["oov"] is True and "oov" not in entries[4]["candidates"][0]


def test_an_oov_candidate_is_not_a_boundary_error():
    # an unknown token decodes to "[UNK]": the probe is model_oov, not refused
    scorer = FakeScorer(default=-3.0, oov={"wrks"}, decode={"wrks": "[UNK]"})
    (entry,) = score_probes([make_probe(candidates=("works", "wrks"))], TEMPLATE, scorer)
    assert entry["status"] == "model_oov"


# --- refusals ---------------------------------------------------------------------------------


def test_boundary_errors_are_collected_and_name_probe_candidate_and_split():
    probes = [
        make_probe("p-ok"),
        make_probe("p-merge", file="data/eval/probes.jsonl", line=7),
        make_probe("p-empty", candidates=("works", " ")),
    ]
    scorer = FakeScorer(default=-1.0, decode={"works": "orks"})
    with pytest.raises(RefusedError) as info:
        score_probes(probes, TEMPLATE, scorer)
    err = info.value
    assert "tokenization boundary" in err.message
    assert "data/eval/probes.jsonl:7: probe p-merge, candidate 'works'" in err.message
    assert "decode to 'orks'" in err.message and "continuation tokens: 'works'" in err.message
    assert "probe p-empty, candidate ' '" in err.message and "no tokens of its own" in err.message
    by_probe = {f.probe_id for f in err.findings}
    assert by_probe == {"p-ok", "p-merge", "p-empty"}  # "works" decodes wrongly in every probe
    merge = next(f for f in err.findings if f.probe_id == "p-merge")
    assert (merge.file, merge.line, merge.check) == ("data/eval/probes.jsonl", 7, "tokenization-boundary")
    assert err.hint and err.exit_code == 2


def test_decoded_text_is_compared_modulo_outer_whitespace():
    scorer = FakeScorer(default=-1.0, decode={"works": "works  "})
    (entry,) = score_probes([make_probe()], TEMPLATE, scorer)
    assert entry["status"] == "scored"


def test_non_finite_loglik_is_a_broken_checkpoint():
    scorer = FakeScorer({"works": float("nan"), "work": -1.0})
    with pytest.raises(CheckpointError, match="p-1"):
        score_probes([make_probe()], TEMPLATE, scorer)


def test_all_probes_go_to_the_scorer_in_one_call_in_order():
    calls = []

    class Recording(FakeScorer):
        def loglikelihood(self, requests):
            calls.append(list(requests))
            return super().loglikelihood(requests)

    probes = [make_probe(f"p-{i}") for i in range(5)]
    score_probes(probes, TEMPLATE, Recording(default=-1.0))
    assert len(calls) == 1 and len(calls[0]) == 10


def test_softmax_and_entropy_helpers():
    assert softmax([0.0, 0.0, 0.0, 0.0]) == pytest.approx([0.25] * 4)
    assert softmax([-1000.0, 0.0]) == pytest.approx([0.0, 1.0])
    assert entropy([0.25] * 4) == pytest.approx(math.log(4))
    assert entropy([1.0, 0.0]) == 0.0


def test_fake_scorer_perplexity_and_missing_entries():
    scorer = FakeScorer(perplexity_value=5.0)
    ppl = scorer.perplexity(["a b", "c"])
    assert ppl.value == 5.0 and ppl.n_tokens == 5 and ppl.nll == pytest.approx(5 * math.log(5.0))
    with pytest.raises(KeyError, match="no entry"):
        scorer.loglikelihood([LoglikRequest("x", " y")])
