"""`scoring.device`: where the model runs (docs/scoring.md, "Device").

`cpu` (the default) leaves a loaded scorer as it is. `cuda` moves the model to the GPU and wraps
its logits function, and its key/value cache when it has one, so that inputs go to the device and
logits and keys/values come back to the CPU: the scorer (scorers/torch_lm.py), the prefix tree's
bookkeeping and everything after it run unchanged on CPU tensors, and only the forwards run on the
GPU. `auto` is cuda when torch sees a CUDA device, else cpu.

GPU kernels sum in another order than CPU ones, so a GPU run's log-likelihoods differ from a CPU
run's in their last bits: the device used is recorded in the comparability manifest
(gate/results.py) and a baseline measured on another device is refused (gate/compare.py).
"""

from __future__ import annotations

from typing import Any

import torch

from evalgate.errors import RefusedError
from evalgate.scorers.torch_lm import KVCache, TorchScorer

DEVICES = ("cpu", "cuda", "auto")


def resolve_device(configured: str | None, *, cuda_available: bool | None = None) -> str:
    """The device a run uses for `scoring.device` (None: cpu): "cpu" or "cuda"."""
    wanted = configured or "cpu"
    if wanted not in DEVICES:
        raise RefusedError(f"scoring.device {wanted!r}: expected one of {', '.join(DEVICES)}")
    available = torch.cuda.is_available() if cuda_available is None else cuda_available
    if wanted == "auto":
        return "cuda" if available else "cpu"
    if wanted == "cuda" and not available:
        build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
        raise RefusedError(
            f"scoring.device: cuda (evalgate.yml), but torch ({torch.__version__}, {build}) sees no CUDA "
            "device; nothing was scored",
            hint="run the CUDA image on a GPU runner (docs/docker.md, docs/github.md), or set "
            "scoring.device: auto (cuda when there is one, else cpu) or cpu",
        )
    return wanted


def place(scorer: TorchScorer, device: str) -> TorchScorer:
    """The scorer with its forwards on `device` ("cpu" leaves it untouched)."""
    if device == "cpu":
        return scorer
    return on_device(scorer, torch.device(device))


def on_device(scorer: TorchScorer, device: torch.device) -> TorchScorer:
    """Wrap the scorer's logits function (and key/value cache) to run on `device`; CPU tensors in
    and out. Also used on the CPU itself by the tests, which check that the wrapping keeps every
    number."""
    fn = scorer.model_fn
    model = getattr(fn, "model", None)
    if not isinstance(model, torch.nn.Module):
        raise RefusedError(
            f"scoring.device: {device.type}: this loader's logits function exposes no model to move "
            "(a plugin loader: give its function a `.model` attribute, the torch module)",
            hint="or score on the CPU (scoring.device: cpu)",
        )
    model.to(device)

    def call(ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        return fn(ids.to(device), keep.to(device)).cpu()

    call.selects_positions = getattr(fn, "selects_positions", False)  # type: ignore[attr-defined]
    call.model = model  # type: ignore[attr-defined]
    cached = getattr(fn, "cached", None)
    if cached is not None:
        call.cached = _CachedOnDevice(cached, device)  # type: ignore[attr-defined]
    scorer.model_fn = call
    return scorer


def _to(kv: KVCache, device: torch.device) -> KVCache:
    return tuple((k.to(device), v.to(device)) for k, v in kv)


class _CachedOnDevice:
    """A `CachedLM` (scorers/torch_lm.py) whose forwards run on `device`; its keys/values are
    kept on the CPU between forwards, where the prefix tree gathers them."""

    def __init__(self, inner: Any, device: torch.device) -> None:
        self.inner = inner
        self.device = device

    @property
    def kv_per_token(self) -> int:
        return int(self.inner.kv_per_token)

    def start(self, ids: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, KVCache]:
        logits, kv = self.inner.start(ids.to(self.device), keep.to(self.device))
        return logits.cpu(), _to(kv, torch.device("cpu"))

    def extend(self, ids: torch.Tensor, past: KVCache, keep: torch.Tensor) -> tuple[torch.Tensor, KVCache]:
        logits, kv = self.inner.extend(ids.to(self.device), _to(past, self.device), keep.to(self.device))
        return logits.cpu(), _to(kv, torch.device("cpu"))


def place_scorer(scorer: TorchScorer, configured: str | None) -> str:
    """Put the loaded scorer on the device `scoring.device` names; the device used ("cpu" or
    "cuda"), which the run records in its comparability manifest."""
    device = resolve_device(configured)
    place(scorer, device)
    return device
