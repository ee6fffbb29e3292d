"""Hostile PRs against the scope decision: what the gate reads is resolved through the git trees,
symbolic links and all, never compared as spelled, so a PR that changes what the gate reads is
never "not relevant" (and so never left unscored while its check turns green).

Each case builds a real git repository (a base commit and the PR on top) and runs the module entry
the eval-gate workflow runs, `python -P -m evalgate.edges.pr_scope` (helpers/pr_repo.py)."""

from __future__ import annotations

import pytest
from helpers.pr_repo import DELETE, Link, repo_with, scope

BASELINE = {"baselines/mine.json": "{}\n"}


def config(checkpoint: str, baseline: str = "baselines/mine.json", extra: str = "") -> str:
    return f"checkpoint: {checkpoint}\nbaseline: {baseline}\n{extra}"


def test_a_checkpoint_folder_that_is_a_link_is_read_through_it(tmp_path):
    """evalgate.yml names `models/current`, a link to `v3`; the PR swaps the weights inside v3."""
    base = {
        "evalgate.yml": config("models/current"),
        "models/current": Link("v3"),
        "models/v3/w.bin": "good\n",
        **BASELINE,
    }
    work, sha = repo_with(tmp_path, base, {"models/v3/w.bin": "regressed\n"})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.relevant
    assert {"models/current", "models/v3"} <= set(result.read_paths)


@pytest.mark.parametrize(
    "spelled", ["./models//mine/.", "models/./mine", "models/mine/.", "models/../models/mine"]
)
def test_a_checkpoint_path_spelled_oddly_is_the_same_folder(tmp_path, spelled):
    """The base configuration writes the checkpoint's path another way; the PR swaps its weights."""
    base = {"evalgate.yml": config(spelled), "models/mine/w.bin": "good\n", **BASELINE}
    work, sha = repo_with(tmp_path, base, {"models/mine/w.bin": "regressed\n"})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.relevant
    assert "models/mine" in result.read_paths


def test_a_link_on_the_way_swapped_to_another_folder_is_a_change(tmp_path):
    """The checkpoint `models/mine` lies under a link `models -> weights-a`; the PR points the
    link at `weights-b`, which holds a regressed `mine/` since long before."""
    base = {
        "evalgate.yml": config("models/mine"),
        "models": Link("weights-a"),
        "weights-a/mine/w.bin": "good\n",
        "weights-b/mine/w.bin": "regressed\n",
        **BASELINE,
    }
    work, sha = repo_with(tmp_path, base, {"models": Link("weights-b")})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.relevant
    assert {"models", "weights-a/mine", "weights-b/mine"} <= set(result.read_paths)


def test_a_file_of_the_checkpoint_that_links_elsewhere_is_read_through_it(tmp_path):
    """The checkpoint's weights file is a link into `blobs/`; the PR changes the blob alone."""
    base = {
        "evalgate.yml": config("models/mine"),
        "models/mine/w.bin": Link("../../blobs/w1.bin"),
        "blobs/w1.bin": "good\n",
        **BASELINE,
    }
    work, sha = repo_with(tmp_path, base, {"blobs/w1.bin": "regressed\n"})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.relevant
    assert "blobs/w1.bin" in result.read_paths


@pytest.mark.parametrize(
    "links",
    [
        {"models/current": Link("/opt/models/v3")},
        {"models/current": Link("../../outside")},
        {"models/current": Link("a"), "models/a": Link("b"), "models/b": Link("a")},
    ],
    ids=["absolute", "climbs-out", "cycle"],
)
def test_a_link_that_cannot_be_followed_makes_the_pr_relevant(tmp_path, links):
    """The checkpoint is a link out of the repository (or a cycle): what it holds cannot be seen
    from the trees, so even a PR that changes a README is scored (and the gate says why)."""
    base = {"evalgate.yml": config("models/current"), "README.md": "hi\n", **links, **BASELINE}
    work, sha = repo_with(tmp_path, base, {"README.md": "changed\n"})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.relevant
    assert "cannot be resolved" in result.err


@pytest.mark.parametrize(
    ("changed", "text"),
    [
        ("mylab/model.py", "def load(path):\n    return regressed(path)\n"),
        ("mylab/__init__.py", "import sys\n"),
        ("mylab.py", "def load(path):\n    return None\n"),
        ("__pycache__/mylab.cpython-311.pyc", "not really bytecode\n"),
    ],
)
def test_the_loader_package_changed_alone_is_a_gate_change(tmp_path, changed, text):
    """evalgate.yml loads the model with `loader: mylab.model:load`; the PR changes only the code
    Python would import for it (the package, a module file of that name, a cached .pyc)."""
    base = {
        "evalgate.yml": config("models/mine", extra="loader: mylab.model:load\n"),
        "mylab/__init__.py": "",
        "mylab/model.py": "def load(path):\n    return good(path)\n",
        "models/mine/w.bin": "w\n",
        **BASELINE,
    }
    work, sha = repo_with(tmp_path, base, {changed: text})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.relevant
    assert {"mylab", "mylab.py"} <= set(result.gate_paths)


def test_base_inputs_name_a_baseline_outside_baselines(tmp_path):
    """The base configuration keeps its baseline at `eval/baseline.json`: that file, not the PR's
    copy, is what the workflow must restore."""
    base = {
        "evalgate.yml": config("models/mine", baseline="eval/baseline.json"),
        "eval/baseline.json": "{}\n",
    }
    work, sha = repo_with(tmp_path, base, {"eval/baseline.json": '{"loosened": true}\n'})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.base_inputs == [
        "evalgate.yml",
        "eval/baseline.json",
        "eval/history/baseline.jsonl",  # its history and anchor, beside it (docs/gate.md "Drift")
        "eval/history/baseline.anchor.json",
    ]
    assert result.relevant


def test_base_inputs_name_a_linked_baseline_and_its_target(tmp_path):
    """The base's baseline is a link (`baselines/current.json -> v2.json`) and its evalgate.yml a
    link too: both links and both targets are restored, so the PR cannot swap either."""
    base = {
        "evalgate.yml": Link("ci/gate.yml"),
        "ci/gate.yml": config("models/mine", baseline="baselines/current.json"),
        "baselines/current.json": Link("v2.json"),
        "baselines/v2.json": "{}\n",
        "models/mine/w.bin": "w\n",
    }
    work, sha = repo_with(
        tmp_path, base, {"baselines/current.json": Link("v1.json"), "baselines/v1.json": "{}\n"}
    )
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.base_inputs == [
        "evalgate.yml",
        "ci/gate.yml",
        "baselines/current.json",
        "baselines/v2.json",
        "baselines/history/current.jsonl",  # named after the baseline as configured
        "baselines/history/current.anchor.json",
    ]
    assert result.relevant


def test_a_base_config_behind_a_link_is_read_through_it(tmp_path):
    """evalgate.yml on the base branch is a link to `ci/gate.yml`, which names the checkpoint at
    `models/mine`: the PR that swaps those weights is gated, not judged by the default paths."""
    base = {
        "evalgate.yml": Link("ci/gate.yml"),
        "ci/gate.yml": config("models/mine"),
        "models/mine/w.bin": "good\n",
        **BASELINE,
    }
    work, sha = repo_with(tmp_path, base, {"models/mine/w.bin": "regressed\n"})
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.relevant


def test_a_base_baseline_that_cannot_be_restored_is_refused(tmp_path):
    """The base's baseline is a link out of the repository: nothing the workflow restores from the
    base commit would hold it, so the decision is refused (exit 2), not guessed."""
    base = {
        "evalgate.yml": config("models/mine", baseline="baselines/mine.json"),
        "baselines/mine.json": Link("/tmp/b.json"),
    }
    work, sha = repo_with(tmp_path, base, {"models/mine/w.bin": DELETE, "README.md": "x\n"})
    result = scope(work, sha)
    assert result.code == 2
    assert "cannot be restored from the base commit" in result.err
    assert "relevant=" not in "\n".join(result.lines)
