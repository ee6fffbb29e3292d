"""issue 25, section 2, end to end with real checkpoints: a team's suite of 35 items per subject
(examples/geo's items, 35 per topic) set up with `init`. init prints what each slice can see
and writes floors for the slices too small to see a 10-point drop; `evalgate power` gives the
same figures with the baseline's accuracy, which a seeded simulation of the shipped test at the
printed MDE and size confirms; and with two checkpoints it measures their disagreement per slice.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from helpers.paths import REPO

from evalgate.cli import main
from evalgate.gate import noninferiority, power
from evalgate.gate.stats import wilson_interval

GEO = REPO / "examples" / "geo"
TOPICS = ("capital", "continent", "currency", "language")
TOL = 0.02
LEVEL = 0.05 / 7  # Holm's first step: overall, 2 difficulties, 4 topics

pytestmark = pytest.mark.slow


def _bench():
    spec = importlib.util.spec_from_file_location("gate_power", REPO / "bench" / "gate_power.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def evalgate(root: Path, *argv: str | Path) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.chdir(root), contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main([str(a) for a in argv])
    return code, out.getvalue()


@pytest.fixture(scope="module")
def team(tmp_path_factory) -> tuple[Path, str]:
    """A repository set up by `init` from 35 items per topic (140) and the good geo model."""
    root = tmp_path_factory.mktemp("team")
    shutil.copytree(GEO / "checkpoints" / "good", root / "checkpoints" / "geo")
    shutil.copytree(GEO / "checkpoints" / "degraded", root / "checkpoints" / "degraded")
    shutil.copy(GEO / "prompt.txt", root / "prompt.txt")
    rows, seen = [], dict.fromkeys(TOPICS, 0)
    for line in (GEO / "items.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        topic = item["slices"]["topic"]
        if seen[topic] < 35:
            seen[topic] += 1
            rows.append(line)
    (root / "items.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, out = evalgate(
        root, "init", "--suite", "team", "--items", "items.jsonl", "--slices", "topic,difficulty",
        "--template", "prompt.txt", "--checkpoint", "checkpoints/geo",
    )  # fmt: skip
    assert code == 0, out
    return root, out


def baseline_counts(root: Path) -> dict[str, tuple[int, int]]:
    """slice -> (items, right) from the baseline init wrote and the items."""
    outcomes = json.loads((root / "baselines" / "team.json").read_text(encoding="utf-8"))["outcomes"]
    items = [json.loads(x) for x in (root / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    out: dict[str, list[int]] = {}
    for item in items:
        for key in ("overall", *(f"{d}:{v}" for d, v in item["slices"].items())):
            t = out.setdefault(key, [0, 0])
            t[0] += 1
            t[1] += bool(outcomes[item["id"]]["correct"])
    return {k: (n, k_) for k, (n, k_) in out.items()}


def test_init_prints_what_each_slice_can_see_and_writes_floors_for_the_small_ones(team):
    root, out = team
    counts = baseline_counts(root)
    section = out.split("\npower: the smallest drop each gated slice detects", 1)[1]
    assert (
        "Holm over 7 gated slice(s)" in section and "from the first baseline baselines/team.json" in section
    )
    for topic in TOPICS:
        n, right = counts[f"topic:{topic}"]
        assert n == 35
        line = next(x for x in section.splitlines() if x.strip().startswith(f"topic:{topic}"))
        mdes = [power.mde_given_baseline(35, right, TOL, LEVEL, s) for s in (0.05, 0.10, 0.20)]
        # then the gate's own MDE, at gate.assumed_disagreement (5%), that "low power" is judged by:
        # the one `compare` gives the slice on a rerun (gate/power.py `judge`, docs/gate.md)
        gate = noninferiority.mde(35, TOL, LEVEL, 0.05)
        shown = "n/a" if gate is None or gate > right / n else f"{100 * gate:.1f}"
        assert line.split()[4:] == [f"{100 * m:.1f}" for m in mdes] + [shown, "low", "power"]
        assert mdes[1] > 0.24  # a 35-item topic cannot see a drop of 24 points, let alone 10
    config = yaml.safe_load((root / "evalgate.yml").read_text(encoding="utf-8"))
    floors = config["suites"]["team"]["gate"]["min_accuracy"]
    for key in (f"topic:{t}" for t in TOPICS):
        n, right = counts[key]
        want = math.floor(100 * (wilson_interval(right, n, 1.96)[0] - TOL)) / 100
        assert floors[key] == want and want < right / n
    text = (root / "evalgate.yml").read_text(encoding="utf-8")
    assert 'docs/gate.md, "Floors from the first baseline"' in text
    assert "Raise them, lower them or delete them here" in text
    assert "floors: evalgate.yml sets gate.min_accuracy for" in out


def test_the_first_run_passes_and_a_model_that_lost_a_topic_falls_below_its_floor(team):
    root, _ = team
    assert evalgate(root, "run", "--out", "out-good")[0] == 0
    results = json.loads((root / "out-good" / "results.json").read_text(encoding="utf-8"))
    assert results["gate_changes_vs_baseline"] == [] and results["floors"]["topic:currency"]["status"] == "ok"
    assert evalgate(root, "run", "--checkpoint", "checkpoints/degraded", "--out", "out-bad")[0] == 1
    results = json.loads((root / "out-bad" / "results.json").read_text(encoding="utf-8"))
    assert results["floors"]["topic:currency"]["status"] == "below"
    assert any(
        r.startswith("topic:currency: accuracy 17.1% on 35 items is below the floor")
        for r in results["reasons"]
    )


def test_power_with_the_baseline_is_confirmed_by_a_seeded_simulation(team):
    """The MDE and the items needed `evalgate power` prints for a 35-item topic, checked by 2,000
    draws of the shipped test against the baseline's own outcomes (standard error 0.009)."""
    root, _ = team
    code, out = evalgate(root, "power", "--format", "json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["baseline"] == "the baseline baselines/team.json" and doc["level"] == pytest.approx(LEVEL)
    n, right = baseline_counts(root)["topic:language"]
    row = next(r for r in doc["slices"] if r["slice"] == "topic:language")
    assert row["baseline_accuracy"] == pytest.approx(right / n)
    at = row["at"][1]
    assert at["disagreement"] == 0.10 and at["mde"] == power.mde_given_baseline(n, right, TOL, LEVEL, 0.10)
    bench = _bench()
    rng = np.random.default_rng(25)
    assert abs(bench.simulated_power(rng, n, right, TOL, LEVEL, at["mde"], 0.10, 2000) - 0.8) < 0.035
    size = at["items_needed"]
    k = int(right / n * size + 0.5)
    assert abs(bench.simulated_power(rng, size, k, TOL, LEVEL, 0.10, 0.10, 2000) - 0.8) < 0.035
    assert (
        doc["suggested_floors"]["topic:language"]
        == yaml.safe_load((root / "evalgate.yml").read_text(encoding="utf-8"))["suites"]["team"]["gate"][
            "min_accuracy"
        ]["topic:language"]
    )


def test_power_measures_the_disagreement_between_two_checkpoints(team):
    root, _ = team
    pair = ("--checkpoint", "checkpoints/degraded", "--against", "checkpoints/geo")
    code, out = evalgate(root, "power", *pair, "--format", "json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["disagreement"] == "measured" and doc["checkpoints"]["against"] == "checkpoints/geo"
    # the same flips the gate counts when the degraded model is compared with the good baseline
    assert evalgate(root, "run", "--checkpoint", "checkpoints/degraded", "--out", "out-cmp")[0] == 1
    gate = json.loads((root / "out-cmp" / "results.json").read_text(encoding="utf-8"))["comparison"]["slices"]
    for row in doc["slices"]:
        if not row["gated"]:
            continue
        key, n = row["slice"], row["n"]
        assert (row["b"], row["c"], n) == (gate[key]["b"], gate[key]["c"], gate[key]["n_shared"])
        right = round(gate[key]["baseline_accuracy"] * n)
        s = (row["b"] + row["c"]) / n
        assert row["at"][0]["disagreement"] == s
        assert row["at"][0]["mde"] == power.mde_given_baseline(n, right, TOL, LEVEL, s)
    text = evalgate(root, "power", *pair)[1]
    assert "disagreement: measured per slice between the two checkpoints" in text
