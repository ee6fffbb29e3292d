"""Plugin tokenizers return ids in many shapes (a BatchEncoding, a row tensor, numpy ints), and plugin
code that fails while scoring is a refusal naming the loader."""

from __future__ import annotations

import itertools

import pytest

from evalgate.errors import EXIT_REFUSED, CheckpointError
from evalgate.scorers.loaders import load_scorer

# --- plugins ------------------------------------------------------------------------------------

PLUGIN = """
import numpy
import torch
import transformers

WORDS = ["[UNK]", "She", "works", "work", "every", "day"]


class Model(torch.nn.Module):
    def __init__(self, fail_after=None):
        super().__init__()
        self.table = torch.nn.Embedding(len(WORDS), len(WORDS))
        with torch.no_grad():
            self.table.weight.zero_()
            self.table.weight[1, 2] = 4.0  # She -> works
        self.calls, self.fail_after = 0, fail_after

    def forward(self, ids):
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise RuntimeError("the plugin's model broke")
        return self.table(ids)  # a raw (B, T, V) tensor


class Tok:
    unk_token_id = 0
    def ids(self, text):
        return [WORDS.index(w) if w in WORDS else 0 for w in text.split()]
    def encode(self, text):
        return self.ids(text)
    def decode(self, ids):
        return " ".join(WORDS[i] for i in ids)


class BatchEncodingTok(Tok):  # what tokenizer(text) returns
    def encode(self, text):
        ids = self.ids(text)
        return transformers.BatchEncoding({"input_ids": ids, "attention_mask": [1] * len(ids)})


class RowTensorTok(Tok):  # tokenizer.encode(text, return_tensors="pt"): shape (1, T)
    def encode(self, text):
        return torch.tensor([self.ids(text)])


class NumpyIntsTok(Tok):  # a list of numpy integers
    def encode(self, text):
        return [numpy.int64(i) for i in self.ids(text)]


class RaisingTok(Tok):
    def encode(self, text):
        if "day" in text:
            raise KeyError("day")
        return self.ids(text)


class NegativeTok(Tok):
    def encode(self, text):
        return [-1] + self.ids(text)


def batch_encoding():
    return Model(), BatchEncodingTok()

def row_tensor():
    return Model(), RowTensorTok()

def numpy_ints():
    return Model(), NumpyIntsTok()

def plain():
    return Model(), Tok()

def raising_tok():
    return Model(), RaisingTok()

def negative_tok():
    return Model(), NegativeTok()

def model_fails_later():
    return Model(fail_after=1), Tok()  # the loader's own check passes, scoring fails
"""


@pytest.fixture
def plugin(tmp_path) -> str:
    """A fresh module name per test: sys.modules keeps each imported plugin."""
    name = f"review_plugin_{next(_PLUGIN_IDS)}"
    (tmp_path / f"{name}.py").write_text(PLUGIN)
    return name


_PLUGIN_IDS = itertools.count()


REQUESTS = [("She", " works"), ("She", " work"), ("She works every", " day")]


@pytest.mark.parametrize("fn", ["batch_encoding", "row_tensor", "numpy_ints"])
def test_plugin_tokenizers_returning_a_batch_encoding_a_row_tensor_or_numpy_ints(plugin, tmp_path, fn):
    from evalgate.types import LoglikRequest

    requests = [LoglikRequest(*r) for r in REQUESTS]
    want = load_scorer(None, f"{plugin}:plain", root=tmp_path).loglikelihood(requests)
    got = load_scorer(None, f"{plugin}:{fn}", root=tmp_path).loglikelihood(requests)
    assert [r.logprob for r in got] == pytest.approx([r.logprob for r in want], abs=1e-9)
    assert [r.decoded for r in got] == ["works", "work", "day"]
    assert got[0].logprob > got[1].logprob


@pytest.mark.parametrize(
    ("fn", "match"),
    [
        ("raising_tok", "tokenizer.encode raised KeyError: 'day' on 'She works every day'"),
        ("negative_tok", "tokenizer.encode returned a negative token id (-1)"),
        ("model_fails_later", "model(ids) raised RuntimeError: the plugin's model broke"),
    ],
)
def test_plugin_code_failing_while_scoring_is_a_refusal_naming_the_loader(plugin, tmp_path, fn, match):
    from evalgate.types import LoglikRequest

    with pytest.raises(CheckpointError) as info:
        scorer = load_scorer(None, f"{plugin}:{fn}", root=tmp_path)
        scorer.loglikelihood([LoglikRequest(*r) for r in REQUESTS])
    assert info.value.exit_code == EXIT_REFUSED
    assert info.value.message.startswith(f"--loader {plugin}:{fn}: ")
    assert match in info.value.message, info.value.message
