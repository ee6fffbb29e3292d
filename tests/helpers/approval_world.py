"""One pull request as `evalgate approval` sees it through the GitHub stand-in: the PR, its timeline,
its commits, the workflow runs of its branch, the repository's activity log and who holds which
role. The story it starts from is approved:

    10:00  alice opens PR 21 from branch `tune` with head SHA (her commit); its run starts (10:00:05)
    10:30  maint (role maintain) applies LABEL; the label starts a run (10:30:05)
"""

from __future__ import annotations

import itertools
from typing import Any

from helpers.github_standin import FakeGitHub

GH_REPO = "octo/gate"
PR = 21
BRANCH = "tune"
SHA = "ab" * 20
LABEL = "evalgate:approve-gate-change"
_ids = itertools.count(9000)


def user(login: str | None) -> dict[str, Any] | None:
    return None if login is None else {"login": login, "type": "User"}


def run(
    head_sha: str,
    created_at: str,
    actor: str,
    *,
    branch: str = BRANCH,
    head_repo: str = GH_REPO,
    triggering_actor: str | None = None,
    run_attempt: int = 1,
    event: str = "pull_request",
) -> dict[str, Any]:
    """A workflow run as GET /repos/{o}/{r}/actions/runs lists it."""
    return {
        "id": next(_ids),
        "name": "eval-gate",
        "event": event,
        "head_sha": head_sha,
        "head_branch": branch,
        "head_repository": {"full_name": head_repo},
        "created_at": created_at,
        "run_attempt": run_attempt,
        "actor": user(actor),
        "triggering_actor": user(triggering_actor or actor),
    }


def commit(sha: str, author: str | None, committer: str | None = "web-flow") -> dict[str, Any]:
    """A commit as GET /repos/{o}/{r}/pulls/{n}/commits lists it (logins GitHub matched by email)."""
    return {"sha": sha, "author": user(author), "committer": user(committer), "commit": {"message": "m"}}


def push(
    after: str, timestamp: str, actor: str, kind: str = "push", before: str = "0" * 40
) -> dict[str, Any]:
    """A push to the PR's branch as GET /repos/{o}/{r}/activity lists it."""
    return {
        "id": next(_ids),
        "ref": f"refs/heads/{BRANCH}",
        "before": before,
        "after": after,
        "timestamp": timestamp,
        "activity_type": kind,
        "actor": user(actor),
    }


def labelled(login: str, at: str, label: str = LABEL, event: str = "labeled") -> dict[str, Any]:
    return {"event": event, "label": {"name": label}, "actor": user(login), "created_at": at}


def approved_world(server: FakeGitHub) -> FakeGitHub:
    """Fill `server` with the approved story of the module docstring."""
    server.pull_details[PR] = {
        "number": PR,
        "state": "open",
        "created_at": "2026-12-01T10:00:00Z",
        "user": user("alice"),
        "head": {"sha": SHA, "ref": BRANCH, "repo": {"full_name": GH_REPO}},
        "base": {"ref": "main", "repo": {"full_name": GH_REPO}},
        "labels": [{"name": LABEL}],
        "commits": 1,
    }
    server.timeline[PR] = [
        {"event": "committed", "sha": SHA, "author": {"name": "Alice", "email": "a@x.test"}},
        labelled("mallory", "2026-12-01T10:10:00Z", label="bug"),
        labelled("maint", "2026-12-01T10:30:00Z"),
    ]
    server.pull_commits[PR] = [commit(SHA, "alice", "alice")]
    server.permissions.update(
        {"maint": "maintain", "maint2": "maintain", "alice": "write", "reader": "read", "admin1": "admin"}
    )
    server.runs = [
        run(SHA, "2026-12-01T10:00:05Z", "alice"),  # the opening of the PR (its push)
        run(SHA, "2026-12-01T10:30:05Z", "maint"),  # the label's own run
    ]
    server.activity = [push(SHA, "2026-12-01T09:59:00Z", "alice", kind="branch_creation")]
    return server


def approval_args(server: FakeGitHub, sha: str = SHA, label: str = LABEL) -> list[str]:
    return [
        "approval",
        "--repo",
        GH_REPO,
        "--pr",
        str(PR),
        "--sha",
        sha,
        "--label",
        label,
        "--api-url",
        server.url,
    ]
