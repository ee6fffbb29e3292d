"""Reports of runs with `suites:`: one table per suite, the regressed slices of every suite in the
headline, a chance column, the floors, `test: null`, the per-dimension plot; the demo unchanged.

The runs are real: the demo checkpoints score a multiple-choice suite (cloze items made from the
demo's verb probes, 2 to 4 candidates, so chance differs from slice to slice) and a verb-forms
suite, against a baseline taken with `evalgate baseline update`. The regressed checkpoint loses
past-tense forms, so both suites regress and the quiz's past-simple slice falls under its floor.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import GOLDEN, REPO, allow_shipped_data
from helpers.report_factories import fake_run

from evalgate.cli import main
from evalgate.edges.files import dump_json
from evalgate.edges.plot import BAR_REGRESSED, build_figure, suite_layout, suite_panels
from evalgate.gate.baseline_diff import baseline_changes
from evalgate.gate.slice_order import ordered
from evalgate.report.comment import render_comment
from evalgate.report.full_report import render_report
from evalgate.report.per_slice_csv import render_csv

QUIZ = """\
    quiz:
      kind: multiple-choice
      probes: [quiz.jsonl]
      manifest: quiz.MANIFEST.json
      slices: [topic, level]
      gate: {min_accuracy: {"topic:past_simple": 0.8}}
"""
VERBS = """\
    verbs:
      kind: verb-forms
      probes: [verbs.jsonl]
      manifest: verbs.MANIFEST.json
      template: data/eval/probe_prompt.txt
      grammar: data/grammar/verbs.yaml
      coverage: {per_language: 0, per_regularity: 0, per_tense: 0, per_person: 0,
                 adversarial_total: 0, adversarial_per_category_min: 0, regular_verb_min: 0,
                 irregular_verb_min: 0}
"""
REGRESSED = "data/checkpoints/demo-regressed"


def _config(suites: str, baseline: str) -> str:
    return f"suites:\n{suites}test: null\nbaseline: {baseline}\ncheckpoint: data/checkpoints/demo\n"


def _write_project(root: Path) -> None:
    """Even lines of the demo's probes become quiz items, odd lines stay verb-form probes."""
    for sub in ("checkpoints", "grammar", "eval"):
        (root / "data").mkdir(exist_ok=True)
        (root / "data" / sub).symlink_to(REPO / "data" / sub)
    lines = (REPO / "data/eval/probes.jsonl").read_text(encoding="utf-8").splitlines()
    items = []
    for i, line in enumerate(lines[::2]):
        p = json.loads(line)
        others = [c for c in p["candidates"] if c != p["expected"]]
        candidates = [p["expected"], *others[: 1 + i % 3]]  # K = 2, 3 or 4
        items.append(
            {
                "id": f"q-{i:03d}",
                "prompt": p["prompt"],
                "candidates": candidates,
                "expected": p["expected"],
                "slices": {"topic": p["tense"], "level": "easy" if p["language"] == "en" else "hard"},
            }
        )
    (root / "quiz.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items), encoding="utf-8")
    (root / "verbs.jsonl").write_text("".join(x + "\n" for x in lines[1::2]), encoding="utf-8")
    (root / "two.yml").write_text(_config(QUIZ + VERBS, "baselines/base.json"), encoding="utf-8")
    (root / "one.yml").write_text(_config(QUIZ, "none"), encoding="utf-8")


def _read(out: Path) -> dict[str, Any]:
    return {
        "results": json.loads((out / "results.json").read_text(encoding="utf-8")),
        "report": (out / "REPORT.md").read_text(encoding="utf-8"),
        "csv": (out / "per_slice.csv").read_text(encoding="utf-8"),
        "png": (out / "per_slice.png").read_bytes(),
    }


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """The project folder after a baseline update and the two regressed runs (out/two, out/one)."""
    root = tmp_path_factory.mktemp("suites")
    _write_project(root)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        mp.delenv("GITHUB_ACTIONS", raising=False)
        allow_shipped_data(mp)  # data/ links to the repository's
        update = ["baseline", "update", "--config", "two.yml", "--name", "base", "--commit", "0" * 40]
        assert main(update) == 0
        assert main(["run", "--config", "two.yml", "--checkpoint", REGRESSED, "--out", "out/two"]) == 1
        assert main(["run", "--config", "one.yml", "--checkpoint", REGRESSED, "--out", "out/one"]) == 1
    return root


@pytest.fixture(scope="module")
def runs(project) -> dict[str, dict[str, Any]]:
    return {name: _read(project / "out" / name) for name in ("two", "one")}


def _section(report: str, title: str) -> str:
    """The text of `### title` up to the next `### ` heading."""
    start = report.index(f"### {title}\n")
    end = report.find("\n### ", start + 1)
    return report[start : end if end > 0 else len(report)]


def _tables(text: str) -> list[list[list[str]]]:
    """Every Markdown table of `text` as rows of stripped cells (the header row first)."""
    tables, current = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            if not set(line) <= set("|-: "):
                current.append([c.strip() for c in line.strip("|").split("|")])
        elif current:
            tables.append(current)
            current = []
    return tables


def _unescape(cell: str) -> str:
    return cell.replace("\\_", "_")


# -- REPORT.md -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_two_suites_get_one_slice_table_each_after_the_whole_run(runs):
    gated = _section(runs["two"]["report"], "Gated slices")
    headings = re.findall(r"^#### (.+)$", gated, re.MULTILINE)
    assert headings == ["Whole run", "Suite quiz (multiple-choice)", "Suite verbs (verb-forms)"]
    whole, quiz, verbs = _tables(gated)
    assert [r[0] for r in whole[1:]] == ["overall"]
    quiz_keys = [_unescape(r[0]) for r in quiz[1:]]
    verb_keys = [_unescape(r[0]) for r in verbs[1:]]
    assert quiz_keys[0] == "quiz/overall" and verb_keys[0] == "verbs/overall"
    assert all(k.startswith("quiz/") for k in quiz_keys)
    assert all(k.startswith("verbs/") for k in verb_keys)
    # together the tables hold every compared slice, each once
    compared = runs["two"]["results"]["comparison"]["slices"]
    assert sorted(["overall", *quiz_keys, *verb_keys]) == sorted(compared)


@pytest.mark.slow
def test_a_single_suite_run_keeps_one_table(runs):
    slices = _section(runs["one"]["report"], "Slices")
    assert "#### " not in slices
    (only,) = _tables(slices)
    assert only[1][0] == "overall"
    assert not any("/" in r[0] for r in only[1:])


@pytest.mark.slow
def test_the_headline_names_the_regressed_slices_of_every_suite(runs):
    results = runs["two"]["results"]
    headline = runs["two"]["report"].splitlines()[0]
    rows = results["comparison"]["slices"]
    regressed = [k for k in ordered(rows) if rows[k]["status"] == "regressed"]
    suites = {k.split("/")[0] for k in regressed if "/" in k}
    assert suites == {"quiz", "verbs"}  # the run does regress in both
    assert headline.startswith("## ❌ evalgate: fail — regressed: ")
    # grouped: "quiz: overall (…), topic:past_simple (…); verbs: …"
    groups = dict(g.split(": ", 1) for g in headline.split(" — regressed: ")[1].split("; ") if ": " in g)
    for key in regressed:
        if "/" in key:
            suite, rest = key.split("/", 1)
            assert rest.replace("_", "\\_") + " (" in groups[suite]


@pytest.mark.slow
def test_the_chance_column_is_the_mean_of_one_over_k_of_the_slice(runs):
    results = runs["two"]["results"]
    gated = _section(runs["two"]["report"], "Gated slices")
    by_key = {}
    for t in _tables(gated):
        col = t[0].index("chance")
        by_key.update({_unescape(r[0]): r[col] for r in t[1:]})
    quiz = [e for e in results["probes"] if e.get("suite") == "quiz" and e["status"] == "scored"]
    past = [e for e in quiz if e["slices"]["topic"] == "past_simple"]
    for key, entries in (("quiz/overall", quiz), ("quiz/topic:past_simple", past)):
        mean = sum(1 / len(e["candidates"]) for e in entries) / len(entries)
        assert by_key[key] == f"{100 * mean:.1f}%"
    everything = [e for e in results["probes"] if e["status"] == "scored" and e.get("kind") != "ordinal"]
    mean = sum(1 / len(e["candidates"]) for e in everything) / len(everything)
    assert by_key["overall"] == f"{100 * mean:.1f}%"


@pytest.mark.slow
def test_floors_have_their_section_and_a_failing_one_reaches_the_headline(runs):
    for name, key in (("two", "quiz/topic:past_simple"), ("one", "topic:past_simple")):
        report, results = runs[name]["report"], runs[name]["results"]
        floor = results["floors"][key]
        assert floor["status"] == "below"
        (table,) = _tables(_section(report, "Floors"))
        assert table[0] == ["slice", "n", "accuracy", "chance", "floor", "status"]
        (row,) = [r for r in table[1:] if _unescape(r[0]) == key]
        assert row[2] == f"{100 * floor['accuracy']:.1f}%" and row[4] == "80.0%"
        assert row[5] == "❌ below the floor"
        headline = report.splitlines()[0]
        assert f"below the floor: {key.replace('_', chr(92) + '_')} (" in headline
        reason = next(r for r in results["reasons"] if r.startswith(key + ":"))
        assert "- " + reason.replace("_", "\\_") in report


@pytest.mark.slow
def test_a_run_with_test_null_says_perplexity_was_not_measured(runs):
    for name in ("two", "one"):
        assert runs[name]["results"]["perplexity"] is None
        section = _section(runs[name]["report"], "Perplexity")
        assert "Not measured: the configuration sets `test: null`" in section
        assert "missing" not in section


@pytest.mark.slow
def test_per_verb_wording_stays_with_verb_forms(runs):
    # a multiple-choice run has no per-verb section in results.json either (issue 27)
    assert "per_verb" not in runs["one"]["results"] and runs["two"]["results"]["per_verb"]
    one = _section(runs["one"]["report"], "Limitations")
    assert "Per-verb" not in one and "probes are generated" not in one
    assert "### Per verb" not in runs["one"]["report"]
    two = _section(runs["two"]["report"], "Limitations")
    assert "Suite quiz (multiple-choice):" in two and "Suite verbs (verb-forms):" in two


@pytest.mark.slow
def test_a_baseline_update_shows_the_change_of_every_suite_dimension(project, tmp_path):
    """A labelled baseline-update PR: git's hunks rarely reach the "slices" header, so a slice is
    known by its key, which for a suite is "SUITE/dimension:value" of a declared dimension."""
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    old = json.loads((project / "baselines" / "base.json").read_text(encoding="utf-8"))
    new = copy.deepcopy(old)
    changed = {"quiz/topic:past_simple": 0.5, "quiz/level:hard": 0.625, "verbs/tense:future": 0.75}
    for key, accuracy in changed.items():
        new["slices"][key]["accuracy"] = accuracy
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=tmp_path, env=env, check=True, capture_output=True, text=True
        )
        return done.stdout

    (tmp_path / "baselines").mkdir()
    git("init", "-q", "-b", "main")
    (tmp_path / "baselines" / "base.json").write_text(dump_json(old), encoding="utf-8")
    git("add", ".")
    git("commit", "-q", "-m", "base")
    (tmp_path / "baselines" / "base.json").write_text(dump_json(new), encoding="utf-8")
    (change,), _ = baseline_changes(git("diff", "--no-color", "HEAD"))
    assert {k: (old["slices"][k]["accuracy"], v) for k, v in changed.items()} == change.slices


# -- the comment and the CSV ---------------------------------------------------------------------


@pytest.mark.slow
def test_the_comment_names_every_suites_regressed_slices(runs):
    results = runs["two"]["results"]
    comment = render_comment(results)
    block = _section(comment, "Slices that regressed")
    rows = results["comparison"]["slices"]
    for suite in ("quiz", "verbs"):
        (line,) = [ln for ln in block.splitlines() if ln.startswith(f"- {suite} (")]
        named = {
            k.split("/", 1)[1] for k in rows if k.startswith(suite + "/") and rows[k]["status"] == "regressed"
        }
        assert {n.replace("\\_", "_") for n in line.split(": ", 1)[1].split(", ")} == named


@pytest.mark.slow
def test_per_slice_csv_has_suite_chance_and_floor_columns(runs):
    rows = list(csv.DictReader(io.StringIO(runs["two"]["csv"])))
    assert runs["two"]["csv"] == render_csv(runs["two"]["results"])
    by_key = {r["slice"]: r for r in rows}
    assert by_key["overall"]["suite"] == "" and by_key["quiz/overall"]["suite"] == "quiz"
    assert by_key["verbs/language:en"]["suite"] == "verbs"
    assert by_key["quiz/topic:past_simple"]["floor_status"] == "below"
    assert by_key["quiz/topic:past_simple"]["min_accuracy"] == "0.800000"
    assert 0.25 <= float(by_key["quiz/overall"]["chance"]) <= 0.5
    # rows in the report's order: the run's own keys, then each suite's, its overall first
    keys = [r["slice"] for r in rows]
    assert keys.index("quiz/overall") < min(keys.index(k) for k in keys if k.startswith("quiz/topic:"))


# -- per_slice.png ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_plot_has_one_panel_per_dimension_with_flags_and_chance(runs):
    results = runs["two"]["results"]
    assert runs["two"]["png"][:8] == b"\x89PNG\r\n\x1a\n"
    fig = build_figure(results)
    axes = {ax.get_title(): ax for ax in fig.axes}
    verb_dims = ("language", "regularity", "tense", "person", "category")
    assert list(axes) == ["Overall", "quiz · topic", "quiz · level", *(f"verbs · {d}" for d in verb_dims)]
    assert len(fig.axes) == len(suite_panels(results))
    overall = axes["Overall"]
    assert [t.get_text().split("\n")[0] for t in overall.get_xticklabels()] == ["overall", "quiz", "verbs"]
    # red exactly where the gate flagged: regressed, or under its floor
    rows = results["comparison"]["slices"]
    topic = axes["quiz · topic"]
    labels = [t.get_text().split("\n")[0] for t in topic.get_xticklabels()]
    values = [k.split(":", 1)[1] for k in ordered(k for k in rows if k.startswith("quiz/topic:"))]
    assert [lab.replace("\n", "_") for lab in labels] == [v.split("_")[0] for v in values]
    for bar, value in zip(topic.patches, values, strict=True):
        key = f"quiz/topic:{value}"
        flagged = (
            rows[key]["status"] == "regressed" or results["floors"].get(key, {}).get("status") == "below"
        )
        assert (bar.get_facecolor()[:3] == _rgb(BAR_REGRESSED)) == flagged
    # the chance level of each bar is drawn as a short line at 100 / K
    ys = sorted(
        round(seg[0][1], 6) for c in overall.collections for seg in getattr(c, "get_segments", list)()
    )
    quiz = [e for e in results["probes"] if e.get("suite") == "quiz" and e["status"] == "scored"]
    chance = 100 * sum(1 / len(e["candidates"]) for e in quiz) / len(quiz)
    assert any(abs(y - chance) < 1e-6 for y in ys)


@pytest.mark.slow
def test_a_single_suite_plot_has_the_overall_and_its_dimensions(runs):
    fig = build_figure(runs["one"]["results"])
    assert [ax.get_title() for ax in fig.axes] == ["Overall", "topic", "level"]


def test_a_dimension_with_many_values_takes_a_whole_row():
    panels = [("overall", "Overall", [("overall", "overall")]), ("a", "a", [("a:x", "x")] * 5)]
    panels.append(("b", "b", [("b:x", "x")] * 40))
    assert suite_layout(panels) == [["overall", "a", "."], ["b", "b", "b"]]


def _rgb(hex_color: str) -> tuple[float, float, float]:
    return tuple(int(hex_color[i : i + 2], 16) / 255 for i in (1, 3, 5))  # type: ignore[return-value]


# -- the demo (no suites) keeps its bytes ----------------------------------------------------------


@pytest.mark.parametrize("name", ["REPORT-fail.md", "REPORT-no-baseline.md"])
def test_a_run_without_suites_renders_as_before(name):
    """The golden reports of the verb-forms demo: no chance column, no per-suite tables."""
    results = json.loads((GOLDEN / name.replace(".md", ".results.json")).read_text(encoding="utf-8"))
    text = render_report(results)
    assert text == (GOLDEN / name).read_text(encoding="utf-8")
    assert "chance" not in text and "#### Whole run" not in text
    header = render_csv(fake_run()).splitlines()[0]
    assert header.split(",")[:7] == [
        "slice",
        "family",
        "n",
        "correct",
        "accuracy",
        "wilson_low",
        "wilson_high",
    ]
    assert "chance" not in header and "suite" not in header
