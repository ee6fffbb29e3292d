"""TorchScorer on real tiny models: token alignment, batching, BOS, boundary merges, OOV, perplexity."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import pytest
import tokenizers
import torch
import transformers
from helpers.lm_fixtures import BigramLM, WordTokenizer, hf_gpt2_dir

from evalgate.errors import RefusedError
from evalgate.scorers import torch_lm
from evalgate.scorers.adapters import PluginTokenizerAdapter
from evalgate.scorers.base import ScorerInfo
from evalgate.scorers.loaders import load_scorer
from evalgate.scorers.torch_lm import TorchScorer, full_logits_fn
from evalgate.scoring.multiple_choice import score_probes
from evalgate.types import LoglikRequest, Probe


@pytest.fixture(autouse=True)
def batch_size_alone(monkeypatch):
    """batch_size alone decides a forward's rows here (no position budget for short rows), so
    the batch-size comparisons keep their teeth; the budget has its own test in test_torch_lm.py."""
    monkeypatch.setattr(torch_lm, "POSITIONS_PER_FORWARD", 0)


REQUESTS = [
    LoglikRequest("She ", "works"),
    LoglikRequest("She", " worked"),
    LoglikRequest("She", " works every day"),
    LoglikRequest("Ayer ", "fui"),
    LoglikRequest("Ayer", " comió"),
    LoglikRequest("Mañana tú ", "tendrás"),
    LoglikRequest("", "She works."),
    LoglikRequest("¿Qué año es? El niño ", "bebió leche"),
    # the same tokens split at different points (lm-eval 0.4.13's logits-cache bug)
    LoglikRequest("She works", " every"),
    LoglikRequest("She", " works every"),
    LoglikRequest("They have gone to the ", "market"),
    LoglikRequest("They have gone to the ", "marketplace"),
]
TEXTS = [
    "She works every day at the office.",
    "Ayer fui al mercado.",
    "¿Qué año es?",
    "I went to the beach last week with my brother and my sister.",
    "",
]


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory) -> Path:
    return hf_gpt2_dir(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="module")
def gpt2_bos_dir(tmp_path_factory) -> Path:
    return hf_gpt2_dir(tmp_path_factory.mktemp("gpt2bos"), bos=True, seed=1)


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@functools.cache
def hf_pair(path: Path):
    tok = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = transformers.AutoModelForCausalLM.from_pretrained(path, local_files_only=True).eval()
    return tok, model


def reference_loglik(path: Path, context: str, continuation: str) -> float:
    """Independent of evalgate: one full forward, log_softmax, gather at the CONT offsets."""
    tok, model = hf_pair(path)
    stripped = context.rstrip()
    continuation = context[len(stripped) :] + continuation
    if stripped:
        ctx = tok(stripped)["input_ids"]  # the tokenizer's own default decides about BOS
        cont = tok(stripped + continuation)["input_ids"][len(ctx) :]
    else:
        ctx = [tok.bos_token_id]
        cont = tok(continuation, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(torch.tensor([ctx + cont])).logits[0]
    logp = torch.log_softmax(logits.double(), dim=-1)
    return sum(float(logp[len(ctx) - 1 + j, t]) for j, t in enumerate(cont))


def reference_perplexity(path: Path, texts: list[str]) -> tuple[float, int]:
    tok, model = hf_pair(path)
    nll, n = 0.0, 0
    for text in texts:
        ids = [tok.bos_token_id, *tok(text, add_special_tokens=False)["input_ids"]]
        if len(ids) < 2:
            continue  # an empty text has nothing to predict
        with torch.no_grad():
            logits = model(torch.tensor([ids[:-1]])).logits[0]
        nll += float(
            torch.nn.functional.cross_entropy(logits.double(), torch.tensor(ids[1:]), reduction="sum")
        )
        n += len(ids) - 1
    return math.exp(nll / n), n


# --- alignment against an independent reference -----------------------------------------------


@pytest.mark.parametrize("which", ["gpt2_dir", "gpt2_bos_dir"])
def test_logliks_equal_a_direct_reference_computation(which, request):
    path = request.getfixturevalue(which)
    scorer = load_scorer(path, None, root=path)
    assert scorer.tok.uses_bos is (which == "gpt2_bos_dir")
    got = scorer.loglikelihood(REQUESTS)
    for req, res in zip(REQUESTS, got, strict=True):
        assert res.logprob == pytest.approx(reference_loglik(path, req.context, req.continuation), abs=1e-5)
        assert res.decoded.strip() == (req.context[len(req.context.rstrip()) :] + req.continuation).strip()
        assert res.n_tokens >= 1 and not res.oov
    assert got[1].logprob != pytest.approx(got[0].logprob)  # a model that prefers some tokens


def test_full_logits_and_selected_positions_agree(gpt2_dir):
    scorer = load_scorer(gpt2_dir, None, root=gpt2_dir)
    assert scorer.model_fn.selects_positions  # transformers' logits_to_keep is used
    model = transformers.AutoModelForCausalLM.from_pretrained(gpt2_dir, local_files_only=True).eval()
    full = TorchScorer(full_logits_fn(model), scorer.tok, 4, info=scorer.info, max_length=64)
    for a, b in zip(scorer.loglikelihood(REQUESTS), full.loglikelihood(REQUESTS), strict=True):
        assert a.logprob == pytest.approx(b.logprob, abs=1e-5)


# --- batching ----------------------------------------------------------------------------------


def probe_like_requests() -> list[LoglikRequest]:
    contexts = ["She", "Ayer yo", "Todos los días yo", "They have", "¿Qué año es? El niño", "Mañana tú"]
    cands = [" works", " work", " fui", " hablo con mi hermana", " gone", " comió pan", " tendrás", " went"]
    return [LoglikRequest(c, k) for c in contexts for k in cands] + REQUESTS


@pytest.fixture(scope="module")
def gpt2_mild_dir(tmp_path_factory) -> Path:
    # logits up to ~6: float32 resolves them to ~5e-7, below the 1e-6 we promise
    return hf_gpt2_dir(tmp_path_factory.mktemp("gpt2mild"), sharpen=8.0, seed=2)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    ("which", "dtype", "tol"), [("gpt2_mild_dir", "float32", 1e-6), ("gpt2_dir", "float64", 1e-9)]
)
def test_batched_equals_one_at_a_time(which, dtype, tol, threads, request, restore_threads):
    path = request.getfixturevalue(which)
    reqs = probe_like_requests()
    one = load_scorer(path, None, root=path, batch_size=1, threads=1, dtype=dtype)
    singles = [one.loglikelihood([r])[0].logprob for r in reqs]
    for batch_size in (1, 3, 16, 64):
        scorer = load_scorer(path, None, root=path, batch_size=batch_size, threads=threads, dtype=dtype)
        got = [r.logprob for r in scorer.loglikelihood(reqs)]
        assert max(abs(a - b) for a, b in zip(got, singles, strict=True)) < tol, batch_size


def test_short_rows_fill_a_forward_up_to_the_position_budget_with_the_same_bits(gpt2_dir, monkeypatch):
    reqs = probe_like_requests()
    one = load_scorer(gpt2_dir, None, root=gpt2_dir, batch_size=1)
    singles = [r.logprob for r in one.loglikelihood(reqs)]
    texts_one = one.perplexity(TEXTS)
    monkeypatch.setattr(torch_lm, "POSITIONS_PER_FORWARD", 4096)
    budget = load_scorer(gpt2_dir, None, root=gpt2_dir, batch_size=1)
    assert [r.logprob for r in budget.loglikelihood(reqs)] == singles  # to the bit
    assert budget.perplexity(TEXTS).sentence_nll == texts_one.sentence_nll
    assert budget.counters["forwards"] < one.counters["forwards"]  # rows of a length share one


def test_results_come_back_in_request_order_whatever_the_order(gpt2_dir):
    reqs = probe_like_requests()
    scorer = load_scorer(gpt2_dir, None, root=gpt2_dir, batch_size=8)
    forward = [r.logprob for r in scorer.loglikelihood(reqs)]
    backward = [r.logprob for r in scorer.loglikelihood(reqs[::-1])][::-1]
    assert forward == pytest.approx(backward, abs=1e-6)


def test_candidates_sharing_a_context_share_one_forward(gpt2_dir):
    scorer = load_scorer(gpt2_dir, None, root=gpt2_dir, batch_size=1)
    rows = []
    inner = scorer.model_fn

    def counting(ids, keep):
        rows.append(ids.shape[0])
        return inner(ids, keep)

    counting.selects_positions = True
    scorer.model_fn = counting
    group = [LoglikRequest("She", k) for k in (" work", " works", " worked", " works every day")]
    inputs = [sum(scorer.encode_pair(r.context, r.continuation), ())[:-1] for r in group]
    longest = max(inputs, key=len)
    assert all(longest[: len(i)] == i for i in inputs)  # each input is a prefix of the longest
    shared = scorer.loglikelihood(group)
    assert len(rows) == 1  # one forward serves the four candidates
    alone = [load_scorer(gpt2_dir, None, root=gpt2_dir).loglikelihood([r])[0].logprob for r in group]
    assert [r.logprob for r in shared] == pytest.approx(alone, abs=1e-6)
    rows.clear()
    # different context_enc: a longer input never serves a prefix of another split, but the very
    # same input tokens run once (a causal model gives them the same logits, bit for bit)
    pair = [LoglikRequest("She works", " every"), LoglikRequest("She", " works every")]
    first, second = (sum(scorer.encode_pair(r.context, r.continuation), ())[:-1] for r in pair)
    assert first == second
    together = scorer.loglikelihood(pair)
    assert len(rows) == 1
    each = [scorer.loglikelihood([r])[0].logprob for r in pair]
    assert [r.logprob for r in together] == each


# --- perplexity --------------------------------------------------------------------------------


def test_perplexity_equals_reference_and_unbatched(gpt2_dir):
    want, n = reference_perplexity(gpt2_dir, TEXTS)
    one = load_scorer(gpt2_dir, None, root=gpt2_dir, batch_size=1)
    for batch_size in (1, 2, 64):
        got = load_scorer(gpt2_dir, None, root=gpt2_dir, batch_size=batch_size).perplexity(TEXTS)
        assert got.n_tokens == n
        assert got.value == pytest.approx(want, rel=1e-6)
        assert got.value == pytest.approx(one.perplexity(TEXTS).value, rel=1e-6)
        assert got.nll == pytest.approx(math.log(got.value) * got.n_tokens, rel=1e-9)


def test_perplexity_reports_each_sentence_nll_and_tokens(gpt2_dir):
    # The paired perplexity test (gate/perplexity_test.py) needs every sentence's own NLL,
    # checked here against the reference computed one text at a time.
    got = load_scorer(gpt2_dir, None, root=gpt2_dir, batch_size=2).perplexity(TEXTS)
    assert len(got.sentence_nll) == len(got.sentence_tokens) == len(TEXTS)
    for text, nll, n in zip(TEXTS, got.sentence_nll, got.sentence_tokens, strict=True):
        want, want_n = reference_perplexity(gpt2_dir, [text]) if text else (None, 0)
        assert n == want_n
        if n:
            assert nll == pytest.approx(math.log(want) * want_n, rel=1e-6)
        else:
            assert nll == 0.0
    assert math.fsum(got.sentence_nll) == pytest.approx(got.nll, rel=1e-12)
    assert sum(got.sentence_tokens) == got.n_tokens


def test_texts_longer_than_the_window_are_scored_in_windows(tmp_path):
    path = hf_gpt2_dir(tmp_path / "short", n_positions=8)
    long_text = " ".join(["She works every day at the office."] * 4)
    n_tok = len(transformers.AutoTokenizer.from_pretrained(path).encode(long_text))
    a = load_scorer(path, None, root=tmp_path, batch_size=1).perplexity([long_text, "Ayer fui."])
    b = load_scorer(path, None, root=tmp_path, batch_size=16).perplexity([long_text, "Ayer fui."])
    n_short = len(transformers.AutoTokenizer.from_pretrained(path).encode("Ayer fui."))
    assert n_tok > 8 and a.n_tokens == n_tok + n_short  # every token predicted once, after the prefix
    assert a.value == pytest.approx(b.value, rel=1e-6)
    # a long context is left-truncated to the window, as lm-eval does
    res = load_scorer(path, None, root=tmp_path).loglikelihood([LoglikRequest(long_text, " She")])
    assert math.isfinite(res[0].logprob)


# --- the seed's tests on a model with known preferences ---------------------------------------

WORDS = ["She", "works", "work", "worked", "every", "day", "Yesterday", "he", "went", "has", "gone", "been"]


def bigram_scorer(prefs, batch_size=4) -> TorchScorer:
    tok = WordTokenizer(WORDS)
    model = BigramLM(tok, prefs).eval()
    info = ScorerInfo(format="plugin", loader="tests:bigram")
    return TorchScorer(
        full_logits_fn(model), PluginTokenizerAdapter(tok, loader="tests"), batch_size, info=info
    )


def probe(pid, prompt, candidates, expected) -> Probe:
    return Probe(pid, "en", "work", "regular", "present_simple", "3sg", prompt, tuple(candidates), expected,
                 "correct", "core")  # fmt: skip


def test_score_candidate_picks_works_after_she():
    scorer = bigram_scorer({"She": {"works": 0.9, "work": 0.05, "worked": 0.05}})
    (entry,) = score_probes(
        [probe("p", "She ___ every day", ["work", "works", "worked"], "works")], "{prompt}", scorer
    )
    assert entry["pred"] == "works" and entry["correct"] is True
    assert entry["confidence"] > 0.8


def test_length_normalisation_does_not_penalise_the_longer_candidate_on_a_model():
    scorer = bigram_scorer({"he": {"went": 0.37, "has": 0.5}, "has": {"gone": 0.5, "been": 0.5}})
    p = probe("p", "Yesterday he ___ home", ["went", "has gone"], "has gone")
    (raw,) = score_probes([p], "{prompt}", scorer, "candidate-raw")
    (norm,) = score_probes([p], "{prompt}", scorer, "candidate", "tokens")
    went, has_gone = raw["candidates"]
    assert has_gone["n_tokens"] == 2 and went["n_tokens"] == 1
    assert raw["pred"] == "went"  # the raw sum charges "has gone" for its second token
    assert norm["pred"] == "has gone"


def test_ppl_is_finite_and_above_one():
    scorer = bigram_scorer({"She": {"works": 0.9}, "works": {"every": 0.9}, "every": {"day": 0.9}})
    ppl = scorer.perplexity(["She works every day"])
    assert math.isfinite(ppl.value) and ppl.value > 1.0
    assert ppl.n_tokens == 4  # [BOS] predicts She, She predicts works, ...


def test_empty_context_without_bos_or_eos_is_refused():
    tok = WordTokenizer(WORDS)
    tok.bos_token_id = None
    scorer = TorchScorer(
        full_logits_fn(BigramLM(tok, {})),
        PluginTokenizerAdapter(tok, loader="t"),
        2,
        info=ScorerInfo("plugin"),
    )
    with pytest.raises(RefusedError, match="empty context"):
        scorer.loglikelihood([LoglikRequest("", "She works")])


# --- boundaries and unknown tokens -------------------------------------------------------------


def test_a_tokenizer_merging_across_the_blank_is_refused_naming_the_probe(gpt2_dir):
    scorer = load_scorer(gpt2_dir, None, root=gpt2_dir)
    ids = scorer.tok.encode("Ella deshizo")
    assert len(ids) < len(scorer.tok.encode("Ella des")) + len(scorer.tok.encode("hizo"))  # it merges
    bad = Probe("es-deshacer-001", "es", "deshacer", "irregular", "past_simple", "3sg",
                "Ella des___ la maleta.", ("hizo", "hace"), "hizo", "correct", "core")  # fmt: skip
    good = Probe("en-work-001", "en", "work", "regular", "present_simple", "3sg",
                 "She ___ every day.", ("works", "work"), "works", "correct", "core")  # fmt: skip
    with pytest.raises(RefusedError) as info:
        score_probes([good, bad], "{prompt}", scorer)
    assert "es-deshacer-001" in info.value.message and "'hizo'" in info.value.message
    assert "en-work-001" not in info.value.message
    assert {f.probe_id for f in info.value.findings} == {"es-deshacer-001"}


def test_word_level_tokenizer_with_unk_marks_model_oov(tmp_path):
    words = ["She", "works", "work", "every", "day", "went", "Yesterday", "he", "home", "."]
    wl = tokenizers.Tokenizer(
        tokenizers.models.WordLevel(
            {w: i for i, w in enumerate(["[UNK]", "[BOS]", *words])}, unk_token="[UNK]"
        )
    )
    wl.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    hf_tok = transformers.PreTrainedTokenizerFast(tokenizer_object=wl, unk_token="[UNK]", bos_token="[BOS]")
    path = hf_gpt2_dir(tmp_path / "wl", hf_tokenizer=hf_tok)
    scorer = load_scorer(path, None, root=tmp_path)
    assert scorer.tok.unk_id == 0
    probes = [
        probe("p-oov", "Yesterday he ___ home .", ["went", "goed"], "went"),
        probe("p-ok", "She ___ every day .", ["works", "work"], "works"),
    ]
    oov, ok = score_probes(probes, "{prompt}", scorer)
    assert oov["status"] == "model_oov" and oov["candidates"][1]["oov"] is True
    assert ok["status"] == "scored"


def test_perplexity_on_the_shipped_test_set_batched_equals_unbatched(gpt2_mild_dir, repo_root):
    lines = (repo_root / "data/corpus/test.jsonl").read_text(encoding="utf-8").splitlines()[:150]
    texts = [json.loads(line)["text"] for line in lines]
    one = load_scorer(gpt2_mild_dir, None, root=repo_root, batch_size=1).perplexity(texts)
    many = load_scorer(gpt2_mild_dir, None, root=repo_root, batch_size=64).perplexity(texts)
    assert one.n_tokens == many.n_tokens > len(texts)
    assert many.value == pytest.approx(one.value, rel=1e-6)
