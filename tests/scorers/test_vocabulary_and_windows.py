"""Scoring at the edges of a model's vocabulary and window: a pad token added later, ids beyond the
vocabulary, a sentence of probability zero, continuations longer than the window, method sentence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.paths import allow_shipped_data

from evalgate.errors import CheckpointError
from evalgate.scorers.loaders import load_scorer


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory) -> Path:
    from helpers.lm_fixtures import hf_gpt2_dir

    return hf_gpt2_dir(tmp_path_factory.mktemp("review") / "gpt2")


def copy_of(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


# --- scoring with other tokenizers and windows --------------------------------------------------


def resave_with_vocab(src: Path, dst: Path, vocab_size: int) -> Path:
    """The same tokenizer next to a fresh GPT-2 whose vocabulary is `vocab_size`."""
    import torch
    import transformers

    shutil.copytree(src, dst)
    (dst / "model.safetensors").unlink()
    config = transformers.GPT2Config.from_pretrained(src)
    config.vocab_size = vocab_size
    torch.manual_seed(0)
    transformers.GPT2LMHeadModel(config).save_pretrained(dst)
    return dst


def test_a_pad_token_added_after_the_model_does_not_crash_the_padded_batches(gpt2_dir, tmp_path):
    """Llama-style fine-tunes add a [PAD] with id == vocab_size: pads must not be looked up."""
    import transformers

    from evalgate.types import LoglikRequest

    path = copy_of(gpt2_dir, tmp_path / "ckpt")
    tok = transformers.AutoTokenizer.from_pretrained(path)
    tok.add_special_tokens({"pad_token": "[PAD]"})
    tok.save_pretrained(path)
    vocab = json.loads((path / "config.json").read_text())["vocab_size"]
    assert tok.pad_token_id == vocab  # outside the model's embedding
    requests = [LoglikRequest("She", " works every day"), LoglikRequest("Ayer", " fui")]
    batched = load_scorer(path, None, root=tmp_path, batch_size=8).loglikelihood(requests)
    alone = [load_scorer(gpt2_dir, None, root=tmp_path, batch_size=1).loglikelihood([r])[0] for r in requests]
    assert [r.logprob for r in batched] == pytest.approx([r.logprob for r in alone], abs=1e-5)


def test_tokenizer_ids_beyond_the_models_vocabulary_are_refused_naming_the_token(gpt2_dir, tmp_path):
    from evalgate.types import LoglikRequest

    path = resave_with_vocab(gpt2_dir, tmp_path / "small", 40)
    scorer = load_scorer(path, None, root=tmp_path)
    with pytest.raises(CheckpointError) as info:
        scorer.loglikelihood([LoglikRequest("She", " works every day at the office")])
    assert "vocabulary has 40 entries" in info.value.message and "token id" in info.value.message
    with pytest.raises(CheckpointError, match="vocabulary has 40 entries"):
        scorer.perplexity(["She works every day at the office."])


def test_a_test_sentence_with_probability_zero_is_a_broken_checkpoint_not_a_crash():
    """An infinite perplexity used to reach results.json as null and fail its schema (exit 3)."""
    import torch
    from helpers.lm_fixtures import BigramLM, WordTokenizer

    from evalgate.scorers.adapters import PluginTokenizerAdapter
    from evalgate.scorers.base import ScorerInfo
    from evalgate.scorers.torch_lm import TorchScorer, full_logits_fn

    tok = WordTokenizer(["She", "works", "day"])
    model = BigramLM(tok, {"She": {"works": 0.9}})
    with torch.no_grad():
        model.table.weight[:, tok.ids["day"]] = float("-inf")
    scorer = TorchScorer(
        full_logits_fn(model.eval()),
        PluginTokenizerAdapter(tok, loader="t"),
        info=ScorerInfo(format="plugin", loader="t"),
    )
    assert scorer.perplexity(["She works"]).value > 1
    with pytest.raises(CheckpointError) as info:
        scorer.perplexity(["She works", "She works day"])
    assert "test sentence 2" in info.value.message and "She works day" in info.value.message


def rolling_reference(path: Path, ids: list[int], first: int, window: int) -> float:
    """Each target k >= first predicted in disjoint spans of `window` targets, each input the
    `window` tokens before the span's end (lm-eval's rolling windows), one forward per target."""
    import torch
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    total = 0.0
    for k in range(first, len(ids)):
        if len(ids) - 1 <= window:
            lo = 0
        else:
            start = first + ((k - first) // window) * window
            lo = max(0, min(start + window, len(ids)) - 1 - window)
        with torch.no_grad():
            logits = model(torch.tensor([ids[lo:k]])).logits[0, -1].double()
        total += float(torch.log_softmax(logits, -1)[ids[k]])
    return total


def test_a_continuation_longer_than_the_window_is_scored_in_windows(tmp_path):
    """Method `sentence` scores the whole sentence as the continuation; one longer than the
    model's window was refused without naming the probe (the demo, block 64, refused the
    shipped ordinal probes). It is now scored like a perplexity text, and a continuation that
    fits keeps lm-eval's left-truncated context."""
    import transformers
    from helpers.lm_fixtures import hf_gpt2_dir

    from evalgate.types import LoglikRequest

    path = hf_gpt2_dir(tmp_path / "w8", n_positions=8, seed=4)
    tok = transformers.AutoTokenizer.from_pretrained(path)
    sentence = "She works every day at the office. They have gone to the market."
    ids = [tok.bos_token_id, *tok.encode(sentence)]
    assert len(ids) - 1 > 2 * 8
    requests = [LoglikRequest("", sentence), LoglikRequest("She works every day at the office.", " They")]
    for batch_size in (1, 16):
        long, short = load_scorer(path, None, root=tmp_path, batch_size=batch_size).loglikelihood(requests)
        assert long.n_tokens == len(ids) - 1
        assert long.logprob == pytest.approx(rolling_reference(path, ids, 1, 8), abs=1e-4)
        ctx = tok.encode("She works every day at the office.")
        cont = tok.encode("She works every day at the office. They")[len(ctx) :]
        window = (ctx + cont)[-9:]  # lm-eval: the last 8 inputs before the final target
        assert short.n_tokens == len(cont) and len(ctx) + len(cont) > 9
        assert short.logprob == pytest.approx(
            rolling_reference(path, window, len(window) - len(cont), 8), abs=1e-4
        )


def test_the_demo_scores_the_shipped_probes_with_method_sentence(tmp_path, repo_root, monkeypatch):
    from evalgate.cli import main
    from evalgate.config import default_config_text

    text = default_config_text().replace("method: candidate ", "method: sentence ")
    for folder in ("data/", "baselines/"):
        text = text.replace(f" {folder}", f" {repo_root / folder}/").replace(
            f"[{folder}", f"[{repo_root / folder}/"
        )
    text = text.replace(", data/", f", {repo_root / 'data'}/")
    (tmp_path / "evalgate.yml").write_text(text)
    monkeypatch.chdir(tmp_path)
    allow_shipped_data(monkeypatch)
    code = main(
        ["--config", str(tmp_path / "evalgate.yml"), "--baseline", "none", "--out", str(tmp_path / "out")]
    )
    assert code == 0
    res = json.loads((tmp_path / "out/results.json").read_text())
    assert res["manifest"]["method"] == "sentence"
    longest = max(
        (c for p in res["probes"] if p.get("context") is not None for c in p["candidates"]),
        key=lambda c: c["n_tokens"],
    )
    assert longest["n_tokens"] > 64  # longer than the demo's window, scored all the same
    assert res["slices"]["overall"]["accuracy"] > 0.8
