"""`evalgate baseline update` keeps the history of the baseline it replaces, `baseline anchor` marks
an anchor, and `validate`, `compare` and `run` refuse a history that was rewritten (docs/gate.md,
"Drift"). Real CLI, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.factories import make_entry, make_results
from helpers.hostile_repo import make_repo

from evalgate.gate import history as hist
from evalgate.gate.results import round_floats

ZERO = "0" * 40


def results_file(folder: Path, right: int, n: int = 300) -> Path:
    entries = [make_entry(f"p-{i:03d}", i < right, language=("en", "es")[i % 2]) for i in range(n)]
    path = folder / f"r{right}.json"
    path.write_text(json.dumps(round_floats(make_results(entries))), encoding="utf-8")
    return path


def update(cli, results: Path, name: str = "m"):
    return cli("baseline", "update", "--from-results", results, "--name", name, "--commit", ZERO)


@pytest.fixture
def three_updates(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = [results_file(tmp_path, r) for r in (290, 280, 270)]
    written = []
    for f in files:
        got = update(cli, f)
        assert got.code == 0, got.err
        written.append((tmp_path / "baselines" / "m.json").read_bytes())
    return tmp_path, files, written


def test_each_replacement_appends_one_chained_line_and_the_first_baseline_is_the_anchor(three_updates, cli):
    tmp_path, files, written = three_updates
    folder = tmp_path / "baselines" / "history"
    assert (folder / "m.anchor.json").read_bytes() == written[0]
    data = (folder / "m.jsonl").read_bytes()
    got = hist.parse_history(data, "m.jsonl")
    assert [r["event"] for r in got.records] == ["anchor", "update", "update"]
    assert [r["baseline_sha256"] for r in got.records] == [
        hist.sha256_hex(w) for w in written[:1] + written[1:]
    ]
    assert got.records[1]["replaced_sha256"] == hist.sha256_hex(written[0])
    assert got.records[2]["replaced_slices"]["overall"] == {"n": 300, "correct": 280, "accuracy": 0.9333333}
    # the same baseline again changes nothing: no line for a replacement that replaced nothing
    assert update(cli, files[2]).code == 0
    assert (folder / "m.jsonl").read_bytes() == data
    assert not list(folder.glob(".*")) and not list((tmp_path / "baselines").glob(".*"))


def test_baseline_anchor_marks_the_current_baseline(three_updates, cli):
    tmp_path, _, written = three_updates
    got = cli("baseline", "anchor", "--name", "m")
    assert got.code == 0, got.err
    assert "is the anchor now" in got.out
    folder = tmp_path / "baselines" / "history"
    assert (folder / "m.anchor.json").read_bytes() == written[2]
    records = hist.parse_history((folder / "m.jsonl").read_bytes(), "m.jsonl")
    assert records.records[-1]["event"] == "anchor" and records.updates_since_anchor == 0
    again = cli("baseline", "anchor", "--name", "m")
    assert again.code == 0 and "already the anchor" in again.out
    assert cli("baseline", "anchor", "--name", "none-such").code == 2


def _rewrite(path: Path, line: int, **fields) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[line - 1])
    rec.update(fields)
    lines[line - 1] = hist.dump_line(rec)
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda f: _rewrite(f / "m.jsonl", 2, replaced_slices={}), "m.jsonl:3: field prev"),
        (lambda f: (f / "m.anchor.json").write_text("{}\n"), "m.jsonl:1: field anchor_sha256"),
        (lambda f: (f / "m.anchor.json").unlink(), "m.anchor.json: missing"),
        (
            lambda f: (f / "m.jsonl").write_bytes((f / "m.jsonl").read_bytes().splitlines(True)[0]),
            "m.jsonl:1: field baseline_sha256",
        ),
    ],
)
@pytest.mark.integration
def test_compare_and_a_further_update_refuse_a_broken_history(three_updates, cli, edit, where):
    tmp_path, files, _written = three_updates
    edit(tmp_path / "baselines" / "history")
    got = cli("compare", files[2], tmp_path / "baselines" / "m.json", "--out", tmp_path / "out")
    assert got.code == 2 and where in got.err, got.err
    before = (tmp_path / "baselines" / "m.json").read_bytes()
    got = update(cli, files[0])
    assert got.code == 2 and where in got.err, got.err
    assert (tmp_path / "baselines" / "m.json").read_bytes() == before  # nothing written


@pytest.mark.integration
def test_a_baseline_replaced_by_hand_is_refused_by_validate(tmp_path, monkeypatch, cli):
    """The demo copy: one real update (the history begins), then the baseline replaced by hand
    (its provenance edited) without a history line."""
    from evalgate.config import load_config
    from evalgate.pipeline import write_baseline

    repo = make_repo(tmp_path, monkeypatch)
    demo = repo / "baselines" / "demo.json"
    doc = json.loads(demo.read_text(encoding="utf-8"))
    doc["provenance"]["pr_number"] = 7
    write_baseline(load_config(None), demo, doc)  # what `baseline update` does with the new document
    assert (repo / "baselines" / "history" / "demo.jsonl").exists()
    got = cli("validate")
    assert got.code == 0, got.out + got.err
    doc["provenance"]["pr_number"] = 8
    demo.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")  # the hand's replacement
    got = cli("validate")
    assert got.code == 2
    assert "baselines/history/demo.jsonl:2: field baseline_sha256" in got.err


def evalgate(cwd: Path, *args: str, kill_after: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    if kill_after is not None:
        env["EVALGATE_TEST_KILL_AFTER_STEP"] = str(kill_after)
    return subprocess.run(
        [sys.executable, "-m", "evalgate", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow  # 32 processes: the update killed at each of its 8 steps
def test_the_baseline_and_its_history_are_written_all_or_nothing(tmp_path):
    """Killed after each file operation of the update, the gate reads the old baseline with the old
    history or the new with the new, or refuses (an unfinished update); the next update finishes
    it. Never a baseline without its line."""
    first, second = results_file(tmp_path, 290), results_file(tmp_path, 280)
    args = ("baseline", "update", "--name", "m", "--commit", ZERO, "--from-results")
    assert evalgate(tmp_path, *args, str(first)).returncode == 0
    old = (tmp_path / "baselines" / "m.json").read_bytes()
    seen = set()

    def consistent(work: Path) -> str:
        baseline = (work / "baselines" / "m.json").read_bytes()
        history = work / "baselines" / "history" / "m.jsonl"
        if baseline == old:
            assert not history.exists() and not (work / "baselines" / "history" / "m.anchor.json").exists()
            return "old"
        assert hist.parse_history(history.read_bytes(), "h").last_sha256 == hist.sha256_hex(baseline)
        return "new"

    for step in range(1, 9):
        work = tmp_path / f"k{step}"
        (work / "baselines").mkdir(parents=True)
        (work / "baselines" / "m.json").write_bytes(old)
        evalgate(work, *args, str(second), kill_after=step)
        got = evalgate(work, "compare", str(second), "baselines/m.json", "--out", "out")
        if got.returncode == 2:
            assert "an unfinished baseline update" in got.stderr, got.stderr
            seen.add("refused")
        else:
            assert got.returncode in (0, 1), (step, got.stderr)
            seen.add(consistent(work))
        assert evalgate(work, *args, str(second)).returncode == 0  # finishes it, or does it all
        assert consistent(work) == "new"
        assert evalgate(work, "compare", str(second), "baselines/m.json", "--out", "out").returncode == 0
    assert seen == {"old", "new", "refused"}


@pytest.mark.integration
def test_run_refuses_a_rewritten_history_before_any_model_is_loaded(tmp_path, monkeypatch, cli):
    """The demo copy after one update; its anchor line rewritten to name another anchor: `run`
    refuses with the file, line and field (the next line no longer chains to it), and writes a
    refused report: nothing was scored."""
    from evalgate.config import load_config
    from evalgate.pipeline import write_baseline

    repo = make_repo(tmp_path, monkeypatch)
    demo = repo / "baselines" / "demo.json"
    doc = json.loads(demo.read_text(encoding="utf-8"))
    doc["provenance"]["pr_number"] = 7
    write_baseline(load_config(None), demo, doc)
    history = repo / "baselines" / "history" / "demo.jsonl"
    records = hist.parse_history(history.read_bytes(), "h").records
    forged = hist.appended(
        hist.History(), [{**records[0], "anchor_sha256": "e" * 64, "baseline_sha256": "e" * 64}]
    )
    history.write_bytes(forged + history.read_bytes().splitlines(True)[1])
    got = cli("run", "--out", tmp_path / "out")
    assert got.code == 2
    assert "baselines/history/demo.jsonl:2: field" in got.err
    assert (
        "nothing was scored" in (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8").splitlines()[0]
    )
