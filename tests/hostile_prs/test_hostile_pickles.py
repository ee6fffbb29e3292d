"""The pickle scanner (the first lock before `torch.load(weights_only=True)`) sees every pickle
torch would read: duplicate zip entries, a protocol-0 pickle inside a legacy stream, and a
legacy stream with a zip appended are refused before anything is unpickled."""

from __future__ import annotations

import io
import os
import pickle
import zipfile

import pytest
import torch
from helpers.hostile_repo import make_repo, results
from helpers.lm_fixtures import hf_gpt2_dir
from safetensors.torch import load_file


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > /tmp/evalgate-pwned",))


@pytest.fixture
def repo(tmp_path, monkeypatch):
    return make_repo(tmp_path, monkeypatch)


@pytest.fixture
def bin_dir(tmp_path):
    """A tiny GPT-2 whose weights are a torch zip `pytorch_model.bin` (the benign original)."""
    ckpt = hf_gpt2_dir(tmp_path / "hf")
    state = load_file(ckpt / "model.safetensors")
    (ckpt / "model.safetensors").unlink()
    torch.save(state, ckpt / "pytorch_model.bin")
    return ckpt


def run_refused(repo, cli, ckpt) -> str:
    code, _, err = cli("run", "--checkpoint", str(ckpt), "--baseline", "none")
    assert code == 2, err
    assert results(repo)["verdict"] == "refused"
    return err


def test_a_zip_with_two_data_pkl_entries_is_refused(repo, cli, bin_dir):
    weights = bin_dir / "pytorch_model.bin"
    original = weights.read_bytes()
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(original)) as src, zipfile.ZipFile(buf, "w") as dst:
        pkl = next(n for n in src.namelist() if n.endswith("data.pkl"))
        dst.writestr(pkl, pickle.dumps(Evil(), protocol=2))  # first: what a by-name reader skips
        for info in src.infolist():
            dst.writestr(info, src.read(info))
    weights.write_bytes(buf.getvalue())
    err = run_refused(repo, cli, bin_dir)
    assert "data.pkl more than once" in err


def test_a_protocol_0_pickle_inside_a_legacy_stream_is_scanned(repo, cli, bin_dir):
    stream = pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + pickle.dumps(Evil(), protocol=0)
    (bin_dir / "pytorch_model.bin").write_bytes(stream + pickle.dumps({}, protocol=2) * 3)
    err = run_refused(repo, cli, bin_dir)
    assert "unsafe pickle" in err and "system" in err


def test_a_legacy_pickle_followed_by_a_zip_is_refused(repo, cli, bin_dir):
    weights = bin_dir / "pytorch_model.bin"
    weights.write_bytes(pickle.dumps(Evil(), protocol=2) + weights.read_bytes())
    assert zipfile.is_zipfile(weights)  # what the scanner used to look at
    err = run_refused(repo, cli, bin_dir)
    assert "zip archive appended" in err
