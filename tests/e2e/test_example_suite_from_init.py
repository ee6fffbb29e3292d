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
import yaml
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

    # init wrote floors for the topics, too small (50 items) for the paired test to see 10 points
    # (docs/gate.md, "Floors from the first baseline"): the lost topic is below its floor as well
    floors = yaml.safe_load((tmp_path / "evalgate.yml").read_text(encoding="utf-8"))["suites"]["geo"]["gate"]
    assert floors["min_accuracy"]["topic:currency"] == 0.87
    assert any(
        r.startswith("topic:currency: accuracy 20.0% on 50 items is below the floor") for r in res["reasons"]
    )

    # the maintainer accepts it with the labels: a floor does not move with the baseline, so the
    # pull request also drops the floors the new model is below (a gate change, approved), and the
    # workflow runs this command on the PR's head
    config = yaml.safe_load((tmp_path / "evalgate.yml").read_text(encoding="utf-8"))
    del config["suites"]["geo"]["gate"]
    (tmp_path / "evalgate.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    workflow = (tmp_path / ".github" / "workflows" / "update-baseline-apply.yml").read_text(encoding="utf-8")
    assert "baseline update --name geo" in workflow
    assert cli("baseline", "update", "--name", "geo", "--pr", "7", "--commit", "0" * 40).code == 0
    assert cli("run").code == 0
    assert results(tmp_path)["verdict"] == "pass"
