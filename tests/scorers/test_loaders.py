"""load_scorer: native, Hugging Face and plugin checkpoints; every broken or hostile one refused.

Each refusal is a CheckpointError (exit 2) with a one-line message naming the file. The hostile
pickles would create a file when unpickled: the tests assert that the file never appears.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import json
import shutil
import textwrap
from pathlib import Path

import pytest
import safetensors.torch
import torch
import transformers
from helpers.checkpoints import refused
from helpers.lm_fixtures import hf_gpt2_dir

from evalgate.errors import EXIT_REFUSED, CheckpointError
from evalgate.scorers import hf_loader, loaders, native_gpt
from evalgate.scorers.loaders import load_scorer
from evalgate.types import LoglikRequest

REQUESTS = [
    LoglikRequest("Ayer ", "fui al mercado"),
    LoglikRequest("She", " works"),
    LoglikRequest("", "Él comió."),
]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Hostile:
    """Unpickling this creates `marker` (a stand-in for running any code)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


# --- native --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def native_dir(tmp_path_factory) -> Path:
    from helpers.lm_fixtures import SENTENCES

    tok = native_gpt.train_tokenizer(SENTENCES * 10, vocab_size=320)
    cfg = native_gpt.GPTConfig(
        vocab_size=tok.get_vocab_size(),
        n_layer=2,
        n_head=2,
        n_embd=16,
        block_size=32,
        bos_token_id=tok.token_to_id("<|bos|>"),
        eos_token_id=tok.token_to_id("<|eos|>"),
        pad_token_id=tok.token_to_id("<|pad|>"),
    )
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("native") / "demo"
    native_gpt.save_native(path, native_gpt.GPT(cfg), cfg, tok)
    return path


def copy_of(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def test_native_checkpoint_scores_with_bos_and_records_every_file(native_dir):
    scorer = load_scorer(native_dir, None, root=native_dir.parent, batch_size=2)
    info = scorer.info
    assert info.format == "native" and info.dtype == "float32" and info.loader is None
    assert set(info.files) == {"config.json", "model.safetensors", "tokenizer.json"}
    for name, rec in info.files.items():
        assert rec == {"sha256": sha256(native_dir / name), "bytes": (native_dir / name).stat().st_size}
    assert info.tokenizer_sha256 == sha256(native_dir / "tokenizer.json")
    assert len(info.digest) == 64 and info.n_parameters > 0
    model, tok, cfg = native_gpt.load_native(native_dir)
    for req, res in zip(REQUESTS, scorer.loglikelihood(REQUESTS), strict=True):
        ctx = req.context.rstrip()
        cont = req.context[len(ctx) :] + req.continuation
        ctx_ids = [cfg.bos_token_id, *tok.encode(ctx).ids]
        cont_ids = [cfg.bos_token_id, *tok.encode(ctx + cont).ids][len(ctx_ids) :]
        with torch.no_grad():
            logp = torch.log_softmax(model(torch.tensor([ctx_ids + cont_ids])).double(), -1)[0]
        want = sum(float(logp[len(ctx_ids) - 1 + j, t]) for j, t in enumerate(cont_ids))
        assert res.logprob == pytest.approx(want, abs=1e-5)
        assert res.decoded == cont and not res.oov
    # perplexity: [bos] + tokens + [eos], every token after bos predicted
    text = "Ayer fui al mercado."
    ppl = scorer.perplexity([text])
    assert ppl.n_tokens == len(tok.encode(text).ids) + 1 and ppl.value > 1


def test_same_checkpoint_same_digest_and_a_changed_byte_changes_it(native_dir, tmp_path):
    a = load_scorer(native_dir, None, root=tmp_path).info.digest
    assert load_scorer(native_dir, None, root=tmp_path).info.digest == a
    other = copy_of(native_dir, tmp_path)
    doc = json.loads((other / "config.json").read_text())
    doc["training"] = {"note": "same weights, new provenance"}
    (other / "config.json").write_text(json.dumps(doc))
    assert load_scorer(other, None, root=tmp_path).info.digest != a


def test_native_broken_checkpoints(native_dir, tmp_path):
    trunc = copy_of(native_dir, tmp_path / "trunc")
    data = (trunc / "model.safetensors").read_bytes()
    (trunc / "model.safetensors").write_bytes(data[: len(data) // 2])
    refused(trunc, "truncated or corrupt")

    shape = copy_of(native_dir, tmp_path / "shape")
    doc = json.loads((shape / "config.json").read_text())
    doc["block_size"] = 64
    (shape / "config.json").write_text(json.dumps(doc))
    err = refused(shape, "wpe.weight")
    assert "[32, 16]" in err.message and "[64, 16]" in err.message

    notok = copy_of(native_dir, tmp_path / "notok")
    (notok / "tokenizer.json").unlink()
    refused(notok, "tokenizer.json")


# --- not a model ---------------------------------------------------------------------------


@pytest.mark.parametrize("given", ["gpt2", "openai-community/gpt2", "Qwen/Qwen2.5-0.5B"])
def test_a_missing_checkpoint_named_like_a_hub_id_gets_the_copy_command(tmp_path, given):
    with pytest.raises(CheckpointError) as info:
        load_scorer(tmp_path / given, None, root=tmp_path, given=given)
    err = info.value
    assert err.exit_code == EXIT_REFUSED and "checkpoint not found" in err.message
    local = "checkpoints/" + given.replace("/", "--")
    assert f"hf download {given} --local-dir {local}" in err.hint
    assert f"--checkpoint {local}" in err.hint


# `./nonexist` and `/models/gpt2` name local paths however hub-like their last part reads
@pytest.mark.parametrize(
    "given", ["runs/2026/ckpt", "../gpt2", "model.pt", "./nonexist", "./gpt2", "/models/gpt2"]
)
def test_a_missing_path_that_is_no_hub_id_gets_the_directory_hint(tmp_path, given):
    root = tmp_path / "repo"
    root.mkdir()
    with pytest.raises(CheckpointError) as info:
        load_scorer(root / given.lstrip("/"), None, root=root, given=given)
    assert "checkpoint not found" in info.value.message
    assert info.value.hint == loaders.HINT_DIR


def test_not_a_model(tmp_path):
    refused(tmp_path / "nowhere", "checkpoint not found")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("hello")
    refused(empty, "has no config.json")
    plain = tmp_path / "weights.txt"
    plain.write_text("x")
    refused(plain, "not a checkpoint directory")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{oops")
    refused(broken, "config.json:1")


# --- pickles -------------------------------------------------------------------------------


def test_hostile_pt_file_is_never_unpickled(tmp_path):
    marker = tmp_path / "PWNED"
    pt = tmp_path / "model.pt"
    torch.save({"w": torch.zeros(2), "x": Hostile(marker)}, pt)
    refused(pt, "pickle checkpoint")
    folder = tmp_path / "ckpt"
    folder.mkdir()
    shutil.copy(pt, folder / "model.pt")
    refused(folder, "model.pt")
    assert not marker.exists()


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory) -> Path:
    return hf_gpt2_dir(tmp_path_factory.mktemp("hf") / "gpt2")


def as_bin(src: Path, dst: Path, extra: dict | None = None) -> Path:
    shutil.copytree(src, dst)
    state = safetensors.torch.load_file(dst / "model.safetensors")
    (dst / "model.safetensors").unlink()
    torch.save({**state, **(extra or {})}, dst / "pytorch_model.bin")
    return dst


def test_hostile_pytorch_model_bin_is_refused_before_loading(gpt2_dir, tmp_path):
    marker = tmp_path / "PWNED"
    path = as_bin(gpt2_dir, tmp_path / "evil", {"x": Hostile(marker)})
    err = refused(path, "unsafe pickle")
    assert "pytorch_model.bin" in err.message and "io.open" in err.message
    assert not marker.exists()


def test_without_our_scan_transformers_still_loads_weights_only(gpt2_dir, tmp_path, monkeypatch):
    """The second lock: transformers' torch.load(weights_only=True) refuses the same file."""
    marker = tmp_path / "PWNED"
    path = as_bin(gpt2_dir, tmp_path / "evil", {"x": Hostile(marker)})
    monkeypatch.setattr(hf_loader, "scan_pickle", lambda p: None)
    refused(path, "pytorch_model.bin: cannot be loaded")
    assert not marker.exists()


def test_a_plain_pytorch_model_bin_loads_and_scores_like_safetensors(gpt2_dir, tmp_path):
    path = as_bin(gpt2_dir, tmp_path / "bin")
    want = [r.logprob for r in load_scorer(gpt2_dir, None, root=tmp_path).loglikelihood(REQUESTS)]
    got = [r.logprob for r in load_scorer(path, None, root=tmp_path).loglikelihood(REQUESTS)]
    assert got == pytest.approx(want, abs=1e-6)


# --- Hugging Face --------------------------------------------------------------------------


def test_hf_checkpoint_info(gpt2_dir):
    scorer = load_scorer(gpt2_dir, None, root=gpt2_dir.parent)
    info = scorer.info
    assert info.format == "hf"
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= set(info.files)
    assert info.files["model.safetensors"]["sha256"] == sha256(gpt2_dir / "model.safetensors")
    model = transformers.AutoModelForCausalLM.from_pretrained(gpt2_dir)
    assert info.n_parameters == sum(p.numel() for p in model.parameters())
    assert scorer.max_length == 64


def edit_json(path: Path, **changes) -> None:
    doc = json.loads(path.read_text())
    doc.update(changes)
    path.write_text(json.dumps(doc))


def edit_weights(path: Path, change) -> None:
    state = safetensors.torch.load_file(path)
    change(state)
    safetensors.torch.save_file(state, path, metadata={"format": "pt"})


@pytest.mark.parametrize(
    ("case", "match"),
    [
        ("truncated", "truncated or corrupt"),
        ("missing_tensor", "missing tensor(s) transformer.h.0.mlp.c_fc.weight"),
        ("wrong_shape", "'transformer.h.0.mlp.c_fc.weight' is [3, 3], expected [32, 128]"),
        ("unexpected_tensor", "unexpected tensor(s) extra.weight"),
        ("missing_tokenizer", "missing tokenizer"),
        ("auto_map", "config.json: 'auto_map'"),
        ("tokenizer_auto_map", "tokenizer_config.json: 'auto_map'"),
        ("no_weights", "missing weights"),
        ("unknown_model_type", "config.json: not a usable Hugging Face config"),
    ],
)
def test_hf_broken_checkpoints(gpt2_dir, tmp_path, case, match):
    path = copy_of(gpt2_dir, tmp_path)
    weights = path / "model.safetensors"
    if case == "truncated":
        weights.write_bytes(weights.read_bytes()[:-1000])
    elif case == "missing_tensor":
        edit_weights(weights, lambda s: s.pop("transformer.h.0.mlp.c_fc.weight"))
    elif case == "wrong_shape":
        edit_weights(weights, lambda s: s.update({"transformer.h.0.mlp.c_fc.weight": torch.zeros(3, 3)}))
    elif case == "unexpected_tensor":
        edit_weights(weights, lambda s: s.update({"extra.weight": torch.zeros(3)}))
    elif case == "missing_tokenizer":
        for name in ("tokenizer.json", "tokenizer_config.json"):
            (path / name).unlink()
    elif case == "auto_map":
        edit_json(path / "config.json", auto_map={"AutoModelForCausalLM": "modeling_evil.Evil"})
        (path / "modeling_evil.py").write_text(f"open({str(tmp_path / 'PWNED')!r}, 'w')\n")
    elif case == "tokenizer_auto_map":
        edit_json(path / "tokenizer_config.json", auto_map={"AutoTokenizer": ["tok_evil.T", None]})
    elif case == "no_weights":
        weights.unlink()
    elif case == "unknown_model_type":
        edit_json(path / "config.json", model_type="not-a-model")
    err = refused(path, match)
    assert str(path) in err.message
    assert not (tmp_path / "PWNED").exists()


# --- the command line ------------------------------------------------------------------------


def test_cli_refuses_a_hostile_checkpoint_with_exit_2(tmp_path):
    from helpers.probeset_factory import apply_step, cli_merged, write_base

    cfg = write_base(tmp_path)
    apply_step(tmp_path, {"seal": None})
    (tmp_path / "data/corpus/test.jsonl").write_text('{"text": "She works."}\n')
    marker = tmp_path / "PWNED"
    pt = tmp_path / "model.pt"
    torch.save({"x": Hostile(marker)}, pt)
    code, out = cli_merged("run", "--config", str(cfg), "--checkpoint", str(pt), "--baseline", "none",
                    "--out", str(tmp_path / "out"))  # fmt: skip
    assert code == 2, out
    assert "model.pt" in out and "pickle" in out
    assert not marker.exists()


# --- plugin --------------------------------------------------------------------------------

PLUGIN = """
from types import SimpleNamespace
import torch

WORDS = ["[UNK]", "[BOS]", "She", "works", "work", "every", "day"]


class Tok:
    bos_token_id = 1
    unk_token_id = 0

    def encode(self, text):
        return [WORDS.index(w) if w in WORDS else 0 for w in text.split()]

    def decode(self, ids):
        return " ".join(WORDS[i] for i in ids)


class Bigram(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.nn.Embedding(len(WORDS), len(WORDS))
        with torch.no_grad():
            self.table.weight.zero_()
            self.table.weight[2, 3] = 5.0  # She -> works

    def forward(self, ids):
        return SimpleNamespace(logits=self.table(ids))

SEEN = []

def load(checkpoint):
    SEEN.append(checkpoint)
    return Bigram(), Tok()

def no_arg():
    return Bigram(), Tok()

def only_model(checkpoint):
    return Bigram()

def flat_logits(checkpoint):
    return (lambda ids: torch.zeros(ids.shape[1], len(WORDS))), Tok()

def no_decode(checkpoint):
    class T:
        def encode(self, text):
            return [1]
    return Bigram(), T()

def boom(checkpoint):
    raise RuntimeError("weights not found")
"""


@pytest.fixture
def plugin(tmp_path, request) -> str:
    name = f"evalgate_test_plugin_{request.node.name.replace('[', '_').replace(']', '_').replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(PLUGIN))
    return name


def test_plugin_loader_returns_a_working_scorer(plugin, tmp_path):
    ckpt = tmp_path / "weights.safetensors"
    ckpt.write_bytes(b"not read by us")
    scorer = load_scorer(ckpt, f"{plugin}:load", root=tmp_path, batch_size=2)
    seen = importlib.import_module(plugin).SEEN
    assert seen == [ckpt]
    info = scorer.info
    assert info.format == "plugin" and info.loader == f"{plugin}:load"
    assert info.files == {"weights.safetensors": {"sha256": sha256(ckpt), "bytes": ckpt.stat().st_size}}
    assert info.n_parameters == 49 and len(info.tokenizer_sha256) == 64
    works, work = scorer.loglikelihood([LoglikRequest("She ", "works"), LoglikRequest("She ", "work")])
    assert works.logprob > work.logprob and works.decoded == "works" and works.n_tokens == 1
    no_ckpt = load_scorer(None, f"{plugin}:no_arg", root=tmp_path)
    assert list(no_ckpt.info.files) == [f"{plugin}.py"]


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("nonexistent_module_xyz:load", "cannot import nonexistent_module_xyz"),
        ("{plugin}:missing", "has no function missing"),
        ("{plugin}:only_model", "expected a (model, tokenizer) pair"),
        ("{plugin}:flat_logits", "logits of shape"),
        ("{plugin}:no_decode", "no decode() method"),
        ("{plugin}:boom", "the loader raised RuntimeError: weights not found"),
        ("not a spec", "expected package.module:function"),
    ],
)
def test_plugin_errors(plugin, tmp_path, spec, match):
    with pytest.raises(CheckpointError) as info:
        load_scorer(None, spec.format(plugin=plugin), root=tmp_path)
    assert match in info.value.message and "\n" not in info.value.message
    assert info.value.exit_code == EXIT_REFUSED


def test_unsupported_dtype_is_refused(native_dir):
    with pytest.raises(CheckpointError, match="dtype"):
        load_scorer(native_dir, None, root=native_dir, dtype="int8")


def test_no_torch_load_or_unpickling_anywhere_in_the_scorers():
    """Checked on the source: no torch.load call, no pickle/dill/joblib import (genops only reads)."""
    for path in sorted(Path(loaders.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                target = node.func.value
                assert not (
                    isinstance(target, ast.Name) and target.id == "torch" and node.func.attr == "load"
                ), f"{path.name}:{node.lineno} calls torch.load"
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] + (
                    [node.module] if getattr(node, "module", None) else []
                )
                assert not {"pickle", "dill", "joblib", "cloudpickle"} & set(names), (
                    f"{path.name}:{node.lineno}"
                )


@pytest.mark.parametrize("zipped", [True, False])
def test_the_pickle_scan_reads_both_torch_formats(tmp_path, zipped):
    from evalgate.scorers.safety import scan_pickle

    good, bad = tmp_path / "good.bin", tmp_path / "bad.bin"
    marker = tmp_path / "PWNED"
    state = {"w": torch.zeros(2, 3), "b": torch.ones(3, dtype=torch.float16)}
    torch.save(state, good, _use_new_zipfile_serialization=zipped)
    torch.save({**state, "x": Hostile(marker)}, bad, _use_new_zipfile_serialization=zipped)
    scan_pickle(good)  # a plain state dict passes
    with pytest.raises(CheckpointError, match="unsafe pickle"):
        scan_pickle(bad)
    assert not marker.exists()
