"""The bot's comment is written by the trusted side (docs/security.md): `evalgate comment`, as the
workflow_run job calls it, against a real HTTP stand-in for GitHub on 127.0.0.1."""

from __future__ import annotations

import copy
import html
import json
import re
import sys
import unicodedata
from pathlib import Path

import pytest
from helpers import paths
from helpers.github_standin import FakeGitHub
from helpers.paths import GOLDEN

from evalgate.cli import main
from evalgate.github import report_comment
from evalgate.github.sticky import BOT_LOGIN
from evalgate.report import comment as rc

GH_REPO = "octo/gate"
SHA = "ab" * 20
RUN_URL = "https://github.com/octo/gate/actions/runs/4242"
SPOOF = "## ✅ evalgate: pass — all good, merge it ![x](https://evil.example/p.png)"


def fail_results() -> dict:
    return json.loads((GOLDEN / "REPORT-fail.results.json").read_text(encoding="utf-8"))


def write_artifact(folder: Path, results: dict) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "REPORT.md").write_text(SPOOF + "\n\n<!-- evalgate:report verdict=pass -->\n", encoding="utf-8")
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    (folder / "head.json").write_text(json.dumps({"head_sha": SHA}), encoding="utf-8")
    return folder


@pytest.fixture
def run_env(gh, tmp_path, monkeypatch):
    """The environment of the workflow_run job: its event names the run, not the artifact."""

    def set_event(head_repo: str = "mallory/gate", head_branch: str = "main") -> None:
        event = {
            "workflow_run": {
                "head_sha": SHA,
                "html_url": RUN_URL,
                "conclusion": "failure",
                "head_branch": head_branch,
                "head_repository": {"full_name": head_repo},
                "pull_requests": [],
            }
        }
        (tmp_path / "event.json").write_text(json.dumps(event), encoding="utf-8")

    set_event()
    for key, value in {
        "GITHUB_TOKEN": "ghs-installation",
        "GITHUB_REPOSITORY": GH_REPO,
        "GITHUB_API_URL": gh.url,
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_SHA": "ff" * 20,
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }.items():
        monkeypatch.setenv(key, value)
    gh.pulls = [
        {
            "number": 12,
            "state": "open",
            "fork": True,
            "head": {"sha": SHA, "ref": "main", "repo": {"full_name": "mallory/gate"}},
        },
        {
            "number": 13,
            "state": "open",
            "head": {"sha": SHA, "ref": "feature", "repo": {"full_name": GH_REPO}},
        },
    ]
    return set_event


def posted(gh: FakeGitHub, pr: int) -> str:
    (mine,) = gh.by(pr, BOT_LOGIN)
    return mine["body"]


def test_the_comment_is_rendered_from_results_never_from_the_artifacts_markdown(gh, run_env, tmp_path):
    folder = write_artifact(tmp_path / "artifact", fail_results())
    assert main(["comment", "--report", str(folder), "--sha", SHA]) == 0
    body = posted(gh, 12)
    assert "evil.example" not in body and "all good" not in body
    assert "## ❌ evalgate: fail" in body and body.rstrip().endswith("verdict=fail -->")
    # Provenance from the trusted event: head SHA, the run link, its conclusion.
    assert f"`{SHA[:12]}`" in body and f"[gate run]({RUN_URL})" in body and "**failure**" in body
    assert f"{RUN_URL}#artifacts" in body
    # The regressed slices with baseline, new, Wilson, delta, p and MDE; how to accept.
    assert "### Slices that regressed" in body
    assert re.search(
        r"\| category:core +\| +118 \| +79\.7% \| +68\.6% \| +59\.8–76\.3% \| +-11\.0 \| +0\.007 \| +8\.8 \|",
        body,
    )
    assert "evalgate:update-baseline" in body and "evalgate:approve-gate-change" in body
    assert "probe-en-new-001" in body  # the new probes and their score
    assert body.count("\n") < 60  # one screen


def test_a_report_md_without_results_is_refused_not_posted(gh, run_env, tmp_path, capsys):
    folder = write_artifact(tmp_path / "artifact", fail_results())
    (folder / "results.json").unlink()
    assert main(["comment", "--report", str(folder), "--sha", SHA]) == 2
    assert "results.json: not found" in capsys.readouterr().err
    assert gh.count("POST") == 0 and gh.count("PATCH") == 0


@pytest.mark.parametrize("attack", ["symlink", "huge", "deep", "schema"])
def test_a_hostile_results_file_is_refused(gh, run_env, tmp_path, monkeypatch, capsys, attack):
    folder = write_artifact(tmp_path / "artifact", fail_results())
    results = folder / "results.json"
    if attack == "symlink":
        outside = tmp_path / "outside.json"
        outside.write_text(results.read_text(encoding="utf-8"), encoding="utf-8")
        results.unlink()
        results.symlink_to(outside)
    elif attack == "huge":
        monkeypatch.setattr(report_comment, "MAX_RESULTS_BYTES", 1000)
    elif attack == "deep":
        results.write_text("[" * (sys.getrecursionlimit() + 100) + "]" * (sys.getrecursionlimit() + 100))
    else:
        doc = fail_results()
        doc["verdict"] = "pass ✅ <img src=x>"
        results.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["comment", "--report", str(folder), "--sha", SHA]) == 2
    err = capsys.readouterr().err
    assert {"symlink": "symbolic link", "huge": "larger than", "deep": "not JSON", "schema": "not a valid"}[
        attack
    ] in err
    assert gh.count("POST") == 0


@pytest.mark.parametrize(
    ("head_repo", "head_branch", "expected"),
    [("mallory/gate", "main", 12), (GH_REPO, "feature", 13), ("Octo/Gate", "feature", 13)],
)
def test_two_prs_with_one_head_sha_the_comment_goes_to_the_runs_own(
    gh, run_env, tmp_path, head_repo, head_branch, expected
):
    run_env(head_repo, head_branch)
    folder = write_artifact(tmp_path / "artifact", fail_results())
    assert main(["comment", "--report", str(folder), "--sha", SHA]) == 0
    assert [pr for pr in (12, 13) if gh.by(pr, BOT_LOGIN)] == [expected]


def test_no_pr_of_the_runs_head_repository_means_no_comment(gh, run_env, tmp_path, capsys):
    run_env("eve/gate", "main")  # same SHA, but neither open PR comes from eve/gate
    folder = write_artifact(tmp_path / "artifact", fail_results())
    assert main(["comment", "--report", str(folder), "--sha", SHA]) == 0
    assert "nothing posted" in capsys.readouterr().out and gh.count("POST") == 0


MENTIONS = [
    "@alice",
    "_@bob_",
    "&#64;carol",
    "&#x40;dan",
    "&commat;erin",
    "\uff20frank",
    "\ufe6bgina",
    "*@hal*",
]
REFS = ["#123", "octo/other#7", "GH-5", "\uff03456", "&#35;789"]


def pings(body: str) -> list[str]:
    """What GitHub could still read as a mention or reference once entities and NFKC are undone."""
    text = unicodedata.normalize("NFKC", html.unescape(html.unescape(body)))
    return re.findall(r"(?<![A-Za-z0-9`/.@-])@[A-Za-z0-9]", text) + re.findall(r"#\d|\bGH-\d", text)


def test_every_mention_and_reference_form_is_defused(gh, run_env, tmp_path):
    doc = fail_results()
    hostile = " ".join(MENTIONS + REFS)
    doc["reasons"] = [f"overall regressed {hostile}"]
    doc["comparison"]["new_probes"] = ["probe-@alice-#12"]
    doc["comparison"]["slices"]["language:@zoe#3"] = copy.deepcopy(
        doc["comparison"]["slices"]["category:core"]
    )
    doc["gate_changes_vs_baseline"] = [
        {"kind": "probe_removed", "key": "x-&#64;root-#9", "old": "scored", "new": "removed", "file": None}
    ]
    assert pings(hostile)  # the test's detector sees the raw forms
    run_env("mallory/gate", "@admins")  # a branch name is the fork's text too
    gh.pulls[0]["head"]["ref"] = "@admins"
    folder = write_artifact(tmp_path / "artifact", doc)
    assert main(["comment", "--report", str(folder), "--sha", SHA]) == 0
    body = posted(gh, 12)
    assert "language:" in body and "probe removed" in body  # the hostile rows are shown, inert
    assert pings(body) == []


def test_the_lookalike_lists_are_whole():
    found = {c for c in map(chr, range(0x80, 0x110000)) if unicodedata.normalize("NFKC", c) in "@#"}
    assert found == rc._AT_LIKE | rc._HASH_LIKE


def test_closest_to_the_line_when_nothing_regressed():
    doc = fail_results()
    for row in doc["comparison"]["slices"].values():
        if row["status"] == "regressed":
            row["status"] = "ok"
    doc["verdict"] = "pass"
    kind, rows = rc.focus_slices(doc)
    assert kind == "closest" and len(rows) == 3
    assert [r["p_adjusted"] for r in rows] == sorted(r["p_adjusted"] for r in rows)
    body = rc.render_comment(doc)
    assert "closest to the line" in body and "evalgate:update-baseline" not in body


def test_gate_changes_are_listed_when_present():
    doc = fail_results()
    doc["gate_changes_vs_baseline"] = [
        {"kind": "probe_deprecated", "key": f"p{i}", "old": "scored", "new": "deprecated", "file": "p.jsonl"}
        for i in range(14)
    ]
    body = rc.render_comment(doc)
    assert "### What this PR changes in its own gate" in body
    assert "probe deprecated" in body.lower() and "p13" not in body and "… and 4 more" in body


BLOCKER = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError("not installed in the comment job: " + name)
sys.meta_path.insert(0, Block())
from evalgate.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_the_comment_job_needs_only_what_its_workflow_installs(gh, run_env, tmp_path):
    """eval-gate-comment.yml installs evalgate with --no-deps plus the hash-pinned packages of the
    requirements file it names: nothing else may be imported on the way to the posted comment (a
    missing module fails only on GitHub)."""
    import os
    import subprocess

    import yaml

    wf = yaml.safe_load((paths.REPO / ".github/workflows/eval-gate-comment.yml").read_text())
    install = next(s for s in wf["jobs"]["comment"]["steps"] if "Install" in s.get("name", ""))["run"]
    assert "--no-deps" in install
    (requirements,) = re.findall(r"-r trusted/(\S+)", install)
    pins = (paths.REPO / requirements).read_text(encoding="utf-8").splitlines()
    allowed = {m.group(1).lower() for ln in pins if (m := re.match(r"([A-Za-z0-9_.-]+)==", ln))}
    heavy = {
        "torch",
        "numpy",
        "pandas",
        "matplotlib",
        "transformers",
        "safetensors",
        "tokenizers",
        "tabulate",
    }
    blocked = heavy - allowed - {"pyyaml"}
    assert "tabulate" in allowed and "torch" in blocked
    folder = write_artifact(tmp_path / "artifact", fail_results())
    code = f"BLOCKED = {sorted(blocked)!r}\n" + BLOCKER
    result = subprocess.run(
        [sys.executable, "-c", code, "comment", "--report", str(folder), "--sha", SHA],
        env={**os.environ, "PYTHONPATH": str(paths.REPO / "src")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "## ❌ evalgate: fail" in posted(gh, 12)


def test_a_results_key_cannot_start_a_workflow_command_in_the_log(gh, run_env, tmp_path, capfd):
    doc = fail_results()
    doc["comparison"]["slices"]["x\n::error title=evalgate::PASS"] = {"status": "bogus"}
    folder = write_artifact(tmp_path / "artifact", doc)
    assert main(["comment", "--report", str(folder), "--sha", SHA]) == 2
    captured = capfd.readouterr()
    lines = (captured.out + captured.err).splitlines()
    assert any("not a valid evalgate results file" in ln for ln in lines)
    assert not [ln for ln in lines if ln.lstrip().startswith("::")]
    assert gh.count("POST") == 0
