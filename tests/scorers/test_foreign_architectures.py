"""Models that are not ours: encoders and models without a causal mask are refused, small windows,
(logits, loss) tuples and four positions are scored, and configs or shard indexes that describe
another model than the weights are refused before allocating."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest
import torch
import transformers
from helpers.checkpoints import refused
from helpers.lm_fixtures import hf_gpt2_dir, train_bpe

from evalgate.errors import CheckpointError
from evalgate.scorers.loaders import load_scorer
from evalgate.types import LoglikRequest

# --- encoders are not causal language models --------------------------------------------------


def save_bert(path):
    """A saved tiny BertForMaskedLM (an encoder) with a BPE tokenizer."""
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=train_bpe(), bos_token="<s>", eos_token="<|endoftext|>"
    )
    config = transformers.BertConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2
    )
    transformers.BertForMaskedLM(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def test_a_bert_checkpoint_is_refused_not_scored_with_the_answer_in_view(tmp_path):
    """BertForMaskedLM loads through AutoModelForCausalLM (as BertLMHeadModel) and used to be
    scored: bidirectional attention sees the candidate it is predicting, and the right-padding."""
    path = save_bert(tmp_path / "bert")
    err = refused(path, "not a causal language model")
    assert str(path / "config.json") in err.message and "bert" in err.message
    # the same architecture as a decoder (is_decoder: true) is causal and loads
    doc = json.loads((path / "config.json").read_text())
    (path / "config.json").write_text(json.dumps({**doc, "is_decoder": True}))
    scorer = load_scorer(path, None, root=tmp_path)
    (res,) = scorer.loglikelihood([LoglikRequest("She", " works")])
    assert res.n_tokens >= 1


def test_an_architecture_whose_code_is_not_installed_is_refused_by_name(tmp_path):
    """The image drops transformers' non-causal architectures (docs/docker.md): a checkpoint of
    one is refused naming its model_type, not reported as a broken config."""
    path = save_bert(tmp_path / "bert")
    # As in the image: the architecture's package cannot be imported. A fresh interpreter,
    # since this one may hold the architecture already (transformers caches its classes).
    script = (
        "import sys; sys.modules['transformers.models.bert'] = None\n"
        "from pathlib import Path\n"
        "from evalgate.errors import CheckpointError\n"
        "from evalgate.scorers.loaders import load_scorer\n"
        "try:\n"
        f"    load_scorer(Path({str(path)!r}), None, root=Path({str(tmp_path)!r}))\n"
        "except CheckpointError as exc:\n"
        "    print('REFUSED', exc.message)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "REFUSED" in out.stdout and "is not a causal language model evalgate can load" in out.stdout
    assert "'bert'" in out.stdout and str(path / "config.json") in out.stdout


PLUGIN = """
import torch

class Tok:
    words = ["[UNK]", "She", "works", "work", "every", "day"]
    def encode(self, text):
        return [self.words.index(w) if w in self.words else 0 for w in text.split()]
    def decode(self, ids):
        return " ".join(self.words[i] for i in ids)

class NoMask(torch.nn.Module):
    '''A user's GPT that forgot its causal mask: every position sees the whole row.'''
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(6, 6)
    def forward(self, ids):
        x = self.emb(ids)
        return x + x.mean(dim=1, keepdim=True)

class Causal(NoMask):
    def forward(self, ids):
        x = self.emb(ids)
        return x + x.cumsum(dim=1) / torch.arange(1, ids.shape[1] + 1).view(1, -1, 1)

class SmallBlock(Causal):
    block_size = 8  # nanoGPT-style: longer inputs are an error
    def forward(self, ids):
        assert ids.shape[1] <= self.block_size, f"Cannot forward sequence of length {ids.shape[1]}"
        return super().forward(ids)

def no_mask():
    return NoMask(), Tok()

def small_block():
    return SmallBlock(), Tok()

def causal():
    return Causal(), Tok()
"""

_IDS = itertools.count()


@pytest.mark.parametrize("fn, ok", [("no_mask", False), ("causal", True)])
def test_a_plugin_model_without_a_causal_mask_is_refused(tmp_path, fn, ok):
    name = f"review_models_plugin_{next(_IDS)}"
    (tmp_path / f"{name}.py").write_text(PLUGIN)
    spec = f"{name}:{fn}"
    if ok:
        scorer = load_scorer(None, spec, root=tmp_path)
        assert len(scorer.loglikelihood([LoglikRequest("She", " works")])) == 1
    else:
        with pytest.raises(CheckpointError) as info:
            load_scorer(None, spec, root=tmp_path)
        assert info.value.message.startswith(f"--loader {spec}: the model is not causal")


# --- a tokenizer with a tiny model_max_length -------------------------------------------------


def test_a_tiny_model_max_length_prints_no_transformers_warning(tmp_path, monkeypatch):
    """transformers warned "Token indices sequence length is longer than the specified maximum"
    on stderr (CI logs) although evalgate never truncates with the tokenizer's limit."""
    from transformers import tokenization_utils_base

    warned: list[str] = []
    monkeypatch.setattr(tokenization_utils_base.logger, "warning", lambda msg, *a, **k: warned.append(msg))
    path = hf_gpt2_dir(tmp_path / "gpt2")
    doc = json.loads((path / "tokenizer_config.json").read_text())
    (path / "tokenizer_config.json").write_text(json.dumps({**doc, "model_max_length": 4}))
    scorer = load_scorer(path, None, root=tmp_path)
    assert scorer.tok.tok.model_max_length == 4
    res = scorer.loglikelihood([LoglikRequest("She works every day at the office and", " works")])
    assert torch.isfinite(torch.tensor(res[0].logprob))
    assert not [m for m in warned if "sequence length" in m]


# --- a config.json describing a far larger model than its weights -----------------------------


@pytest.mark.parametrize(
    "changes, weights, match",
    [
        ({"n_embd": 256}, None, "wrong shape(s) 'transformer.h.0.attn.c_attn.bias' is [96], expected [768]"),
        # keys that match nothing: only the counts can tell (1.3e9 parameters in 1,200 tensors
        # claimed; the skeleton's construction stops past what one stored tensor allows)
        ({"n_embd": 1024, "n_layer": 100}, {"x": [1]}, "describes a model of more than 66 parameter tensors"),
        ({"n_embd": 1024, "n_layer": 100}, "bin", "describes a model of 1,"),  # .bin: bytes bound it
    ],
)
def test_a_config_larger_than_its_weights_is_refused_before_allocating(
    tmp_path, monkeypatch, changes, weights, match
):
    """transformers allocates and randomly initialises whatever config.json describes before the
    mismatch is reported: a config claiming a 70B model next to tiny weights exhausted memory."""
    import safetensors.torch

    path = hf_gpt2_dir(tmp_path / "gpt2")
    if weights == "bin":
        state = safetensors.torch.load_file(path / "model.safetensors")
        (path / "model.safetensors").unlink()
        torch.save(state, path / "pytorch_model.bin")
    elif weights is not None:
        safetensors.torch.save_file(
            {k: torch.zeros(v) for k, v in weights.items()}, path / "model.safetensors"
        )
    doc = json.loads((path / "config.json").read_text())
    (path / "config.json").write_text(json.dumps({**doc, **changes}))

    def allocate(*args, **kwargs):
        raise AssertionError("from_pretrained was called")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", allocate)
    err = refused(path, match)
    assert "from_pretrained was called" not in err.message


def test_a_plugin_model_with_a_small_block_size_is_scored_not_refused(tmp_path):
    """The loader's own check ran the model on the whole fingerprint sentence (20+ tokens), so a
    model declaring block_size 8 was refused ("model(ids) raised AssertionError") before scoring,
    although scoring itself keeps every input within block_size."""
    name = f"review_models_plugin_{next(_IDS)}"
    (tmp_path / f"{name}.py").write_text(PLUGIN)
    scorer = load_scorer(None, f"{name}:small_block", root=tmp_path)
    assert scorer.max_length == 8
    long_context = "She works every day " * 4
    (res,) = scorer.loglikelihood([LoglikRequest(long_context.strip(), " works")])
    assert res.n_tokens == 1
    assert scorer.perplexity([long_context]).n_tokens == 15  # no BOS: the first word is not predicted


MINGPT_PLUGIN = """
import torch

class Tok:
    words = ["[UNK]", "She", "works", "work", "every", "day"]
    def encode(self, text):
        return [self.words.index(w) if w in self.words else 0 for w in text.split()]
    def decode(self, ids):
        return " ".join(self.words[i] for i in ids)

class MinGPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(6, 6)
    def forward(self, idx, targets=None):
        logits = self.emb(idx)
        return logits, None  # minGPT: (logits, loss)

def load():
    return MinGPT(), Tok()
"""


def test_a_plugin_model_returning_a_logits_loss_tuple_is_scored(tmp_path):
    """minGPT's forward returns (logits, loss): it was refused as 'logits of shape tuple'."""
    name = f"review_models_mingpt_{next(_IDS)}"
    (tmp_path / f"{name}.py").write_text(MINGPT_PLUGIN)
    scorer = load_scorer(None, f"{name}:load", root=tmp_path)
    (res,) = scorer.loglikelihood([LoglikRequest("She", " works")])
    assert res.n_tokens == 1 and res.logprob < 0


# --- a shard index pointing outside the checkpoint ---------------------------------------------


@pytest.mark.parametrize("where", ["relative", "absolute"])
def test_a_shard_index_naming_a_file_outside_the_checkpoint_is_refused(tmp_path, where):
    """transformers opens the shards an index names relative to the directory: a shard at
    "../outside/..." (or an absolute path) was loaded unchecked and left out of the checkpoint's
    SHA-256, so results.json named a checkpoint other than the one scored."""
    path = tmp_path / "ckpt"
    transformers.GPT2LMHeadModel(
        transformers.GPT2Config(vocab_size=64, n_positions=16, n_embd=16, n_layer=2, n_head=2)
    ).save_pretrained(path, max_shard_size="20KB")
    transformers.PreTrainedTokenizerFast(tokenizer_object=train_bpe(vocab_size=300)).save_pretrained(path)
    index = path / "model.safetensors.index.json"
    doc = json.loads(index.read_text())
    last = sorted(set(doc["weight_map"].values()))[-1]
    (tmp_path / "outside").mkdir()
    moved = (path / last).rename(tmp_path / "outside" / last)
    target = f"../outside/{last}" if where == "relative" else str(moved)
    doc["weight_map"] = {k: target if v == last else v for k, v in doc["weight_map"].items()}
    index.write_text(json.dumps(doc))
    err = refused(path, "is outside the checkpoint directory")
    assert str(index) in err.message


class _Calls:
    def __reduce__(self):
        import os

        return (os.getcwd, ())


def test_a_bin_shard_the_index_names_outside_the_pytorch_model_pattern_is_scanned(tmp_path):
    """Only pytorch_model*.bin files were scanned; a shard index may name any file."""
    import pickle

    import safetensors.torch

    path = hf_gpt2_dir(tmp_path / "gpt2")
    state = safetensors.torch.load_file(path / "model.safetensors")
    (path / "model.safetensors").unlink()
    keys = sorted(state)
    torch.save({k: state[k] for k in keys[1:]}, path / "pytorch_model-00001-of-00002.bin")
    (path / "extra.bin").write_bytes(pickle.dumps({keys[0]: _Calls()}, protocol=2))
    weight_map = {k: "pytorch_model-00001-of-00002.bin" for k in keys[1:]} | {keys[0]: "extra.bin"}
    (path / "pytorch_model.bin.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    err = refused(path, "unsafe pickle")
    assert str(path / "extra.bin") in err.message


def test_a_model_with_four_positions_loads(tmp_path):
    """The causality check ran 8 tokens through a model with n_positions 4 and refused it."""
    path = hf_gpt2_dir(tmp_path / "ckpt", n_positions=4)
    scorer = load_scorer(path, None, root=tmp_path)
    assert scorer.max_length == 4
    (res,) = scorer.loglikelihood([LoglikRequest("She works every day at the", " office")])
    assert res.n_tokens >= 1 and res.logprob < 0
