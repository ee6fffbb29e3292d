"""A pull request's files cannot make evalgate read outside the repository, read forever, or
quote what it read: each case drives the real CLI in a copy of the repository."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers.hostile_repo import make_repo, results

SECRET = "TOP-SECRET-TOKEN-1234567890"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    return make_repo(tmp_path, monkeypatch)


def _secret(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "secret.yaml"
    path.parent.mkdir()
    path.write_text(f"en:\n  token: {SECRET}\n  - broken: [\n", encoding="utf-8")
    return path


def test_a_grammar_table_linked_outside_the_repository_is_refused_unread(repo, tmp_path, cli):
    grammar = repo / "data" / "grammar" / "verbs.yaml"
    grammar.unlink()
    grammar.symlink_to(_secret(tmp_path))
    code, out, err = cli("validate")
    assert code == 2
    assert "data/grammar/verbs.yaml" in out and "outside the repository" in out
    assert SECRET not in out + err

    code, out, err = cli("run", "--out", "evalgate-out")
    assert code == 2
    written = "".join(p.read_text(encoding="utf-8") for p in (repo / "evalgate-out").iterdir())
    assert results(repo)["verdict"] == "refused"
    assert SECRET not in out + err + written


def test_a_probe_file_that_is_a_fifo_is_refused_by_type(repo, cli):
    probes = repo / "data" / "eval" / "ordinal.jsonl"
    probes.unlink()
    os.mkfifo(probes)  # reading it would block forever
    code, out, _ = cli("validate")
    assert code == 2
    assert "not a regular file" in out


def test_a_checkpoint_file_linked_to_proc_is_refused_by_type(repo, tmp_path, cli):
    ckpt = repo / "data" / "checkpoints" / "demo"
    (ckpt / "notes.txt").symlink_to("/proc/self/pagemap")  # "regular", 0 bytes, never ends
    code, _, err = cli("run", "--baseline", "none")
    assert code == 2
    assert "notes.txt" in err and "kernel file" in err
    assert results(repo)["verdict"] == "refused"


def test_a_checkpoint_file_linked_outside_the_repository_is_refused(repo, tmp_path, cli):
    ckpt = repo / "data" / "checkpoints" / "demo"
    elsewhere = tmp_path / "outside-weights"
    elsewhere.mkdir()
    shutil.move(ckpt / "tokenizer.json", elsewhere / "tokenizer.json")
    (ckpt / "tokenizer.json").symlink_to(elsewhere / "tokenizer.json")
    code, _, err = cli("run", "--baseline", "none")
    assert code == 2
    assert "tokenizer.json" in err and "outside the repository" in err


def test_a_git_lfs_pointer_is_refused_as_one(repo, cli):
    weights = repo / "data" / "checkpoints" / "demo" / "model.safetensors"
    weights.write_text(
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "size 3734840\n",
        encoding="utf-8",
    )
    code, _, err = cli("run", "--baseline", "none")
    assert code == 2
    assert "model.safetensors: this is a Git LFS pointer, not the weights" in err
    assert "corrupt" not in err
    assert "Git LFS pointer" in results(repo)["reasons"][0]


BOMB = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
)


def test_a_yaml_alias_bomb_in_the_grammar_table_is_refused(repo, cli):
    assert len(BOMB) < 500
    (repo / "data" / "grammar" / "verbs.yaml").write_text(BOMB, encoding="utf-8")
    code, out, _ = cli("validate")
    assert code == 2
    assert "data/grammar/verbs.yaml:1" in out and "anchors and aliases are not allowed" in out


def test_a_yaml_alias_bomb_in_evalgate_yml_is_refused(repo, cli):
    with (repo / "evalgate.yml").open("a", encoding="utf-8") as fh:
        fh.write("x_bomb:\n" + "".join("  " + line + "\n" for line in BOMB.splitlines()))
    code, _, err = cli("validate")
    assert code == 2
    assert "evalgate.yml:" in err and "anchors and aliases are not allowed" in err
