"""Hostile PR: cached numbers the pull request wrote itself (issue 24, section 1).

The score cache holds numbers the gate does not compute. The attack that worked: a PR saved a cache
entry in its own `actions/cache` scope under the key the gate restored (GitHub restores a PR's own
scope first), holding the good model's numbers under the regressed checkpoint's keys; the gate
read them, and a regressed checkpoint passed while the PR's final diff showed only the checkpoint.

Here every run a PR can bring about lists such a forged artifact through the GitHub API stand-in
(a pull_request run, a push of an edited badge.yml to its own branch, another workflow named
"badge", a fork's run, a workflow_dispatch, a tag named `main` at the PR's commit), beside one
real run of badge.yml on a push to main. The gate workflow's real steps (find, then what
actions/download-artifact unpacks, then unpack) fill the cache folder, and the real CLI gates the
regressed checkpoint over it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.github_standin import ACTIONS_REPO, ActionsGitHub
from helpers.hostile_repo import make_repo
from helpers.workflow_steps import VENV, commit, git, load, outputs, run_script, step

from evalgate.edges.score_cache import ScoreCache
from evalgate.github.trusted_cache import TAR_NAME, pack
from evalgate.types import Loglik, LoglikRequest

pytestmark = pytest.mark.slow  # three runs of the demo checkpoints

GOOD = "data/checkpoints/demo"
REGRESSED = "data/checkpoints/demo-regressed"


def evalgate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VENV / "bin" / "evalgate"), *args], cwd=repo, capture_output=True, text=True, timeout=600
    )


def entries(cache: Path) -> dict[str, bytes]:
    return {f"{p.parent.name}/{p.name}": p.read_bytes() for p in sorted(cache.glob("*/*.json"))}


def forge(good: Path, regressed: Path, out: Path) -> None:
    """The good model's numbers under the regressed checkpoint's keys, written by ScoreCache
    itself: well-formed entries, each with its own key and content hash."""
    numbers = {}
    for path in good.glob("*/*.json"):
        doc = json.loads(path.read_text(encoding="utf-8"))
        numbers[json.dumps(doc["requests"])] = doc["results"]
    forged = ScoreCache(out, checkpoint="forged", tokenizer=None, scoring={})
    for path in regressed.glob("*/*.json"):
        doc = json.loads(path.read_text(encoding="utf-8"))
        requests = [LoglikRequest(context=c, continuation=k) for c, k in doc["requests"]]
        results = [
            Loglik(**{**r, "tokens": tuple(r["tokens"])}) for r in numbers[json.dumps(doc["requests"])]
        ]
        forged.store(doc["key"], requests, results)


@pytest.fixture
def api(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    server = ActionsGitHub().start()
    yield server
    server.stop()


def cache_from_steps(repo: Path, runner: Path, api: ActionsGitHub, base: str) -> tuple[str, Path]:
    """eval-gate.yml's score cache steps, as a runner runs them: (the run id found, the folder)."""
    gate = load("eval-gate.yml")
    out = runner / "github_output"
    find = run_script(
        step(gate, "Find the default branch's score cache")["run"],
        repo,
        {
            "VENV": str(VENV),
            "GITHUB_TOKEN": "ghs-readonly",  # a pull_request run's read-only token
            "GITHUB_API_URL": api.url,
            "REPO": ACTIONS_REPO,
            "BASE_SHA": base,
            "GITHUB_OUTPUT": str(out),
        },
    )
    assert find.returncode == 0, find.stderr
    run_id = outputs(out).get("run-id", "")
    # actions/download-artifact with that run-id: the run's artifact, unpacked into `path`.
    download = runner / "evalgate-scores"
    if run_id:
        download.mkdir()
        shutil.copy(api.artifact_files[int(run_id)], download / TAR_NAME)
    cache = runner / "evalgate-cache"
    unpack = run_script(
        step(gate, "Unpack the score cache")["run"],
        repo,
        {
            "VENV": str(VENV),
            "DOWNLOADED": "success" if run_id else "skipped",
            "ARTIFACT": str(download),
            "CACHE": str(cache),
        },
    )
    assert unpack.returncode == 0, unpack.stderr
    return run_id, cache


def test_a_prs_forged_score_cache_never_reaches_the_gate(tmp_path, monkeypatch, api):
    """Attack: the PR leaves a well-formed score cache holding the good model's numbers under the
    regressed checkpoint's keys where the gate looks for cached scores, so that the regressed
    checkpoint it brings passes without a line of the gate changing."""
    repo = make_repo(tmp_path, monkeypatch)
    # The base's own choice: the perplexity may rise up to x1.5 (the regressed checkpoint's rises
    # x1.19), so the probes alone decide the verdict, and the probes' numbers are what a cache holds.
    config = (repo / "evalgate.yml").read_text(encoding="utf-8")
    assert "perplexity_max_ratio: 1.10" in config
    (repo / "evalgate.yml").write_text(
        config.replace("perplexity_max_ratio: 1.10", "perplexity_max_ratio: 1.50")
    )
    main_cache, scratch, forged = tmp_path / "main-cache", tmp_path / "scratch", tmp_path / "forged"
    good = evalgate(repo, "run", "--checkpoint", GOOD, "--baseline", "none", "--out", str(tmp_path / "good"),
                    "--cache", str(main_cache))  # fmt: skip
    assert good.returncode == 0, good.stderr
    assert evalgate(repo, "baseline", "update", "--from-results", str(tmp_path / "good/results.json"),
                    "--name", "demo").returncode == 0  # fmt: skip
    git("init", "-q", "-b", "main", cwd=repo)
    main_run_sha = commit(repo, "main, as badge.yml scored it")
    # The regressed checkpoint, honestly: exit 1. Its keys are what the forger needs.
    honest = evalgate(repo, "run", "--checkpoint", REGRESSED, "--out", str(tmp_path / "honest"),
                      "--cache", str(scratch))  # fmt: skip
    assert honest.returncode == 1, honest.stdout + honest.stderr
    forge(main_cache, scratch, forged)
    main_tar, forged_tar = tmp_path / "main.tar", tmp_path / "forged.tar"
    assert pack(main_cache, main_tar) == pack(forged, forged_tar) == len(entries(main_cache))

    # The PR's commit, on its own branch: badge.yml edited to run (and upload) on its pushes.
    git("checkout", "-q", "-b", "feature", cwd=repo)
    (repo / ".github/workflows").mkdir(parents=True)
    (repo / ".github/workflows/badge.yml").write_text("on: [push, pull_request]\n", encoding="utf-8")
    pr_sha = commit(repo, "the PR's badge.yml")
    git("checkout", "-q", "main", cwd=repo)
    base = commit(repo, "the base commit")

    real = api.add_run(main_run_sha, file=main_tar)  # oldest: a naive "newest run" picks a forgery
    api.add_run(pr_sha, event="pull_request", branch="feature", file=forged_tar)
    api.add_run(pr_sha, branch="feature", file=forged_tar)  # a push of the PR's badge.yml
    api.add_run(base, path=".github/workflows/evil.yml", workflow_id=202, file=forged_tar)
    api.add_run(pr_sha, event="pull_request", head_repo=("mallory/models", 666), file=forged_tar)
    api.add_run(base, event="workflow_dispatch", file=forged_tar)
    api.add_run(pr_sha, file=forged_tar)  # a tag named `main` pushed at the PR's commit

    runner = tmp_path / "runner-temp"
    runner.mkdir()
    run_id, cache = cache_from_steps(repo, runner, api, base)
    assert run_id == str(real)
    assert entries(cache) == entries(main_cache)  # the default branch's entries, nothing else
    gated = evalgate(
        repo, "run", "--checkpoint", REGRESSED, "--out", str(tmp_path / "gated"), "--cache", str(cache)
    )
    assert gated.returncode == 1, gated.stdout + gated.stderr
    assert "0 probe(s) from the cache" in gated.stderr

    # The attack is real: had the forged artifact been unpacked, the regressed checkpoint passes.
    used = tmp_path / "if-used"
    used.mkdir()
    api.artifact_files[real] = forged_tar
    run_id, forged_cache = cache_from_steps(repo, used, api, base)
    assert entries(forged_cache) == entries(forged)
    flipped = evalgate(repo, "run", "--checkpoint", REGRESSED, "--out", str(tmp_path / "flipped"),
                       "--cache", str(forged_cache))  # fmt: skip
    assert flipped.returncode == 0, flipped.stdout + flipped.stderr
    assert f"{len(entries(forged))} probe(s) from the cache, 0 scored" in flipped.stderr
