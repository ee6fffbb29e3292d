"""`scoring.max_positions` caps the token positions of every forward (rows x width, fillers
included; docs/scoring.md "Memory"), and moves no number: the same bits under a tight cap as under
the default, on tiny real models built here (Hugging Face GPT-2 and Llama) and the shipped native
GPT, with long few-shot prompts whose tree levels fill from many forwards."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from helpers.lm_fixtures import hf_gpt2_dir, hf_llama_dir
from helpers.paths import REPO
from test_prefix_sharing import ITEMS, PROBES, few_shot_requests, probe_requests

from evalgate.config import load_config
from evalgate.errors import ConfigError, RefusedError
from evalgate.scorers.loaders import load_scorer
from evalgate.scorers.torch_lm import TorchScorer, full_logits_fn

DEMO = REPO / "data/checkpoints/demo"


@pytest.fixture(scope="module", params=["hf", "llama", "native"])
def model_dir(request, tmp_path_factory) -> Path:
    if request.param == "native":
        return DEMO
    folder = tmp_path_factory.mktemp(f"cap-{request.param}")
    if request.param == "hf":
        return hf_gpt2_dir(folder, n_positions=1024)
    return hf_llama_dir(folder, max_positions=1024)


def widths_run(scorer, call) -> tuple[object, list[int]]:
    """`call()`'s result, and the positions (rows x width) of every forward it ran."""
    seen: list[int] = []
    cached = scorer.model_fn.cached
    start, extend = cached.start, cached.extend

    def spy_start(ids, keep):
        seen.append(ids.numel())
        return start(ids, keep)

    def spy_extend(ids, past, keep):
        seen.append(ids.numel())
        return extend(ids, past, keep)

    cached.start, cached.extend = spy_start, spy_extend
    try:
        return call(), seen
    finally:
        del cached.start, cached.extend


def test_no_forward_runs_more_positions_than_the_cap_and_no_number_moves(model_dir):
    scorer = load_scorer(model_dir, None, root=model_dir, batch_size=64)
    reqs = probe_requests(*PROBES)
    if scorer.max_length >= 1024:
        reqs += few_shot_requests(ITEMS)
    texts = [" ".join(PROBES[p][0] for p in PROBES) * 6, "She works every day."]

    def score():
        return [r.logprob for r in scorer.loglikelihood(reqs)], scorer.perplexity(texts).sentence_nll

    free, wide = widths_run(scorer, score)
    assert max(wide) > 128  # the default lets forwards grow past the cap tested below
    scorer.max_positions = 128
    capped, narrow = widths_run(scorer, score)
    assert max(narrow) <= 128
    assert len(narrow) > len(wide)
    assert capped == free  # exact: a row's bits do not depend on its forward's other rows


def test_a_model_run_whole_refuses_a_cap_below_two_of_its_longest_inputs(tmp_path):
    """A model without a usable key/value cache runs each input whole, at least two rows a
    forward: a cap that cannot hold them is refused naming the key and the value that works."""
    path = hf_gpt2_dir(tmp_path / "gpt2", n_positions=1024)
    hf = load_scorer(path, None, root=path, batch_size=64)
    model = hf.model_fn.model

    def plain(ids: torch.Tensor) -> torch.Tensor:
        return model(input_ids=ids, use_cache=False).logits

    plugin = TorchScorer(
        full_logits_fn(plain), hf.tok, 64, info=hf.info, max_length=1024, vocab_size=hf.vocab_size,
        max_positions=128,
    )  # fmt: skip
    reqs = few_shot_requests(ITEMS[:1])
    longest = max(len(sum(plugin.encode_pair(r.context, r.continuation), ())) - 1 for r in reqs)
    with pytest.raises(RefusedError) as exc:
        plugin.loglikelihood(reqs)
    assert "scoring.max_positions 128" in exc.value.message
    assert f"at least {2 * longest}" in (exc.value.hint or "")
    plugin.max_positions = 2 * longest
    got = [r.logprob for r in plugin.loglikelihood(reqs)]
    assert got == pytest.approx([r.logprob for r in hf.loglikelihood(reqs)], abs=1e-5)


def test_a_cap_below_the_widest_tree_piece_is_refused_in_evalgate_yml(tmp_path):
    (tmp_path / "evalgate.yml").write_text("scoring:\n  max_positions: 64\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="max_positions"):
        load_config(cwd=tmp_path)
    (tmp_path / "evalgate.yml").write_text("scoring:\n  max_positions: 512\n", encoding="utf-8")
    assert load_config(cwd=tmp_path).scoring.max_positions == 512
