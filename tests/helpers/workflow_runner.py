"""A GitHub Actions runner for the tests: one job of a real workflow file, its steps run in order.

`run:` steps run with bash exactly as a hosted runner runs them (`bash --noprofile --norc -eo
pipefail`, the step's env, GITHUB_OUTPUT / GITHUB_ENV / GITHUB_PATH / GITHUB_STEP_SUMMARY files,
`if:` and `continue-on-error`, `${{ }}` evaluated by helpers/actions_expr.py). `uses:` steps are
played by emulators: actions/checkout, setup-python, upload/download-artifact, cache
restore/save, and composite actions (`./path`, or `OWNER/NAME@REF` mapped to a local source
tree), whose own steps run the same way.

What the steps call is real where it can be: git, bash, the GitHub API (a stand-in on
127.0.0.1), evalgate itself. Four tools are stand-ins on PATH, because this machine has no
registry, no PyPI and no GitHub:

- `docker`: `build` records an image made of its context's source tree (id = a digest of the
  tree); `run` runs that tree's evalgate (`python -m evalgate ARGS`, the image's entry point) with
  only the environment the command passes (-e) plus the image's ENV, volumes mapped back to host
  paths, no network beyond loopback; `--network none` and every argv are logged for assertions.
  `Runner(docker=PATH)` puts a real client there instead (helpers/release_image.py), so that the
  steps run the released image on the engine.
- `python`/`python3`: `-m venv DIR` makes a venv whose pip "installs" evalgate by recording
  where its source is (a local folder or `git+URL@REF` of a known repository, checked out at
  REF); its `python`/`evalgate` then import exactly that source (PYTHONPATH), never the checkout
  under test. Everything else passes through to this interpreter. The options are read as
  CPython reads them: `-m MOD` without -P, -I or PYTHONSAFEPATH, in a working folder that holds a
  module or package MOD, runs that one (as CPython would), never the stand-in.
- `gh`: `gh api [-X M] PATH` against the stand-in API; `gh release create` is recorded.

An emulator that a workflow needs and that is missing is an error, not a silent success.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from helpers.actions_expr import condition, interpolate

SHELL = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]


@dataclass
class StepResult:
    id: str
    name: str
    outcome: str  # success | failure | skipped
    conclusion: str
    outputs: dict[str, str] = field(default_factory=dict)
    log: str = ""


@dataclass
class JobResult:
    name: str
    steps: list[StepResult]
    conclusion: str
    summary: str
    outputs: dict[str, str] = field(default_factory=dict)

    def step(self, part: str) -> StepResult:
        found = [s for s in self.steps if part in s.name or s.id == part]
        assert found, f"no step {part!r} in {[s.name for s in self.steps]}"
        return found[0]

    def explain(self) -> str:
        lines = [f"job {self.name}: {self.conclusion}"]
        for s in self.steps:
            lines.append(f"--- {s.name or s.id}: {s.outcome} {s.outputs}")
            lines += ["    " + ln for ln in s.log.splitlines()[-60:]]
        return "\n".join(lines)


def parse_file_commands(text: str) -> dict[str, str]:
    """`name=value` lines and `name<<DELIM` blocks, as the runner reads GITHUB_OUTPUT/GITHUB_ENV."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            value: list[str] = []
            while i < len(lines) and lines[i] != delim:
                value.append(lines[i])
                i += 1
            if i >= len(lines):
                raise ValueError(f"unterminated {name}<<{delim} block")
            i += 1
            out[name] = "\n".join(value)
        elif "=" in line:
            name, value_s = line.split("=", 1)
            out[name] = value_s
        elif line.strip():
            raise ValueError(f"invalid file-command line {line!r}")
    return out


class Runner:
    """Runs jobs of workflows for one repository, one event; keeps artifacts, caches, images."""

    def __init__(
        self,
        state: Path,
        *,
        repository: str,
        event_name: str,
        event: dict[str, Any],
        sha: str,
        ref: str,
        api_url: str = "http://127.0.0.1:9",
        token: str = "ghs_runner_token",
        secrets: Mapping[str, str] | None = None,
        sources: Mapping[str, Path] | None = None,
        run_id: int = 1000,
        actor: str = "octocat",
        cache_scopes: tuple[str, ...] = (),
        docker: Path | None = None,
    ):
        self.state = Path(state)
        self.state.mkdir(parents=True, exist_ok=True)
        self.repository = repository
        self.event_name = event_name
        self.event = event
        self.sha = sha
        self.ref = ref
        self.api_url = api_url
        self.token = token
        self.secrets = dict(secrets or {})
        self.sources = {k.lower(): Path(v) for k, v in (sources or {}).items()}
        self.run_id = run_id
        self.actor = actor
        # GitHub's cache scopes: a run reads its own ref's caches, then the base / default branch's.
        self.cache_scopes = cache_scopes or (ref,)
        self.tools = self.state / "tools"
        self.overrides: dict[str, Callable[[dict[str, Any], Path, dict[str, str]], dict[str, str]]] = {}
        # `docker`: a real client (or a front for one) the steps run instead of the stand-in, so
        # that the gate steps start the released image itself (tests marked `docker`).
        _install_tools(self.tools, self.state, self.sources, docker)

    # -- public -------------------------------------------------------------------------------

    def run_job(
        self,
        workflow: Path,
        job: str,
        workspace: Path,
        *,
        needs: Mapping[str, Any] | None = None,
        matrix: Mapping[str, Any] | None = None,
        uses: Mapping[str, Callable[..., dict[str, str]]] | None = None,
    ) -> JobResult:
        wf = yaml.safe_load(Path(workflow).read_text(encoding="utf-8"))
        spec = wf["jobs"][job]
        workspace = Path(workspace)
        temp = self.state / "runner-temp" / job
        if temp.exists():
            shutil.rmtree(temp)
        temp.mkdir(parents=True)
        event_path = self.state / "event.json"
        event_path.write_text(json.dumps(self.event), encoding="utf-8")
        ctx: dict[str, Any] = {
            "github": self._github_ctx(workspace, event_path, wf.get("name", ""), job),
            "runner": {
                "temp": str(temp),
                "os": "Linux",
                "arch": "X64",
                "name": "stand-in",
                "tool_cache": str(temp),
            },
            "secrets": {"GITHUB_TOKEN": self.token, **self.secrets},
            "vars": {},
            "needs": dict(needs or {}),
            "matrix": dict(matrix or {}),
            "strategy": {},
            "inputs": {},
            "job": {"status": "success"},
            "steps": {},
            "env": {},
        }
        env: dict[str, str] = {}
        for level in (wf.get("env") or {}, spec.get("env") or {}):
            for k, v in level.items():
                ctx["env"] = env
                env[k] = interpolate(v, ctx)
        ctx["env"] = env
        job_env = {
            "GITHUB_WORKSPACE": str(workspace),
            "RUNNER_TEMP": str(temp),
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_EVENT_NAME": self.event_name,
            "GITHUB_REPOSITORY": self.repository,
            "GITHUB_API_URL": self.api_url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_SHA": self.sha,
            "GITHUB_REF": self.ref,
            "GITHUB_RUN_ID": str(self.run_id),
            "GITHUB_ACTIONS": "true",
            "GITHUB_JOB": job,
            "CI": "true",
        }
        extra_path: list[str] = []
        summary: list[str] = []
        results: list[StepResult] = []
        failed = False
        emulators = {**self._emulators(), **(uses or {})}
        for i, step in enumerate(spec.get("steps") or []):
            sid = step.get("id") or f"__step{i}"
            name = step.get("name") or step.get("uses") or step.get("run", "").split("\n")[0]

            def status(fn: str, failed: bool = failed) -> bool:
                return {"success": not failed, "failure": failed, "always": True, "cancelled": False}[fn]

            ctx["job"]["status"] = "failure" if failed else "success"
            if not condition(step.get("if"), ctx, status):
                results.append(StepResult(sid, name, "skipped", "skipped"))
                ctx["steps"][sid] = {"outcome": "skipped", "conclusion": "skipped", "outputs": {}}
                continue
            step_env = dict(env)
            ctx["env"] = step_env
            for k, v in (step.get("env") or {}).items():
                step_env[k] = interpolate(v, ctx)
            ok, outputs, log, added_env, added_path, text = self._step(
                step, ctx, workspace, {**job_env, **step_env}, extra_path, emulators
            )
            env.update(added_env)
            extra_path[:0] = added_path
            summary.append(text)
            outcome = "success" if ok else "failure"
            conclusion = (
                "success"
                if ok or _truthy(interpolate(step.get("continue-on-error", False), ctx))
                else "failure"
            )
            results.append(StepResult(sid, name, outcome, conclusion, outputs, log))
            ctx["steps"][sid] = {"outcome": outcome, "conclusion": conclusion, "outputs": outputs}
            failed = failed or conclusion == "failure"
        ctx["env"] = env
        outputs = {k: interpolate(v, ctx) for k, v in (spec.get("outputs") or {}).items()}
        return JobResult(job, results, "failure" if failed else "success", "".join(summary), outputs)

    # -- steps --------------------------------------------------------------------------------

    def _github_ctx(self, workspace: Path, event_path: Path, workflow: str, job: str) -> dict[str, Any]:
        pr = self.event.get("pull_request") or {}
        return {
            "event_name": self.event_name,
            "event": self.event,
            "event_path": str(event_path),
            "sha": self.sha,
            "ref": self.ref,
            "ref_name": self.ref.rsplit("/", 1)[-1],
            "base_ref": (pr.get("base") or {}).get("ref", ""),
            "head_ref": (pr.get("head") or {}).get("ref", ""),
            "repository": self.repository,
            "repository_owner": self.repository.split("/")[0],
            "server_url": "https://github.com",
            "api_url": self.api_url,
            "token": self.token,
            "workspace": str(workspace),
            "run_id": str(self.run_id),
            "run_attempt": "1",
            "actor": self.actor,
            "triggering_actor": self.actor,
            "workflow": workflow,
            "job": job,
            "action_path": "",
        }

    def _step(self, step, ctx, workspace, env, extra_path, emulators):
        """(ok, outputs, log, env added, path added, summary text) of one step."""
        name = step.get("name") or ""
        for part, fn in self.overrides.items():
            if part in name:
                outputs = fn(step, workspace, env)
                return True, outputs, "(overridden)", {}, [], ""
        if "run" in step:
            cwd = workspace / interpolate(step.get("working-directory", "."), ctx)
            return self._bash(step["run"], ctx, cwd, env, extra_path)
        target = interpolate(step["uses"], ctx)
        with_ = {k: interpolate(v, ctx) for k, v in (step.get("with") or {}).items()}
        if target.startswith("./"):
            return self._composite(workspace / target[2:], with_, ctx, workspace, env, extra_path, emulators)
        repo, _, ref = target.partition("@")
        if repo.lower() in self.sources:
            src = _checkout_source(self.sources[repo.lower()], ref, self.state / "actions")
            return self._composite(src, with_, ctx, workspace, env, extra_path, emulators)
        for prefix, fn in emulators.items():
            if target.startswith(prefix):
                try:
                    outputs = fn(with_, workspace=workspace, env=env, runner=self) or {}
                except StepFailed as exc:
                    return False, {}, str(exc), {}, [], ""
                return True, outputs, "", {}, [], ""
        raise AssertionError(f"no emulator for `uses: {target}`")

    def _bash(self, script: str, ctx, cwd: Path, env: dict[str, str], extra_path: list[str]):
        # `${{ }}` inside `run:` is expanded before bash sees it, as on GitHub (the injection the
        # workflows avoid by passing event text through env).
        script = interpolate(script, ctx)
        files = self.state / "files"
        files.mkdir(exist_ok=True)
        paths = {}
        for var in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_STATE"):
            p = files / f"{var.lower()}_{os.urandom(4).hex()}"
            p.write_text("", encoding="utf-8")
            paths[var] = p
        script_file = files / f"step_{os.urandom(4).hex()}.sh"
        script_file.write_text(script, encoding="utf-8")
        full_env = {
            "PATH": os.pathsep.join([str(self.tools), *extra_path, os.environ.get("PATH", "")]),
            "HOME": os.environ.get("HOME", "/tmp"),
            "LANG": "C.UTF-8",
            **{k: v for k, v in os.environ.items() if k.startswith(("HF_", "TRANSFORMERS_", "GIT_"))},
            **env,
            **{k: str(v) for k, v in paths.items()},
            "FAKE_STATE": str(self.state),
        }
        proc = subprocess.run(
            [*SHELL, str(script_file)], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=900
        )
        log = proc.stdout + proc.stderr
        outputs = parse_file_commands(paths["GITHUB_OUTPUT"].read_text(encoding="utf-8"))
        added_env = parse_file_commands(paths["GITHUB_ENV"].read_text(encoding="utf-8"))
        added_path = [ln for ln in paths["GITHUB_PATH"].read_text(encoding="utf-8").splitlines() if ln]
        text = paths["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8")
        return proc.returncode == 0, outputs, log, added_env, added_path, text

    def _composite(self, path: Path, with_, ctx, workspace, env, extra_path, emulators):
        action = yaml.safe_load((path / "action.yml").read_text(encoding="utf-8"))
        assert action["runs"]["using"] == "composite", path
        inner: dict[str, Any] = {
            **ctx,
            "github": {**ctx["github"], "action_path": str(path)},
            "steps": {},
            "inputs": {},
        }
        for name, spec in (action.get("inputs") or {}).items():
            given = with_.get(name)
            if given is None:
                given = interpolate(spec.get("default", ""), inner)
            inner["inputs"][name] = "" if given is None else str(given)
        unknown = set(with_) - set(action.get("inputs") or {})
        assert not unknown, f"{path}/action.yml has no inputs {unknown}"
        log: list[str] = []
        summary: list[str] = []
        failed = False
        for i, step in enumerate(action["runs"]["steps"]):
            sid = step.get("id") or f"__c{i}"

            def status(fn: str, failed: bool = failed) -> bool:
                return {"success": not failed, "failure": failed, "always": True, "cancelled": False}[fn]

            if not condition(step.get("if"), inner, status):
                inner["steps"][sid] = {"outcome": "skipped", "conclusion": "skipped", "outputs": {}}
                continue
            step_env = dict(env)
            inner["env"] = step_env
            for k, v in (step.get("env") or {}).items():
                step_env[k] = interpolate(v, inner)
            step_env["GITHUB_ACTION_PATH"] = str(path)
            ok, outputs, text_log, _, _, text = self._step(
                step, inner, workspace, step_env, extra_path, emulators
            )
            log.append(f"[{step.get('name', sid)}] {'ok' if ok else 'FAILED'}\n{text_log}")
            summary.append(text)
            inner["steps"][sid] = {
                "outcome": "success" if ok else "failure",
                "conclusion": "success" if ok else "failure",
                "outputs": outputs,
            }
            failed = failed or not ok
        outputs = {
            k: interpolate(v.get("value", ""), inner) for k, v in (action.get("outputs") or {}).items()
        }
        return not failed, outputs, "\n".join(log), {}, [], "".join(summary)

    # -- emulated actions ---------------------------------------------------------------------

    def _emulators(self) -> dict[str, Callable[..., dict[str, str]]]:
        return {
            "actions/checkout@": _checkout,
            "actions/setup-python@": lambda with_, **_: {},
            "actions/upload-artifact@": _upload,
            "actions/download-artifact@": _download,
            "actions/cache/restore@": _cache_restore,
            "actions/cache/save@": _cache_save,
        }

    def artifact_dir(self, run_id: int | str, name: str) -> Path:
        return self.state.parent / "artifacts" / str(run_id) / name

    def cache_dir(self, scope: str, key: str) -> Path:
        return self.state.parent / "caches" / hashlib.sha256(scope.encode()).hexdigest()[:16] / key


class StepFailed(Exception):
    pass


def _truthy(value: Any) -> bool:
    return str(value).lower() in ("true", "1")


def _checkout(
    with_: dict[str, Any], *, workspace: Path, env: dict[str, str], runner: Runner
) -> dict[str, str]:
    """The workspace is already the event's checkout; a `ref`/`path` checks that commit out."""
    ref = with_.get("ref") or ""
    path = with_.get("path") or ""
    if not ref and not path:
        return {}
    dest = workspace / path if path else workspace
    if path:
        add = ["worktree", "add", "-q", "--detach", str(dest), ref or "HEAD"]
        subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", *add], cwd=workspace, check=True, capture_output=True
        )
    else:
        subprocess.run(
            ["git", "checkout", "-q", "--detach", ref], cwd=workspace, check=True, capture_output=True
        )
    return {}


def _lca(paths: list[Path]) -> Path:
    parts = [p.parent.parts if p.is_file() else p.parts for p in paths]
    common: list[str] = []
    for level in zip(*parts, strict=False):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return Path(*common) if common else Path("/")


def _upload(with_: dict[str, Any], *, workspace: Path, env: dict[str, str], runner: Runner) -> dict[str, str]:
    """Regular files of the listed paths (globs allowed), relative to their common folder."""
    found: list[Path] = []
    for line in str(with_["path"]).splitlines():
        line = line.strip()
        if not line:
            continue
        p = Path(line) if Path(line).is_absolute() else workspace / line
        matches = [Path(m) for m in sorted(_glob(p))] if any(c in line for c in "*?[") else [p]
        for m in matches:
            if m.is_dir():
                found += [f for f in sorted(m.rglob("*")) if f.is_file()]
            elif m.is_file():
                found.append(m)
    if not found:
        if with_.get("if-no-files-found", "warn") == "error":
            raise StepFailed(f"upload-artifact {with_['name']}: no files found")
        return {}
    root = _lca(found)
    dest = runner.artifact_dir(runner.run_id, with_["name"])
    if dest.exists():
        raise StepFailed(f"an artifact named {with_['name']} already exists in this run")
    for f in found:
        target = dest / f.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)  # the action uploads content, never a link
    return {"artifact-id": str(abs(hash((runner.run_id, with_["name"]))) % 10**9)}


def _glob(p: Path) -> list[str]:
    parent = p.parent
    return (
        [str(parent / n) for n in os.listdir(parent) if fnmatch.fnmatch(n, p.name)] if parent.is_dir() else []
    )


def _download(
    with_: dict[str, Any], *, workspace: Path, env: dict[str, str], runner: Runner
) -> dict[str, str]:
    run_id = with_.get("run-id") or runner.run_id
    if "pattern" in with_ and "name" not in with_:
        # Every artifact of the run whose name matches, each into PATH/NAME (merge-multiple unset);
        # none matching downloads nothing and succeeds, as the action does.
        dest = Path(with_.get("path") or workspace)
        dest = dest if dest.is_absolute() else workspace / dest
        root = runner.artifact_dir(run_id, "x").parent
        names = (
            sorted(n for n in os.listdir(root) if fnmatch.fnmatch(n, with_["pattern"]))
            if root.is_dir()
            else []
        )
        for name in names:
            shutil.copytree(root / name, dest / name, dirs_exist_ok=True)
        return {"download-path": str(dest)}
    src = runner.artifact_dir(run_id, with_["name"])
    if not src.is_dir():
        raise StepFailed(f"download-artifact: no artifact {with_['name']} in run {run_id}")
    dest = Path(with_.get("path") or workspace)
    dest = dest if dest.is_absolute() else workspace / dest
    shutil.copytree(src, dest, dirs_exist_ok=True)
    return {"download-path": str(dest)}


def _cache_restore(
    with_: dict[str, Any], *, workspace: Path, env: dict[str, str], runner: Runner
) -> dict[str, str]:
    """GitHub's order: exact key, then the newest key with a restore-keys prefix, scope by scope."""
    keys = [with_["key"]] + [
        k.strip() for k in str(with_.get("restore-keys") or "").splitlines() if k.strip()
    ]
    dest = Path(with_["path"])
    for scope in runner.cache_scopes:
        for i, key in enumerate(keys):
            root = runner.cache_dir(scope, "")
            cands = sorted(
                (c for c in root.iterdir() if (c.name == key if i == 0 else c.name.startswith(key))),
                key=lambda c: c.stat().st_mtime, reverse=True,
            ) if root.is_dir() else []  # fmt: skip
            if cands:
                shutil.copytree(cands[0], dest, dirs_exist_ok=True)
                return {"cache-hit": str(i == 0).lower(), "cache-matched-key": cands[0].name}
    return {"cache-hit": "false"}


def _cache_save(
    with_: dict[str, Any], *, workspace: Path, env: dict[str, str], runner: Runner
) -> dict[str, str]:
    dest = runner.cache_dir(runner.cache_scopes[0], with_["key"])
    if dest.exists():
        return {}  # caches are immutable: the first save of a key wins
    shutil.copytree(Path(with_["path"]), dest)
    return {}


def _checkout_source(repo: Path, ref: str, where: Path) -> Path:
    """A repository's tree at `ref`, as `uses: OWNER/NAME@REF` would fetch it."""
    sha = subprocess.run(
        ["git", "rev-parse", ref], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()
    dest = where / sha
    if not dest.exists():
        dest.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", sha], cwd=repo, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


# -- the stand-in tools ---------------------------------------------------------------------------

_PY = sys.executable

_DOCKER = r'''#!PYTHON
"""docker, played: build records a source tree, run runs its evalgate (docs in workflow_runner.py)."""
import hashlib, json, os, subprocess, sys
from pathlib import Path
state = Path(os.environ["FAKE_STATE"])
images = state / "images.json"
known = json.loads(images.read_text()) if images.exists() else {}
argv = sys.argv[1:]
with open(state / "docker.log", "a") as log:
    log.write(json.dumps(argv) + "\n")

def save():
    images.write_text(json.dumps(known))

def tree_id(path):
    out = subprocess.run(["git", "-C", path, "rev-parse", "HEAD^{tree}"], capture_output=True, text=True)
    seed = out.stdout.strip() if out.returncode == 0 else path
    return "sha256:" + hashlib.sha256(("evalgate-image:" + path + seed).encode()).hexdigest()

if argv[:1] == ["build"]:
    args, iidfile, tags = argv[1:], None, []
    context = None
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--iidfile", "-t", "--tag", "-f", "--file", "--build-arg", "--network", "--platform"):
            if a == "--iidfile": iidfile = args[i + 1]
            if a in ("-t", "--tag"): tags.append(args[i + 1])
            i += 2
            continue
        if not a.startswith("-"): context = a
        i += 1
    context = str(Path(context).resolve())
    iid = tree_id(context)
    known[iid] = {"src": context}
    for t in tags: known[t] = {"src": context, "tag": True}
    save()
    if iidfile: Path(iidfile).write_text(iid)
    print(f"Successfully built {iid[7:19]}")
    sys.exit(0)
if argv[:1] == ["pull"]:
    if argv[1] in known: sys.exit(0)
    print(f"Error response from daemon: manifest for {argv[1]} not found", file=sys.stderr)
    sys.exit(1)
if argv[:2] == ["image", "inspect"]:
    sys.exit(0 if argv[2] in known else 1)
if argv[:1] != ["run"]:
    print(f"fake docker: unsupported {argv}", file=sys.stderr)
    sys.exit(125)
args = argv[1:]
mounts, envs, workdir, i = [], {}, "/work", 0
flags_with_value = ("--network", "--user", "-u", "--name", "--entrypoint", "--memory", "--cpus", "--platform")
while i < len(args) and args[i].startswith("-"):
    a = args[i]
    if a in ("-v", "--volume"):
        spec = args[i + 1].split(":")
        mounts.append((spec[0], spec[1], spec[2:] == ["ro"]))
        i += 2
    elif a in ("-e", "--env"):
        k, eq, v = args[i + 1].partition("=")
        if eq: envs[k] = v
        elif k in os.environ: envs[k] = os.environ[k]
        i += 2
    elif a in ("-w", "--workdir"):
        workdir = args[i + 1]; i += 2
    elif a in flags_with_value:
        i += 2
    else:
        i += 1
image, command = args[i], args[i + 1:]
if image not in known:
    print(f"Unable to find image '{image}' locally", file=sys.stderr)
    sys.exit(125)
src = known[image]["src"]
mounts.sort(key=lambda m: -len(m[1]))
def host(value):
    for h, c, _ in mounts:
        if value == c or value.startswith(c + "/"):
            return h + value[len(c):]
    return value
env = {k: host(v) for k, v in envs.items()}
fake_tmp = state / "container-tmp"
fake_tmp.mkdir(exist_ok=True)
env.update({
    "PATH": os.path.dirname(sys.executable) + ":/usr/bin:/bin",
    "PYTHONPATH": str(Path(src) / "src"),
    "PYTHONSAFEPATH": "1",
    "EVALGATE_HOME": src,
    "HOME": str(fake_tmp),
    "MPLCONFIGDIR": str(fake_tmp / "matplotlib"),
    "PYTHONDONTWRITEBYTECODE": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
})
cwd = host(workdir)
if not os.path.isdir(cwd):
    cwd = str(Path(src))
rc = subprocess.run([sys.executable, "-m", "evalgate", *command], cwd=cwd, env=env).returncode
sys.exit(rc)
'''

_PYTHON = r'''#!PYTHON
"""python, played: `-m venv DIR` makes a stand-in venv, `-m pip` the stand-in pip; anything else
runs the real interpreter. Like CPython, `python -m MOD` without -P, -I or PYTHONSAFEPATH imports
MOD from the working folder first: when the working folder holds a module or package of that name,
the real interpreter runs it, so a workflow that forgets -P runs the PR's `venv.py` here too."""
import os, sys
from pathlib import Path
tools = Path(__file__).resolve().parent
args = sys.argv[1:]
flags, i = set(), 0
while i < len(args):  # the interpreter's own options, up to -m, -c, `-` or the script
    a = args[i]
    if a in ("-m", "-c", "-") or not a.startswith("-"):
        break
    if a in ("-W", "-X"):
        i += 2
        continue
    if not a.startswith("--"):
        for ch in a[1:]:
            if ch in "WX":
                break  # the rest is the option's value
            flags.add(ch)
    i += 1
isolated = "I" in flags
safe = "P" in flags or isolated or ("E" not in flags and bool(os.environ.get("PYTHONSAFEPATH")))


def in_working_folder(module):
    top = module.split(".")[0]
    here = Path.cwd()
    if (here / top / "__init__.py").exists() or (here / top / "__init__.pyc").exists():
        return True
    return any(n == top + ".py" or n == top + ".pyc" or (n.startswith(top + ".") and n.endswith(".so"))
               for n in os.listdir(here))


def shadowed():
    """Standard library names the working folder holds: CPython would import them from there."""
    names = set()
    for n in os.listdir(Path.cwd()):
        stem = n.split(".")[0]
        package = (Path.cwd() / n / "__init__.py").exists() or (Path.cwd() / n / "__init__.pyc").exists()
        if stem in sys.stdlib_module_names and (n.endswith((".py", ".pyc", ".so")) or package):
            names.add(n)
    return sorted(names)


real = [sys.executable, *args]
if i + 1 < len(args) and args[i] == "-m":
    module, rest = args[i + 1], args[i + 2:]
    if not safe and in_working_folder(module):
        os.execv(sys.executable, real)  # CPython imports it from the working folder: so do we
    if not safe and shadowed():
        # What the stand-in cannot play: the module would import these from the working folder.
        print(f"python (stand-in): `-m {module}` without -P/-I in {Path.cwd()}, which holds "
              f"{', '.join(shadowed())}: CPython would import them from there", file=sys.stderr)
        sys.exit(97)
    if module == "venv":
        os.execv(sys.executable, [sys.executable, str(tools / "fake_venv.py"), *rest])
    if module == "pip":
        os.execv(sys.executable, [sys.executable, str(tools / "fake_pip.py"), str(tools), *rest])
os.execv(sys.executable, real)
'''

_FAKE_VENV = r'''"""Make DIR a stand-in venv: bin/python, pip, evalgate import what pip installed."""
import os, sys
from pathlib import Path
tools = Path(__file__).resolve().parent
target = Path([a for a in sys.argv[1:] if not a.startswith("-") and a not in ("venv",)][-1])
b = target / "bin"
b.mkdir(parents=True, exist_ok=True)
for name, body in {
    "python": 'exec PYTHON "$@"',
    "python3": 'exec PYTHON "$@"',
    "pip": f'exec PYTHON {tools}/fake_pip.py "$(dirname "$0")" "$@"',
    "evalgate": 'exec PYTHON -m evalgate "$@"',
}.items():
    script = b / name
    script.write_text(
        "#!/bin/sh\n"
        'src=$(cat "$(dirname "$0")/../evalgate-src" 2>/dev/null || echo "'
        + str(tools / "not-installed") + '")\n'
        'export PYTHONPATH="$src"\n' + body.replace("PYTHON", sys.executable) + "\n"
    )
    script.chmod(0o755)
'''

_FAKE_PIP = r'''"""pip install, played: records where evalgate's source is; the rest is installed."""
import json, os, subprocess, sys
from pathlib import Path
bindir = Path(sys.argv[1])
args = sys.argv[2:]
state = Path(os.environ["FAKE_STATE"])
with open(state / "pip.log", "a") as log:
    log.write(json.dumps(args) + "\n")
if not args or args[0] != "install":
    sys.exit(0)
sources = json.loads((state / "sources.json").read_text())
with_value = ("-r", "--requirement", "-c", "--constraint", "--find-links", "-f", "--index-url", "-i",
              "--target")
specs, i = [], 1
while i < len(args):
    a = args[i]
    if a in with_value:
        if a in ("-r", "--requirement"):
            text = Path(args[i + 1]).read_text()
            if "--hash=" not in text and "--require-hashes" in args:
                print("ERROR: hashes are required in --require-hashes mode", file=sys.stderr)
                sys.exit(1)
        i += 2; continue
    if not a.startswith("-"): specs.append(a)
    i += 1
for spec in specs:
    src = None
    if "@" in spec and "git+" in spec:
        url = spec.split("git+", 1)[1]
        base, _, ref = url.rpartition("@")
        repo = sources.get(base.lower().removesuffix(".git").split("github.com/")[-1])
        if repo is None:
            print(f"fake pip: cannot fetch {spec} (no network here)", file=sys.stderr); sys.exit(1)
        dest = state / "pip-src" / ref
        if not dest.exists():
            dest.mkdir(parents=True)
            archive = subprocess.run(["git", "archive", ref], cwd=repo, capture_output=True)
            if archive.returncode != 0:
                print(f"fake pip: {ref} not found in {repo}", file=sys.stderr); sys.exit(1)
            subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
        src = dest
    elif spec.startswith((".", "/")) or Path(spec).is_dir():
        src = Path(spec).resolve()
        if not (src / "pyproject.toml").is_file():
            print(f"fake pip: {spec} is not a project", file=sys.stderr); sys.exit(1)
    if src is not None:
        (bindir.parent / "evalgate-src").write_text(str(src / "src"))
'''

_GH = r'''#!PYTHON
"""gh, played: `gh api` against $GITHUB_API_URL with $GH_TOKEN; `gh release create` is recorded."""
import json, os, sys, urllib.request
from pathlib import Path
state = Path(os.environ["FAKE_STATE"])
argv = sys.argv[1:]
with open(state / "gh.log", "a") as log:
    log.write(json.dumps(argv) + "\n")
if argv[:2] == ["release", "create"]:
    sys.exit(0)
if argv[:1] != ["api"]:
    print(f"fake gh: unsupported {argv}", file=sys.stderr); sys.exit(1)
method, path, silent, fields, i = "GET", None, False, {}, 1
while i < len(argv):
    a = argv[i]
    if a in ("--method", "-X"): method = argv[i + 1]; i += 2; continue
    if a in ("-f", "-F", "--field", "--raw-field"):
        k, _, v = argv[i + 1].partition("="); fields[k] = v; i += 2; continue
    if a == "--silent": silent = True
    elif not a.startswith("-"): path = a
    i += 1
if fields and method == "GET": method = "POST"
url = os.environ["GITHUB_API_URL"].rstrip("/") + "/" + path.lstrip("/")
token = os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN", "")
req = urllib.request.Request(url, method=method, data=json.dumps(fields).encode() if fields else None,
                             headers={"Authorization": f"token {token}",
                                      "Accept": "application/vnd.github+json"})
try:
    with urllib.request.urlopen(req, timeout=30) as resp:
        body = resp.read().decode()
except urllib.error.HTTPError as exc:
    print(f"gh: HTTP {exc.code} {exc.read().decode()[:200]}", file=sys.stderr); sys.exit(1)
if not silent and body: print(body)
'''


def _install_tools(tools: Path, state: Path, sources: Mapping[str, Path], docker: Path | None = None) -> None:
    tools.mkdir(parents=True, exist_ok=True)
    (state / "sources.json").write_text(json.dumps({k: str(v) for k, v in sources.items()}), encoding="utf-8")
    stub = tools / "not-installed" / "evalgate"
    stub.mkdir(parents=True, exist_ok=True)
    (stub / "__init__.py").write_text('raise ImportError("evalgate was never installed in this venv")\n')
    for name, body in {
        "docker": _DOCKER.replace("PYTHON", _PY, 1),
        "gh": _GH.replace("PYTHON", _PY, 1),
        "python": _PYTHON.replace("PYTHON", _PY, 1),
        "python3": _PYTHON.replace("PYTHON", _PY, 1),
        # what a global `python -m pip install evalgate@...` puts on PATH
        "evalgate": '#!/bin/sh\nsrc=$(cat "$(dirname "$0")/../evalgate-src" 2>/dev/null || '
        'echo "$(dirname "$0")/not-installed")\nexport PYTHONPATH="$src"\nexec '
        + _PY
        + ' -m evalgate "$@"\n',
    }.items():
        script = tools / name
        script.write_text(body, encoding="utf-8")
        script.chmod(0o755)
    if docker is not None:
        (tools / "docker").unlink()
        (tools / "docker").symlink_to(Path(docker).resolve())
    (tools / "fake_venv.py").write_text(_FAKE_VENV, encoding="utf-8")
    (tools / "fake_pip.py").write_text(_FAKE_PIP, encoding="utf-8")
