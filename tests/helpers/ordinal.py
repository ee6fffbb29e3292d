"""Ordinal probes on a model with a known distribution (docs/ordinal.md): shared by the ordinal
tests of tests/scoring/ and the plot-label test of tests/edges/."""

from __future__ import annotations

import math

from evalgate.config import load_config
from evalgate.gate import results as results_mod
from evalgate.pipeline import finalize
from evalgate.scoring.multiple_choice import score_probes, split_whitespace
from evalgate.types import Probe
from helpers.fake_scorer import FakeScorer
from helpers.paths import REPO

SCALE = ("1", "2", "3", "4", "5")
TEMPLATE = "{prompt}\n"


def ordinal_probe(pid: str, expected: str, **extra) -> Probe:
    fields = dict(
        id=pid,
        language="en",
        verb="go",
        regularity="irregular",
        tense="past_simple",
        person="3sg",
        prompt=f'Sentence: "Last week {pid} went home." Rating from 1 (impossible) to 5 (perfect): ___',
        candidates=SCALE,
        expected=expected,
        label="correct",
        category="core",
        source="hand",
        kind="ordinal",
    )
    fields.update(extra)
    return Probe(**fields)


def fixture_scorer(probes_and_dists: list[tuple[Probe, list[float]]]) -> FakeScorer:
    """log p of each scale point given each probe's context: a model with a known distribution."""
    table = {}
    for probe, dist in probes_and_dists:
        context = probe.prompt.split("___")[0]
        for point, p in zip(probe.candidates, dist, strict=True):
            table[split_whitespace(context, point)] = math.log(p)
    return FakeScorer(table)


def scored(probes_and_dists: list[tuple[Probe, list[float]]]) -> list[dict]:
    probes = [p for p, _ in probes_and_dists]
    return score_probes(probes, TEMPLATE, fixture_scorer(probes_and_dists))


def run_results(entries: list[dict]) -> dict:
    """The results dict a run would write, through the pipeline's one `finalize`."""
    cfg = load_config(REPO / "evalgate.yml")
    base = {
        "inputs": {},
        "checkpoint": {"path": "fake", "format": "plugin", "sha256": "0" * 64, "loader": None},
        "config": cfg.pin(),
        "manifest": results_mod.comparability_manifest(
            method="candidate",
            normalization="tokens",
            template_sha256="0" * 64,
            dtype="float32",
            probe_set_digest="0" * 64,
            probe_set_version=None,
            tokenizer_sha256=None,
        ),
        "probe_set": {},
        "perplexity": None,
        "warnings": [],
    }
    return finalize(base, entries)
