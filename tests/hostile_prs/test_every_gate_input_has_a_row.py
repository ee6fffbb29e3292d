"""Every input of the gate has a row in docs/security.md ("Inputs of the gate"), and every row
names the cases that hold it: a new input added without its row and its case fails here.

The inputs are read off the code, not off the page: the keys of evalgate.yml (its schema), the
Action's inputs, the flags of the commands the workflows call, every environment variable named
in src/, the event fields, secrets, artifacts and labels the workflows use, and the parts of a
baseline's yardstick. Each must appear in backticks in a row of the table; a row whose input comes
from the pull request must name a case of this suite (tests/hostile_prs/); every named test must
exist (tests/project/test_security_doc.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from helpers.paths import REPO

DOC = REPO / "docs" / "security.md"
SECTION = "## Inputs of the gate"
WORKFLOW_FILES = [
    *sorted((REPO / ".github" / "workflows").glob("*.yml")),
    REPO / "action.yml",
    *sorted((REPO / "src" / "evalgate" / "defaults").glob("workflow-*.yml")),
]
COMMANDS_THE_WORKFLOWS_CALL = (("run",), ("merge",), ("baseline", "update"), ("approval",), ("comment",))
ENV_NAME = re.compile(r"""["']((?:EVALGATE|GITHUB|INPUT|GH|RUNNER)_[A-Z0-9_]+)["']""")
NAMED_TEST = re.compile(r"tests/((?:\w+/)*test_\w+\.py)::(test_\w+)")


def rows() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    assert SECTION in text, f"docs/security.md has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return [ln for ln in section.splitlines() if ln.startswith("|") and not re.fullmatch(r"[|\s:-]+", ln)][1:]


def ticked(row: str) -> set[str]:
    return set(re.findall(r"`([^`]+)`", row))


def config_keys() -> set[str]:
    schema = json.loads((REPO / "src/evalgate/schemas/config.schema.json").read_text(encoding="utf-8"))
    keys = set(schema["properties"])
    suites = schema["properties"].get("suites", {})
    entry = suites.get("additionalProperties") or {}
    entry = schema.get("$defs", {}).get(entry.get("$ref", "").rsplit("/", 1)[-1], entry)
    keys |= {f"suites.*.{k}" for k in entry.get("properties", {})}
    return keys


def action_inputs() -> set[str]:
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    return {f"inputs.{k}" for k in action["inputs"]}


def command_flags() -> set[str]:
    from evalgate.cli import build_parser

    found: set[str] = set()
    for path in COMMANDS_THE_WORKFLOWS_CALL:
        parser = build_parser()
        for name in path:
            sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
            parser = sub.choices[name]
        for action in parser._actions:
            found |= {s for s in action.option_strings if s.startswith("--") and s != "--help"}
            if not action.option_strings and action.dest not in ("help", "command", "sub"):
                found.add(f"{' '.join(path)} {action.metavar or action.dest.upper()}")
    return found


def environment() -> set[str]:
    names: set[str] = set()
    for path in (REPO / "src").rglob("*.py"):
        names |= set(ENV_NAME.findall(path.read_text(encoding="utf-8")))
    # INPUT_<name> is built from the Action's inputs; those rows name them as inputs.NAME.
    # A name ending in "_" is a prefix (a heredoc delimiter), not a variable.
    return {n for n in names if not n.startswith("INPUT_") and not n.endswith("_")} | {"INPUT_*"}


def workflow_data() -> set[str]:
    found: set[str] = set()
    for path in WORKFLOW_FILES:
        text = path.read_text(encoding="utf-8")
        found |= {m for m in re.findall(r"\b(github\.event\.[A-Za-z0-9_.*]+)", text)}
        secrets = re.findall(r"\bsecrets\.([A-Za-z0-9_]+)", text)
        found |= {f"secrets.{m}" for m in secrets if m != "GITHUB_TOKEN"}
        # labels: evalgate:word-word (image tags such as evalgate:base have no hyphen)
        found |= set(re.findall(r"\b(evalgate:[a-z]+(?:-[a-z]+)+)\b", text))
        doc = yaml.safe_load(re.sub(r"@@[A-Z_]+@@", "placeholder", text))  # init's templates
        for job in (doc.get("jobs") or {}).values() if "jobs" in doc else [{"steps": doc["runs"]["steps"]}]:
            for step in job.get("steps") or []:
                uses = step.get("uses", "")
                if "artifact@" in uses or "actions/cache" in uses:
                    name = (step.get("with") or {}).get("name") or (step.get("with") or {}).get("key")
                    if name:
                        found.add(f"{uses.split('@')[0].split('/', 1)[1]}: {name.split('$')[0]}".rstrip("-"))
    return found


def yardstick() -> set[str]:
    schema = json.loads((REPO / "src/evalgate/schemas/baseline.schema.json").read_text(encoding="utf-8"))
    ys = schema["properties"]["yardstick"]
    ys = schema.get("$defs", {}).get(ys.get("$ref", "").rsplit("/", 1)[-1], ys)
    return {f"yardstick.{k}" for k in ys.get("properties", {})}


def test_every_input_of_the_gate_has_a_row():
    covered = set().union(*(ticked(r) for r in rows()))
    expected = {
        "evalgate.yml keys": config_keys(),
        "Action inputs": action_inputs(),
        "flags": command_flags(),
        "environment": environment(),
        "workflow data": workflow_data(),
        "yardstick": yardstick(),
    }
    missing = {kind: sorted(items - covered) for kind, items in expected.items() if items - covered}
    assert not missing, (
        "inputs of the gate without a row in docs/security.md's inventory (add a row saying where "
        f"each comes from, what protects it and the case that holds it): {missing}"
    )


def test_every_row_names_its_cases_and_a_pr_input_names_a_hostile_case():
    bad = []
    for row in rows():
        tests = NAMED_TEST.findall(row)
        cells = [c.strip() for c in row.strip("|").split("|")]
        # "PR" in the second cell, unless it says the input never comes from one
        from_pr = len(cells) > 1 and bool(re.search(r"\bPR\b", cells[1])) and "never the PR" not in cells[1]
        if not tests:
            bad.append(f"no test named: {row[:80]}")
        elif from_pr and not any(f.startswith("hostile_prs/") for f, _ in tests):
            bad.append(f"comes from the PR but names no case of tests/hostile_prs/: {row[:80]}")
    assert not bad, "\n".join(bad)


def test_the_inventory_is_read_off_the_code():
    """The collectors find what they should: a check that finds nothing cannot fail."""
    assert {"probes", "checkpoint", "loader", "baseline", "gate"} <= config_keys()
    assert {"inputs.checkpoint", "inputs.cache", "inputs.image"} <= action_inputs()
    assert {"--checkpoint", "--cache", "--approve-gate-changes", "--label"} <= command_flags()
    assert {"EVALGATE_HOME", "GITHUB_EVENT_PATH", "INPUT_*"} <= environment()
    data = workflow_data()
    assert "github.event.pull_request.base.sha" in data and "evalgate:update-baseline" in data
    assert any(d.startswith("upload-artifact: evalgate-report") for d in data)
    assert {"yardstick.rules", "yardstick.test"} <= yardstick()
    assert Path(DOC).is_file()
