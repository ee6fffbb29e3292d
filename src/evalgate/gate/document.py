"""The results document (results.json) as types: one TypedDict per object of the contract.

`schemas/results.schema.json` is the source of truth: every key here carries the schema's name,
a key the schema requires is a plain key, every other key is `NotRequired` (docs/report.md lists the outputs).
A renderer may therefore index a required key (`doc["slices"]`) and must `.get` the rest: every
document that reaches a renderer has passed the schema check (`gate.results.validate_results`),
ours before it is written and an untrusted artifact's before it is read.

A few keys the code writes are not (yet) in the schema; they sit below the schema's keys of their
object, marked "not in the schema", and are `NotRequired` for the same reason: a schema-valid
document from another tool need not have them. tests/gate/test_document_schema.py fails when the types
and the schema disagree.

Types only: no code runs here, and nothing checks a document against these at run time.
Written without `from __future__ import annotations`: Python 3.11 reads `NotRequired` only from
evaluated annotations.
"""

from typing import Any, Literal, NotRequired, TypedDict

# results.json's "ordinal" object is typed where it is computed (scoring/, a lower layer)
from evalgate.scoring.ordinal_types import Ordinal

Verdict = Literal["pass", "fail", "inconclusive", "refused"]
ProbeStatus = Literal["scored", "ambiguous", "model_oov", "deprecated", "excluded"]
SliceStatus = Literal["ok", "regressed", "inconclusive", "too_small", "new"]
ScoringMethod = Literal["candidate", "candidate-raw", "sentence"]
Normalization = Literal["tokens", "chars", "bytes", "none"]


class InputFile(TypedDict):
    sha256: str
    bytes: int
    role: NotRequired[str]


class Checkpoint(TypedDict):
    path: NotRequired[str]
    format: NotRequired[Literal["native", "hf", "plugin"]]
    sha256: NotRequired[str]
    loader: NotRequired[str | None]
    loader_sha256: NotRequired[str]  # with a plugin: its code's SHA-256 (edges/plugin_code.py)
    n_parameters: NotRequired[int]


class GateSettings(TypedDict):
    rule: NotRequired[str]
    alpha: NotRequired[float]
    tolerance: NotRequired[float]
    min_n: NotRequired[int]
    mde_max: NotRequired[float]
    z: NotRequired[float]
    perplexity_max_ratio: NotRequired[float]
    assumed_disagreement: NotRequired[float]
    slices: NotRequired[list[str]]
    cluster: NotRequired[str | None]  # gate.cluster, pinned only when set
    inconclusive: NotRequired[Literal["pass", "fail"]]  # gate.inconclusive (absent before it existed)


class ConfigPin(TypedDict):
    """The evalgate.yml settings the run used; only `gate` is read back by the renderers."""

    gate: NotRequired[GateSettings]
    report: NotRequired[dict[str, Any]]
    leaks: NotRequired[dict[str, Any]]


class Manifest(TypedDict):
    method: ScoringMethod
    normalization: Normalization
    template_sha256: str
    dtype: str
    scoring_version: str
    probe_set_digest: str
    probe_set_version: NotRequired[str | None]
    tokenizer_sha256: NotRequired[str | None]
    # not in the schema
    test_sha256: NotRequired[str | None]
    # the device scored on, only when not the CPU (gate/results.comparability_manifest)
    device: NotRequired[str]
    # several suites: each suite's template hash by name (gate/compare.py compares them suite by suite)
    template_sha256_by_suite: NotRequired[dict[str, str]]


class Candidate(TypedDict):
    text: str
    continuation: NotRequired[str]
    loglik: NotRequired[float]
    n_tokens: NotRequired[int]
    score: NotRequired[float]
    surprisal: NotRequired[float]


class ProbeEntry(TypedDict):
    """One probe's outcome; the probe's own fields (types.CONTENT_FIELDS) ride along."""

    id: str
    status: ProbeStatus
    context: NotRequired[str]
    candidates: list[Candidate]
    pred: NotRequired[str | None]
    expected: str
    correct: NotRequired[bool | None]
    tie: NotRequired[Literal[True]]  # several candidates share the top score: counted wrong
    confidence: NotRequired[float | None]
    entropy: NotRequired[float | None]
    entropy_norm: NotRequired[float | None]
    content_hash: NotRequired[str]
    # not in the schema: the probe record's fields
    language: NotRequired[str]
    verb: NotRequired[str]
    regularity: NotRequired[str]
    tense: NotRequired[str]
    person: NotRequired[str]
    prompt: NotRequired[str]
    label: NotRequired[str]
    category: NotRequired[str]
    reason_code: NotRequired[str | None]
    kind: NotRequired[str]
    source: NotRequired[str | None]
    # a multiple-choice item's dimensions, and the suite of a run with several (docs/suites.md)
    slices: NotRequired[dict[str, str]]
    suite: NotRequired[str]


class Floor(TypedDict):
    """results.json "floors": one slice's `gate.min_accuracy` and how the run met it (gate/floors.py)."""

    min_accuracy: float
    accuracy: float | None
    n: int
    chance: float | None
    status: Literal["ok", "below", "missing"]
    shared_accuracy: NotRequired[float]  # with a baseline: over the probes it scored too
    shared_n: NotRequired[int]
    counted_wrong: NotRequired[int]  # with a baseline: unscorable here, scored by it: counted wrong


class Slice(TypedDict):
    n: int
    correct: int
    accuracy: float | None
    wilson_low: float | None
    wilson_high: float | None
    # not in the schema
    n_ambiguous: NotRequired[int]
    n_model_oov: NotRequired[int]
    n_excluded: NotRequired[int]
    mean_entropy: NotRequired[float | None]
    mean_entropy_norm: NotRequired[float | None]


class VerbCell(TypedDict):
    n: int
    correct: int


class Perplexity(TypedDict):
    value: NotRequired[float | None]
    n_tokens: NotRequired[int]
    not_finite: NotRequired[str]
    sentence_nll: NotRequired[list[float]]
    sentence_tokens: NotRequired[list[int]]
    # not in the schema
    file: NotRequired[str]
    nll: NotRequired[float]
    test_sha256: NotRequired[str]  # a suite's own test set (`suite_perplexity`)


class CalibrationBin(TypedDict):
    lo: float
    hi: float
    n: int
    mean_confidence: NotRequired[float | None]
    accuracy: NotRequired[float | None]
    gap: NotRequired[float | None]


class EntropySummary(TypedDict):
    n: NotRequired[int]
    mean: NotRequired[float | None]
    median: NotRequired[float | None]
    min: NotRequired[float | None]
    max: NotRequired[float | None]


class Calibration(TypedDict):
    """ECE and its reliability table; `{}` when nothing was scored."""

    ece: NotRequired[float | None]
    n: NotRequired[int]
    bins: NotRequired[list[CalibrationBin]]
    confident_entropy: NotRequired[float]
    review_entropy: NotRequired[float]
    confident_errors: NotRequired[list[str]]
    high_entropy: NotRequired[list[str]]
    entropy: NotRequired[dict[str, EntropySummary]]


class SliceComparison(TypedDict):
    baseline_accuracy: NotRequired[float | None]
    accuracy: NotRequired[float | None]
    delta: NotRequired[float | None]
    p_value: NotRequired[float | None]
    p_mcnemar: NotRequired[float | None]
    disagreement: NotRequired[float | None]
    mde: NotRequired[float | None]
    underpowered: NotRequired[bool]
    status: SliceStatus
    # gate.cluster set and too few clusters to reach the first Holm step's level (gate/inconclusive.py)
    clusters_needed: NotRequired[int | None]
    # not in the schema
    n_shared: NotRequired[int]
    n_new: NotRequired[int]
    tolerance: NotRequired[float]  # the slice's own (gate.tolerances), when it differs from the run's
    b: NotRequired[int]
    c: NotRequired[int]
    gated: NotRequired[bool]
    p_adjusted: NotRequired[float | None]
    wilson_low: NotRequired[float | None]
    wilson_high: NotRequired[float | None]
    # gate.cluster set (gate/cluster.py): the clustered test replaced the per-probe p-value
    p_unclustered: NotRequired[float | None]
    cluster_test: NotRequired[Literal["sign-flip-exact", "sign-flip-monte-carlo"]]
    n_clusters: NotRequired[int]
    cluster_draws: NotRequired[int]
    t_cluster: NotRequired[float | None]


class ClusterSummary(TypedDict):
    """results.json `comparison.cluster`: the within-cluster correlation of flips (gate/cluster.py)."""

    field: str
    clustered: bool
    n_clusters: int
    n_probes: int
    n_flipped: int
    mean_cluster_size: float
    icc: float | None
    design_effect: float | None
    icc_p_value: NotRequired[float | None]
    warning: NotRequired[str]


class CountedWrong(TypedDict):
    id: str
    status: str
    baseline_correct: bool


class PerplexityComparison(TypedDict):
    status: NotRequired[Literal["ok", "regressed", "inconclusive", "failed", "missing", "not_comparable"]]
    test: NotRequired[Literal["betting-nll-ratio", "paired-t-token-weighted", "ratio"]]
    note: NotRequired[str]
    p_value: NotRequired[float | None]
    p_adjusted: NotRequired[float | None]  # in one family with the gated slices
    nll_increase: NotRequired[float | None]
    ratio_low: NotRequired[float | None]
    ratio_high: NotRequired[float | None]
    interval_level: NotRequired[float | None]
    n_sentences: NotRequired[int]
    # not in the schema
    baseline: NotRequired[float | None]
    value: NotRequired[float | None]
    ratio: NotRequired[float | None]
    max_ratio: NotRequired[float]
    comparable: NotRequired[bool]
    reason: NotRequired[str | None]


class Unpaired(TypedDict):
    id: str
    baseline_status: str
    status: str


class Inconclusive(TypedDict):
    """results.json `comparison.inconclusive`: what the gate could not decide (gate/inconclusive.py)."""

    slice: str | None
    why: Literal["low_power", "too_few_clusters", "nothing_gated", "perplexity_undecided", "too_small"]
    n: int
    drop: float | None
    tolerance: NotRequired[float]
    mde: NotRequired[float | None]
    p_value: NotRequired[float | None]
    p_adjusted: NotRequired[float | None]
    items_needed: NotRequired[int | None]
    n_clusters: NotRequired[int]
    clusters_needed: NotRequired[int | None]
    level: NotRequired[float]
    min_n: NotRequired[int]
    largest_slice: NotRequired[str | None]
    largest_n: NotRequired[int]
    ratio: NotRequired[float | None]  # perplexity_undecided: new / baseline perplexity
    max_ratio: NotRequired[float | None]
    suite: NotRequired[str]  # perplexity_undecided of a suite's own test set
    floor: NotRequired[float]


class DriftSlice(TypedDict):
    """results.json `drift.slices`: one slice compared with the anchor (gate/drift.py)."""

    anchor_accuracy: NotRequired[float | None]
    accuracy: NotRequired[float | None]
    delta: NotRequired[float | None]
    n_shared: NotRequired[int]
    b: NotRequired[int]
    c: NotRequired[int]
    p_value: NotRequired[float | None]
    p_adjusted: NotRequired[float | None]
    mde: NotRequired[float | None]
    underpowered: NotRequired[bool]
    gated: NotRequired[bool]
    status: SliceStatus
    tolerance: NotRequired[float]


class TrendPoint(TypedDict):
    """One baseline's (or this run's, `sha256` "run") accuracy of a slice, in `drift.trend`."""

    sha256: str
    accuracy: float | None
    n: NotRequired[int | None]


class Drift(TypedDict):
    """results.json `drift` (gate/drift.py, docs/gate.md "Drift")."""

    status: Literal["pass", "fail", "inconclusive", "off", "no_anchor", "not_comparable"]
    anchor: NotRequired[str]
    anchor_sha256: NotRequired[str]
    updates_since_anchor: NotRequired[int]
    tolerance: NotRequired[float | None]
    tolerances: NotRequired[dict[str, float]]
    look: NotRequired[int]
    alpha: NotRequired[float]
    alpha_total: NotRequired[float]
    spending: NotRequired[str]
    n_changed_since_anchor: NotRequired[int]
    reason: NotRequired[str]
    n_paired: NotRequired[int]
    slices: NotRequired[dict[str, DriftSlice]]
    regressed: NotRequired[list[str]]
    inconclusive: NotRequired[list[Inconclusive]]
    reasons: NotRequired[list[str]]
    approved: NotRequired[bool]
    trend: NotRequired[dict[str, list[TrendPoint]]]


class Comparison(TypedDict):
    baseline: NotRequired[str]
    rule: NotRequired[Literal["paired", "wilson"]]
    slices: NotRequired[dict[str, SliceComparison]]
    counted_wrong: NotRequired[list[CountedWrong]]
    test: NotRequired[Literal["noninferiority-exact-unconditional", "wilson"]]
    mde_level: NotRequired[float | None]
    mde_disagreement: NotRequired[float | None]
    mde_design_effect: NotRequired[float]  # gate.cluster: the MDEs' effective n is n / this
    multiplicity: NotRequired[Literal["holm", "westfall-young"]]  # absent: Holm (gate.multiplicity unset)
    multiplicity_null: NotRequired[Literal["sign-flip", "boundary"]]  # with westfall-young only
    multiplicity_fallback: NotRequired[str]  # westfall-young replaced by Holm for its memory bound
    perplexity: NotRequired[PerplexityComparison | None]
    suite_perplexity: NotRequired[dict[str, PerplexityComparison]]
    cluster: NotRequired[ClusterSummary]
    inconclusive: NotRequired[list[Inconclusive]]
    # not in the schema
    baseline_name: NotRequired[str | None]  # None: the baseline document has no name
    thresholds: NotRequired[GateSettings]
    n_paired: NotRequired[int]
    regressed: NotRequired[list[str]]
    flipped: NotRequired[dict[str, list[str]]]
    new_probes: NotRequired[list[str]]
    gone_probes: NotRequired[list[str]]
    deprecated: NotRequired[list[str]]
    unpaired: NotRequired[list[Unpaired]]


class FindingDict(TypedDict):
    """`types.Finding.to_dict()`: a finding, or a warning (an object the schema leaves open)."""

    check: str
    message: str
    # not in the schema
    file: NotRequired[str]
    line: NotRequired[int]
    probe_id: NotRequired[str]
    field: NotRequired[str]
    hint: NotRequired[str]
    evidence: NotRequired[dict[str, Any]]


class AmbiguousProbe(TypedDict):
    id: str
    entropy: NotRequired[float | None]
    entropy_norm: NotRequired[float | None]


class LeakGroup(TypedDict):
    excluded: int
    total: int
    fraction: float


class LeakSummary(TypedDict):
    """`gate.results.leak_summary`; the schema leaves this object open."""

    # not in the schema
    policy: NotRequired[str]
    excluded: NotRequired[list[str]]
    by_label: NotRequired[dict[str, LeakGroup]]
    by_category: NotRequired[dict[str, LeakGroup]]


# The kinds of gate change, in the order the report lists them (gate/yardstick.py KINDS).
GateChangeKind = Literal[
    "base_input",
    "probe_removed",
    "probe_deprecated",
    "probe_changed",
    "loader",
    "test_set",
    "tokenizer",
    "template",
    "grammar",
    "training_file",
    "coverage_rule",
    "config_rule",
    "manifest_version",
]


class GateChange(TypedDict):
    kind: GateChangeKind
    key: str
    old: Any
    new: Any
    file: str | None


class Shard(TypedDict):
    """Partial results of `run --shard I/N` only."""

    index: int
    count: int
    order: list[str]


class ResultsDocument(TypedDict):
    """results.json. A pass or fail also has `manifest` and `checkpoint`; a refusal `reasons` and
    `findings` (the schema's `allOf`): they are `NotRequired` here, as the verdict decides."""

    schema_version: Literal[1]
    evalgate_version: str
    verdict: Verdict
    reasons: NotRequired[list[str]]
    inputs: dict[str, InputFile]
    checkpoint: NotRequired[Checkpoint | None]
    config: ConfigPin
    manifest: NotRequired[Manifest]
    probe_set: NotRequired[dict[str, Any]]
    probes: list[ProbeEntry]
    slices: dict[str, Slice]
    per_verb: NotRequired[dict[str, VerbCell]]  # absent without verb-form probes
    perplexity: Perplexity | None
    suite_perplexity: NotRequired[dict[str, Perplexity]]
    calibration: Calibration
    comparison: NotRequired[Comparison | None]
    findings: NotRequired[list[FindingDict]]
    ordinal: NotRequired[Ordinal]
    warnings: NotRequired[list[FindingDict]]
    counts: NotRequired[dict[str, int]]
    ambiguous: NotRequired[list[AmbiguousProbe]]
    slices_full: NotRequired[dict[str, Slice]]
    leaks: NotRequired[LeakSummary]
    gate_changes: NotRequired[str]
    gate_changes_vs_baseline: NotRequired[list[GateChange]]
    shard: NotRequired[Shard]
    floors: NotRequired[dict[str, Floor]]
    drift: NotRequired[Drift]
