"""Attack round (attack3): the baseline history under the label, and history_scope's failure mode.

Each case runs the restore step's real script (eval-gate.yml and the `init` template) in a
throwaway git repository whose HEAD is the PR, as tests/hostile_prs/test_baseline_history_only_grows.py
does, or the real CLI on a copy of the demo repository.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from helpers.workflow_steps import commit, git, load, run_script, step

from evalgate.gate import history as hist
from evalgate.github.workflows import gate_workflow

CONFIG = "baseline: baselines/m.json\n"
HISTORY, ANCHOR = "baselines/history/m.jsonl", "baselines/history/m.anchor.json"
INPUTS = f"evalgate.yml baselines/m.json {HISTORY} {ANCHOR}"


def baseline(acc: float, tag: str = "") -> bytes:
    doc = {"name": "m", "slices": {"overall": {"n": 100, "correct": round(acc * 100), "accuracy": acc}}}
    if tag:
        doc["tag"] = tag
    return (json.dumps(doc) + "\n").encode()


def extend(data: bytes, *records: dict) -> bytes:
    return hist.appended(hist.parse_history(data, "h") if data else hist.History(), list(records))


def update(old: bytes, new: bytes) -> dict:
    return hist.update_record("m", old, json.loads(old), new)


B0, B1 = baseline(0.90), baseline(0.88)
BASE_HISTORY = extend(extend(b"", hist.anchor_record("m", B0)), update(B0, B1))
BASE = {"baselines/m.json": B1, HISTORY: BASE_HISTORY, ANCHOR: B0}


@pytest.fixture(params=["eval-gate.yml", "init template"])
def workflow(request) -> dict:
    if request.param == "eval-gate.yml":
        return load("eval-gate.yml")
    return yaml.safe_load(gate_workflow("acme/evalgate@" + "a" * 40))


def write(root: Path, files: dict[str, bytes | None]) -> None:
    for rel, value in files.items():
        path = root / rel
        if path.exists():
            path.unlink()
        if value is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(value)


def restore(
    tmp_path: Path, workflow: dict, base: dict, pr: dict, *, approved: bool, scope: str = ""
) -> tuple[Path, list[str]]:
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    work = tmp_path / "work"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    write(work, {"evalgate.yml": CONFIG.encode(), **base})
    base_sha = commit(work, "base")
    git("checkout", "-q", "-b", "pr", cwd=work)
    write(work, pr)
    commit(work, "pr")
    runner = tmp_path / "runner"
    (runner / "venv" / "bin").mkdir(parents=True)
    python = runner / "venv" / "bin" / "python"
    # `scope`: shell run in place of history_scope (standing in for a bug or a crash of it)
    stand_in = f'case "$*" in *history_scope*) {scope} ;; esac\n' if scope else ""
    python.write_text(f'#!/bin/sh\n{stand_in}exec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    env = {
        "BASE_SHA": base_sha,
        "APPROVED": "true" if approved else "false",
        "VENV": str(runner / "venv"),
        "GATE_PATHS": "evalgate.yml baselines",
        "BASE_INPUTS": INPUTS,
        "GATE_CHANGES": str(runner / "changes.diff"),
        "REPLACED": str(runner / "replaced.txt"),
        "GITHUB_OUTPUT": str(runner / "output"),
        "RUNNER_TEMP": str(runner),
    }
    done = run_script(step(workflow, "the baselines from the base branch")["run"], work, env)
    assert done.returncode == 0, done.stderr
    return work, (runner / "replaced.txt").read_text(encoding="utf-8").split()


def test_a_labelled_pr_cannot_anchor_drift_at_a_baseline_the_base_never_had(tmp_path, workflow):
    """Attack: under evalgate:update-baseline the PR's history is the base's with lines added:
    update(B1 -> X) and anchor(X), where X holds the regressed checkpoint's own numbers and was
    never a baseline of the default branch; the bot's `baseline update` then appends
    update(X -> NEW). Every line chains, the base's bytes are a prefix, the anchor file is the one
    the last anchor line names: history_scope takes it, and the drift check of the labelled
    update compares the checkpoint with its own numbers (drift 0), so an update past
    gate.drift_tolerance passes without evalgate:approve-gate-change (docs/gate.md "Drift")."""
    x = baseline(0.50, "the regressed model, never merged")
    new = baseline(0.50, "what update-baseline-apply.yml writes")
    forged = extend(BASE_HISTORY, update(B1, x), hist.anchor_record("m", x), update(x, new))
    pr = {"baselines/m.json": new, HISTORY: forged, ANCHOR: x}
    work, replaced = restore(tmp_path, workflow, BASE, pr, approved=True)
    # The anchor the gate measures drift from must be one the default branch had.
    assert (work / ANCHOR).read_bytes() in (B0, B1), "the PR chose its own drift anchor"
    assert HISTORY in replaced and ANCHOR in replaced, "the PR's change is a gate change"


def test_a_labelled_pr_cannot_spend_the_drift_alpha_with_padding_lines(tmp_path, workflow):
    """Attack: same label, anchor untouched; the PR appends 60 update lines B1 -> B1 (each chained,
    each "replacing the baseline the line before left") before the bot's own line. The look
    becomes 63: alpha_63 = 0.05 * 6 / (pi^2 * 63^2) ~ 7.7e-6, so the drift check can no longer fail
    on any realistic slice (a fail turns into pass or inconclusive). The base's bytes are a prefix:
    history_scope takes it. The bot's update adds one line; a PR should not add any others."""
    new = baseline(0.80)
    padded = BASE_HISTORY
    for _ in range(60):
        padded = extend(padded, update(B1, B1))
    padded = extend(padded, update(B1, new))
    assert hist.parse_history(padded, "h").updates_since_anchor == 62
    pr = {"baselines/m.json": new, HISTORY: padded, ANCHOR: B0}
    work, replaced = restore(tmp_path, workflow, BASE, pr, approved=True)
    taken = hist.parse_history((work / HISTORY).read_bytes(), "h")
    assert taken.updates_since_anchor <= 2, f"look {taken.updates_since_anchor + 1} chosen by the PR"
    assert HISTORY in replaced, "the PR's change is a gate change"


@pytest.mark.parametrize(
    "scope",
    [
        "echo 'Traceback (most recent call last):' >&2; exit 1",
        "echo history-path=baselines/history/m.jsonl; exit 3",
        "echo history-path=baselines/history/m.jsonl; echo 'history-path=a b'; exit 0",
        "exit 2",
    ],
    ids=["crash", "bug-exit", "odd-line", "refused"],
)
def test_a_history_that_crashes_history_scope_is_not_taken_unchecked(tmp_path, workflow, scope):
    """Attack: a PR history that makes history_scope crash (it once did on `{"event": []}`), exit
    non-zero or print a line the step does not expect: the restore step's `|| true` swallowed it,
    no `history-path=` came back, and the PR's history and anchor were taken by the plain baseline
    rule, unchecked. Defence: the step fails closed: when history_scope does not answer cleanly
    the label takes none of the PR's files, and each change is a gate change."""
    bad = BASE_HISTORY + b'{"event":[]}\n'
    pr = {"baselines/m.json": baseline(0.5), HISTORY: bad, ANCHOR: baseline(0.5)}
    work, replaced = restore(tmp_path, workflow, BASE, pr, approved=True, scope=scope)
    assert (work / HISTORY).read_bytes() == BASE_HISTORY, "history taken without history_scope's check"
    assert (work / ANCHOR).read_bytes() == B0
    assert (work / "baselines/m.json").read_bytes() == B1
    assert {HISTORY, ANCHOR, "baselines/m.json"} <= set(replaced), "the PR's change is a gate change"


def test_a_malformed_pr_history_is_not_taken_under_the_label(tmp_path, workflow):
    """Attack: the same broken line with history_scope itself running: it must refuse the history
    (a located refusal, not a crash), and the base's copies are gated."""
    bad = BASE_HISTORY + b'{"event":[]}\n'
    pr = {"baselines/m.json": baseline(0.5), HISTORY: bad, ANCHOR: baseline(0.5)}
    work, replaced = restore(tmp_path, workflow, BASE, pr, approved=True)
    assert (work / HISTORY).read_bytes() == BASE_HISTORY
    assert (work / ANCHOR).read_bytes() == B0
    assert HISTORY in replaced and ANCHOR in replaced


@pytest.mark.parametrize(
    "line",
    [
        b'{"event":[]}\n',
        b'{"event":{}}\n',
        b"[1]\n",
        b"1e400\n",
        b'{"event":"anchor","name":NaN,"v":1,"seq":0,"prev":null,"anchor_sha256":"a","baseline_sha256":"a"}\n',
        b'{"anchor_sha256":"'
        + b"a" * 64
        + b'","baseline_sha256":"'
        + b"a" * 64
        + b'","event":"anchor","name":"m","prev":[],"seq":true,"v":1}\n',
        b'{"anchor_sha256":7,"baseline_sha256":7,"event":"anchor","name":"m","prev":null,"seq":0,"v":1.0}\n',
    ],
)
def test_a_malformed_history_line_is_refused_not_a_crash(tmp_path, monkeypatch, cli, line):
    """Attack: a history line of the wrong structure (`{"event": []}`, NaN, a bool for an int, a
    number for a hash) made parse_history raise TypeError/ValueError, so `validate` and `run`
    crashed (exit 3). Defence: every field's type is checked and any such error becomes a refusal
    naming file and line (exit 2): docs/gate.md "Drift"."""
    from helpers.hostile_repo import make_repo

    repo = make_repo(tmp_path, monkeypatch)
    (repo / "baselines" / "history").mkdir(exist_ok=True)
    (repo / "baselines" / "history" / "demo.jsonl").write_bytes(line)
    anchor = (repo / "baselines" / "demo.json").read_bytes()
    (repo / "baselines" / "history" / "demo.anchor.json").write_bytes(anchor)
    got = cli("validate")
    assert got.code == 2, (got.code, got.err[-600:])
    assert "demo.jsonl:1" in got.err
