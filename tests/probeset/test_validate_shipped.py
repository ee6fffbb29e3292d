"""The repository's own configuration validates clean: the shipped probe set, zero leaks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers.paths import REPO
from helpers.probeset_factory import cli_merged


@pytest.mark.integration
def test_shipped_set_validates_clean_with_zero_leaks():
    code, out = cli_merged("validate", "--config", str(REPO / "evalgate.yml"), "--format", "json")
    doc = json.loads(out)
    assert code == 0, json.dumps(doc["findings"], indent=1)
    s = doc["summary"]
    assert s["leaks"] == 0 and s["coverage_ok"]
    assert s["core"] >= 60 and s["adversarial"] >= 20
    assert s["train_files"] == ["data/corpus/train.jsonl", "data/corpus/val.jsonl"]
    # an unsealed set is allowed (a warning); nothing else may be wrong with the shipped set
    assert {w["check"] for w in doc["warnings"]} <= {"manifest-missing"}


@pytest.mark.integration
def test_evalgate_validate_in_the_repository_exits_0():
    """The real entry point, with no flags: ./evalgate.yml of the working directory."""
    proc = subprocess.run(
        [sys.executable, "-m", "evalgate", "validate"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("evalgate validate: OK")
    assert "0 leaks" in proc.stdout
