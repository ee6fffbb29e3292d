"""release.yml, scripts/release.py and the released action.yml: built on a version tag (package,
image pushed by digest with provenance, action.yml pinning that digest), the same locally; the
action that consumers pin pulls exactly that digest (docs/release.md)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml
from helpers.paths import REPO

import evalgate
from evalgate import release

DIGEST = "ghcr.io/owner/evalgate@sha256:" + "0123456789abcdef" * 4


def test_release_builds_pushes_attests_and_pins():
    wf = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    assert wf.get("on", wf.get(True)) == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}
    assert set(wf["jobs"]) == {"verify", "image"}
    job = wf["jobs"]["image"]
    # Only after `verify` (tests/hostile_prs/test_privileged_workflows.py), in the environment.
    assert job["needs"] == "verify" and job["environment"] == "release"
    assert job["permissions"] == {
        "contents": "write",
        "packages": "write",
        "id-token": "write",
        "attestations": "write",
    }
    by_uses = {s["uses"].split("@")[0]: s for s in job["steps"] if "uses" in s}
    # The build is scripts/release.py's, not an action's: the workflow and a local release cannot
    # drift (test_release_yml_publishes_what_the_release_script_built runs it).
    assert "docker/build-push-action" not in by_uses
    build = next(s for s in job["steps"] if s.get("id") == "build")
    assert "python -P scripts/release.py" in build["run"] and '--push "$IMAGE"' in build["run"]
    attest = by_uses["actions/attest-build-provenance"]
    assert attest["with"]["subject-digest"] == "${{ steps.build.outputs.digest }}"
    publish = next(s for s in job["steps"] if "released action.yml" in s.get("name", ""))
    assert publish["env"]["DIGEST"] == "${{ steps.build.outputs.digest }}"


def test_the_released_action_pins_the_built_digest(tmp_path):
    action = tmp_path / "action.yml"
    shutil.copy(REPO / "action.yml", action)
    script = REPO / "scripts" / "pin_action_image.py"
    done = subprocess.run([sys.executable, str(script), str(action), DIGEST], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    pinned = yaml.safe_load(action.read_text(encoding="utf-8"))
    source = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert source["inputs"]["image"]["default"] == ""  # this repository builds from its Dockerfile
    assert pinned["inputs"]["image"]["default"] == DIGEST
    # Its description says what the released action does: it pins the image; nothing is built.
    said = pinned["inputs"]["image"]["description"]
    assert "pins, by digest, the image it was released with" in said and "Empty" not in said, said
    assert "Empty (the default here) builds it" in source["inputs"]["image"]["description"]
    pinned["inputs"]["image"]["default"] = ""
    pinned["inputs"]["image"]["description"] = source["inputs"]["image"]["description"]
    assert pinned == source  # nothing else changed
    for bad in ("ghcr.io/owner/evalgate:v1", DIGEST + "\nrun: evil"):
        refused = subprocess.run(
            [sys.executable, str(script), str(action), bad], capture_output=True, text=True
        )
        assert refused.returncode == 2 and "by digest" in refused.stderr


# -- issue 27: one script builds the release, locally as in release.yml ------------------------------

RELEASE = REPO / "scripts" / "release.py"
IMAGE_ID = "sha256:" + "ab" * 32
NEXT = "9.8.7"  # the version a release-ready copy of the tree is bumped to


def release_tree(tmp_path: Path, version: str = NEXT, module_version: str | None = None) -> Path:
    """A copy of what a release builds from (the package, its metadata, action.yml, the CHANGELOG,
    the scripts), with pyproject.toml and evalgate.release.VERSION bumped as a release commit bumps
    them: this tree's own version already has a CHANGELOG section, so it cannot be released again."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md", "CHANGELOG.md", "action.yml"):
        shutil.copy2(REPO / name, tree / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(REPO / "src", tree / "src", ignore=ignore)
    shutil.copytree(REPO / "scripts", tree / "scripts", ignore=ignore)
    (tree / "docker").mkdir()
    shutil.copy2(REPO / "docker" / "requirements-workflow.txt", tree / "docker")
    current = release.VERSION
    for rel, old, new in (
        ("pyproject.toml", f'version = "{current}"', f'version = "{version}"'),
        ("src/evalgate/release.py", f'VERSION = "{current}"', f'VERSION = "{module_version or version}"'),
    ):
        text = (tree / rel).read_text(encoding="utf-8")
        assert old in text, f"{rel} no longer says {old}"
        (tree / rel).write_text(text.replace(old, new, 1), encoding="utf-8")
    return tree


def site_packages() -> str:
    """This venv's packages: a clean venv may import them (nothing is downloaded)."""
    return sysconfig.get_paths()["purelib"]


def run_release(tree: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            str(tree / "scripts" / "release.py"),
            "--root",
            str(tree),
            "--out",
            str(out),
            "--date",
            "2026-12-07",
            "--deps",
            site_packages(),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_version_is_one_everywhere_in_this_tree():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert project == release.VERSION == evalgate.__version__
    said = subprocess.run([sys.executable, "-m", "evalgate", "--version"], capture_output=True, text=True)
    assert said.stdout.strip() == f"evalgate {release.VERSION}"
    # The image labels itself with the version the release passes, and its build fails when the
    # installed package says another (docker/Dockerfile's last RUN).
    dockerfile = (REPO / "docker" / "Dockerfile").read_text(encoding="utf-8")
    assert 'org.opencontainers.image.version="${EVALGATE_VERSION}"' in dockerfile
    assert '[ "$said" = "evalgate ${EVALGATE_VERSION}" ]' in dockerfile
    # The release refs all derive from the one version.
    assert release.tag() == f"v{release.VERSION}"
    assert release.action_ref() == f"{release.REPOSITORY}@action-v{release.VERSION}"


@pytest.mark.parametrize(
    ("tag", "module_version", "said"),
    [
        ("v9.8.6", None, "the tag says '9.8.6'"),
        (f"v{NEXT}", "9.8.8", "src/evalgate/release.py VERSION says '9.8.8'"),
        ("9.8.7", None, "a release tag is vX.Y.Z"),
    ],
)
def test_a_release_whose_versions_disagree_is_refused_and_writes_nothing(tmp_path, tag, module_version, said):
    tree = release_tree(tmp_path, module_version=module_version)
    out = tmp_path / "out"
    refused = run_release(tree, out, "--tag", tag, "--image", IMAGE_ID)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert said in refused.stderr
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["tree"]


def test_this_trees_version_cannot_be_released_twice(tmp_path):
    """The CHANGELOG already has a section for the current version (0.1.0): releasing it again
    would publish different code under a published version."""
    tree = release_tree(tmp_path, version=release.VERSION)
    refused = run_release(tree, tmp_path / "out", "--tag", release.tag(), "--image", IMAGE_ID)
    assert refused.returncode == 2
    assert f"CHANGELOG.md already has a section for {release.VERSION}" in refused.stderr


def test_a_release_of_uncommitted_changes_is_refused(tmp_path):
    """A source tree with a change that no commit holds: its package would not be the tagged code."""
    tree = release_tree(tmp_path)
    git("init", "-q", "-b", "main", cwd=tree)
    git("add", "-A", cwd=tree)
    git("commit", "-q", "-m", "release", cwd=tree)
    with (tree / "src" / "evalgate" / "cli.py").open("a", encoding="utf-8") as f:
        f.write("# not committed\n")
    refused = run_release(tree, tmp_path / "out", "--tag", f"v{NEXT}", "--image", IMAGE_ID)
    assert refused.returncode == 2
    assert "has uncommitted changes (src/evalgate/cli.py)" in refused.stderr
    assert not (tmp_path / "out").exists()


def clean_venv(where: Path, wheel: Path) -> Path:
    """A fresh venv with the wheel alone installed (--no-deps, --no-index); its dependencies are
    this venv's packages, through a .pth file (no download; torch stays the CPU 2.13.0)."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, capture_output=True)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "deps.pth").write_text(site_packages() + "\n", encoding="utf-8")
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stderr
    return where / "bin"


@pytest.mark.slow
def test_a_release_builds_the_package_that_installs_alone_and_sets_up_a_gate(tmp_path):
    tree = release_tree(tmp_path)
    out = tmp_path / "release"
    done = run_release(tree, out, "--tag", f"v{NEXT}", "--image", IMAGE_ID)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"installed alone: evalgate {NEXT}" in done.stdout

    sdist, wheel = (
        out / "dist" / f"evalgate-{NEXT}.tar.gz",
        out / "dist" / f"evalgate-{NEXT}-py3-none-any.whl",
    )
    assert sorted(p.name for p in (out / "dist").iterdir()) == sorted([sdist.name, wheel.name])
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(f"evalgate-{NEXT}.dist-info/METADATA").decode("utf-8")
        assert f"\nVersion: {NEXT}\n" in meta
        assert "evalgate/schemas/results.schema.json" in zf.namelist() or any(
            n.startswith("evalgate/schemas/") for n in zf.namelist()
        )
    with tarfile.open(sdist) as tf:
        assert f"evalgate-{NEXT}/PKG-INFO" in tf.getnames()
        assert f"\nVersion: {NEXT}\n" in tf.extractfile(f"evalgate-{NEXT}/PKG-INFO").read().decode("utf-8")
    assert not (tree / "build").exists() and not list((tree / "src").glob("*.egg-info"))

    # The release copy of action.yml: the source one with `image:` pinned to what was recorded.
    manifest = json.loads((out / "release.json").read_text(encoding="utf-8"))
    assert manifest["version"] == NEXT and manifest["tag"] == f"v{NEXT}" and manifest["image"] == IMAGE_ID
    pinned = yaml.safe_load((out / "action.yml").read_text(encoding="utf-8"))
    assert pinned["inputs"]["image"]["default"] == manifest["image"]
    source = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert "pins, by digest" in pinned["inputs"]["image"]["description"]
    pinned["inputs"]["image"]["default"] = ""
    pinned["inputs"]["image"]["description"] = source["inputs"]["image"]["description"]
    assert pinned == source
    # The CHANGELOG's Unreleased section became the version; nothing else changed; the tree's own
    # CHANGELOG is untouched.
    source_log = (tree / "CHANGELOG.md").read_text(encoding="utf-8")
    released_log = (out / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## Unreleased" not in released_log and f"\n## {NEXT} (2026-12-07)\n" in released_log
    assert released_log.replace(f"## {NEXT} (2026-12-07)", "## Unreleased", 1) == source_log
    for rel, digest in manifest["files"].items():
        assert hashlib.sha256((out / rel).read_bytes()).hexdigest() == digest, rel
    assert set(manifest["files"]) == {
        "action.yml",
        "CHANGELOG.md",
        f"dist/{sdist.name}",
        f"dist/{wheel.name}",
    }

    # Installed into a clean venv, the wheel is the release: its version, and `init` pins its action.
    bin_dir = clean_venv(tmp_path / "venv", wheel)
    said = subprocess.run([str(bin_dir / "evalgate"), "--version"], capture_output=True, text=True)
    assert said.stdout.strip() == f"evalgate {NEXT}", said.stderr
    repo = tmp_path / "consumer"
    shutil.copytree(REPO / "data" / "checkpoints" / "demo", repo / "checkpoints" / "demo")
    rows = [
        {
            "question": f"Which choice answers question {i}?",
            "subject": ("art", "law")[i % 2],
            "choices": [f"a{i}", f"b{i}", f"c{i}", f"d{i}"],
            "answer": i % 4,
        }
        for i in range(20)
    ]
    (repo / "mmlu.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    init = subprocess.run(
        [
            str(bin_dir / "evalgate"),
            "init",
            "--suite",
            "quiz",
            "--items",
            "mmlu.jsonl",
            "--from",
            "mmlu",
            "--checkpoint",
            "checkpoints/demo",
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert init.returncode == 0, init.stdout + init.stderr
    gate = (repo / ".github" / "workflows" / "eval-gate.yml").read_text(encoding="utf-8")
    assert f"uses: {release.REPOSITORY}@action-v{NEXT}" in gate
    assert "OWNER/" not in gate and "development install" not in init.stdout
    loaded = subprocess.run(
        [str(bin_dir / "python"), "-c", "import evalgate; print(evalgate.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert loaded.stdout.startswith(str(tmp_path / "venv")), loaded.stdout  # not this checkout's


def git(*args: str, cwd: Path) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def fake(bin_dir: Path, name: str, body: str) -> None:
    """A stand-in for a runner's tool: logs its argv (one JSON line) to FAKE_LOG, then runs `body`."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text(
        f"#!{sys.executable}\nimport json, os, sys\nargv = sys.argv[1:]\n"
        f"open(os.environ['FAKE_LOG'], 'a').write(json.dumps([{name!r}, *argv]) + '\\n')\n{body}\n",
        encoding="utf-8",
    )
    path.chmod(0o755)


@pytest.mark.slow
def test_release_yml_publishes_what_the_release_script_built(tmp_path):
    """The image job's build and publish steps, their real `run:` scripts run with bash on a tagged
    tree (fakes only for `docker` and `gh`, a bare repository as the remote): the wheel, the
    released action.yml pinning the pushed digest and the released CHANGELOG are what is published."""
    if not shutil.which("jq"):
        pytest.skip("jq is not installed here (every GitHub runner has it)")
    wf = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    job = wf["jobs"]["image"]
    build = next(s for s in job["steps"] if s.get("id") == "build")
    publish = next(s for s in job["steps"] if "released action.yml" in s.get("name", ""))
    tree = release_tree(tmp_path)
    git("init", "-q", "-b", "main", cwd=tree)
    git("add", "-A", cwd=tree)
    git("commit", "-q", "-m", "release 9.8.7", cwd=tree)
    git("tag", f"v{NEXT}", cwd=tree)
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    digest = "sha256:" + "cd" * 32
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    # docker: only `buildx build --push ... --metadata-file F`, which writes the pushed digest to F.
    fake(
        bin_dir,
        "docker",
        f"""
if argv[:3] != ["buildx", "build", "--push"]:
    sys.exit(1)
meta = argv[argv.index("--metadata-file") + 1]
open(meta, "w").write(json.dumps({{"containerimage.digest": "{digest}"}}))""",
    )
    fake(bin_dir, "gh", "")
    temp, output = tmp_path / "runner-temp", tmp_path / "github-output"
    temp.mkdir()
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{Path(sys.executable).parent}:{os.environ['PATH']}",
        "FAKE_LOG": str(log),
        "RUNNER_TEMP": str(temp),
        "GITHUB_OUTPUT": str(output),
        "IMAGE": "ghcr.io/octo/gate",
        "TAG": f"v{NEXT}",
        "GH_TOKEN": "t0ken",
        "REMOTE": str(remote),
        "GITHUB_REPOSITORY": "octo/gate",
        "GITHUB_SERVER_URL": "https://github.com",
        "GIT_AUTHOR_DATE": "2026-12-07T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-12-07T00:00:00Z",
    }
    built = subprocess.run(
        ["bash", "-e", "-c", build["run"]], cwd=tree, env=env, capture_output=True, text=True, timeout=600
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert output.read_text(encoding="utf-8") == f"digest={digest}\n"
    docker = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    assert f"EVALGATE_VERSION={NEXT}" in docker and f"ghcr.io/octo/gate:v{NEXT}" in docker
    assert "--provenance=mode=max" in docker and "--sbom=true" in docker

    published = subprocess.run(
        ["bash", "-e", "-c", publish["run"]],
        cwd=tree,
        env={**env, "DIGEST": digest},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert published.returncode == 0, published.stdout + published.stderr
    action = yaml.safe_load(git("show", f"action-v{NEXT}:action.yml", cwd=remote))
    assert action["inputs"]["image"]["default"] == f"ghcr.io/octo/gate@{digest}"
    assert f"\n## {NEXT} (" in git("show", f"action-v{NEXT}:CHANGELOG.md", cwd=remote)
    # The released commit is the tagged source plus those two files, nothing else.
    changed = git("diff", "--name-only", f"v{NEXT}", f"action-v{NEXT}", cwd=tree).split()
    assert sorted(changed) == ["CHANGELOG.md", "action.yml"]
    gh = [c for c in map(json.loads, log.read_text(encoding="utf-8").splitlines()) if c[0] == "gh"]
    assert len(gh) == 1 and gh[0][1:4] == ["release", "create", f"v{NEXT}"]
    notes_file = gh[0][gh[0].index("--notes-file") + 1]
    assets = {Path(a).name for a in gh[0] if a.startswith(str(temp)) and a != notes_file}
    assert assets == {
        "action.yml",
        "release.json",
        f"evalgate-{NEXT}.tar.gz",
        f"evalgate-{NEXT}-py3-none-any.whl",
    }
    notes = Path(notes_file).read_text(encoding="utf-8")
    assert f"uses: octo/gate@action-v{NEXT}" in notes
    assert f"github.com/octo/gate/releases/download/v{NEXT}/evalgate-{NEXT}-py3-none-any.whl" in notes
    assert f"The commit of action-v{NEXT}: {git('rev-parse', f'action-v{NEXT}', cwd=tree).strip()}" in notes


def _torch_wheel() -> Path | None:
    """The local CPU torch wheel the image pins (pip's find-links folder), as docker/smoke.sh finds it."""
    pin = re.search(r"(?m)^torch==(\S+)", (REPO / "docker" / "requirements.txt").read_text(encoding="utf-8"))
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True)
    folders = (
        re.findall(r"find-links='([^']*)'", listed.stdout) + os.environ.get("PIP_FIND_LINKS", "").split()
    )
    for folder in folders:
        for wheel in sorted(
            Path(folder.removeprefix("file://")).glob(f"torch-{pin[1]}*-cp311-cp311-*linux*.whl")
        ):
            return wheel
    return None


@pytest.mark.docker
def test_a_release_builds_the_image_of_its_version_and_pins_its_id(tmp_path):
    """The whole local release, image included: the image labels itself with the version and says
    it, and the released action.yml names exactly the image id built."""
    if not shutil.which("docker") or subprocess.run(["docker", "info"], capture_output=True).returncode:
        pytest.skip("RELEASE IMAGE TEST NOT RUN: no Docker engine answers (docker/smoke.sh starts one)")
    tree = release_tree(tmp_path)
    for name in ("evalgate.yml", "baselines", "data", "docker"):
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, tree / name, dirs_exist_ok=True)
        else:
            shutil.copy2(REPO / name, tree / name)
    wheel = _torch_wheel()
    if wheel is not None:  # else the build downloads it from the PyTorch CPU index
        shutil.copy2(wheel, tree / "docker" / "wheels" / wheel.name)
    base = (
        os.environ.get("BASE_IMAGE")
        or subprocess.run(
            ["bash", str(REPO / "docker" / "offline-base.sh")], capture_output=True, text=True, check=True
        ).stdout.split()[-1]
    )
    args = ["--build-arg", f"BASE_IMAGE={base}"]
    if "bookworm" in base:
        args += ["--build-arg", "BINUTILS_VERSION=2.40-2"]
    out = tmp_path / "release"
    done = run_release(tree, out, "--tag", f"v{NEXT}", *args)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    image = json.loads((out / "release.json").read_text(encoding="utf-8"))["image"]
    try:
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", image)
        assert (
            yaml.safe_load((out / "action.yml").read_text(encoding="utf-8"))["inputs"]["image"]["default"]
            == image
        )
        label = subprocess.run(
            [
                "docker",
                "image",
                "inspect",
                "-f",
                '{{index .Config.Labels "org.opencontainers.image.version"}}',
                image,
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert label == NEXT
        said = subprocess.run(
            ["docker", "run", "--rm", "--network", "none", image, "--version"], capture_output=True, text=True
        )
        assert said.stdout.strip() == f"evalgate {NEXT}", said.stderr
    finally:
        subprocess.run(["docker", "image", "rm", "-f", image], capture_output=True)
