"""Hostile PRs against `evalgate approval`: a label approves only when a maintainer who put no
commit on the PR applied it after this head reached THIS pull request (docs/approval.md).

Each case runs the real command line (`evalgate approval`, in-process) against the GitHub stand-in
on 127.0.0.1, starting from an approved story (helpers/approval_world.py) and changing the one
thing the attack changes. Exit 0 approved, 1 not approved."""

from __future__ import annotations

import pytest
from helpers.approval_world import (
    BRANCH,
    GH_REPO,
    PR,
    SHA,
    approval_args,
    approved_world,
    commit,
    labelled,
    push,
    run,
    user,
)
from helpers.github_standin import FakeGitHub

OLD = "cd" * 20  # the PR's head before SHA was pushed onto it


@pytest.fixture
def gh(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs-installation")
    server = approved_world(FakeGitHub().start())
    yield server
    server.stop()


def label_by(gh: FakeGitHub, login: str, at: str = "2026-12-01T10:30:00Z", head: str = SHA) -> None:
    gh.timeline[PR][-1] = labelled(login, at)
    gh.runs = [r for r in gh.runs if r["created_at"] != "2026-12-01T10:30:05Z"]  # the story's label run
    gh.runs.append(run(head, at.replace(":00Z", ":05Z"), login))  # this label's own run


def pushed_onto_the_pr(gh: FakeGitHub, pusher: str, at: str = "2026-12-01T10:20:00Z") -> None:
    """alice opened the PR at OLD; `pusher` pushed SHA (their commit, written as alice) onto it."""
    gh.pull_details[PR]["commits"] = 2
    gh.pull_commits[PR] = [commit(OLD, "alice", "alice"), commit(SHA, "alice", "alice")]
    gh.runs[0] = run(OLD, "2026-12-01T10:00:05Z", "alice")
    gh.runs.append(run(SHA, at.replace(":00Z", ":05Z"), pusher))
    gh.activity = [
        push(OLD, "2026-12-01T09:59:00Z", "alice", kind="branch_creation"),
        push(SHA, at, pusher, before=OLD),
    ]


def test_a_writers_label_does_not_approve(gh, cli):
    """A user with the write role (who could push the bad commit onto anyone's PR) labels it."""
    gh.permissions["wendy"] = "write"
    label_by(gh, "wendy")
    result = cli(*approval_args(gh))
    assert result.code == 1, result.out
    assert "whose role is write: it takes the maintain or admin role" in result.out


def test_a_maintainer_reported_as_write_permission_approves(gh, cli):
    """GitHub's `permission` field says "write" for a maintainer: the role is read from role_name."""
    gh.permissions["maint"] = {"permission": "write", "role_name": "maintain"}
    result = cli(*approval_args(gh))
    assert result.code == 0, result.out


@pytest.mark.parametrize("part", ["author", "committer"])
def test_a_maintainer_who_wrote_a_commit_of_the_pr_cannot_approve_it(gh, cli, part):
    """A maintainer adds a commit of their own to alice's PR, then labels the PR themselves."""
    gh.pull_details[PR]["commits"] = 2
    extra = (
        commit("ef" * 20, "maint", "web-flow") if part == "author" else commit("ef" * 20, "alice", "maint")
    )
    gh.pull_commits[PR].append(extra)
    result = cli(*approval_args(gh))
    assert result.code == 1, result.out
    assert f"maint, who is the {part} of its commit efefefefefef" in result.out


def test_a_maintainer_whose_push_started_a_run_of_the_pr_cannot_approve_it(gh, cli):
    """A maintainer pushes a commit written in alice's name onto her PR (the commit's author and
    committer say alice), then labels it: the run their push started names them."""
    pushed_onto_the_pr(gh, "maint")
    gh.activity = []  # a server whose activity log does not reach back that far
    result = cli(*approval_args(gh))
    assert result.code == 1, result.out
    assert "maint, who pushed abababababab (the first workflow run of that head is theirs)" in result.out


def test_a_maintainer_in_the_activity_log_of_the_branch_cannot_approve_it(gh, cli):
    """The same push, its runs deleted afterwards: the repository's activity log still names the pusher."""
    pushed_onto_the_pr(gh, "maint")
    gh.runs = [r for r in gh.runs if r["head_sha"] != SHA or r["actor"]["login"] != "maint"]
    gh.runs.append(run(SHA, "2026-12-01T10:20:05Z", "alice"))  # a later run of SHA by someone else
    result = cli(*approval_args(gh))
    assert result.code == 1, result.out
    assert "maint, who pushed abababababab to its branch (push)" in result.out


def test_a_maintainer_who_force_pushed_the_branch_cannot_approve_it(gh, cli):
    """A maintainer force-pushes alice's branch to their commit before labelling."""
    gh.timeline[PR].insert(
        1, {"event": "head_ref_force_pushed", "actor": user("maint"), "created_at": "2026-12-01T10:20:00Z"}
    )
    result = cli(*approval_args(gh))
    assert result.code == 1, result.out
    assert "maint, who moved its branch (head_ref_force_pushed" in result.out


def another_prs_head_first(gh: FakeGitHub, branch: str = "exp", head_repo: str = GH_REPO) -> None:
    """SHA was first pushed at 09:00 as the head of another PR (branch `branch`, perhaps a draft or
    a fork's branch of the same name), and reached this PR by alice's push at 10:20."""
    pushed_onto_the_pr(gh, "alice")
    gh.runs.append(run(SHA, "2026-12-01T09:00:05Z", "bob", branch=branch, head_repo=head_repo))


@pytest.mark.parametrize(
    ("branch", "head_repo"),
    [("exp", GH_REPO), ("draft/tune-v2", GH_REPO), (BRANCH, "mallory/gate")],
    ids=["another-pr", "a-draft", "a-fork-branch-of-the-same-name"],
)
def test_a_label_applied_before_the_commit_reached_this_pr_does_not_approve(gh, cli, branch, head_repo):
    """The maintainer labelled the PR at 10:10, when its head was still OLD; SHA, the head of
    another PR since 09:00, was pushed onto this PR at 10:20: the label approved OLD, not SHA."""
    another_prs_head_first(gh, branch, head_repo)
    label_by(gh, "maint", "2026-12-01T10:10:00Z", head=OLD)
    result = cli(*approval_args(gh))
    assert result.code == 1, result.out
    assert "before abababababab became the head of this PR" in result.out


def test_a_label_applied_after_the_commit_reached_this_pr_approves(gh, cli):
    """The same commit, labelled at 10:30, after this PR's own run of SHA (10:20): approved."""
    another_prs_head_first(gh)
    result = cli(*approval_args(gh))
    assert result.code == 0, result.out


def test_a_branch_reused_from_an_earlier_pr_does_not_date_the_head(gh, cli):
    """An earlier PR from the same branch ran SHA at 09:00; this PR (opened 10:00 at OLD) got SHA
    at 10:20. A label at 10:10 predates SHA in this PR, whatever the old PR's run says."""
    pushed_onto_the_pr(gh, "alice")
    gh.runs.append(run(SHA, "2026-12-01T09:00:05Z", "alice"))  # the same branch, before this PR
    label_by(gh, "maint", "2026-12-01T10:10:00Z", head=OLD)
    result = cli(*approval_args(gh))
    assert result.code == 1, result.out
    assert "before abababababab became the head of this PR" in result.out


def later_runs(gh: FakeGitHub, n: int = 70) -> None:
    """`n` runs after the label (another label toggled on and off): the runs API lists newest
    first, 30 a page, so the runs that date SHA and name its pusher are on the last page."""
    gh.runs += [run(SHA, f"2026-12-01T{11 + m // 60}:{m % 60:02d}:05Z", "reader") for m in range(n)]


def test_the_run_that_dates_the_head_is_found_past_the_first_pages(gh, cli):
    """The label came after this PR's run of SHA, which only the last page of runs shows."""
    another_prs_head_first(gh)
    later_runs(gh)
    result = cli(*approval_args(gh))
    assert result.code == 0, result.out
    assert gh.count("GET", r"/actions/runs") >= 3


def test_the_run_that_names_the_pusher_is_found_past_the_first_pages(gh, cli):
    """The maintainer's push started the first run of SHA, on the last page of runs."""
    pushed_onto_the_pr(gh, "maint")
    gh.activity = []
    later_runs(gh)
    result = cli(*approval_args(gh))
    assert result.code == 1, result.out
    assert "maint, who pushed abababababab" in result.out
