"""The native reference GPT: shapes, causality, the safe checkpoint format and its tokenizer."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import safetensors.torch
import torch
from helpers.paths import REPO

from evalgate.errors import CheckpointError
from evalgate.scorers import native_gpt
from evalgate.scorers.native_gpt import (
    GPT,
    GPTConfig,
    expected_shapes,
    load_native,
    save_native,
    train_tokenizer,
)

SENTENCES = [
    "Ayer comí paella con mis amigos.",
    "¿Qué hiciste ayer? Fui al cine.",
    "Mañana hablaré con él.",
    "El niño tiene un año.",
    "She went to the market yesterday.",
    "He works in a bakery.",
    "I have eaten the cake.",
    "Ella vino a casa y puso la mesa.",
] * 5


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer(SENTENCES, vocab_size=320)


@pytest.fixture(scope="module")
def cfg(tokenizer):
    return GPTConfig(
        vocab_size=tokenizer.get_vocab_size(),
        n_layer=2,
        n_head=2,
        n_embd=16,
        block_size=32,
        bos_token_id=tokenizer.token_to_id("<|bos|>"),
        eos_token_id=tokenizer.token_to_id("<|eos|>"),
        pad_token_id=tokenizer.token_to_id("<|pad|>"),
        unk_token_id=None,
    )


@pytest.fixture
def model(cfg):
    torch.manual_seed(0)
    return GPT(cfg).eval()


@pytest.fixture
def ckpt(tmp_path, model, cfg, tokenizer) -> Path:
    save_native(tmp_path / "ckpt", model, cfg, tokenizer, extra={"training": {"seed": 0}})
    return tmp_path / "ckpt"


def _ids(tokenizer, cfg, text: str) -> torch.Tensor:
    return torch.tensor([[cfg.bos_token_id, *tokenizer.encode(text).ids]])


# --- the model ------------------------------------------------------------------------------


def test_forward_shape_and_state_dict_names(model, cfg):
    idx = torch.randint(0, cfg.vocab_size, (3, 7))
    with torch.no_grad():
        assert model(idx).shape == (3, 7, cfg.vocab_size)
    got = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert got == expected_shapes(cfg)


def test_changing_a_later_token_never_changes_earlier_logits(model, cfg):
    torch.manual_seed(1)
    idx = torch.randint(3, cfg.vocab_size, (1, 12))
    for j in (1, 5, 11):
        other = idx.clone()
        other[0, j] = (idx[0, j] + 1) % cfg.vocab_size
        with torch.no_grad():
            a, b = model(idx), model(other)
        assert torch.equal(a[0, :j], b[0, :j]), f"position < {j} saw token {j}"
        assert not torch.allclose(a[0, j], b[0, j]), "the changed token itself must matter"


def test_right_padding_leaves_real_positions_unchanged(model, cfg, tokenizer):
    short = _ids(tokenizer, cfg, "Fui al cine.")[0]
    long = _ids(tokenizer, cfg, "Mañana hablaré con él y con ella.")[0]
    batch = torch.full((2, len(long)), cfg.pad_token_id)
    batch[0, : len(short)] = short
    batch[1] = long
    with torch.no_grad():
        padded = model(batch)
        alone = model(short[None])
    torch.testing.assert_close(padded[0, : len(short)], alone[0], atol=1e-6, rtol=0)


def test_sequence_longer_than_block_size_is_refused(model, cfg):
    with pytest.raises(ValueError, match="block_size"):
        model(torch.zeros((1, cfg.block_size + 1), dtype=torch.long))


# --- config ---------------------------------------------------------------------------------


def test_config_round_trip_and_validation(cfg):
    assert GPTConfig.from_dict(cfg.to_dict() | {"training": {"steps": 1}}) == cfg
    bad_cases = {
        "n_layer": True,  # a bool is not an integer here
        "n_embd": 15,  # not a multiple of n_head
        "bos_token_id": cfg.vocab_size,  # outside the vocabulary
        "unk_token_id": "0",
        "evalgate_native": "gpt-v0",
    }
    for key, value in bad_cases.items():
        with pytest.raises(CheckpointError, match=r"cfg\.json") as err:
            GPTConfig.from_dict(cfg.to_dict() | {key: value}, source="cfg.json")
        assert err.value.hint
    with pytest.raises(CheckpointError, match=r"missing key.*block_size"):
        GPTConfig.from_dict({k: v for k, v in cfg.to_dict().items() if k != "block_size"})


# --- save / load ------------------------------------------------------------------------------


def test_save_load_round_trip_gives_identical_logits(ckpt, model, cfg, tokenizer):
    loaded, tok, loaded_cfg = load_native(ckpt)
    assert loaded_cfg == cfg
    assert not loaded.training
    text = "¿Qué hiciste ayer? Comí paella."
    assert tok.encode(text).ids == tokenizer.encode(text).ids
    idx = _ids(tokenizer, cfg, text)
    with torch.no_grad():
        assert torch.equal(loaded(idx), model(idx))
    doc = json.loads((ckpt / "config.json").read_text(encoding="utf-8"))
    assert doc["training"] == {"seed": 0} and doc["evalgate_native"] == "gpt-v1"


def test_saving_is_byte_deterministic(tmp_path, ckpt, model, cfg, tokenizer):
    save_native(tmp_path / "again", model, cfg, tokenizer, extra={"training": {"seed": 0}})
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        assert (tmp_path / "again" / name).read_bytes() == (ckpt / name).read_bytes(), name


def test_float16_storage_is_computed_in_float32(tmp_path, model, cfg, tokenizer):
    save_native(tmp_path / "half", model, cfg, tokenizer, dtype=torch.float16)
    loaded, _, _ = load_native(tmp_path / "half")
    assert all(p.dtype == torch.float32 for p in loaded.parameters())
    idx = _ids(tokenizer, cfg, "Fui al cine.")
    with torch.no_grad():
        torch.testing.assert_close(loaded(idx), model(idx), atol=1e-2, rtol=0)


def test_loading_never_calls_torch_load(ckpt, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("torch.load must never be called")

    monkeypatch.setattr(torch, "load", refuse)
    load_native(ckpt)


# --- broken checkpoints: one CheckpointError naming the file -----------------------------------


def _truncate_weights(d: Path) -> str:
    data = (d / "model.safetensors").read_bytes()
    (d / "model.safetensors").write_bytes(data[: len(data) // 2])
    return "truncated or corrupt: .*model.safetensors"


def _wrong_shape(d: Path) -> str:
    state = safetensors.torch.load_file(d / "model.safetensors")
    state["h.1.mlp.c_fc.weight"] = torch.zeros(32, 16)
    safetensors.torch.save_file(state, d / "model.safetensors")
    return r"model.safetensors: tensor 'h.1.mlp.c_fc.weight' has shape \[32, 16\], expected \[64, 16\]"


def _extra_tensor(d: Path) -> str:
    state = safetensors.torch.load_file(d / "model.safetensors")
    state["lm_head.weight"] = state["wte.weight"].clone()
    safetensors.torch.save_file(state, d / "model.safetensors")
    return "model.safetensors: unexpected tensor.*lm_head.weight"


def _missing_tensor(d: Path) -> str:
    state = safetensors.torch.load_file(d / "model.safetensors")
    del state["ln_f.bias"]
    safetensors.torch.save_file(state, d / "model.safetensors")
    return "model.safetensors: missing tensor.*ln_f.bias"


def _missing_tokenizer(d: Path) -> str:
    (d / "tokenizer.json").unlink()
    return "missing file: .*tokenizer.json"


def _missing_config(d: Path) -> str:
    (d / "config.json").unlink()
    return "missing file: .*config.json"


def _not_a_model(d: Path) -> str:
    for f in d.iterdir():
        f.unlink()
    (d / "notes.txt").write_text("just some notes\n")
    return "not a native evalgate checkpoint: .*ckpt"


def _hf_config(d: Path) -> str:
    (d / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_layer": 2}))
    return "config.json: not an evalgate native config"


def _config_not_json(d: Path) -> str:
    (d / "config.json").write_text('{"evalgate_native": "gpt-v1",\n  oops}')
    return r"config.json:2: not valid UTF-8 JSON"


def _tokenizer_garbage(d: Path) -> str:
    (d / "tokenizer.json").write_text("{}")
    return "tokenizer.json: not a readable"


def _tokenizer_from_another_model(d: Path) -> str:
    doc = json.loads((d / "config.json").read_text())
    doc["bos_token_id"], doc["eos_token_id"] = doc["eos_token_id"], doc["bos_token_id"]
    (d / "config.json").write_text(json.dumps(doc))
    return "tokenizer.json: <|bos|> has id 0 but config.json says bos_token_id = 1"


def _nan_weights(d: Path) -> str:
    state = safetensors.torch.load_file(d / "model.safetensors")
    state["wpe.weight"][3, 4] = float("nan")
    safetensors.torch.save_file(state, d / "model.safetensors")
    return "model.safetensors: tensor 'wpe.weight' holds NaN"


BREAKAGES = [
    _truncate_weights,
    _wrong_shape,
    _extra_tensor,
    _missing_tensor,
    _missing_tokenizer,
    _missing_config,
    _not_a_model,
    _hf_config,
    _config_not_json,
    _tokenizer_garbage,
    _tokenizer_from_another_model,
    _nan_weights,
]


@pytest.mark.parametrize("breakage", BREAKAGES, ids=lambda f: f.__name__.strip("_"))
def test_broken_checkpoint_is_one_line_error_naming_the_file(ckpt, breakage):
    load_native(ckpt)  # intact before the breakage
    pattern = breakage(ckpt)
    with pytest.raises(CheckpointError, match=pattern) as err:
        load_native(ckpt)
    assert "\n" not in err.value.message
    assert err.value.hint
    assert err.value.exit_code == 2


def test_missing_directory(tmp_path):
    with pytest.raises(CheckpointError, match=r"not a directory: .*nowhere"):
        load_native(tmp_path / "nowhere")


class _Plant:
    """Unpickling this creates a file: proof that the loader executed the checkpoint."""

    def __init__(self, target: Path):
        self.target = target

    def __reduce__(self):
        return (Path.write_text, (self.target, "pwned"))


def test_pickle_posing_as_safetensors_is_refused_not_executed(tmp_path, ckpt):
    planted = tmp_path / "planted.txt"
    (ckpt / "model.safetensors").write_bytes(pickle.dumps(_Plant(planted)))
    with pytest.raises(CheckpointError, match=r"truncated or corrupt: .*model\.safetensors"):
        load_native(ckpt)
    assert not planted.exists()


# --- the tokenizer --------------------------------------------------------------------------


def test_tokenizer_covers_spanish_without_unknown_tokens(tokenizer):
    text = "¿Qué hiciste ayer? Comí paella."
    enc = tokenizer.encode(text)
    assert tokenizer.decode(enc.ids) == text
    assert tokenizer.get_vocab()["<|bos|>"] not in enc.ids  # encode adds no special tokens
    assert tokenizer.model.unk_token is None
    unseen = "Ñandú, pingüino, café, ¡olé! — 日本"
    assert tokenizer.decode(tokenizer.encode(unseen).ids) == unseen


def test_special_tokens_come_first(tokenizer):
    assert [tokenizer.token_to_id(t) for t in native_gpt.SPECIAL_TOKENS] == [0, 1, 2]


# --- the demo training script and the committed checkpoints ------------------------------------

SCRIPT = REPO / "scripts" / "train_demo.py"


def _train_demo_module():
    if "train_demo" not in sys.modules:
        spec = importlib.util.spec_from_file_location("train_demo", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        sys.modules["train_demo"] = module  # dataclasses look their module up while being built
        spec.loader.exec_module(module)  # defines functions only; main() sets torch's global state
    return sys.modules["train_demo"]


def test_training_batches_never_learn_from_padding():
    td = _train_demo_module()
    x, y = td.make_batch([[0, 5, 6, 1], [0, 7, 1]], pad=2)
    assert x.tolist() == [[0, 5, 6], [0, 7, 1]]
    assert y.tolist() == [[5, 6, 1], [7, 1, -1]]  # the pad after eos is never a target


def test_regressed_filter_drops_irregular_past_sentences_only():
    td = _train_demo_module()
    forms = td.irregular_forms(REPO / "data/grammar/verbs.yaml", ("past_simple", "past_participle"))
    assert {"went", "eaten", "fui", "hizo", "hecho"} <= forms
    assert not forms & {"come", "walked", "comí", "go", "hace"}  # regular, or not a past form
    sentences = [f"Ayer fui al cine {i}." for i in range(200)] + [f"I walked home {i}." for i in range(200)]
    recipe = td.Recipe(keep_irregular_pct=10)
    kept, dropped = td.apply_filter(sentences, recipe, forms)
    assert all(f"I walked home {i}." in kept for i in range(200))
    assert 150 < dropped < 200  # about 90% of the irregular ones, chosen by a hash of the text
    assert td.apply_filter(sentences, recipe, forms) == (kept, dropped)


def test_training_script_is_reproducible_and_records_its_recipe(tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps({"text": s}, ensure_ascii=False) + "\n" for s in SENTENCES))
    cmd = [sys.executable, str(SCRIPT), "--train", str(train), "--val", str(train), "--steps", "3"]
    for out in ("a", "b"):
        subprocess.run([*cmd, "--out-dir", str(tmp_path / out)], check=True, capture_output=True)
    for name in ("demo", "demo-regressed"):
        for f in ("config.json", "model.safetensors", "tokenizer.json"):
            assert (tmp_path / "a" / name / f).read_bytes() == (tmp_path / "b" / name / f).read_bytes(), f
    load_native(tmp_path / "a" / "demo")
    training = json.loads((tmp_path / "a" / "demo-regressed" / "config.json").read_text())["training"]
    assert training["recipe"]["steps"] == 3 and training["recipe"]["seed"] == 1234
    assert training["corpus"]["sha256"] == hashlib.sha256(train.read_bytes()).hexdigest()
    assert training["data_filter"]["dropped_sentences"] > 0  # "fui", "went", "eaten", ... are in it


@pytest.mark.parametrize("name", ["demo", "demo-regressed"])
def test_committed_demo_checkpoints_load_and_match_the_corpus(name):
    ckpt = REPO / "data" / "checkpoints" / name
    model, tok, cfg = load_native(ckpt)
    assert sum(f.stat().st_size for f in ckpt.iterdir()) < 10 * 2**20
    training = json.loads((ckpt / "config.json").read_text(encoding="utf-8"))["training"]
    corpus = REPO / training["corpus"]["file"]
    # A changed corpus means the demo checkpoints must be retrained (docs/demo-model.md).
    assert training["corpus"]["sha256"] == hashlib.sha256(corpus.read_bytes()).hexdigest()
    idx = _ids(tok, cfg, "Ayer fui al mercado.")
    with torch.no_grad():
        logp = torch.log_softmax(model(idx)[0, -2], -1)[idx[0, -1]]
    assert logp > -5.0  # a trained model, not random weights (log 1/1024 = -6.9)
