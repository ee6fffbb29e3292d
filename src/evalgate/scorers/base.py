"""The narrow model interface everything above the model talks to (lm-eval's `LM`, made smaller).

A `Scorer` answers two questions, in request order, and says what it is:

- `loglikelihood(requests)`: for each (context, continuation), the natural-log probability of the
  continuation's tokens given the context, their count, the continuation tokens decoded back to
  text (for the boundary check) and whether any of them is the unknown token;
- `perplexity(texts)`: the corpus perplexity of whole texts (total NLL / total predicted tokens);
- `info`: a `ScorerInfo`: format, the SHA-256 of every checkpoint file, the tokenizer's identity.

Nothing here imports torch: a test's scorer (tests/helpers/fake_scorer.py) implements the protocol
without it and is handed to the gate through its scorer factory (pipeline/scoring.py), so the core
and its tests never pay for a model. `TorchScorer` (torch_lm.py) is the one real implementation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from evalgate.types import Loglik, LoglikRequest, Perplexity, canonical_json, sha256_text

FORMATS = ("native", "hf", "plugin")


@dataclass(frozen=True)
class ScorerInfo:
    """What was scored, for results.json "checkpoint"/"inputs" and the comparability manifest.

    `files` maps every checkpoint file (POSIX path relative to the checkpoint) to
    {"sha256", "bytes"}; `digest` is the SHA-256 of that listing (one number naming the exact
    checkpoint). `tokenizer_sha256` names the tokenizer: perplexities are comparable only
    between runs with the same one.
    """

    format: str  # native | hf | plugin
    files: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    digest: str = ""
    tokenizer_sha256: str | None = None
    dtype: str = "float32"
    n_parameters: int = 0
    loader: str | None = None  # "pkg.module:function" for plugins
    # the plugin's code (edges/plugin_code.PluginCode): its SHA-256 is part of the yardstick
    loader_code: Any = None

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"unknown scorer format {self.format!r}; expected one of {FORMATS}")


def files_digest(files: Mapping[str, Mapping[str, Any]], extra: str = "") -> str:
    """SHA-256 of a {path: {"sha256", ...}} listing: independent of order, sensitive to every byte."""
    listing = {path: rec["sha256"] for path, rec in files.items()}
    return sha256_text(canonical_json({"files": listing, "extra": extra}))


@runtime_checkable
class Scorer(Protocol):
    info: ScorerInfo

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> list[Loglik]:
        """One `Loglik` per request, in request order."""
        ...

    def perplexity(self, texts: Sequence[str]) -> Perplexity:
        """exp(total NLL / total predicted tokens) over `texts`, each scored on its own."""
        ...


@runtime_checkable
class TokenizerAdapter(Protocol):
    """The few things the scorer needs from any tokenizer (native, Hugging Face or a plugin's).

    `encode` never adds special tokens: the scorer adds BOS itself when `uses_bos` (the model was
    trained on `[bos] + tokens`), so the context/continuation split is computed on exactly the
    ids the model sees. `sha256` identifies the tokenizer (see ScorerInfo.tokenizer_sha256).
    """

    bos_id: int | None
    eos_id: int | None
    pad_id: int | None
    unk_id: int | None
    uses_bos: bool
    sha256: str | None

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: Sequence[int]) -> str: ...
