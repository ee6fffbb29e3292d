"""A Hugging Face model's `NewGELUActivation` (GPT-2's `gelu_new`) is swapped at load time for
one fused `F.gelu(x, approximate="tanh")`: the same function, so the logits stay those of the
checkpoint loaded plainly (to float32 rounding); every other activation is left as it is."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
import transformers
from helpers.lm_fixtures import hf_gpt2_dir, hf_llama_dir
from transformers.activations import GELUActivation, NewGELUActivation

from evalgate.scorers.hf_loader import FusedGELUTanh, _fuse_new_gelu
from evalgate.scorers.loaders import load_scorer

IDS = torch.tensor(
    [[5, 17, 42, 99, 3, 250, 7, 61], [300, 2, 2, 80, 145, 11, 9, 1], [64, 128, 33, 5, 0, 1, 2, 3]]
)


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny GPT-2 with its MLP weights x10: at random init (std 0.02) the activation sees
    inputs below 0.5, where even erf GELU matches tanh GELU to 5e-6 in the logits; x10 brings them
    to ~4, a trained model's range, where the activation moves the logits by ~13."""
    path = hf_gpt2_dir(tmp_path_factory.mktemp("gpt2"))
    model = transformers.GPT2LMHeadModel.from_pretrained(str(path), local_files_only=True)
    with torch.no_grad():
        for block in model.transformer.h:
            block.mlp.c_fc.weight.mul_(10.0)
            block.mlp.c_proj.weight.mul_(10.0)
    model.save_pretrained(path)
    return path


def scored_model(path: Path) -> torch.nn.Module:
    model = load_scorer(path, None, root=path, batch_size=8).model_fn.model  # type: ignore[attr-defined]
    assert isinstance(model, torch.nn.Module)
    return model


def plain_model(path: Path) -> torch.nn.Module:
    return transformers.AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True).eval()


def types(model: torch.nn.Module) -> dict[str, type]:
    return {name: type(m) for name, m in model.named_modules()}


def test_gpt2_new_gelu_is_replaced_by_the_fused_module_at_every_place(gpt2: Path) -> None:
    plain, fused = types(plain_model(gpt2)), types(scored_model(gpt2))
    n_layer = json.loads((gpt2 / "config.json").read_text())["n_layer"]
    places = sorted(name for name, cls in plain.items() if cls is NewGELUActivation)
    assert len(places) == n_layer > 0
    assert sorted(name for name, cls in fused.items() if cls is FusedGELUTanh) == places
    assert NewGELUActivation not in fused.values()
    # nothing else moved
    assert {n: c for n, c in fused.items() if n not in places} == {
        n: c for n, c in plain.items() if n not in places
    }


def test_gpt2_logits_equal_the_plainly_loaded_checkpoints(gpt2: Path) -> None:
    fused, plain = scored_model(gpt2), plain_model(gpt2)
    assert any(type(m) is FusedGELUTanh for m in fused.modules())
    assert any(type(m) is NewGELUActivation for m in plain.modules())
    with torch.inference_mode():
        got = fused(input_ids=IDS).logits
        want = plain(input_ids=IDS).logits
    assert got.dtype == want.dtype == torch.float32
    torch.testing.assert_close(got, want, atol=1e-5, rtol=0)  # float32 rounding, not bit-equal

    # The comparison can fail: erf GELU in the same places (a function within 5e-4 of tanh GELU)
    # moves these logits by far more than the tolerance.
    for block in plain.transformer.h:
        block.mlp.act = GELUActivation()
    with torch.inference_mode():
        erf = plain(input_ids=IDS).logits
    assert (erf - want).abs().max() > 1e-4


def test_llama_keeps_its_activation(tmp_path: Path) -> None:
    path = hf_llama_dir(tmp_path / "llama")
    plain, loaded = types(plain_model(path)), types(scored_model(path))
    acts = {name: cls for name, cls in plain.items() if name.endswith("act_fn")}
    assert acts and FusedGELUTanh not in acts.values()
    assert loaded == plain


@pytest.mark.parametrize(
    ("activation", "expected"),
    [("gelu", GELUActivation), ("gelu_fast", None), ("quick_gelu", None), ("gelu_pytorch_tanh", None)],
)
def test_gpt2_with_another_gelu_keeps_it(
    gpt2: Path, tmp_path: Path, activation: str, expected: type | None
) -> None:
    path = tmp_path / "gpt2"
    shutil.copytree(gpt2, path)
    config = json.loads((path / "config.json").read_text())
    config["activation_function"] = activation
    (path / "config.json").write_text(json.dumps(config))
    plain, loaded = types(plain_model(path)), types(scored_model(path))
    acts = {name: cls for name, cls in plain.items() if name.endswith("mlp.act")}
    assert len(acts) == config["n_layer"]
    assert NewGELUActivation not in acts.values()
    if expected is not None:
        assert set(acts.values()) == {expected}
    assert FusedGELUTanh not in loaded.values()
    assert loaded == plain


def test_swaps_by_exact_class_inside_lists_dicts_and_shared_places() -> None:
    class Derived(NewGELUActivation):
        pass

    shared = NewGELUActivation()
    model = torch.nn.Module()
    model.direct = NewGELUActivation()
    model.listed = torch.nn.ModuleList([torch.nn.Linear(2, 2), NewGELUActivation(), shared])
    model.keyed = torch.nn.ModuleDict({"act": NewGELUActivation(), "erf": GELUActivation(), "again": shared})
    model.derived = Derived()
    model.silu = torch.nn.SiLU()
    x = torch.linspace(-6, 6, 101)
    want = NewGELUActivation()(x)

    assert _fuse_new_gelu(model) == 5

    assert type(model.direct) is FusedGELUTanh
    assert type(model.listed[1]) is FusedGELUTanh and type(model.listed[2]) is FusedGELUTanh
    assert type(model.keyed["act"]) is FusedGELUTanh and type(model.keyed["again"]) is FusedGELUTanh
    assert type(model.keyed["erf"]) is GELUActivation
    assert type(model.listed[0]) is torch.nn.Linear
    assert type(model.derived) is Derived
    assert type(model.silu) is torch.nn.SiLU
    assert not any(type(m) is NewGELUActivation for m in model.modules())
    torch.testing.assert_close(model.direct(x), want, atol=1e-6, rtol=0)
    assert _fuse_new_gelu(model) == 0
