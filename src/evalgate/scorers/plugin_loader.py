"""Plugin checkpoints: `--loader package.module:function` returning (model, tokenizer).

The loader is the user's own code, part of the yardstick: found and hashed without running it,
then imported from exactly those files with no other repository module importable
(edges/plugin_code.py), and called with the checkpoint path, or with nothing when it takes no
argument. evalgate checks what comes back - `model(ids)` gives (batch, time, vocab) logits or
an object with `.logits`, `tokenizer.encode(str)` gives ids and `tokenizer.decode(ids)` a string.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import torch

from evalgate.edges.files import file_record
from evalgate.edges.plugin_code import import_plugin, locate, repository_folders, split_spec
from evalgate.errors import CheckpointError
from evalgate.paths import allowed_roots
from evalgate.scorers.adapters import FINGERPRINT_TEXT, PluginTokenizerAdapter, first_int_attr
from evalgate.scorers.base import ScorerInfo, files_digest
from evalgate.scorers.loading import dtype_name, first_line, n_parameters
from evalgate.scorers.safety import check_regular_files, checkpoint_files
from evalgate.scorers.torch_lm import MAX_POSITIONS, LogitsFn, TorchScorer, full_logits_fn, leaks_the_future
from evalgate.types import canonical_json, sha256_text


def load_plugin(
    spec: str,
    checkpoint: Path | None,
    *,
    root: Path,
    batch_size: int,
    dtype: torch.dtype,
    threads: int,
    max_positions: int = MAX_POSITIONS,
) -> TorchScorer:
    """`pkg.module:function` -> (model, tokenizer); called with the checkpoint path when it takes one.

    The plugin's code is found and hashed first (edges/plugin_code.py: the SHA-256 the yardstick
    records), then imported from exactly there, with no other module of the repository
    importable (docs/scoring.md, "Plugins")."""
    module_name, func_name = split_spec(spec)
    folders = repository_folders(root)
    code = locate(spec, folders)
    try:
        module = import_plugin(code, module_name, folders)
    except Exception as exc:
        raise CheckpointError(f"--loader {spec}: cannot import {module_name} ({first_line(exc)})") from None
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
        raise CheckpointError(f"--loader {spec}: the loader raised {first_line(exc)}") from None
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
    max_length = first_int_attr(model, ("block_size", "max_length", "n_positions")) or first_int_attr(
        getattr(model, "config", None), ("block_size", "n_positions", "max_position_embeddings")
    )
    if max_length is not None and max_length < 1:
        max_length = None
    # The checks below run the model on (a window of) the fingerprint sentence: a model with a
    # small block_size (nanoGPT asserts "Cannot forward sequence of length ...") only sees what
    # it will see when scoring.
    window = ids[:max_length] if max_length else ids
    fn_logits = _guarded(full_logits_fn(model), spec)
    try:
        with torch.inference_mode():
            logits = fn_logits(torch.tensor([window]), torch.ones((1, len(window)), dtype=torch.bool))
    except CheckpointError as exc:
        message = exc.message if exc.message.startswith("--loader ") else f"--loader {spec}: {exc.message}"
        raise CheckpointError(message, hint=exc.hint) from None
    vocab_size = int(logits.shape[-1])
    if max(ids) >= vocab_size:
        raise CheckpointError(
            f"--loader {spec}: the tokenizer produced id {max(ids)} but the model has {vocab_size} logits"
        )
    try:
        leaks = leaks_the_future(fn_logits, window, vocab_size)
    except CheckpointError as exc:
        message = exc.message if exc.message.startswith("--loader ") else f"--loader {spec}: {exc.message}"
        raise CheckpointError(message, hint=exc.hint) from None
    if leaks:
        raise CheckpointError(
            f"--loader {spec}: the model is not causal: its logits at a position change with "
            "later tokens (no causal mask?); refused",
            hint="evalgate scores left-to-right log-likelihoods: position i may only see tokens 0..i",
        )
    adapter.sha256 = sha256_text(canonical_json({"ids": ids, "vocab_size": vocab_size}))
    if checkpoint is not None and Path(checkpoint).is_dir():
        check_regular_files(Path(checkpoint), allowed_roots(root, [checkpoint]))
    files = checkpoint_files(checkpoint) if checkpoint is not None and Path(checkpoint).exists() else {}
    source = getattr(module, "__file__", None)
    if not files and source:
        files = {Path(source).name: file_record(source)}
    info = ScorerInfo(
        format="plugin",
        files=files,
        digest=files_digest(files, extra=f"{spec} {code.sha256}"),
        tokenizer_sha256=adapter.sha256,
        dtype=dtype_name(dtype),
        n_parameters=n_parameters(model),
        loader=spec,
        loader_code=code,
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
        max_positions=max_positions,
    )


def _guarded(fn: LogitsFn, spec: str) -> LogitsFn:
    """The plugin's model is the user's code: an exception in it, at any batch, is a refusal
    naming the loader (exit 2), not an evalgate bug (exit 3)."""

    def call(ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        try:
            return fn(ids, keep)
        except (CheckpointError, MemoryError):
            raise
        except Exception as exc:
            raise CheckpointError(
                f"--loader {spec}: model(ids) raised {first_line(exc)} on ids of shape {tuple(ids.shape)}"
            ) from None

    call.selects_positions = False  # type: ignore[attr-defined]
    call.model = getattr(fn, "model", None)  # type: ignore[attr-defined]
    return call
