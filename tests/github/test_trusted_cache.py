"""`python -m evalgate.github.trusted_cache`: a pull request's score cache is only ever the artifact
of a run GitHub records as a push to the default branch, of badge.yml, on the base commit's
first-parent history (docs/scoring.md, "Score cache"); and `unpack` takes regular entries only.

The runs come from a GitHub stand-in on 127.0.0.1 that answers every run whatever the query
filters (tests/helpers/github_standin.py, `ActionsGitHub`); the commits from a throwaway git
repository. The hostile-PR case with the real CLI is tests/hostile_prs/test_score_cache_from_a_pr.py.
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest
from helpers.github_standin import ACTIONS_REPO, ActionsGitHub
from helpers.workflow_steps import VENV, commit, git, load, run_script, step

from evalgate.github import trusted_cache
from evalgate.github.trusted_cache import pack, unpack

KEY = "ab" + "c" * 62
OTHER = "0f" + "1" * 62


@pytest.fixture
def api(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs-readonly")
    server = ActionsGitHub().start()
    monkeypatch.setenv("GITHUB_API_URL", server.url)
    yield server
    server.stop()


@pytest.fixture
def history(tmp_path, monkeypatch) -> dict[str, str]:
    """main: c1 (a badge.yml run), a merge of `side` (its commit off the first-parent line), base;
    feature: the PR's commit off c1."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    shas = {"c1": commit(repo, "c1")}
    git("checkout", "-q", "-b", "side", cwd=repo)
    shas["side"] = commit(repo, "side")
    git("checkout", "-q", "-b", "feature", "main", cwd=repo)
    shas["pr"] = commit(repo, "the PR's commit")
    git("checkout", "-q", "main", cwd=repo)
    git("merge", "-q", "--no-ff", "-m", "merge side", "side", cwd=repo)
    shas["base"] = commit(repo, "base")
    monkeypatch.chdir(repo)
    return shas


def find(base: str, capsys) -> tuple[str, str]:
    assert trusted_cache.main(["find", "--repo", ACTIONS_REPO, "--base", base]) == 0
    got = capsys.readouterr()
    return got.out, got.err


def test_the_default_branchs_push_run_of_badge_yml_is_found(api, history, capsys):
    real = api.add_run(history["c1"])
    out, err = find(history["base"], capsys)
    assert out == f"run-id={real}\n"
    assert f"artifact evalgate-scores of run {real}" in err


# Each a run a pull request can bring about (or one that is not the default branch's own), alone
# beside nothing else: none of them is a cache source; the reason names the check that caught it.
HOSTILE = {
    "a pull_request run": ("pr", dict(event="pull_request", branch="feature"), "not a push"),
    "a pull_request run from a branch named main": ("pr", dict(event="pull_request"), "not a push"),
    "a push of the PR's badge.yml to its branch": ("pr", dict(branch="feature"), "'feature', not to main"),
    "another workflow named badge": (
        "c1",
        dict(path=".github/workflows/evil.yml", workflow_id=202),
        "another workflow",
    ),
    "another path under badge.yml's id": ("c1", dict(path=".github/workflows/evil.yml"), "a run of"),
    "another repository's badge.yml": (
        "c1",
        dict(path="mallory/models/.github/workflows/badge.yml@refs/heads/main"),
        "a run of",
    ),
    "badge.yml of another ref": (
        "c1",
        dict(path=".github/workflows/badge.yml@refs/heads/feature"),
        "a run of",
    ),
    "a fork's run": ("c1", dict(head_repo=("mallory/models", 666)), "head repository is mallory/models"),
    "a fork with this repository's name": ("c1", dict(head_repo=(ACTIONS_REPO, 667)), "head repository"),
    "a workflow_dispatch on main": ("c1", dict(event="workflow_dispatch"), "not a push"),
    "a schedule on main": ("c1", dict(event="schedule"), "not a push"),
    "a tag named main at the PR's commit": ("pr", {}, "first-parent history"),
    "a tag named main at a merged side commit": ("side", {}, "first-parent history"),
    "a commit the base does not know": ("0" * 40, {}, "first-parent history"),
    "a failed run": ("c1", dict(conclusion="failure"), "completed/failure"),
    "a run still in progress": ("c1", dict(status="in_progress", conclusion=None), "in_progress/None"),
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_no_other_run_is_a_cache_source(api, history, capsys, kind):
    sha, kwargs, why = HOSTILE[kind]
    api.add_run(history.get(sha, sha), **kwargs)
    out, err = find(history["base"], capsys)
    assert out == "", kind
    assert why in err and "every probe is scored" in err, err


def test_the_newest_qualifying_run_with_an_unexpired_artifact_wins(api, history, capsys):
    older = api.add_run(history["c1"])
    api.add_run(history["base"], expired=True)
    api.add_run(history["base"], artifact=None)
    api.add_run(history["base"], artifact="something-else")
    for kind in HOSTILE.values():  # newer than the real one: a naive "latest" would pick these
        api.add_run(history.get(kind[0], kind[0]), **kind[1])
    out, err = find(history["base"], capsys)
    assert out == f"run-id={older}\n", err
    newest = api.add_run(history["base"], path=f"{ACTIONS_REPO}/.github/workflows/badge.yml@refs/heads/main")
    assert find(history["base"], capsys)[0] == f"run-id={newest}\n"


def test_another_default_branch_and_an_api_that_refuses_give_no_cache(api, history, capsys):
    api.add_run(history["c1"])
    api.default_branch = "trunk"
    out, err = find(history["base"], capsys)
    assert out == "" and "not to trunk" in err
    api.default_branch = "main"
    api.fail("GET", r"/actions/workflows/badge\.yml/runs", 403, body={"message": "Resource not accessible"})
    out, err = find(history["base"], capsys)
    assert out == "" and "actions: read" in err


def test_the_gate_workflows_step_writes_only_a_run_id_line(api, history, tmp_path):
    real = api.add_run(history["c1"])
    script = step(load("eval-gate.yml"), "Find the default branch's score cache")["run"]
    out = tmp_path / "output"
    env = {"VENV": str(VENV), "REPO": ACTIONS_REPO, "BASE_SHA": history["base"], "GITHUB_OUTPUT": str(out)}
    done = run_script(script, Path.cwd(), env)
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8") == f"run-id={real}\n"
    # A token the API does not take: no cache, and the job goes on (every probe is scored).
    out.unlink()
    done = run_script(script, Path.cwd(), {**env, "GITHUB_TOKEN": "not-a-token"})
    assert done.returncode == 0 and out.read_text(encoding="utf-8") == ""
    assert "no score cache" in done.stderr


# -- pack and unpack ---------------------------------------------------------------------------------


def entry_bytes(key: str) -> bytes:
    return f'{{"key": "{key}"}}'.encode()


def add(tar: tarfile.TarFile, name: str, data: bytes = b"{}", **fields) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for field, value in fields.items():
        setattr(info, field, value)
    tar.addfile(info, io.BytesIO(data) if info.isreg() else None)


def test_unpack_takes_regular_entries_and_nothing_else(tmp_path):
    victim = tmp_path / "outside.json"
    victim.write_text("untouched", encoding="utf-8")
    source = tmp_path / "artifact.tar"
    with tarfile.open(source, "w") as tar:
        add(tar, f"ab/{KEY}.json", entry_bytes(KEY))
        add(tar, f"./0f/{OTHER}.json", entry_bytes(OTHER))
        add(tar, f"ab/{KEY}.json", b"a second copy")  # the first one stays
        add(tar, f"cd/{KEY}.json")  # the folder is not the key's first two digits
        add(tar, f"ab/{KEY}.json.extra")
        add(tar, "../outside.json")
        add(tar, str(victim))
        add(tar, f"ab/{'a' * 64}.json", type=tarfile.SYMTYPE, linkname=str(victim))
        add(tar, f"ab/{'b' * 64}.json", type=tarfile.LNKTYPE, linkname=f"ab/{KEY}.json")
        add(tar, f"ab/{'d' * 64}.json", type=tarfile.FIFOTYPE)
        add(tar, f"ab/{'e' * 64}.json", type=tarfile.DIRTYPE)
        add(tar, f"ab/{'f' * 64}.json", b" " * (1024 * 1024 + 1))  # larger than any entry
    into = tmp_path / "runner" / "evalgate-cache"
    assert unpack(source, into) == (2, 10)
    written = sorted(str(p.relative_to(into)) for p in into.rglob("*"))
    assert written == ["0f", f"0f/{OTHER}.json", "ab", f"ab/{KEY}.json"]
    assert (into / "ab" / f"{KEY}.json").read_bytes() == entry_bytes(KEY)
    assert not any(p.is_symlink() for p in into.rglob("*"))
    assert victim.read_text(encoding="utf-8") == "untouched"
    assert not (tmp_path / "runner" / "outside.json").exists()


def test_unpack_never_writes_into_an_existing_folder_or_reads_through_a_link(tmp_path):
    source = tmp_path / "artifact.tar"
    with tarfile.open(source, "w") as tar:
        add(tar, f"ab/{KEY}.json", entry_bytes(KEY))
    planted = tmp_path / "planted"
    planted.mkdir()
    with pytest.raises(ValueError, match="exists already"):
        unpack(source, planted)
    link = tmp_path / "link.tar"
    link.symlink_to(source)
    with pytest.raises(ValueError, match="not a regular file"):
        unpack(link, tmp_path / "cache")
    assert not (tmp_path / "cache").exists()
    broken = tmp_path / "broken.tar"
    broken.write_bytes(source.read_bytes()[:700])
    with pytest.raises(tarfile.TarError):
        unpack(broken, tmp_path / "cache")
    assert not (tmp_path / "cache").exists() and list(tmp_path.glob(".cache.*")) == []


def test_pack_takes_regular_entries_and_is_byte_identical(tmp_path):
    cache = tmp_path / "cache"
    (cache / "ab").mkdir(parents=True)
    (cache / "ab" / f"{KEY}.json").write_bytes(entry_bytes(KEY))
    (cache / "ab" / f"{'a' * 64}.json").symlink_to(tmp_path / "elsewhere.json")
    (cache / "ab" / "notes.txt").write_text("x", encoding="utf-8")
    (cache / "ab" / f"{'f' * 64}.json").write_bytes(b" " * (1024 * 1024 + 1))
    (tmp_path / "real-0f").mkdir()
    (tmp_path / "real-0f" / f"{OTHER}.json").write_bytes(entry_bytes(OTHER))
    (cache / "0f").symlink_to(tmp_path / "real-0f")
    assert pack(cache, tmp_path / "one.tar") == 1
    os.utime(cache / "ab" / f"{KEY}.json", (1, 1))
    assert pack(cache, tmp_path / "two.tar") == 1
    assert (tmp_path / "one.tar").read_bytes() == (tmp_path / "two.tar").read_bytes()
    with tarfile.open(tmp_path / "one.tar") as tar:
        assert tar.getnames() == [f"ab/{KEY}.json"]


def test_the_unpack_step_starts_an_empty_folder_whatever_was_there(tmp_path):
    script = step(load("eval-gate.yml"), "Unpack the score cache")["run"]
    cache = tmp_path / "evalgate-cache"
    (cache / "ab").mkdir(parents=True)
    (cache / "ab" / f"{KEY}.json").write_bytes(b"left by someone")
    env = {
        "VENV": str(VENV),
        "DOWNLOADED": "skipped",
        "ARTIFACT": str(tmp_path / "none"),
        "CACHE": str(cache),
    }
    done = run_script(script, tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert cache.is_dir() and list(cache.iterdir()) == []
