"""The second shipped example (examples/geo), driven the way a team adopts evalgate (issue 13,
point 6; README "Use it with your own items"): `init` in an empty repository, a pull request
that keeps the model (pass), one that ships the model that forgot the currencies (fail, naming
the slice), then the labelled baseline update and the gate passing again. Real checkpoints,
real files, the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.paths import REPO

GEO = REPO / "examples" / "geo"


def results(root: Path) -> dict:
    return json.loads((root / "evalgate-out" / "results.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_init_then_a_pr_that_passes_one_that_fails_and_the_labelled_update(tmp_path, monkeypatch, cli):
    shutil.copytree(GEO / "checkpoints" / "good", tmp_path / "checkpoints" / "geo")
    for name in ("train.jsonl", "prompt.txt"):
        shutil.copy(GEO / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)

    got = cli(
        "init", "--suite", "geo", "--items", GEO / "items.jsonl", "--slices", "topic,difficulty",
        "--template", "prompt.txt", "--train", "train.jsonl", "--checkpoint", "checkpoints/geo",
    )  # fmt: skip
    assert got.code == 0, got.out + got.err
    written = ("evalgate.yml", "evalgate/geo/items.jsonl", "evalgate/geo/MANIFEST.json", "baselines/geo.json")
    workflows = ("eval-gate.yml", "update-baseline.yml", "update-baseline-apply.yml", "void-labels.yml")
    for rel in (*written, *(f".github/workflows/{name}" for name in workflows)):
        assert (tmp_path / rel).is_file(), rel
    assert "git add evalgate.yml" in got.out

    # the pull request run on the same model: every slice holds, far above chance
    assert cli("run").code == 0
    res = results(tmp_path)
    assert res["verdict"] == "pass" and res["slices"]["overall"]["accuracy"] > 0.9
    gated = {k for k, r in res["comparison"]["slices"].items() if r["gated"]}
    assert {"topic:currency", "difficulty:hard"} <= gated

    # a pull request that ships the degraded model in its place fails, naming the topic it lost
    shutil.rmtree(tmp_path / "checkpoints" / "geo")
    shutil.copytree(GEO / "checkpoints" / "degraded", tmp_path / "checkpoints" / "geo")
    got = cli("run")
    assert got.code == 1
    res = results(tmp_path)
    assert "topic:currency" in res["comparison"]["regressed"]
    assert "topic:capital" not in res["comparison"]["regressed"]
    assert any(r.startswith("topic:currency: accuracy 98.0% → 20.0%") for r in res["reasons"])
    report = (tmp_path / "evalgate-out" / "REPORT.md").read_text(encoding="utf-8")
    assert "topic:currency" in report.split("\n\n", 2)[0] + report.split("\n\n", 2)[1]

    # the maintainer accepts it with the label: the workflow runs this command on the PR's head
    workflow = (tmp_path / ".github" / "workflows" / "update-baseline-apply.yml").read_text(encoding="utf-8")
    assert "baseline update --name geo" in workflow
    assert cli("baseline", "update", "--name", "geo", "--pr", "7", "--commit", "0" * 40).code == 0
    assert cli("run").code == 0
    assert results(tmp_path)["verdict"] == "pass"
