"""`evalgate power` through the real CLI: issue 25's team suite (about 150 items, 35 per subject)
is told, before it matters, that a subject cannot see drops smaller than 32-44 points at typical
disagreement (docs/gate.md, "What your suite can see"); the figures are the shipped test's exact
ones, and a seeded simulation of that test at the printed MDE and size finds power 0.8."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest
from helpers.paths import REPO

from evalgate.gate import noninferiority as ni

SUBJECTS = ("biology", "chemistry", "geography", "history")
TOL, ALPHA = 0.02, 0.05
LEVEL = ALPHA / 5  # Holm's first step over overall + 4 subjects


def _bench():
    spec = importlib.util.spec_from_file_location("gate_power", REPO / "bench" / "gate_power.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def team_suite(root: Path, per: int = 35, small: int = 10, gate: str = "", rule: str = "") -> Path:
    """issue 25's suite: `per` items in each of four subjects and `small` in a fifth, no baseline."""
    rows = []
    for subject in (*SUBJECTS, "art"):
        for i in range(per if subject != "art" else small):
            rows.append(
                {
                    "id": f"{subject}-{i:03d}",
                    "prompt": f"Which word answers {subject} question {i}?",
                    "candidates": ["river", "stone", "cloud", "garden"],
                    "expected": "stone",
                    "slices": {"subject": subject},
                }
            )
    root.mkdir(parents=True, exist_ok=True)
    (root / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    config = (
        "suites:\n  team:\n    kind: multiple-choice\n    probes: [items.jsonl]\n    slices: [subject]\n"
        + gate
        + "baseline: none\ntest: null\n"
        + rule
    )
    (root / "evalgate.yml").write_text(config, encoding="utf-8")
    return root / "evalgate.yml"


def power_json(cli, config: Path, *args: str) -> dict:
    got = cli("power", "--config", config, "--format", "json", *args)
    assert got.code == 0, got.out + got.err
    return json.loads(got.out)


def rows(doc: dict) -> dict[str, dict]:
    return {r["slice"]: r for r in doc["slices"]}


@pytest.mark.stats
def test_a_35_item_subject_is_told_it_cannot_see_drops_under_about_40_points(tmp_path, cli):
    config = team_suite(tmp_path)
    doc = power_json(cli, config)
    assert doc["gated"] == 5 and doc["level"] == pytest.approx(LEVEL) and doc["multiplicity"] == "holm"
    assert doc["baseline"] is None and doc["disagreements"] == [0.05, 0.10, 0.20]
    table = rows(doc)
    want = [ni.mde(35, TOL, LEVEL, s) for s in (0.05, 0.10, 0.20)]
    assert want == [0.3193, 0.3644, 0.4352]  # the shipped test's exact MDEs, in points 31.9 / 36.4 / 43.5
    for subject in SUBJECTS:
        row = table[f"subject:{subject}"]
        assert row["gated"] and row["n"] == 35 and row["low_power"]
        assert [x["mde"] for x in row["at"]] == want
    # the fifth subject's 10 items are under min_n 20: shown, not gated
    assert not table["subject:art"]["gated"] and table["subject:art"]["n"] == 10
    assert table["overall"]["n"] == 150 and table["overall"]["at"][1]["mde"] == ni.mde(150, TOL, LEVEL, 0.10)

    text = cli("power", "--config", config)
    assert text.code == 0
    line = next(x for x in text.out.splitlines() if x.strip().startswith("subject:geography"))
    assert line.split()[1:] == [
        "35",
        "-",
        "2.0",
        "31.9",
        "36.4",
        "43.5",
        "232",
        "/",
        "329",
        "/",
        "508",
        "31.9",  # the gate's own MDE, at gate.assumed_disagreement (5%), that "low power" is judged by
        "low",
        "power",
    ]
    assert "Holm over 5 gated slice(s): a slice's first step is at 0.01" in text.out
    assert "not gated (fewer items than min_n): subject:art (10)" in text.out
    assert (
        "5 of 5 gated slice(s) cannot see a drop of 10 points (gate.mde_max) at 5% disagreement" in text.out
    )


@pytest.mark.stats
def test_the_items_needed_for_a_10_point_drop_are_the_shipped_tests(tmp_path, cli):
    """The first size at which the shipped test's exact power (noninferiority.power) at a 10-point
    drop reaches 0.8, at the level and disagreement of the row; docs/gate.md table D's figures for
    the same settings come out the same way (tests/gate/test_slice_power_and_floors.py)."""
    doc = power_json(cli, team_suite(tmp_path))
    geo = rows(doc)["subject:geography"]
    assert [x["items_needed"] for x in geo["at"]] == [232, 329, 508]
    for at in geo["at"]:
        n, s = at["items_needed"], at["disagreement"]
        assert ni.power(n, TOL, LEVEL, 0.10, s) >= 0.8 > ni.power(n - 1, TOL, LEVEL, 0.10, s)
    got = cli("power", "--config", tmp_path / "evalgate.yml", "--drop", "25", "--format", "json")
    n = rows(json.loads(got.out))["subject:geography"]["at"][1]["items_needed"]
    assert ni.power(n, TOL, LEVEL, 0.25, 0.10) >= 0.8 > ni.power(n - 1, TOL, LEVEL, 0.25, 0.10)
    # a drop within the tolerance is what the test lets through: no number of items sees it
    got = cli("power", "--config", tmp_path / "evalgate.yml", "--drop", "2")
    geo_line = next(x for x in got.out.splitlines() if x.strip().startswith("subject:geography"))
    assert "never / never / never" in geo_line


@pytest.mark.stats
def test_a_seeded_simulation_at_the_printed_mde_and_size_finds_power_eighty_percent(tmp_path, cli):
    """Draws of the shipped test (its p-value, noninferiority.pvalue) at the MDE and at the items
    needed that `evalgate power` prints, in bench/gate_power.py's model without a baseline (its
    outcomes drawn anew, half the disagreement each way): 2,000 draws, standard error 0.009."""
    bench = _bench()
    geo = rows(power_json(cli, team_suite(tmp_path)))["subject:geography"]
    at = geo["at"][1]  # 10% disagreement
    rng = np.random.default_rng(25)
    sim = bench.simulated_power(rng, 35, None, TOL, LEVEL, at["mde"], 0.10, 2000)
    assert abs(sim - 0.8) < 0.035
    # 10 points below the MDE the test is far from it: the MDE is where 80% is crossed
    assert bench.simulated_power(rng, 35, None, TOL, LEVEL, at["mde"] - 0.10, 0.10, 2000) < 0.6
    sized = bench.simulated_power(rng, at["items_needed"], None, TOL, LEVEL, 0.10, 0.10, 2000)
    assert abs(sized - 0.8) < 0.035


@pytest.mark.stats
def test_tolerances_min_n_multiplicity_and_the_rule_are_the_configured_ones(tmp_path, cli):
    gate = "    gate: {min_n: 30, tolerances: {'subject:history': 0.05}}\n"
    doc = power_json(
        cli, team_suite(tmp_path / "a", gate=gate, rule="gate: {multiplicity: westfall-young}\n")
    )
    table = rows(doc)
    assert doc["multiplicity"] == "westfall-young" and doc["level"] == pytest.approx(LEVEL)
    assert any("Westfall-Young, taken at Holm's first-step level" in a for a in doc["assumptions"])
    assert table["subject:history"]["tolerance"] == 0.05
    assert table["subject:history"]["at"][1]["mde"] == ni.mde(35, 0.05, LEVEL, 0.10)
    assert table["subject:geography"]["at"][1]["mde"] == ni.mde(35, TOL, LEVEL, 0.10)
    # a min_n above the subjects' 35 items gates overall alone, at alpha itself
    doc = power_json(cli, team_suite(tmp_path / "b", gate="    gate: {min_n: 36}\n"))
    assert doc["gated"] == 1 and doc["level"] == ALPHA
    assert [r["slice"] for r in doc["slices"] if r["gated"]] == ["overall"]
    assert rows(doc)["overall"]["at"][0]["mde"] == ni.mde(150, TOL, ALPHA, 0.05)
    # the wilson rule: no disagreement, no multiplicity, the accuracy stated
    from evalgate.gate.stats import mde_wilson

    doc = power_json(cli, team_suite(tmp_path / "c", rule="gate: {rule: wilson}\n"))
    assert doc["level"] is None and doc["multiplicity"] is None
    assert rows(doc)["subject:biology"]["at"][0]["mde"] == mde_wilson(35, 0.5, 1.96, TOL)
    assert any("every slice's accuracy is taken as 50%" in a for a in doc["assumptions"])


@pytest.mark.stats
def test_a_configured_test_set_is_counted_in_the_family_the_figures_are_at(tmp_path, cli):
    # the gate adjusts the perplexity check in one family with the gated slices (docs/gate.md,
    # "Perplexity"): a slice's first step is alpha / (5 slices + 1 perplexity), so are its figures
    config = team_suite(tmp_path)
    sentences = (REPO / "data" / "corpus" / "test.jsonl").read_text(encoding="utf-8").splitlines()[:50]
    (tmp_path / "text.jsonl").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    config.write_text(config.read_text(encoding="utf-8").replace("test: null", "test: text.jsonl"), "utf-8")
    doc = power_json(cli, config)
    assert doc["gated"] == 5 and doc["level"] == pytest.approx(ALPHA / 6) and doc["perplexities"] == 1
    geography = rows(doc)["subject:geography"]["at"]
    assert geography[0]["mde"] == ni.mde(35, TOL, ALPHA / 6, 0.05)
    assert geography[0]["items_needed"] == ni_items(ALPHA / 6, 0.05)
    got = cli("power", "--config", config)
    assert "5 gated slice(s) and 1 perplexity check(s)" in got.out, got.out
    # `test: null`: no perplexity is measured, so none is in the family
    doc = power_json(cli, team_suite(tmp_path / "b"))
    assert doc["perplexities"] == 0 and doc["level"] == pytest.approx(LEVEL)


def ni_items(level: float, disagreement: float, drop: float = 0.10) -> int | None:
    """The items a no-baseline slice needs for a `drop` at `level`: gate/power.py's own search."""
    from evalgate.gate import power

    setting = power.Setting(rule="paired", level=level, z=1.96)
    return power.items_needed(None, TOL, disagreement, drop, setting)


def test_a_suite_that_gates_nothing_is_told_so(tmp_path, cli):
    """issue 25: a 5-item suite got a green check although nothing at all was gated."""
    config = team_suite(tmp_path, per=1, small=1)
    got = cli("power", "--config", config)
    assert got.code == 0
    assert "no slice is gated: every slice holds fewer items than its min_n" in got.out
    got = cli("power", "--config", config, "--format", "github")
    assert got.code == 0
    assert got.out.startswith("::warning title=evalgate power::no slice is gated")


@pytest.mark.stats
def test_github_format_warns_on_every_low_power_slice(tmp_path, cli):
    got = cli("power", "--config", team_suite(tmp_path), "--format", "github")
    assert got.code == 0
    lines = got.out.splitlines()
    assert (
        "::warning title=evalgate power::subject:geography (35 items): cannot see drops smaller than "
        "31.9 points at 5%25 disagreement (gate.mde_max: 10 points)" in lines  # gate.assumed_disagreement
    )
    assert lines[-1].startswith("::notice title=evalgate power::5 of 5 gated slice(s)")


@pytest.mark.parametrize("drop", ["0", "100", "-5", "nan"])
def test_a_drop_outside_0_to_100_points_is_refused(tmp_path, cli, drop):
    got = cli("power", "--config", team_suite(tmp_path), "--drop", drop)
    assert got.code == 2 and "--drop" in got.err and "above 0 and below 100" in got.err


def test_refusals_exit_2_and_say_why(tmp_path, cli):
    config = team_suite(tmp_path)
    got = cli("power", "--config", config, "--checkpoint", tmp_path)
    assert got.code == 2 and "--checkpoint A needs --against B" in got.err
    got = cli("power", "--config", config, "--baseline", tmp_path / "missing.json")
    assert got.code == 2 and "baseline not found" in got.err
    got = cli("power", "--config", config, "--against", tmp_path, "--baseline", "none")
    assert got.code == 2 and "the baseline accuracy then comes from checkpoint B" in got.err
    got = cli("power", "--config", config, "--checkpoint", tmp_path / "nope", "--against", tmp_path / "nope")
    assert got.code == 2 and "checkpoint not found" in got.err
    (tmp_path / "bad.yml").write_text("gate: {alpha: 2}\n", encoding="utf-8")
    got = cli("power", "--config", tmp_path / "bad.yml", "--format", "json")
    assert got.code == 2 and json.loads(got.out)["verdict"] == "refused"


def test_validate_ends_with_the_short_power_table(tmp_path, cli):
    config = team_suite(tmp_path)
    got = cli("validate", "--config", config)
    assert got.code == 0, got.out + got.err
    head, _, section = got.out.partition("\npower: the smallest drop each gated slice detects")
    assert "coverage of suite team" in head and "subject:geography" in section
    geo = next(x for x in section.splitlines() if x.strip().startswith("subject:geography"))
    # the gate MDE (at gate.assumed_disagreement, 5%) that "low power" is judged by, before the mark
    assert geo.split() == [
        "subject:geography",
        "35",
        "-",
        "2.0",
        "31.9",
        "36.4",
        "43.5",
        "31.9",
        "low",
        "power",
    ]
    doc = json.loads(cli("validate", "--config", config, "--format", "json").out)
    assert rows(doc["summary"]["power"])["subject:geography"]["at"][1]["mde"] == 0.3644
    # an unreadable baseline is the gate's business, not validate's: said, and the figures go on
    text = config.read_text(encoding="utf-8").replace("baseline: none", "baseline: baselines/gone.json")
    config.write_text(text, encoding="utf-8")
    got = cli("validate", "--config", config)
    assert got.code == 0 and "baseline accuracy: none known (baselines/gone.json: " in got.out


@pytest.mark.stats
def test_several_suites_are_gated_with_their_own_min_n_and_tolerance(tmp_path, cli):
    def items(folder: str, n: int, topics: tuple[str, ...]) -> None:
        (tmp_path / folder).mkdir()
        rows = [
            {"id": f"{folder}-{i:03d}", "prompt": f"Which word answers {folder} question {i}?",
             "candidates": ["river", "stone", "cloud", "garden"], "expected": "stone",
             "slices": {"topic": topics[i % len(topics)]}}
            for i in range(n)
        ]  # fmt: skip
        (tmp_path / folder / "items.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
        )

    items("a", 70, ("x", "y"))
    items("b", 60, ("p", "q", "r"))
    (tmp_path / "evalgate.yml").write_text(
        "suites:\n"
        "  alpha: {kind: multiple-choice, probes: [a/items.jsonl], slices: [topic]}\n"
        "  beta:\n    kind: multiple-choice\n    probes: [b/items.jsonl]\n    slices: [topic]\n"
        "    gate: {min_n: 25, tolerance: 0.05}\n"
        "baseline: none\ntest: null\n",
        encoding="utf-8",
    )
    doc = power_json(cli, tmp_path / "evalgate.yml")
    table = rows(doc)
    gated = [r["slice"] for r in doc["slices"] if r["gated"]]
    assert gated == ["overall", "alpha/overall", "alpha/topic:x", "alpha/topic:y", "beta/overall"]
    assert doc["level"] == pytest.approx(ALPHA / 5)
    assert [table[f"beta/topic:{t}"]["gated"] for t in "pqr"] == [False] * 3  # 20 items, min_n 25
    assert table["beta/overall"]["tolerance"] == 0.05 and table["alpha/topic:x"]["tolerance"] == TOL
    assert table["beta/overall"]["at"][1]["mde"] == ni.mde(60, 0.05, ALPHA / 5, 0.10)
    assert table["alpha/topic:x"]["at"][1]["mde"] == ni.mde(35, TOL, ALPHA / 5, 0.10)


def test_an_invalid_probe_set_is_listed_and_refused(tmp_path, cli):
    config = team_suite(tmp_path)
    items = (tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()
    (tmp_path / "items.jsonl").write_text("\n".join([*items, items[0]]) + "\n", encoding="utf-8")
    got = cli("power", "--config", config)
    assert got.code == 2 and "the probe set is invalid: 1 problem(s)" in got.err
    assert "items.jsonl:151: biology-000" in got.err  # the problem itself, located


def unlabelled_columns(text: str) -> list[str]:
    """The columns of the power table in `text` whose header is blank: under each run of dashes of
    the rule line, the header line above it must say something."""
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.strip().startswith("-------") and i > 0)
    header, dashes = lines[rule - 1], lines[rule]
    blank = []
    for run in re.finditer(r"-+", dashes):
        if not header[run.start() : run.end()].strip():
            blank.append(f"column at {run.start()}: {lines[rule + 1][run.start() : run.end()].strip()!r}")
    return blank


def test_every_column_of_the_power_table_has_a_label(tmp_path, cli):
    config = team_suite(tmp_path)
    for args in (("power",), ("validate",)):
        got = cli(*args, "--config", config)
        assert got.code == 0, got.out + got.err
        assert "low power" in got.out
        assert unlabelled_columns(got.out) == [], got.out
