"""Review of checkpoint loading and scoring with other models: each test pins a defect found by
running evalgate on other tiny models, tokenizers, plugins and hostile checkpoint directories.

Every failure here must be a CheckpointError/RefusedError (exit 2) naming the file or the probe,
never a traceback (exit 3) and never a hang.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import struct
import threading
import time
from pathlib import Path

import pytest

from evalgate.errors import EXIT_REFUSED, CheckpointError
from evalgate.scorers.loaders import load_scorer


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory) -> Path:
    from helpers.lm_fixtures import hf_gpt2_dir

    return hf_gpt2_dir(tmp_path_factory.mktemp("review") / "gpt2")


def copy_of(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def refused(path: Path, match: str, loader: str | None = None, root: Path | None = None) -> CheckpointError:
    with pytest.raises(CheckpointError) as info:
        load_scorer(path, loader, root=root or path.parent)
    err = info.value
    assert err.exit_code == EXIT_REFUSED
    assert "\n" not in err.message, err.message
    assert match in err.message, err.message
    return err


# --- safetensors headers and odd files ------------------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        {"dtype": "F32", "shape": [2], "data_offsets": ["0", "8"]},  # strings: was a TypeError
        {"dtype": "F32", "shape": [2.0], "data_offsets": [0, 8]},
        {"dtype": "F32", "shape": [2], "data_offsets": [8, 16, 24]},
    ],
)
def test_a_safetensors_header_with_malformed_offsets_is_refused(gpt2_dir, tmp_path, entry):
    path = copy_of(gpt2_dir, tmp_path / "ckpt")
    header = json.dumps({"a": entry}).encode()
    (path / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(8))
    err = refused(path, "truncated or corrupt")
    assert "model.safetensors" in err.message and "'a'" in err.message


def test_a_weights_path_that_is_a_directory_is_refused(gpt2_dir, tmp_path):
    path = copy_of(gpt2_dir, tmp_path / "ckpt")
    (path / "model.safetensors").unlink()
    (path / "model.safetensors").mkdir()
    refused(path, "model.safetensors (not a regular file)")


def test_a_dangling_symlink_is_refused_naming_it(gpt2_dir, tmp_path):
    path = copy_of(gpt2_dir, tmp_path / "ckpt")
    os.symlink(tmp_path / "gone.txt", path / "README.txt")
    err = refused(path, "README.txt: a symbolic link to")
    assert "gone.txt" in err.message


def release_readers(fifo: Path) -> None:
    """Should anything open `fifo` for reading, give it end-of-file, so a regression fails
    instead of hanging the suite (a daemon thread: it never delays the exit)."""

    def run() -> None:
        for _ in range(600):
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # no reader yet (ENXIO), or the test is over
                time.sleep(0.05)

    threading.Thread(target=run, daemon=True).start()


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_a_link_to_a_device_is_refused(gpt2_dir, tmp_path, kind):
    """Hashing a FIFO (or a link to /dev/zero) never ends: such a file is refused before
    anything reads it. /dev/null stands in for the device, as reading it ends at once."""
    path = copy_of(gpt2_dir, tmp_path / "ckpt")
    if kind == "fifo":
        os.mkfifo(path / "notes.txt")
        release_readers(path / "notes.txt")
    else:
        os.symlink("/dev/null", path / "notes.txt")
    refused(path, "notes.txt: not a regular file")


def test_a_checkpoint_path_that_is_a_fifo_is_not_a_directory(tmp_path):
    os.mkfifo(tmp_path / "ckpt")
    refused(tmp_path / "ckpt", "not a checkpoint directory")


def test_symlinks_to_regular_files_elsewhere_still_load(gpt2_dir, tmp_path):
    """The Hugging Face cache links snapshot files into its blob store, outside the folder."""
    blobs = copy_of(gpt2_dir, tmp_path / "blobs")
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    for f in blobs.iterdir():
        os.symlink(f, snapshot / f.name)
    scorer = load_scorer(snapshot, None, root=tmp_path)
    assert set(scorer.info.files) == {f.name for f in blobs.iterdir()}


def test_a_plugin_checkpoint_directory_with_a_fifo_is_refused(tmp_path):
    (tmp_path / "review_plugin_fifo.py").write_text(
        "import torch\n"
        "class Tok:\n"
        "    def encode(self, text):\n"
        "        return [ord(c) % 7 for c in text]\n"
        "    def decode(self, ids):\n"
        "        return ''.join('abcdefg'[i] for i in ids)\n"
        "def load(path):\n"
        "    return (lambda ids: torch.zeros(*ids.shape, 7)), Tok()\n"
    )
    ckpt = tmp_path / "weights"
    ckpt.mkdir()
    os.mkfifo(ckpt / "pipe")
    release_readers(ckpt / "pipe")
    refused(ckpt, "pipe: not a regular file", loader="review_plugin_fifo:load", root=tmp_path)


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
