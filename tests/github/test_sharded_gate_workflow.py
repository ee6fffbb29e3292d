"""The sharded gate `init --shards N` writes (docs/github.md, "Sharded gate"), made from the
single-runner gate's template: lint-clean (actionlint, zizmor), both jobs keeping every trusted
step of the single-runner gate, the merge job named `gate` (the required check) and never skipped
when a shard fails, and init refusing a bad N before writing anything. The workflow's steps run
for real in tests/e2e/test_a_sharded_gate_init_writes_merges_to_the_single_runners_bytes.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from evalgate.github.workflows import gate_workflow, sharded_gate_workflow

PIN = "acme/evalgate@0123456789abcdef0123456789abcdef01234567"


def _tool(name: str) -> str:
    path = Path(sys.executable).with_name(name)
    if not path.exists():
        pytest.fail(f"{name} is not installed: it is part of the [test] extra")
    return str(path)


def _names(job: dict) -> list[str]:
    return [s.get("name") or s.get("uses", "").split("@")[0] for s in job["steps"]]


def test_the_sharded_gate_lints_clean(tmp_path):
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    (folder / "eval-gate.yml").write_text(sharded_gate_workflow(PIN, 3), encoding="utf-8")
    lint = subprocess.run([_tool("actionlint"), "-no-color", str(folder / "eval-gate.yml")],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert lint.returncode == 0, lint.stdout + lint.stderr
    zizmor = subprocess.run([_tool("zizmor"), "--offline", "--format", "json", str(folder)],
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    assert zizmor.returncode in (0, 10, 11, 12, 13, 14), zizmor.stderr[-2000:]
    assert json.loads(zizmor.stdout) == []


def test_both_jobs_keep_every_trusted_step_of_the_single_runner_gate():
    single = yaml.safe_load(gate_workflow(PIN))["jobs"]["gate"]
    wf = yaml.safe_load(sharded_gate_workflow(PIN, 3))
    shard, merge = wf["jobs"]["shard"], wf["jobs"]["gate"]
    trusted = _names(single)[
        : _names(single).index("Fetch a checkpoint by reference (trusted evalgate, no token)")
    ]
    assert _names(shard)[: len(trusted) + 1] == [
        *trusted,
        "Fetch a checkpoint by reference (trusted evalgate, no token)",
    ]
    assert _names(merge)[: len(trusted)] == trusted
    for job in (shard, merge):
        assert job["permissions"] == single["permissions"] and job["env"] == single["env"]
    assert shard["strategy"] == {"fail-fast": False, "matrix": {"shard": [1, 2, 3]}}
    score = next(s for s in shard["steps"] if s.get("id") == "gate")
    assert score["uses"] == PIN and score["with"]["shard"] == "${{ matrix.shard }}/3"
    upload = next(s for s in shard["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["name"] == "evalgate-shard-${{ matrix.shard }}"
    assert "!cancelled()" in upload["if"]  # a refused shard's part reaches the merge
    # The merge: after every shard, even a failed one, so the required check is never skipped.
    assert merge["needs"] == "shard" and merge["if"] == "${{ !cancelled() }}"
    gate = next(s for s in merge["steps"] if s.get("id") == "gate")
    assert (
        gate["with"]["merge"] == "${{ runner.temp }}/evalgate-parts"
        and "checkpoint-cache" not in gate["with"]
    )
    assert gate["with"]["verify-baseline"] == single_gate(single)["with"]["verify-baseline"]
    download = next(s for s in merge["steps"] if "download-artifact" in s.get("uses", ""))
    assert download["with"] == {"pattern": "evalgate-shard-*", "path": "${{ runner.temp }}/evalgate-parts"}
    report = next(s for s in merge["steps"] if s.get("name") == "Upload the report")
    assert report["with"]["name"] == "evalgate-report"  # what eval-gate-comment.yml downloads


def single_gate(job: dict) -> dict:
    return next(s for s in job["steps"] if s.get("id") == "gate")


@pytest.mark.parametrize("bad", ["0", "65", "x", "2.5", "-3"])
def test_init_refuses_a_bad_shard_count_before_writing_anything(bad, tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    done = cli(
        "init", "--suite", "quiz", "--items", "missing.jsonl", "--checkpoint", "nowhere", "--shards", bad
    )
    said = done.out + done.err
    assert done.code == 2 and "--shards" in said and "whole number of runners" in said, said
    assert list(tmp_path.iterdir()) == []


def _runs_on(text: str) -> dict[str, object]:
    return {name: job["runs-on"] for name, job in yaml.safe_load(text)["jobs"].items()}


def test_a_runner_label_moves_only_the_jobs_that_load_the_model(tmp_path):
    """`init --runner` (docs/github.md, "A GPU runner"): the gate (or its shards), the badge's
    scoring and the baseline update's scoring run on the labelled runner; every other job stays
    on the hosted one. Labels YAML would read as booleans stay strings, and all lint clean."""
    from evalgate.github.workflows import badge_workflow, update_baseline_apply_workflow

    labels = ("self-hosted", "gpu", "on")
    written = {
        "eval-gate.yml": gate_workflow(PIN, labels),
        "badge.yml": badge_workflow(PIN, labels),
        "update-baseline-apply.yml": update_baseline_apply_workflow(PIN, "quiz", labels),
    }
    assert _runs_on(written["eval-gate.yml"]) == {"gate": list(labels)}
    assert _runs_on(written["badge.yml"]) == {"gate": list(labels), "publish": "ubuntu-24.04"}
    assert _runs_on(written["update-baseline-apply.yml"]) == {
        "check": "ubuntu-24.04",
        "score": list(labels),
        "push": "ubuntu-24.04",
    }
    assert _runs_on(sharded_gate_workflow(PIN, 2, ("gpu",))) == {"shard": ["gpu"], "gate": "ubuntu-24.04"}
    assert gate_workflow(PIN, None) == gate_workflow(PIN)  # no label: the hosted runner, as before
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    for name, text in written.items():
        (folder / name).write_text(text, encoding="utf-8")
    # actionlint knows GitHub's hosted labels only: a team declares its runners' own labels.
    config = tmp_path / "actionlint.yaml"
    config.write_text('self-hosted-runner:\n  labels: ["gpu", "on"]\n', encoding="utf-8")
    lint = subprocess.run([_tool("actionlint"), "-no-color", "-config-file", str(config),
                           *sorted(map(str, folder.glob("*.yml")))],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert lint.returncode == 0, lint.stdout + lint.stderr


@pytest.mark.parametrize("bad", ["gpu/runner", "_gpu", "gpu;rm", "gpu:x", "${{ secrets.X }}"])
def test_init_refuses_a_runner_label_that_is_not_one_before_writing_anything(bad, tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    done = cli(
        "init", "--suite", "quiz", "--items", "missing.jsonl", "--checkpoint", "nowhere", "--runner", bad
    )
    said = done.out + done.err
    assert done.code == 2 and "--runner" in said and "a runner label is" in said, said
    assert list(tmp_path.iterdir()) == []
