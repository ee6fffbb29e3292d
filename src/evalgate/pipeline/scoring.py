"""Scoring a validated probe set: the results of a checkpoint before any gate (docs/ARCHITECTURE.md).

`score` is five steps, each its own function: read the held-out test sets (before any model is
loaded, so an unreadable one costs no scoring), pick the probes (a shard's or all), build the
scorer through the injected `ScorerFactory`, score the probes (through the score cache when
asked) and the perplexities, and assemble the run-invariant part of results.json (inputs,
checkpoint, comparability manifest) for `finalize`.

The scorer is a collaborator, not a call: `load_configured_scorer` (scorers/loaders.load_scorer
with the configuration's settings) is the default factory, and tests hand in their own
(tests/helpers/fake_scorer.py), so everything above the model runs without torch.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from evalgate.config import GateConfig
from evalgate.gate import results as results_mod
from evalgate.gate.perplexity_test import sentence_record
from evalgate.gate.shards import blocks, select_shard
from evalgate.pipeline import display_path, finalize
from evalgate.probeset_io import config_input, read_test_sentences
from evalgate.progress import Progress
from evalgate.types import STATUS_DEPRECATED, STATUS_EXCLUDED, canonical_json, sha256_text


class ScorerFactory(Protocol):
    """Builds the run's scorer (scorers/base.Scorer) from the configuration. `given` is the
    --checkpoint flag as typed, so that a missing one is told apart as a Hub id or a local path
    (scorers/loaders.hub_id_hint)."""

    def __call__(self, cfg: GateConfig, given: str | None) -> Any: ...


def load_configured_scorer(cfg: GateConfig, given: str | None) -> Any:
    """The default `ScorerFactory`: the configured checkpoint (or `loader:` plugin) through
    scorers/loaders.load_scorer, the one place torch is imported."""
    from evalgate.scorers.device import place_scorer
    from evalgate.scorers.loaders import load_scorer

    checkpoint = cfg.path(cfg.checkpoint) if cfg.checkpoint else None
    scorer = load_scorer(
        checkpoint,
        cfg.loader,
        root=cfg.root,
        roots=cfg.roots(),
        batch_size=cfg.scoring.batch_size,
        dtype=cfg.scoring.dtype,
        threads=cfg.scoring.threads,
        max_positions=cfg.scoring.max_positions,
        given=given or cfg.checkpoint,
    )
    # the device used goes into the comparability manifest (`device_of`, scorers/device.py)
    scorer.placed_device = place_scorer(scorer, cfg.scoring.device)
    return scorer


def device_of(scorer: Any) -> str:
    """The device the factory put the scorer's forwards on; "cpu" for a scorer it did not place."""
    return str(getattr(scorer, "placed_device", "cpu"))


@dataclass(frozen=True)
class TestSets:
    """The held-out text of a run: `test:` and each suite's own (docs/suites.md, "Perplexity")."""

    sentences: list[str]
    inputs: dict[str, Any]  # the `test:` file's input record ({} without one)
    suites: list[tuple[str, list[str], dict[str, Any]]]  # (suite name, sentences, input record)


def read_test_sets(cfg: GateConfig) -> TestSets:
    sentences, test_input = read_test_sentences(cfg) if cfg.test is not None else ([], {})
    suites = [
        (s.name, *read_test_sentences(dataclasses.replace(cfg, test=s.test)))
        for s in cfg.suites
        if s.test is not None
    ]
    return TestSets(sentences, test_input, suites)


def score(
    cfg: GateConfig,
    outcome: Any,
    progress: Progress,
    *,
    shard: tuple[int, int] | None = None,
    cache_dir: Path | None = None,
    checkpoint_arg: str | None = None,
    scorer_factory: ScorerFactory = load_configured_scorer,
) -> dict[str, Any]:
    """Build the scorer and score: the results dict without comparison (verdict "pass").

    With `cache_dir` the probes' log-likelihoods go through the score cache
    (edges/score_cache.py): only probes it does not hold are scored.

    With `shard=(i, n)` only shard i's probes are scored (and the perplexity only by shard 1);
    the partial result carries a "shard" record and `merge` rebuilds the unsharded result from
    the parts through the same `finalize`.
    """
    tests = read_test_sets(cfg)
    work = blocks(list(outcome.probes))
    if shard is not None:
        work = select_shard(work, *shard)
    probes = [p for block in work for p in block]
    with progress.phase("load checkpoint"):
        scorer = scorer_factory(cfg, checkpoint_arg)
    device = device_of(scorer)
    entries = score_probes_of(cfg, outcome, scorer, probes, progress, cache_dir, device)
    ppl, suite_ppl = None, {}
    if shard is None or shard[0] == 1:
        ppl, suite_ppl = perplexities(cfg, scorer, progress, tests)
    base = run_base(cfg, outcome, scorer.info, tests, ppl, suite_ppl, device)
    results = finalize(base, entries)
    if shard is not None:
        results["shard"] = {
            "index": shard[0],
            "count": shard[1],
            "order": [p.id for p in outcome.probes],
        }
    return results


def score_probes_of(
    cfg: GateConfig,
    outcome: Any,
    scorer: Any,
    probes: list[Any],
    progress: Progress,
    cache_dir: Path | None,
    device: str = "cpu",
) -> list[dict[str, Any]]:
    """results.json's per-probe entries of `probes`, through the score cache when `cache_dir`."""
    cache = None
    keys: dict[str, str] = {}
    if cache_dir is not None:
        from evalgate.edges.score_cache import ScoreCache

        info = scorer.info
        cache = ScoreCache(
            cache_dir,
            checkpoint=info.digest,
            tokenizer=info.tokenizer_sha256,
            scoring={
                "method": cfg.scoring.method,
                "normalization": cfg.scoring.normalization,
                "dtype": info.dtype,
                "template_sha256": template_digest(outcome),
                **({"device": device} if device != "cpu" else {}),  # cpu keys as before the key
            },
        )
        keys = {p.id: cache.key(p.content_hash()) for p in probes}
    with progress.phase(f"score {len(probes)} probes"):
        # One call for every probe: a request's numbers depend on its probe alone
        # (scorers/torch_lm.py, "Fixed-shape forwards"), so sharded, whole and cached runs
        # agree to the last bit while the model batches across the whole set.
        _watch(scorer, progress)
        probe_scorer = scorer
        if cache is not None:
            from evalgate.edges.score_cache import CachedScorer

            probe_scorer = CachedScorer(scorer, cache, keys)
        entries = _score_all(probes, outcome, probe_scorer, cfg)
    if cache is not None and cache_dir is not None:
        scored = len(probe_scorer.scored_groups)
        untrusted = f" ({cache.rejected} entry(ies) not trusted, rescored)" if cache.rejected else ""
        progress.info(
            f"score cache {display_path(cfg, Path(cache_dir))}: {cache.hits} probe(s) from the cache, "
            f"{scored} scored{untrusted}"
        )
    # Leak policy "exclude": every probe was scored (so the full series can be shown); the
    # leaking ones are marked excluded, keeping the status they would have had, and drop out of
    # the gated (strict) series.
    for entry in entries:
        if entry["id"] in outcome.excluded and entry["status"] != STATUS_DEPRECATED:
            entry["status_if_included"] = entry["status"]
            entry["status"] = STATUS_EXCLUDED
    return entries


def perplexities(
    cfg: GateConfig, scorer: Any, progress: Progress, tests: TestSets
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """results.json's `perplexity` (on `test:`) and `suite_perplexity` (each suite's own)."""
    ppl = None
    suite_ppl: dict[str, Any] = {}
    if cfg.test is not None:
        with progress.phase(f"perplexity on {len(tests.sentences)} test sentences"):
            ppl = _perplexity(scorer, progress, tests.sentences, tests.inputs)
    for name, sentences, suite_input in tests.suites:
        with progress.phase(f"perplexity of suite {name} on {len(sentences)} test sentences"):
            suite_ppl[name] = _perplexity(scorer, progress, sentences, suite_input)
            # its own test set, so comparability is checked per suite (gate/compare.py)
            suite_ppl[name]["test_sha256"] = next(iter(suite_input.values()))["sha256"]
    return ppl, suite_ppl


def run_base(
    cfg: GateConfig,
    outcome: Any,
    info: Any,
    tests: TestSets,
    ppl: dict[str, Any] | None,
    suite_ppl: Mapping[str, Any],
    device: str = "cpu",
) -> dict[str, Any]:
    """The run-invariant part of results.json (pipeline.BASE_KEYS and the perplexities): every
    input's SHA-256, what was scored, the pinned configuration and the comparability manifest."""
    checkpoint = cfg.path(cfg.checkpoint) if cfg.checkpoint else None
    ckpt_display = display_path(cfg, checkpoint) if checkpoint else (cfg.loader or "plugin")
    inputs: dict[str, Any] = dict(outcome.inputs)
    inputs.update(tests.inputs)
    for _, _, suite_input in tests.suites:
        inputs.update(suite_input)
    inputs.update(config_input(cfg))
    for rel, rec in sorted(info.files.items()):
        inputs[f"{ckpt_display}/{rel}"] = {**rec, "role": "checkpoint"}
    code = getattr(info, "loader_code", None)
    if code is not None:  # a plugin's files: part of the yardstick (edges/plugin_code.py)
        inputs.update(code.inputs(cfg.root))
    manifest = results_mod.comparability_manifest(
        method=cfg.scoring.method,
        normalization=cfg.scoring.normalization,
        template_sha256=template_digest(outcome),
        dtype=info.dtype,
        probe_set_digest=outcome.probe_set.get("digest", ""),
        probe_set_version=outcome.probe_set.get("version"),
        tokenizer_sha256=info.tokenizer_sha256,
        test_sha256=next(iter(tests.inputs.values()))["sha256"] if tests.inputs else None,
        device=device,
    )
    if by_suite := _template_digests(outcome):
        manifest["template_sha256_by_suite"] = by_suite
    base = {
        "inputs": inputs,
        "checkpoint": {
            "path": ckpt_display,
            "format": info.format,
            "sha256": info.digest,
            "loader": cfg.loader,
            "n_parameters": info.n_parameters,
            # only with a plugin, so that a run without one keeps its bytes
            **({"loader_sha256": code.sha256} if code is not None else {}),
        },
        "config": cfg.pin(),
        "manifest": manifest,
        "probe_set": outcome.probe_set,
        "perplexity": ppl,
        "warnings": [w.to_dict() for w in outcome.warnings],
    }
    if tests.suites:
        base["suite_perplexity"] = dict(suite_ppl)
    return base


def _perplexity(
    scorer: Any, progress: Progress, sentences: list[str], test_input: Mapping[str, Any]
) -> dict[str, Any]:
    """results.json's perplexity record of one held-out test set."""
    _watch(scorer, progress)
    p = scorer.perplexity(sentences)
    ppl = {"value": p.value, "n_tokens": p.n_tokens, "nll": p.nll, "file": next(iter(test_input))}
    ppl.update(sentence_record(p.sentence_nll, p.sentence_tokens))
    if not (isinstance(p.value, int | float) and math.isfinite(p.value)):
        # JSON has no NaN/inf: the value becomes null, and this says why (the gate fails on it,
        # gate/holds.py).
        ppl["not_finite"] = str(p.value)
    return ppl


def template_digest(outcome: Any) -> str:
    """The manifest's template hash: the one template's, or (several suites) all of them by name."""
    if len(outcome.templates) > 1:
        return sha256_text(canonical_json(outcome.templates))
    return sha256_text(outcome.template)


def _template_digests(outcome: Any) -> dict[str, str]:
    """Each suite's template hash by name (several suites only): a baseline is comparable suite by
    suite, so adding a suite leaves the others' templates the same (gate/compare.py)."""
    if len(outcome.templates) > 1:
        return {name: sha256_text(text) for name, text in sorted(outcome.templates.items())}
    return {}


def _score_all(probes: list[Any], outcome: Any, scorer: Any, cfg: GateConfig) -> list[dict[str, Any]]:
    """score_probes over the run's probes; with `suites:` each suite's probes through its own
    template (docs/suites.md)."""
    from evalgate.scoring.multiple_choice import score_probes

    method, norm = cfg.scoring.method, cfg.scoring.normalization
    if not outcome.templates:
        return score_probes(probes, outcome.template, scorer, method, norm)
    first = cfg.suites[0].name  # a probe without a suite belongs to the first (the only) one
    return score_probes(probes, lambda p: outcome.templates[p.suite or first], scorer, method, norm)


def _watch(scorer: Any, progress: Progress) -> None:
    """Forward the scorer's per-forward progress (token positions) to the current phase's bar."""
    if hasattr(scorer, "on_progress"):
        scorer.on_progress = progress.update
