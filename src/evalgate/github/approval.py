"""Whether a maintainer's label approves this PR at this commit, asked of the GitHub API.

The rule (docs/approval.md): LABEL counts only when
  1. the PR is open and same-repository (a fork's label cannot be removed by the fork's token,
     and a fork's push is gated against its own config);
  2. the PR head is still `sha` (a later push voids the approval);
  3. LABEL is on the PR, and its latest `labeled` event on the timeline was made by a user with
     write, maintain or admin permission (`GET .../collaborators/{user}/permission`) who is not
     the PR's author;
  4. that event is newer than the moment `sha` became the head: later than every
     `head_ref_force_pushed` event and later than the creation of the first `pull_request`
     workflow run for `sha` (GitHub creates it when the push arrives; a git commit date is
     written by the author and proves nothing). The workflows also remove the label on every
     push (`synchronize`), so a push that reuses an older commit drops it as well.
Every timestamp compared is GitHub's own.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from evalgate.github.rest import GitHubClient

WRITE_PERMISSIONS = ("admin", "maintain", "write")


def _when(value: Any) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)  # GitHub writes UTC


def _login(obj: Any) -> str:
    return str((obj or {}).get("login") or "") if isinstance(obj, dict) else ""


def check_approval(client: GitHubClient, repo: str, pr: int, sha: str, label: str) -> list[str]:
    """Why LABEL does not approve PR `pr` at `sha`, one reason per line; [] when it does."""
    sha = sha.lower()
    data = client.checked("GET", f"/repos/{repo}/pulls/{pr}").data
    if not isinstance(data, dict):
        return [f"{repo}#{pr}: the API did not answer with a pull request"]
    why: list[str] = []
    head = data.get("head") if isinstance(data.get("head"), dict) else {}
    head_repo = str(
        ((head.get("repo") or {}) if isinstance(head.get("repo"), dict) else {}).get("full_name") or ""
    )
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
    events = [e for e in client.paginate(f"/repos/{repo}/issues/{pr}/timeline") if isinstance(e, dict)]
    labelled = [
        e
        for e in events
        if e.get("event") == "labeled"
        and str((e.get("label") or {}).get("name")) == label
        and _when(e.get("created_at"))
    ]
    if not labelled:
        why.append(f"no `labeled` event for {label} on the timeline of {repo}#{pr}")
        return why
    event = max(labelled, key=lambda e: _when(e["created_at"]))  # type: ignore[arg-type, return-value]
    actor = _login(event.get("actor"))
    at = _when(event["created_at"])
    assert at is not None
    if not actor:
        why.append(f"the label {label} was applied by a deleted account")
    elif actor.casefold() == author.casefold():
        why.append(
            f"the label {label} was applied by the PR's author ({actor}): self-approval does not count"
        )
    else:
        resp = client.request("GET", f"/repos/{repo}/collaborators/{quote(actor, safe='')}/permission")
        permission = (
            resp.data.get("permission") if resp.status == 200 and isinstance(resp.data, dict) else None
        )
        if permission not in WRITE_PERMISSIONS:
            why.append(
                f"the label {label} was applied by {actor}, whose permission is {permission or 'none'}: "
                "it takes write, maintain or admin"
            )
    pushes = [
        w for e in events if e.get("event") == "head_ref_force_pushed" and (w := _when(e.get("created_at")))
    ]
    became_head = _first_pr_run(client, repo, sha)
    if became_head is None:
        why.append(f"no pull_request workflow run for {sha[:12]}: cannot tell when it became the head")
    else:
        pushes.append(became_head)
    if pushes and at <= max(pushes):
        why.append(
            f"the label {label} was applied at {event['created_at']}, before {sha[:12]} became the "
            "head: it approved an earlier commit; re-apply it"
        )
    return why


def _first_pr_run(client: GitHubClient, repo: str, sha: str) -> datetime | None:
    resp = client.checked("GET", f"/repos/{repo}/actions/runs?head_sha={sha}&event=pull_request&per_page=100")
    runs = resp.data.get("workflow_runs") if isinstance(resp.data, dict) else None
    times = [
        w
        for r in runs or []
        if isinstance(r, dict)
        and str(r.get("head_sha", "")).lower() == sha
        and (w := _when(r.get("created_at")))
    ]
    return min(times) if times else None
