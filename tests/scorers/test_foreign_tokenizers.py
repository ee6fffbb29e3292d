"""Tokenizers that are not ours: lowercasing and word-level ones are scored with method sentence,
BOS/EOS a template adds are used, a boundary merge and a tokenizer raising on unknown words refused."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import tokenizers
import transformers
from helpers.checkpoints import refused
from helpers.lm_fixtures import SENTENCES, hf_gpt2_dir, train_bpe

from evalgate.errors import RefusedError
from evalgate.scorers.loaders import load_scorer
from evalgate.scoring.multiple_choice import score_probes
from evalgate.types import LoglikRequest, Probe


def probe(pid: str, prompt: str, candidates: list[str], expected: str) -> Probe:
    return Probe(pid, "en", "work", "regular", "present_simple", "3sg", prompt, tuple(candidates), expected,
                 "correct", "core")  # fmt: skip


_IDS = itertools.count()


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
