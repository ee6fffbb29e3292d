"""The sticky PR comment of a report folder: render it from DIR/results.json and post it.

The folder may be an artifact downloaded from a fork's run (the `workflow_run` comment job), so it
is treated as untrusted data: no markdown from it is ever posted (a REPORT.md in it is not even
read); the comment is rendered by this installed evalgate (report/comment.py) from
results.json, which must be a regular file inside DIR (a symlink could point at the runner's
secrets), under a size cap and pass the results schema. head.json (written by the gate workflow)
must name the SHA this job was told about. The comment opens with its provenance (head SHA, run
link, the run's conclusion), all taken from the trusted workflow_run event or flags, and every
mention and issue reference in it is defused. The PR number never comes from the artifact: it is
`--pr`, else the event's `pull_request.number`, else the open PR whose head is `--sha` (else the
event's `workflow_run.head_sha`, else GITHUB_SHA) and, when known, whose head repository and
branch are the run's (two open PRs can share a head SHA), looked up through the API.

A `pull_request` run executes the workflow file of the PR's merge commit, so a PR that edits the
gate's own workflow or action runs a gate of its own making, under the same path and event the
comment job checks, and can upload any results.json (an earlier passing one). So `evalgate
comment` (the `workflow_run` job's command) never posts a verdict before asking the API what the
run's head changes against the PR's base, which must be the default branch
(`GET /repos/{r}/compare/{base}...{head}`): when the head changes anything under `.github/`,
`action.yml`/`action.yaml` or `docker/`, when the PR targets another branch, or when the answer is
cut or unavailable, the sticky comment says the run carries no verdict, and what decides instead
(report/comment.py, `render_no_verdict`; docs/security.md).

`post_report` is what `evalgate comment` (strict) and `evalgate run --comment` call; for the run a
failure to comment is a warning and never changes the gate's exit code.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from evalgate.console import print_commands
from evalgate.errors import EvalgateError, GitHubError, RefusedError
from evalgate.github.rest import ReadOnlyToken
from evalgate.github.sticky import (
    CommentResult,
    GitHubClient,
    GitHubHTTPError,
    api_url_from_env,
    post_or_update_comment,
)
from evalgate.report.comment import defuse_references
from evalgate.report.findings import escape_data
from evalgate.report.markdown import code, inline

MAX_RESULTS_BYTES = 64 << 20
# What defines the gate's own run (a folder ends with "/"): the workflows and everything else
# GitHub reads from `.github/`, the Action and its image.
GATE_DEFINITION = (".github/", "action.yml", "action.yaml", "docker/")
# GitHub's compare lists at most 300 files: as many may mean more, which are not listed.
COMPARE_FILES_CAP = 300
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")
FALLBACK_NOTICE = (
    "> [!WARNING]\n"
    "> evalgate could not post the pull request comment: the token may not write here "
    "(GitHub said: {reason}). A fork's `pull_request` run only gets a read-only token; the "
    "`eval-gate-comment` workflow posts the comment from the base repository. The report follows.\n\n"
)


def read_artifact_file(folder: Path, name: str, max_bytes: int, *, cut: bool = False) -> str | None:
    """The text of folder/name if it is a regular file inside folder; None when absent."""
    path = folder / name
    if path.is_symlink():
        raise RefusedError(
            f"{path}: is a symbolic link; refusing to read it", hint="the artifact is untrusted"
        )
    if not path.exists():
        return None
    if not path.is_file() or not path.resolve().is_relative_to(folder.resolve()):
        raise RefusedError(f"{path}: not a regular file inside {folder}", hint="the artifact is untrusted")
    with open(path, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        if not cut:
            raise RefusedError(f"{path}: larger than {max_bytes:,} bytes", hint="the artifact is untrusted")
        data = data[:max_bytes]
    return data.decode("utf-8", errors="replace")


def check_artifact(folder: Path, expect_sha: str | None) -> dict[str, Any]:
    """The schema-checked results.json, after matching head.json against the SHA the event names."""
    text = read_artifact_file(folder, "results.json", MAX_RESULTS_BYTES)
    if text is None:
        raise RefusedError(
            f"{folder / 'results.json'}: not found",
            hint="the comment is rendered from results.json only; pass the folder `evalgate run` wrote",
        )
    from evalgate.gate.results import validate_results

    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
        raise RefusedError(f"{folder / 'results.json'}: not JSON ({reason})") from None
    validate_results(doc, str(folder / "results.json"))
    _check_head(folder, expect_sha)
    return doc


def _check_head(folder: Path, expect_sha: str | None) -> None:
    head_text = read_artifact_file(folder, "head.json", 4096)
    if head_text is None:
        return
    try:
        head = json.loads(head_text)
    except ValueError:
        head = None
    if not (isinstance(head, dict) and set(head) == {"head_sha"} and _SHA_RE.match(str(head["head_sha"]))):
        raise RefusedError(f'{folder / "head.json"}: expected {{"head_sha": "<40 hex>"}} only')
    if expect_sha and head["head_sha"] != expect_sha.lower():
        raise RefusedError(
            f"{folder / 'head.json'}: the report is for {head['head_sha'][:12]}, "
            f"but this run is for {expect_sha[:12]}",
            hint="download the artifact of the workflow run that triggered this job",
        )


def defuse_mentions(text: str) -> str:
    """Kept for callers of older releases: the one defusing lives in report/comment.py."""
    return defuse_references(text)


def read_event(env: Mapping[str, str]) -> dict[str, Any]:
    path = env.get("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        return {}
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return event if isinstance(event, dict) else {}


def event_sha(env: Mapping[str, str], sha: str | None) -> str | None:
    """The PR head SHA: --sha, else the event's workflow_run/pull_request head, else GITHUB_SHA.

    GITHUB_SHA is last because in a pull_request run it is the merge commit, and in a workflow_run
    run the default branch's tip: neither is the head of the PR.
    """
    event = read_event(env)
    run_head = (event.get("workflow_run") or {}).get("head_sha")
    pr_head = ((event.get("pull_request") or {}).get("head") or {}).get("sha")
    found = sha or run_head or pr_head or env.get("GITHUB_SHA")
    return str(found).lower() if found else None


def resolve_pr(
    pr: int | None,
    sha: str | None,
    repo: str,
    env: Mapping[str, str],
    client: GitHubClient,
    head_repo: str | None = None,
    head_branch: str | None = None,
):
    """(pr number or None, how it was found)."""
    if pr:
        return pr, "--pr"
    event = read_event(env)
    number = (event.get("pull_request") or {}).get("number")
    if isinstance(number, int):
        return number, "the pull_request event"
    issue = event.get("issue") or {}
    if isinstance(issue, dict) and issue.get("pull_request") and isinstance(issue.get("number"), int):
        return issue["number"], "the issue_comment event"  # a comment on a PR: the issue is the PR
    if isinstance(event.get("number"), int) and not ({"issue", "workflow_run"} & set(event)):
        return event["number"], "the event's number"  # a pull_request event pared down to its number
    ref = re.fullmatch(r"refs/pull/(\d+)/(?:merge|head)", env.get("GITHUB_REF") or "")
    if ref and not event.get("workflow_run"):
        return int(ref.group(1)), "GITHUB_REF"  # set by the runner in a pull_request job
    if not sha:
        raise RefusedError(
            "no pull request to comment on",
            hint="pass --pr N, or --sha SHA (or run inside a pull_request or workflow_run job)",
        )
    number = client.find_pr_for_sha(repo, sha, head_repo=head_repo, head_branch=head_branch)
    return number, f"head SHA {sha[:12]}"


def gate_definition_paths(names: Iterable[str]) -> list[str]:
    """The names among `names` that define the gate's own run (GATE_DEFINITION, case ignored)."""
    out = []
    for name in names:
        folded = name.casefold()
        if any(folded.startswith(g) if g.endswith("/") else folded == g for g in GATE_DEFINITION):
            out.append(name)
    return sorted(set(out))


def no_verdict_reason(
    client: GitHubClient, repo: str, number: int, head_sha: str | None
) -> tuple[str, list[str]] | None:
    """Why the run of PR `number` at `head_sha` carries no verdict the bot may post (one sentence,
    and the gate's files the head changes), or None when its head changes none of them against
    the PR's base, the default branch. What cannot be read is a reason, never a pass."""
    try:
        pr = client.checked("GET", f"/repos/{repo}/pulls/{number}").data
        about = client.checked("GET", f"/repos/{repo}").data
        pr, about = _dict(pr), _dict(about)
        base = str(_dict(pr.get("base")).get("ref") or "")
        default = str(about.get("default_branch") or "")
        head = (head_sha or str(_dict(pr.get("head")).get("sha") or "")).lower()
        if not default or not base or not _SHA_RE.match(head):
            return (
                "GitHub did not name the pull request's base, the default branch or the head, so "
                "evalgate cannot tell which workflow this run executed: it shows no verdict.",
                [],
            )
        if base != default:
            return (
                f"This pull request targets the branch {code(base)}, not the default branch "
                f"{code(default)}: the gate judges only pull requests into the default branch, and a "
                "run on another base may have executed that branch's own workflow. Retarget the pull "
                f"request at {code(default)}.",
                [],
            )
        compare = client.checked("GET", f"/repos/{repo}/compare/{quote(base, safe='/')}...{head}").data
    except (GitHubError, ReadOnlyToken) as exc:
        what = getattr(exc, "message", None) or str(exc)
        return (
            f"evalgate could not ask GitHub which files this pull request changes ({inline(what, 200)}): "
            "it cannot tell whether this run executed the pull request's own workflow, and shows no "
            "verdict.",
            [],
        )
    files = _dict(compare).get("files")
    if not isinstance(files, list) or len(files) >= COMPARE_FILES_CAP:
        return (
            "GitHub's comparison of this pull request with the default branch lists no files, or is "
            "cut at 300: evalgate cannot tell whether this run executed the pull request's own "
            "workflow, so it shows no verdict.",
            [],
        )
    names = [
        str(f.get(key))
        for f in files
        if isinstance(f, dict)
        for key in ("filename", "previous_filename")
        if isinstance(f.get(key), str)
    ]
    changed = gate_definition_paths(names)
    if not changed:
        return None
    return (
        "This pull request changes the gate's own workflow or action, so its `pull_request` run "
        "executed the pull request's copy of it: whatever that run reported is not the gate's "
        "verdict, and none is shown here.",
        changed,
    )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def write_fallback(body: str, reason: str, env: Mapping[str, str]) -> str:
    """Append the notice and the report to the job summary; say where the report went."""
    summary = env.get("GITHUB_STEP_SUMMARY")
    print_commands(
        "::warning title=evalgate comment::"
        + escape_data(f"could not post the PR comment ({reason}); see the job summary")
    )
    if not summary:
        return "no GITHUB_STEP_SUMMARY: the report stays in its folder"
    try:
        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(FALLBACK_NOTICE.format(reason=reason or "HTTP 403") + body.rstrip("\n") + "\n")
    except OSError as exc:
        return f"the job summary could not be written ({exc}): the report stays in its folder"
    return f"the report was written to the job summary ({summary})"


def post_report(
    report_dir: str | os.PathLike[str],
    *,
    pr: int | None = None,
    repo: str | None = None,
    sha: str | None = None,
    env: Mapping[str, str] | None = None,
    strict: bool = False,
    provenance_overrides: Mapping[str, Any] | None = None,
    own_report: bool = False,
    verify_workflow: bool = False,
    **client_options: Any,
) -> CommentResult | None:
    """Render the sticky comment from report_dir/results.json and post it; fall back to the job
    summary on a 403.

    With strict=False (what `run --comment` uses) every failure, foreseen or not, is printed as a
    warning and None returned: the report is already on disk and the gate's exit code must not change.
    own_report=True (only `run --comment`, whose run has just written report_dir/REPORT.md itself)
    puts that full report into the job summary when the comment cannot be posted; otherwise the
    summary gets the rendered comment, never markdown from the folder.
    verify_workflow=True (`evalgate comment`, the workflow_run job) posts a verdict only for a run
    whose head changes no file of the gate's own workflow or action (`no_verdict_reason`).
    """
    env = os.environ if env is None else env
    try:
        return _post_report(
            Path(report_dir),
            pr,
            repo,
            sha,
            env,
            client_options,
            provenance_overrides,
            own_report,
            verify_workflow,
        )
    except EvalgateError as exc:
        if strict:
            raise
        print(f"evalgate: warning: no PR comment: {exc.message}", file=sys.stderr)
        if isinstance(exc, GitHubError) and exc.hint:
            print(f"  hint: {exc.hint}", file=sys.stderr)
    except Exception as exc:
        if strict:
            raise
        print(f"evalgate: warning: no PR comment: {type(exc).__name__}: {exc}", file=sys.stderr)
    return None


def provenance(env: Mapping[str, str], sha: str | None, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Who the comment is for, from the trusted event (never the artifact); flags win.

    In the workflow_run job: the run's head SHA, html_url, conclusion, head repository and branch.
    In a pull_request job (`run --comment`): the PR head and this run's URL.
    """
    event = read_event(env)
    run = event.get("workflow_run") if isinstance(event.get("workflow_run"), dict) else {}
    head = (
        ((event.get("pull_request") or {}).get("head") or {})
        if isinstance(event.get("pull_request"), dict)
        else {}
    )
    run_url = run.get("html_url")
    if not run_url and env.get("GITHUB_RUN_ID") and env.get("GITHUB_REPOSITORY"):
        server = env.get("GITHUB_SERVER_URL") or "https://github.com"
        run_url = f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
    found = {
        "head_sha": event_sha(env, sha),
        "run_url": run_url,
        "conclusion": run.get("conclusion"),
        "head_repo": ((run.get("head_repository") or {}).get("full_name"))
        or ((head.get("repo") or {}).get("full_name") if isinstance(head.get("repo"), dict) else None),
        "head_branch": run.get("head_branch") or head.get("ref"),
    }
    found.update({k: v for k, v in overrides.items() if v})
    return {k: (str(v) if v is not None else None) for k, v in found.items()}


def _post_report(
    folder: Path,
    pr: int | None,
    repo: str | None,
    sha: str | None,
    env: Mapping[str, str],
    client_options: Mapping[str, Any],
    overrides: Mapping[str, Any] | None = None,
    own_report: bool = False,
    verify_workflow: bool = False,
) -> CommentResult | None:
    from evalgate.report.comment import render_comment, render_no_verdict

    prov = provenance(env, sha, overrides or {})
    head_sha = prov["head_sha"]
    results = check_artifact(folder, head_sha)
    body = render_comment(results, prov)  # never markdown from the folder: see the module docstring
    summary_text = body
    if own_report:  # this run's own REPORT.md, just rendered: the full report for the job summary
        summary_text = read_artifact_file(folder, "REPORT.md", MAX_RESULTS_BYTES, cut=True) or body
    repo = repo or env.get("GITHUB_REPOSITORY")
    if not repo or repo.count("/") != 1:
        raise RefusedError(
            "no repository to comment on", hint="pass --repo OWNER/NAME or set GITHUB_REPOSITORY"
        )
    token = env.get("GITHUB_TOKEN") or env.get("GH_TOKEN")
    if not token:
        raise RefusedError(
            "no GitHub token", hint="set GITHUB_TOKEN (`env: GITHUB_TOKEN: ${{ github.token }}`)"
        )
    client = GitHubClient(token, api_url_from_env(env), log=_stderr, **client_options)
    number, how = resolve_pr(pr, head_sha, repo, env, client, prov.get("head_repo"), prov.get("head_branch"))
    if number is None:
        print(
            f"evalgate: no open pull request has head {head_sha} (from the run's head repository "
            "and branch); nothing posted (the PR was closed or has newer commits)"
        )
        return None
    if verify_workflow:
        refusal = no_verdict_reason(client, repo, number, head_sha)
        if refusal is not None:
            body = summary_text = render_no_verdict(prov, *refusal)
            print_commands(
                "::warning title=evalgate comment::"
                + escape_data(f"no verdict posted for {repo}#{number}: {refusal[0]}")
            )
    try:
        result = post_or_update_comment(repo, number, body, token=token, env=env, client=client)
    except GitHubHTTPError as exc:
        if exc.status != 404:
            raise
        # A wrong --pr, a deleted PR or a token that cannot see the repository: the user's input,
        # not an evalgate fault; the comment still goes to the job summary.
        where = write_fallback(summary_text, f"{repo}#{number} was not found (HTTP 404)", env)
        raise RefusedError(
            f"{repo}#{number}: not found (HTTP 404); {where}",
            hint="check the pull request number and that the token can see the repository",
        ) from None
    cut = " (cut to GitHub's 65,536-character limit)" if result.truncated else ""
    if result.fallback:
        where = write_fallback(summary_text, result.reason, env)
        print(f"evalgate: could not comment on {repo}#{number}: {result.reason or 'HTTP 403'}; {where}")
    else:
        print(
            f"evalgate: {result.action} the sticky comment on {repo}#{number} ({how}){cut}: "
            f"{result.url or ''}"
        )
    return result


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)
