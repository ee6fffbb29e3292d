"""A few hundred bytes of config cannot make evalgate allocate without bound: sizes described by
a checkpoint's config are checked against its weights before anything is built."""

from __future__ import annotations

import json

import pytest
from helpers.hostile_repo import make_repo, results
from helpers.lm_fixtures import hf_gpt2_dir


@pytest.fixture
def repo(tmp_path, monkeypatch):
    return make_repo(tmp_path, monkeypatch)


def test_a_native_config_with_a_huge_n_layer_is_refused_before_allocating(repo, cli):
    path = repo / "data" / "checkpoints" / "demo" / "config.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["n_layer"] = 10**9
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, _, err = cli("run", "--baseline", "none")
    assert code == 2
    assert "config.json" in err and "refused before allocating" in err
    assert results(repo)["verdict"] == "refused"


def test_an_hf_config_with_a_huge_n_layer_is_refused_before_building_the_model(repo, tmp_path, cli):
    ckpt = hf_gpt2_dir(tmp_path / "hf")
    doc = json.loads((ckpt / "config.json").read_text(encoding="utf-8"))
    doc["n_layer"] = 10**7  # the meta-device skeleton alone would build ten million blocks
    (ckpt / "config.json").write_text(json.dumps(doc), encoding="utf-8")
    code, _, err = cli("run", "--checkpoint", str(ckpt), "--baseline", "none")
    assert code == 2
    assert "config.json" in err and "refused before building it" in err
