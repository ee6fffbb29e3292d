"""`evalgate merge` gates under the configuration the parts were scored with (docs/approval.md).

A merge given another configuration (looser tolerance, a floor dropped) once gated with its own
rules while results.json still showed the parts': a regression passed. It is refused now, naming
every differing key.

The parts are scored by a fake scorer handed to the composition root (a model at chance level is
all these tests need: the gate's behaviour, not the model's).
"""

from __future__ import annotations

import json

import pytest
from helpers.fake_scorer import FakeScorer, use_scorer
from helpers.items import write_items
from helpers.paths import REPO, allow_shipped_data

CHECKPOINT = REPO / "data" / "checkpoints" / "demo"

CONFIG = f"""\
suites:
  quiz:
    kind: multiple-choice
    probes: [quiz/items.jsonl]
    slices: [topic]
    gate: {{min_accuracy: 0.6}}
test: null
baseline: none
checkpoint: {CHECKPOINT}
gate: {{tolerance: 0.02}}
"""


@pytest.fixture
def parts(tmp_path, monkeypatch, cli):
    write_items(tmp_path / "quiz" / "items.jsonl", "quiz", 30, 1)
    (tmp_path / "evalgate.yml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    allow_shipped_data(monkeypatch)
    # the longest candidate word scores lowest: as good as chance on these items
    use_scorer(monkeypatch, FakeScorer(fn=lambda context, continuation: -float(len(continuation))))
    for i in (1, 2):
        assert cli("run", "--shard", f"{i}/2", "--out", f"s{i}").code == 0
    return [tmp_path / f"s{i}" / "results.json" for i in (1, 2)]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("edit", "keys"),
    [
        # dropping the floor turned the floor's FAIL into a PASS
        (lambda t: t.replace("    gate: {min_accuracy: 0.6}\n", ""), ["suites.quiz.gate.min_accuracy"]),
        (
            lambda t: t.replace("{tolerance: 0.02}", "{tolerance: 0.9, perplexity_max_ratio: 100}"),
            ["gate.perplexity_max_ratio", "gate.tolerance"],
        ),
    ],
)
def test_a_merge_with_other_rules_is_refused_naming_the_keys(parts, tmp_path, cli, edit, keys):
    (tmp_path / "loose.yml").write_text(edit(CONFIG), encoding="utf-8")
    got = cli("merge", *parts, "--config", "loose.yml", "--out", "merged")
    assert got.code == 2, got.err
    for key in keys:
        assert f"{key}: parts " in got.err
    assert "pins differently from the parts'" in got.err
    res = json.loads((tmp_path / "merged" / "results.json").read_text(encoding="utf-8"))
    assert res["verdict"] == "refused"


@pytest.mark.slow
def test_a_merge_with_the_parts_config_is_gated_by_it(parts, tmp_path, cli):
    got = cli("merge", *parts, "--out", "merged")
    assert got.code == 1, got.err  # the floor the parts pinned fails the chance-level model
    res = json.loads((tmp_path / "merged" / "results.json").read_text(encoding="utf-8"))
    assert res["floors"]["overall"]["status"] == "below"
    assert res["config"]["gate"]["tolerance"] == 0.02
