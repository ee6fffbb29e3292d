"""`evalgate approval`: the label counts only as docs/approval.md says, asked of a real HTTP stand-in
for the GitHub API on 127.0.0.1."""

from __future__ import annotations

import pytest
from helpers import paths
from helpers.approval_world import GH_REPO, LABEL, PR, SHA, approval_args, approved_world, labelled, push
from helpers.github_standin import FakeGitHub

from evalgate.cli import main


@pytest.fixture
def gh(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs-installation")
    server = approved_world(FakeGitHub().start())
    yield server
    server.stop()


def approval(gh: FakeGitHub, sha: str = SHA) -> int:
    return main(approval_args(gh, sha=sha))


def test_a_maintainers_label_after_the_push_approves(gh, capsys):
    assert approval(gh) == 0
    assert f"{LABEL} approves {GH_REPO}#{PR}" in capsys.readouterr().out
    assert gh.count("GET", r"/collaborators/maint/permission") == 1


def test_the_authors_own_label_is_refused(gh, capsys):
    gh.timeline[PR][-1]["actor"] = {"login": "Alice"}  # logins ignore case
    assert approval(gh) == 1
    assert "self-approval does not count" in capsys.readouterr().out


@pytest.mark.parametrize("role", ["read", "triage", "write", "security-reviewer", None])
def test_a_labeller_without_the_maintain_or_admin_role_is_refused(gh, capsys, role):
    gh.timeline[PR][-1]["actor"] = {"login": "reader"}
    if role is None:
        del gh.permissions["reader"]
    else:
        gh.permissions["reader"] = role
    assert approval(gh) == 1
    assert "it takes the maintain or admin role" in capsys.readouterr().out


def test_an_admins_label_approves(gh, capsys):
    gh.timeline[PR][-1]["actor"] = {"login": "admin1"}
    assert approval(gh) == 0, capsys.readouterr().out


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ({"permission": "admin"}, 0),  # a server without role_name: admin is admin
        ({"permission": "write"}, 1),  # ... but "write" may be a writer or a maintainer
        ({"permission": "write", "role_name": "maintain"}, 0),
    ],
)
def test_the_role_is_read_from_role_name_not_permission(gh, capsys, answer, code):
    gh.permissions["maint"] = answer
    assert approval(gh) == code, capsys.readouterr().out


def test_a_maintainer_who_only_re_ran_the_push_run_may_approve(gh, capsys):
    # Re-running the run alice's push started (a flaky runner) pushes nothing.
    gh.runs[0].update(triggering_actor={"login": "maint"}, run_attempt=2)
    assert approval(gh) == 0, capsys.readouterr().out


def test_a_server_without_the_activity_log_still_decides_from_runs_and_commits(gh, capsys):
    gh.activity_api = False
    assert approval(gh) == 0, capsys.readouterr().out
    gh.pull_commits[PR][0]["committer"] = {"login": "maint"}
    assert approval(gh) == 1
    assert "maint, who is the committer of its commit" in capsys.readouterr().out


def test_a_maintainer_who_only_created_the_branch_at_the_base_may_approve(gh, capsys):
    # maint made the branch `tune` at main's head for alice, who then pushed her commit.
    gh.activity = [
        push("ee" * 20, "2026-12-01T09:00:00Z", "maint", kind="branch_creation"),
        push(SHA, "2026-12-01T09:59:00Z", "alice", before="ee" * 20),
    ]
    assert approval(gh) == 0, capsys.readouterr().out
    gh.activity[0]["after"] = SHA  # ... but a branch created at a commit of the PR is a push of it
    assert approval(gh) == 1
    assert "maint, who pushed abababababab to its branch (branch_creation)" in capsys.readouterr().out


def test_a_pr_whose_commits_the_api_cannot_list_in_full_is_not_approved(gh, capsys):
    gh.pull_details[PR]["commits"] = 300  # GitHub lists at most 250 commits of a pull request
    assert approval(gh) == 1
    assert "has 300 commits and the API lists 1" in capsys.readouterr().out


def test_a_head_with_no_run_of_this_pr_is_not_approved(gh, capsys):
    for r in gh.runs:
        r["head_branch"] = "elsewhere"
    assert approval(gh) == 1
    assert "no pull_request workflow run of this PR for abababababab" in capsys.readouterr().out


def test_the_latest_labelled_event_is_the_one_that_counts(gh, capsys):
    # A maintainer labelled first; the label was removed and a reader put it back.
    gh.timeline[PR].append(labelled("maint", "2026-12-01T10:40:00Z", event="unlabeled"))
    gh.timeline[PR].append(labelled("reader", "2026-12-01T10:41:00Z"))
    assert approval(gh) == 1
    assert "applied by reader" in capsys.readouterr().out


def test_a_fork_pr_is_refused(gh, capsys):
    gh.pull_details[PR]["head"]["repo"] = {"full_name": "mallory/gate"}
    assert approval(gh) == 1
    assert "count only on same-repository pull requests" in capsys.readouterr().out


def test_a_later_push_voids_the_label(gh, capsys):
    gh.pull_details[PR]["head"]["sha"] = "cd" * 20  # the PR moved on after the gate started
    assert approval(gh) == 1
    assert "a later push voids the approval" in capsys.readouterr().out


def test_a_label_applied_before_the_commit_became_the_head_is_stale(gh, capsys):
    gh.runs[0]["created_at"] = "2026-12-01T10:35:00Z"  # the push arrived after the label
    gh.runs.pop()
    assert approval(gh) == 1
    assert "before abababababab became the head" in capsys.readouterr().out


def test_a_force_push_after_the_label_voids_it(gh, capsys):
    gh.timeline[PR].append(
        {"event": "head_ref_force_pushed", "actor": {"login": "alice"}, "created_at": "2026-12-01T10:50:00Z"}
    )
    assert approval(gh) == 1
    assert "re-apply it" in capsys.readouterr().out


def test_no_label_is_not_approved(gh, capsys):
    gh.pull_details[PR]["labels"] = [{"name": "bug"}]
    assert approval(gh) == 1
    assert f"the label {LABEL} is not on" in capsys.readouterr().out


def test_usage_and_api_errors_exit_2(gh, monkeypatch, capsys):
    assert approval(gh, sha="abc") == 2
    assert main(["approval", "--repo", "x", "--pr", "1", "--sha", SHA, "--label", LABEL]) == 2
    assert (
        main(
            ["approval", "--repo", GH_REPO, "--pr", "99", "--sha", SHA, "--label", LABEL, "--api-url", gh.url]
        )
        == 2
    )
    assert "HTTP 404" in capsys.readouterr().err
    monkeypatch.delenv("GITHUB_TOKEN")
    monkeypatch.delenv("GH_TOKEN", raising=False)
    assert approval(gh) == 2


def test_the_check_job_runs_with_evalgate_alone(gh):
    """update-baseline.yml installs evalgate with --no-deps for the approval check."""
    import os
    import subprocess
    import sys

    root = paths.REPO
    assert "--no-deps" in (root / ".github/workflows/update-baseline.yml").read_text(encoding="utf-8")
    code = (
        "import importlib.abc, sys\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'torch', 'numpy', 'pandas', 'matplotlib', 'jsonschema', 'yaml',\n"
        "                                  'tabulate', 'transformers', 'safetensors', 'tokenizers'}:\n"
        "            raise ImportError('not installed: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from evalgate.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    args = [
        "approval",
        "--repo",
        GH_REPO,
        "--pr",
        str(PR),
        "--sha",
        SHA,
        "--label",
        LABEL,
        "--api-url",
        gh.url,
    ]
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**os.environ, "PYTHONPATH": str(root / "src")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "approves" in result.stdout
