"""`scoring.device` (issue 29, section 3; docs/scoring.md, "Device"): which device a run uses, and
that moving the forwards behind scorers/device.py's wrapper keeps every number. The wrapper is
run here on the CPU itself (this machine has no GPU): inputs, logits and the key/value cache go
through the same moves as on a GPU, so a wrapper that drops a tensor, mixes up the cache or reads
the wrong positions changes these numbers."""

from __future__ import annotations

import pytest
import torch
from helpers.lm_fixtures import hf_llama_dir
from helpers.paths import REPO

from evalgate.errors import RefusedError
from evalgate.scorers.device import on_device, place, resolve_device
from evalgate.scorers.loaders import load_scorer
from evalgate.types import LoglikRequest

REQUESTS = [
    LoglikRequest("She works every day at the office and", " works"),
    LoglikRequest("She works every day at the office and", " worked"),
    LoglikRequest("They", " walk"),
    LoglikRequest("Yesterday we went to the market and we", " bought"),
]


def test_auto_is_cuda_only_when_one_is_visible_and_cpu_is_the_default():
    assert resolve_device(None, cuda_available=True) == "cpu"
    assert resolve_device("cpu", cuda_available=True) == "cpu"
    assert resolve_device("auto", cuda_available=True) == "cuda"
    assert resolve_device("auto", cuda_available=False) == "cpu"
    assert resolve_device("cuda", cuda_available=True) == "cuda"


def test_cuda_without_a_visible_device_is_refused_naming_the_key_and_the_way_out():
    with pytest.raises(RefusedError) as got:
        resolve_device("cuda", cuda_available=False)
    assert "scoring.device: cuda" in str(got.value) and "no CUDA device" in str(got.value)
    assert "scoring.device: auto" in (got.value.hint or "")


def _scores(scorer):
    return [(r.logprob, r.decoded) for r in scorer.loglikelihood(REQUESTS)]


@pytest.mark.parametrize("kind", ["native", "hf-llama"])
def test_the_device_wrapper_keeps_every_number_and_the_cache_path(kind, tmp_path):
    path = REPO / "data" / "checkpoints" / "demo" if kind == "native" else hf_llama_dir(tmp_path / "llama")
    plain = _scores(load_scorer(path, None, root=path.parent, roots=[path.parent]))
    scorer = load_scorer(path, None, root=path.parent, roots=[path.parent])
    assert place(scorer, "cpu").model_fn is scorer.model_fn  # cpu: untouched
    inner = getattr(scorer.model_fn, "cached", None)
    calls = {"start": 0, "extend": 0}
    if inner is not None:  # count the cached model's calls through the wrapper
        for name in calls:
            real = getattr(inner, name)

            def counted(*a, _real=real, _name=name):
                calls[_name] += 1
                return _real(*a)

            setattr(inner, name, counted)
    wrapped = on_device(scorer, torch.device("cpu"))
    assert wrapped.model_fn.cached.inner is inner if inner is not None else True
    assert _scores(wrapped) == plain
    if inner is not None:
        assert calls["start"] > 0, "the wrapped scorer did not go through the key/value cache"
