"""Hostile pull requests that bring files evalgate must not read as they are: every configured
input replaced by something that is not a plain file, and a model config describing a model that
cannot exist. Each case runs the installed `evalgate` console script in a copy of the repository
(tests/helpers/hostile_repo.py) with a time limit: a hang is a failure, not a wait."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from helpers.hostile_repo import run_evalgate
from helpers.paths import REPO

# Every file the gate reads from the repository, by what names it: the keys of evalgate.yml,
# the configuration itself, and the files of the configured checkpoint folder.
CONFIGURED_FILES = {
    "probes": "data/eval/ordinal.jsonl",
    "template": "data/eval/probe_prompt.txt",
    "manifest": "data/eval/MANIFEST.json",
    "grammar": "data/grammar/verbs.yaml",
    "train": "data/corpus/val.jsonl",
    "test": "data/corpus/test.jsonl",
    "baseline": "baselines/demo.json",
    "evalgate.yml": "evalgate.yml",
    "checkpoint config.json": "data/checkpoints/demo/config.json",
    "checkpoint model.safetensors": "data/checkpoints/demo/model.safetensors",
    "checkpoint tokenizer.json": "data/checkpoints/demo/tokenizer.json",
}
KINDS = ("a link to /dev/zero", "a FIFO", "a folder", "a huge sparse file")
# Seconds a refusal may take: it is decided before any model is loaded or any file is read
# whole (the validation of the demo's probe set is most of it).
FAST = 60


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy of the repository's gate inputs; each case copies it again and breaks one file."""
    root = tmp_path_factory.mktemp("pristine")
    shutil.copytree(REPO / "data", root / "data")
    shutil.copytree(REPO / "baselines", root / "baselines")
    shutil.copy(REPO / "evalgate.yml", root / "evalgate.yml")
    return root


def _replace(path: Path, kind: str) -> None:
    path.unlink()
    if kind == "a link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "a FIFO":
        os.mkfifo(path)  # no writer: a read would block forever
    elif kind == "a folder":
        path.mkdir()
    else:
        with open(path, "wb") as fh:
            fh.truncate(1 << 40)  # 1 TiB that takes no disk: read whole, it would never end


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("key", sorted(CONFIGURED_FILES))
def test_a_configured_input_that_is_not_a_plain_file_is_refused_naming_it(pristine, tmp_path, key, kind):
    """A PR replaces one input the gate reads (a probe file, the test set, evalgate.yml, a
    checkpoint file, ...) with a link to /dev/zero, a FIFO, a folder or a 1 TiB sparse file, so
    that the gate hangs, crashes (exit 3) or silently falls back to its embedded default."""
    repo = tmp_path / "repo"
    shutil.copytree(pristine, repo, symlinks=True)
    rel = CONFIGURED_FILES[key]
    _replace(repo / rel, kind)
    start = time.monotonic()
    done = run_evalgate(repo, "run", "--out", "evalgate-out", timeout=FAST)
    said = done.stdout + done.stderr
    assert done.returncode == 2, said[-3000:]
    assert time.monotonic() - start < FAST
    assert rel in said, said[-3000:]  # the refusal names the file
    assert "Traceback" not in said


def test_a_gate_changes_file_that_is_a_device_is_refused(pristine, tmp_path):
    """The `--gate-changes` diff the workflow writes into the workspace, where a PR committed a
    link to /dev/zero under that name."""
    repo = tmp_path / "repo"
    shutil.copytree(pristine, repo, symlinks=True)
    (repo / ".evalgate").mkdir()
    (repo / ".evalgate" / "gate-changes.diff").symlink_to("/dev/zero")
    done = run_evalgate(repo, "run", "--gate-changes", ".evalgate/gate-changes.diff", timeout=FAST)
    assert done.returncode == 2, done.stderr[-3000:]
    assert ".evalgate/gate-changes.diff" in done.stderr and "not a regular file" in done.stderr


@pytest.mark.parametrize(
    "command",
    [
        ("validate",),
        ("probes", "export", "--format", "csv", "--out", "exported.csv"),
        ("probes", "deprecate", "probe-en-go-past_simple-3sg-004"),
        ("probes", "seal"),
        ("corpus", "build", "--out-dir", "corpus-out"),
        ("baseline", "update", "--name", "again"),
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_every_command_refuses_a_probe_file_linked_to_dev_zero(pristine, tmp_path, command):
    """A PR makes the probe file a link to /dev/zero: every command that reads the probe set
    (not only `run`) refuses it by type instead of reading until the memory runs out (exit 3)."""
    repo = tmp_path / "repo"
    shutil.copytree(pristine, repo, symlinks=True)
    _replace(repo / "data/eval/probes.jsonl", "a link to /dev/zero")
    done = run_evalgate(repo, *command, timeout=FAST)
    said = done.stdout + done.stderr
    assert done.returncode == 2, said[-3000:]
    assert "data/eval/probes.jsonl" in said and "character device" in said, said[-3000:]


# --- a model config describing a model that cannot exist -------------------------------------


@pytest.mark.parametrize(
    ("build", "changes"),
    [
        ("gpt2", {"n_layer": 1_000_000}),  # the hang: a million layers of the real width
        ("gpt2", {"n_layer": 1_000_000, "n_embd": 2, "n_head": 2}),  # ... of width 2: few parameters
        ("gpt2", {"n_layer": 4_000, "n_embd": 2, "n_head": 2}),  # under the cap: the stored tensors
        ("gpt2", {"n_positions": 1 << 30}),
        ("gpt2", {"vocab_size": 1 << 30}),
        ("gpt2", {"n_inner": 1 << 30}),
        ("gpt2", {"n_head": 1 << 20, "n_embd": 1 << 20}),
        ("llama", {"num_hidden_layers": 1_000_000}),
        ("llama", {"num_hidden_layers": 3_000, "hidden_size": 4, "num_attention_heads": 1}),
        ("llama", {"intermediate_size": 1 << 30}),
        ("llama", {"max_position_embeddings": 1 << 30}),
        ("llama", {"rope_scaling": {"rope_type": "linear", "factor": 2.0, "layers": 1 << 30}}),
    ],
    ids=lambda v: v if isinstance(v, str) else ",".join(f"{k}={v[k]}" for k in v),
)
def test_a_hugging_face_config_describing_an_impossible_model_is_refused_fast(
    pristine, tmp_path, build, changes
):
    """The PR's checkpoint is a real tiny Hugging Face model whose config.json claims sizes no
    model has (`n_layer: 1000000` hung the run): refused by the config's numbers, before
    transformers builds anything, in seconds, whatever the architecture names its sizes."""
    from helpers.lm_fixtures import hf_gpt2_dir, hf_llama_dir

    repo = tmp_path / "repo"
    shutil.copytree(pristine, repo, symlinks=True)
    path = (hf_gpt2_dir if build == "gpt2" else hf_llama_dir)(repo / "models" / "hf")
    config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    (path / "config.json").write_text(json.dumps({**config, **changes}), encoding="utf-8")
    start = time.monotonic()
    done = run_evalgate(repo, "run", "--checkpoint", "models/hf", "--baseline", "none", timeout=FAST)
    took = time.monotonic() - start
    assert done.returncode == 2, done.stderr[-3000:]
    assert "models/hf/config.json" in done.stderr and "refused before building it" in done.stderr
    assert "Traceback" not in done.stderr
    assert took < 30, took  # python and transformers' import are most of it
