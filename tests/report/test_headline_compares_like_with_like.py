"""Every "before -> after" pair a headline shows is on the same items (issue 25 §1: the headline
printed 34.0% vs 31.4% while the shared-items row said 32.4%): the overall accuracy on the probes
both runs scored, in REPORT.md, the PR comment and the console, with this run's accuracy over all
its probes said apart."""

from __future__ import annotations

import json

import pytest
from helpers.factories import make_entry, make_results
from helpers.gate_inputs import baseline_of, entries_of, write_json

from evalgate.report.comment import render_comment


@pytest.mark.integration
def test_new_items_do_not_move_one_side_of_the_headline(tmp_path, cli):
    old = entries_of(n=100, wrong_every=10)  # 90% right
    new = old + [make_entry(f"new-{i:02d}", False, language="en") for i in range(50)]  # all wrong
    results = write_json(tmp_path / "results.json", make_results(new))
    base = write_json(tmp_path / "base.json", baseline_of(old))
    got = cli("compare", results, base, "--out", tmp_path / "out")
    assert got.code == 0, got.err
    pair = (
        "overall 90.0% (baseline 90.0%) on the 100 probes both runs scored; 60.0% on all 150 this run scored"
    )
    head = (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8").split("\n\n", 1)[0]
    assert head == f"## ✅ evalgate: pass — {pair}, no gated slice regressed"
    assert f"verdict PASS ({pair})" in got.out
    doc = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert render_comment(doc).startswith(f"## ✅ evalgate: pass — {pair}\n")
