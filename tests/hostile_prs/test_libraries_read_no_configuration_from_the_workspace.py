"""No library the gate imports reads configuration from the working folder, the pull request's tree.

matplotlib reads `./matplotlibrc` at import; the gate imports it in a private folder, with a
private config folder (edges/plot.import_matplotlib). The other libraries (torch, transformers,
tokenizers, huggingface_hub, safetensors, numpy, jsonschema, PyYAML) read no file of the working
folder (docs/hostile-inputs.md, "Libraries that read files on their own"). And a library that
fails while the outputs are drawn is not blamed on the output folder.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers.hostile_pr import GitHubRepo, git
from helpers.hostile_repo import EVALGATE
from helpers.paths import GOLDEN

pytestmark = pytest.mark.slow

DEMO = "data/checkpoints/demo"


def test_a_matplotlibrc_in_the_workspace_never_breaks_a_later_gate_run(github_repo: GitHubRepo):
    """matplotlib reads `./matplotlibrc` from the working folder at import, before any style or
    rc_context applies, and the scoring container's working folder is the PR's workspace. A PR
    that adds only `matplotlibrc -> /proc/self/mem` changes nothing the scope decision counts:
    relevant=false, green without scoring. Once merged, every later gate run on the default branch
    scores the checkpoint, then fails to import matplotlib for per_slice.png (EIO) and ends
    "refused" (exit 2), blaming the output folder; `-> /dev/zero` instead reads an endless line
    until the runner runs out of memory. An honest PR after it can no longer pass."""

    def plant(tree: Path) -> None:
        (tree / "matplotlibrc").symlink_to("/proc/self/mem")

    first = github_repo.pull_request(plant, branch="rc")
    job = github_repo.run_gate(first)
    assert job.conclusion == "success", job.explain()
    # merged
    merger = github_repo.clone("maria-merge")
    git("fetch", "-q", "origin", cwd=merger)
    git("push", "-q", "origin", f"{first.merge_sha}:refs/heads/main", cwd=merger)
    github_repo.base_sha = first.merge_sha

    def honest(tree: Path) -> None:  # the same model, its config.json re-indented
        cfg = tree / DEMO / "config.json"
        cfg.write_text(json.dumps(json.loads(cfg.read_text()), indent=4) + "\n")

    second = github_repo.pull_request(honest, author="alice", branch="reformat")
    job = github_repo.run_gate(second)
    assert job.step("scope").outputs.get("relevant") == "true", job.explain()
    assert job.step("Gate").outputs.get("verdict") == "pass", job.explain()


def plant_rc(folder: Path, kind: str) -> None:
    rc = folder / "matplotlibrc"
    if kind == "fifo":
        os.mkfifo(rc)  # nobody ever writes: reading it waits forever
    else:
        rc.symlink_to("/proc/self/mem")  # reading it fails (EIO)


def draw(folder: Path) -> subprocess.CompletedProcess[str]:
    """`evalgate compare` of a failing run with itself as the baseline, in `folder`: it draws
    per_slice.png and writes every output, no model involved."""
    drop = ("GITHUB_", "EVALGATE_", "MPL", "MATPLOTLIB")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    results = str(GOLDEN / "REPORT-fail.results.json")
    return subprocess.run(
        [str(EVALGATE), "compare", results, results, "--out", "evalgate-out"],
        cwd=folder,
        env={**env, "PYTHONSAFEPATH": "1"},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


@pytest.mark.parametrize("kind", ["fifo", "proc-mem"])
def test_a_matplotlibrc_in_the_working_folder_changes_no_byte_of_the_outputs(tmp_path, kind):
    """The same comparison drawn in a clean folder and in one whose `matplotlibrc` is a FIFO (the
    import waited forever) or a link to /proc/self/mem (EIO: exit 2 blaming the output folder):
    the same exit code and the same bytes in every output. (A plain file cannot change them: the
    plots are drawn under matplotlib's default style, tests/edges/test_plot.py.)"""
    clean, hostile = tmp_path / "clean", tmp_path / "hostile"
    clean.mkdir()
    hostile.mkdir()
    plant_rc(hostile, kind)
    expected = draw(clean)
    assert expected.returncode == 0, expected.stderr
    got = draw(hostile)
    assert got.returncode == expected.returncode, got.stderr
    names = sorted(p.name for p in (clean / "evalgate-out").iterdir())
    assert "per_slice.png" in names
    assert sorted(p.name for p in (hostile / "evalgate-out").iterdir()) == names
    for name in names:
        assert (hostile / "evalgate-out" / name).read_bytes() == (
            clean / "evalgate-out" / name
        ).read_bytes(), name


def test_a_library_failing_while_the_outputs_are_drawn_is_not_blamed_on_the_output_folder(
    tmp_path, monkeypatch, cli
):
    """A library that fails with an OSError while drawing (what the merged matplotlibrc did) is
    not "output folder ...: cannot write the outputs there": the folder is fine and the user
    cannot fix it there. It is exit 3, naming the error, and the folder receives nothing."""
    import evalgate.edges.plot as plot

    def unreadable(results):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(plot, "render_png", unreadable)
    monkeypatch.chdir(tmp_path)
    result = cli(
        "compare", GOLDEN / "REPORT-fail.results.json", GOLDEN / "REPORT-fail.results.json", "--out", "out"
    )
    assert result.code == 3, result.err
    assert "output folder" not in result.err and "Input/output error" in result.err
    assert not (tmp_path / "out" / "results.json").exists()
