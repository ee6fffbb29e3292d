"""The composition root of a gate: what `run`, `compare`, `merge` and `baseline update` do, in one place.

A command turns its flags into one `GateRequest` (commands/_args.gate_request, built once) and
hands it to a `GateRoot`, which is given every collaborator it talks to (`Collaborators`: the
probe-set reader, the scorer factory, the baseline store, the output sink, the console) and
returns a `GateOutcome`: the results it wrote, or the refusal.

The refusal envelope is written here, once, for every command that has an output folder: the
refused results.json and REPORT.md list every input read so far, the console lists the findings,
and the outcome carries the `RefusedError` for the command to raise on to cli.main (exit 2). A
refusal found before the output folder is known (the configuration, a flag) is raised as is:
there is no folder to write it to. (docs/ARCHITECTURE.md, "Data flow of `evalgate run`")

The collaborators are built in commands/_args.py (`gate_root`); tests build a root with their own
(a fake scorer, tests/helpers/fake_scorer.py), so the gate's behaviour is tested without a model.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from evalgate.config import GateConfig, load_config
from evalgate.errors import RefusedError
from evalgate.pipeline import (
    BASE_KEYS,
    exit_code,
    finalize,
    gate,
    rederive,
    refuse_before_scoring,
    refuse_blind_clusters,
    refused_results,
)
from evalgate.pipeline.scoring import ScorerFactory, load_configured_scorer, score
from evalgate.probeset_io import config_input

# (document, display path, input record) of the configured baseline (probeset_io.load_baseline)
Baseline = tuple[dict[str, Any], str, dict[str, Any]]


@dataclass(frozen=True)
class GateRequest:
    """What the command line asks of a gate, parsed once (commands/_args.gate_request).

    `overrides` are the flags in the configuration's own shape (None = not given); the paths of
    `results` (compare) and `parts` (merge) are as typed; `gate_changes` and
    `base_inputs_changed` name the workflow's files, read by the root in the run's order."""

    config: str | None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    probes: Sequence[str] | None = None
    train: Sequence[str] | None = None
    checkpoint_arg: str | None = None  # --checkpoint as typed (a Hub id is told from a path)
    shard: str | None = None
    cache: str | None = None
    gate_changes: str | None = None
    base_inputs_changed: str | None = None
    approve_gate_changes: bool = False
    verify_baseline: bool = False
    fail_on_inconclusive: bool = False
    results: str | None = None
    parts: Sequence[str] = ()


@dataclass(frozen=True)
class GateOutcome:
    """What a gate did: the results.json it wrote in `out_dir` and the exit code, or the refusal
    (its envelope already written and shown; the command raises it on, exit 2)."""

    results: Mapping[str, Any]
    out_dir: Path
    exit_code: int
    refusal: RefusedError | None = None


class ProbeSetReader(Protocol):
    """Reads and checks the configured probe set (probeset_io.validate)."""

    def __call__(
        self, cfg: GateConfig, probe_files: Sequence[str] | None, train_files: Sequence[str] | None
    ) -> Any: ...


class BaselineStore(Protocol):
    """The configured baseline and its history, both verified (probeset_io)."""

    def baseline(self, cfg: GateConfig) -> Baseline | None: ...

    def history(self, cfg: GateConfig, baseline: Baseline | None) -> Any: ...


class OutputSink(Protocol):
    """The output folder: checked before anything runs, cleared of an earlier run's outputs,
    written atomically (commands/_args.OutputFolder)."""

    def folder(self, cfg: GateConfig) -> Path: ...

    def clear(self, out_dir: Path) -> None: ...

    def write(self, results: Mapping[str, Any], out_dir: Path, cfg: GateConfig) -> None: ...


class ConfiguredBaselines:
    """The default `BaselineStore`: the files the configuration names."""

    def baseline(self, cfg: GateConfig) -> Baseline | None:
        from evalgate.probeset_io import load_baseline

        return load_baseline(cfg)

    def history(self, cfg: GateConfig, baseline: Baseline | None) -> Any:
        from evalgate.probeset_io import load_history

        return load_history(cfg, baseline)


def read_probe_set(
    cfg: GateConfig, probe_files: Sequence[str] | None, train_files: Sequence[str] | None
) -> Any:
    """The default `ProbeSetReader`."""
    from evalgate.probeset_io import validate

    return validate(cfg, probe_files, train_files)


@dataclass(frozen=True)
class Collaborators:
    """Everything a gate talks to. `console` is the output rules of --format (console.Console):
    its progress, verdict summary and refusal lines."""

    console: Any
    outputs: OutputSink
    scorer_factory: ScorerFactory = load_configured_scorer
    probe_sets: ProbeSetReader = read_probe_set
    baselines: BaselineStore = field(default_factory=ConfiguredBaselines)


class GateRoot:
    """One gate, from a request to an outcome, with its collaborators given."""

    def __init__(self, collaborators: Collaborators):
        self.parts = collaborators

    # -- the commands ------------------------------------------------------------------------

    def run(self, request: GateRequest) -> GateOutcome:
        """`evalgate run`: validate → refuse before scoring → score → gate → write."""
        cfg = load_config(request.config, request.overrides)
        out_dir = self._prepare(cfg)
        progress = self.parts.console.progress()
        gate_changes = read_gate_changes(request.gate_changes)
        base_changed = read_base_inputs_changed(request.base_inputs_changed)
        shard = parse_shard(request.shard)
        outcome = None
        read: dict[str, Any] = {}  # inputs read so far, beyond the probe set: a refusal lists them too
        try:
            from evalgate.edges.journal import refuse_pending

            refuse_pending(cfg)  # a journal is never applied by the gate (edges/journal.py)
            with progress.phase("validate probe set"):
                outcome = self.parts.probe_sets(cfg, request.probes, request.train)
            # A deletion since the baseline is a gate change: refused below unless approved.
            outcome = outcome.with_approvable_as_warnings()
            if not outcome.ok:
                raise RefusedError(
                    f"the probe set is invalid: {len(outcome.findings)} problem(s); nothing was scored",
                    hint="fix every problem listed (run `evalgate validate` for the same list)",
                    findings=list(outcome.findings),
                )
            baseline = None if shard else self.parts.baselines.baseline(cfg)
            if baseline is not None:
                read.update(baseline[2])
            history = self.parts.baselines.history(cfg, baseline)  # its chain checked before any model
            if history is not None:
                read.update(history.inputs)
            approve = request.approve_gate_changes
            # the gate changes, looked for once: here before any model is loaded, and after
            # scoring only what the model alone shows (its tokenizer); docs/approval.md
            checked = refuse_before_scoring(cfg, outcome, baseline, approve, base_changed)
            refuse_blind_clusters(cfg, outcome, baseline)  # a gate.cluster that could never fail
            results = score(
                cfg,
                outcome,
                progress,
                shard=shard,
                cache_dir=Path(request.cache).absolute() if request.cache else None,
                checkpoint_arg=request.checkpoint_arg,
                scorer_factory=self.parts.scorer_factory,
            )
            read.update(results["inputs"])  # checkpoint files and test set: hashed even if the gate refuses
            if request.verify_baseline:
                verify_baseline(baseline, results)
            if shard is None:
                results = gate(
                    results,
                    baseline,
                    cfg,
                    approve_gate_changes=approve,
                    probe_files={p.id: p.file for p in outcome.probes},
                    base_inputs_changed=base_changed,
                    history=history,
                    baseline_update=request.verify_baseline,
                    checked_before=checked,
                )
            if gate_changes:
                results["gate_changes"] = gate_changes
        except RefusedError as exc:
            refused = refused_results(cfg, exc, outcome=outcome, extra_inputs=read, gate_changes=gate_changes)
            return self._refused(refused, out_dir, cfg, exc)
        return self._written(results, out_dir, cfg, request)

    def compare(self, request: GateRequest) -> GateOutcome:
        """`evalgate compare RESULTS BASELINE`: gate an existing result without loading any model."""
        from evalgate.edges.files import file_record
        from evalgate.edges.json_input import load_json_file
        from evalgate.gate.results import refuse_partial, validate_results

        cfg = load_config(request.config, request.overrides)
        out_dir = self.parts.outputs.folder(cfg)
        results_path = Path(request.results or "")
        if results_path.is_dir():  # the output folder of a run, as `evalgate merge` takes it
            results_path = results_path / "results.json"
        read: dict[str, Any] = {}  # files read so far: a refusal still lists their SHA-256
        try:
            results = load_json_file(results_path, "results")
            read[results_path.as_posix()] = {**file_record(results_path), "role": "results"}
            validate_results(results, str(results_path))
            if results.get("verdict") == "refused":
                raise RefusedError(f"{results_path}: this run was refused; there is nothing to compare")
            refuse_partial(
                results, str(results_path), "holds only part of the probes; there is nothing to gate yet"
            )
            baseline = self.parts.baselines.baseline(cfg)
            if baseline is not None:
                read.update(baseline[2])
            history = self.parts.baselines.history(cfg, baseline)
            if history is not None:
                read.update(history.inputs)
            shown = results_path.as_posix()
            # The scores come from the results file; the gate (rule, thresholds, slices) and the
            # baseline come from this command's configuration: pin and hash that one too, so the
            # result says how its verdict was reached. Only the per-probe entries are the scores:
            # every table derived from them is recomputed, with the settings the file was written
            # with (a stale table is told apart from a z of this configuration's).
            results = rederive(results, shown, cfg)
            pin = cfg.pin()
            results["config"] = {**results["config"], "gate": pin["gate"], "baseline": pin["baseline"]}
            results["inputs"] = {
                **results["inputs"],
                **config_input(cfg),
                shown: {**file_record(results_path), "role": "results"},
            }
            results = gate(
                results, baseline, cfg, approve_gate_changes=request.approve_gate_changes, history=history
            )
        except RefusedError as exc:
            return self._refused(refused_results(cfg, exc, extra_inputs=read), out_dir, cfg, exc)
        return self._written(results, out_dir, cfg, request)

    def merge(self, request: GateRequest) -> GateOutcome:
        """`evalgate merge PARTS...`: the shards of one run, put back together and gated."""
        from evalgate.edges.json_input import load_json_file
        from evalgate.gate.results import validate_results
        from evalgate.gate.shards import merge_parts, pin_differences

        cfg = load_config(request.config, request.overrides)
        out_dir = self.parts.outputs.folder(cfg)
        progress = self.parts.console.progress()
        # What the sharded gate's merge job passes, as the single-runner gate passes it to `run`.
        gate_changes = read_gate_changes(request.gate_changes)
        base_changed = read_base_inputs_changed(request.base_inputs_changed)
        try:
            with progress.phase(f"merge {len(request.parts)} partial results"):
                parts = []
                for name in request.parts:
                    path = Path(name)
                    if path.is_dir():
                        path = path / "results.json"
                    doc = load_json_file(path, "partial result")
                    validate_results(doc, str(path))
                    if doc.get("verdict") == "refused":
                        raise RefusedError(f"{path}: this shard was refused; fix its input and rerun it")
                    parts.append(doc)
                base, entries = merge_parts(parts, BASE_KEYS)
                # Gate under the configuration the parts were scored with and record (docs/approval.md).
                pin = cfg.pin()
                differing = pin_differences(base["config"], pin)
                if differing:
                    raise RefusedError(
                        "the configuration of this merge pins differently from the parts' "
                        "(their results.json 'config'):\n  " + "\n  ".join(differing),
                        hint="merge with the configuration the shards were run with "
                        "(the same evalgate.yml, or --config FILE)",
                    )
                # the baseline is this merge's choice (the shards never load one): record it
                base["config"] = {**base["config"], "baseline": pin["baseline"]}
                results = finalize(base, entries)
            baseline = self.parts.baselines.baseline(cfg)
            if request.verify_baseline:
                verify_baseline(baseline, results)
            results = gate(
                results,
                baseline,
                cfg,
                approve_gate_changes=request.approve_gate_changes,
                base_inputs_changed=base_changed,
                history=self.parts.baselines.history(cfg, baseline),
                baseline_update=request.verify_baseline,
            )
            if gate_changes:
                results["gate_changes"] = gate_changes
        except RefusedError as exc:
            return self._refused(refused_results(cfg, exc, gate_changes=gate_changes), out_dir, cfg, exc)
        return self._written(results, out_dir, cfg, request)

    def score_for_baseline(
        self, cfg: GateConfig, outcome: Any, checkpoint_arg: str | None, progress: Any
    ) -> dict[str, Any]:
        """`baseline update`: the checkpoint's results, scored and not gated; the baseline they
        become is written by pipeline.write_baseline."""
        return score(
            cfg,
            outcome,
            progress,
            checkpoint_arg=checkpoint_arg,
            scorer_factory=self.parts.scorer_factory,
        )

    # -- the envelope ------------------------------------------------------------------------

    def _prepare(self, cfg: GateConfig) -> Path:
        out_dir = self.parts.outputs.folder(cfg)
        # nothing of an earlier run (or of the PR) can pass for this run's report
        self.parts.outputs.clear(out_dir)
        return out_dir

    def _written(
        self, results: dict[str, Any], out_dir: Path, cfg: GateConfig, request: GateRequest
    ) -> GateOutcome:
        self.parts.outputs.write(results, out_dir, cfg)
        self.parts.console.summary(results, out_dir)
        return GateOutcome(results, out_dir, exit_code(results, cfg, request.fail_on_inconclusive))

    def _refused(
        self, results: dict[str, Any], out_dir: Path, cfg: GateConfig, exc: RefusedError
    ) -> GateOutcome:
        """The one refusal envelope: written, then shown; the error itself follows through
        console.error once the command raises it to cli.main."""
        self.parts.outputs.write(results, out_dir, cfg)
        self.parts.console.refused(results, out_dir, list(exc.findings))
        return GateOutcome(results, out_dir, exc.exit_code, refusal=exc)


# -- the run's own flags, read in the root so that every refusal is the root's ------------------


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        index, count = (int(p) for p in text.split("/"))
    except ValueError:
        raise RefusedError(f"--shard {text}: expected I/N, e.g. 2/4") from None
    if not 1 <= index <= count:
        raise RefusedError(f"--shard {text}: I must be between 1 and N")
    return index, count


def read_gate_changes(path: str | None) -> str | None:
    if not path:
        return None
    from evalgate.edges.inputs import read_checked

    p = Path(path)
    if not os.path.lexists(p):
        raise RefusedError(f"--gate-changes {path}: file not found")
    # named by the workflow (the operator): any folder, but a bounded regular file
    data = read_checked(p, "gate-changes", "gate changes", shown=f"--gate-changes {path}")
    text = data.decode("utf-8", errors="replace")
    return text if text.strip() else None


def read_base_inputs_changed(path: str | None) -> list[str]:
    """The workflow's list of gate files the PR changed and it replaced with the base's copy."""
    if not path:
        return []
    from evalgate.edges.inputs import read_checked

    p = Path(path)
    if not os.path.lexists(p):
        raise RefusedError(f"--base-inputs-changed {path}: file not found")
    data = read_checked(p, "base-inputs-changed", "changed gate files", shown=f"--base-inputs-changed {path}")
    return sorted(
        {line.strip() for line in data.decode("utf-8", errors="replace").splitlines() if line.strip()}
    )


def verify_baseline(baseline: Baseline | None, results: dict[str, Any]) -> None:
    """`--verify-baseline`: a baseline the PR brings is checked against what this run scored."""
    from evalgate.gate.baseline import measured_elsewhere

    if baseline is None:
        raise RefusedError("--verify-baseline: there is no baseline to verify")
    doc, shown, _ = baseline
    why = measured_elsewhere(doc, results)
    if why:
        raise RefusedError(
            f"{shown} is not the baseline this checkpoint scores: " + "; ".join(why),
            hint="under the label evalgate:update-baseline the baseline must be the one "
            "update-baseline-apply.yml wrote for this head (docs/approval.md); re-apply the label to "
            "have it written, or remove the PR's own edit of the baseline",
        )
