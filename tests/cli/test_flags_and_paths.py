"""The command line as a script drives it: repeated flags, empty values, unwritable output folders,
folders where files belong, a configuration kept in another folder. No model is scored here:
every case stops at validation or before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.cli_output import json_stdout
from helpers.paths import GOLDEN, REPO

from evalgate.cli import main

PROBES = REPO / "data" / "eval" / "probes.jsonl"
ADVERSARIAL = REPO / "data" / "eval" / "adversarial.jsonl"


pytestmark = pytest.mark.usefixtures("in_repo")  # tests/conftest.py: run from the repository


@pytest.mark.integration
def test_probes_given_twice_means_both_files(capsys):
    code = main(["validate", "--format", "json", "--probes", str(PROBES), "--probes", str(ADVERSARIAL)])
    doc = json_stdout(capsys)
    assert doc["summary"]["files"] == ["data/eval/probes.jsonl", "data/eval/adversarial.jsonl"]
    assert doc["summary"]["core"] == 600 and doc["summary"]["adversarial"] == 25
    assert code == 0


@pytest.mark.integration
def test_train_given_twice_means_both_files(capsys):
    train, val = "data/corpus/train.jsonl", "data/corpus/val.jsonl"
    main(["validate", "--format", "json", "--train", train, "--train", val])
    assert json_stdout(capsys)["summary"]["train_files"] == [train, val]


@pytest.mark.integration
def test_unwritable_output_is_a_refusal_not_a_bug(tmp_path, monkeypatch, capsys):
    import evalgate.edges.outputs as outputs

    def denied(path, data):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(outputs, "atomic_write_bytes", denied)
    code = main(["--probes", str(tmp_path / "nosuch.jsonl"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "cannot write the outputs there: Permission denied" in err and "bug" not in err


def test_read_only_output_folder_is_refused_before_scoring(tmp_path, monkeypatch, capsys):
    import evalgate.commands._args as cli_args

    ro = tmp_path / "ro"
    ro.mkdir()
    real_access = cli_args.os.access
    monkeypatch.setattr(cli_args.os, "access", lambda p, mode: Path(p) != ro and real_access(p, mode))
    code = main(["--out", str(ro / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{ro} is not writable" in err and "validate probe set" not in err


def test_merge_into_a_file_is_a_refusal(tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("x", encoding="utf-8")
    code = main(["merge", str(tmp_path / "nosuch"), "--out", str(target)])
    assert code == 2
    assert "exists and is not a folder" in capsys.readouterr().err


def test_missing_file_of_a_config_in_another_folder_says_where_it_looked(tmp_path, capsys):
    other = tmp_path / "cfg dir"
    other.mkdir()
    shutil.copy(REPO / "evalgate.yml", other / "evalgate.yml")
    assert main(["validate", "--config", str(other / "evalgate.yml")]) == 2
    out = capsys.readouterr().out
    assert f"looked for {other / 'data' / 'grammar' / 'verbs.yaml'}" in out


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--out", ""], "--out"),
        (["run", "--checkpoint", " "], "--checkpoint"),
        (["--baseline", "", "--out", "x"], "--baseline"),
        (["validate", "--probes", "data/eval/probes.jsonl", ""], "--probes"),
        (["compare", "results.json", ""], "BASELINE"),
    ],
)
def test_an_empty_flag_value_is_refused_not_read_as_the_working_folder(
    argv, named, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)  # `--out ""` used to write REPORT.md/results.json straight into here
    assert main(argv) == 2
    assert f"{named}: empty value" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_loader_module_in_the_working_folder_is_importable(tmp_path, monkeypatch):
    """`docker run -v "$PWD:/work" -w /work evalgate --loader mylab_model:load` in a repository with no
    evalgate.yml: the configuration's root is the bundled demo, and the console script does not put
    the working folder on sys.path, so the user's module was never found."""
    import sys

    from evalgate.errors import CheckpointError
    from evalgate.scorers.plugin_loader import load_plugin

    here, bundle = tmp_path / "repo", tmp_path / "bundle"
    here.mkdir()
    bundle.mkdir()
    (here / "evalgate_review_cwd_plugin.py").write_text(
        "def load():\n    raise RuntimeError('reached the user loader')\n", encoding="utf-8"
    )
    monkeypatch.chdir(here)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(here))])
    with pytest.raises(CheckpointError, match="the loader raised RuntimeError: reached the user loader"):
        load_plugin(
            "evalgate_review_cwd_plugin:load",
            None,
            root=bundle,
            batch_size=1,
            dtype=torch_float32(),
            threads=0,
        )


def torch_float32():
    import torch

    return torch.float32


def test_a_config_that_is_a_folder_says_so(tmp_path, capsys):
    assert main(["validate", "--config", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is a folder, not a configuration file" in err and str(tmp_path / "evalgate.yml") in err


def test_the_pinned_configuration_names_the_probe_and_training_files_of_the_flags(tmp_path):
    main(["--probes", "data/eval/nosuch.jsonl", "--train", "data/corpus/val.jsonl", "--out", str(tmp_path)])
    pin = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["config"]
    assert pin["probes"] == ["data/eval/nosuch.jsonl"]
    assert pin["train"] == ["data/corpus/val.jsonl"]


def test_compare_takes_a_run_output_folder_like_merge(tmp_path, capsys):
    run_dir = tmp_path / "run out"
    run_dir.mkdir()
    (run_dir / "results.json").write_text("[]", encoding="utf-8")
    assert main(["compare", str(run_dir), "baselines/demo.json", "--out", str(tmp_path / "o")]) == 2
    assert f"{run_dir / 'results.json'}: results must be a JSON object" in capsys.readouterr().err


@pytest.mark.parametrize("key", ["out", "checkpoint", "baseline", "test", "template"])
def test_an_empty_path_in_the_config_is_refused(key, tmp_path, capsys):
    cfg = tmp_path / "evalgate.yml"
    cfg.write_text(f'{key}: ""\n', encoding="utf-8")
    assert main(["--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert f"evalgate.yml: {key}: ''" in err and ("non-empty" in err or "too short" in err)
    assert list(tmp_path.iterdir()) == [cfg]  # `out: ""` wrote the outputs beside evalgate.yml


def test_corpus_build_into_a_file_is_a_refusal(tmp_path, capsys):
    target = tmp_path / "afile"
    target.write_text("x", encoding="utf-8")
    assert main(["corpus", "build", "--out-dir", str(target)]) == 2
    assert "exists and is not a folder" in capsys.readouterr().err


def test_baseline_update_says_a_checkpoint_folder_name_cannot_name_the_baseline(
    tmp_path, capsys, monkeypatch
):
    # run outside the bundled demo, so that its configured baselines/demo.json is not where the
    # update writes (baselines/ here): the name then comes from the checkpoint folder
    monkeypatch.chdir(tmp_path)
    ckpt = tmp_path / "my ckpt"
    ckpt.mkdir()
    assert main(["baseline", "update", "--checkpoint", str(ckpt)]) == 2
    err = capsys.readouterr().err
    assert "no --name given, and the checkpoint folder name 'my ckpt'" in err
    assert "load checkpoint" not in err  # refused before any model is loaded


@pytest.mark.integration
def test_baseline_update_without_a_config_writes_where_it_runs_not_into_the_bundle(tmp_path, monkeypatch):
    """No evalgate.yml and no probe set here: the embedded default borrows the bundled demo's inputs
    (the source checkout, or the image's read-only EVALGATE_HOME); the baseline is an output."""
    results = GOLDEN / "REPORT-fail.results.json"
    bundle, here = tmp_path / "bundle", tmp_path / "here"
    (bundle / "data" / "eval").mkdir(parents=True)
    (bundle / "data" / "eval" / "probes.jsonl").write_text("", encoding="utf-8")
    here.mkdir()
    monkeypatch.setenv("EVALGATE_HOME", str(bundle))
    monkeypatch.chdir(here)
    assert main(["baseline", "update", "--from-results", str(results), "--name", "t"]) == 0
    assert (here / "baselines" / "t.json").is_file()
    assert not (bundle / "baselines").exists()
