"""The two workflows `evalgate init` writes into a repository: the gate on every pull request and
the labelled baseline update (docs/github.md, docs/approval.md, docs/security.md), filled in from
the package's templates (defaults/workflow-*.yml, which are package data).

They are this repository's own `.github/workflows/eval-gate.yml` and `update-baseline.yml` with
one difference, the one docs/github.md tells users to make: the trusted code is the evalgate
release the workflows pin (`OWNER/evalgate@SHA`, a commit SHA being safer than a tag), not the base
commit, since the user's repository is not evalgate. evalgate is installed from it, the Action is
run from it, and the baseline update builds its scoring image from its Dockerfile.
"""

from __future__ import annotations

import re
from importlib import resources

# OWNER/NAME@REF: a GitHub repository and a commit SHA (or a tag). Nothing else reaches the YAML.
ACTION = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}@[A-Za-z0-9._-]{1,100}")
PLACEHOLDER = "OWNER/evalgate@SHA"
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")


def _template(name: str) -> str:
    return resources.files("evalgate").joinpath("defaults", f"workflow-{name}.yml").read_text("utf-8")


def _fill(template: str, action: str, name: str) -> str:
    if not ACTION.fullmatch(action) or ".." in action:
        raise ValueError(f"not OWNER/NAME@REF: {action!r}")
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a suite name: {name!r}")
    repo, ref = action.split("@")
    return (
        template.replace("@@ACTION@@", action)
        .replace("@@REPO@@", repo)
        .replace("@@REF@@", ref)
        .replace("@@NAME@@", name)
    )


def gate_workflow(action: str) -> str:
    """`.github/workflows/eval-gate.yml` pinned to `action` (OWNER/NAME@REF)."""
    return _fill(_template("eval-gate"), action, "gate")


def update_baseline_workflow(action: str, name: str) -> str:
    """`.github/workflows/update-baseline.yml` pinned to `action`, rewriting baselines/NAME.json."""
    return _fill(_template("update-baseline"), action, name)


__all__ = ["ACTION", "PLACEHOLDER", "gate_workflow", "update_baseline_workflow"]
