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


# A runner label (`runs-on`), as GitHub's labels are spelled; nothing else reaches the YAML.
LABEL_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
HOSTED = "ubuntu-24.04"


def on_runner(text: str, job: str, labels: tuple[str, ...] | None) -> str:
    """The workflow with job `job` running on the runner `labels` name (all of them: a runner must
    carry every label), in place of the hosted runner; None or () keeps the hosted one. Only the
    jobs that load the model are moved (`init --runner`, docs/github.md "A GPU runner")."""
    if not labels:
        return text
    bad = [label for label in labels if not LABEL_PATTERN.fullmatch(label)]
    if bad:
        raise ValueError(f"not a runner label: {bad[0]!r}")
    start = text.index(f"\n  {job}:\n") + 1
    nxt = re.search(r"^  [A-Za-z0-9_-]+:\n", text[start + 1 :], re.MULTILINE)
    end = start + 1 + nxt.start() if nxt else len(text)
    line = f"    runs-on: {HOSTED}\n"
    at = text.find(line, start, end)
    if at < 0:
        raise ValueError(f"job {job}: no `runs-on: {HOSTED}` to replace")
    # JSON strings in a flow sequence: a label such as `on` or `true` stays a string in YAML.
    value = ", ".join(f'"{label}"' for label in labels)
    return text[:at] + f"    runs-on: [{value}]\n" + text[at + len(line) :]


def gate_workflow(action: str, runner: tuple[str, ...] | None = None) -> str:
    """`.github/workflows/eval-gate.yml` pinned to `action` (OWNER/NAME@REF), its gate job on
    the runner `runner` labels (default: the hosted ubuntu-24.04)."""
    return on_runner(_fill(_template("eval-gate"), action, "gate"), "gate", runner)


MAX_SHARDS = 64  # more jobs than a repository's concurrent runners gain nothing (docs/github.md)

_SHARDED_HEADER = """\
# The gate split over @@SHARDS@@ runners, written by `evalgate init --shards @@SHARDS@@` (docs/github.md,
# "Sharded gate"): for a model too slow to score on one runner. Each job of the `shard` matrix
# runs the steps of the single-runner gate below, loads the model once and scores a fixed 1/@@SHARDS@@ of
# the probes (`evalgate run --shard I/@@SHARDS@@`, in the scoring container, no network); the `gate` job
# merges the parts (`evalgate merge`) into the results.json, report and verdict one runner would
# have written, byte for byte, and gates. A shard never gates and a missing or refused shard
# refuses the merge: the `gate` check is never green for probes no shard scored.
#
"""


def _cut(text: str, start: str, end: str | None) -> tuple[str, str, str]:
    """(before `start`, from `start` up to `end`, from `end` on); a template without them is a bug."""
    i = text.index(start)
    j = text.index(end, i) if end is not None else len(text)
    return text[:i], text[i:j], text[j:]


def sharded_gate_workflow(action: str, shards: int, runner: tuple[str, ...] | None = None) -> str:
    """`.github/workflows/eval-gate.yml` as an Actions matrix of `shards` jobs and a merge job
    named `gate` (the check branch protection requires), made from the single-runner gate's
    template so that both keep the same trusted steps (docs/security.md)."""
    if not 2 <= shards <= MAX_SHARDS:
        raise ValueError(f"shards: 2 to {MAX_SHARDS}, got {shards}")
    text = gate_workflow(action)
    head, job, _ = _cut(text, "  gate:\n", None)
    head = _SHARDED_HEADER.replace("@@SHARDS@@", str(shards)) + head
    n = str(shards)

    # The shard jobs: the gate job with a matrix, scoring one shard, uploading its partial result.
    shard = job.replace("  gate:\n", "  shard:\n", 1)
    shard = shard.replace(
        "    timeout-minutes: 60\n",
        "    timeout-minutes: 60\n    strategy:\n      fail-fast: false\n      matrix:\n"
        f"        shard: [{', '.join(str(i) for i in range(1, shards + 1))}]\n",
        1,
    )
    before, gate_step, _ = _cut(shard, "      - name: Gate\n", "      - name: Collect the report files")
    gate_step = (
        gate_step.replace(
            "      - name: Gate\n", f"      - name: Score shard ${{{{ matrix.shard }}}} of {n}\n", 1
        )
        .replace(
            '          comment: "false"\n',
            f'          comment: "false"\n          shard: ${{{{ matrix.shard }}}}/{n}\n',
            1,
        )
        # A shard loads no baseline: the merge job verifies it and shows the PR's gate changes.
        .replace("          gate-changes: ${{ runner.temp }}/evalgate-gate-changes.diff\n", "", 1)
        .replace("          verify-baseline: ${{ steps.restore.outputs.verify-baseline == 'true' }}\n", "", 1)
    )
    shard = before + gate_step + _PART_STEPS

    # The merge job: the gate job without the checkpoint, gating the downloaded parts.
    merge = job.replace(
        "    timeout-minutes: 60\n",
        "    needs: shard\n"
        "    # Also when a shard failed: the merge then refuses (a missing or refused part), so the\n"
        "    # required `gate` check fails instead of being skipped (a skipped check reads as passed).\n"
        "    if: ${{ !cancelled() }}\n"
        "    timeout-minutes: 60\n",
        1,
    ).replace("          lfs: true\n", "          lfs: false  # the merge never reads the checkpoint\n", 1)
    before, _, after = _cut(merge, "      # A checkpoint by reference", "      - name: Gate\n")
    merge = (
        before
        + _DOWNLOAD_PARTS
        + after.replace(
            "          checkpoint-cache: ${{ runner.temp }}/evalgate-checkpoints\n",
            "          merge: ${{ runner.temp }}/evalgate-parts\n",
            1,
        )
    )
    out = on_runner(head + shard + "\n" + merge, "shard", runner)  # the merge loads no model
    if "checkpoint-cache" in merge or "shard: ${{" not in shard or "merge: ${{" not in merge:
        raise ValueError("workflow-eval-gate.yml changed: the sharded gate cannot be made from it")
    return out


_PART_STEPS = """\
      - name: Collect the partial result (a regular file only)
        if: ${{ !cancelled() && steps.scope.outputs.relevant == 'true' }}
        env:
          PART_DIR: ${{ runner.temp }}/evalgate-part
        run: |
          set -euo pipefail
          rm -rf -- "$PART_DIR" && mkdir -p -- "$PART_DIR"
          # The Action empties evalgate-out before the run; a link there now is not the run's.
          part=evalgate-out/results.json
          if [ ! -L evalgate-out ] && [ -f "$part" ] && [ ! -L "$part" ]; then
            cp -- "$part" "$PART_DIR/results.json"
          fi

      # A refused shard's part is uploaded too: the merge names it instead of a missing shard.
      - name: Upload the partial result
        if: ${{ !cancelled() && steps.scope.outputs.relevant == 'true' }}
        uses: actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2
        with:
          name: evalgate-shard-${{ matrix.shard }}
          path: ${{ runner.temp }}/evalgate-part/results.json
          if-no-files-found: error
          retention-days: 7
"""

_DOWNLOAD_PARTS = """\
      # The shards' partial results, from this run's matrix, downloaded outside the workspace (where
      # the PR cannot have put a part of its own); the Action mounts them read-only and `evalgate
      # merge` checks that they are the shards of one run, each exactly once.
      - name: Download the shards' partial results
        if: steps.scope.outputs.relevant == 'true'
        uses: actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093 # v4.3.0
        with:
          pattern: evalgate-shard-*
          path: ${{ runner.temp }}/evalgate-parts

"""


def comment_workflow(action: str) -> str:
    """`.github/workflows/eval-gate-comment.yml` (workflow_run of the gate) pinned to `action`."""
    return _fill(_template("eval-gate-comment"), action, "gate")


def badge_workflow(action: str, runner: tuple[str, ...] | None = None) -> str:
    """`.github/workflows/badge.yml` (pushes to main: the badge and the score cache) pinned to `action`."""
    return on_runner(_fill(_template("badge"), action, "gate"), "gate", runner)


def update_baseline_workflow(action: str, name: str) -> str:
    """`.github/workflows/update-baseline.yml` (the label's request) pinned to `action`."""
    return _fill(_template("update-baseline"), action, name)


def update_baseline_apply_workflow(action: str, name: str, runner: tuple[str, ...] | None = None) -> str:
    """`.github/workflows/update-baseline-apply.yml` pinned to `action`, rewriting baselines/NAME.json."""
    return on_runner(_fill(_template("update-baseline-apply"), action, name), "score", runner)


def void_labels_workflow(action: str) -> str:
    """`.github/workflows/void-labels.yml`: the approval labels go on every push."""
    return _fill(_template("void-labels"), action, "gate")


__all__ = [
    "ACTION",
    "LABEL_PATTERN",
    "MAX_SHARDS",
    "PLACEHOLDER",
    "badge_workflow",
    "comment_workflow",
    "gate_workflow",
    "on_runner",
    "sharded_gate_workflow",
    "update_baseline_apply_workflow",
    "update_baseline_workflow",
    "void_labels_workflow",
]
