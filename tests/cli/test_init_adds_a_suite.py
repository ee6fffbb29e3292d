"""`evalgate init --suite NEW` in a repository whose evalgate.yml already has `suites:`: the suite
is added to the file (every other line and comment kept), imported, sealed, and one baseline of
every suite is written; a clash or any failure leaves every file as it was (docs/suites.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from helpers.paths import REPO

DEMO = REPO / "data" / "checkpoints" / "demo"
SUBJECTS = ("astronomy", "biology")

# written by hand, as a team would: comments, four-space indents, a key after the suites
HAND_WRITTEN = """\
# Our gate. Do not remove this comment.
suites:
    quiz:                        # the first suite
        kind: multiple-choice
        probes: [evalgate/quiz/items.jsonl]
        manifest: evalgate/quiz/MANIFEST.json
        slices: [subject]
        # keep the coverage low while the suite is young
        coverage: {min_per_value: 1}
        # gate: {tolerance: 0.05}    (once the suite has grown)

# after the suites: our own settings
test: null
checkpoint: checkpoints/demo
baseline: baselines/main.json   # one baseline for the repository
"""


def rows(prefix: str, n: int) -> list[dict]:
    return [
        {
            "question": f"In {SUBJECTS[i % 2]}, which {prefix} choice answers question number {i}?",
            "subject": SUBJECTS[i % 2],
            "choices": [f"{prefix} first {i}", f"{prefix} second {i}", f"{prefix} third {i}"],
            "answer": i % 3,
        }
        for i in range(n)
    ]


def write_jsonl(path: Path, data: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
    return path


def every_byte(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "checkpoints" not in p.parts
    }


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(DEMO, root / "checkpoints" / "demo")
    write_jsonl(root / "quiz.jsonl", rows("quiz", 12))
    write_jsonl(root / "trivia.jsonl", rows("trivia", 12))
    monkeypatch.chdir(root)
    return root


def add_trivia(cli, *more: str):
    return cli("init", "--suite", "trivia", "--items", "trivia.jsonl", "--from", "mmlu",
               "--checkpoint", "checkpoints/demo", *more)  # fmt: skip


@pytest.fixture
def hand_written(repo: Path, cli) -> Path:
    """The hand-written configuration with its one suite imported and sealed (no baseline yet)."""
    (repo / "evalgate/quiz").mkdir(parents=True)
    (repo / "evalgate/quiz/items.jsonl").write_text("", encoding="utf-8")
    (repo / "evalgate.yml").write_text(HAND_WRITTEN, encoding="utf-8")
    got = cli("probes", "import", "quiz.jsonl", "--suite", "quiz", "--from", "mmlu")
    assert got.code == 0, got.out + got.err
    return repo


@pytest.mark.slow
def test_init_adds_a_suite_to_the_file_and_writes_one_baseline_of_every_suite(hand_written, cli):
    before = (hand_written / "evalgate.yml").read_text(encoding="utf-8")
    done = add_trivia(cli, "--leak-window", "8")
    assert done.code == 0, done.out + done.err
    after = (hand_written / "evalgate.yml").read_text(encoding="utf-8")
    # every line of the file the team wrote is still there, in its order
    kept = iter(after.splitlines())
    assert all(line in kept for line in before.splitlines())
    # the first suite's entry, its own trailing comment included, is one piece before the new one
    quiz = before[before.index("    quiz:") : before.index("\n\n# after the suites")]
    assert after.index(quiz) < after.index("  trivia:") < after.index("# after the suites")
    doc = yaml.safe_load(after)
    assert list(doc["suites"]) == ["quiz", "trivia"]
    assert doc["suites"]["quiz"] == yaml.safe_load(before)["suites"]["quiz"]
    assert doc["suites"]["trivia"]["probes"] == ["evalgate/trivia/items.jsonl"]
    assert doc["leaks"] == {"window": 8} and doc["baseline"] == "baselines/main.json"
    # one baseline, of both suites, where evalgate.yml says
    base = json.loads((hand_written / "baselines/main.json").read_text(encoding="utf-8"))
    assert {o.get("suite") for o in base["outcomes"].values()} == {"quiz", "trivia"}
    assert set(base["probe_set"]["suites"]) == {"quiz", "trivia"}
    assert "rescored" in done.out and "baselines/main.json" in done.out
    assert not (hand_written / "baselines/trivia.json").exists()
    assert not list(hand_written.rglob("*.evalgate-init"))
    # and the gate it set up passes right away: no gate change, no refusal
    assert cli("validate").code == 0
    got = cli("run", "--out", "out")
    assert got.code == 0, got.out + got.err


def test_a_suite_name_already_declared_is_refused_and_nothing_is_written(hand_written, cli):
    before = every_byte(hand_written)
    got = cli("init", "--suite", "quiz", "--items", "trivia.jsonl", "--from", "mmlu",
              "--checkpoint", "checkpoints/demo")  # fmt: skip
    assert got.code == 2, got.out + got.err
    assert "--suite quiz: evalgate.yml already declares a suite quiz" in got.err
    assert every_byte(hand_written) == before


@pytest.mark.parametrize(
    ("flags", "wanted"),
    [
        (("--leak-policy", "exclude"), "--leak-policy exclude: evalgate.yml already has a `leaks:` block"),
        (("--checkpoint", "elsewhere"), "--checkpoint elsewhere: evalgate.yml scores checkpoints/demo"),
    ],
)
def test_a_flag_that_contradicts_the_file_is_refused_and_nothing_is_written(hand_written, cli, flags, wanted):
    path = hand_written / "evalgate.yml"
    path.write_text(path.read_text(encoding="utf-8") + "leaks: {policy: refuse}\n", encoding="utf-8")
    if "elsewhere" in flags:
        shutil.copytree(DEMO, hand_written / "elsewhere")
    before = every_byte(hand_written)
    got = cli("init", "--suite", "trivia", "--items", "trivia.jsonl", "--from", "mmlu",
              "--checkpoint", "checkpoints/demo", *flags)  # fmt: skip
    assert got.code == 2, got.out + got.err
    assert wanted in got.err
    assert every_byte(hand_written) == before


def test_a_bad_row_of_the_new_suite_leaves_the_configuration_untouched(hand_written, cli):
    data = rows("trivia", 12)
    data[4]["answer"] = "E"
    write_jsonl(hand_written / "trivia.jsonl", data)
    before = every_byte(hand_written)
    got = add_trivia(cli)
    assert got.code == 2, got.out + got.err
    assert "trivia.jsonl:5: answer" in got.out
    assert every_byte(hand_written) == before
    assert not (hand_written / "evalgate" / "trivia").exists()


def test_a_configuration_without_suites_is_still_refused_unless_forced(repo, cli):
    (repo / "evalgate.yml").write_text("test: null\n", encoding="utf-8")
    got = add_trivia(cli)
    assert got.code == 2 and "evalgate.yml already exists; nothing was written" in got.err


def test_suites_written_in_flow_style_are_refused_and_nothing_is_written(repo, cli):
    flow = (
        "suites: {quiz: {kind: multiple-choice, probes: [evalgate/quiz/items.jsonl], slices: [subject]}}\n"
        "test: null\ncheckpoint: checkpoints/demo\nbaseline: baselines/main.json\n"
    )
    (repo / "evalgate.yml").write_text(flow, encoding="utf-8")
    before = every_byte(repo)
    got = add_trivia(cli)
    assert got.code == 2, got.out + got.err
    assert "`suites:` is not written as a block" in got.err
    assert every_byte(repo) == before and not list(repo.rglob("*.evalgate-init"))
