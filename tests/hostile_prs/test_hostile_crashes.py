"""Files that made evalgate crash (a traceback and exit 1, the regression code, with no outputs)
are located refusals (exit 2) that write the outputs saying so; anything unforeseen is exit 3."""

from __future__ import annotations

import json
import struct
import sys

import pytest
from helpers.hostile_repo import make_repo, results
from helpers.lm_fixtures import hf_gpt2_dir


@pytest.fixture
def repo(tmp_path, monkeypatch):
    return make_repo(tmp_path, monkeypatch)


DEMO = ("data", "checkpoints", "demo")


def test_a_tokenizer_that_panics_is_a_located_refusal(repo, cli):
    path = repo.joinpath(*DEMO, "tokenizer.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    # An empty Replace pattern makes the Rust tokenizer panic (index out of bounds) on encode:
    # pyo3's PanicException derives from BaseException, past every `except Exception`.
    doc["normalizer"] = {"type": "Replace", "pattern": {"Regex": ""}, "content": "xx"}
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, _, err = cli("run", "--baseline", "none")
    assert code == 2
    assert "tokenizer.json" in err and "PanicException" in err
    assert results(repo)["verdict"] == "refused"
    assert (repo / "evalgate-out" / "REPORT.md").is_file()


def test_a_deeply_nested_config_is_a_located_refusal(repo, cli):
    repo.joinpath(*DEMO, "config.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    code, _, err = cli("run", "--baseline", "none")
    assert code == 2
    assert "config.json" in err and "nested too deeply" in err
    assert results(repo)["verdict"] == "refused"


def test_a_deeply_nested_results_file_is_a_located_refusal(repo, tmp_path, cli):
    nested = tmp_path / "results.json"
    nested.write_text('{"a":' * 50_000 + "1" + "}" * 50_000, encoding="utf-8")
    code, _, err = cli("compare", str(nested), "baselines/demo.json", "--out", "o")
    assert code == 2
    assert "results.json" in err and "nested too deeply" in err


@pytest.mark.parametrize("dim", ["1e400", "9" * 5000])
def test_huge_numbers_in_a_safetensors_header_are_a_located_refusal(repo, tmp_path, cli, dim):
    ckpt = hf_gpt2_dir(tmp_path / "hf")
    header = ('{"w": {"dtype": "F32", "shape": [' + dim + '], "data_offsets": [0, 4]}}').encode()
    (ckpt / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(4))
    code, _, err = cli("run", "--checkpoint", str(ckpt), "--baseline", "none")
    assert code == 2
    assert "model.safetensors" in err
    assert results(repo)["verdict"] == "refused"


def test_an_unforeseen_base_exception_is_exit_3_not_1(repo, cli, monkeypatch):
    (repo / "boom_loader.py").write_text(
        "class Boom(BaseException):\n    pass\n\ndef load(path):\n    raise Boom('not an Exception')\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(repo))
    code, _, err = cli("run", "--loader", "boom_loader:load", "--baseline", "none")
    assert code == 3
    assert "Boom" in err
    sys.modules.pop("boom_loader", None)
