"""Every YAML example of docs/suites.md is a configuration evalgate accepts.

The main example of "The suite model" was once refused by `evalgate validate` (a suite's own
`test:` next to a top-level `test: null`, which with one suite are the same setting).
"""

from __future__ import annotations

import re

import pytest
from helpers.paths import REPO

from evalgate.config import load_config

DOC = REPO / "docs" / "suites.md"
BLOCKS = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
# an indented example shows some keys of a suite: read inside one
SUITE = "suites:\n  k8s:\n    kind: multiple-choice\n    probes: [evalgate/k8s/items.jsonl]\n"


def test_the_doc_has_yaml_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("block", BLOCKS, ids=[f"example-{i + 1}" for i in range(len(BLOCKS))])
def test_each_yaml_example_loads(tmp_path, block):
    text = SUITE + block if block.startswith(" ") else block
    path = tmp_path / "evalgate.yml"
    path.write_text(text, encoding="utf-8")
    cfg = load_config(path)  # raises ConfigError naming every problem
    assert cfg.suites
