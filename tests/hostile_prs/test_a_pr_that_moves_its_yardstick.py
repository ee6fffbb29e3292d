"""A pull request cannot pass by changing what it is gated with (issue 10 §3, docs/approval.md).

Each attack is played as a fork would, through the real CLI, on a copy of the shipped demo: the
regressed demo checkpoint with the probes it gets wrong deprecated and re-sealed (`evalgate probes
deprecate` / `evalgate probes seal`), or deleted together with their lock lines and re-sealed, or
one line of the held-out test set deleted, or a rule of evalgate.yml loosened. Without approval
each is refused (exit 2) naming every change; with `--approve-gate-changes` the run is gated
against the approved yardstick, and the regressed model still fails (exit 1).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.paths import REPO

from evalgate.cli import main
from evalgate.gate.results import validate_results

REGRESSED = str(REPO / "data" / "checkpoints" / "demo-regressed")
HEADING = "## What this PR changes in its own gate"


def _copy_repo(dest: Path) -> Path:
    """The demo repository a PR starts from: probes, corpus, grammar, config and baseline."""
    dest.mkdir()
    shutil.copytree(REPO / "data", dest / "data", ignore=shutil.ignore_patterns("checkpoints"))
    shutil.copytree(REPO / "baselines", dest / "baselines")
    shutil.copy(REPO / "evalgate.yml", dest / "evalgate.yml")
    return dest


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    root = _copy_repo(tmp_path / "repo")
    monkeypatch.chdir(root)
    return root


def _run(out: Path, *extra: str) -> tuple[int, dict, str]:
    code = main(["--checkpoint", REGRESSED, "--out", str(out), *extra])
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    validate_results(doc, "results.json")
    return code, doc, (out / "REPORT.md").read_text(encoding="utf-8")


def _delete_test_line(root: Path) -> None:
    test = root / "data" / "corpus" / "test.jsonl"
    lines = test.read_text(encoding="utf-8").splitlines(keepends=True)
    test.write_text("".join(lines[:10] + lines[11:]), encoding="utf-8")


@pytest.fixture(scope="module")
def edited_test_set(tmp_path_factory) -> tuple[int, dict, str, Path]:
    """The regressed checkpoint with one test-set line deleted, approved: scored once (the slow
    part of this file), and its results tell which probes the regressed model gets wrong."""
    root = _copy_repo(tmp_path_factory.mktemp("approved") / "repo")
    _delete_test_line(root)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        mp.delenv("GITHUB_ACTIONS", raising=False)
        code, doc, report = _run(root / "out", "--approve-gate-changes")
    return code, doc, report, root


@pytest.fixture(scope="module")
def wrong_ids(edited_test_set) -> list[str]:
    """Form probes of probes.jsonl the baseline got right and the regressed model gets wrong."""
    doc = edited_test_set[1]
    baseline = json.loads((REPO / "baselines" / "demo.json").read_text(encoding="utf-8"))["outcomes"]
    ids = [
        e["id"]
        for e in doc["probes"]
        if e["status"] == "scored"
        and e["correct"] is False
        and e["category"] == "core"
        and e.get("kind", "form") != "ordinal"
        and baseline[e["id"]]["correct"] is True
    ]
    assert len(ids) > 40  # the demo's regression: the attack needs many probes to hide
    return sorted(ids)


def _deprecate(root: Path, ids: list[str]) -> None:
    """As an attacker would: the first two with `probes deprecate`, the rest by editing the file."""
    for pid in ids[:2]:
        assert main(["probes", "deprecate", pid]) == 0
    path = root / "data" / "eval" / "probes.jsonl"
    rest = set(ids[2:])
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["id"] in rest:
            rec["deprecated"] = True
            line = json.dumps(rec, ensure_ascii=False)
        lines.append(line)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["probes", "seal"]) == 0


def _delete_with_lock_lines(root: Path, ids: list[str]) -> None:
    gone = set(ids)
    path = root / "data" / "eval" / "probes.jsonl"
    kept = [ln for ln in path.read_text(encoding="utf-8").splitlines() if json.loads(ln)["id"] not in gone]
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    manifest = root / "data" / "eval" / "MANIFEST.json"
    doc = json.loads(manifest.read_text(encoding="utf-8"))
    doc["lock"] = {k: v for k, v in doc["lock"].items() if k not in gone}
    manifest.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    assert main(["probes", "seal"]) == 0


def _changes(doc: dict) -> set[tuple[str, str]]:
    return {(c["kind"], c["key"]) for c in doc["gate_changes_vs_baseline"]}


def _assert_refused_naming(code: int, doc: dict, report: str, err: str, expected: set) -> None:
    assert code == 2 and doc["verdict"] == "refused"
    assert _changes(doc) == expected
    for _, key in expected:  # each change on the console, and the approval that would accept it
        assert key in err
    assert "evalgate:approve-gate-change" in err and "--approve-gate-changes" in err
    assert {f["check"] for f in doc["findings"]} == {"gate-change"} and len(doc["findings"]) == len(expected)
    assert report.startswith(HEADING) and "Not approved" in report
    assert doc["probes"] == []  # refused before any model was loaded


def test_wrong_probes_deprecated_and_resealed_are_refused(repo, wrong_ids, capsys):
    _deprecate(repo, wrong_ids)
    capsys.readouterr()
    code, doc, report = _run(repo / "out")
    err = capsys.readouterr().err
    _assert_refused_naming(code, doc, report, err, {("probe_deprecated", i) for i in wrong_ids})
    change = doc["gate_changes_vs_baseline"][0]
    assert (change["old"], change["new"], change["file"]) == (
        "scored",
        "deprecated",
        "data/eval/probes.jsonl",
    )


def test_wrong_probes_deleted_with_their_lock_lines_are_refused(repo, wrong_ids, capsys):
    _delete_with_lock_lines(repo, wrong_ids)
    capsys.readouterr()
    code, doc, report = _run(repo / "out")
    err = capsys.readouterr().err
    _assert_refused_naming(code, doc, report, err, {("probe_removed", i) for i in wrong_ids})
    assert all(c["file"] == "data/eval/MANIFEST.json" for c in doc["gate_changes_vs_baseline"])


def test_a_deleted_test_set_line_is_refused(repo, capsys):
    _delete_test_line(repo)
    code, doc, report = _run(repo / "out")
    err = capsys.readouterr().err
    _assert_refused_naming(code, doc, report, err, {("test_set", "data/corpus/test.jsonl")})
    change = doc["gate_changes_vs_baseline"][0]
    assert change["old"] == "17bc673e5db5a1812ef7b3cdf159d010751b0ffa2958380de0c106724512def8"
    assert change["new"] != change["old"]


def test_the_whole_attack_is_refused_listing_every_change(repo, wrong_ids, capsys):
    _deprecate(repo, wrong_ids[::2])
    _delete_with_lock_lines(repo, wrong_ids[1::2])
    _delete_test_line(repo)
    capsys.readouterr()
    code, doc, report = _run(repo / "out")
    err = capsys.readouterr().err
    expected = (
        {("probe_deprecated", i) for i in wrong_ids[::2]}
        | {("probe_removed", i) for i in wrong_ids[1::2]}
        | {("test_set", "data/corpus/test.jsonl")}
    )
    _assert_refused_naming(code, doc, report, err, expected)


def test_loosened_rules_in_evalgate_yml_are_refused(repo, capsys):
    cfg = repo / "evalgate.yml"
    text = cfg.read_text(encoding="utf-8")
    text = text.replace("tolerance: 0.02", "tolerance: 0.5").replace("per_language: 30", "per_language: 1")
    cfg.write_text(text, encoding="utf-8")
    code, doc, report = _run(repo / "out")
    err = capsys.readouterr().err
    _assert_refused_naming(
        code,
        doc,
        report,
        err,
        {("config_rule", "gate.tolerance"), ("coverage_rule", "coverage.per_language")},
    )
    got = {c["key"]: (c["old"], c["new"], c["file"]) for c in doc["gate_changes_vs_baseline"]}
    assert got["gate.tolerance"] == (0.02, 0.5, "evalgate.yml")


def _append(path: str, text: str):
    def edit(root: Path) -> None:
        with open(root / path, "a", encoding="utf-8") as f:
            f.write(text)

    return edit


@pytest.mark.parametrize(
    ("edit", "kind", "file"),
    [
        (_append("data/eval/probe_prompt.txt", "\n"), "template", "data/eval/probe_prompt.txt"),
        (_append("data/grammar/verbs.yaml", "\n# reviewed\n"), "grammar", "data/grammar/verbs.yaml"),
        (_append("data/corpus/val.jsonl", '{"text": "The harbour was quiet that evening."}\n'),
         "training_file", "data/corpus/val.jsonl"),
    ],
    ids=["template", "grammar", "training-file"],
)  # fmt: skip
def test_an_edited_template_grammar_or_training_file_is_refused(repo, capsys, edit, kind, file):
    """Three more files of the yardstick the PR holds: a byte changed in any of them is a gate
    change (a template moves every score; the grammar and the training files decide leaks)."""
    edit(repo)
    code, doc, _ = _run(repo / "out")
    err = capsys.readouterr().err
    assert code == 2 and doc["verdict"] == "refused" and doc["probes"] == []
    changes = doc["gate_changes_vs_baseline"]
    assert [c["kind"] for c in changes] == [kind] and changes[0]["file"] == file, changes
    assert file in err and "evalgate:approve-gate-change" in err


def test_a_manifest_version_going_down_is_refused(repo, capsys):
    manifest = repo / "data" / "eval" / "MANIFEST.json"
    doc = json.loads(manifest.read_text(encoding="utf-8"))
    doc["version"] = "0.0.9"
    manifest.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    code, res, report = _run(repo / "out")
    err = capsys.readouterr().err
    _assert_refused_naming(code, res, report, err, {("manifest_version", "version")})


def test_added_probes_are_not_a_gate_change(repo, capsys):
    """Caught before scoring or not at all: a new probe is no change (so this run goes on)."""
    from evalgate.config import load_config
    from evalgate.pipeline import refuse_before_scoring
    from evalgate.probeset_io import load_baseline, validate

    new = repo / "new.jsonl"
    rec = json.loads((repo / "data" / "eval" / "probes.jsonl").read_text(encoding="utf-8").splitlines()[0])
    rec.update(id="probe-en-new-001", prompt="Last year we ___ a new letter.")
    new.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    assert main(["probes", "import", str(new), "--into", "data/eval/probes.jsonl"]) == 0
    cfg = load_config(None, {})
    outcome = validate(cfg)
    assert outcome.ok
    refuse_before_scoring(cfg, outcome, load_baseline(cfg), False)  # no exception: not a change


def test_approved_test_set_edit_is_gated_against_the_approved_yardstick(edited_test_set):
    code, doc, report, _ = edited_test_set
    assert code == 1 and doc["verdict"] == "fail"
    assert _changes(doc) == {("test_set", "data/corpus/test.jsonl")}
    assert doc["comparison"]["perplexity"]["status"] == "not_comparable"
    assert any(r.startswith("tense:past_simple") for r in doc["reasons"])
    assert report.startswith(HEADING) and "**Approved**" in report
    assert report.index(HEADING) < report.index("## ❌")


def test_approved_deprecations_and_deletions_are_gated_on_the_remaining_probes(repo, wrong_ids, capsys):
    _deprecate(repo, wrong_ids[::2])
    _delete_with_lock_lines(repo, wrong_ids[1::2])
    capsys.readouterr()
    code, doc, report = _run(repo / "out", "--approve-gate-changes")
    err = capsys.readouterr().err
    assert f"evalgate: {len(wrong_ids)} approved gate change(s) since the baseline:" in err
    assert code == 1 and doc["verdict"] == "fail"
    assert len(doc["gate_changes_vs_baseline"]) == len(wrong_ids)
    comparison = doc["comparison"]
    paired = set(comparison["flipped"]["right_to_wrong"]) | set(comparison["flipped"]["wrong_to_right"])
    assert not paired & set(wrong_ids)  # gated on what the baseline and the run share
    assert set(comparison["deprecated"]) == set(wrong_ids[::2])
    assert set(comparison["gone_probes"]) == set(wrong_ids[1::2])
    assert any(r.startswith("perplexity rose") for r in doc["reasons"])
    assert report.startswith(HEADING) and "**Approved**" in report
    for pid in wrong_ids:
        assert pid.replace("_", "\\_") in report or pid in report
