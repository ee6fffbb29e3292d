"""The gate builds its scorer through the composition root's factory (pipeline/root.py), so its
behaviour above the model is tested with a fake scorer handed in, and the refusal envelope is the
root's: `run`, `compare` and `merge` write and show a refusal the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.fake_scorer import FakeScorer, use_scorer

from evalgate.config import load_config
from evalgate.errors import RefusedError
from evalgate.pipeline.root import Collaborators, GateRequest, GateRoot

pytestmark = pytest.mark.usefixtures("in_repo")


def no_model(*args, **kwargs):
    raise AssertionError("the checkpoint was loaded although a scorer was injected")


def fake() -> FakeScorer:
    # every candidate one word shorter scores higher: deterministic, and no model at all
    return FakeScorer(fn=lambda context, continuation: -float(len(continuation)))


@pytest.mark.integration  # imports the loaders (torch) to prove they are never called
def test_run_scores_with_the_injected_scorer_and_never_loads_the_checkpoint(tmp_path, monkeypatch, cli):
    import evalgate.scorers.loaders as loaders

    monkeypatch.setattr(loaders, "load_scorer", no_model)
    asked = use_scorer(monkeypatch, fake())
    result = cli("--baseline", "none", "--out", tmp_path / "out")
    assert result.code == 0, result.err
    assert len(asked) == 1  # built once, through the factory
    doc = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert doc["verdict"] == "pass" and doc["checkpoint"]["format"] == "plugin"
    assert doc["probes"] and all(e["status"] != "unscorable" for e in doc["probes"] if e.get("pred"))
    assert not any(rec.get("role") == "checkpoint" for rec in doc["inputs"].values())


def test_a_refused_run_never_builds_the_scorer(tmp_path, monkeypatch, cli):
    asked = use_scorer(monkeypatch, fake())
    result = cli("--probes", tmp_path / "nosuch.jsonl", "--out", tmp_path / "out")
    assert result.code == 2
    assert asked == []
    assert json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["verdict"] == "refused"


def test_a_merge_refused_for_a_gate_change_lists_every_change_like_a_run(tmp_path, monkeypatch, cli):
    # The shards of a fake model against the shipped baseline (the demo model's): its tokenizer
    # differs, a gate change. `merge` said "every change is listed above" and listed none.
    use_scorer(monkeypatch, fake())
    for i in (1, 2):
        part = cli("--shard", f"{i}/2", "--out", tmp_path / f"part{i}")
        assert part.code == 0, part.err
    merged = cli("merge", tmp_path / "part1", tmp_path / "part2", "--out", tmp_path / "merged")
    assert merged.code == 2
    assert "gate change(s)" in merged.err and "listed above" in merged.err
    run = cli("--out", tmp_path / "run")
    assert run.code == 2
    listed = [line for line in run.err.splitlines() if "tokenizer" in line.lower()]
    assert listed, run.err
    assert all(line in merged.err for line in listed), merged.err
    refused = json.loads((tmp_path / "merged" / "results.json").read_text(encoding="utf-8"))
    assert refused["verdict"] == "refused" and refused["gate_changes_vs_baseline"]


class Recording:
    """An output sink and console that keep what they are given."""

    def __init__(self):
        self.written: list[dict] = []
        self.shown: list[tuple[str, dict]] = []

    def folder(self, cfg):
        return Path("unused")

    def clear(self, out_dir):
        pass

    def write(self, results, out_dir, cfg):
        self.written.append(dict(results))

    def progress(self):
        from evalgate.progress import Progress

        return Progress(quiet=True)

    def summary(self, results, out_dir):
        self.shown.append(("summary", dict(results)))

    def refused(self, results, out_dir, findings):
        self.shown.append(("refused", dict(results)))


def test_the_root_returns_a_refusal_it_wrote_and_showed_once(tmp_path):
    sink = Recording()
    root = GateRoot(Collaborators(console=sink, outputs=sink, scorer_factory=no_model))
    missing = tmp_path / "nosuch.json"
    outcome = root.compare(GateRequest(config=None, results=str(missing)))
    assert isinstance(outcome.refusal, RefusedError) and outcome.exit_code == 2
    assert [r["verdict"] for r in sink.written] == ["refused"]
    assert [kind for kind, _ in sink.shown] == ["refused"]
    assert outcome.results is not None and outcome.results["verdict"] == "refused"


def test_the_root_gates_a_fake_run_given_to_it_without_the_command_line(tmp_path):
    sink = Recording()
    root = GateRoot(Collaborators(console=sink, outputs=sink, scorer_factory=lambda cfg, given: fake()))
    outcome = root.run(GateRequest(config=None, overrides={"baseline": "none"}))
    assert outcome.refusal is None and outcome.exit_code == 0
    assert outcome.results["verdict"] == "pass"
    assert [kind for kind, _ in sink.shown] == ["summary"] and len(sink.written) == 1
    assert load_config(None).checkpoint  # the configured checkpoint exists, and was never loaded


def test_a_run_looks_for_its_gate_changes_once(monkeypatch, tmp_path, cli):
    # Before scoring the probe set, files, rules and plugin code are checked (a refusal costs no
    # model); after scoring only the tokenizer is added, not the whole check again on the results.
    from evalgate.gate import yardstick

    calls = []
    real = yardstick.gate_changes

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(yardstick, "gate_changes", counted)
    use_scorer(monkeypatch, fake())
    result = cli("--out", tmp_path / "out")
    assert result.code == 2  # the fake's tokenizer is not the baseline's: found after scoring
    assert "tokenizer" in result.err.lower()
    assert len(calls) == 1
