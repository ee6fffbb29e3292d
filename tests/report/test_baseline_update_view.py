"""A labelled baseline-update PR shows the accepted change per slice (old baseline -> new), not raw
JSON: the diff comes from real git over baselines written the way `baseline update` writes them."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.paths import GOLDEN, REPO

from evalgate.edges.files import dump_json
from evalgate.gate.baseline_diff import baseline_changes
from evalgate.report.comment import render_comment
from evalgate.report.full_report import render_report

GOLDEN = GOLDEN / "REPORT-fail.results.json"


def git(*args: str, cwd: Path) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    import os

    return subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **env}, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def update_diff(tmp_path) -> tuple[str, dict, dict]:
    """(git diff of a regenerated baselines/demo.json plus an evalgate.yml edit, old doc, new doc)."""
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    old = json.loads((REPO / "baselines" / "demo.json").read_text(encoding="utf-8"))
    new = copy.deepcopy(old)
    new["slices"]["language:es"]["accuracy"] = 0.5762712
    new["slices"]["overall"]["accuracy"] = 0.681
    new["slices"]["category:core"]["accuracy"] = 0.6864407
    new["perplexity"]["value"] = 14.2
    for pid in sorted(new["outcomes"])[:300]:  # many outcome lines change too
        new["outcomes"][pid] = copy.deepcopy(new["outcomes"][pid])
        if isinstance(new["outcomes"][pid], dict):
            new["outcomes"][pid]["correct"] = not new["outcomes"][pid].get("correct", True)
    repo = tmp_path / "r"
    (repo / "baselines").mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=repo)
    (repo / "baselines" / "demo.json").write_text(dump_json(old), encoding="utf-8")
    (repo / "evalgate.yml").write_text("gate:\n  tolerance: 0.02\n", encoding="utf-8")
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "base", cwd=repo)
    (repo / "baselines" / "demo.json").write_text(dump_json(new), encoding="utf-8")
    (repo / "evalgate.yml").write_text("gate:\n  tolerance: 0.05\n", encoding="utf-8")
    diff = git("diff", "--no-color", "HEAD", "--", "evalgate.yml", "baselines/", cwd=repo)
    return diff, old, new


@pytest.mark.integration
def test_the_diff_is_read_as_old_and_new_per_slice(update_diff):
    diff, old, new = update_diff
    assert diff.count("\n") > 300  # what the report used to print
    (change,), rest = baseline_changes(diff)
    assert change.path == "baselines/demo.json"
    expected = {
        k: (old["slices"][k]["accuracy"], new["slices"][k]["accuracy"])
        for k in ("overall", "language:es", "category:core")
    }
    assert change.slices == expected
    assert "evalgate.yml" in rest and "demo.json" not in rest and "+  tolerance: 0.05" in rest


@pytest.mark.integration
def test_report_and_comment_show_the_table_not_the_json(update_diff):
    diff, old, _ = update_diff
    results = json.loads(GOLDEN.read_text(encoding="utf-8"))
    results["gate_changes"] = diff
    old_es = f"{100 * old['slices']['language:es']['accuracy']:.1f}%"
    for text in (render_report(results), render_comment(results)):
        assert "accepted change per slice (old baseline → new)" in text
        view = text.split("accepted change per slice (old baseline → new)", 1)[1]
        row = next(ln for ln in view.splitlines() if ln.startswith("| language:es"))
        assert old_es in row and "57.6%" in row
        assert '"outcomes"' not in text and '"accuracy":' not in text  # no raw baseline JSON
    assert "+  tolerance: 0.05" in render_report(results)  # other gate files keep their diff
    assert len(render_comment(results).splitlines()) < 80


def test_a_diff_it_cannot_read_gives_no_rows():
    diff = "diff --git a/baselines/x.json b/baselines/x.json\n@@ -1 +1 @@\n-garbage\n+other\n"
    (change,), rest = baseline_changes(diff)
    assert change.slices == {} and rest == ""
