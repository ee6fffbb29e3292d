"""A suite or a slice value with no live item left (every item retired, or excluded as a leak)
never reads "coverage: OK" and vanishes: `validate` and the run's report say it (docs/suites.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.paths import REPO, allow_shipped_data

CONFIG = """\
suites:
  quiz:
    kind: multiple-choice
    probes: [quiz/items.jsonl]
    slices: {slices}
{train}    coverage: {{min_per_value: {minimum}}}
test: null
baseline: none
checkpoint: {checkpoint}
leaks: {{policy: exclude}}
"""


def item(i: int, topic: str, **more) -> dict:
    return {
        "id": f"q-{i:03d}",
        "prompt": f"Which river has the number {i} here?",
        "candidates": ["Nile", "Volga", "Rhine", "Danube"],
        "expected": "Nile",
        "slices": {"topic": topic},
        **more,
    }


def write(root: Path, items: list[dict], slices: str = "[topic]", minimum: int = 1, train: str = "") -> None:
    (root / "quiz").mkdir(exist_ok=True)
    (root / "quiz" / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    text = CONFIG.format(
        slices=slices, minimum=minimum, train=train, checkpoint=REPO / "data" / "checkpoints" / "demo"
    )
    (root / "evalgate.yml").write_text(text, encoding="utf-8")


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    allow_shipped_data(monkeypatch)
    return tmp_path


def empty_warnings(got) -> list[dict]:
    return [w for w in json.loads(got.out)["warnings"] if w["check"] == "slice-empty"]


def test_a_slice_value_whose_items_are_all_retired_is_warned_not_ok(here, cli):
    write(
        here, [item(i, "rivers") for i in range(4)] + [item(i, "lakes", deprecated=True) for i in range(4, 7)]
    )
    got = cli("validate", "--format", "json")
    assert got.code == 0, got.out + got.err
    (warning,) = empty_warnings(got)
    assert "slice topic:lakes has no live item (3 retired of 3)" in warning["message"]
    assert warning["field"] == "slices.topic" and warning["file"] == "quiz/items.jsonl"
    text = cli("validate").out
    assert "coverage: OK, but 1 suite(s) or slice value(s) have no live item" in text


def test_a_declared_value_under_min_zero_whose_items_are_retired_is_warned(here, cli):
    items = [item(i, "rivers") for i in range(4)] + [item(4, "lakes", deprecated=True)]
    write(here, items, slices="{topic: [rivers, lakes]}", minimum=0)
    (warning,) = empty_warnings(cli("validate", "--format", "json"))
    assert "topic:lakes" in warning["message"]


def test_a_slice_value_whose_items_are_all_excluded_as_leaks_is_warned(here, cli):
    leaking = item(5, "lakes", prompt="Which lake lies highest among the great African ones?")
    (here / "train.txt").write_text(f"{leaking['prompt']} {leaking['expected']}\n", encoding="utf-8")
    write(here, [item(i, "rivers") for i in range(4)] + [leaking], train="    train: [train.txt]\n")
    got = cli("validate", "--format", "json")
    assert got.code == 0, got.out + got.err
    assert "q-005" in json.loads(got.out)["summary"]["excluded"]
    (warning,) = empty_warnings(got)
    assert "slice topic:lakes has no live item (1 excluded as leaks of 1)" in warning["message"]


@pytest.mark.slow
def test_a_suite_with_every_item_retired_is_warned_in_validate_and_the_run_report(here, cli):
    write(here, [item(i, "rivers", deprecated=True) for i in range(3)])
    got = cli("validate", "--format", "json")
    assert got.code == 0, got.out + got.err
    (warning,) = empty_warnings(got)
    assert warning["message"].startswith("suite quiz: no live item (3 retired of 3)")
    cli("run", "--out", "out")
    results = json.loads((here / "out" / "results.json").read_text(encoding="utf-8"))
    assert any(w["check"] == "slice-empty" for w in results["warnings"])
    assert "suite quiz: no live item" in (here / "out" / "REPORT.md").read_text(encoding="utf-8")
