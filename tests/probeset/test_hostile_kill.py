"""`probes import` and `probes deprecate` change the probe files and MANIFEST.json together: the
real command, killed after each file operation, leaves the old set or the new one (once the next
authoring command has run), never a new probe file with the old manifest, and no temporary file.
The commands that judge the set (`validate`, `run`) never apply a journal: they refuse it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.hostile_repo import make_repo

EVAL = Path("data/eval")
NAMES = ("probes.jsonl", "adversarial.jsonl", "ordinal.jsonl", "MANIFEST.json")


def evalgate(repo: Path, *args: str, kill_after: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    env["EVALGATE_HOME"] = str(repo)
    if kill_after is not None:
        env["EVALGATE_TEST_KILL_AFTER_STEP"] = str(kill_after)
    return subprocess.run(
        [sys.executable, "-m", "evalgate", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def snapshot(repo: Path) -> dict[str, bytes]:
    return {n: (repo / EVAL / n).read_bytes() for n in NAMES}


def new_probes(repo: Path) -> Path:
    first = json.loads((repo / EVAL / "probes.jsonl").read_text(encoding="utf-8").splitlines()[0])
    rows = []
    for i, prompt in enumerate(
        ("By now I have finally ___ the whole letter.", "Believe it or not, I have ___ to the mayor twice.")
    ):
        rows.append({**first, "id": f"probe-en-write-pp-1sg-9{i}1", "prompt": prompt})
    path = repo / "new.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def sets(tmp_path, monkeypatch):
    """The old and the new probe set (the new one from an import that ran to the end)."""
    repo = make_repo(tmp_path, monkeypatch)
    old = snapshot(repo)
    source = new_probes(repo)
    done = evalgate(repo, "probes", "import", str(source))
    assert done.returncode == 0, done.stdout + done.stderr
    new = snapshot(repo)
    assert new != old and new["MANIFEST.json"] != old["MANIFEST.json"]
    return repo, old, new, source


@pytest.mark.integration
def test_an_import_killed_at_any_step_leaves_the_old_set_or_the_new_one(sets):
    repo, old, new, source = sets
    outcomes = set()
    for step in range(1, 6):  # 2 staged files, the journal, 2 renames
        for name, data in old.items():
            (repo / EVAL / name).write_bytes(data)
        killed = evalgate(repo, "probes", "import", str(source), kill_after=step)
        assert killed.returncode != 0, (step, killed.stdout)
        pending = (repo / EVAL / ".evalgate-journal.json").exists()
        if pending:  # past the commit point: a reader refuses the half-done set, touching nothing
            before = snapshot(repo)
            refused = evalgate(repo, "validate")
            assert refused.returncode == 2, refused.stdout + refused.stderr
            assert "an unfinished change of the probe set" in refused.stderr
            assert snapshot(repo) == before and (repo / EVAL / ".evalgate-journal.json").exists()
        done = evalgate(repo, "probes", "seal")  # the next authoring command finishes or drops it
        assert done.returncode == 0, done.stdout + done.stderr
        check = evalgate(repo, "validate")
        now = snapshot(repo)
        assert now in (old, new), f"killed after step {step}: a mixed set"
        outcomes.add("new" if now == new else "old")
        assert check.returncode == 0, check.stdout + check.stderr
        leftovers = [p.name for p in (repo / EVAL).iterdir() if p.name.startswith(".")]
        assert leftovers == [], (step, leftovers)
    assert outcomes == {"old", "new"}  # the kills landed on both sides of the commit point


@pytest.mark.integration
def test_a_journal_naming_a_file_outside_its_folder_is_refused(sets, tmp_path):
    repo, _, _, _ = sets
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    (repo / EVAL / ".evalgate-journal.json").write_text(
        json.dumps({"replace": [{"target": "../../../victim.txt", "staged": ".x.evalgate-new"}]}),
        encoding="utf-8",
    )
    check = evalgate(repo, "probes", "seal")
    assert check.returncode == 2
    assert "not a journal evalgate wrote" in check.stdout + check.stderr
    assert victim.read_text(encoding="utf-8") == "keep me\n"


@pytest.mark.integration
@pytest.mark.parametrize("command", [("validate",), ("run", "--out", "out")])
def test_a_journal_is_never_applied_by_the_commands_that_judge_the_set(sets, command):
    """A committed journal and staged file would replace a file the gate reads (a baseline beside
    the manifest): `validate` and `run` refuse the set, naming the journal, and rename nothing."""
    repo, _, _, _ = sets
    folder = repo / EVAL
    (folder / "baseline.json").write_text("the base's\n", encoding="utf-8")
    (folder / ".baseline.json.evalgate-new").write_text("the PR's\n", encoding="utf-8")
    journal = {"replace": [{"target": "baseline.json", "staged": ".baseline.json.evalgate-new"}]}
    (folder / ".evalgate-journal.json").write_text(json.dumps(journal), encoding="utf-8")
    check = evalgate(repo, *command)
    assert check.returncode == 2, check.stdout + check.stderr
    assert ".evalgate-journal.json: an unfinished change of the probe set" in check.stderr
    assert (folder / "baseline.json").read_text(encoding="utf-8") == "the base's\n"
    assert (folder / ".evalgate-journal.json").exists()
