"""results.json of a run of multiple-choice suites says nothing of verbs, whatever ends the run:
scored, refused while validating, refused before scoring (issue 27). A verb-form run's refused
document keeps its empty `per_verb` (the demo's documents stay byte for byte)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from helpers.paths import REPO

from evalgate.config import load_config
from evalgate.errors import EvalgateError
from evalgate.gate.results import validate_results
from evalgate.pipeline import refused_results

SUBJECTS = ("astronomy", "biology")


def _init(repo: Path, cli) -> None:
    import shutil

    shutil.copytree(REPO / "data" / "checkpoints" / "demo", repo / "checkpoints" / "demo")
    rows = [
        {
            "question": f"In {SUBJECTS[i % 2]}, which choice answers question number {i}?",
            "subject": SUBJECTS[i % 2],
            "choices": [f"first {i}", f"second {i}", f"third {i}", f"fourth {i}"],
            "answer": i % 4,
        }
        for i in range(24)
    ]
    (repo / "mmlu.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = cli("init", "--suite", "quiz", "--items", "mmlu.jsonl", "--from", "mmlu",
               "--checkpoint", "checkpoints/demo", "--action", "acme/evalgate@" + "a" * 40)  # fmt: skip
    assert done.code == 0, done.out + done.err


def _break_an_item(repo: Path) -> None:
    with (repo / "evalgate" / "quiz" / "items.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"id": "broken"\n')


def _loosen_the_tolerance(repo: Path) -> None:
    config = yaml.safe_load((repo / "evalgate.yml").read_text(encoding="utf-8"))
    config.setdefault("gate", {})["tolerance"] = 0.2
    (repo / "evalgate.yml").write_text(yaml.safe_dump(config), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("refuse", [_break_an_item, _loosen_the_tolerance], ids=["invalid", "gate-change"])
def test_a_refused_multiple_choice_run_writes_no_per_verb(tmp_path, cli, monkeypatch, refuse):
    repo = tmp_path / "repo"
    repo.mkdir()
    monkeypatch.chdir(repo)
    _init(repo, cli)
    scored = cli("run")
    assert scored.code == 0, scored.out + scored.err
    assert "per_verb" not in json.loads((repo / "evalgate-out" / "results.json").read_text(encoding="utf-8"))

    refuse(repo)
    refused = cli("run")
    assert refused.code == 2, refused.out + refused.err
    results = json.loads((repo / "evalgate-out" / "results.json").read_text(encoding="utf-8"))
    assert results["verdict"] == "refused"
    assert "per_verb" not in results, sorted(results)
    validate_results(results, "results.json")


def test_a_refused_verb_form_run_keeps_its_empty_per_verb():
    """The demo (verb forms, no `suites:`) and a run whose configuration could not be read."""
    for cfg in (load_config(cwd=REPO), None):
        results = refused_results(cfg, EvalgateError("refused for the test"))
        assert results["per_verb"] == {}
        validate_results(results, "results.json")
