"""Hostile pull requests that make probes unscorable instead of answering them: a special-token
id set in the checkpoint's config.json marks every candidate holding that token `model_oov`. The
ids are part of the tokenizer's identity, and a probe the baseline scored that this run cannot
score counts as wrong, for floors as for the paired comparison. Each case runs the installed
`evalgate` console script on a copy of the repository and of the demo checkpoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import tokenizers
from helpers.hostile_repo import run_evalgate
from helpers.lm_fixtures import hf_gpt2_dir
from helpers.paths import REPO

from evalgate.scorers.loaders import load_scorer

CKPT = "data/checkpoints/demo"
# The floored slice: four adversarial probes, three of which the demo answers right. The one it
# gets wrong (adv-es-comer-past-3sg-001) has the candidate " come", one token in the demo's BPE;
# calling that token "unknown" makes it, and 32 other probes, unscorable.
SLICE = "reason_code:TENSE-MARKER"
WRONG = "adv-es-comer-past-3sg-001"
TOKEN = "Ġcome"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copytree(REPO / "data", root / "data")
    shutil.copytree(REPO / "baselines", root / "baselines")
    shutil.copy(REPO / "evalgate.yml", root / "evalgate.yml")
    return root


def _set_unk(repo: Path) -> int:
    """The PR's edit: config.json names an ordinary token as the unknown token."""
    tok = tokenizers.Tokenizer.from_file(str(repo / CKPT / "tokenizer.json"))
    unk = tok.token_to_id(TOKEN)
    assert unk is not None
    config = json.loads((repo / CKPT / "config.json").read_text(encoding="utf-8"))
    config["unk_token_id"] = unk
    (repo / CKPT / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return unk


def _results(repo: Path) -> dict:
    return json.loads((repo / "evalgate-out" / "results.json").read_text(encoding="utf-8"))


def test_a_special_token_id_set_in_the_checkpoint_config_is_a_tokenizer_change(repo):
    """The PR sets `unk_token_id` in the native checkpoint's config.json: tokenizer.json is
    untouched, so the tokenizer's hash did not move and the run was compared as if measured with
    the baseline's tokenizer. Now the ids are part of the hash: a gate change, refused."""
    _set_unk(repo)
    done = run_evalgate(repo, "run", "--out", "evalgate-out")
    assert done.returncode == 2, done.stderr[-3000:]
    assert "tokenizer changed" in done.stderr
    changes = _results(repo)["gate_changes_vs_baseline"]
    assert [c["kind"] for c in changes] == ["tokenizer"]
    baseline = json.loads((repo / "baselines" / "demo.json").read_text(encoding="utf-8"))
    assert changes[0]["old"] == baseline["manifest"]["tokenizer_sha256"]

    # approved, it runs, and the probes it made unscorable count as wrong against the baseline
    done = run_evalgate(repo, "run", "--out", "evalgate-out", "--approve-gate-changes")
    assert done.returncode in (0, 1), done.stderr[-3000:]
    results = _results(repo)
    assert results["manifest"]["tokenizer_sha256"] != baseline["manifest"]["tokenizer_sha256"]
    assert WRONG in {c["id"] for c in results["comparison"]["counted_wrong"]}


def test_a_slice_made_unscorable_cannot_pass_its_floor(repo):
    """The checkpoint fails a floor (3 of 4 right, floor 80%); the PR sets `unk_token_id` to a
    token of the wrong probe's candidates, which makes it unscorable: scored on what was left
    (3 of 3) the floor passed. A probe the baseline scored counts as wrong instead."""
    config = (repo / "evalgate.yml").read_text(encoding="utf-8")
    config = config.replace("test: data/corpus/test.jsonl", "test: null")  # no perplexity measured:
    # the tokenizer change is then no gate change, and only the floor stands in the way
    config = config.replace("gate:\n", f'gate:\n  min_accuracy: {{"{SLICE}": 0.8}}\n', 1)
    config = config.replace("tolerance: 0.02", "tolerance: 0.5")  # the paired test out of the way
    (repo / "evalgate.yml").write_text(config, encoding="utf-8")
    done = run_evalgate(repo, "baseline", "update", "--name", "demo")
    assert done.returncode == 0, done.stderr[-3000:]
    baseline = json.loads((repo / "baselines" / "demo.json").read_text(encoding="utf-8"))
    assert baseline["outcomes"][WRONG]["correct"] is False

    _set_unk(repo)
    done = run_evalgate(repo, "run", "--out", "evalgate-out")
    results = _results(repo)
    assert results["slices"][SLICE]["n_model_oov"] == 1  # the attack's effect on the run itself
    assert done.returncode == 1, done.stderr[-3000:]
    floor = results["floors"][SLICE]
    assert floor["status"] == "below"
    assert (floor["n"], floor["counted_wrong"], floor["accuracy"]) == (4, 1, 0.75)
    assert any(SLICE in r and "counted wrong" in r for r in results["reasons"])


def test_hugging_face_special_ids_come_from_the_hashed_tokenizer_files(tmp_path):
    """Hugging Face: the ids the scorer uses are the tokenizer's (its hashed files); the ids in
    config.json and generation_config.json change neither them nor the tokenizer's hash. The one
    config.json key that can pick another tokenizer, `tokenizer_class` when tokenizer_config.json
    names none, is hashed in."""
    path = hf_gpt2_dir(tmp_path / "hf")

    def identity() -> tuple:
        scorer = load_scorer(path, None, root=tmp_path)
        tok = scorer.tok
        return (tok.bos_id, tok.eos_id, tok.pad_id, tok.unk_id, tok.uses_bos), scorer.info.tokenizer_sha256

    ids, digest = identity()
    config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    config.update(bos_token_id=5, eos_token_id=6, pad_token_id=7, unk_token_id=8)
    (path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (path / "generation_config.json").write_text(
        json.dumps({"bos_token_id": 5, "eos_token_id": 6, "pad_token_id": 7}), encoding="utf-8"
    )
    assert identity() == (ids, digest)

    own = json.loads((path / "tokenizer_config.json").read_text(encoding="utf-8"))
    del own["tokenizer_class"]
    (path / "tokenizer_config.json").write_text(json.dumps(own), encoding="utf-8")
    _, without_class = identity()
    config["tokenizer_class"] = "PreTrainedTokenizerFast"
    (path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert identity()[1] != without_class
