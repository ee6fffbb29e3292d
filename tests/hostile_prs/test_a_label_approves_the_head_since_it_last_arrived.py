"""Hostile PR: a label that follows the PR back to a commit no maintainer saw as its head (review round 3).

`evalgate approval` dated "SHA became the head of this PR" by the FIRST run of SHA on the PR's
branch. A head can go back to an older commit: X, then A (approved), then X again, pushed while
the PR was closed (no `synchronize`, so void-labels.yml never ran) or fast-forwarded while open.
The label must be newer than the LATEST moment the head became SHA: the first run of SHA after the
latest run of any other head of this PR, and every reopening, branch restore, force push and
change of base. And void-labels.yml removes the labels on a reopening and a new base too.

The approval cases run the real command line (`evalgate approval`, in-process) against the GitHub
stand-in on 127.0.0.1 (helpers/approval_world.py); the workflow cases evaluate void-labels.yml's
and its template's own `if:` as the runner does (helpers/actions_expr.py).
"""

from __future__ import annotations

import pytest
import yaml
from helpers.actions_expr import condition
from helpers.approval_world import PR, SHA, approval_args, approved_world, commit, labelled, run
from helpers.github_standin import FakeGitHub
from helpers.workflow_steps import load

from evalgate.github.workflows import void_labels_workflow

A_SHA = "cd" * 20  # X's parent, the commit the maintainer approved


@pytest.fixture
def approval_gh(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs-installation")
    server = approved_world(FakeGitHub().start())
    yield server
    server.stop()


def x_then_a_then_label(gh: FakeGitHub) -> None:
    """10:00 alice opens the PR at X (SHA); 10:10 she force-pushes A; 10:30 maint labels (on A)."""
    gh.pull_commits[PR] = [commit(A_SHA, "alice", "alice"), commit(SHA, "alice", "alice")]
    gh.pull_details[PR]["commits"] = 2
    gh.timeline[PR] = [
        {"event": "committed", "sha": A_SHA, "author": {"name": "Alice", "email": "a@x.test"}},
        {"event": "head_ref_force_pushed", "actor": {"login": "alice"}, "created_at": "2026-12-01T10:10:00Z"},
        labelled("maint", "2026-12-01T10:30:00Z"),
    ]
    gh.runs = [
        run(SHA, "2026-12-01T10:00:05Z", "alice"),  # X opened the PR
        run(A_SHA, "2026-12-01T10:10:05Z", "alice"),  # the force push of A
        run(A_SHA, "2026-12-01T10:30:05Z", "maint"),  # the label's run, on A
    ]


def test_a_label_does_not_follow_the_pr_back_to_a_commit_pushed_while_it_was_closed(approval_gh, cli):
    """On a server without the activity log: alice opens the PR at X (the regressed checkpoint),
    force-pushes A (X's parent, a small gate change), maint labels A; alice closes the PR, pushes X
    again (a fast-forward: no force push event, no `synchronize`, no run), and reopens it. Rule 5
    took X's FIRST run (10:00:05) as the moment X reached the PR: the label approved X."""
    gh = approval_gh
    gh.activity_api = False
    x_then_a_then_label(gh)
    gh.timeline[PR] += [
        {"event": "closed", "actor": {"login": "alice"}, "created_at": "2026-12-01T10:40:00Z"},
        {"event": "committed", "sha": SHA, "author": {"name": "Alice", "email": "a@x.test"}},
        {"event": "reopened", "actor": {"login": "alice"}, "created_at": "2026-12-01T10:50:00Z"},
    ]
    gh.runs.append(run(SHA, "2026-12-01T10:50:05Z", "alice"))  # the reopening, on X
    result = cli(*approval_args(gh, sha=SHA))
    assert result.code == 1, "approved X, which no maintainer saw:\n" + result.out + result.err
    assert "became the head of this PR for the last time" in result.out


def test_a_head_fast_forwarded_back_to_an_older_commit_is_not_approved_by_a_label_on_the_other(
    approval_gh, cli
):
    """The same return to X while the PR is open (void-labels.yml failed, or has not run yet): the
    push of X starts a run after the label; no reopening, no force push after the label."""
    gh = approval_gh
    gh.activity_api = False
    x_then_a_then_label(gh)
    gh.runs.append(run(SHA, "2026-12-01T10:40:05Z", "alice"))  # the push back to X
    result = cli(*approval_args(gh, sha=SHA))
    assert result.code == 1, result.out + result.err


def test_a_label_applied_after_the_head_came_back_approves(approval_gh, cli):
    """The control: X, A, X again, then a maintainer labels X: the label is newer than X's return."""
    gh = approval_gh
    gh.activity_api = False
    x_then_a_then_label(gh)
    gh.timeline[PR][-1] = labelled("maint", "2026-12-01T11:00:00Z")
    gh.runs = [
        *gh.runs[:2],
        run(SHA, "2026-12-01T10:40:05Z", "alice"),  # the push back to X
        run(SHA, "2026-12-01T11:00:05Z", "maint"),  # the label's run, on X
    ]
    result = cli(*approval_args(gh, sha=SHA))
    assert result.code == 0, result.out + result.err


@pytest.mark.parametrize("event", ["reopened", "base_ref_changed", "head_ref_restored"])
def test_a_reopening_a_restored_branch_or_a_new_base_after_the_label_voids_it(approval_gh, cli, event):
    """The approved story (SHA labelled at 10:30), then the PR is reopened, its branch restored, or
    its base changed at 10:45: what the maintainer approved was another PR state."""
    gh = approval_gh
    gh.timeline[PR].append(
        {"event": event, "actor": {"login": "alice"}, "created_at": "2026-12-01T10:45:00Z"}
    )
    result = cli(*approval_args(gh))
    assert result.code == 1, result.out + result.err
    assert "for the last time" in result.out


def test_the_approved_story_stays_approved(approval_gh, cli):
    result = cli(*approval_args(approval_gh))
    assert result.code == 0, result.out + result.err


# -- void-labels.yml: a reopening and a new base remove the labels as a push does -------------------

PIN = "acme/evalgate@" + "a" * 40


def void_labels(name: str) -> dict:
    return load("void-labels.yml") if name == "void-labels.yml" else yaml.safe_load(void_labels_workflow(PIN))


def removes_the_labels(wf: dict, action: str, *, changes: dict | None = None, fork: bool = False) -> bool:
    on = wf.get("on", wf.get(True))
    if action not in on["pull_request"]["types"]:
        return False
    (job,) = wf["jobs"].values()
    event = {
        "action": action,
        "pull_request": {
            "number": PR,
            "head": {"repo": {"full_name": "mallory/gate" if fork else "octo/gate"}},
        },
    }
    if changes is not None:
        event["changes"] = changes
    ctx = {"github": {"event": event, "repository": "octo/gate"}}
    return condition(job.get("if"), ctx, lambda fn: fn in ("success", "always"))


@pytest.mark.parametrize("name", ["void-labels.yml", "init template"])
def test_void_labels_runs_on_a_push_a_reopening_and_a_new_base(name):
    wf = void_labels(name)
    assert removes_the_labels(wf, "synchronize")
    assert removes_the_labels(wf, "reopened")
    assert removes_the_labels(
        wf, "edited", changes={"base": {"ref": {"from": "staging"}, "sha": {"from": "0" * 40}}}
    )
    assert not removes_the_labels(wf, "edited", changes={"title": {"from": "old title"}})
    assert not removes_the_labels(wf, "edited")
    assert not removes_the_labels(wf, "labeled")
    assert not removes_the_labels(wf, "reopened", fork=True)  # a fork's labels: not this token's to remove
