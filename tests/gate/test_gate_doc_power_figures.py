"""docs/gate.md's power figures are the shipped test's, recomputed here (issue 25).

The page once printed MDEs, powers and the probes a slice needs from the McNemar rule the gate had
replaced (8.7 points where the shipped test's MDE is 11.3). Every analytic figure of the power
study (table A's MDE column, tables D and F, and the figures quoted in the text) is recomputed
from gate/noninferiority.py (and bench/gate_power.py, whose functions print them) and must match
the page to its printed digits. The simulated tables are bench/gate_power.py's output; for those
the page's stated inputs (draws, seed, shape) must be the bench's.
"""

from __future__ import annotations

import importlib.util
import re

import pytest
from helpers.paths import REPO

from evalgate.gate import noninferiority as ni
from evalgate.gate.stats import mcnemar_rule_power, mde_wilson

DOC = (REPO / "docs" / "gate.md").read_text(encoding="utf-8")
PROSE = " ".join(DOC.split())  # line breaks fall anywhere in a sentence
ALPHA, TOL, P0 = 0.05, 0.02, 0.75  # the study's thresholds and baseline accuracy (docs/gate.md)


def _bench():
    spec = importlib.util.spec_from_file_location("gate_power", REPO / "bench" / "gate_power.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _table(heading: str) -> list[list[str]]:
    """The rows (cells stripped) of the first markdown table after the paragraph `heading` opens."""
    after = DOC[DOC.index(heading) :]
    lines = after.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _points(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


@pytest.mark.stats
def test_table_a_mde_column_is_the_shipped_tests_and_its_shape_the_benchs():
    bench = _bench()
    rows = _table("**A. One slice, one test**")
    assert [(r[0], r[1], int(r[2])) for r in rows] == [
        (rule, f"{churn:.0%}", n)
        for rule in ("paired", "wilson")
        for churn in bench.CHURNS
        for n in bench.SIZES
    ]
    for rule, churn, n, mde, *rates in rows:
        b = int(churn.rstrip("%")) / 100
        want = ni.mde(int(n), TOL, ALPHA, b) if rule == "paired" else mde_wilson(int(n), P0, 1.96, TOL)
        assert mde == _points(want), (rule, churn, n)
        assert len(rates) == len(bench.DROPS) and all(0.0 <= float(x) <= 1.0 for x in rates)
    # the stated inputs are the bench's defaults
    assert "**A. One slice, one test** (2,000 draws per cell)" in DOC
    assert "`.venv/bin/python bench/gate_power.py --seed 4` runs the study" in DOC


def test_table_a_mde_lies_where_the_simulated_rates_cross_eighty_percent():
    # not random digits: the analytic MDE must fall between the simulated drops bracketing 0.8
    drops = (0.0, 5.0, 10.0, 20.0)
    for rule, churn, n, mde, *rates in _table("**A. One slice, one test**"):
        rate = [float(x) for x in rates]
        crossing = next((d for d, r in zip(drops, rate, strict=True) if r >= 0.8), None)
        if crossing is None:
            assert float(mde) > 20.0 - 3.0, (rule, churn, n)  # not reached by -20: an MDE near or above it
        else:
            below = drops[drops.index(crossing) - 1]
            assert below - 3.0 <= float(mde) <= crossing + 3.0, (rule, churn, n)


@pytest.mark.stats
def test_table_d_probes_needed_are_the_shipped_tests():
    bench = _bench()
    rows = _table("**D. Probes a slice needs**")
    want = bench.sizes_needed(bench.default_rules())
    assert rows == [[str(cell) if cell != "-" else "–" for cell in row] for row in want]


@pytest.mark.stats
def test_table_f_exact_powers_and_ceilings():
    bench = _bench()
    rows = _table("**F. Power for a 10-point drop on 60 probes at 5% disagreement, exactly**")
    for row, level in zip(rows, (ALPHA, ALPHA / 15), strict=True):
        old, new, _target, ceiling, ceiling_no_change = (float(x) for x in row[1:])
        assert old == round(mcnemar_rule_power(60, 0.10, level, TOL, 0.05), 3)
        assert new == round(ni.power(60, TOL, level, 0.10, 0.05), 3)
        assert ceiling == round(bench.np_ceiling(60, TOL, level, 0.10, 0.05), 3)
        assert ceiling_no_change == round(bench.np_ceiling(60, 0.0, level, 0.10, 0.05), 3)


# Figures the text quotes: (the phrase as printed, the number recomputed, its printed format).
QUOTED = [
    (
        "MDE at 120 probes and 5% disagreement is {} points",
        lambda: 100 * ni.mde(120, TOL, ALPHA, 0.05),
        "{:.1f}",
    ),
    ("detects a 10-point drop with probability {}", lambda: ni.power(120, TOL, ALPHA, 0.10, 0.05), "{:.2f}"),
    ("a 60-probe slice alone has an MDE of {} points", lambda: 100 * ni.mde(60, TOL, ALPHA, 0.05), "{:.1f}"),
    ("and {} points at alpha/15", lambda: 100 * ni.mde(60, TOL, ALPHA / 15, 0.05), "{:.2f}"),
    ("only reaches {} (its MDE is", lambda: ni.power(60, TOL, ALPHA, 0.10, 0.0), "{:.2f}"),
    ("(its MDE is {} points)", lambda: 100 * ni.mde(60, TOL, ALPHA, 0.0), "{:.2f}"),
    (
        "at n = 30 it is +{}%",
        lambda: 100 * (ni.mde(30, TOL, ALPHA, 0.10) / ni.mde(30, TOL, ALPHA, 0.05) - 1),
        "{:.1f}",
    ),
    (
        "at n = 120 +{}%",
        lambda: 100 * (ni.mde(120, TOL, ALPHA, 0.10) / ni.mde(120, TOL, ALPHA, 0.05) - 1),
        "{:.1f}",
    ),
    (
        "inside the 15-slice gate is {} at 5/10/20% disagreement",
        lambda: "/".join(f"{ni.power(120, TOL, ALPHA / 15, 0.10, b):.2f}" for b in (0.05, 0.10, 0.20)),
        "{}",
    ),
    ("caught with probability {} by this test alone", lambda: ni.power(60, TOL, ALPHA, 0.10, 0.05), "{:.3f}"),
]


@pytest.mark.parametrize(("phrase", "value", "fmt"), QUOTED, ids=[q[0] for q in QUOTED])
def test_figures_quoted_in_the_text_are_the_shipped_tests(phrase, value, fmt):
    printed = fmt.format(value())
    assert phrase.format(printed) in PROSE, f"docs/gate.md should say: {phrase.format(printed)!r}"


def test_no_power_figure_comes_from_the_old_mcnemar_rule():
    # The old rule's figures the page used to print as the shipped test's.
    for stale in ("| 8.7 ", "100–134", "187–254", "MDE of about 8.5 points"):
        assert stale not in DOC, stale
    # the McNemar rule is only named as the old rule
    for line in DOC.splitlines():
        if "McNemar" in line and "power" in line.lower():
            assert re.search(r"old rule|earlier|before|used to|no change|issue 14", line), line


def test_simulated_tables_b_and_c_state_the_benchs_inputs_and_shape():
    bench = _bench()
    assert "with 200 draws per cell and 10% churn" in PROSE  # --gate-reps 200, --churn 0.10 (defaults)
    b_rows = _table("**B. The whole gate**")
    assert [(r[0], int(r[1]), r[2]) for r in b_rows] == [
        (rule, n, "15") for rule in ("paired", "wilson") for n in bench.SIZES
    ]
    assert all(0.0 <= float(x) <= 1.0 for r in b_rows for x in r[4:])
    c_rows = _table("**C. False alarms of the whole gate**")
    assert [r[0] for r in c_rows] == ["paired", "wilson"] and all(len(r) == 5 for r in c_rows)
    assert "(every slice gated, Spanish slice of 60 probes)" in PROSE and "(200 draws per cell)" in PROSE
