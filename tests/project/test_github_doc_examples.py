"""Every block of docs/github.md a user would copy agrees with the code (issue 27, section 4).

The workflows shown are the files `evalgate init` writes (comments aside) and pass actionlint;
the shell blocks are valid bash whose `evalgate` commands the real command line accepts; the
badge line reads what badge.yml publishes. Running them needs GitHub or a registry, so they are
parsed and checked here, as docs/suites.md's examples are loaded.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.paths import REPO

from evalgate import release
from evalgate.cli import build_parser
from evalgate.github.workflows import comment_workflow, gate_workflow

DOC = REPO / "docs" / "github.md"
TEXT = DOC.read_text(encoding="utf-8")
BLOCKS = [(lang, body) for _, lang, body in re.findall(r"^(`{3,})(\w+)\n(.*?)^\1$", TEXT, re.S | re.M)]
YAML = [b for lang, b in BLOCKS if lang == "yaml"]
BASH = [b for lang, b in BLOCKS if lang == "bash"]
SUBCOMMANDS = ("comment", "run", "init", "baseline", "validate", "probes", "power", "approval", "fetch")


def _without_comments(text: str) -> list[str]:
    return [ln for ln in text.strip().splitlines() if not ln.startswith("#")]


def test_the_doc_shows_the_workflows_and_the_commands():
    assert len(YAML) >= 2 and BASH


@pytest.mark.parametrize(
    ("title", "written"),
    [("eval-gate.yml", gate_workflow), ("eval-gate-comment.yml", comment_workflow)],
)
def test_each_workflow_shown_is_the_one_init_writes(title, written):
    """As init writes it for this version's release (`evalgate/evalgate@action-vX.Y.Z`), no
    placeholder: a reader who copies a block gets a pin that exists once the release does."""
    pin = release.action_ref()
    name = yaml.safe_load(written(pin))["name"]
    (shown,) = [b for b in YAML if re.search(rf"^name: {name}$", b, re.M)]
    assert shown.strip().splitlines() == _without_comments(written(pin)), (
        f"{title}: docs/github.md's block is not what `evalgate init --action {pin}` writes"
    )
    assert "OWNER/" not in shown and "@SHA" not in shown


def test_the_workflows_shown_pass_actionlint(tmp_path):
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    workflows = [b for b in YAML if "jobs:" in b]
    for i, block in enumerate(workflows):
        (folder / f"shown-{i}.yml").write_text(block.replace("@SHA", "@" + "a" * 40), encoding="utf-8")
    tool = Path(sys.executable).with_name("actionlint")
    done = subprocess.run(
        [str(tool), "-no-color", *sorted(map(str, folder.glob("*.yml")))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _commands(block: str) -> list[list[str]]:
    """The `evalgate SUBCOMMAND ...` commands of a shell block, continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", block)
    out = []
    for line in joined.splitlines():
        code = line.split(" #", 1)[0]
        for m in re.finditer(rf"(?:^|\s)evalgate ((?:{'|'.join(SUBCOMMANDS)})\b.*)", code):
            out.append(shlex.split(m[1]))
    return out


@pytest.mark.parametrize("block", BASH, ids=[f"bash-{i + 1}" for i in range(len(BASH))])
def test_each_shell_block_is_valid_bash_and_its_commands_parse(block):
    syntax = subprocess.run(["bash", "-n"], input=block, capture_output=True, text=True, timeout=30)
    assert syntax.returncode == 0, syntax.stderr
    parser = build_parser()
    for argv in _commands(block):
        try:
            parser.parse_args(argv)
        except SystemExit as exc:  # argparse refuses: the doc names a flag the CLI does not have
            pytest.fail(f"`evalgate {' '.join(argv)}` is refused by the command line (exit {exc.code})")


def test_the_badge_line_reads_what_the_badge_workflow_publishes():
    (line,) = [b for lang, b in BLOCKS if lang == "markdown" and "shields.io" in b]
    assert "%2Fbadges%2Fbadge.json" in line and "/actions/workflows/badge.yml" in line
    badge = yaml.safe_load(REPO.joinpath(".github/workflows/badge.yml").read_text(encoding="utf-8"))
    push = next(s for s in badge["jobs"]["publish"]["steps"] if "badges branch" in s.get("name", ""))
    assert "refs/heads/badges" in push["run"] and "badge.json" in push["run"]


def test_the_doc_says_the_image_size_docker_md_measures():
    measured = re.search(r"\*\*(\d+) MB\*\*", (REPO / "docs" / "docker.md").read_text(encoding="utf-8"))
    assert measured, "docs/docker.md no longer says the image's size"
    assert f"about {round(int(measured[1]), -2)} MB" in TEXT.replace("\n", " ")
    assert "1 GB image" not in TEXT
