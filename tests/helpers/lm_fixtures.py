"""Tiny real language models for the scoring tests, built in the test (nothing downloaded).

- `train_bpe(sentences)`: a GPT-2-style byte-level BPE trained on the spot;
- `hf_gpt2_dir(path, ...)`: a randomly initialised `transformers` GPT-2 + that tokenizer, saved
  as a Hugging Face directory (config.json, model.safetensors, tokenizer files);
- `BigramLM` / `WordTokenizer`: a hand-set bigram model and a word-level tokenizer of the seed's
  plugin shape (`model(ids).logits`, `tokenizer.encode(str) -> list[int]`), for tests that need a
  model whose preferences are known exactly.
"""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import tokenizers
import torch
import transformers
from tokenizers import decoders, models, pre_tokenizers, processors, trainers

SENTENCES = [
    "She works every day at the office.",
    "He worked in the garden yesterday.",
    "They have gone to the market.",
    "I went to the beach last week.",
    "Ayer fui al mercado con mi madre.",
    "Todos los días yo hablo con mi hermana.",
    "Mañana tú tendrás tiempo libre.",
    "Ella deshizo la maleta. Ella deshizo la cama. Él deshizo el nudo.",
    "¿Qué año es? El niño comió pan y bebió leche.",
]


def train_bpe(sentences=SENTENCES, vocab_size: int = 400) -> tokenizers.Tokenizer:
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>", "<s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(sentences) * 20, trainer=trainer)
    return tok


def hf_gpt2_dir(
    path: Path,
    *,
    bos: bool = False,
    tok: tokenizers.Tokenizer | None = None,
    seed: int = 0,
    n_positions: int = 64,
    hf_tokenizer: transformers.PreTrainedTokenizerFast | None = None,
    sharpen: float = 20.0,
) -> Path:
    """A saved tiny GPT-2. `bos=True`: the tokenizer's own default prepends <s> (Llama-style)."""
    if hf_tokenizer is None:
        tok = tok or train_bpe()
        if bos:
            tok.post_processor = processors.TemplateProcessing(
                single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))]
            )
            hf_tokenizer = transformers.PreTrainedTokenizerFast(
                tokenizer_object=tok, bos_token="<s>", eos_token="<|endoftext|>"
            )
        else:
            hf_tokenizer = transformers.PreTrainedTokenizerFast(
                tokenizer_object=tok,
                bos_token="<|endoftext|>",
                eos_token="<|endoftext|>",
                unk_token="<|endoftext|>",
            )
    config = transformers.GPT2Config(
        vocab_size=len(hf_tokenizer),
        n_positions=n_positions,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=hf_tokenizer.bos_token_id,
        eos_token_id=hf_tokenizer.eos_token_id,
    )
    torch.manual_seed(seed)
    model = transformers.GPT2LMHeadModel(config)
    # Random init is near-uniform; sharpen the (tied) embedding so that tokens differ clearly.
    # x20 gives logits up to ~16, like a trained model's; float32 then resolves them to ~1e-6.
    with torch.no_grad():
        model.transformer.wte.weight.mul_(sharpen)
    model.save_pretrained(path)
    hf_tokenizer.save_pretrained(path)
    return path


def hf_llama_dir(path: Path, *, seed: int = 0, sharpen: float = 20.0, max_positions: int = 64) -> Path:
    """A saved tiny Llama (rotary positions, RMSNorm, gated MLP, grouped-query attention) with a
    tokenizer that prepends <s>, as Llama's does."""
    tok = train_bpe()
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))]
    )
    hf_tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="<|endoftext|>"
    )
    config = transformers.LlamaConfig(
        vocab_size=len(hf_tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        bos_token_id=hf_tokenizer.bos_token_id,
        eos_token_id=hf_tokenizer.eos_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = transformers.LlamaForCausalLM(config)
    with torch.no_grad():
        model.lm_head.weight.mul_(sharpen)
    model.save_pretrained(path)
    hf_tokenizer.save_pretrained(path)
    return path


class WordTokenizer:
    """Whitespace word tokenizer with an [UNK] id, of the seed's plugin shape."""

    def __init__(self, words: list[str]):
        self.vocab = ["[UNK]", "[BOS]", *words]
        self.ids = {w: i for i, w in enumerate(self.vocab)}
        self.unk_token_id = 0
        self.bos_token_id = 1

    def encode(self, text: str) -> list[int]:
        return [self.ids.get(w, 0) for w in text.split()]

    def decode(self, ids) -> str:
        return " ".join(self.vocab[i] for i in ids)


class BigramLM(torch.nn.Module):
    """logits[t] depend on token t only: p(next | prev) is a table we set by hand."""

    def __init__(self, tokenizer: WordTokenizer, prefs: dict[str, dict[str, float]], return_object=True):
        super().__init__()
        v = len(tokenizer.vocab)
        self.table = torch.nn.Embedding(v, v)
        self.return_object = return_object
        with torch.no_grad():
            self.table.weight.fill_(0.0)
            for prev, nxt in prefs.items():
                for word, prob in nxt.items():
                    self.table.weight[tokenizer.ids[prev], tokenizer.ids[word]] = math.log(prob * 1000)

    def forward(self, ids: torch.Tensor):
        logits = self.table(ids)  # (B, T, V)
        return SimpleNamespace(logits=logits) if self.return_object else logits
