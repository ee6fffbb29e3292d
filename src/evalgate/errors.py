"""The error family and the exit-code contract.

Core code raises an `EvalgateError` subclass; only `cli.py` turns it into a message and an
exit code. Exit codes are a tested contract (docs/cli.md):
"""

from __future__ import annotations

EXIT_PASS = 0  # the gate passed (or a command succeeded)
EXIT_REGRESSION = 1  # a gated slice regressed
EXIT_REFUSED = 2  # bad input: probes, leaks, checkpoint, configuration, usage
EXIT_UNEXPECTED = 3  # a bug or an environment failure we did not foresee


class EvalgateError(Exception):
    """An expected failure, shown to the user as `message` plus an optional `hint`."""

    exit_code = EXIT_REFUSED

    def __init__(self, message: str, hint: str | None = None, *, findings=None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        # Validation failures carry every Finding so the CLI can render them all at once.
        self.findings = list(findings or [])

    def __str__(self) -> str:
        return self.message


class RefusedError(EvalgateError):
    """The input is bad (probe set, leak, baseline, config): nothing is scored."""


class CheckpointError(RefusedError):
    """The checkpoint cannot be loaded safely: corrupt, truncated, wrong shape, unsafe."""


class ConfigError(RefusedError):
    """evalgate.yml or a flag is invalid."""


class NotComparableError(RefusedError):
    """The baseline was measured differently (method, normalisation, template, ...)."""


class GitHubError(EvalgateError):
    """The GitHub API could not be reached or refused the call."""

    exit_code = EXIT_UNEXPECTED
