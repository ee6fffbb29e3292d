"""Scoring and perplexity show progress: a live bar on a terminal, a line when each phase starts
and ends in a CI log (a user watched minutes of silence during perplexity)."""

from __future__ import annotations

import io
import re

import pytest
from helpers.paths import REPO
from helpers.probeset_factory import apply_step, cli_merged, write_base

from evalgate.progress import Progress
from evalgate.scorers.loaders import load_scorer

DEMO = REPO / "data/checkpoints/demo"
TEXTS = ["She works every day.", "Ayer fui al mercado con mi hermana.", "They have gone."] * 30


@pytest.mark.integration
def test_perplexity_draws_a_bar_on_a_terminal(monkeypatch):
    stream = io.StringIO()
    progress = Progress(stream, interactive=True)
    scorer = load_scorer(DEMO, None, root=DEMO, batch_size=4)
    clock = iter(range(10_000))
    monkeypatch.setattr("evalgate.progress.time.perf_counter", lambda: float(next(clock)))
    with progress.phase("perplexity on 90 test sentences"):
        scorer.on_progress = progress.update
        scorer.perplexity(TEXTS)
    out = stream.getvalue()
    frames = re.findall(r"\r\033\[2Kevalgate: perplexity on 90 test sentences [█░]{30} (\d+)/(\d+)", out)
    assert len(frames) == scorer.counters["forwards"] > 1  # one frame per forward (clock ticks 1 s)
    done = [int(d) for d, _ in frames]
    assert done == sorted(done) and len({t for _, t in frames}) == 1
    assert done[-1] == int(frames[-1][1])  # ends full
    assert out.endswith("perplexity on 90 test sentences … done in " + out.rsplit("done in ", 1)[1])


@pytest.mark.integration
def test_a_ci_log_gets_a_line_when_each_phase_starts_and_ends(tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    cfg = write_base(tmp_path)
    apply_step(tmp_path, {"seal": None})
    (tmp_path / "data/corpus/test.jsonl").write_text('{"text": "She works."}\n', encoding="utf-8")
    code, log = cli_merged("run", "--config", str(cfg), "--checkpoint", str(DEMO), "--baseline", "none",
                    "--out", str(tmp_path / "out"))  # fmt: skip
    assert code == 0, log
    assert "\r" not in log and "█" not in log  # no bar in a log file
    for phase in (
        "validate probe set",
        "load checkpoint",
        "score 11 probes",
        "perplexity on 1 test sentences",
    ):
        assert f"evalgate: {phase} …\n" in log, phase
        assert re.search(rf"evalgate: {phase}: done in \d+\.\d s\n", log), phase
