"""A `loader:` plugin is code imported into the gate's own process: whatever it does decides the
verdict. Its code is part of the yardstick (docs/scoring.md, "Plugins"): a PR that changes it is
refused before the plugin is imported, unless a maintainer approved it, and the plugin can import
nothing else of the repository. Each case runs the installed `evalgate` console script on a
repository in a temporary folder whose plugin loads the demo's real checkpoints."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.hostile_repo import run_evalgate
from helpers.paths import REPO

LOADER = "tinyplug.model:load"

# Plugin A, the base commit's: the demo's native GPT through evalgate's own safe loader, with a
# tokenizer of the plugin shape (ids start with BOS, as the native model was trained).
PLUGIN_A = """
from evalgate.scorers import native_gpt


class Tok:
    def __init__(self, tok, cfg):
        self.tok, self.bos_token_id, self.eos_token_id = tok, cfg.bos_token_id, cfg.eos_token_id

    def encode(self, text):
        return [self.bos_token_id, *self.tok.encode(text, add_special_tokens=False).ids]

    def decode(self, ids):
        return self.tok.decode(list(ids), skip_special_tokens=False)


def load(checkpoint):
    model, tok, cfg = native_gpt.load_native(checkpoint)
    model.block_size = cfg.block_size
    return model, Tok(tok, cfg)
"""

# Plugin B, the PR's: the same loader, and at import it writes a marker and makes every
# comparison a pass.
PLUGIN_B = (
    PLUGIN_A
    + """
import pathlib

import evalgate.gate.compare as _compare

pathlib.Path(__file__).resolve().parents[1].joinpath("HOSTILE-PLUGIN-RAN").write_text("ran")
_compare.verdict = lambda comparison: ("pass", [])
"""
)


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base commit: evalgate.yml names plugin A, and the baseline was made with it."""
    root = tmp_path_factory.mktemp("plugin-base") / "repo"
    root.mkdir()
    shutil.copytree(REPO / "data", root / "data")
    shutil.copytree(REPO / "baselines", root / "baselines")
    config = (REPO / "evalgate.yml").read_text(encoding="utf-8")
    config = config.replace("loader: null", f"loader: {LOADER}")
    (root / "evalgate.yml").write_text(config, encoding="utf-8")
    (root / "tinyplug").mkdir()
    (root / "tinyplug" / "__init__.py").write_text("", encoding="utf-8")
    (root / "tinyplug" / "model.py").write_text(PLUGIN_A, encoding="utf-8")
    done = run_evalgate(root, "baseline", "update", "--name", "demo")
    assert done.returncode == 0, done.stderr[-3000:]
    return root


def _pr(base_repo: Path, tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(base_repo, repo, symlinks=True)
    return repo


def test_the_baseline_records_the_plugins_code(base_repo):
    """What the attacks below are measured against: the baseline's yardstick names the plugin
    and the SHA-256 of its package, and the plugin's files are inputs of the run."""
    baseline = json.loads((base_repo / "baselines" / "demo.json").read_text(encoding="utf-8"))
    record = baseline["yardstick"]["loader"]
    assert record["spec"] == LOADER and len(record["sha256"]) == 64


def test_a_pr_that_swaps_the_plugin_is_refused_before_it_is_imported(base_repo, tmp_path):
    """The PR brings the regressed checkpoint and a plugin that, once imported, makes every
    comparison a pass (before: exit 0 with the regressed slices in results.json). The plugin's
    code differs from the baseline's: a gate change, refused before anything imports it."""
    repo = _pr(base_repo, tmp_path)
    honest = run_evalgate(repo, "run", "--checkpoint", "data/checkpoints/demo-regressed", "--out", "honest")
    assert honest.returncode == 1, honest.stderr[-3000:]  # plugin A: the regression is seen

    (repo / "tinyplug" / "model.py").write_text(PLUGIN_B, encoding="utf-8")
    done = run_evalgate(repo, "run", "--checkpoint", "data/checkpoints/demo-regressed", "--out", "out")
    assert done.returncode == 2, done.stderr[-3000:]
    assert "model-loading plugin code changed" in done.stderr and LOADER in done.stderr
    assert "tinyplug/" in done.stderr
    assert not (repo / "HOSTILE-PLUGIN-RAN").exists()  # never imported
    results = json.loads((repo / "out" / "results.json").read_text(encoding="utf-8"))
    assert results["verdict"] == "refused"
    [change] = results["gate_changes_vs_baseline"]
    assert change["kind"] == "loader" and change["file"] == "tinyplug/"
    assert change["old"]["sha256"] != change["new"]["sha256"]

    # a maintainer's approval accepts the change for this run: the plugin is imported and runs
    regressed = ("--checkpoint", "data/checkpoints/demo-regressed")
    done = run_evalgate(repo, "run", *regressed, "--out", "out", "--approve-gate-changes")
    assert (repo / "HOSTILE-PLUGIN-RAN").exists()
    # scored, not refused: what an approved plugin then does is the maintainer's trust to give
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert "1 approved gate change(s)" in done.stderr


def test_a_baseline_without_the_record_is_a_gate_change_with_the_command_to_renew_it(base_repo, tmp_path):
    """A baseline written before the plugin's code was recorded (or without a plugin) cannot
    vouch for the plugin: gated with one, the run is refused and says how to renew it."""
    repo = _pr(base_repo, tmp_path)
    path = repo / "baselines" / "demo.json"
    baseline = json.loads(path.read_text(encoding="utf-8"))
    del baseline["yardstick"]["loader"]
    path.write_text(json.dumps(baseline, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    # a baseline from before histories (base_repo's update started one, which would refuse the
    # hand-written file first, docs/gate.md "Drift"): the check here is the yardstick's
    shutil.rmtree(repo / "baselines" / "history")
    done = run_evalgate(repo, "run", "--out", "out")
    assert done.returncode == 2, done.stderr[-3000:]
    assert "records no model-loading plugin code" in done.stderr
    assert "evalgate baseline update" in done.stderr


@pytest.mark.parametrize("python_path", [False, True], ids=["console script", "repository on PYTHONPATH"])
def test_a_plugin_cannot_import_repository_code_outside_its_package(base_repo, tmp_path, python_path):
    """The plugin's package stays byte for byte the baseline's; the PR changes a helper module
    beside it that the plugin imports (`import plughelp`), which its SHA-256 does not cover.
    Only the package is importable from the repository: refused, also when the repository is on
    sys.path (`python -m`, PYTHONPATH), and nothing of the helper ran."""
    repo = _pr(base_repo, tmp_path)
    (repo / "plughelp.py").write_text(
        "import pathlib\npathlib.Path(__file__).with_name('HELPER-RAN').write_text('ran')\n", encoding="utf-8"
    )
    plugin = (repo / "tinyplug" / "model.py").read_text(encoding="utf-8")
    (repo / "tinyplug" / "model.py").write_text("import plughelp  # noqa: F401\n" + plugin, encoding="utf-8")
    env = {"PYTHONPATH": str(repo)} if python_path else {}
    # approved: the package's own change is accepted, the helper's import is what is left
    done = run_evalgate(repo, "run", "--out", "out", "--approve-gate-changes", env=env)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "plughelp" in done.stderr and f"--loader {LOADER}: cannot import" in done.stderr
    if python_path:  # importable, so the guard says why it is refused
        assert "outside the plugin's package" in done.stderr, done.stderr[-3000:]
    assert not (repo / "HELPER-RAN").exists()
