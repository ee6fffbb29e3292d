"""docs/cli.md is generated from the CLI parser; it fails here when they drift apart."""

from __future__ import annotations

import argparse
import importlib.util
import sys

import pytest
from helpers.paths import REPO

from evalgate.cli import build_parser

DOC = REPO / "docs" / "cli.md"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_cli_docs", REPO / "scripts" / "gen_cli_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _command_paths(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[str]:
    """Every command the parser accepts, walked here independently of the generator's own walk."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append(" ".join(("evalgate", *path, name)))
                found += _command_paths(sub, (*path, name))
    return found


# argparse's help layout changes between Python versions (3.13 writes `-o, --output FILE`); the
# page is rendered with 3.11, the version CI and the Docker image run.
@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="docs/cli.md is rendered with Python 3.11")
def test_the_committed_cli_reference_matches_the_parser(monkeypatch):
    monkeypatch.setenv("COLUMNS", "37")  # the terminal's width must not matter
    assert DOC.read_text(encoding="utf-8") == _generator().render(), (
        "docs/cli.md is stale: run `.venv/bin/python scripts/gen_cli_docs.py`"
    )


def test_every_command_and_sub_command_has_its_section():
    text = DOC.read_text(encoding="utf-8")
    paths = _command_paths(build_parser())
    # the ones the task names, so a broken walk cannot pass with an empty list
    assert {"evalgate run", "evalgate baseline update", "evalgate probes seal", "evalgate action"} <= set(
        paths
    )
    missing = [p for p in paths if f"\n## `{p}`\n" not in text]
    assert not missing, f"docs/cli.md lacks {missing}: run `.venv/bin/python scripts/gen_cli_docs.py`"
    for path in paths:
        section = text.split(f"\n## `{path}`\n", 1)[1]
        assert section.lstrip().startswith("```text\nusage: " + path), path


def test_a_new_flag_changes_the_reference(monkeypatch):
    gen = _generator()
    real = gen.build_parser

    def with_new_flag() -> argparse.ArgumentParser:
        parser = real()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        sub.choices["validate"].add_argument("--strictness", help="a flag nobody documented")
        return parser

    monkeypatch.setattr(gen, "build_parser", with_new_flag)
    assert "--strictness" in gen.render()
