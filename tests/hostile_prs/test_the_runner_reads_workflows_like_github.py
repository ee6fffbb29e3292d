"""The runner that plays the workflows (helpers/workflow_runner.py) reads them as GitHub does: a
case of this suite is only as good as the runner's reading of `if:`, `${{ }}` and file commands."""

from __future__ import annotations

import pytest
from helpers.actions_expr import ExprError, condition, evaluate, interpolate
from helpers.workflow_runner import parse_file_commands

CTX = {
    "steps": {"scope": {"outputs": {"relevant": "true"}}, "dl": {"outcome": "failure", "outputs": {}}},
    "inputs": {"comment": "yes", "cache": ""},
    "github": {"event": {"pull_request": {"labels": [{"name": "a"}, {"name": "b"}]}}},
}


def ok(name: str) -> bool:
    return name in ("success", "always")


def failed(name: str) -> bool:
    return name in ("failure", "always")


def test_expressions_compare_and_combine_as_github_does():
    assert evaluate("steps.scope.outputs.relevant == 'TRUE'", CTX) is True  # case-insensitive
    assert evaluate("steps.scope.outputs.missing", CTX) is None
    assert evaluate("inputs.cache || 'none'", CTX) == "none"  # || returns an operand
    assert evaluate('contains(fromJSON(\'["true", "yes"]\'), inputs.comment)', CTX) is True
    assert evaluate("join(github.event.pull_request.labels.*.name, ' ')", CTX) == "a b"
    assert interpolate("x-${{ steps.scope.outputs.relevant }}-y", CTX) == "x-true-y"
    with pytest.raises(ExprError):
        evaluate("stepz.scope", CTX)  # an unknown context is an error, never ''


def test_if_means_success_unless_it_names_a_status():
    assert condition("steps.scope.outputs.relevant == 'true'", CTX, ok) is True
    assert condition("steps.scope.outputs.relevant == 'true'", CTX, failed) is False
    assert condition("${{ !cancelled() && steps.dl.outcome == 'failure' }}", CTX, failed) is True
    assert condition(None, CTX, failed) is False


def test_file_commands_read_lines_and_heredocs():
    text = "a=1\nb<<EOF_X\nline1\nline2\nEOF_X\nc=x=y\n"
    assert parse_file_commands(text) == {"a": "1", "b": "line1\nline2", "c": "x=y"}
    with pytest.raises(ValueError):
        parse_file_commands("b<<EOF\nnever closed\n")
