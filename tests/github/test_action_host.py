"""action.yml's host steps, run for real with bash: the scoring container never sees a runner
file-command path, only a whitelist of its outputs reaches GITHUB_OUTPUT and the step summary, and
exit codes outside 0-3 (docker's 125, an OOM kill's 137) read as verdict=error.

The scripts are taken from action.yml itself; `docker` is a fake on PATH that records its arguments
and plays the container (well-behaved, hostile, killed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.paths import REPO

FAKE_DOCKER = r'''#!PYTHON
"""A stand-in for docker: records argv, then does what FAKE_MODE says."""
import json, os, sys
from pathlib import Path
argv = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(argv) + "\n")
if argv[:1] == ["build"]:
    iid = argv[argv.index("--iidfile") + 1]
    Path(iid).write_text("sha256:" + "ab" * 32)
    sys.exit(0)
if argv[:1] in (["pull"], ["image"]):
    sys.exit(0)
result = workspace = None
for i, arg in enumerate(argv):
    if arg == "-v" and argv[i + 1].endswith(":/github/result"):
        result = Path(argv[i + 1].rsplit(":", 1)[0])
    if arg == "-v" and argv[i + 1].endswith(":/work"):
        workspace = Path(argv[i + 1].rsplit(":", 1)[0])
mode = os.environ.get("FAKE_MODE", "good")
if workspace is not None and mode == "good":  # the gate writes its report, as the real one does
    (workspace / "evalgate-out").mkdir(exist_ok=True)
    (workspace / "evalgate-out" / "REPORT.md").write_text("# report\n")
if result is not None and mode == "good":
    word = os.environ.get("FAKE_VERDICT", "fail")
    (result / "output").write_text(
        f"verdict<<EVALGATE_EOF_1\n{word}\nEVALGATE_EOF_1\naccuracy<<EVALGATE_EOF_2\n0.875\nEVALGATE_EOF_2\n"
        "report-path<<EVALGATE_EOF_3\nevalgate-out/REPORT.md\nEVALGATE_EOF_3\n"
    )
    (result / "summary.md").write_text("## evalgate: the report\n")
if result is not None and mode == "hostile":
    (result / "output").write_text(
        "verdict<<D\npass\nD\nBASH_ENV=/tmp/pwn.sh\nverdict=pass\n"
        "accuracy<<D\n1\nPATH=/tmp/evil\nD\n"
        "report-path<<D\n/etc/passwd\nD\n"
        "accuracy=0.99\n"
    )
    os.symlink(os.environ["SECRET_FILE"], result / "summary.md")
sys.exit(int(os.environ.get("FAKE_RC", "0")))
'''


def action_step(step_id: str) -> dict:
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    return next(s for s in action["runs"]["steps"] if s.get("id") == step_id)


@pytest.fixture
def runner(tmp_path):
    """A fake runner: workspace, file-command folder, temp folder, and `docker` on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    docker = bin_dir / "docker"
    docker.write_text(FAKE_DOCKER.replace("PYTHON", sys.executable, 1), encoding="utf-8")
    docker.chmod(0o755)
    commands = tmp_path / "_runner_file_commands"
    commands.mkdir()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("RUNNER SECRET\n", encoding="utf-8")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(commands / "set_output_1"),
        "GITHUB_STEP_SUMMARY": str(commands / "step_summary_1"),
        "GITHUB_ENV": str(commands / "set_env_1"),
        "GITHUB_PATH": str(commands / "add_path_1"),
        "RUNNER_TEMP": str(temp),
        "FAKE_LOG": str(tmp_path / "docker.log"),
        "SECRET_FILE": str(secret),
        "IMAGE": "sha256:" + "cd" * 32,
        "INPUT_OUT": "evalgate-out",
    }
    for name in ("set_output_1", "step_summary_1", "set_env_1", "add_path_1"):
        (commands / name).write_text("", encoding="utf-8")
    return env, tmp_path


def run_step(step_id: str, env: dict[str, str], **extra: str) -> subprocess.CompletedProcess[str]:
    # How a composite action's `shell: bash` step runs.
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", action_step(step_id)["run"]],
        cwd=env["GITHUB_WORKSPACE"],
        env={**env, **extra},
        capture_output=True,
        text=True,
        timeout=60,
    )


def outputs(env: dict[str, str]) -> list[str]:
    return Path(env["GITHUB_OUTPUT"]).read_text(encoding="utf-8").splitlines()


def docker_calls(tmp_path: Path) -> list[list[str]]:
    return [json.loads(line) for line in (tmp_path / "docker.log").read_text(encoding="utf-8").splitlines()]


def test_the_container_gets_no_runner_file_command_path(runner):
    env, tmp_path = runner
    result = run_step("gate", env, FAKE_MODE="good", FAKE_RC="1")
    assert result.returncode == 1, result.stderr
    (call,) = docker_calls(tmp_path)
    commands = str(tmp_path / "_runner_file_commands")
    assert not any(commands in arg for arg in call), call
    assert call[-1] == "action" and "--network" in call
    assert outputs(env) == ["verdict=fail", "accuracy=0.875", "report-path=evalgate-out/REPORT.md"]
    assert "the report" in Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")


def test_fail_on_regression_false_keeps_the_containers_fail(runner):
    env, _ = runner
    result = run_step("gate", env, FAKE_MODE="good", FAKE_RC="0")
    assert result.returncode == 0, result.stderr
    assert outputs(env)[0] == "verdict=fail"


def test_an_inconclusive_container_on_exit_0_gives_verdict_inconclusive(runner):
    env, _ = runner
    result = run_step("gate", env, FAKE_MODE="good", FAKE_RC="0", FAKE_VERDICT="inconclusive")
    assert result.returncode == 0, result.stderr
    assert outputs(env)[0] == "verdict=inconclusive"


@pytest.mark.parametrize("word", ["inconclusive", "pass", "refused", "error"])
def test_no_word_of_the_container_turns_an_exit_1_into_anything_but_fail(runner, word):
    # exit 1 is a regression, or an inconclusive run under fail-on-inconclusive: the host cannot
    # tell them apart, so the container's word never makes it read better than `fail`
    env, _ = runner
    result = run_step("gate", env, FAKE_MODE="good", FAKE_RC="1", FAKE_VERDICT=word)
    assert result.returncode == 1
    assert outputs(env)[0] == "verdict=fail"


def test_a_container_word_cannot_make_an_exit_0_pass_read_as_anything_but_worse(runner):
    env, _ = runner
    for word, shown in (("pass", "pass"), ("refused", "pass"), ("error", "pass"), ("bogus", "pass")):
        Path(env["GITHUB_OUTPUT"]).write_text("", encoding="utf-8")
        result = run_step("gate", env, FAKE_MODE="good", FAKE_RC="0", FAKE_VERDICT=word)
        assert result.returncode == 0
        assert outputs(env)[0] == f"verdict={shown}", word


def test_fail_on_inconclusive_reaches_the_container(runner):
    env, tmp_path = runner
    result = run_step("gate", env, FAKE_MODE="good", FAKE_RC="0", INPUT_FAIL_ON_INCONCLUSIVE="true")
    assert result.returncode == 0, result.stderr
    (call,) = docker_calls(tmp_path)
    assert "INPUT_FAIL_ON_INCONCLUSIVE" in call
    assert action_step("gate")["env"]["INPUT_FAIL_ON_INCONCLUSIVE"] == "${{ inputs.fail-on-inconclusive }}"


def test_hostile_container_output_reaches_no_file_command(runner):
    env, _ = runner
    result = run_step("gate", env, FAKE_MODE="hostile", FAKE_RC="1")
    assert result.returncode == 1
    # The exit code decides the verdict; nothing but the three whitelisted lines is written.
    assert outputs(env) == ["verdict=fail", "accuracy=", "report-path="]
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert "RUNNER SECRET" not in summary  # the symlinked summary.md was not followed
    assert Path(env["GITHUB_ENV"]).read_text(encoding="utf-8") == ""
    assert Path(env["GITHUB_PATH"]).read_text(encoding="utf-8") == ""


@pytest.mark.parametrize(
    ("rc", "said"),
    [(125, "docker could not start the container"), (137, "killed (exit 137"), (139, "exit code 139")],
)
def test_exit_codes_outside_the_gates_give_verdict_error(runner, rc, said):
    env, _ = runner
    result = run_step("gate", env, FAKE_MODE="good", FAKE_RC=str(rc))
    assert result.returncode == 3
    assert outputs(env) == ["verdict=error", "accuracy=", "report-path="]
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert said in summary and "the report" not in summary
    assert "::error title=evalgate::" in result.stdout and said in result.stdout


def test_the_image_is_named_by_content_never_by_a_tag(runner):
    env, tmp_path = runner
    env = {**env, "ACTION_PATH": str(REPO)}
    refused = run_step("image", env, IMAGE="evalgate:action")
    assert refused.returncode == 2 and "not a tag" in refused.stdout
    built = run_step("image", env, IMAGE="")
    assert built.returncode == 0, built.stderr
    assert outputs(env)[-1] == "image=sha256:" + "ab" * 32  # the id docker build wrote, not a tag
    digest = "ghcr.io/owner/evalgate@sha256:" + "ef" * 32
    pulled = run_step("image", env, IMAGE=digest)
    assert pulled.returncode == 0, pulled.stderr
    assert outputs(env)[-1] == f"image={digest}"
    calls = docker_calls(tmp_path)
    assert calls[0][0] == "build" and "-t" not in calls[0]
    assert calls[1] == ["pull", digest]


def test_the_score_cache_is_mounted_from_outside_the_workspace_only(runner):
    env, tmp_path = runner
    cache = tmp_path / "runner-temp" / "evalgate-cache"
    result = run_step("gate", env, FAKE_MODE="good", FAKE_RC="0", CACHE_DIR=str(cache))
    assert result.returncode == 0, result.stderr
    (call,) = docker_calls(tmp_path)
    assert f"{cache}:/evalgate-cache" in call and "INPUT_CACHE=/evalgate-cache" in call
    assert cache.is_dir()  # created for the container's user

    workspace = Path(env["GITHUB_WORKSPACE"])
    (workspace / "outside-link").symlink_to(tmp_path / "runner-temp")
    link_back = tmp_path / "runner-temp" / "into-workspace"
    link_back.symlink_to(workspace / ".cache")
    # A folder in the PR's tree (directly, or through a link) could hold entries the PR wrote.
    for bad in (str(workspace / ".cache" / "evalgate"), ".cache/evalgate", str(link_back / "x")):
        (tmp_path / "docker.log").unlink(missing_ok=True)
        refused = run_step("gate", env, FAKE_MODE="good", FAKE_RC="0", CACHE_DIR=bad)
        assert refused.returncode == 3, bad
        assert "input cache must be an absolute folder outside the workspace" in refused.stdout
        assert not (tmp_path / "docker.log").exists(), "the container must not run"


def test_gate_changes_from_outside_the_workspace_are_mounted_read_only(runner):
    """The gate workflow writes its diff under the runner's temp folder, where a PR cannot have put
    a file or a link; the container sees that one file, read-only, and nothing else of the folder."""
    env, tmp_path = runner
    diff = tmp_path / "runner-temp" / "evalgate-gate-changes.diff"
    diff.write_text("diff --git a/evalgate.yml b/evalgate.yml\n", encoding="utf-8")
    result = run_step("gate", env, FAKE_MODE="good", FAKE_RC="0", INPUT_GATE_CHANGES=str(diff))
    assert result.returncode == 0, result.stderr
    (call,) = docker_calls(tmp_path)
    assert f"{diff}:/evalgate-input/gate-changes.diff:ro" in call
    assert str(tmp_path / "runner-temp") + ":" not in " ".join(call)  # the file, never its folder
    # A relative path is the workspace's, as before: nothing more is mounted.
    (tmp_path / "docker.log").unlink()
    result = run_step("gate", env, FAKE_MODE="good", FAKE_RC="0", INPUT_GATE_CHANGES=".evalgate/x.diff")
    (call,) = docker_calls(tmp_path)
    assert not any("/evalgate-input/" in arg for arg in call)
    # A link (or nothing) at the absolute path is refused before any container runs.
    link = tmp_path / "runner-temp" / "link.diff"
    link.symlink_to(tmp_path / "secret.txt")
    for bad in (str(link), str(tmp_path / "runner-temp" / "missing.diff")):
        (tmp_path / "docker.log").unlink(missing_ok=True)
        refused = run_step("gate", env, FAKE_MODE="good", FAKE_RC="0", INPUT_GATE_CHANGES=bad)
        assert refused.returncode == 2, bad
        assert "input gate-changes must be a regular file" in refused.stdout
        assert not (tmp_path / "docker.log").exists()


@pytest.mark.parametrize("planted", ["report", "link"])
def test_what_the_pr_left_in_the_output_folder_is_removed_before_the_run(runner, planted):
    """A report saying "pass" committed at evalgate-out/, or evalgate-out a link to the PR's own
    folder: removed (never followed) before the container runs, so a run that writes nothing
    reports nothing and the workflow collects nothing stale."""
    env, _ = runner
    workspace = Path(env["GITHUB_WORKSPACE"])
    forged = workspace / ("forged" if planted == "link" else "evalgate-out")
    forged.mkdir()
    (forged / "REPORT.md").write_text("## pass\n", encoding="utf-8")
    if planted == "link":
        (workspace / "evalgate-out").symlink_to("forged")
    result = run_step("gate", env, FAKE_MODE="silent", FAKE_RC="2")
    assert result.returncode == 2, result.stderr
    assert not (workspace / "evalgate-out").exists() and not (workspace / "evalgate-out").is_symlink()
    if planted == "link":  # the link is gone; what it pointed to is the PR's and stays untouched
        assert (forged / "REPORT.md").read_text(encoding="utf-8") == "## pass\n"
    assert "report-path=" in outputs(env)
