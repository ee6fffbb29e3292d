"""Attack round (attack3): a journal the gate never looks at before the merge.

`run`, `validate` (probeset_io.refuse_unfinished_update, edges/journal.refuse_pending) refuse a set
or a baseline folder holding `.evalgate-journal.json`. The scope decision (github/pr_scope.py)
does not count that file as a gate input when the folder it sits in is not itself one (a baseline
kept at `eval/baseline.json`, a manifest at `evals/MANIFEST.json`, both supported layouts): the
PR that adds it is "not relevant", passes unscored, and once merged every later gate run (every
PR, the badge) is refused (exit 2) until someone deletes it by hand.
"""

from __future__ import annotations

import json

import pytest
from helpers.pr_repo import repo_with, scope

JOURNAL = ".evalgate-journal.json"


def journal(target: str) -> str:
    return json.dumps({"replace": [{"target": target, "staged": f".{target}.evalgate-new"}]}) + "\n"


@pytest.mark.parametrize(
    ("base", "pr"),
    [
        (
            {
                "evalgate.yml": "checkpoint: models/mine\nbaseline: eval/baseline.json\n",
                "eval/baseline.json": "{}\n",
            },
            {f"eval/{JOURNAL}": journal("baseline.json"), "eval/.baseline.json.evalgate-new": "{}\n"},
        ),
        (
            {
                "evalgate.yml": "checkpoint: models/mine\nbaseline: baselines/mine.json\n"
                "probes: [evals/items.jsonl]\nmanifest: evals/MANIFEST.json\n",
                "baselines/mine.json": "{}\n",
                "evals/items.jsonl": "{}\n",
                "evals/MANIFEST.json": "{}\n",
            },
            {f"evals/{JOURNAL}": journal("items.jsonl"), "evals/.items.jsonl.evalgate-new": "{}\n"},
        ),
    ],
    ids=["beside-a-baseline-outside-baselines", "beside-a-manifest-outside-data-eval"],
)
def test_a_journal_beside_a_gate_input_makes_the_pr_relevant(tmp_path, base, pr):
    work, sha = repo_with(tmp_path, base, pr)
    result = scope(work, sha)
    assert result.code == 0, result.err
    assert result.relevant, "a journal every later gate run refuses is merged unscored"
