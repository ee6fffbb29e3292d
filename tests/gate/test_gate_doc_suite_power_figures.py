"""docs/gate.md's "What your suite can see" quotes gate/power.py's figures: recomputed here.

Table K's analytic columns (MDE, exact power, items needed) and table L (init's floors: the exact
chance an equally good checkpoint fails one) come from bench/gate_power.py's functions; the
figures the prose quotes from gate/power.py and gate/noninferiority.py. Table K's simulated
columns are the bench's draws: there the page's stated inputs must be the bench's.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from helpers.paths import REPO

from evalgate.gate import noninferiority as ni
from evalgate.gate import power

DOC = (REPO / "docs" / "gate.md").read_text(encoding="utf-8")
PROSE = " ".join(DOC.split())
TOL = 0.02


def _bench():
    spec = importlib.util.spec_from_file_location("gate_power", REPO / "bench" / "gate_power.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _table(heading: str) -> list[list[str]]:
    after = DOC[DOC.index(heading) :]
    lines = after.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


@pytest.mark.stats
def test_table_k_analytic_columns_are_the_shipped_tests_and_the_simulation_agrees():
    bench = _bench()
    rows = _table("**Checked against simulation**")
    want = bench.mde_against_simulation(np.random.default_rng([4, 25]), bench.default_rules(), 200, 20)
    assert len(rows) == len(want)
    for got, exact in zip(rows, want, strict=True):
        n, base, churn, mde, exact_power, simulated, needed, at_needed = got
        assert [n, churn, mde, exact_power] == [str(exact[0]), exact[2], exact[3], exact[4]]
        assert base.replace("–", "-") == exact[1]
        assert needed.replace("–", "-") == str(exact[6])
        assert abs(float(simulated) - 0.8) < 0.04  # 1,000 draws (the gate row 200): se 0.013 / 0.028
        if at_needed != "–":
            assert abs(float(at_needed) - 0.8) < 0.04
    assert (
        "(`bench/gate_power.py` table K, `--quick`: 1,000 draws per cell, the gate row 200, seed 4)" in PROSE
    )


def test_table_l_is_the_exact_false_fail_chance_of_inits_floors():
    bench = _bench()
    rows = _table("The price of a floor is false fails.")
    assert rows == [[str(c) for c in row] for row in bench.floor_false_fails(bench.default_rules())]


@pytest.mark.parametrize(
    ("phrase", "value"),
    [
        ("at a 65.7% baseline have MDEs of 30.7 / 34.4 / 39.9 points", [
            power.mde_given_baseline(35, 23, TOL, 0.01, s) for s in (0.05, 0.10, 0.20)
        ]),
        ("against 31.9 / 36.4 / 43.5 with none", [ni.mde(35, TOL, 0.01, s) for s in (0.05, 0.10, 0.20)]),
    ],
)  # fmt: skip
def test_quoted_mdes_are_gate_powers(phrase, value):
    assert phrase in PROSE
    assert " / ".join(f"{100 * v:.1f}" for v in value) in phrase


def test_quoted_floors_are_inits_rule():
    assert "23 of 35 gives 0.47, so the 40.0% run fails; 35 of 35 gives 0.88" in PROSE
    assert power.suggested_floor(35, 23, TOL, 0.25, 1.96) == 0.47 > 14 / 35
    assert power.suggested_floor(35, 35, TOL, 0.25, 1.96) == 0.88
    assert "(39.3% for 4 choices on 35 items, 25% + 14.3 points)" in PROSE
    assert f"{100 * power.guess_ceiling(0.25, 35, 1.96):.1f}%" == "39.3%"
