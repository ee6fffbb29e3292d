"""Each suite seals its own manifest, and its version only moves forward against the baseline:
`validate` and `run` refuse a suite's version set back, naming the suite and its own manifest file
(docs/suites.md). Real files, the real demo checkpoint, through the CLI.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.items import write_items
from helpers.paths import REPO, allow_shipped_data

from evalgate.cli import main

CHECKPOINT = REPO / "data" / "checkpoints" / "demo"
QUIZ = """\
  quiz:
    kind: multiple-choice
    probes: [quiz/items.jsonl]
    slices: [topic]
"""
TRIVIA = """\
  trivia:
    kind: multiple-choice
    probes: [trivia/items.jsonl]
    slices: [topic]
"""
REST = f"""\
test: null
baseline: baselines/suites.json
checkpoint: {CHECKPOINT}
"""


def _config(root: Path, *suites: str) -> None:
    (root / "evalgate.yml").write_text("suites:\n" + "".join(suites) + REST, encoding="utf-8")


def _set_version(manifest: Path, version: str) -> None:
    doc = json.loads(manifest.read_text(encoding="utf-8"))
    doc["version"] = version
    manifest.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


@pytest.fixture
def project(tmp_path, monkeypatch):
    write_items(tmp_path / "quiz" / "items.jsonl", "quiz", 6, 1)
    write_items(tmp_path / "trivia" / "items.jsonl", "trivia", 6, 2)
    monkeypatch.chdir(tmp_path)
    allow_shipped_data(monkeypatch)
    return tmp_path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Two suites, trivia sealed at 1.2.0, quiz at its first version; the baseline scored both
    (scored once for the module: each test works on a copy)."""
    root = tmp_path_factory.mktemp("suites") / "repo"
    write_items(root / "quiz" / "items.jsonl", "quiz", 6, 1)
    write_items(root / "trivia" / "items.jsonl", "trivia", 6, 2)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        allow_shipped_data(mp)
        _config(root, QUIZ, TRIVIA)
        assert main(["probes", "seal"]) == 0
        _set_version(root / "trivia" / "MANIFEST.json", "1.2.0")
        assert main(["baseline", "update", "--name", "suites"]) == 0
    return root


@pytest.fixture
def two_suite_baseline(built, tmp_path, monkeypatch):
    root = tmp_path / "repo"
    shutil.copytree(built, root)
    monkeypatch.chdir(root)
    allow_shipped_data(monkeypatch)
    return root


def _no_default_manifest(text: str) -> None:
    assert "data/eval/MANIFEST.json" not in text  # a file a suites project does not have


@pytest.mark.slow
def test_the_baseline_records_each_suites_manifest_version_and_file(two_suite_baseline):
    doc = json.loads((two_suite_baseline / "baselines" / "suites.json").read_text(encoding="utf-8"))
    suites = doc["probe_set"]["suites"]
    assert suites["trivia"]["version"] == "1.2.0"
    assert suites["trivia"]["manifest"] == "trivia/MANIFEST.json"
    assert suites["quiz"]["manifest"] == "quiz/MANIFEST.json"
    assert all(isinstance(s["digest"], str) and len(s["digest"]) == 64 for s in suites.values())


@pytest.mark.slow
def test_validate_refuses_a_suites_version_set_back_naming_suite_and_file(two_suite_baseline, cli):
    """Attack: a PR rolls one suite's manifest back to an older version (to re-seal it from
    scratch, say); the whole set has no version, so only the suite's own record can tell."""
    _set_version(two_suite_baseline / "trivia" / "MANIFEST.json", "1.1.0")
    got = cli("validate")
    assert got.code == 2, got.out + got.err
    wanted = "error: trivia/MANIFEST.json: version: suite trivia: the manifest version 1.1.0 is older than"
    assert wanted in got.out
    _no_default_manifest(got.out + got.err)


@pytest.mark.slow
def test_run_refuses_a_suites_version_set_back_naming_its_manifest(two_suite_baseline, cli):
    _set_version(two_suite_baseline / "trivia" / "MANIFEST.json", "1.1.0")
    got = cli("run", "--out", "out")
    assert got.code == 2, got.out + got.err
    text = got.out + got.err
    assert "manifest version went down" in text and "trivia/MANIFEST.json" in text
    _no_default_manifest(text)


@pytest.mark.slow
def test_a_baseline_without_the_per_suite_record_still_refuses(two_suite_baseline, cli):
    """A two-suite baseline written before `probe_set.suites` existed keeps each version in its
    yardstick (`yardstick.suite_versions`): validate reads it there."""
    path = two_suite_baseline / "baselines" / "suites.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    del doc["probe_set"]["suites"]
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    _set_version(two_suite_baseline / "trivia" / "MANIFEST.json", "1.1.0")
    got = cli("validate")
    assert got.code == 2 and "suite trivia: the manifest version 1.1.0" in got.out, got.out + got.err


@pytest.mark.slow
def test_a_second_suite_at_a_lower_version_than_a_one_suite_baseline_is_no_going_back(project, cli):
    """A one-suite baseline (quiz at 2.0.0) and a PR adding trivia at its first version: trivia
    had no version to keep, and quiz's stays where it was; neither is a version going back."""
    _config(project, QUIZ)
    assert cli("probes", "seal").code == 0
    _set_version(project / "quiz" / "MANIFEST.json", "2.0.0")
    assert cli("baseline", "update", "--name", "suites").code == 0
    _config(project, QUIZ, TRIVIA)
    assert cli("probes", "seal", "--suite", "trivia").code == 0
    got = cli("validate")
    assert got.code == 0, got.out + got.err
    got = cli("run", "--out", "out")
    # a second suite is a gate change (slice keys, each probe's suite), but no version went back
    assert got.code == 2 and "gate.slices: gate/scoring rule changed" in got.err, got.out + got.err
    assert "manifest version went down" not in got.out + got.err
    # and quiz going back under the two-suite configuration is still seen, in quiz's manifest
    _set_version(project / "quiz" / "MANIFEST.json", "1.0.0")
    got = cli("validate")
    assert got.code == 2, got.out + got.err
    wanted = "error: quiz/MANIFEST.json: version: suite quiz: the manifest version 1.0.0 is older than 2.0.0"
    assert wanted in got.out
