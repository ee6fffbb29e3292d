"""Checkpoint loading: native, Hugging Face or plugin, behind one function, `load_scorer`.

Loading never executes code from the checkpoint: native and Hugging Face weights are read from
safetensors (headers checked first); a `pytorch_model.bin` is scanned opcode by opcode and then
loaded only through `torch.load(weights_only=True)`; any other pickle (`.pt`, `.pth`, `.ckpt`)
is refused; `trust_remote_code` is off and a config with `auto_map` is refused before anything
is loaded. Every failure is a `CheckpointError` (exit 2) whose one-line message names the file.
A plugin (`--loader pkg.module:function`) is the user's own code, imported and called as is.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from evalgate.edges.files import file_record
from evalgate.errors import CheckpointError
from evalgate.scorers.adapters import (
    FINGERPRINT_TEXT,
    HFTokenizerAdapter,
    PluginTokenizerAdapter,
    TokenizersAdapter,
    _first_int_attr,
)
from evalgate.scorers.base import ScorerInfo, files_digest
from evalgate.scorers.safety import (
    PICKLE_SUFFIXES,
    check_safetensors,
    checkpoint_files,
    refuse_pickle_file,
    scan_pickle,
)
from evalgate.scorers.torch_lm import TorchScorer, full_logits_fn, hf_logits_fn
from evalgate.types import canonical_json, sha256_text

DTYPES = {"float32": torch.float32, "float64": torch.float64}
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
_HINT_DIR = (
    "--checkpoint takes a native evalgate directory (config.json with 'evalgate_native') or a "
    "Hugging Face model directory (config.json + model.safetensors + tokenizer files)"
)


def load_scorer(
    checkpoint: Path | None,
    loader: str | None,
    *,
    root: Path,
    batch_size: int = 32,
    dtype: str = "float32",
    threads: int = 0,
) -> TorchScorer:
    """The scorer for a checkpoint directory, or for what a plugin loader returns."""
    if dtype not in DTYPES:
        raise CheckpointError(f"scoring.dtype {dtype!r} is not supported; use one of {', '.join(DTYPES)}")
    opts = {"batch_size": batch_size, "dtype": DTYPES[dtype], "threads": threads}
    if loader:
        return load_plugin(loader, checkpoint, root=root, **opts)
    if checkpoint is None:
        raise CheckpointError(
            "no checkpoint given", hint="pass --checkpoint DIR (or --loader pkg.module:function)"
        )
    path = Path(checkpoint)
    if not path.exists():
        raise CheckpointError(f"checkpoint not found: {path}", hint=_HINT_DIR)
    if path.is_file():
        if path.suffix.lower() in PICKLE_SUFFIXES:
            raise refuse_pickle_file(path)
        raise CheckpointError(f"{path}: not a checkpoint directory", hint=_HINT_DIR)
    config_path = path / "config.json"
    if not config_path.is_file():
        pickles = sorted(p for p in path.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES)
        if pickles:
            raise refuse_pickle_file(pickles[0])
        raise CheckpointError(f"not a model directory: {path} has no config.json", hint=_HINT_DIR)
    doc = _read_json(config_path)
    if isinstance(doc, dict) and "evalgate_native" in doc:
        return load_native_scorer(path, **opts)
    return load_hf_scorer(path, doc, **opts)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f":{exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise CheckpointError(f"{path}{where}: not valid UTF-8 JSON ({exc})") from None


def _n_parameters(model: Any) -> int:
    if not isinstance(model, torch.nn.Module):
        return 0
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# --- native --------------------------------------------------------------------------------


def load_native_scorer(path: Path, *, batch_size: int, dtype: torch.dtype, threads: int) -> TorchScorer:
    from evalgate.scorers import native_gpt

    model, tok, cfg = native_gpt.load_native(path)
    files = checkpoint_files(path)
    adapter = TokenizersAdapter(
        tok,
        bos_id=cfg.bos_token_id,
        eos_id=cfg.eos_token_id,
        pad_id=cfg.pad_token_id,
        unk_id=cfg.unk_token_id,
        sha256=files[native_gpt.TOKENIZER_FILE]["sha256"],
    )
    info = ScorerInfo(
        format="native",
        files=files,
        digest=files_digest(files),
        tokenizer_sha256=adapter.sha256,
        dtype=_dtype_name(dtype),
        n_parameters=_n_parameters(model),
    )
    return TorchScorer(
        full_logits_fn(model.to(dtype).eval()),
        adapter,
        batch_size,
        info=info,
        max_length=cfg.block_size,
        append_eos=True,
        vocab_size=cfg.vocab_size,
        dtype=dtype,
        threads=threads,
    )


# --- Hugging Face --------------------------------------------------------------------------


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


def _hf_weights(path: Path) -> bool:
    """Check the weight files before transformers sees them; True when they are safetensors."""
    safetensors_files = sorted(path.glob("*.safetensors"))
    if safetensors_files:
        for f in safetensors_files:
            check_safetensors(f)
        return True
    bins = sorted(path.glob("pytorch_model*.bin"))
    if bins:
        if _version_tuple(torch.__version__) < (2, 10):
            raise CheckpointError(
                f"{bins[0]}: .bin weights need torch >= 2.10 (older weights_only has known bypasses)",
                hint="convert the weights to safetensors, or upgrade torch",
            )
        for f in bins:
            scan_pickle(f)
        return False
    pickles = sorted(p for p in path.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES)
    if pickles:
        raise refuse_pickle_file(pickles[0])
    raise CheckpointError(f"missing weights: {path} has no model.safetensors", hint=_HINT_DIR)


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


def load_hf_scorer(
    path: Path, config: Any, *, batch_size: int, dtype: torch.dtype, threads: int
) -> TorchScorer:
    config_path = path / "config.json"
    if not isinstance(config, dict):
        raise CheckpointError(f"{config_path}: expected a JSON object")
    for name in ("config.json", "tokenizer_config.json"):
        doc = config if name == "config.json" else _read_json(path / name) if (path / name).is_file() else {}
        if isinstance(doc, dict) and "auto_map" in doc:
            raise CheckpointError(
                f"{path / name}: 'auto_map' asks for code shipped with the checkpoint; "
                "refused (never executed)",
                hint="evalgate loads only architectures built into transformers (trust_remote_code is off)",
            )
    use_safetensors = _hf_weights(path)
    tokenizer_files = [n for n in HF_TOKENIZER_FILES if (path / n).is_file()]
    if not tokenizer_files:
        raise CheckpointError(
            f"missing tokenizer: {path / 'tokenizer.json'} (nor any other tokenizer file)",
            hint="save the tokenizer next to the model: tokenizer.save_pretrained(dir)",
        )
    files = checkpoint_files(path)
    import transformers

    kwargs: dict[str, Any] = {"local_files_only": True, "trust_remote_code": False}
    with _quiet_transformers():
        try:
            hf_config = transformers.AutoConfig.from_pretrained(str(path), **kwargs)
        except Exception as exc:
            raise CheckpointError(
                f"{config_path}: not a usable Hugging Face config ({_first_line(exc)})"
            ) from None
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
            raise CheckpointError(
                f"{path / weights}: cannot be loaded ({_first_line(exc)})",
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
        except Exception as exc:
            raise CheckpointError(
                f"{path / tokenizer_files[0]}: cannot be loaded ({_first_line(exc)})"
            ) from None
    model = model.to(dtype).eval()
    tok_digest = files_digest({n: files[n] for n in tokenizer_files})
    adapter = HFTokenizerAdapter(tokenizer, sha256=tok_digest)
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
        dtype=_dtype_name(dtype),
        n_parameters=_n_parameters(model),
    )
    fn = hf_logits_fn(model) if _keeps_positions(model, vocab_size or 3) else full_logits_fn(model)
    return TorchScorer(
        fn,
        adapter,
        batch_size,
        info=info,
        max_length=int(max_length),
        vocab_size=vocab_size,
        dtype=dtype,
        threads=threads,
    )


def _describe_key(key: Any) -> str:
    """A loading-info entry: a tensor name, or (name, found shape, expected shape)."""
    if isinstance(key, tuple) and len(key) == 3:
        name, found, expected = key
        return f"'{name}' is {list(found)}, expected {list(expected)}"
    return str(key)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


# --- plugin --------------------------------------------------------------------------------

_LOADER_SPEC = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_]\w*$")


def load_plugin(
    spec: str, checkpoint: Path | None, *, root: Path, batch_size: int, dtype: torch.dtype, threads: int
) -> TorchScorer:
    """`pkg.module:function` -> (model, tokenizer); called with the checkpoint path when it takes one."""
    if not _LOADER_SPEC.match(spec):
        raise CheckpointError(
            f"--loader {spec}: expected package.module:function", hint="e.g. --loader mylab.model:load"
        )
    module_name, func_name = spec.split(":")
    root_str = str(Path(root).resolve())
    if root_str not in sys.path:
        sys.path.insert(0, root_str)  # the user's modules live in their repository
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise CheckpointError(f"--loader {spec}: cannot import {module_name} ({_first_line(exc)})") from None
    fn = getattr(module, func_name, None)
    if not callable(fn):
        raise CheckpointError(f"--loader {spec}: {module_name} has no function {func_name}")
    try:
        takes_arg = any(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
            for p in inspect.signature(fn).parameters.values()
        )
        result = fn(checkpoint) if takes_arg else fn()
    except CheckpointError:
        raise
    except Exception as exc:
        raise CheckpointError(f"--loader {spec}: the loader raised {_first_line(exc)}") from None
    if not isinstance(result, tuple | list) or len(result) != 2:
        raise CheckpointError(
            f"--loader {spec}: returned {type(result).__name__}, expected a (model, tokenizer) pair"
        )
    model, tok = result
    if not callable(model):
        raise CheckpointError(f"--loader {spec}: the model it returned is not callable")
    if isinstance(model, torch.nn.Module):
        model = model.to(dtype).eval()
    adapter = PluginTokenizerAdapter(tok, loader=spec)
    ids = adapter.encode(FINGERPRINT_TEXT)
    if not ids:
        raise CheckpointError(f"--loader {spec}: tokenizer.encode returned no ids for a plain sentence")
    adapter.decode(ids)
    fn_logits = full_logits_fn(model)
    try:
        with torch.inference_mode():
            logits = fn_logits(torch.tensor([ids]), torch.ones((1, len(ids)), dtype=torch.bool))
    except CheckpointError as exc:
        raise CheckpointError(f"--loader {spec}: {exc.message}", hint=exc.hint) from None
    except Exception as exc:
        raise CheckpointError(f"--loader {spec}: model(ids) raised {_first_line(exc)}") from None
    vocab_size = int(logits.shape[-1])
    if max(ids) >= vocab_size:
        raise CheckpointError(
            f"--loader {spec}: the tokenizer produced id {max(ids)} but the model has {vocab_size} logits"
        )
    adapter.sha256 = sha256_text(canonical_json({"ids": ids, "vocab_size": vocab_size}))
    files = checkpoint_files(checkpoint) if checkpoint is not None and Path(checkpoint).exists() else {}
    source = getattr(module, "__file__", None)
    if not files and source:
        files = {Path(source).name: file_record(source)}
    max_length = _first_int_attr(model, ("block_size", "max_length", "n_positions")) or _first_int_attr(
        getattr(model, "config", None), ("block_size", "n_positions", "max_position_embeddings")
    )
    info = ScorerInfo(
        format="plugin",
        files=files,
        digest=files_digest(files, extra=spec),
        tokenizer_sha256=adapter.sha256,
        dtype=_dtype_name(dtype),
        n_parameters=_n_parameters(model),
        loader=spec,
    )
    return TorchScorer(
        fn_logits,
        adapter,
        batch_size,
        info=info,
        max_length=max_length,
        vocab_size=vocab_size,
        dtype=dtype,
        threads=threads,
    )
