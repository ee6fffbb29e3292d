"""`evalgate approval`: the label counts only as docs/approval.md says, asked of a real HTTP stand-in
for the GitHub API on 127.0.0.1."""

from __future__ import annotations

import pytest
from helpers import paths
from helpers.github_standin import FakeGitHub

from evalgate.cli import main

GH_REPO = "octo/gate"
PR = 21
SHA = "ab" * 20
LABEL = "evalgate:approve-gate-change"


@pytest.fixture
def gh(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs-installation")
    server = FakeGitHub().start()
    server.pull_details[PR] = {
        "number": PR,
        "state": "open",
        "user": {"login": "alice"},
        "head": {"sha": SHA, "ref": "tune", "repo": {"full_name": GH_REPO}},
        "base": {"repo": {"full_name": GH_REPO}},
        "labels": [{"name": LABEL}],
    }
    server.timeline[PR] = [
        {"event": "committed", "sha": SHA},
        {
            "event": "labeled",
            "label": {"name": "bug"},
            "actor": {"login": "mallory"},
            "created_at": "2026-12-01T10:10:00Z",
        },
        {
            "event": "labeled",
            "label": {"name": LABEL},
            "actor": {"login": "maint"},
            "created_at": "2026-12-01T10:30:00Z",
        },
    ]
    server.permissions.update({"maint": "maintain", "alice": "write", "reader": "read", "admin1": "admin"})
    server.runs = [
        {"head_sha": SHA, "event": "pull_request", "created_at": "2026-12-01T10:05:00Z"},
        {
            "head_sha": SHA,
            "event": "pull_request",
            "created_at": "2026-12-01T10:31:00Z",
        },  # the label's own run
    ]
    yield server
    server.stop()


def approval(gh: FakeGitHub, sha: str = SHA) -> int:
    return main(
        ["approval", "--repo", GH_REPO, "--pr", str(PR), "--sha", sha, "--label", LABEL, "--api-url", gh.url]
    )


def test_a_maintainers_label_after_the_push_approves(gh, capsys):
    assert approval(gh) == 0
    assert f"{LABEL} approves {GH_REPO}#{PR}" in capsys.readouterr().out
    assert gh.count("GET", r"/collaborators/maint/permission") == 1


def test_the_authors_own_label_is_refused(gh, capsys):
    gh.timeline[PR][-1]["actor"] = {"login": "Alice"}  # logins ignore case
    assert approval(gh) == 1
    assert "self-approval does not count" in capsys.readouterr().out


@pytest.mark.parametrize("permission", ["read", "triage", None])
def test_a_labeller_without_write_permission_is_refused(gh, capsys, permission):
    gh.timeline[PR][-1]["actor"] = {"login": "reader"}
    if permission is None:
        del gh.permissions["reader"]
    else:
        gh.permissions["reader"] = permission
    assert approval(gh) == 1
    assert "it takes write, maintain or admin" in capsys.readouterr().out


def test_the_latest_labelled_event_is_the_one_that_counts(gh, capsys):
    # A maintainer labelled first; the label was removed and a reader put it back.
    gh.timeline[PR].append(
        {
            "event": "unlabeled",
            "label": {"name": LABEL},
            "actor": {"login": "maint"},
            "created_at": "2026-12-01T10:40:00Z",
        }
    )
    gh.timeline[PR].append(
        {
            "event": "labeled",
            "label": {"name": LABEL},
            "actor": {"login": "reader"},
            "created_at": "2026-12-01T10:41:00Z",
        }
    )
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
