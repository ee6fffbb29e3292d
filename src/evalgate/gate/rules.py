"""The gate's rules as the comparison reads them: the `gate:` section of evalgate.yml, typed.

Defined here, in the pure gate package, so that gate/compare.py depends on nothing above it;
config.py builds it from the configuration (docs/gate.md, docs/cli.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class GateRules:
    rule: str  # paired | wilson
    alpha: float
    tolerance: float  # accuracy drop (absolute) that is tolerated
    min_n: int  # slices smaller than this are shown, not gated
    mde_max: float  # slices that cannot detect a drop this large are gated but marked low power
    assumed_disagreement: float  # share of probes two equally good checkpoints disagree on (MDE model)
    z: float  # Wilson interval z (1.96 = 95%)
    perplexity_max_ratio: float
    slices: tuple[str, ...]  # slice families that are gated (overall, language, ...)
    # Optional, and left out of the pinned configuration when unset, so a configuration that
    # does not use them pins (and hashes) exactly as before they existed (docs/suites.md).
    # Slice key -> the lowest accuracy that passes, baseline or not ("SUITE/*" keys: every slice
    # of that suite).
    min_accuracy: tuple[tuple[str, float], ...] = field(default=())
    # Slice key -> the tolerance that slice is gated with instead of `tolerance`.
    tolerances: tuple[tuple[str, float], ...] = field(default=())
    # Several suites: "SUITE/*" -> the suite's own `gate.min_n` (docs/suites.md). Not pinned here:
    # the suite's pin carries it (config.py), and the yardstick lists it under the suite's name.
    min_ns: tuple[tuple[str, int], ...] = field(default=())
    # How the paired rule's p-values are adjusted across the gated slices: "holm" or
    # "westfall-young" (gate/westfall_young.py). None (unset) is Holm, pinned as before the key
    # existed; set, it is pinned, so changing it in a PR is a gate change (docs/approval.md).
    multiplicity: str | None = None
    # The probe field (or multiple-choice slice dimension) whose values are clusters of the paired
    # test (gate/cluster.py, docs/gate.md "Clustered flips"); None tests probe by probe.
    cluster: str | None = None
    # What an inconclusive verdict exits with (docs/gate.md, "Verdict"): "pass" exits 0, "fail"
    # exits 1. The verdict itself stays `inconclusive` either way; `--fail-on-inconclusive` (the
    # Action's `fail-on-inconclusive`) makes it 1 whatever this says.
    inconclusive: str = "pass"
    # Drift since the anchor baseline (gate/drift.py, docs/gate.md "Drift"): the tolerance of every
    # gated slice, and per-slice ones (`gate.drift_tolerance` as a map: only the slices it names
    # are checked). Both unset: no drift check, and pinned exactly as before the key existed.
    drift_tolerance: float | None = None
    drift_tolerances: tuple[tuple[str, float], ...] = field(default=())

    @property
    def drift_on(self) -> bool:
        return self.drift_tolerance is not None or bool(self.drift_tolerances)

    def min_n_for(self, key: str) -> int:
        """The fewest shared probes that gate one slice: its suite's `min_n`, else the run's."""
        suite, slash, _ = key.partition("/")
        return dict(self.min_ns).get(f"{suite}/*", self.min_n) if slash else self.min_n

    def tolerance_for(self, key: str) -> float:
        """The tolerance of one slice: its own, else its suite's ("SUITE/*"), else the run's."""
        own = dict(self.tolerances)
        if key in own:
            return own[key]
        suite, slash, _ = key.partition("/")
        if slash and f"{suite}/*" in own:
            return own[f"{suite}/*"]
        return self.tolerance
