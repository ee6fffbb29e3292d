"""`evalgate approval --repo OWNER/NAME --pr N --sha SHA --label LABEL`: does a maintainer's label
approve this PR at this commit? Exit 0 approved, 1 not approved (one line per reason), 2 a usage or
API error. The rule is in github/approval.py and docs/approval.md; the workflow maps the exit
code to its own output.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from evalgate.console import Console
from evalgate.errors import EXIT_PASS, EXIT_REGRESSION, GitHubError, RefusedError
from evalgate.github.approval import check_approval
from evalgate.github.rest import GitHubClient, ReadOnlyToken, api_url_from_env

_REPO_RE = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_SHA_RE = re.compile(r"[0-9a-fA-F]{40}")


def main(args: argparse.Namespace, console: Console) -> int:
    if not _REPO_RE.fullmatch(args.repo):
        raise RefusedError(f"--repo {args.repo!r}: expected OWNER/NAME")
    if not _SHA_RE.fullmatch(args.sha):
        raise RefusedError(f"--sha {args.sha!r}: expected a full 40-hex commit SHA")
    if args.pr <= 0:
        raise RefusedError(f"--pr {args.pr}: expected a pull request number")
    token = os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN")
    if not token:
        raise RefusedError(
            "no GitHub token", hint="set GITHUB_TOKEN (`env: GITHUB_TOKEN: ${{ github.token }}`)"
        )
    api_url = args.api_url or api_url_from_env()
    client = GitHubClient(token, api_url, log=lambda m: print(m, file=sys.stderr))
    try:
        why = check_approval(client, args.repo, args.pr, args.sha, args.label)
    except ReadOnlyToken as exc:
        # GitHubError is exit 3 (a bug); a token that may not read is the caller's setup: exit 2.
        raise RefusedError(
            f"the GitHub API refused to answer: {exc.message}",
            hint="the job needs `pull-requests: read`, `issues: read` and `actions: read` on the repository",
        ) from None
    except GitHubError as exc:
        raise RefusedError(exc.message, hint=exc.hint) from None
    where = f"{args.repo}#{args.pr} at {args.sha.lower()[:12]}"
    if why:
        print(f"evalgate: {args.label} does NOT approve {where}:")
        for reason in why:
            print(f"  - {reason}")
        return EXIT_REGRESSION  # "not approved", per the contract in docs/approval.md
    print(f"evalgate: {args.label} approves {where}")
    return EXIT_PASS
