"""Review of loading and scoring with other models than ours: each test pins a defect found by
running `evalgate run` on tiny checkpoints of other architectures and tokenizers (GPT-2, Llama
with a Metaspace tokenizer adding BOS, GPT-NeoX, OPT, Qwen2, BERT; fp16/bf16, sharded, .bin,
vocab.json/merges.txt only, tiny and huge model_max_length) and on plugin loaders.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import tokenizers
import torch
import transformers
from helpers.lm_fixtures import SENTENCES, hf_gpt2_dir, train_bpe

from evalgate.errors import EXIT_REFUSED, CheckpointError, RefusedError
from evalgate.scorers.loaders import load_scorer
from evalgate.scoring.multiple_choice import score_probes
from evalgate.types import LoglikRequest, Probe


def probe(pid: str, prompt: str, candidates: list[str], expected: str) -> Probe:
    return Probe(pid, "en", "work", "regular", "present_simple", "3sg", prompt, tuple(candidates), expected,
                 "correct", "core")  # fmt: skip


def refused(path: Path, match: str, loader: str | None = None) -> CheckpointError:
    with pytest.raises(CheckpointError) as info:
        load_scorer(path, loader, root=path if loader else path.parent)
    err = info.value
    assert err.exit_code == EXIT_REFUSED
    assert "\n" not in err.message, err.message
    assert match in err.message, err.message
    return err


# --- encoders are not causal language models --------------------------------------------------


def test_a_bert_checkpoint_is_refused_not_scored_with_the_answer_in_view(tmp_path):
    """BertForMaskedLM loads through AutoModelForCausalLM (as BertLMHeadModel) and used to be
    scored: bidirectional attention sees the candidate it is predicting, and the right-padding."""
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=train_bpe(), bos_token="<s>", eos_token="<|endoftext|>"
    )
    config = transformers.BertConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2
    )
    path = tmp_path / "bert"
    transformers.BertForMaskedLM(config).save_pretrained(path)
    tok.save_pretrained(path)
    err = refused(path, "not a causal language model")
    assert str(path / "config.json") in err.message and "bert" in err.message
    # the same architecture as a decoder (is_decoder: true) is causal and loads
    doc = json.loads((path / "config.json").read_text())
    (path / "config.json").write_text(json.dumps({**doc, "is_decoder": True}))
    scorer = load_scorer(path, None, root=tmp_path)
    (res,) = scorer.loglikelihood([LoglikRequest("She", " works")])
    assert res.n_tokens >= 1


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


# --- tokenizers that normalise text -----------------------------------------------------------


def lowercasing_dir(path: Path) -> Path:
    tok = train_bpe([s.lower() for s in SENTENCES])
    tok.normalizer = tokenizers.normalizers.Lowercase()
    hf_tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>"
    )
    return hf_gpt2_dir(path, hf_tokenizer=hf_tok)


def test_a_lowercasing_tokenizer_is_scored_with_method_sentence(tmp_path):
    """Every sentence starts with a capital the tokenizer gives back in lower case: all probes
    were refused as 'tokenization boundary' errors, with a hint to use method `sentence`."""
    scorer = load_scorer(lowercasing_dir(tmp_path / "lower"), None, root=tmp_path)
    probes = [probe("p1", "She ___ every day.", ["works", "work"], "works")]
    (entry,) = score_probes(probes, "{prompt}", scorer, method="sentence")
    assert entry["status"] == "scored" and entry["pred"] in ("works", "work")
    # ... but two candidates it cannot tell apart are refused, not tied silently
    twins = [probe("p2", "She ___ every day.", ["Works", "works"], "works")]
    with pytest.raises(RefusedError) as info:
        score_probes(twins, "{prompt}", scorer)
    assert "probe p2, candidate 'works'" in info.value.message
    assert "same tokens as candidate 'Works'" in info.value.message


def test_a_word_level_tokenizer_decoding_with_spaces_is_scored_with_method_sentence(tmp_path):
    """A word-level tokenizer decodes "day." as "day ." (tokens joined by spaces)."""
    words = ["[UNK]", "[BOS]", "She", "works", "work", "every", "day", "."]
    wl = tokenizers.Tokenizer(
        tokenizers.models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]")
    )
    wl.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    hf_tok = transformers.PreTrainedTokenizerFast(tokenizer_object=wl, unk_token="[UNK]", bos_token="[BOS]")
    scorer = load_scorer(hf_gpt2_dir(tmp_path / "wl", hf_tokenizer=hf_tok), None, root=tmp_path)
    probes = [probe("p1", "She ___ every day.", ["works", "work"], "works")]
    (entry,) = score_probes(probes, "{prompt}", scorer, method="sentence")
    assert entry["status"] == "scored"


def test_a_boundary_merge_is_still_refused(tmp_path):
    scorer = load_scorer(hf_gpt2_dir(tmp_path / "gpt2"), None, root=tmp_path)
    bad = probe("es-1", "Ella des___ la maleta.", ["hizo", "hace"], "hizo")
    with pytest.raises(RefusedError, match="probe es-1, candidate 'hizo'"):
        score_probes([bad], "{prompt}", scorer)


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


# --- a plugin returning a Hugging Face tokenizer that adds its own special tokens ---------------

HF_PLUGIN = """
import transformers

def load(path):
    model = transformers.AutoModelForCausalLM.from_pretrained(path)
    return model, transformers.AutoTokenizer.from_pretrained(path)
"""


def special_tokens_dir(path: Path, template: str) -> Path:
    tok = train_bpe()
    ids = [(t, tok.token_to_id(t)) for t in ("<s>", "<|endoftext|>") if t in template]
    tok.post_processor = tokenizers.processors.TemplateProcessing(single=template, special_tokens=ids)
    hf_tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="<|endoftext|>"
    )
    return hf_gpt2_dir(path, hf_tokenizer=hf_tok)


@pytest.mark.parametrize("template", ["<s> $A", "$A <|endoftext|>", "<s> $A <|endoftext|>"])
def test_a_plugin_tokenizer_adding_bos_or_eos_scores_like_the_checkpoint(tmp_path, template):
    """Through --loader, a Llama-style tokenizer's own BOS came on top of the scorer's: perplexity
    predicted a second BOS before every test sentence (one extra token per sentence) and method
    `sentence` scored "<s> <s> She ..."; a tokenizer appending EOS had every probe refused as a
    tokenization-boundary error (each context ended in EOS)."""
    path = special_tokens_dir(tmp_path / "ckpt", template)
    name = f"review_models_hf_plugin_{next(_IDS)}"
    (tmp_path / f"{name}.py").write_text(HF_PLUGIN)
    plugin = load_scorer(path, f"{name}:load", root=tmp_path)
    direct = load_scorer(path, None, root=tmp_path)
    texts = ["She works every day at the office.", "Ayer fui al mercado."]
    ours, theirs = plugin.perplexity(texts), direct.perplexity(texts)
    assert ours.n_tokens == theirs.n_tokens
    assert ours.value == pytest.approx(theirs.value, rel=1e-6)
    requests = [LoglikRequest("", "She works every day."), LoglikRequest("She", " works")]
    for a, b in zip(plugin.loglikelihood(requests), direct.loglikelihood(requests), strict=True):
        assert (a.n_tokens, a.decoded) == (b.n_tokens, b.decoded)
        assert a.logprob == pytest.approx(b.logprob, abs=1e-5)
    probes = [probe("p1", "She ___ every day.", ["works", "work"], "works")]
    (entry,) = score_probes(probes, "{prompt}", plugin)
    assert entry["status"] == "scored"


# --- a config.json describing a far larger model than its weights -----------------------------


@pytest.mark.parametrize(
    "changes, weights, match",
    [
        ({"n_embd": 256}, None, "wrong shape(s) 'transformer.h.0.attn.c_attn.bias' is [96], expected [768]"),
        # keys that match nothing: only the parameter count can tell (1.3e9 parameters claimed)
        ({"n_embd": 1024, "n_layer": 100}, {"x": [1]}, "describes a model of 1,"),
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


@pytest.mark.parametrize("template", ["<s> $A", "<s> $A <|endoftext|>"])
def test_a_bos_the_template_adds_without_declaring_it_is_used(tmp_path, template):
    """A tokenizer whose template puts <s> before every text but whose tokenizer_config.json
    declares no bos_token was scored without BOS: contexts the model never saw in training,
    unlike lm-eval, which keeps the tokenizer's own default."""
    tok = train_bpe()
    specials = [(t, tok.token_to_id(t)) for t in ("<s>", "<|endoftext|>") if t in template]
    tok.post_processor = tokenizers.processors.TemplateProcessing(single=template, special_tokens=specials)
    hf_tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tok)
    scorer = load_scorer(hf_gpt2_dir(tmp_path / "ckpt", hf_tokenizer=hf_tok), None, root=tmp_path)
    bos = tok.token_to_id("<s>")
    assert scorer.tok.uses_bos and scorer.tok.bos_id == bos
    assert scorer.encode_pair("She", " works")[0][0] == bos
    assert scorer.encode_pair("", "She works.")[0] == (bos,)


def test_a_tokenizer_that_raises_on_unknown_words_is_a_refusal_naming_its_file(tmp_path):
    """A word-level tokenizer without an unk token raises "Missing [UNK] token from the
    vocabulary" on the first unknown word: that was an exit-3 traceback."""
    words = ["<s>", "She", "works", "work", "every", "day", "."]
    wl = tokenizers.Tokenizer(tokenizers.models.WordLevel({w: i for i, w in enumerate(words)}))
    wl.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    hf_tok = transformers.PreTrainedTokenizerFast(tokenizer_object=wl, bos_token="<s>")
    path = hf_gpt2_dir(tmp_path / "ckpt", hf_tokenizer=hf_tok)
    err = refused(path, "the tokenizer cannot encode")
    assert err.message.startswith(str(path / "tokenizer.json"))


def test_a_model_with_four_positions_loads(tmp_path):
    """The causality check ran 8 tokens through a model with n_positions 4 and refused it."""
    path = hf_gpt2_dir(tmp_path / "ckpt", n_positions=4)
    scorer = load_scorer(path, None, root=tmp_path)
    assert scorer.max_length == 4
    (res,) = scorer.loglikelihood([LoglikRequest("She works every day at the", " office")])
    assert res.n_tokens >= 1 and res.logprob < 0
