"""A checkpoint by reference: `evalgate fetch` against stand-in servers on 127.0.0.1 (a plain
HTTPS file server and a Hugging Face Hub endpoint), and loading from the cache, offline, every file
verified (edges/checkpoint_ref.py, edges/checkpoint_fetch.py, docs/github.md)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from helpers.file_standin import FileServer, HubServer, tls_certificate
from helpers.paths import REPO

from evalgate.edges.checkpoint_fetch import hub_url
from evalgate.errors import CheckpointError
from evalgate.scorers.loaders import load_scorer

DEMO = REPO / "data" / "checkpoints" / "demo"
REVISION = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed")
    return tls_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def env(tls, tmp_path, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(tls[0]))
    monkeypatch.setenv("EVALGATE_CHECKPOINT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    monkeypatch.chdir(repo)
    return repo


@pytest.fixture
def files_server(tls):
    server = FileServer(*tls).start()
    yield server
    server.stop()


def demo_files() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(DEMO.iterdir())}


def record(data: bytes, **extra) -> dict:
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), **extra}


def write_ref(
    repo: Path, files: dict, hub: dict | None = None, name: str = "checkpoints/current.json"
) -> Path:
    doc = {"kind": "evalgate-checkpoint-reference", "schema_version": 1, "files": files}
    if hub:
        doc["hub"] = hub
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2))
    return path


def url_ref(repo: Path, server: FileServer, files: dict[str, bytes] | None = None) -> Path:
    files = files or demo_files()
    return write_ref(repo, {n: record(d, url=server.serve(f"/w/{n}", d)) for n, d in files.items()})


def cache_entries(repo: Path) -> list[str]:
    cache = repo.parent / "cache"
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


@pytest.mark.integration
def test_fetch_from_https_urls_verifies_and_a_warm_cache_downloads_nothing(env, files_server, cli):
    url_ref(env, files_server)
    first = cli("fetch", "--checkpoint", "checkpoints/current.json")
    assert first.code == 0, first.err
    assert f"fetched-bytes={sum(len(d) for d in demo_files().values())}" in first.out
    assert len(files_server.requests) == 3
    folder = Path(first.out.split("checkpoint-folder=")[1].split()[0])
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == demo_files()
    again = cli("fetch", "--checkpoint", "checkpoints/current.json")
    assert again.code == 0, again.err
    assert "fetched-bytes=0" in again.out and len(files_server.requests) == 3
    assert cache_entries(env) == [folder.name]  # no staging folder left behind


@pytest.mark.integration
def test_fetch_from_a_hub_endpoint_with_hf_endpoint_and_no_token(env, tls, cli, monkeypatch):
    files = demo_files()
    hub = HubServer(*tls, "team/tiny-model", REVISION, files).start()
    try:
        monkeypatch.setenv("HF_ENDPOINT", hub.base)
        monkeypatch.setenv("HF_TOKEN", "hf_secret_token")
        monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret_token")
        write_ref(
            env,
            {n: record(d) for n, d in files.items()},
            hub={"repo": "team/tiny-model", "revision": REVISION},
        )
        done = cli("fetch", "--checkpoint", "checkpoints/current.json")
        assert done.code == 0, done.err
        paths = [p for p, _ in hub.requests]
        assert sorted(p for p in paths if "/resolve/" in p) == sorted(
            f"/team/tiny-model/resolve/{REVISION}/{n}" for n in files
        )
        assert len([p for p in paths if p.startswith("/cdn/")]) == len(files)  # the redirects followed
        for _, headers in hub.requests:
            assert "authorization" not in headers and "cookie" not in headers
            assert "secret" not in json.dumps(headers)
    finally:
        hub.stop()


def test_the_resolve_url_is_the_one_huggingface_hub_builds(monkeypatch):
    from huggingface_hub import hf_hub_url

    for name in ("model.safetensors", "sub folder/tokenizer.json", "a+b#c?.json"):
        ours = hub_url("org/name", REVISION, name, endpoint="https://mirror.example:8443")
        assert ours == hf_hub_url("org/name", name, revision=REVISION, endpoint="https://mirror.example:8443")
    monkeypatch.setenv("HF_ENDPOINT", "https://hub.internal/")
    assert (
        hub_url("org/name", REVISION, "x.json") == f"https://hub.internal/org/name/resolve/{REVISION}/x.json"
    )


@pytest.mark.integration
def test_a_wrong_hash_is_refused_and_leaves_nothing_in_the_cache(env, files_server, cli):
    files = demo_files()
    refs = {n: record(d, url=files_server.serve(f"/w/{n}", d)) for n, d in files.items()}
    good = refs["model.safetensors"]["sha256"]
    refs["model.safetensors"]["sha256"] = "0" * 64
    write_ref(env, refs)
    done = cli("fetch", "--checkpoint", "checkpoints/current.json")
    assert done.code == 2, done.err
    assert "model.safetensors" in done.err and "0" * 64 in done.err and good in done.err
    assert cache_entries(env) == []


@pytest.mark.integration
def test_a_file_larger_than_declared_is_cut_and_refused(env, files_server, cli):
    url = files_server.endless("/w/model.safetensors")
    write_ref(env, {"model.safetensors": {"sha256": "1" * 64, "bytes": 1000, "url": url}})
    done = cli("fetch", "--checkpoint", "checkpoints/current.json")
    assert done.code == 2 and "more than 1,000 bytes" in done.err, done.err
    assert cache_entries(env) == []


@pytest.mark.integration
def test_a_reference_over_the_size_limit_is_refused_before_any_request(env, files_server, cli):
    url_ref(env, files_server)
    done = cli("fetch", "--checkpoint", "checkpoints/current.json", "--max-bytes", "1000")
    assert done.code == 2 and "over the 1,000-byte limit" in done.err, done.err
    assert files_server.requests == []


@pytest.mark.integration
def test_loading_by_reference_verifies_the_cache_and_has_the_local_copys_identity(env, files_server, cli):
    ref = url_ref(env, files_server)
    with pytest.raises(CheckpointError) as missing:
        load_scorer(ref, None, root=env)
    assert "evalgate fetch --checkpoint" in missing.value.hint and "not in the cache" in missing.value.message
    assert cli("fetch", "--checkpoint", str(ref)).code == 0
    by_ref = load_scorer(ref, None, root=env)
    local = env / "local-copy"
    shutil.copytree(DEMO, local)
    by_copy = load_scorer(local, None, root=env)
    assert by_ref.info.digest == by_copy.info.digest
    assert dict(by_ref.info.files) == dict(by_copy.info.files)


@pytest.mark.integration
@pytest.mark.parametrize("damage", ["changed", "missing", "extra", "link"])
def test_a_damaged_cache_is_refused_naming_the_file_and_both_hashes(env, files_server, cli, damage):
    ref = url_ref(env, files_server)
    done = cli("fetch", "--checkpoint", str(ref))
    folder = Path(done.out.split("checkpoint-folder=")[1].split()[0])
    target = folder / "model.safetensors"
    expected = hashlib.sha256(target.read_bytes()).hexdigest()
    if damage == "changed":
        data = bytearray(target.read_bytes())
        data[-1] ^= 1
        target.write_bytes(bytes(data))
        words = ["model.safetensors", expected, hashlib.sha256(bytes(data)).hexdigest()]
    elif damage == "missing":
        target.unlink()
        words = ["model.safetensors", "is missing"]
    elif damage == "extra":
        (folder / "pytorch_model.bin").write_bytes(b"not listed")
        words = ["pytorch_model.bin", "not in the reference"]
    else:
        target.unlink()
        os.symlink(DEMO / "model.safetensors", target)
        words = ["model.safetensors", "not a regular file"]
    with pytest.raises(CheckpointError) as refused:
        load_scorer(ref, None, root=env)
    for word in words:
        assert word in refused.value.message, refused.value.message
    assert "evalgate fetch" in refused.value.hint


@pytest.mark.parametrize(
    ("files", "said"),
    [
        (
            {"model.safetensors": {"sha256": "a" * 64, "bytes": 1, "url": "http://127.0.0.1/x"}},
            "does not match",
        ),
        ({"model.safetensors": {"sha256": "a" * 64, "bytes": 1}}, "no url"),
        ({"../model.safetensors": {"sha256": "a" * 64, "bytes": 1, "url": "https://h/x"}}, "does not match"),
        ({"model.safetensors": {"sha256": "A" * 64, "bytes": 1, "url": "https://h/x"}}, "does not match"),
    ],
    ids=["http", "no-source", "dotdot", "hash-spelling"],
)
@pytest.mark.integration
def test_a_malformed_reference_is_a_located_refusal(env, cli, files, said):
    write_ref(env, files)
    done = cli("fetch", "--checkpoint", "checkpoints/current.json")
    assert done.code == 2, done.err
    assert "checkpoints/current.json" in done.err and said in done.err, done.err


@pytest.mark.integration
def test_init_sets_up_a_gate_on_a_checkpoint_reference(env, files_server, cli):
    """A team whose checkpoint lives on a host commits only its reference: `init --checkpoint
    checkpoints/current.json` (once fetched) writes a gate that names the reference, and `run`
    then scores it from the verified cache against the baseline init wrote."""
    ref = url_ref(env, files_server)
    rows = [
        {"question": f"Which choice answers question {i}?", "subject": ("maths", "history")[i % 2],
         "choices": [f"first {i}", f"second {i}", f"third {i}"], "answer": i % 3}
        for i in range(24)
    ]  # fmt: skip
    (env / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert cli("fetch", "--checkpoint", str(ref)).code == 0
    pin = "acme/evalgate@" + "a" * 40
    done = cli("init", "--suite", "quiz", "--items", "items.jsonl", "--from", "mmlu",
               "--checkpoint", "checkpoints/current.json", "--action", pin)  # fmt: skip
    assert done.code == 0, done.out + done.err
    assert "checkpoint: checkpoints/current.json" in (env / "evalgate.yml").read_text(encoding="utf-8")
    run = cli("run", "--out", "out")
    assert run.code == 0, run.out + run.err
