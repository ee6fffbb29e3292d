"""What validating a probe set yields: one `ValidationOutcome`, and the probe-set record of results.json.

Every problem lands in the outcome, so `evalgate validate` and `evalgate run` report all of them
at once; which findings a maintainer may approve as gate changes is decided here too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalgate.probeset.coverage import coverage_rows
from evalgate.probeset.manifest import ProbeFile, probe_set_digest
from evalgate.types import Finding, Probe

# Findings that are gate changes against the baseline (docs/approval.md), not defects of the set.
APPROVABLE_CHECKS = frozenset({"deleted-since-baseline", "manifest-version-back"})


@dataclass(frozen=True)
class ValidationOutcome:
    probes: tuple[Probe, ...]  # every parsed probe, deprecated included, in file order
    findings: tuple[Finding, ...]  # blocking failures; empty = ok
    warnings: tuple[Finding, ...]  # non-blocking (unsealed set, twins, ...)
    leaks: tuple[Finding, ...]  # every leak finding (also in findings unless leaks.policy == "exclude")
    excluded: frozenset[str]  # ids left out under leaks.policy == "exclude"
    coverage: dict  # the matrix, JSON-able
    inputs: dict[str, dict]  # display path -> {"sha256", "bytes", "role"} for every file read
    probe_set: dict  # {"version", "digest", "files": {path: {"sha256", "cases"}}, "n_generated", "n_hand"}
    template: str | None  # the prompt template text, validated (None when missing or invalid)
    # suite name -> its template, for a configuration with `suites:` (docs/suites.md); empty otherwise
    templates: dict[str, str | None] = dataclasses.field(default_factory=dict)
    complete: bool = True  # every file and record was read, so every id in the set is known

    @property
    def ok(self) -> bool:
        return not self.findings

    def with_approvable_as_warnings(self) -> ValidationOutcome:
        """The outcome with the gate changes a maintainer can approve moved to the warnings.

        `validate` refuses a probe deleted since the baseline and a manifest version set back;
        `run` leaves them to the gate-change check against the baseline, which refuses them
        unless approved and names what approves them (docs/approval.md); `probes seal` and
        `baseline update` record them as they are.
        """
        moved = tuple(f for f in self.findings if f.check in APPROVABLE_CHECKS)
        if not moved:
            return self
        kept = tuple(f for f in self.findings if f.check not in APPROVABLE_CHECKS)
        return dataclasses.replace(self, findings=kept, warnings=(*self.warnings, *moved))


def probe_set_record(
    version: str | None, probes: Sequence[Probe], files: Sequence[ProbeFile], matrix: dict[str, Any] | None
) -> dict[str, Any]:
    """results.json `probe_set`: version, digest, files, counts, and the coverage matrix shown in
    REPORT.md (report/coverage.py) when every probe could be read (`matrix` None otherwise)."""
    live = [p for p in probes if not p.deprecated]
    probe_set: dict[str, Any] = {
        "version": version,
        "digest": probe_set_digest(probes),
        "files": {f.display: {"sha256": f.sha256, "cases": f.cases} for f in files},
        "n_generated": sum(p.source == "generated" for p in live),
        "n_hand": sum(p.source == "hand" for p in live),
    }
    if matrix is not None:
        probe_set["coverage"] = coverage_rows(matrix)
    return probe_set
