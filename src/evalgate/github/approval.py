"""Whether a maintainer's label approves this PR at this commit, asked of the GitHub API.

The rule (docs/approval.md): LABEL counts only when
  1. the PR is open and same-repository (a fork's label cannot be removed by the fork's token,
     and a fork's push is gated against its own config);
  2. the PR head is still `sha` (a later push voids the approval);
  3. LABEL is on the PR, and its latest `labeled` event on the timeline was made by a user whose
     ROLE is maintain or admin (`role_name` of `GET .../collaborators/{user}/permission`: the
     `permission` field reports maintain as "write", so it cannot tell a maintainer from a writer);
  4. that user put no commit on the PR: not its author, not the author or committer of any of its
     commits (`GET .../pulls/{n}/commits`), not the actor of any push to its head branch (the run
     that a push starts first for each head, `head_ref_force_pushed`/`head_ref_restored` timeline
     events, and the repository's activity log where the server has one);
  5. the label event is newer than the LATEST moment `sha` became the head OF THIS PR: later than
     every `head_ref_force_pushed`, `head_ref_restored`, `reopened` and `base_ref_changed` event
     (a PR closed, pushed to and reopened, or retargeted, is another PR than the one approved),
     than every push of `sha` to the PR's branch in the activity log, and than the first
     `pull_request` workflow run for `sha` after the latest run for any other head (runs whose
     head repository and branch are this PR's, created no earlier than the PR): a head that
     went back to an older commit (a push while the PR was closed, which starts no run and no
     `synchronize`) became the head again at its first run since, not at its first run ever. A
     run of the same commit as another PR's head, or on another branch, says nothing about when
     it reached this PR. A git commit date is written by the author and proves nothing. The
     workflows also remove the label on every push (`synchronize`), reopening and retargeting,
     so a push that reuses an older commit drops it as well.
Every timestamp compared is GitHub's own. What cannot be seen (a listing GitHub truncates, a
deleted account) is "not approved", never "approved".
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from evalgate.github.rest import GitHubClient, GitHubHTTPError

APPROVER_ROLES = ("admin", "maintain")
# GitHub lists at most 250 commits of a pull request, and at most 1,000 workflow runs for a
# filtered query: past those, who pushed what cannot be read in full.
RUNS_CAP = 1000
# Repository activity (GET /repos/{o}/{r}/activity): the events that move a branch, with who did it.
PUSH_ACTIVITIES = ("push", "force_push", "branch_creation")
# Timeline events whose actor moved the PR's head branch.
PUSH_EVENTS = ("head_ref_force_pushed", "head_ref_restored")
# Timeline events after which the head may be a commit no maintainer saw as this PR's: a move of
# its branch, a reopening (pushes while it was closed start no run) and a new base.
HEAD_MOVED_EVENTS = (*PUSH_EVENTS, "reopened", "base_ref_changed")


def _when(value: Any) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)  # GitHub writes UTC


def _login(obj: Any) -> str:
    return str((obj or {}).get("login") or "") if isinstance(obj, dict) else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def check_approval(client: GitHubClient, repo: str, pr: int, sha: str, label: str) -> list[str]:
    """Why LABEL does not approve PR `pr` at `sha`, one reason per line; [] when it does."""
    sha = sha.lower()
    data = client.checked("GET", f"/repos/{repo}/pulls/{pr}").data
    if not isinstance(data, dict):
        return [f"{repo}#{pr}: the API did not answer with a pull request"]
    why: list[str] = []
    head = _dict(data.get("head"))
    head_repo = str(_dict(head.get("repo")).get("full_name") or "")
    head_ref = str(head.get("ref") or "")
    author = _login(data.get("user"))
    if data.get("state") != "open":
        why.append(f"{repo}#{pr} is {data.get('state')}, not open")
    if head_repo.casefold() != repo.casefold():
        why.append(
            f"{repo}#{pr} comes from {head_repo or 'a deleted repository'}: approval labels count only "
            "on same-repository pull requests"
        )
    head_sha = str(head.get("sha") or "").lower()
    if head_sha != sha:
        why.append(
            f"the PR head is now {head_sha[:12] or '?'}, not {sha[:12]}: a later push voids the "
            f"approval; a maintainer re-applies {label} after reviewing the new commit"
        )
    names = [str(lb.get("name")) for lb in data.get("labels") or [] if isinstance(lb, dict)]
    if label not in names:
        why.append(f"the label {label} is not on {repo}#{pr}")
        return why
    if why:
        return why  # a fork, a closed PR or a moved head: who labelled it no longer matters
    events = [e for e in client.paginate(f"/repos/{repo}/issues/{pr}/timeline") if isinstance(e, dict)]
    labelled = [
        e
        for e in events
        if e.get("event") == "labeled"
        and str(_dict(e.get("label")).get("name")) == label
        and _when(e.get("created_at"))
    ]
    if not labelled:
        why.append(f"no `labeled` event for {label} on the timeline of {repo}#{pr}")
        return why
    event = max(labelled, key=lambda e: _when(e["created_at"]))  # type: ignore[arg-type, return-value]
    actor = _login(event.get("actor"))
    at = _when(event["created_at"])
    assert at is not None
    if not head_ref:
        return [f"{repo}#{pr}: the API names no head branch, so its pushes cannot be read"]
    runs = _branch_runs(client, repo, head_repo, head_ref)
    activity = _branch_activity(client, repo, head_ref)
    if not actor:
        why.append(f"the label {label} was applied by a deleted account")
    elif actor.casefold() == author.casefold():
        why.append(
            f"the label {label} was applied by the PR's author ({actor}): self-approval does not count"
        )
    else:
        why += _role_reasons(client, repo, actor, label)
        pushed = _pushers(client, repo, pr, data, events, runs, activity)
        if isinstance(pushed, str):
            why.append(pushed)
        elif actor.casefold() in pushed:
            why.append(
                f"the label {label} was applied by {actor}, who {pushed[actor.casefold()]}: whoever put "
                "a commit on the PR cannot approve it; another maintainer re-applies the label"
            )
    why += _timing_reasons(label, sha, event, at, events, runs, activity, _when(data.get("created_at")))
    return why


def _role_reasons(client: GitHubClient, repo: str, actor: str, label: str) -> list[str]:
    resp = client.request("GET", f"/repos/{repo}/collaborators/{quote(actor, safe='')}/permission")
    body = resp.data if resp.status == 200 and isinstance(resp.data, dict) else {}
    role = body.get("role_name")
    permission = body.get("permission")
    if role is None and permission == "admin":
        role = "admin"  # a server without role_name: only "admin" is unambiguous
    if role in APPROVER_ROLES:
        return []
    shown = role or (f"unknown (permission {permission})" if permission else "none")
    return [
        f"the label {label} was applied by {actor}, whose role is {shown}: it takes the maintain or "
        "admin role (GitHub reports maintain as `write` permission; a writer's label does not count)"
    ]


def _branch_runs(client: GitHubClient, repo: str, head_repo: str, head_ref: str) -> list[dict[str, Any]]:
    """Every `pull_request` workflow run of the PR's head branch in its head repository."""
    path = f"/repos/{repo}/actions/runs?event=pull_request&branch={quote(head_ref, safe='')}"
    return [
        r
        for r in client.paginate(path, key="workflow_runs")
        if isinstance(r, dict)
        and str(r.get("head_branch") or "") == head_ref
        and str(_dict(r.get("head_repository")).get("full_name") or "").casefold() == head_repo.casefold()
    ]


def _branch_activity(client: GitHubClient, repo: str, head_ref: str) -> list[dict[str, Any]] | None:
    """The pushes to the head branch from the repository's activity log; None where the server
    has no such endpoint (GitHub Enterprise Server before it)."""
    path = f"/repos/{repo}/activity?ref={quote('refs/heads/' + head_ref, safe='')}"
    try:
        return [
            a
            for a in client.paginate(path)
            if isinstance(a, dict) and a.get("activity_type") in PUSH_ACTIVITIES
        ]
    except GitHubHTTPError as exc:
        if exc.status == 404:
            return None
        raise


def _pushers(
    client: GitHubClient,
    repo: str,
    pr: int,
    data: dict[str, Any],
    events: list[dict[str, Any]],
    runs: list[dict[str, Any]],
    activity: list[dict[str, Any]] | None,
) -> dict[str, str] | str:
    """{login (casefolded): how they put a commit on the PR}, or why that cannot be told."""
    out: dict[str, str] = {}

    def add(login: str, how: str) -> None:
        if login:
            out.setdefault(login.casefold(), how)

    commits = [c for c in client.paginate(f"/repos/{repo}/pulls/{pr}/commits") if isinstance(c, dict)]
    expected = data.get("commits")
    if isinstance(expected, int) and len(commits) < expected:
        return (
            f"{repo}#{pr} has {expected} commits and the API lists {len(commits)}: who wrote them all "
            "cannot be told, so no label approves it (split the PR)"
        )
    for c in commits:
        short = str(c.get("sha") or "")[:12]
        add(_login(c.get("author")), f"is the author of its commit {short}")
        add(_login(c.get("committer")), f"is the committer of its commit {short}")
    if len(runs) >= RUNS_CAP:
        return f"{repo}#{pr}'s branch has {RUNS_CAP} or more workflow runs: who pushed to it cannot be told"
    for first in _first_run_per_head(runs):
        short = str(first.get("head_sha") or "")[:12]
        add(_login(first.get("actor")), f"pushed {short} (the first workflow run of that head is theirs)")
        if first.get("run_attempt") in (None, 1):  # a re-run's triggering actor only re-ran it
            add(_login(first.get("triggering_actor")), f"triggered the first workflow run of {short}")
    for e in events:
        if e.get("event") in PUSH_EVENTS:
            add(_login(e.get("actor")), f"moved its branch ({e.get('event')} at {e.get('created_at')})")
    shas = {str(c.get("sha") or "").lower() for c in commits}
    for a in activity or ():
        if a.get("activity_type") == "branch_creation" and str(a.get("after") or "").lower() not in shas:
            continue  # the branch was made at a commit of the base branch: no commit of the PR
        add(
            _login(a.get("actor")),
            f"pushed {str(a.get('after') or '')[:12]} to its branch ({a.get('activity_type')})",
        )
    return out


def _first_run_per_head(runs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """For each head commit, the run GitHub created first: the one the push (or the opening of the
    PR) started. A label, an edit or a re-run starts later ones, by whoever did that."""
    first: dict[str, tuple[datetime, int, dict[str, Any]]] = {}
    for r in runs:
        when = _when(r.get("created_at"))
        head = str(r.get("head_sha") or "").lower()
        if when is None or not head:
            continue
        run_id = r.get("id")
        key = (when, run_id if isinstance(run_id, int) else 0)
        if head not in first or key < first[head][:2]:
            first[head] = (*key, r)
    return [r for _, _, r in first.values()]


def _timing_reasons(
    label: str,
    sha: str,
    event: dict[str, Any],
    at: datetime,
    events: list[dict[str, Any]],
    runs: list[dict[str, Any]],
    activity: list[dict[str, Any]] | None,
    opened: datetime | None,
) -> list[str]:
    moments = [w for e in events if e.get("event") in HEAD_MOVED_EVENTS and (w := _when(e.get("created_at")))]
    moments += [
        w
        for a in activity or ()
        if str(a.get("after") or "").lower() == sha and (w := _when(a.get("timestamp")))
    ]
    if len(runs) >= RUNS_CAP:
        return [
            f"the PR's branch has {RUNS_CAP} or more workflow runs: when {sha[:12]} became its head "
            "cannot be told"
        ]
    # This PR's runs: its head branch and repository, and no older than the PR itself (a branch
    # name outlives the pull requests opened from it). `sha` became the head (again) at its first
    # run after the latest run of any other head: a PR whose head went back to an older commit
    # (pushed while the PR was closed: no run, no `synchronize`) is not approved by a label
    # applied while the head was another commit, nor by one applied before the first time.
    timed = [
        (w, str(r.get("head_sha") or "").lower())
        for r in runs
        if (w := _when(r.get("created_at"))) and (opened is None or w >= opened)
    ]
    others = [w for w, head in timed if head != sha]
    since = max(others, default=None)
    times = [w for w, head in timed if head == sha and (since is None or w > since)]
    if not times:
        return [
            f"no pull_request workflow run of this PR for {sha[:12]} since its head was last another "
            "commit: cannot tell when it became the head"
        ]
    moments.append(min(times))
    if at <= max(moments):
        return [
            f"the label {label} was applied at {event['created_at']}, before {sha[:12]} became the "
            "head of this PR for the last time (a push back to it, a force push, a reopening or a new "
            "base since then counts): it approved an earlier state of the PR; re-apply it"
        ]
    return []
