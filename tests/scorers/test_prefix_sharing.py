"""Each distinct token prefix runs once, and a request's log-likelihood is the same bits whatever
else is scored with it (scorers/torch_lm.py "Fixed-shape forwards"), on tiny real models built
here (Hugging Face GPT-2 and Llama, the native GPT) and a plugin model without any cache support.
With a key/value cache, every shared piece of a prefix runs once ("Prefix tree").
Values agree with a direct one-forward-per-pair reference to float32 resolution."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import torch
from helpers.lm_fixtures import hf_gpt2_dir, hf_llama_dir
from helpers.paths import REPO
from test_torch_lm import REQUESTS, reference_loglik

from evalgate.scorers import torch_lm
from evalgate.scorers.loaders import load_scorer
from evalgate.types import LoglikRequest


@pytest.fixture(autouse=True)
def batch_size_alone(monkeypatch):
    """batch_size alone decides a forward's rows here (no position budget for short rows), so
    the batch-size comparisons keep their teeth; the budget has its own test in test_torch_lm.py."""
    monkeypatch.setattr(torch_lm, "POSITIONS_PER_FORWARD", 0)


DEMO = REPO / "data/checkpoints/demo"

# Probes as score_probes asks them: the candidates of one probe form a group.
PROBES = {
    "p1": ("She", [" works", " work", " worked", " works every day"]),
    "p2": ("Ayer yo", [" fui", " iba", " voy"]),
    "p3": ("They have gone to the", [" market", " marketplace", " beach"]),
    "p4": ("Mañana tú", [" tendrás", " tienes", " tuviste"]),
    "p5": ("She", [" works", " plays"]),  # the same context as p1, another group
    # a long context and candidates that branch after it: one context, three branches
    "p6": (
        "Yesterday my brother and my sister went to the market and then they",
        [" went home", " gone home", " go home together", " works"],
    ),
    # another probe whose context starts as p6's
    "p7": ("Yesterday my brother and my sister ate", [" bread", " breads"]),
}


def probe_requests(*ids: str) -> list[LoglikRequest]:
    return [LoglikRequest(PROBES[i][0], c, i) for i in ids for c in PROBES[i][1]]


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory) -> Path:
    return hf_gpt2_dir(tmp_path_factory.mktemp("gpt2-prefix"))


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory) -> Path:
    return hf_llama_dir(tmp_path_factory.mktemp("llama-prefix"))


@pytest.fixture(params=["hf", "native", "llama"])
def scorer(request, gpt2_dir, llama_dir):
    path = {"hf": gpt2_dir, "native": DEMO, "llama": llama_dir}[request.param]
    scorer = load_scorer(path, None, root=path, batch_size=64)
    assert scorer.model_fn.cached is not None  # contexts are shared through the key/value cache
    return scorer


def test_a_probe_scores_the_same_bits_alone_and_among_others(scorer):
    everything = probe_requests(*PROBES)
    together = [r.logprob for r in scorer.loglikelihood(everything)]
    for pid in PROBES:
        alone = [r.logprob for r in scorer.loglikelihood(probe_requests(pid))]
        mine = [v for req, v in zip(everything, together, strict=True) if req.group == pid]
        assert alone == mine, pid  # exact, not approx: the score cache relies on it
    # reversed order, other batch sizes: still the same bits
    back = [r.logprob for r in scorer.loglikelihood(everything[::-1])][::-1]
    assert back == together
    scorer.batch_size = 3
    assert [r.logprob for r in scorer.loglikelihood(everything)] == together


def test_each_distinct_prefix_of_a_probe_runs_once(gpt2_dir):
    scorer = load_scorer(gpt2_dir, None, root=gpt2_dir, batch_size=64)
    reqs = probe_requests("p1")
    encoded = [scorer.encode_pair(r.context, r.continuation) for r in reqs]
    inputs = {ctx + cont[:-1] for ctx, cont in encoded}
    longest = max(inputs, key=len)
    assert all(longest[: len(i)] == i for i in inputs)  # every input is a prefix of one row
    seen = []
    inner = scorer.model_fn

    def spy(ids, keep):
        seen.append(ids.tolist())
        return inner(ids, keep)

    spy.selects_positions = inner.selects_positions
    scorer.model_fn = spy
    scorer.loglikelihood(reqs)
    # one forward, whose rows are all the longest input (copies fill a small batch, see MIN_ROWS)
    assert len(seen) == 1
    assert {tuple(row) for row in seen[0]} == {longest}


def test_identical_inputs_of_different_probes_run_once(gpt2_dir):
    scorer = load_scorer(gpt2_dir, None, root=gpt2_dir, batch_size=64)
    one = [LoglikRequest("She", " works", "a")]
    scorer.loglikelihood(one)
    alone = dict(scorer.counters)
    twice = [LoglikRequest("She", " works", "a"), LoglikRequest("She", " works", "b")]
    res = scorer.loglikelihood(twice)
    assert scorer.counters["positions"] - alone["positions"] == alone["positions"]
    assert res[0].logprob == res[1].logprob


def test_shared_rows_agree_with_one_forward_per_pair(gpt2_dir):
    scorer = load_scorer(gpt2_dir, None, root=gpt2_dir, batch_size=64)
    reqs = probe_requests(*PROBES) + [LoglikRequest(r.context, r.continuation, "x") for r in REQUESTS]
    for req, res in zip(reqs, scorer.loglikelihood(reqs), strict=True):
        assert res.logprob == pytest.approx(
            reference_loglik(gpt2_dir, req.context, req.continuation), abs=1e-5
        )


def test_a_plugin_model_without_cache_support_shares_rows_too(gpt2_dir):
    """A plain callable returning (B, T, V) logits: no KV cache, no logits_to_keep."""
    from evalgate.scorers.torch_lm import TorchScorer, full_logits_fn

    hf = load_scorer(gpt2_dir, None, root=gpt2_dir, batch_size=64)
    model = hf.model_fn.model

    def plain(ids: torch.Tensor) -> torch.Tensor:
        return model(input_ids=ids, use_cache=False).logits

    plugin = TorchScorer(
        full_logits_fn(plain), hf.tok, 64, info=hf.info, max_length=64, vocab_size=hf.vocab_size
    )
    reqs = probe_requests(*PROBES)
    got = [r.logprob for r in plugin.loglikelihood(reqs)]
    assert got == pytest.approx([r.logprob for r in hf.loglikelihood(reqs)], abs=1e-5)
    alone = [r.logprob for r in plugin.loglikelihood(probe_requests("p3"))]
    assert alone == [v for r, v in zip(reqs, got, strict=True) if r.group == "p3"]


def logprobs_run_whole(scorer, reqs) -> list[float]:
    """`reqs` scored with every input run whole (the key/value cache switched off)."""
    cached = scorer.model_fn.cached
    scorer.model_fn.cached = None
    try:
        return [r.logprob for r in scorer.loglikelihood(reqs)]
    finally:
        scorer.model_fn.cached = cached


def test_tree_pieces_agree_with_inputs_run_whole(scorer):
    reqs = probe_requests(*PROBES)
    got = [r.logprob for r in scorer.loglikelihood(reqs)]
    assert got == pytest.approx(logprobs_run_whole(scorer, reqs), abs=1e-5)


def pieces_run(scorer, reqs) -> list[set[tuple[int, tuple[int, ...]]]]:
    """Score `reqs`, returning per forward of the cached model the set of (positions before,
    tokens) it ran (a set: fillers are copies of a forward's first row, see MIN_ROWS)."""
    cached = scorer.model_fn.cached
    start, extend = cached.start, cached.extend
    forwards: list[set[tuple[int, tuple[int, ...]]]] = []

    def spy_start(ids, keep):
        forwards.append({(0, tuple(row)) for row in ids.tolist()})
        return start(ids, keep)

    def spy_extend(ids, past, keep):
        assert past[0][0].shape[0] == ids.shape[0]
        forwards.append({(past[0][0].shape[2], tuple(row)) for row in ids.tolist()})
        return extend(ids, past, keep)

    cached.start, cached.extend = spy_start, spy_extend
    try:
        scorer.loglikelihood(reqs)
    finally:
        del cached.start, cached.extend
    return forwards


def test_a_shared_context_runs_once_for_every_candidate_and_probe(scorer):
    """p6 and p7 are two probes whose contexts share their first words; p6's candidates branch
    after its context. Every piece of the shared prefix (cut at torch_lm.CUTS) runs in exactly
    one forward, and what each candidate adds runs from those pieces' keys/values."""
    reqs = probe_requests("p6", "p7")
    six, _ = scorer.encode_pair(reqs[0].context, reqs[0].continuation)
    seven, _ = scorer.encode_pair(reqs[-1].context, reqs[-1].continuation)
    common = next(i for i, (x, y) in enumerate(zip(six, seven, strict=False)) if x != y)
    assert common >= 4 and len(six) > 16
    forwards = pieces_run(scorer, reqs)
    bounds = torch_lm._bounds(len(six))
    for a, b in itertools.pairwise(bounds[:-1]):  # the context's pieces
        holding = [f for f in forwards if (a, six[a:b]) in f]
        assert len(holding) == 1, (a, b)
    shared = [(a, b) for a, b in itertools.pairwise(bounds) if b <= common]
    assert shared and all((a, seven[a:b]) == (a, six[a:b]) for a, b in shared)
    fed = sum(len(tokens) for f in forwards for _, tokens in f)
    inputs = {ctx + cont[:-1] for ctx, cont in (scorer.encode_pair(r.context, r.continuation) for r in reqs)}
    # the contexts ran once, not once per candidate (pieces padded to a power of two included)
    assert fed < 0.6 * sum(len(i) for i in inputs), (fed, sum(len(i) for i in inputs))


def test_passes_of_the_tree_give_the_same_bits(scorer, monkeypatch):
    """With room for the keys/values of a few positions only, the tree runs in many passes that
    compute the shared pieces again: the same bits, since a piece depends on its prefix alone."""
    reqs = probe_requests(*PROBES)
    want = [r.logprob for r in scorer.loglikelihood(reqs)]
    fewer = scorer.counters["forwards"]
    monkeypatch.setattr(torch_lm, "TREE_CACHE", 3 * scorer.model_fn.cached.kv_per_token)
    scorer.counters = dict.fromkeys(scorer.counters, 0)
    assert [r.logprob for r in scorer.loglikelihood(reqs)] == want
    assert scorer.counters["forwards"] > fewer


def test_a_model_that_ignores_the_cache_is_scored_with_inputs_whole(gpt2_dir):
    """A forward that takes the cache arguments but does not continue from them fails the
    load-time check: no cache is used, and the scores are still right."""
    from evalgate.scorers.hf_loader import _continues_from_cache

    hf = load_scorer(gpt2_dir, None, root=gpt2_dir, batch_size=64)
    model = hf.model_fn.model

    class Forgetful(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(
            self, input_ids, past_key_values=None, position_ids=None, use_cache=False, logits_to_keep=0
        ):
            return self.inner(input_ids=input_ids, use_cache=use_cache, logits_to_keep=logits_to_keep)

    assert _continues_from_cache(Forgetful(), hf.vocab_size, 64) is None
    assert _continues_from_cache(model, hf.vocab_size, 64) is not None


def test_a_branching_probe_scores_the_same_bits_among_many(scorer):
    """Enough branching probes that their continuation forwards hold more rows than the smallest
    forward (see MIN_ROWS): a probe's numbers still do not depend on the others."""
    words = ["often", "never", "today", "again", "later", "there", "here", "then", "now", "also"]
    many = [
        LoglikRequest(f"{a} {b} my brother and my sister", cand, f"{a}-{b}")
        for a in words
        for b in words[:4]
        for cand in (" went home", " gone home", " go home together", " works")
    ]
    together = [r.logprob for r in scorer.loglikelihood(many)]
    for group in ("often-never", "also-here", "now-today"):
        mine = [(r, v) for r, v in zip(many, together, strict=True) if r.group == group]
        alone = [r.logprob for r in scorer.loglikelihood([r for r, _ in mine])]
        assert alone == [v for _, v in mine], group


def test_a_padded_last_piece_stays_within_the_models_positions(tmp_path):
    """The last piece of an input pads to a power of two, but never past the model's positions
    (44 here: a piece from position 32 of 11 or 12 tokens runs as 12, not 16)."""
    path = hf_gpt2_dir(tmp_path / "gpt2-44", n_positions=44)
    scorer = load_scorer(path, None, root=path, batch_size=8)
    assert scorer.model_fn.cached is not None and scorer.max_length == 44
    words = "Yesterday my brother and my sister went to the market and then they went home again"
    reqs = [LoglikRequest(" ".join([words] * 3), cand, "long") for cand in (" works", " went home")]
    reqs += [LoglikRequest(words, " works", "short")]
    rows = [sum(scorer.encode_pair(r.context, r.continuation), ())[:-1] for r in reqs]
    assert max(len(scorer._truncate(*scorer.encode_pair(r.context, r.continuation))) for r in reqs) > 40
    widths = []
    extend = scorer.model_fn.cached.extend

    def spy(ids, past, keep):
        widths.append(past[0][0].shape[2] + ids.shape[1])
        return extend(ids, past, keep)

    scorer.model_fn.cached.extend = spy
    try:
        got = [r.logprob for r in scorer.loglikelihood(reqs)]
    finally:
        del scorer.model_fn.cached.extend
    assert max(widths) == 44 and len(rows) == 3
    assert got == pytest.approx(logprobs_run_whole(scorer, reqs), abs=1e-5)


def test_a_long_texts_windows_in_several_passes_keep_its_bits(monkeypatch):
    """A text longer than the model's window is scored in several rows; when the tree's passes
    split them (little room for keys/values, many other texts), the text's sum is still added in
    its own order: the same bits alone and among others."""
    import json

    scorer = load_scorer(DEMO, None, root=DEMO, batch_size=8)
    monkeypatch.setattr(torch_lm, "TREE_CACHE", 100 * scorer.model_fn.cached.kv_per_token)
    lines = (REPO / "data/corpus/train.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line)["text"] for line in lines[:400]]
    passes = []
    waves = scorer._waves

    def spy(rows, cached):
        out = waves(rows, cached)
        passes.append(len(out))
        return out

    scorer._waves = spy
    split = 0
    for j in range(8):
        long = " ".join(texts[j * 15 : j * 15 + 15])
        alone = scorer.perplexity([long]).sentence_nll[0]
        among = scorer.perplexity([long, *texts[200:260]]).sentence_nll[0]
        assert alone == among, j
        split += passes[-1] > 1
    assert split  # the passes did split the calls


# A 5-shot prompt in the MMLU shape: the same solved examples before every item of a subject.
SHOT = (
    "Question: Yesterday my brother and my sister went to the market. Where did they go?\n"
    "A. home\nB. the market\nC. the beach\nD. school\nAnswer: B\n\n"
)
ITEMS = [
    "They have gone to the beach and then they went home. Where did they go first?",
    "She works every day at the market. Where does she work?",
    "Ayer yo fui a la playa. Where did I go?",
    "Mañana tú tendrás que ir a la escuela. Where will you go?",
]


def few_shot_requests(items: list[str]) -> list[LoglikRequest]:
    prompt = SHOT * 5
    options = "\nA. home\nB. the market\nC. the beach\nD. school\nAnswer:"
    return [
        LoglikRequest(f"{prompt}Question: {q}{options}", c, q)
        for q in items
        for c in (" A", " B", " C", " D")
    ]


@pytest.fixture(params=["hf", "llama"])
def long_scorer(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"long-{request.param}")
    if request.param == "hf":
        path = hf_gpt2_dir(folder, n_positions=1024)
    else:
        path = hf_llama_dir(folder, max_positions=1024)
    scorer = load_scorer(path, None, root=path, batch_size=8)
    assert scorer.model_fn.cached is not None and scorer.max_length == 1024
    return scorer


def test_a_long_few_shot_prefix_runs_once_for_every_item(long_scorer):
    """A 5-shot prefix of a few hundred tokens before every item: each of its pieces (cut every
    64 tokens past 64, torch_lm._bounds) runs in exactly one forward, however many items follow
    it, and an item's numbers are the same bits alone and among the others."""
    scorer = long_scorer
    reqs = few_shot_requests(ITEMS)
    rows = [scorer.encode_pair(r.context, r.continuation)[0] for r in reqs]
    common = next(i for i, (x, y) in enumerate(zip(rows[0], rows[4], strict=False)) if x != y)
    assert common > 200  # well past the 128 tokens the tree used to stop at
    forwards = pieces_run(scorer, reqs)
    bounds = torch_lm._bounds(len(rows[0]))
    shared = [(a, b) for a, b in itertools.pairwise(bounds) if b <= common]
    assert shared[-1][1] > common - 64  # shared to within one step of 64 tokens
    for a, b in shared:
        holding = [f for f in forwards if (a, rows[0][a:b]) in f]
        assert len(holding) == 1, (a, b)
    fed = sum(len(tokens) for f in forwards for _, tokens in f)
    assert fed < 0.5 * sum(len(r) for r in set(rows)), fed
    together = [r.logprob for r in scorer.loglikelihood(reqs)]
    for q in ITEMS[1:3]:
        alone = [r.logprob for r in scorer.loglikelihood(few_shot_requests([q]))]
        assert alone == [v for r, v in zip(reqs, together, strict=True) if r.group == q], q
    assert together == pytest.approx(logprobs_run_whole(scorer, reqs), abs=1e-5)
