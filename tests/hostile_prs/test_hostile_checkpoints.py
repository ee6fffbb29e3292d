"""Checkpoint folders with odd files are refused naming the file: malformed safetensors headers,
folders, dangling links, FIFOs and devices; links to regular files elsewhere still load."""

from __future__ import annotations

import json
import os
import shutil
import struct
import threading
import time
from pathlib import Path

import pytest
from helpers.checkpoints import refused

from evalgate.scorers.loaders import load_scorer


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory) -> Path:
    from helpers.lm_fixtures import hf_gpt2_dir

    return hf_gpt2_dir(tmp_path_factory.mktemp("review") / "gpt2")


def copy_of(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


# --- safetensors headers and odd files ------------------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        {"dtype": "F32", "shape": [2], "data_offsets": ["0", "8"]},  # strings: was a TypeError
        {"dtype": "F32", "shape": [2.0], "data_offsets": [0, 8]},
        {"dtype": "F32", "shape": [2], "data_offsets": [8, 16, 24]},
    ],
)
def test_a_safetensors_header_with_malformed_offsets_is_refused(gpt2_dir, tmp_path, entry):
    path = copy_of(gpt2_dir, tmp_path / "ckpt")
    header = json.dumps({"a": entry}).encode()
    (path / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(8))
    err = refused(path, "truncated or corrupt")
    assert "model.safetensors" in err.message and "'a'" in err.message


def test_a_weights_path_that_is_a_directory_is_refused(gpt2_dir, tmp_path):
    path = copy_of(gpt2_dir, tmp_path / "ckpt")
    (path / "model.safetensors").unlink()
    (path / "model.safetensors").mkdir()
    refused(path, "model.safetensors (not a regular file)")


def test_a_dangling_symlink_is_refused_naming_it(gpt2_dir, tmp_path):
    path = copy_of(gpt2_dir, tmp_path / "ckpt")
    os.symlink(tmp_path / "gone.txt", path / "README.txt")
    err = refused(path, "README.txt: a symbolic link to")
    assert "gone.txt" in err.message


def release_readers(fifo: Path) -> None:
    """Should anything open `fifo` for reading, give it end-of-file, so a regression fails
    instead of hanging the suite (a daemon thread: it never delays the exit)."""

    def run() -> None:
        for _ in range(600):
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # no reader yet (ENXIO), or the test is over
                time.sleep(0.05)

    threading.Thread(target=run, daemon=True).start()


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_a_link_to_a_device_is_refused(gpt2_dir, tmp_path, kind):
    """Hashing a FIFO (or a link to /dev/zero) never ends: such a file is refused before
    anything reads it. /dev/null stands in for the device, as reading it ends at once."""
    path = copy_of(gpt2_dir, tmp_path / "ckpt")
    if kind == "fifo":
        os.mkfifo(path / "notes.txt")
        release_readers(path / "notes.txt")
    else:
        os.symlink("/dev/null", path / "notes.txt")
    refused(path, "notes.txt: not a regular file")


def test_a_checkpoint_path_that_is_a_fifo_is_not_a_directory(tmp_path):
    os.mkfifo(tmp_path / "ckpt")
    refused(tmp_path / "ckpt", "not a checkpoint directory")


def test_symlinks_to_regular_files_elsewhere_still_load(gpt2_dir, tmp_path):
    """The Hugging Face cache links snapshot files into its blob store, outside the folder."""
    blobs = copy_of(gpt2_dir, tmp_path / "blobs")
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    for f in blobs.iterdir():
        os.symlink(f, snapshot / f.name)
    scorer = load_scorer(snapshot, None, root=tmp_path)
    assert set(scorer.info.files) == {f.name for f in blobs.iterdir()}


@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="no writable /dev/shm here")
def test_a_checkpoint_staged_in_dev_shm_loads(gpt2_dir, tmp_path):
    """/dev/shm is tmpfs: its files are ordinary ones, not kernel files (devices under /dev
    are still refused by type, above)."""
    staged = Path(shutil.copytree(gpt2_dir, Path("/dev/shm") / f"evalgate-test-{os.getpid()}"))
    try:
        scorer = load_scorer(staged, None, root=tmp_path)  # a path named on the command line
        assert set(scorer.info.files) == {f.name for f in gpt2_dir.iterdir()}
    finally:
        shutil.rmtree(staged)


def test_a_plugin_checkpoint_directory_with_a_fifo_is_refused(tmp_path):
    (tmp_path / "review_plugin_fifo.py").write_text(
        "import torch\n"
        "class Tok:\n"
        "    def encode(self, text):\n"
        "        return [ord(c) % 7 for c in text]\n"
        "    def decode(self, ids):\n"
        "        return ''.join('abcdefg'[i] for i in ids)\n"
        "def load(path):\n"
        "    return (lambda ids: torch.zeros(*ids.shape, 7)), Tok()\n"
    )
    ckpt = tmp_path / "weights"
    ckpt.mkdir()
    os.mkfifo(ckpt / "pipe")
    release_readers(ckpt / "pipe")
    refused(ckpt, "pipe: not a regular file", loader="review_plugin_fifo:load", root=tmp_path)
