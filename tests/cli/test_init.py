"""`evalgate init`: one command from a folder with a checkpoint and a benchmark export to a gated
repository (evalgate.yml, the sealed suite, the first baseline, the workflows), with `validate`
and `run` passing right after; and every refusal leaves the folder as it was (docs/suites.md)."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.paths import REPO

from evalgate import release
from evalgate.commands.init import _action, config_text
from evalgate.github.workflows import (
    gate_workflow,
    update_baseline_apply_workflow,
    update_baseline_workflow,
    void_labels_workflow,
)

DEMO = REPO / "data" / "checkpoints" / "demo"
PIN = "acme/evalgate@0123456789abcdef0123456789abcdef01234567"
WRITTEN = (
    "evalgate.yml",
    "evalgate/quiz/items.jsonl",
    "evalgate/quiz/MANIFEST.json",
    "baselines/quiz.json",
    ".github/workflows/eval-gate.yml",
    ".github/workflows/eval-gate-comment.yml",
    ".github/workflows/badge.yml",
    ".github/workflows/update-baseline.yml",
    ".github/workflows/update-baseline-apply.yml",
    ".github/workflows/void-labels.yml",
)
SUBJECTS = ("astronomy", "biology", "chemistry", "geology")


def mmlu_rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "question": f"In {SUBJECTS[i % 4]}, which choice answers question number {i}?",
            "subject": SUBJECTS[i % 4],
            "choices": [f"first {i}", f"second {i}", f"third {i}", f"fourth {i}"],
            "answer": i % 4,
        }
        for i in range(n)
    ]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def every_byte(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "checkpoints" not in p.parts
    }


def folders(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir())


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository in the making: the demo checkpoint, a benchmark export and a training file."""
    root = tmp_path / "repo"
    shutil.copytree(DEMO, root / "checkpoints" / "demo")
    write_jsonl(root / "mmlu.jsonl", mmlu_rows(40))
    write_jsonl(root / "train.jsonl", [{"text": "The moon goes around the earth once a month."}])
    monkeypatch.chdir(root)
    return root


def actionlint(*paths: Path) -> subprocess.CompletedProcess[str]:
    tool = Path(sys.executable).with_name("actionlint")
    if not tool.exists():
        pytest.fail("actionlint is not installed: it is part of the [test] extra")
    return subprocess.run(
        [str(tool), "-no-color", *map(str, paths)], capture_output=True, text=True, timeout=120
    )


def expected_floors(repo: Path) -> dict[str, float]:
    """init's floors recomputed from the baseline it wrote: per subject (10 items, 4 choices), the
    95% Wilson lower bound of its right answers minus the 2-point tolerance, rounded down to a
    whole point, where that is above chance + 1.96 sd of a guesser's accuracy."""
    outcomes = json.loads((repo / "baselines/quiz.json").read_text(encoding="utf-8"))["outcomes"]
    items = [
        json.loads(x) for x in (repo / "evalgate/quiz/items.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    floors = {}
    keys = {f"subject:{s}": [i for i in items if i["slices"]["subject"] == s] for s in SUBJECTS}
    for key, members in {"overall": items, **keys}.items():
        n, k = len(members), sum(outcomes[i["id"]]["correct"] for i in members)
        z, p = 1.96, k / n
        low = (p + z * z / (2 * n) - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)
        floor = math.floor(100 * (low - 0.02)) / 100
        if floor >= 0.25 + z * math.sqrt(0.25 * 0.75 / n):
            floors[key] = floor
    return floors


def refused_untouched(repo: Path, cli, checkpoint: str, with_from: bool = True):
    """`init` on the MMLU rows with `checkpoint`, refused (exit 2) without a byte or folder written."""
    before, dirs = every_byte(repo), folders(repo)
    preset = ["--from", "mmlu"] if with_from else []
    refused = cli("init", "--suite", "quiz", "--items", "mmlu.jsonl", *preset,
                  "--checkpoint", checkpoint)  # fmt: skip
    assert refused.code == 2, refused.out + refused.err
    assert every_byte(repo) == before and folders(repo) == dirs
    return refused


@pytest.mark.slow
def test_init_sets_up_a_gate_that_validates_and_passes_right_away(repo, cli):
    done = cli("init", "--suite", "quiz", "--items", "mmlu.jsonl", "--from", "mmlu",
               "--checkpoint", "checkpoints/demo", "--train", "train.jsonl", "--action", PIN)  # fmt: skip
    assert done.code == 0, done.out + done.err
    for rel in WRITTEN:
        assert (repo / rel).is_file(), rel
        assert f"wrote {rel}" in done.out
    assert not list(repo.rglob("*.evalgate-init")), "a staged file was left behind"
    assert "git add evalgate.yml evalgate/quiz baselines/quiz.json .github/workflows/" in done.out
    assert "evalgate run " in done.out and "before you push" not in done.out

    config = yaml.safe_load((repo / "evalgate.yml").read_text(encoding="utf-8"))
    gate = config["suites"]["quiz"].pop("gate", {})
    assert config["suites"]["quiz"] == {
        "kind": "multiple-choice",
        "probes": ["evalgate/quiz/items.jsonl"],
        "manifest": "evalgate/quiz/MANIFEST.json",
        "slices": ["subject"],  # the mmlu preset's slice column
        "train": ["train.jsonl"],
        "coverage": {"min_per_value": 1},
    }
    # 10 items a subject are under min_n 20, so nothing but a floor guards them: one wherever the
    # baseline's Wilson lower bound minus the tolerance is out of a guesser's reach (docs/gate.md)
    assert gate == {"min_accuracy": expected_floors(repo)} and gate["min_accuracy"]
    assert config["test"] is None and config["checkpoint"] == "checkpoints/demo"
    assert config["baseline"] == "baselines/quiz.json"
    items = (repo / "evalgate/quiz/items.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(items) == 40 and json.loads(items[0])["slices"] == {"subject": "astronomy"}
    manifest = json.loads((repo / "evalgate/quiz/MANIFEST.json").read_text(encoding="utf-8"))
    assert manifest["version"] == "0.1.0" and len(manifest["lock"]) == 40
    baseline = json.loads((repo / "baselines/quiz.json").read_text(encoding="utf-8"))
    assert baseline["name"] == "quiz" and baseline["kind"] == "evalgate-baseline"
    assert baseline["probe_set"]["digest"] == manifest["digest"]

    checked = cli("validate")
    assert checked.code == 0, checked.out
    assert "version:  0.1.0" in checked.out
    assert "leaks:    0 leaks (exact, 5-gram) against train.jsonl" in checked.out
    gated = cli("run")
    assert gated.code == 0, gated.out + gated.err
    results = json.loads((repo / "evalgate-out" / "results.json").read_text(encoding="utf-8"))
    assert results["verdict"] == "pass" and results["gate_changes_vs_baseline"] == []
    assert results["comparison"]["baseline_name"] == "quiz" and results["comparison"]["n_paired"] == 40

    lint = actionlint(*(repo / rel for rel in WRITTEN[-2:]))
    assert lint.returncode == 0, lint.stdout + lint.stderr

    # Again with --force: the same items are already there, the configuration is rewritten.
    again = cli("init", "--suite", "quiz", "--items", "mmlu.jsonl", "--from", "mmlu",
                "--checkpoint", "checkpoints/demo", "--train", "train.jsonl", "--force")  # fmt: skip
    assert again.code == 0, again.out + again.err
    assert "0 item(s) added; 40 already there" in again.out
    assert (repo / "evalgate/quiz/MANIFEST.json").read_text(encoding="utf-8") == json.dumps(
        manifest, indent=2, sort_keys=True, ensure_ascii=False
    ) + "\n"
    # Without --action, a development install (this checkout, `pip install -e`) pins the release
    # of its version and says so; no placeholder is written.
    for rel in WRITTEN[4:]:
        written = (repo / rel).read_text(encoding="utf-8")
        assert "OWNER/" not in written and "@SHA" not in written, rel
    assert f"uses: {release.action_ref()}" in (repo / WRITTEN[4]).read_text(encoding="utf-8")
    assert f"the workflows run the evalgate action {release.action_ref()}" in again.out
    assert f"development install from {REPO}" in again.out


@pytest.mark.parametrize(
    "given",
    ["OWNER/evalgate@SHA", "acme/evalgate@REF", "acme/evalgate", "acme/evalgate@../../x", "a b/evalgate@v1"],
)
def test_an_action_that_is_a_placeholder_or_no_reference_is_refused(repo, cli, given):
    """A placeholder copied from the docs passes the pattern and fails on the first push: refused,
    like a malformed reference, before anything is scored or written."""
    before, dirs = every_byte(repo), folders(repo)
    refused = cli("init", "--suite", "quiz", "--items", "mmlu.jsonl", "--from", "mmlu",
                  "--checkpoint", "checkpoints/demo", "--action", given)  # fmt: skip
    assert refused.code == 2, refused.out + refused.err
    assert f"--action {given!r}: expected OWNER/NAME@REF" in refused.err
    assert f"--action {release.action_ref()}" in refused.err
    assert every_byte(repo) == before and folders(repo) == dirs


def test_without_action_a_source_checkout_pins_the_release_of_its_version_and_says_so():
    """This test suite runs from an editable install of the checkout (pip's direct_url.json names
    the folder): the workflows pin the version's release, never a placeholder, and init says why."""
    ref, note = _action(None)
    assert ref == release.action_ref() == f"{release.REPOSITORY}@action-v{release.VERSION}"
    assert note is not None and f"development install from {REPO}" in note and ref in note
    assert _action("acme/evalgate@" + "0" * 40) == ("acme/evalgate@" + "0" * 40, None)


def test_a_checkpoint_that_reads_like_a_hub_id_is_refused_with_the_command_that_copies_it(repo, cli):
    refused = refused_untouched(repo, cli, "openai-community/gpt2")
    assert "--checkpoint openai-community/gpt2: checkpoint not found" in refused.err
    assert "hf download openai-community/gpt2 --local-dir checkpoints/openai-community--gpt2" in refused.err


def test_a_missing_local_checkpoint_path_gets_no_hub_id_hint(repo, cli):
    refused = refused_untouched(repo, cli, "./nonexist")
    assert "--checkpoint ./nonexist: checkpoint not found" in refused.err
    assert "hf download" not in refused.err


@pytest.mark.integration
def test_run_with_a_missing_local_checkpoint_path_gets_no_hub_id_hint(repo, cli):
    got = cli("run", "--checkpoint", "./gpt2", "--baseline", "none", "--out", "out")
    assert got.code == 2
    assert f"checkpoint not found: {repo / 'gpt2'}" in got.err and "hf download" not in got.err
    got = cli("run", "--checkpoint", "gpt2", "--baseline", "none", "--out", "out")
    assert got.code == 2 and "hf download gpt2 --local-dir checkpoints/gpt2" in got.err


def test_an_existing_configuration_is_refused_unless_forced(repo, cli):
    (repo / "evalgate.yml").write_text("test: null\n", encoding="utf-8")
    refused = refused_untouched(repo, cli, "checkpoints/demo")
    assert "evalgate.yml already exists; nothing was written" in refused.err
    assert "--force" in refused.err


@pytest.mark.parametrize(
    ("blocker", "wanted"),
    [
        (".github", ".github: not a folder; init writes .github/workflows/eval-gate.yml inside it"),
        (".github/workflows", ".github/workflows: not a folder; init writes .github/workflows/eval-gate"),
        ("evalgate/quiz", "evalgate/quiz: not a folder; init writes evalgate/quiz/items.jsonl inside it"),
        ("baselines", "baselines: not a folder; init writes baselines/quiz.json inside it"),
    ],
)
def test_a_file_where_init_needs_a_folder_is_refused_before_scoring(repo, cli, blocker, wanted):
    """Once exit 3 (NotADirectoryError, FileExistsError) after the checkpoint was scored."""
    (repo / blocker).parent.mkdir(parents=True, exist_ok=True)
    (repo / blocker).write_text("a file\n", encoding="utf-8")
    refused = refused_untouched(repo, cli, "checkpoints/demo")
    assert wanted in refused.err
    assert "score" not in refused.err  # refused before any scoring phase


def test_a_bad_row_writes_nothing_and_names_the_row(repo, cli):
    rows = mmlu_rows(40)
    rows[12]["answer"] = "E"
    write_jsonl(repo / "mmlu.jsonl", rows)
    refused = refused_untouched(repo, cli, "checkpoints/demo")
    assert "evalgate init: refused; nothing was written" in refused.out
    assert "mmlu.jsonl:13: answer: 'E' is not one of the labels A, B, C, D" in refused.out


@pytest.mark.integration  # the loader refuses it: imports torch
def test_a_checkpoint_that_cannot_be_scored_writes_nothing(repo, cli):
    (repo / "checkpoints" / "empty").mkdir()
    refused = refused_untouched(repo, cli, "checkpoints/empty")
    assert "has no config.json" in refused.err


@pytest.mark.integration  # refused by the loader: imports torch
@pytest.mark.parametrize(
    ("flags", "wanted"),
    [
        (("--slices", "subject,level"), "slices: [subject, level]"),
        (("--slices", "none"), "slices: []"),
        (("--slices", "Topic"), None),
    ],
)
def test_slices_are_the_flags_when_given(repo, cli, flags, wanted):
    (repo / "checkpoints" / "empty").mkdir()  # refused at scoring: the configuration is read first
    got = cli("init", "--suite", "quiz", "--items", "mmlu.jsonl", "--from", "mmlu",
              "--checkpoint", "checkpoints/empty", *flags)  # fmt: skip
    assert got.code == 2
    if wanted is None:
        assert "slice dimension(s) 'Topic'" in got.err
    elif "level" in wanted:  # declared, but no column gives it
        assert "slices.level: the suite declares this dimension, but no column maps to it" in got.out
    else:
        assert "has no config.json" in got.err  # the rows fit a suite without slices


def test_the_configuration_names_the_suite_its_files_and_no_test_set():
    from evalgate.commands.init import Layout

    text = config_text(Layout(Path("/r"), "k8s"), ["topic"], [], None, "models/k8s-7b")
    doc = yaml.safe_load(text)
    assert doc == {
        "suites": {
            "k8s": {
                "kind": "multiple-choice",
                "probes": ["evalgate/k8s/items.jsonl"],
                "manifest": "evalgate/k8s/MANIFEST.json",
                "slices": ["topic"],
                "train": [],
                "coverage": {"min_per_value": 1},
            }
        },
        "test": None,
        "checkpoint": "models/k8s-7b",
        "baseline": "baselines/k8s.json",
    }
    assert "leak detection is skipped" in text
    odd = yaml.safe_load(config_text(Layout(Path("/r"), "k8s"), [], ["my notes.txt"], "-x.txt", "null"))
    assert odd["suites"]["k8s"]["train"] == ["my notes.txt"] and odd["test"] == "-x.txt"
    assert odd["checkpoint"] == "null"


@pytest.mark.integration
def test_the_workflows_pin_the_release_and_pass_actionlint(tmp_path):
    gate, update = tmp_path / "eval-gate.yml", tmp_path / "update-baseline.yml"
    apply, void = tmp_path / "update-baseline-apply.yml", tmp_path / "void-labels.yml"
    gate.write_text(gate_workflow(PIN), encoding="utf-8")
    update.write_text(update_baseline_workflow(PIN, "quiz"), encoding="utf-8")
    apply.write_text(update_baseline_apply_workflow(PIN, "quiz"), encoding="utf-8")
    void.write_text(void_labels_workflow(PIN), encoding="utf-8")
    lint = actionlint(gate, update, apply, void)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    for path in (gate, update, apply):
        uses = re.findall(r"uses: (\S+)", path.read_text(encoding="utf-8"))
        assert uses and all(re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", u) for u in uses), uses
    text = gate.read_text(encoding="utf-8")
    repo, ref = PIN.split("@")
    assert f"uses: {PIN}\n" in text and f'fetch -q --depth 1 "https://github.com/{repo}" "{ref}"' in text
    wf = yaml.safe_load(apply.read_text(encoding="utf-8"))
    score = wf["jobs"]["score"]["steps"]
    assert score[0]["with"]["repository"] == "acme/evalgate" and score[0]["with"]["ref"] == PIN.split("@")[1]
    run = next(s["run"] for s in score if "Regenerate" in s.get("name", ""))
    assert "--network none" in run and "baseline update --name quiz " in run
    with pytest.raises(ValueError):
        gate_workflow("acme/evalgate@main; curl evil")


@pytest.mark.slow
def test_baseline_update_without_a_name_replaces_the_configured_baseline(repo, cli):
    done = cli("init", "--suite", "quiz", "--items", "mmlu.jsonl", "--from", "mmlu",
               "--checkpoint", "checkpoints/demo")  # fmt: skip
    assert done.code == 0, done.out + done.err
    before = (repo / "baselines" / "quiz.json").read_bytes()
    (repo / "baselines" / "quiz.json").unlink()
    updated = cli("baseline", "update")
    assert updated.code == 0, updated.out + updated.err
    # the configuration says `baseline: baselines/quiz.json`: that file, not one named for the
    # checkpoint folder (baselines/demo.json), which the gate would never read
    assert "wrote baselines/quiz.json" in updated.out
    assert sorted(p.name for p in (repo / "baselines").glob("*.json")) == ["quiz.json"]
    assert json.loads((repo / "baselines" / "quiz.json").read_bytes())["name"] == "quiz"
    assert (
        json.loads(before)["probe_set"]
        == json.loads((repo / "baselines" / "quiz.json").read_bytes())["probe_set"]
    )


@pytest.mark.integration
def test_a_baseline_below_its_floors_is_written_with_a_warning(repo, cli):
    """`baseline update` on a checkpoint under a configured floor wrote the baseline without a
    word, and every later run against it failed that floor (found by an outside review: a
    labelled update left the PR red). It now says which floors and what lifts them."""
    done = cli("init", "--suite", "quiz", "--items", "mmlu.jsonl", "--from", "mmlu",
               "--checkpoint", "checkpoints/demo", "--action", PIN)  # fmt: skip
    assert done.code == 0, done.out + done.err
    config = repo / "evalgate.yml"
    text = config.read_text(encoding="utf-8")
    if "min_accuracy:" in text:
        text = text.replace("      min_accuracy:\n", '      min_accuracy:\n        "overall": 0.99\n', 1)
    else:
        text = text.replace("    gate:\n", '    gate:\n      min_accuracy: {"overall": 0.99}\n', 1)
    config.write_text(text, encoding="utf-8")
    updated = cli("baseline", "update", "--name", "quiz")
    assert updated.code == 0, updated.out + updated.err
    assert "below its floors" in updated.err and "overall" in updated.err, updated.err


def test_an_export_given_without_from_is_told_the_preset_that_reads_it(repo, cli):
    """A new user's MMLU export without `--from` got only nine schema errors ("unknown field
    'answer'"): the refusal now says first which preset reads the file (outside review)."""
    refused = refused_untouched(repo, cli, "checkpoints/demo", with_from=False)
    assert "they read as --from mmlu [import-preset]" in refused.out + refused.err


@pytest.mark.slow
def test_init_ignores_its_output_folder_once_and_keeps_the_teams_gitignore(repo, cli):
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / ".gitignore").write_text("node_modules/\n*.log", encoding="utf-8")  # no final newline
    args = ("init", "--suite", "quiz", "--items", "mmlu.jsonl", "--from", "mmlu",
            "--checkpoint", "checkpoints/demo", "--action", PIN)  # fmt: skip
    done = cli(*args)
    assert done.code == 0, done.out + done.err
    ignore = (repo / ".gitignore").read_text(encoding="utf-8")
    assert ignore.startswith("node_modules/\n*.log\n") and ignore.count("/evalgate-out/") == 1
    assert "wrote .gitignore" in done.out and " .gitignore" in done.out.split("git add", 1)[1]
    (repo / "evalgate-out").mkdir(exist_ok=True)
    checked = subprocess.run(["git", "check-ignore", "-q", "evalgate-out/results.json"], cwd=repo)
    assert checked.returncode == 0, "git does not ignore the output folder"
    # Again: nothing added twice, the file untouched.
    again = cli(*args, "--force")
    assert again.code == 0, again.out + again.err
    assert (repo / ".gitignore").read_text(encoding="utf-8") == ignore
    assert "wrote .gitignore" not in again.out


def test_a_gitignore_that_is_not_a_regular_file_is_refused_before_anything_is_written(repo, cli):
    (repo / "elsewhere").write_text("kept\n", encoding="utf-8")
    (repo / ".gitignore").symlink_to(repo / "elsewhere")
    refused = refused_untouched(repo, cli, "checkpoints/demo")
    assert ".gitignore: not a regular file" in refused.err + refused.out
    assert (repo / "elsewhere").read_text(encoding="utf-8") == "kept\n"


def test_a_gitignore_is_created_when_there_is_none():
    from evalgate.commands.init import gitignore_text

    assert gitignore_text(None, "evalgate-out").endswith("\n/evalgate-out/\n")
    assert gitignore_text("/evalgate-out\n", "evalgate-out") is None  # the team's own line
    assert gitignore_text("", "reports/gate/").endswith("\n/reports/gate/\n")
    for outside in ("/tmp/out", "../out", "a/../../b"):
        assert gitignore_text("x\n", outside) is None, outside
