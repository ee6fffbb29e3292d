"""The hint for a missing checkpoint that reads like a Hugging Face Hub model id.

Kept apart from the loaders, which import torch, so that refusing a missing checkpoint (`run`,
`init`) costs no torch import.
"""

from __future__ import annotations

import re
from pathlib import Path

from evalgate.scorers.safety import PICKLE_SUFFIXES

# What a model id on the Hugging Face Hub looks like (`gpt2`, `org/name`): one or two plain names.
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9._-]*)?")


def hub_id_hint(given: str) -> str | None:
    """The command that makes a local copy, when a missing checkpoint reads like a Hub model id.

    evalgate never downloads (a gate must score the bytes the PR committed, offline), so a user
    who passed `--checkpoint gpt2` needs the one step that turns the id into a folder. `given` is
    the argument as the user wrote it: `./gpt2`, `/models/gpt2` or `runs/a/b` name a local path
    (`_HUB_ID` starts with a letter or digit and has at most one '/'), and get no Hub hint.
    """
    weights_file = Path(given).suffix.lower() in {*PICKLE_SUFFIXES, ".safetensors", ".bin", ".gguf"}
    if _HUB_ID.fullmatch(given) and not given.endswith("..") and not weights_file:
        local = "checkpoints/" + given.replace("/", "--")
        return (
            f"scoring never downloads a model: if {given} is a Hugging Face Hub id, copy it "
            f"first with `hf download {given} --local-dir {local}` (huggingface_hub), then "
            f"pass --checkpoint {local}; or commit a checkpoint reference (a .json with each "
            'file\'s SHA-256) and run `evalgate fetch` (docs/github.md, "Where the checkpoint lives")'
        )
    return None
