"""Hugging Face checkpoints: a local directory loadable by `transformers` Auto classes, offline.

`trust_remote_code` is off and a config (or tokenizer config) with `auto_map` is refused before
anything is loaded; safetensors headers are checked first; a `pytorch_model.bin` is scanned
opcode by opcode and then loaded only through `torch.load(weights_only=True)`. Missing,
unexpected or wrong-shaped tensors are refused (transformers would silently re-initialise them).
"""

from __future__ import annotations

import contextlib
import inspect
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from evalgate.console import clean
from evalgate.errors import CheckpointError
from evalgate.scorers.adapters import FINGERPRINT_TEXT, HFTokenizerAdapter
from evalgate.scorers.base import ScorerInfo, files_digest
from evalgate.scorers.loading import HINT_DIR, dtype_name, first_line, n_parameters, read_json
from evalgate.scorers.safety import (
    PICKLE_SUFFIXES,
    check_safetensors,
    checkpoint_files,
    refuse_pickle_file,
    scan_pickle,
)
from evalgate.scorers.torch_lm import (
    MAX_POSITIONS,
    HFCachedLM,
    TorchScorer,
    full_logits_fn,
    hf_logits_fn,
    leaks_the_future,
)
from evalgate.types import canonical_json, sha256_text

HF_TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.json",
    "merges.txt",
    "vocab.txt",
    "tokenizer.model",
    "spiece.model",
    "special_tokens_map.json",
    "added_tokens.json",
)


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No progress bars or load warnings on our stderr (we report problems ourselves)."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        hf_logging.enable_progress_bar()


def _check_shard_index(path: Path, pattern: str) -> list[Path]:
    """A sharded checkpoint's index names its shards; transformers opens them relative to the
    directory, so "../elsewhere.bin" or an absolute path would load a file that was neither
    checked (pickle scan, safetensors header) nor hashed into the checkpoint's SHA-256."""
    shards: list[Path] = []
    for index in sorted(path.glob(pattern)):
        doc = read_json(index)
        weight_map = doc.get("weight_map") if isinstance(doc, dict) else None
        if not isinstance(weight_map, dict):
            raise CheckpointError(f"{index}: no 'weight_map' object; not a shard index")
        for shard in sorted({str(v) for v in weight_map.values()}):
            if Path(shard).name != shard or shard in ("", ".", "..") or "\\" in shard:
                raise CheckpointError(
                    f"{index}: shard {shard!r} is outside the checkpoint directory; refused",
                    hint="a shard index names files next to it (model-00001-of-00002.safetensors)",
                )
            if not (path / shard).is_file():
                raise CheckpointError(
                    f"{index}: shard {shard!r} is missing from {path}",
                    hint="re-download or re-save the checkpoint",
                )
            shards.append(path / shard)
    return shards


def _hf_weights(path: Path) -> dict[str, tuple[int, ...]] | None:
    """Check the weight files before transformers sees them: the shape of every tensor when
    they are safetensors, None for a checked `pytorch_model.bin`."""
    safetensors_files = sorted(path.glob("*.safetensors"))
    if safetensors_files:
        shards = _check_shard_index(path, "*.safetensors.index.json")
        shapes: dict[str, tuple[int, ...]] = {}
        for f in sorted(set(safetensors_files) | set(shards)):
            shapes.update(check_safetensors(f))
        return shapes
    bins = sorted(path.glob("pytorch_model*.bin"))
    if bins:
        bins = sorted(set(bins) | set(_check_shard_index(path, "*.bin.index.json")))
        if _version_tuple(torch.__version__) < (2, 10):
            raise CheckpointError(
                f"{bins[0]}: .bin weights need torch >= 2.10 (older weights_only has known bypasses)",
                hint="convert the weights to safetensors, or upgrade torch",
            )
        for f in bins:
            scan_pickle(f)
        return None
    pickles = sorted(p for p in path.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES)
    if pickles:
        raise refuse_pickle_file(pickles[0])
    raise CheckpointError(f"missing weights: {path} has no model.safetensors", hint=HINT_DIR)


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version.split("+")[0])[:2])


def _keeps_positions(model: torch.nn.Module, vocab_size: int) -> bool:
    """Does this model take a boolean (B, T) `logits_to_keep` (and honour it)? Checked, not assumed."""
    if "logits_to_keep" not in inspect.signature(model.forward).parameters:
        return False
    ids = torch.tensor([[0, 1 % vocab_size, 2 % vocab_size]])
    keep = torch.tensor([[False, True, True]])
    try:
        with torch.inference_mode():
            full = model(input_ids=ids, use_cache=False).logits[keep]
            some = hf_logits_fn(model)(ids, keep)
    except Exception:
        return False
    return some.shape == full.shape and bool(torch.allclose(some, full, atol=1e-5, rtol=1e-5))


def _continues_from_cache(model: torch.nn.Module, vocab_size: int, max_length: int) -> HFCachedLM | None:
    """An `HFCachedLM` when the model continues from its own cache to the logits of one full
    forward (checked on two rows split in the middle, as the scorer splits context and
    continuation), else None: the scorer then runs every input whole."""
    n = min(8, max_length)
    if n < 2:
        return None
    ids = torch.tensor(
        [[(3 * i + 1) % vocab_size for i in range(n)], [(5 * i + 2) % vocab_size for i in range(n)]]
    )
    cut = n // 2
    cached = HFCachedLM(model)
    try:
        with torch.inference_mode():
            full = model(input_ids=ids, use_cache=False).logits
            head, kv = cached.start(ids[:, :cut], torch.ones(2, cut, dtype=torch.bool))
            tail, _ = cached.extend(ids[:, cut:], kv, torch.ones(2, n - cut, dtype=torch.bool))
    except Exception:
        return None
    got = torch.cat([head.reshape(2, cut, -1), tail.reshape(2, n - cut, -1)], dim=1)
    if got.shape != full.shape:
        return None
    scale = max(1.0, float(full.abs().max()))
    if not torch.allclose(got, full, rtol=0.0, atol=1e-4 * scale):
        return None
    return cached if _continues_alike_in_any_batch(cached, ids[:, :cut], ids[:, cut : cut + 1]) else None


def _continues_alike_in_any_batch(cached: HFCachedLM, context: torch.Tensor, step: torch.Tensor) -> bool:
    """A continuation's logits must be the same bits in a batch of 16 rows and of 24 (scorers/
    torch_lm.py, "Fixed-shape forwards"): an attention kernel that sums otherwise for another
    batch size would make a probe's numbers depend on the probes scored with it."""
    try:
        with torch.inference_mode():
            rows = [context.repeat(12, 1), step.repeat(12, 1)]
            _, kv = cached.start(rows[0], torch.ones(rows[0].shape, dtype=torch.bool))
            logits = [
                cached.extend(
                    rows[1][:n], tuple((k[:n], v[:n]) for k, v in kv), torch.ones(n, 1, dtype=torch.bool)
                )[0][:16]
                for n in (16, 24)
            ]
    except Exception:
        return False
    return torch.equal(logits[0], logits[1])


def _refuse_missing_architecture(exc: BaseException, config: Any, config_path: Path) -> None:
    """Raise a clear refusal when `exc` is transformers failing to import an architecture.

    The image carries the causal-LM architectures only (docs/docker.md): any other model_type
    could only be refused as "not a causal language model" anyway, so it is refused by name
    rather than reported as a broken config or broken weights."""
    missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
    if missing and missing.startswith("transformers.models."):
        kind = config.get("model_type") if isinstance(config, dict) else None
        raise CheckpointError(
            f"{config_path}: model_type {kind or missing.split('.')[2]!r} is not a causal "
            "language model evalgate can load (its transformers code is not installed)",
            hint="evalgate scores decoder-only (causal) language models such as GPT-2, Llama, "
            "Mistral or Qwen",
        ) from None


class FusedGELUTanh(torch.nn.Module):
    """GELU, tanh approximation, as one fused kernel: `F.gelu(x, approximate="tanh")`.

    The same function as transformers' `NewGELUActivation` (GPT-2's `gelu_new`; transformers'
    own `gelu_pytorch_tanh` is this very call), which runs it as several separate elementwise
    kernels (pow, mul, add, tanh, ...) and costs about a quarter of a CPU forward."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x, approximate="tanh")


def _fuse_new_gelu(model: torch.nn.Module) -> int:
    """Swap every submodule of exactly type `NewGELUActivation` for a `FusedGELUTanh`, in
    place, and return how many places were swapped.

    Why: the same function in one fused kernel instead of several took ~13% off scoring on the
    GPT-2-small shape, and moves log-likelihoods by float32 rounding only (~3e-6; docs/scoring.md
    "Speed"). Matched on the exact class (never on names, never subclasses): every other
    activation (erf GELU, SiLU, gelu_fast, QuickGELU...) is a different function and stays. Each
    place is replaced through its parent's attribute, by name, which covers ModuleList and
    ModuleDict children too; a module held at several places is swapped at each."""
    from transformers.activations import NewGELUActivation

    places = [
        name
        for name, module in model.named_modules(remove_duplicate=False)
        if name and type(module) is NewGELUActivation
    ]
    for name in places:
        parent_name, _, child = name.rpartition(".")
        setattr(model.get_submodule(parent_name), child, FusedGELUTanh())
    return len(places)


def load_hf_scorer(
    path: Path,
    config: Any,
    *,
    batch_size: int,
    dtype: torch.dtype,
    threads: int,
    max_positions: int = MAX_POSITIONS,
) -> TorchScorer:
    config_path = path / "config.json"
    if not isinstance(config, dict):
        raise CheckpointError(f"{config_path}: expected a JSON object")
    for name in ("config.json", "tokenizer_config.json"):
        doc = config if name == "config.json" else read_json(path / name) if (path / name).is_file() else {}
        if isinstance(doc, dict) and "auto_map" in doc:
            raise CheckpointError(
                f"{path / name}: 'auto_map' asks for code shipped with the checkpoint; "
                "refused (never executed)",
                hint="evalgate loads only architectures built into transformers (trust_remote_code is off)",
            )
    shapes = _hf_weights(path)
    use_safetensors = shapes is not None
    tokenizer_files = [n for n in HF_TOKENIZER_FILES if (path / n).is_file()]
    if not tokenizer_files:
        raise CheckpointError(
            f"missing tokenizer: {path / 'tokenizer.json'} (nor any other tokenizer file)",
            hint="save the tokenizer next to the model: tokenizer.save_pretrained(dir)",
        )
    _refuse_unbounded_numbers(config_path, config)  # before anything is sized from it
    _refuse_oversized_sizes(path, config, shapes)  # before transformers parses the config
    files = checkpoint_files(path)
    import transformers

    kwargs: dict[str, Any] = {"local_files_only": True, "trust_remote_code": False}
    with _quiet_transformers():
        try:
            hf_config = transformers.AutoConfig.from_pretrained(str(path), **kwargs)
        except Exception as exc:
            _refuse_missing_architecture(exc, config, config_path)
            raise CheckpointError(
                f"{config_path}: not a usable Hugging Face config ({first_line(exc)})"
            ) from None
        _refuse_oversized_config(path, hf_config, shapes)
        # Mismatched shapes are collected (not raised) so the refusal below can name them.
        load_kwargs = {
            **kwargs,
            "use_safetensors": use_safetensors,
            "output_loading_info": True,
            "ignore_mismatched_sizes": True,
        }
        if "weights_only" in inspect.signature(transformers.PreTrainedModel.from_pretrained).parameters:
            load_kwargs["weights_only"] = True
        weights = "model.safetensors" if use_safetensors else "pytorch_model.bin"
        try:
            model, loading = transformers.AutoModelForCausalLM.from_pretrained(
                str(path), config=hf_config, **load_kwargs
            )
        except Exception as exc:
            _refuse_missing_architecture(exc, config, config_path)
            raise CheckpointError(
                f"{path / weights}: cannot be loaded ({first_line(exc)})",
                hint="check that config.json describes these weights (model_type, sizes)",
            ) from None
        problems = []
        for key, what in (
            ("missing_keys", "missing tensor(s)"),
            ("unexpected_keys", "unexpected tensor(s)"),
            ("mismatched_keys", "wrong shape(s)"),
            ("error_msgs", "error(s)"),
        ):
            items = sorted(_describe_key(k) for k in loading.get(key) or [])
            if items:
                problems.append(f"{what} {', '.join(items[:5])}" + (" ..." if len(items) > 5 else ""))
        if problems:
            raise CheckpointError(
                f"{path / weights}: does not match {config_path.name}: {'; '.join(problems)}",
                hint="the weights and config.json come from different models; re-save them together",
            )
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), **kwargs)
        except BaseException as exc:  # a Rust panic is a BaseException
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            raise CheckpointError(
                f"{path / tokenizer_files[0]}: cannot be loaded ({first_line(exc)})"
            ) from None
    model = model.to(dtype).eval()
    _fuse_new_gelu(model)  # before anything runs the model (the cache checks below)
    tok_digest = hf_tokenizer_identity(files_digest({n: files[n] for n in tokenizer_files}), path, config)
    adapter = HFTokenizerAdapter(tokenizer, sha256=tok_digest, source=str(path / tokenizer_files[0]))
    vocab_size = int(getattr(hf_config, "vocab_size", 0) or 0) or None
    max_length = next(
        (
            v
            for v in (
                getattr(hf_config, k, None) for k in ("n_positions", "max_position_embeddings", "n_ctx")
            )
            if v
        ),
        2048,  # lm-eval's default when the config names none
    )
    info = ScorerInfo(
        format="hf",
        files=files,
        digest=files_digest(files),
        tokenizer_sha256=tok_digest,
        dtype=dtype_name(dtype),
        n_parameters=n_parameters(model),
    )
    fn = hf_logits_fn(model) if _keeps_positions(model, vocab_size or 3) else full_logits_fn(model)
    _refuse_non_causal(fn, adapter, vocab_size, path, hf_config, int(max_length))
    if fn.selects_positions:  # type: ignore[attr-defined]
        # each context once, its continuations from its keys/values (scorers/torch_lm.py)
        fn.cached = _continues_from_cache(model, vocab_size or 3, int(max_length))  # type: ignore[attr-defined]
    return TorchScorer(
        fn,
        adapter,
        batch_size,
        info=info,
        max_length=int(max_length),
        vocab_size=vocab_size,
        dtype=dtype,
        threads=threads,
        max_positions=max_positions,
    )


def hf_tokenizer_identity(files_sha256: str, path: Path, config: dict[str, Any]) -> str:
    """The tokenizer's SHA-256: the digest of its files (HF_TOKENIZER_FILES), which hold every
    special token the adapter scores with (bos, eos, pad, unk: tokenizer_config.json,
    special_tokens_map.json, tokenizer.json). The ids in config.json and generation_config.json
    are not used in scoring (tests/hostile_prs/test_unscorable_probes_cannot_pass_a_floor.py).
    One key of config.json can still change the tokenizer: `tokenizer_class`, which transformers
    reads when tokenizer_config.json names none (and with it other default special tokens); it
    is hashed in then, and only then, so that every other checkpoint keeps its digest."""
    own = read_json(path / "tokenizer_config.json") if (path / "tokenizer_config.json").is_file() else {}
    if (isinstance(own, dict) and own.get("tokenizer_class")) or "tokenizer_class" not in config:
        return files_sha256
    chosen = {"config.json tokenizer_class": config["tokenizer_class"]}
    return sha256_text(canonical_json({"tokenizer files": files_sha256, **chosen}))


# Parameters a config may describe beyond those its safetensors hold (2**28: 1 GiB of float32).
# transformers would allocate and randomly initialise the rest, so a config.json claiming a
# model far larger than its weights (a hostile or mismatched one) could exhaust the memory.
MAX_MISSING_PARAMETERS = 1 << 28


def _refuse_oversized_config(path: Path, hf_config: Any, shapes: dict[str, tuple[int, ...]] | None) -> None:
    """Compare the model config.json describes (built on the meta device: no memory) with the
    tensors in the safetensors headers, before transformers allocates anything. For
    `pytorch_model*.bin` weights (shapes unknown without unpickling) every stored byte counts
    as one parameter: an upper bound."""
    import transformers

    n_stored = _refuse_oversized_sizes(path, hf_config, shapes)
    # Building the skeleton costs time per module, not per parameter (the meta device allocates
    # nothing): the count of modules and parameters it registers is bounded by what the weights
    # hold, so that a config asking for a million small layers (or experts) of any architecture
    # is refused while it is being built, in a fraction of a second.
    tensors = len(shapes) if shapes is not None else None
    budget = _RegistrationBudget(tensors)
    try:
        with budget, torch.device("meta"):
            skeleton = transformers.AutoModelForCausalLM.from_config(hf_config)
    except _TooManyModules as exc:
        raise CheckpointError(
            f"{path / 'config.json'}: describes a model of more than {exc.limit:,} {exc.what} "
            f"but the weights hold {tensors if tensors is not None else 'an unknown number of'} "
            "tensors; refused before building it",
            hint="the weights and config.json come from different models; re-save them together",
        ) from None
    except Exception:
        return  # from_pretrained below says what is wrong with the config
    expected = {k: tuple(v.shape) for k, v in skeleton.state_dict().items()}
    prefix = f"{skeleton.base_model_prefix}." if skeleton.base_model_prefix else ""
    wrong = []
    for name, shape in sorted((shapes or {}).items()):
        want = expected.get(name, expected.get(prefix + name))
        if want is not None and want != shape:
            wrong.append(f"'{name}' is {list(shape)}, expected {list(want)}")
    # buffers too: a rotary or mask table sized by the positions is allocated for real by
    # from_pretrained, though no weight file holds it
    n_model = sum(p.numel() for p in skeleton.parameters()) + sum(b.numel() for b in skeleton.buffers())
    if wrong:
        raise CheckpointError(
            f"{path / 'model.safetensors'}: does not match config.json: wrong shape(s) "
            + ", ".join(wrong[:5])
            + (" ..." if len(wrong) > 5 else ""),
            hint="the weights and config.json come from different models; re-save them together",
        )
    if n_model - n_stored > MAX_MISSING_PARAMETERS:
        raise CheckpointError(
            f"{path / 'config.json'}: describes a model of {n_model:,} parameters but the weights "
            f"hold {n_stored:,}; refused before allocating it",
            hint="the weights and config.json come from different models; re-save them together",
        )


class _TooManyModules(BaseException):
    """Raised from inside the skeleton's construction; a BaseException so that no `except
    Exception` of an architecture's own code swallows it."""

    def __init__(self, what: str, limit: int):
        super().__init__(what)
        self.what, self.limit = what, limit


class _RegistrationBudget:
    """Counts the modules and parameters registered while it is entered (torch's global
    registration hooks) and stops the construction past a budget set by the stored tensors: a
    model has about one parameter per stored tensor (tied weights are stored once) and a few
    modules per parameter (activations, dropouts, rotary tables hold none)."""

    def __init__(self, stored_tensors: int | None):
        known = stored_tensors is not None
        self.limits = {
            "parameter tensors": 2 * stored_tensors + 64 if known else _MAX_UNKNOWN_TENSORS,
            "modules": 8 * stored_tensors + 256 if known else 4 * _MAX_UNKNOWN_TENSORS,
        }
        self.counts = dict.fromkeys(self.limits, 0)
        self.handles: list[Any] = []

    def _count(self, what: str) -> None:
        self.counts[what] += 1
        if self.counts[what] > self.limits[what]:
            raise _TooManyModules(what, self.limits[what])

    def __enter__(self) -> _RegistrationBudget:
        from torch.nn.modules import module as torch_module

        self.handles = [
            torch_module.register_module_module_registration_hook(lambda *_: self._count("modules")),
            torch_module.register_module_parameter_registration_hook(
                lambda *_: self._count("parameter tensors")
            ),
        ]
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self.handles:
            handle.remove()


# `pytorch_model*.bin` weights: their tensors are not counted without unpickling them.
_MAX_UNKNOWN_TENSORS = 100_000

# Hard caps on a config's numbers, whatever the architecture (docs/hostile-inputs.md): keys naming
# a count of repeated parts (layers, experts, heads, blocks, groups) and keys naming a size (width,
# intermediate size, vocabulary, positions, windows). The largest real models have ~130 layers,
# a few hundred experts, widths of ~30,000, vocabularies of ~260,000 and 10M positions.
_COUNT_KEY = re.compile(r"(layers?|experts?|heads?|blocks?|groups?)\Z")
_SIZE_KEY = re.compile(
    r"(size|dim|dims|embd|embed|embeddings|inner|positions|ctx|vocab|length|len|window|d_model|d_ff)\Z"
)
MAX_COUNT = 4_096
MAX_SIZE = 1 << 24
_MAX_ANY_INT = 1 << 53  # ids, seeds, thetas: anything a float holds exactly
_MAX_LIST = 1 << 16


def _refuse_unbounded_numbers(config_path: Path, config: dict[str, Any]) -> None:
    """Every number of config.json (nested configs and lists included) within its hard cap,
    before anything is parsed or sized from it: a count of layers, experts or heads at most
    `MAX_COUNT`, a size at most `MAX_SIZE`, any integer at most 2**53, any list at most 65,536
    long. Architectures name their sizes differently (n_layer, num_hidden_layers,
    decoder_layers, n_routed_experts, ...); matched by the end of the key, and, whatever the
    name, the skeleton's construction is bounded by the stored tensors (`_RegistrationBudget`)."""
    hint = "the weights and config.json come from different models; re-save them together"
    stack: list[tuple[str, Any]] = [("", config)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            stack += [(f"{where}.{k}" if where else str(k), v) for k, v in value.items()]
            continue
        if isinstance(value, list):
            if len(value) > _MAX_LIST:
                raise CheckpointError(
                    f"{config_path}: {clean(where, 80)} is a list of {len(value):,} values; refused",
                    hint=hint,
                )
            stack += [(f"{where}[{i}]", v) for i, v in enumerate(value)]
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            continue
        key = where.rsplit(".", 1)[-1].split("[", 1)[0].lower()
        if key == "model_max_length":  # a tokenizer's setting, often transformers' 1e30 "no limit"
            continue
        cap = MAX_COUNT if _COUNT_KEY.search(key) else MAX_SIZE if _SIZE_KEY.search(key) else _MAX_ANY_INT
        if abs(value) > cap:
            raise CheckpointError(
                f"{config_path}: {clean(where, 80)} = {value:,} is beyond any model evalgate can score "
                f"(at most {cap:,}); refused before building it",
                hint=hint,
            )


_SIZE_KEYS = {
    "layers": ("num_hidden_layers", "n_layer", "num_layers"),
    "width": ("hidden_size", "n_embd", "d_model"),
    "vocab": ("vocab_size",),
}
_MAX_DIM = 1 << 24  # no sane layer count, width or vocabulary is larger


def _refuse_oversized_sizes(path: Path, config: Any, shapes: dict[str, tuple[int, ...]] | None) -> int:
    """Refuse a config (the raw config.json dict, or the parsed config) whose sizes alone describe
    far more than the weights hold: even on the meta device, building the skeleton of (or, for
    some architectures, merely parsing) a config with a billion layers takes unbounded time and
    memory. Returns the stored parameter count (every .bin byte counts as one: an upper bound)."""
    n_stored = (
        sum(f.stat().st_size for f in path.glob("pytorch_model*.bin"))
        if shapes is None
        else sum(math.prod(s) for s in shapes.values())
    )
    floor = _parameters_floor(config)
    if floor is None or floor - n_stored > MAX_MISSING_PARAMETERS:
        described = "sizes that are not sane integers" if floor is None else f"at least {floor:,} parameters"
        raise CheckpointError(
            f"{path / 'config.json'}: describes a model of {described} but the weights "
            f"hold {n_stored:,}; refused before building it",
            hint="the weights and config.json come from different models; re-save them together",
        )
    return n_stored


def _parameters_floor(hf_config: Any) -> int | None:
    """A lower bound of the parameters a config describes (layers x width^2 + vocab x width:
    every decoder layer has at least one width x width projection), or None when a size is not
    a sane integer. Sizes the config does not name count as 1."""
    sizes = {}
    for what, keys in _SIZE_KEYS.items():
        get = hf_config.get if isinstance(hf_config, dict) else lambda k: getattr(hf_config, k, None)
        value = next((get(k) for k in keys if get(k) is not None), 1)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_DIM:
            return None
        sizes[what] = value
    return sizes["layers"] * sizes["width"] ** 2 + sizes["vocab"] * sizes["width"]


def _describe_key(key: Any) -> str:
    """A loading-info entry: a tensor name, or (name, found shape, expected shape)."""
    if isinstance(key, tuple) and len(key) == 3:
        name, found, expected = key
        return f"'{name}' is {list(found)}, expected {list(expected)}"
    return str(key)


def _refuse_non_causal(
    fn: Any, adapter: HFTokenizerAdapter, vocab_size: int | None, path: Path, hf_config: Any, max_length: int
) -> None:
    """An encoder (BERT-style, `is_decoder` off) loads as a causal LM head but attends to later
    tokens: every candidate would be scored with itself in view. Refused, not scored."""
    ids = adapter.encode(FINGERPRINT_TEXT)[: max(max_length, 1)]  # n_positions may be tiny
    size = vocab_size or (max(ids) + 1 if ids else 0)
    try:
        leaks = leaks_the_future(fn, ids, size)
    except Exception as exc:
        raise CheckpointError(
            f"{path / 'config.json'}: the model cannot run a forward pass ({first_line(exc)})",
            hint="check that config.json describes these weights (model_type, sizes)",
        ) from None
    if leaks:
        kind = getattr(hf_config, "model_type", None) or "this model"
        raise CheckpointError(
            f"{path / 'config.json'}: {kind} is not a causal language model: its predictions "
            "change with later tokens (bidirectional attention); refused",
            hint="evalgate scores left-to-right log-likelihoods; use a decoder-only checkpoint "
            "(a BERT-style decoder needs is_decoder: true in config.json)",
        )
