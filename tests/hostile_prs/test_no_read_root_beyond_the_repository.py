"""A pull request's link cannot make the gate read a folder beyond the repository (paths.allowed_roots).

Configured inputs may resolve only into the configuration's folder and into the places the
operator named ($EVALGATE_ALLOWED_ROOTS, paths on the command line). The image's bundled demo
(`EVALGATE_HOME`, the base's good weights) and the working folder (in CI, the workspace, which
holds more than the configuration's folder) are no such place, and an operator's path counts
for where it is, never for where a link the PR placed in the repository leads
(docs/hostile-inputs.md, "Reading outside the repository").
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.hostile_repo import EVALGATE
from helpers.paths import REPO

pytestmark = pytest.mark.slow

DEMO = "data/checkpoints/demo"


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    """The image's /opt/evalgate: a copy of the base's data/, evalgate.yml and baselines/."""
    bundle = tmp_path / "opt-evalgate"
    shutil.copytree(REPO / "data", bundle / "data")
    shutil.copytree(REPO / "baselines", bundle / "baselines")
    shutil.copy(REPO / "evalgate.yml", bundle / "evalgate.yml")
    return bundle


def workspace(at: Path, config_folder: str = ".") -> Path:
    """A repository with its own evalgate.yml (in `config_folder`), as a PR's checkout."""
    cfg = at / config_folder
    cfg.mkdir(parents=True, exist_ok=True)
    for name in ("data", "baselines"):
        shutil.copytree(REPO / name, cfg / name)
    shutil.copy(REPO / "evalgate.yml", cfg / "evalgate.yml")
    return at


def gate(ws: Path, bundle: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The installed console script in `ws`, as the image runs it (EVALGATE_HOME = the bundle)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "EVALGATE_", "INPUT_"))}
    return subprocess.run(
        [str(EVALGATE), *args],
        cwd=ws,
        env={**base, "EVALGATE_HOME": str(bundle), "PYTHONSAFEPATH": "1", **env},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_a_checkpoint_linked_into_the_images_bundle_is_refused(tmp_path, monkeypatch, cli):
    """The image sets EVALGATE_HOME=/opt/evalgate, a copy of the BASE commit's data (the Dockerfile
    copies data/ from the action's own tree), and paths.allowed_roots admits it for every configured
    input. A PR replaces `data/checkpoints/demo` with the absolute link
    `/opt/evalgate/data/checkpoints/demo`: the scope decision calls it "outside the repository"
    and has it scored, and the scoring reads the base's good weights through the link: pass. What
    the PR merges is a link that no longer names the model the gate scored. docs/security.md: "never
    through a link out of the repository". Played here with the `evalgate run` the image runs, the
    bundle a folder outside the checkout."""
    bundle = tmp_path / "opt-evalgate"
    shutil.copytree(REPO / "data", bundle / "data")
    work = tmp_path / "work"
    work.mkdir()
    for name in ("data", "baselines"):
        shutil.copytree(REPO / name, work / name)
    shutil.copy(REPO / "evalgate.yml", work / "evalgate.yml")
    shutil.rmtree(work / DEMO)
    (work / DEMO).symlink_to(bundle / DEMO)
    monkeypatch.setenv("EVALGATE_HOME", str(bundle))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.chdir(work)
    result = cli("run", "--out", str(work / "evalgate-out"))
    assert result.code == 2, result.out + result.err
    assert "outside the repository" in result.err


def test_the_actions_checkpoint_input_naming_a_link_into_the_bundle_is_refused(tmp_path, bundle):
    """The Action passes its `checkpoint:` input on the command line (`--checkpoint
    data/checkpoints/demo`), and a path on the command line is the operator's choice: the PR
    makes that folder a link to the bundle's demo, and the link's target became an allowed root.
    The operator named a folder of the repository, so it counts for what the repository holds
    there, and the link out of it is refused."""
    ws = workspace(tmp_path / "ws")
    shutil.rmtree(ws / DEMO)
    (ws / DEMO).symlink_to(bundle / DEMO)
    output = tmp_path / "github-output"
    run = gate(ws, bundle, "action", INPUT_CHECKPOINT=DEMO, GITHUB_OUTPUT=str(output))
    assert run.returncode == 2, run.stdout[-3000:] + run.stderr[-3000:]
    assert "outside the repository" in run.stdout + run.stderr
    written = output.read_text(encoding="utf-8")
    assert "verdict<<" in written and "\nrefused\n" in written and "\npass\n" not in written


def test_a_link_to_the_workspace_outside_the_configurations_folder_is_refused(tmp_path, bundle):
    """With `config: gate/evalgate.yml` the configuration's folder is `gate/`, while the working
    folder is the whole workspace, where the workflow also keeps the base commit's checkout
    (`.evalgate-base`, the base's good weights). The working folder was an allowed root: a PR's
    `gate/data/checkpoints/demo -> ../../../.evalgate-base/data/checkpoints/demo` was scored as
    the PR's own checkpoint. Only the configuration's folder is the repository the gate reads."""
    ws = workspace(tmp_path / "ws", "gate")
    trusted = ws / ".evalgate-base" / DEMO
    shutil.copytree(REPO / DEMO, trusted)
    shutil.rmtree(ws / "gate" / DEMO)
    (ws / "gate" / DEMO).symlink_to(Path("../../..") / ".evalgate-base" / DEMO)
    assert (ws / "gate" / DEMO / "model.safetensors").is_file()
    run = gate(ws, bundle, "run", "--config", "gate/evalgate.yml", "--out", "evalgate-out")
    assert run.returncode == 2, run.stdout[-3000:] + run.stderr[-3000:]
    assert "outside the repository" in run.stderr


def test_an_allowed_root_named_inside_the_repository_counts_where_it_is(tmp_path, bundle):
    """`EVALGATE_ALLOWED_ROOTS=models` names a folder of the working folder: a PR that makes
    `models` a link to the bundle's checkpoints must not turn the bundle into an allowed root."""
    ws = workspace(tmp_path / "ws")
    (ws / "models").symlink_to(bundle / "data" / "checkpoints")
    shutil.rmtree(ws / DEMO)
    (ws / DEMO).symlink_to(Path("../../models/demo"))
    run = gate(ws, bundle, "run", "--out", "evalgate-out", EVALGATE_ALLOWED_ROOTS="models")
    assert run.returncode == 2, run.stdout[-3000:] + run.stderr[-3000:]
    assert "outside the repository" in run.stderr


def test_the_bundled_demo_still_gates_when_it_is_the_configuration_in_use(tmp_path, bundle):
    """`docker run --rm evalgate`: nothing mounted, no evalgate.yml and no probe set in /work. The
    configuration in use is the bundle's own, rooted in it, so its files are read and it passes;
    the outputs go to the working folder."""
    here = tmp_path / "work"
    here.mkdir()
    run = gate(here, bundle)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert (here / "evalgate-out" / "results.json").is_file()
    assert not (bundle / "evalgate-out").exists()


def test_a_checkpoint_named_where_the_operator_keeps_it_is_still_read(tmp_path, bundle):
    """What the operator names stays readable: `--checkpoint` outside the repository (reached
    through the operator's own link), and, with no configuration in the working folder, a
    checkpoint folder there scored against the bundled demo (docs/docker.md, "Your checkpoint,
    from the current folder")."""
    models = tmp_path / "mnt" / "models"
    shutil.copytree(REPO / DEMO, models / "v3")
    (models / "current").symlink_to("v3")
    ws = workspace(tmp_path / "ws")
    run = gate(ws, bundle, "run", "--checkpoint", str(models / "current"), "--out", "evalgate-out")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

    here = tmp_path / "work"
    shutil.copytree(REPO / DEMO, here / "ckpt")
    run = gate(here, bundle, "run", "--checkpoint", "ckpt", "--out", "evalgate-out")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
