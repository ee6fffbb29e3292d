"""The Action's `merge` input (the sharded gate's merge job, docs/github.md "Sharded gate"), run
with action.yml's own gate step and a stand-in docker: the parts are mounted read-only from a
folder outside the workspace, and a folder a pull request could have filled (inside the workspace,
directly or through a link) is refused before any container runs. A PR that committed
`evalgate-parts/evalgate-shard-1/results.json` saying "pass" must never have it merged."""

from __future__ import annotations

from pathlib import Path

from test_action_host import docker_calls, run_step, runner  # noqa: F401 (the fixture)


def test_the_parts_are_mounted_read_only_from_outside_the_workspace(runner):  # noqa: F811
    env, tmp_path = runner
    parts = tmp_path / "runner-temp" / "evalgate-parts"
    (parts / "evalgate-shard-1").mkdir(parents=True)
    result = run_step("gate", env, FAKE_MODE="good", FAKE_RC="0", MERGE_DIR=str(parts), INPUT_SHARD="")
    assert result.returncode == 0, result.stdout + result.stderr
    (call,) = docker_calls(tmp_path)
    assert f"{parts}:/evalgate-parts:ro" in call and "INPUT_MERGE" in call, call


def test_a_parts_folder_the_pr_could_have_filled_is_refused_before_any_container_runs(runner):  # noqa: F811
    env, tmp_path = runner
    workspace = Path(env["GITHUB_WORKSPACE"])
    planted = workspace / "evalgate-parts" / "evalgate-shard-1"
    planted.mkdir(parents=True)
    (planted / "results.json").write_text('{"verdict": "pass"}', encoding="utf-8")
    link = tmp_path / "runner-temp" / "parts-link"
    link.symlink_to(workspace / "evalgate-parts")
    for bad in (
        str(workspace / "evalgate-parts"),
        "evalgate-parts",
        str(link),
        str(tmp_path / "runner-temp" / "none"),
    ):
        (tmp_path / "docker.log").unlink(missing_ok=True)
        refused = run_step("gate", env, FAKE_MODE="good", FAKE_RC="0", MERGE_DIR=bad)
        assert refused.returncode == 2, (bad, refused.stdout, refused.stderr)
        assert "input merge must be an absolute folder outside the workspace" in refused.stdout, bad
        assert "verdict=refused" in Path(env["GITHUB_OUTPUT"]).read_text(encoding="utf-8")
        assert not (tmp_path / "docker.log").exists(), f"{bad}: the container must not run"
