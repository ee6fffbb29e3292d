"""The workflows `evalgate init` writes into a repository: the gate on every pull request, the
sticky comment posted from the trusted side (`eval-gate-comment.yml`), the badge on pushes to the
default branch (`badge.yml`), and the labelled baseline update in its three parts - the request on
the label (`update-baseline.yml`), the update itself started by it through workflow_run
(`update-baseline-apply.yml`: the only part that holds a write token), and the removal of the
approval labels on every push (`void-labels.yml`) - filled in from the package's templates
(defaults/workflow-*.yml, which are package data; docs/github.md, docs/approval.md,
docs/security.md).

They are this repository's own `.github/workflows/` files of the same names with one difference,
the one docs/github.md tells users to make: the trusted code is the evalgate release the workflows
pin (`OWNER/evalgate@SHA`, a commit SHA being safer than a tag), not the base commit or the default
branch, since the user's repository is not evalgate. evalgate is installed from it (hash-pinned
packages from its docker/requirements-workflow.txt), the Action is run from it, and the baseline
update builds its scoring image from its Dockerfile. tests/github/test_workflows.py holds each
template to its counterpart here.
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


def comment_workflow(action: str) -> str:
    """`.github/workflows/eval-gate-comment.yml` (workflow_run of the gate) pinned to `action`."""
    return _fill(_template("eval-gate-comment"), action, "gate")


def badge_workflow(action: str) -> str:
    """`.github/workflows/badge.yml` (pushes to main: the badge and the score cache) pinned to `action`."""
    return _fill(_template("badge"), action, "gate")


def update_baseline_workflow(action: str, name: str) -> str:
    """`.github/workflows/update-baseline.yml` (the label's request) pinned to `action`."""
    return _fill(_template("update-baseline"), action, name)


def update_baseline_apply_workflow(action: str, name: str) -> str:
    """`.github/workflows/update-baseline-apply.yml` pinned to `action`, rewriting baselines/NAME.json."""
    return _fill(_template("update-baseline-apply"), action, name)


def void_labels_workflow(action: str) -> str:
    """`.github/workflows/void-labels.yml`: the approval labels go on every push."""
    return _fill(_template("void-labels"), action, "gate")


__all__ = [
    "ACTION",
    "PLACEHOLDER",
    "badge_workflow",
    "comment_workflow",
    "gate_workflow",
    "update_baseline_apply_workflow",
    "update_baseline_workflow",
    "void_labels_workflow",
]
