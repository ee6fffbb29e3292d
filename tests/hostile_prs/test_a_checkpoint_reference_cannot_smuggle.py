"""Hostile PRs that bring a checkpoint by reference (checkpoints/current.json: a Hub repo at a commit
or an https:// URL per file, with every file's SHA-256): the reference is the PR's data and may
name any address, so the fetch step learns nothing from where it goes and only the hashes decide
what is scored (docs/github.md, "Where the checkpoint lives").

The cases drive the real entry points: the installed `evalgate` (fetch, run) in a copy of the
repository, the eval-gate workflow's fetch step taken from the YAML and run with bash, and the scope
decision (`python -P -m evalgate.edges.pr_scope`). The address is a real HTTPS server on 127.0.0.1
(tests/helpers/file_standin.py)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from pathlib import Path

import pytest
import yaml
from helpers.file_standin import FileServer, tls_certificate
from helpers.hostile_repo import run_evalgate
from helpers.paths import REPO
from helpers.pr_repo import Link, repo_with, scope
from helpers.workflow_steps import VENV, run_script

DEMO = REPO / "data" / "checkpoints" / "demo"
# this repository's gate workflow, the one `evalgate init` writes into a team's repository, and the
# badge's scoring job (a push to main: the reference is merged data, still any address)
GATE_WORKFLOWS = ["eval-gate.yml", "init", "badge.yml"]
FETCH_STEP = "Fetch a checkpoint by reference"
FAST = 60


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed")
    return tls_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def server(tls, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(tls[0]))  # the stand-in's certificate, for the children
    s = FileServer(*tls).start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """The demo repository with its checkpoint by reference: the weights are not in the tree."""
    root = tmp_path_factory.mktemp("pristine")
    shutil.copytree(REPO / "data", root / "data", ignore=shutil.ignore_patterns("checkpoints"))
    shutil.copytree(REPO / "baselines", root / "baselines")
    text = (REPO / "evalgate.yml").read_text(encoding="utf-8")
    text = re.sub(r"(?m)^checkpoint: data/checkpoints/demo\b", "checkpoint: checkpoints/current.json", text)
    assert "checkpoint: checkpoints/current.json" in text
    (root / "evalgate.yml").write_text(text, encoding="utf-8")
    return root


def demo_files() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(DEMO.iterdir())}


def write_ref(repo: Path, files: dict) -> Path:
    doc = {"kind": "evalgate-checkpoint-reference", "schema_version": 1, "files": files}
    path = repo / "checkpoints" / "current.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


def reference(repo: Path, server: FileServer, served: dict[str, bytes] | None = None) -> Path:
    """The demo's files by hash; the server sends `served` (the demo's own by default)."""
    served = served or demo_files()
    return write_ref(
        repo,
        {
            n: {
                "sha256": hashlib.sha256(d).hexdigest(),
                "bytes": len(d),
                "url": server.serve(f"/w/{n}", served[n]),
            }
            for n, d in demo_files().items()
        },
    )


def copy(pristine: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "repo"
    shutil.copytree(pristine, repo)
    cache = tmp_path / "checkpoint-cache"
    return repo, {"EVALGATE_CHECKPOINT_CACHE": str(cache)}


def cached(env: dict[str, str]) -> list[str]:
    cache = Path(env["EVALGATE_CHECKPOINT_CACHE"])
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


def fetch_step(which: str) -> dict:
    if which == "init":
        from evalgate.github.workflows import gate_workflow

        text = gate_workflow("acme/evalgate@" + "a" * 40)
    else:
        text = (REPO / ".github" / "workflows" / which).read_text(encoding="utf-8")
    wf = yaml.safe_load(text)
    return next(s for job in wf["jobs"].values() for s in job["steps"] if FETCH_STEP in s.get("name", ""))


def test_a_pr_that_changes_only_the_reference_file_is_scored(tmp_path):
    """The PR swaps the weights by editing two hashes in checkpoints/current.json (or in the file a
    link of it leads to): no weight is in the tree, and the scope check must still run the gate."""
    ref = '{"kind": "evalgate-checkpoint-reference", "files": {"w": {"sha256": "%s"}}}\n'
    base = {
        "evalgate.yml": "checkpoint: checkpoints/current.json\nbaseline: baselines/mine.json\n",
        "checkpoints/current.json": Link("v1.json"),
        "checkpoints/v1.json": ref % ("a" * 64),
        "baselines/mine.json": "{}\n",
    }
    for change in (
        {"checkpoints/v1.json": ref % ("b" * 64)},
        {"checkpoints/current.json": Link("v2.json"), "checkpoints/v2.json": ref % ("c" * 64)},
    ):
        where = tmp_path / str(len(change))
        where.mkdir()
        work, sha = repo_with(where, base, change)
        result = scope(work, sha)
        assert result.code == 0, result.err
        assert result.relevant, result.err
        assert {"checkpoints/current.json", "checkpoints/v1.json"} <= set(result.read_paths)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/model.safetensors",
        "file:///etc/passwd",
        "ftp://127.0.0.1/model.safetensors",
        "https://user:secret@127.0.0.1:9/model.safetensors",
    ],
    ids=["http", "file", "ftp", "credentials"],
)
def test_a_reference_naming_another_scheme_fetches_nothing(pristine, tmp_path, url):
    """The PR's reference names a plain-http, file, ftp or credential-carrying URL: readable
    local files, a downgrade a network attacker could answer, or a credential of the PR's choice."""
    repo, env = copy(pristine, tmp_path)
    write_ref(repo, {"model.safetensors": {"sha256": "a" * 64, "bytes": 10, "url": url}})
    done = run_evalgate(repo, "fetch", env=env, timeout=FAST)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "checkpoints/current.json" in done.stderr and "Traceback" not in done.stderr
    assert cached(env) == []


@pytest.mark.parametrize("target", ["http://127.0.0.1:{port}/w/model.safetensors", "file:///etc/passwd"])
def test_a_redirect_to_another_scheme_is_refused(pristine, tmp_path, server, target):
    """An https URL of the PR's choosing answers 302 to plain http (its own server, in clear) or to
    a local file: urllib's default handler would follow both."""
    repo, env = copy(pristine, tmp_path)
    data = demo_files()["config.json"]
    where = target.format(port=server.httpd.server_address[1])
    url = server.redirect("/hop", where)
    write_ref(
        repo, {"config.json": {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "url": url}}
    )
    done = run_evalgate(repo, "fetch", env=env, timeout=FAST)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "redirect" in done.stderr.lower() and where in done.stderr, done.stderr[-2000:]
    assert [p for p, _ in server.requests] == ["/hop"]
    assert cached(env) == []


def test_an_endless_download_is_cut_at_the_declared_size(pristine, tmp_path, server):
    """The URL streams without end (or far past the size the reference declares) to fill the
    runner's disk or hold the job until it times out."""
    repo, env = copy(pristine, tmp_path)
    write_ref(repo, {"model.safetensors": {"sha256": "a" * 64, "bytes": 4096, "url": server.endless("/w/m")}})
    start = time.monotonic()
    done = run_evalgate(repo, "fetch", env=env, timeout=FAST)
    assert done.returncode == 2 and "more than 4,096 bytes" in done.stderr, done.stderr[-2000:]
    assert time.monotonic() - start < FAST and cached(env) == []


def test_a_reference_declaring_a_huge_checkpoint_is_refused_before_any_request(pristine, tmp_path, server):
    """The reference declares 60 GiB of files so that the fetch step fills the runner's disk."""
    repo, env = copy(pristine, tmp_path)
    url = server.serve("/w/m", b"x")
    write_ref(
        repo,
        {f"shard-{i}.safetensors": {"sha256": "a" * 64, "bytes": 30 << 30, "url": url} for i in range(2)},
    )
    done = run_evalgate(repo, "fetch", "--max-bytes", str(10 << 30), env=env, timeout=FAST)
    assert done.returncode == 2 and "over the 10,737,418,240-byte limit" in done.stderr, done.stderr[-2000:]
    assert server.requests == []


@pytest.mark.parametrize("workflow", GATE_WORKFLOWS)
def test_the_fetch_step_sends_no_token_to_the_address_a_pr_names(pristine, tmp_path, server, tls, workflow):
    """The PR's reference names its own server, hoping the fetch step sends the job's token (or
    an HF_TOKEN the runner holds) with the request. The step's environment names no secret, and
    even with tokens in the runner's environment nothing is sent."""
    step = fetch_step(workflow)
    assert not any(word in json.dumps(step) for word in ("secrets.", "github.token", "TOKEN")), step
    repo, _ = copy(pristine, tmp_path)
    reference(repo, server)
    checkpoints = tmp_path / "runner-temp" / "evalgate-checkpoints"
    env = {
        "VENV": str(VENV),
        "CHECKPOINTS": str(checkpoints),
        "SSL_CERT_FILE": str(tls[0]),
        "GITHUB_TOKEN": "ghs_job_token_SECRET",
        "GH_TOKEN": "ghs_job_token_SECRET",
        "HF_TOKEN": "hf_runner_token_SECRET",
    }
    done = run_script(step["run"], repo, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(server.requests) == len(demo_files())
    for _, headers in server.requests:
        assert "authorization" not in headers and "SECRET" not in json.dumps(headers), headers
    (folder,) = checkpoints.iterdir()
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == demo_files()


def test_other_weights_behind_the_url_are_refused_and_never_scored(pristine, tmp_path, server):
    """The reference lists the good checkpoint's hashes while its URL serves other weights (the
    fetch refuses, keeping nothing); then the PR's cache holds the other weights under the good
    hashes' folder (a poisoned cache): the gate refuses both, naming the file and both hashes."""
    repo, env = copy(pristine, tmp_path)
    other = dict(demo_files())
    weights = bytearray(other["model.safetensors"])
    weights[-8:] = b"\x00" * 8
    other["model.safetensors"] = bytes(weights)
    reference(repo, server, served=other)
    done = run_evalgate(repo, "fetch", env=env, timeout=FAST)
    assert done.returncode == 2, done.stderr[-2000:]
    good = hashlib.sha256(demo_files()["model.safetensors"]).hexdigest()
    bad = hashlib.sha256(other["model.safetensors"]).hexdigest()
    assert good in done.stderr and bad in done.stderr and "model.safetensors" in done.stderr
    assert cached(env) == []
    unfetched = run_evalgate(repo, "run", "--out", "evalgate-out", env=env, timeout=300)
    assert unfetched.returncode == 2 and "evalgate fetch" in unfetched.stderr, unfetched.stderr[-2000:]
    # the cache folder the good hashes name, filled with the other weights
    server.routes.clear()
    reference(repo, server)
    assert run_evalgate(repo, "fetch", env=env, timeout=FAST).returncode == 0
    (folder,) = Path(env["EVALGATE_CHECKPOINT_CACHE"]).iterdir()
    (folder / "model.safetensors").write_bytes(other["model.safetensors"])
    poisoned = run_evalgate(repo, "run", "--out", "evalgate-out", env=env, timeout=300)
    assert poisoned.returncode == 2, poisoned.stderr[-2000:]
    assert good in poisoned.stderr and bad in poisoned.stderr and "nothing was loaded" in poisoned.stderr
    written = json.loads((repo / "evalgate-out" / "results.json").read_text(encoding="utf-8"))
    assert written["verdict"] == "refused" and not written.get("probes"), written.get("verdict")


def test_the_checkpoint_by_reference_is_gated_against_the_local_copys_baseline(pristine, tmp_path, server):
    """The scored identity is the reference's per-file hashes, the same digest the local copy
    had: the demo's baseline (made from data/checkpoints/demo) gates the fetched checkpoint."""
    repo, env = copy(pristine, tmp_path)
    reference(repo, server)
    assert run_evalgate(repo, "fetch", env=env, timeout=FAST).returncode == 0
    done = run_evalgate(repo, "run", "--out", "evalgate-out", env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((repo / "evalgate-out" / "results.json").read_text(encoding="utf-8"))
    baseline = json.loads((repo / "baselines" / "demo.json").read_text(encoding="utf-8"))
    assert results["checkpoint"]["sha256"] == baseline["checkpoint"]["sha256"]


@pytest.mark.parametrize("which", ["update-baseline-apply.yml", "init"])
def test_the_labelled_baseline_job_fetches_without_a_token_and_scores_offline(which):
    """Under the update-baseline label, the job that scores the labelled commit fetches the PR's
    reference too: the fetch container gets no token and the labelled tree read-only; the scoring
    container keeps no network and sees the fetched files read-only, verified before loading."""
    if which == "init":
        from evalgate.github.workflows import update_baseline_apply_workflow

        text = update_baseline_apply_workflow("acme/evalgate@" + "a" * 40, "mine")
    else:
        text = (REPO / ".github" / "workflows" / which).read_text(encoding="utf-8")
    steps = [s for job in yaml.safe_load(text)["jobs"].values() for s in job["steps"]]
    names = [s.get("name", "") for s in steps]
    fetch = steps[next(i for i, n in enumerate(names) if n.startswith(FETCH_STEP))]
    score = steps[next(i for i, n in enumerate(names) if n.startswith("Regenerate the baseline"))]
    assert names.index(fetch["name"]) < names.index(score["name"])
    assert "env" not in fetch and "TOKEN" not in fetch["run"] and "secrets" not in fetch["run"]
    assert '-v "$GITHUB_WORKSPACE/pr:/work:ro"' in fetch["run"]
    assert "--network none" in score["run"]
    assert "evalgate-checkpoints:/evalgate-checkpoints:ro" in score["run"]
    assert "EVALGATE_CHECKPOINT_CACHE=/evalgate-checkpoints" in score["run"]
