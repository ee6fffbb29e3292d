"""Two suites name one file however they spell it: the file is compared resolved, never as a
string (docs/suites.md)."""

from __future__ import annotations

import os

import pytest
from helpers.items import write_items

CONFIG = """\
suites:
  quiz:
    kind: multiple-choice
    probes: [{quiz_probes}]
    manifest: {quiz_manifest}
    slices: [topic]
  trivia:
    kind: multiple-choice
    probes: [{trivia_probes}]
    manifest: {trivia_manifest}
    slices: [topic]
test: null
baseline: none
"""


@pytest.fixture
def two_suites(tmp_path, monkeypatch):
    write_items(tmp_path / "quiz" / "items.jsonl", "quiz", 6, 1)
    write_items(tmp_path / "trivia" / "items.jsonl", "trivia", 6, 2)
    monkeypatch.chdir(tmp_path)

    def write(**spelled: str) -> None:
        names = {
            "quiz_probes": "quiz/items.jsonl",
            "trivia_probes": "trivia/items.jsonl",
            "quiz_manifest": "quiz/MANIFEST.json",
            "trivia_manifest": "trivia/MANIFEST.json",
            **spelled,
        }
        (tmp_path / "evalgate.yml").write_text(CONFIG.format(**names), encoding="utf-8")

    return write


@pytest.mark.parametrize(
    "spelled", ["./quiz/MANIFEST.json", "trivia/../quiz/MANIFEST.json", "quiz//MANIFEST.json"]
)
def test_one_manifest_spelled_two_ways_is_refused(two_suites, cli, spelled):
    two_suites(trivia_manifest=spelled)
    got = cli("validate")
    assert got.code == 2, got.out + got.err
    assert f"suites.trivia.manifest: {spelled} is suite quiz's manifest too" in got.err
    assert cli("probes", "seal", "--suite", "trivia").code == 2  # never one file for both suites


def test_one_manifest_reached_through_a_linked_folder_is_refused(two_suites, cli, tmp_path):
    os.symlink(tmp_path / "quiz", tmp_path / "alias", target_is_directory=True)
    two_suites(trivia_manifest="alias/MANIFEST.json")
    got = cli("validate")
    assert got.code == 2 and "is suite quiz's manifest too" in got.err, got.out + got.err


def test_one_probe_file_in_two_suites_is_refused_however_spelled(two_suites, cli):
    two_suites(trivia_probes="./quiz/items.jsonl")
    got = cli("validate")
    assert got.code == 2, got.out + got.err
    assert "suites.trivia.probes: ./quiz/items.jsonl is a probe file of suite quiz too" in got.err
