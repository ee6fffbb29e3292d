"""Hostile PR: a module in the pull request's tree runs where a workflow starts Python (review round 3).

`python -m MOD` puts the working folder first on sys.path, and a workflow's working folder is the
PR's tree (or, in a privileged job, a tree a merged PR wrote). So every Python a workflow or the
Action starts runs with `-P` (and PYTHONSAFEPATH=1 for the interpreters it starts) or `-I`:
nothing the PR commits is ever imported. The structural case reads every `run:` script of this
repository's workflows, action.yml and the templates `evalgate init` writes; the runner's `python`
stand-in (helpers/workflow_runner.py) imports from the working folder as CPython does, so the
whole-job case fails when a step forgets it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers.hostile_pr import GitHubRepo, swap_in_regressed
from helpers.paths import REPO
from helpers.workflow_runner import Runner

from evalgate.github.workflows import (
    badge_workflow,
    comment_workflow,
    gate_workflow,
    update_baseline_apply_workflow,
    update_baseline_workflow,
    void_labels_workflow,
)

PIN = "acme/evalgate@" + "a" * 40

FAKE_VENV = '''\
"""What `python -m venv DIR` imports when the working folder is a pull request's tree."""
import os
import sys

target = sys.argv[-1]
bindir = os.path.join(target, "bin")
os.makedirs(bindir, exist_ok=True)
scripts = {
    "pip": "exit 0\\n",
    "python": "echo relevant=false; echo gate-paths=evalgate.yml; echo base-inputs=evalgate.yml\\n",
    "evalgate": "exit 0\\n",
}
for name, body in scripts.items():
    path = os.path.join(bindir, name)
    with open(path, "w") as fh:
        fh.write("#!/bin/sh\\n" + body)
    os.chmod(path, 0o755)
'''


@pytest.mark.slow
def test_a_venv_module_in_the_pr_never_runs_in_the_gate_job(github_repo: GitHubRepo):
    """eval-gate.yml's install step ran `python -m venv "$VENV"` in the workspace, the PR's merge
    commit, without -P: a `venv.py` the PR commits at the root ran instead of the standard
    library's, before any check, and wrote a "venv" whose python answered the scope step with
    relevant=false: green on the regressed checkpoint."""

    def attack(tree: Path) -> None:
        swap_in_regressed(tree)
        (tree / "venv.py").write_text(FAKE_VENV)

    pr = github_repo.pull_request(attack)
    job = github_repo.run_gate(pr)
    assert job.step("scope").outputs.get("relevant") == "true", job.explain()
    assert job.conclusion == "failure", job.explain()
    assert job.step("Gate").outputs.get("verdict") == "fail", job.explain()


# -- every Python a workflow starts ------------------------------------------------------------------

PYTHON = re.compile(r"python(3(\.\d+)?)?")


def words(script: str) -> list[str]:
    """The script's words as bash parses it: bash prints the script back as a function body (no
    comments, one command per line), and shlex splits that into words and operators."""
    done = subprocess.run(
        [
            "bash",
            "--noprofile",
            "--norc",
            "-c",
            'eval "__script() {\n$1\n}" && declare -f __script',
            "_",
            script,
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, f"bash cannot parse the script: {done.stderr}\n{script}"
    lex = shlex.shlex(done.stdout, posix=True, punctuation_chars=True)
    lex.commenters = ""
    return list(lex)


def unsafe_pythons(script: str) -> list[str]:
    """Each Python started without -P or -I before its script, `-m` or `-c`, as `WORD ARGS...`."""
    found = []
    toks = words(script)
    for n, word in enumerate(toks):
        if not PYTHON.fullmatch(word.rsplit("/", 1)[-1]):
            continue
        safe, i = False, n + 1
        while i < len(toks):  # the interpreter's options, up to its script, `-m`, `-c` or `-`
            arg = toks[i]
            if arg in ("-m", "-c", "-") or not arg.startswith("-") or arg.startswith("--"):
                break
            letters = re.split(r"[WX]", arg[1:], maxsplit=1)[0]  # -W/-X take the rest as a value
            safe = safe or "P" in letters or "I" in letters
            i += 2 if arg in ("-W", "-X") else 1
        if not safe:
            found.append(" ".join(toks[n : n + 4]))
    return found


def run_scripts() -> dict[str, list[str]]:
    """Every `run:` script, by file: this repository's workflows and action, the init templates."""
    files: dict[str, dict] = {}
    for path in sorted((REPO / ".github" / "workflows").glob("*.y*ml")):
        files[str(path.relative_to(REPO))] = yaml.safe_load(path.read_text(encoding="utf-8"))
    files["action.yml"] = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    for name, text in {
        "workflow-eval-gate.yml": gate_workflow(PIN),
        "workflow-eval-gate-comment.yml": comment_workflow(PIN),
        "workflow-badge.yml": badge_workflow(PIN),
        "workflow-update-baseline.yml": update_baseline_workflow(PIN, "gate"),
        "workflow-update-baseline-apply.yml": update_baseline_apply_workflow(PIN, "gate"),
        "workflow-void-labels.yml": void_labels_workflow(PIN),
    }.items():
        files[f"src/evalgate/defaults/{name}"] = yaml.safe_load(text)
    templates = {p.name for p in (REPO / "src" / "evalgate" / "defaults").glob("workflow-*.yml")}
    assert templates <= {n.rsplit("/", 1)[-1] for n in files}, "a template this test does not read"
    out: dict[str, list[str]] = {}
    for name, doc in files.items():
        steps = [s for job in (doc.get("jobs") or {}).values() for s in job.get("steps") or []]
        steps += (doc.get("runs") or {}).get("steps") or []
        out[name] = [s["run"] for s in steps if isinstance(s, dict) and "run" in s]
    return out


SCRIPTS = run_scripts()


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_every_python_a_workflow_starts_ignores_the_working_folder(name):
    """A workflow's working folder is a PR's tree: `python -m venv`, `python -m pip` or a script
    started there without -P/-I imports the PR's module of that name (or of any standard library
    module it imports) first."""
    assert SCRIPTS[name], f"{name}: no run: script read"
    bad = [call for script in SCRIPTS[name] for call in unsafe_pythons(script)]
    assert not bad, f"{name}: Python started without -P or -I: {bad}"


@pytest.mark.parametrize(
    ("script", "unsafe"),
    [
        ('python -m venv "$VENV"', True),
        ('x=$(python3 -m pip --version) && echo "$x"', True),
        ('"$VENV/bin/python" -m evalgate.github.pr_scope --base "$B"', True),
        ("if true; then python3.11 scripts/pin.py a b; fi", True),
        ("python -W ignore -m venv v", True),
        ("python -W ignore -P -m venv v", False),
        ("python -XP -m venv v", True),  # -X takes P as its value: not -P
        ('PYTHONSAFEPATH=1 python -I -m venv "$VENV"', False),
        ('PYTHONSAFEPATH=1 "$VENV/bin/python" -P -m evalgate.github.pr_scope', False),
        ("python -BP -m venv v  # python -m venv in a comment", False),
        ('echo "${label#evalgate:}" && python3 -I scripts/pin.py', False),
    ],
)
def test_the_scan_tells_a_safe_python_from_an_unsafe_one(script, unsafe):
    assert bool(unsafe_pythons(script)) is unsafe, unsafe_pythons(script)


# -- the runner's python stand-in reads the working folder as CPython does -------------------------


def stand_in(tmp_path: Path) -> Path:
    runner = Runner(tmp_path / "runner", repository="acme/models", event_name="push", event={}, sha="0" * 40,
                    ref="refs/heads/main")  # fmt: skip
    return runner.tools / "python"


@pytest.mark.parametrize(
    ("options", "env", "runs_the_prs"),
    [
        ([], {}, True),
        (["-B"], {}, True),
        (["-E"], {"PYTHONSAFEPATH": "1"}, True),  # -E ignores PYTHONSAFEPATH
        (["-P"], {}, False),
        (["-I"], {}, False),
        (["-BP"], {}, False),
        ([], {"PYTHONSAFEPATH": "1"}, False),
    ],
)
def test_the_runners_python_runs_a_module_of_the_working_folder_as_cpython_does(
    tmp_path, options, env, runs_the_prs
):
    python = stand_in(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    (work / "venv.py").write_text("import sys\nprint('the PR venv', sys.argv[1:])\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run(
        [str(python), *options, "-m", "venv", str(tmp_path / "v")],
        cwd=work,
        env={**clean, **env, "FAKE_STATE": str(tmp_path / "runner")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert ("the PR venv" in done.stdout) is runs_the_prs, done.stdout
    assert (tmp_path / "v" / "bin" / "pip").exists() is not runs_the_prs


def test_the_runners_python_refuses_a_module_that_would_import_the_working_folders_stdlib(tmp_path):
    python = stand_in(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    (work / "shutil.py").write_text("raise SystemExit('the PR shutil')\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    run = {"cwd": work, "capture_output": True, "text": True, "timeout": 60}
    env = {**clean, "FAKE_STATE": str(tmp_path / "runner")}
    done = subprocess.run([str(python), "-m", "venv", str(tmp_path / "v")], env=env, **run)
    assert done.returncode != 0 and "shutil.py" in done.stderr, done.stderr
    done = subprocess.run([str(python), "-P", "-m", "venv", str(tmp_path / "v")], env=env, **run)
    assert done.returncode == 0, done.stderr
