"""Adding a second suite to a project `init` made (issue 26): the first suite's items keep their
identity (no "(no suite) -> suite quiz" change) and their pairing, and the first suite's template
is compared on its own, so the baseline still gates; a changed template of that suite is still
refused (gate/compare.py, gate/yardstick.py, docs/suites.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.paths import REPO

ROWS = [
    ("Which city is the capital of France?", ["Paris", "Rome", "Berlin"]),
    ("Which city is the capital of Peru?", ["Lima", "Quito", "Bogota"]),
    ("Which river flows through Cairo?", ["Nile", "Amazon", "Volga"]),
]
TRIVIA = {"id": "tr-1", "prompt": "Which ocean is the largest?", "candidates": ["Pacific", "Atlantic"],
          "expected": "Pacific", "slices": {"subject": "geo"}}  # fmt: skip


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(REPO / "data" / "checkpoints" / "demo", tmp_path / "checkpoints" / "demo")
    rows = [{"question": q, "choices": c, "answer": 0, "subject": "geo"} for q, c in ROWS]
    (tmp_path / "i.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = cli(
        "init", "--suite", "quiz", "--items", "i.jsonl", "--from", "mmlu", "--checkpoint", "checkpoints/demo"
    )
    assert done.code == 0, done.out + done.err
    (tmp_path / "tr").mkdir()
    (tmp_path / "tr" / "items.jsonl").write_text(json.dumps(TRIVIA) + "\n", encoding="utf-8")
    config = (tmp_path / "evalgate.yml").read_text(encoding="utf-8")
    more = "\n  trivia:\n    kind: multiple-choice\n    probes: [tr/items.jsonl]\n    slices: [subject]\n"
    (tmp_path / "evalgate.yml").write_text(
        config.replace("\ntest: null", more + "\ntest: null", 1), encoding="utf-8"
    )
    assert cli("probes", "seal").code == 0
    return tmp_path


@pytest.mark.slow
def test_the_first_suites_items_keep_their_identity_and_pairing(project, cli):
    got = cli("run")
    said = got.out + got.err
    assert got.code == 2, said  # adding a suite is a gate change, to approve
    assert "probe content changed" not in said and "(no suite)" not in said
    assert "suites.trivia.kind" in said
    approved = cli("run", "--approve-gate-changes")
    said = approved.out + approved.err
    assert "measured differently" not in said, said
    results = json.loads((project / "evalgate-out" / "results.json").read_text(encoding="utf-8"))
    assert results["comparison"]["n_paired"] == len(ROWS)
    assert not [c for c in results["gate_changes_vs_baseline"] if c["kind"] == "probe_changed"]


@pytest.mark.slow
def test_a_changed_template_of_the_first_suite_is_still_refused(project, cli):
    config = (project / "evalgate.yml").read_text(encoding="utf-8")
    (project / "quiz.txt").write_text("Q: {prompt}\nA:", encoding="utf-8")
    config = config.replace("  quiz:\n", "  quiz:\n    template: quiz.txt\n", 1)
    (project / "evalgate.yml").write_text(config, encoding="utf-8")
    got = cli("run", "--approve-gate-changes")
    said = got.out + got.err
    assert got.code == 2, said
    assert "measured differently" in said and "template_sha256 of suite quiz" in said
