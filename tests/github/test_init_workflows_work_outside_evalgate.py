"""What `evalgate init` writes works in a repository that is not evalgate's (issue 27, section 2):
every workflow a consumer needs (gate, comment, badge, the labelled baseline update), linted by
actionlint and zizmor, none running a local action (`uses: ./`) or reading a path of evalgate's
own tree from the consumer's workspace, and CODEOWNERS lines for the gate's inputs."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.paths import REPO

from evalgate import release
from evalgate.commands.init import BLOCK_END, BLOCK_START, codeowners_text

PIN = "acme/evalgate@0123456789abcdef0123456789abcdef01234567"
DEMO = REPO / "data" / "checkpoints" / "demo"
NEEDED = {
    "eval-gate.yml",
    "eval-gate-comment.yml",
    "badge.yml",
    "update-baseline.yml",
    "update-baseline-apply.yml",
    "void-labels.yml",
}
# Where a workflow may read evalgate's own files: the release, checked out or fetched outside the
# consumer's tree (`trusted/`, `$SOURCE`), never the consumer's workspace.
EVALGATE_TREE = re.compile(
    r"(?<![\w$/-])(?:\./)?(?:docker/|src/evalgate|action\.yml|data/checkpoints|\.evalgate-action)"
)


def _tool(name: str) -> str:
    path = Path(sys.executable).with_name(name)
    if not path.exists():
        pytest.fail(f"{name} is not installed: it is part of the [test] extra")
    return str(path)


def _items(path: Path) -> Path:
    rows = [
        {"question": f"Which is item {i}?", "choices": ["red", "green", "blue", "black"], "answer": i % 4,
         "subject": ("physics", "history")[i % 2]}
        for i in range(24)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def consumer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli) -> tuple[Path, object]:
    """A team's repository bootstrapped by `init` from a clean folder: its own items, a checkpoint."""
    root = tmp_path / "team"
    shutil.copytree(DEMO, root / "models" / "current")
    _items(root / "export.jsonl")
    (root / "prompt.txt").write_text("Question: {prompt}\nAnswer:", encoding="utf-8")
    monkeypatch.chdir(root)
    done = cli("init", "--suite", "quiz", "--items", "export.jsonl", "--from", "mmlu",
               "--checkpoint", "models/current", "--template", "prompt.txt", "--action", PIN,
               "--owners", "@acme/ml-maintainers")  # fmt: skip
    assert done.code == 0, done.out + done.err
    return root, done


def test_init_writes_every_workflow_a_consumer_needs_and_each_lints_clean(consumer):
    root, done = consumer
    folder = root / ".github" / "workflows"
    assert {p.name for p in folder.glob("*.yml")} == NEEDED
    for name in NEEDED:
        assert f"wrote .github/workflows/{name}" in done.out
    lint = subprocess.run(
        [_tool("actionlint"), "-no-color", *sorted(map(str, folder.glob("*.yml")))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    zizmor = subprocess.run(
        [_tool("zizmor"), "--offline", "--format", "json", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert zizmor.returncode in (0, 10, 11, 12, 13, 14), zizmor.stderr[-2000:]
    found = json.loads(zizmor.stdout)
    findings = [(f["ident"], f["locations"][0]["symbolic"]["key"]["Local"]["verbatim_path"]) for f in found]
    assert findings == [], findings
    assert "pinned by tag" not in done.out  # a commit SHA needs no zizmor policy


def _zizmor(folder: Path) -> list[tuple[str, str]]:
    done = subprocess.run(
        [_tool("zizmor"), "--offline", "--format", "json", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 10, 11, 12, 13, 14), done.stderr[-2000:]
    return [
        (f["ident"], f["locations"][0]["symbolic"]["key"]["Local"]["verbatim_path"])
        for f in json.loads(done.stdout)
    ]


def _documented_zizmor_policy() -> str:
    text = (REPO / "docs" / "github.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"^```yaml\n(.*?)^```$", text, re.S | re.M) if "unpinned-uses" in b]
    return block


def test_init_s_default_tag_pin_lints_clean_with_the_documented_zizmor_policy_for_evalgate_only(
    tmp_path, monkeypatch, cli
):
    """init's default pin is the release's tag, which zizmor's unpinned-uses flags; the
    .github/zizmor.yml of docs/github.md clears it and nothing else: another action pinned by tag
    is still flagged."""
    root = tmp_path / "team"
    shutil.copytree(DEMO, root / "models" / "current")
    _items(root / "export.jsonl")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)  # zizmor looks for config up to .git
    monkeypatch.chdir(root)
    done = cli("init", "--suite", "quiz", "--items", "export.jsonl", "--from", "mmlu",
               "--checkpoint", "models/current")  # fmt: skip
    assert done.code == 0, done.out + done.err
    folder = root / ".github" / "workflows"
    assert f"uses: {release.action_ref()}" in (folder / "eval-gate.yml").read_text(encoding="utf-8")
    assert "pinned by tag: zizmor asks for a commit SHA" in done.out, done.out
    assert 'docs/github.md ("Linting the workflows")' in " ".join(done.out.split())
    flagged = _zizmor(folder)
    assert flagged and {ident for ident, _ in flagged} == {"unpinned-uses"}, flagged

    (root / ".github" / "zizmor.yml").write_text(_documented_zizmor_policy(), encoding="utf-8")
    assert _zizmor(folder) == []

    gate = folder / "eval-gate.yml"
    text = gate.read_text(encoding="utf-8")
    pinned = re.search(r"actions/checkout@[0-9a-f]{40}", text)
    assert pinned
    gate.write_text(text.replace(pinned[0], "actions/checkout@v4", 1), encoding="utf-8")
    assert ("unpinned-uses", ".github/workflows/eval-gate.yml") in [
        (ident, path.removeprefix(str(root) + "/")) for ident, path in _zizmor(folder)
    ]


def test_no_written_workflow_runs_a_local_action_or_reads_evalgates_tree_from_the_workspace(consumer):
    root, _ = consumer
    for path in sorted((root / ".github" / "workflows").glob("*.yml")):
        wf = yaml.safe_load(path.read_text(encoding="utf-8"))
        for job_name, job in wf["jobs"].items():
            for s in job.get("steps", []):
                uses = s.get("uses", "")
                assert not uses.startswith("."), f"{path.name}/{job_name}: uses {uses}"
                if uses and not uses.startswith(("actions/", "docker://")):
                    assert uses == PIN, f"{path.name}: {uses} is not the pinned release"
                for line in str(s.get("run", "")).splitlines():
                    code = line.split("#", 1)[0]
                    for token in code.split():
                        token = token.strip("\"'")
                        if token.startswith(("trusted/", "./trusted", '"$SOURCE', "$SOURCE")):
                            continue  # the release's tree, outside the workspace
                        assert not EVALGATE_TREE.match(token), f"{path.name}: {line.strip()}"


def test_the_comment_workflow_installs_everything_evalgate_comment_imports(consumer):
    """The comment job's install is the release's hash-locked workflow requirements (which hold
    tabulate; test_workflows.py runs `evalgate comment` with those alone) and the release itself."""
    root, _ = consumer
    wf = yaml.safe_load((root / ".github/workflows/eval-gate-comment.yml").read_text(encoding="utf-8"))
    steps = wf["jobs"]["comment"]["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["repository"] == "acme/evalgate" and checkout["with"]["ref"] == PIN[-40:]
    install = next(s for s in steps if "Install evalgate" in s.get("name", ""))["run"]
    assert "--require-hashes --only-binary=:all:" in install
    assert "-r trusted/docker/requirements-workflow.txt" in install and "--no-deps" in install
    download = next(s for s in steps if "download-artifact" in s.get("uses", ""))
    assert download["continue-on-error"] is True  # a PR that changes nothing uploads no report
    post = next(s for s in steps if "sticky comment" in s.get("name", ""))
    assert post["if"] == f"steps.{download['id']}.outcome == 'success'"


def test_the_badge_workflow_publishes_only_a_badge_the_gate_uploaded(consumer):
    root, _ = consumer
    wf = yaml.safe_load((root / ".github/workflows/badge.yml").read_text(encoding="utf-8"))
    publish = wf["jobs"]["publish"]["steps"]
    download = next(s for s in publish if "download-artifact" in s.get("uses", ""))
    assert download["continue-on-error"] is True
    push = next(s for s in publish if "badges branch" in s.get("name", ""))
    assert push["if"] == f"steps.{download['id']}.outcome == 'success'"
    gate = next(s for s in wf["jobs"]["gate"]["steps"] if s.get("name") == "Gate")
    assert gate["uses"] == PIN and gate["with"]["fail-on-regression"] == "false"


def test_codeowners_guards_every_gate_input(consumer):
    root, done = consumer
    text = (root / ".github" / "CODEOWNERS").read_text(encoding="utf-8")
    owned = {
        line.split()[0]: line.split()[1:]
        for line in text.splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert owned == {
        path: ["@acme/ml-maintainers"]
        for path in (
            "/evalgate.yml",
            "/evalgate/quiz/",
            "/baselines/",
            "/.github/workflows/",
            "/.github/CODEOWNERS",
            "/prompt.txt",
        )
    }
    assert "wrote .github/CODEOWNERS" in done.out and ".github/CODEOWNERS" in done.out.split("git add")[1]


def test_an_existing_codeowners_keeps_its_lines_and_init_replaces_only_its_own_block():
    mine = "# ours\n/docs/ @acme/writers\n"
    first = codeowners_text(mine, ["evalgate.yml"], ["@acme/a"])
    assert first.startswith(mine) and first.count(BLOCK_START) == 1 and first.count(BLOCK_END) == 1
    again = codeowners_text(first, ["evalgate.yml", "baselines/"], ["@acme/b"])
    assert again.startswith(mine) and again.count(BLOCK_START) == 1
    assert "@acme/a" not in again and "/baselines/" in again
    # Without owners the lines are comments: a path with no owner would clear an owner above it.
    bare = codeowners_text(None, ["evalgate.yml"], [])
    assert all(line.startswith("#") for line in bare.splitlines())


def test_without_owners_init_says_where_to_name_them(tmp_path, monkeypatch, cli):
    root = tmp_path / "team"
    shutil.copytree(DEMO, root / "models" / "current")
    _items(root / "export.jsonl")
    (root / ".github").mkdir()
    (root / ".github" / "CODEOWNERS").write_text("/docs/ @acme/writers\n", encoding="utf-8")
    monkeypatch.chdir(root)
    done = cli("init", "--suite", "quiz", "--items", "export.jsonl", "--from", "mmlu",
               "--checkpoint", "models/current", "--action", PIN)  # fmt: skip
    assert done.code == 0, done.out + done.err
    text = (root / ".github" / "CODEOWNERS").read_text(encoding="utf-8")
    assert text.startswith("/docs/ @acme/writers\n") and "# /evalgate.yml" in text
    assert "--owners" in done.out


def test_a_malformed_owner_is_refused_and_nothing_is_written(tmp_path, monkeypatch, cli):
    root = tmp_path / "team"
    shutil.copytree(DEMO, root / "models" / "current")
    _items(root / "export.jsonl")
    monkeypatch.chdir(root)
    done = cli("init", "--suite", "quiz", "--items", "export.jsonl", "--from", "mmlu",
               "--checkpoint", "models/current", "--action", PIN, "--owners", "acme team\n*")  # fmt: skip
    assert done.code == 2 and "--owners" in done.err + done.out
    assert not (root / "evalgate.yml").exists() and not (root / ".github").exists()


def _workflows_that_check_approvals() -> list[tuple[str, dict]]:
    from evalgate.github import workflows

    written = {
        "init eval-gate.yml": workflows.gate_workflow(PIN),
        "init update-baseline.yml": workflows.update_baseline_workflow(PIN, "quiz"),
        "init update-baseline-apply.yml": workflows.update_baseline_apply_workflow(PIN, "quiz"),
    }
    ours = {
        f"ours {p.name}": p.read_text(encoding="utf-8") for p in (REPO / ".github/workflows").glob("*.yml")
    }
    return [(name, yaml.safe_load(text)) for name, text in {**written, **ours}.items()]


@pytest.mark.parametrize(
    ("name", "workflow"), _workflows_that_check_approvals(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_job_that_checks_a_label_can_read_what_approval_reads(name, workflow):
    """`evalgate approval` reads the PR, its label events, the labeller's permission and the PR's
    workflow runs (github/approval.py): a job running it without `actions: read` is answered 403 in a
    private repository, and every label reads as unapproved (found by an outside review of init's
    gate workflow)."""
    for job_name, job in workflow.get("jobs", {}).items():
        scripts = " ".join(s.get("run", "") for s in job.get("steps", []))
        if not re.search(r"evalgate\"? approval\b|-m evalgate\.github\.approval\b", scripts):
            continue
        granted = job.get("permissions") or workflow.get("permissions") or {}
        for scope in ("pull-requests", "issues", "actions"):
            assert granted.get(scope) in ("read", "write"), f"{name}: job {job_name} lacks {scope}: read"
