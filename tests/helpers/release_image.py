"""One release of evalgate built on this machine exactly as scripts/release.py builds it, image
included, for the tests that run the released image by id (marked `docker`).

`build_release(where)` copies this checkout's release sources into a git tree, bumps it to
RELEASE_VERSION as a release commit would (this tree's own version already has a CHANGELOG
section, so release.py refuses to release it again), tags it, runs `scripts/release.py` on it (the
package, the image, the release copy of action.yml pinning the image id), commits that action.yml
and CHANGELOG.md on top as release.yml does and tags `action-vX.Y.Z`, and clones the result into a
bare repository a consumer's workflows can pin.

This machine has no container registry, so `docker` on the release's and the workflows' PATH is
`DockerOfflineBuilder`: every command goes to the real engine unchanged except `build`, which is
built as docker/smoke.sh builds offline (BuildKit, the stand-in base of docker/offline-base.sh and
its binutils, the local CPU torch wheel staged into the build context, `--network host` for the
pip index), and records the id it built so that the test removes it. `docker run` is the
engine's own: network none, mounts and user exactly as the step wrote them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import warnings
from dataclasses import dataclass
from pathlib import Path

from helpers.hostile_pr import SNAPSHOT, git
from helpers.paths import REPO

RELEASE_VERSION = "9.8.7"
# What scripts/release.py reads besides the snapshot the workflows tests use.
RELEASE_SOURCES = (*SNAPSHOT, "README.md", "CHANGELOG.md", "scripts")
ENGINE_UNAVAILABLE = "NO DOCKER ENGINE"


def engine_problem() -> str | None:
    """Why no Docker engine can run the released image here, or None when one answers."""
    if not shutil.which("docker"):
        return "no `docker` client on PATH"
    try:  # an engine busy removing layers (vfs) can take minutes to answer
        done = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "`docker info` did not answer within 600 s"
    if done.returncode != 0:
        return f"`docker info` exited {done.returncode}: {(done.stderr or done.stdout).strip()[-300:]}"
    return None


def buildkit_client() -> tuple[str, dict[str, str]]:
    """The client and environment docker/smoke.sh builds with: BuildKit where a client has it
    (a client before 23 has it built in, a later one needs buildx), else the legacy builder."""
    for client in ("/usr/bin/docker", shutil.which("docker") or "docker"):
        said = subprocess.run(
            [client, "version", "--format", "{{.Client.Version}}"], capture_output=True, text=True
        )
        if said.returncode != 0 or not said.stdout.strip():
            continue
        major = int(re.match(r"\d+", said.stdout.strip())[0])
        buildx = subprocess.run([client, "buildx", "version"], capture_output=True).returncode == 0
        if major < 23 or buildx:
            return client, {"DOCKER_BUILDKIT": "1"}
    return "docker", {"DOCKER_BUILDKIT": "0"}


def torch_wheel() -> Path | None:
    """The local CPU torch wheel the image pins (pip's find-links folders), as smoke.sh finds it."""
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


def offline_base() -> str:
    """The base the offline builder builds on: $BASE_IMAGE, else docker/offline-base.sh's stand-in
    (built only when missing)."""
    if os.environ.get("BASE_IMAGE"):
        return os.environ["BASE_IMAGE"]
    made = subprocess.run(
        ["bash", str(REPO / "docker" / "offline-base.sh")], capture_output=True, text=True, check=True
    )
    return made.stdout.split()[-1]


_WRAPPER = r'''#!PYTHON
"""docker for a machine without a registry (tests/helpers/release_image.py): `build` as the
offline builder of docker/smoke.sh, recording the id built; everything else the engine's own."""
import json, os, shutil, subprocess, sys, tempfile
from pathlib import Path
CONF = json.loads(CONFIG)
argv = sys.argv[1:]
with open(CONF["log"], "a") as log:
    log.write(json.dumps(argv) + "\n")
if argv[:1] != ["build"]:
    os.execv(CONF["engine"], [CONF["engine"], *argv])
args = argv[1:]
context = Path(args[-1])
if CONF["wheel"]:  # the CPU torch wheel, where the Dockerfile's COPY docker/wheels/ finds it
    target = context / "docker" / "wheels" / Path(CONF["wheel"]).name
    if (context / "docker" / "wheels").is_dir() and not target.exists():
        shutil.copyfile(CONF["wheel"], target)
extra = ["--network", "host"] if "--network" not in args else []
if not any(a.startswith("BASE_IMAGE=") for a in args):
    extra += ["--build-arg", "BASE_IMAGE=" + CONF["base"]]
    if "bookworm" in CONF["base"]:
        extra += ["--build-arg", "BINUTILS_VERSION=2.40-2"]
iid = None
if "--iidfile" in args:
    iid = args[args.index("--iidfile") + 1]
else:
    iid = tempfile.mkstemp(prefix="evalgate-iid.")[1]
    extra += ["--iidfile", iid]
env = {**os.environ, **CONF["env"]}
rc = subprocess.run([CONF["client"], "build", *extra, *args[:-1], str(context)], env=env).returncode
if rc == 0:
    image = Path(iid).read_text().strip()
    # A name keeps it from `docker image prune` (docker/smoke.sh prunes untagged evalgate images)
    # while the test runs; the test removes it by id.
    subprocess.run([CONF["engine"], "tag", image, "evalgate-consumer-test:" + image[7:19]], check=True)
    with open(CONF["built"], "a") as built:
        built.write(image + "\n")
sys.exit(rc)
'''


@dataclass
class Release:
    origin: Path  # bare repository: main = the tagged source, tag action-vX.Y.Z = the released action
    action_sha: str  # the commit consumers pin (its action.yml names the image by id)
    image: str  # sha256:ID, as release.json and the released action.yml name it
    bin: Path  # a folder holding `docker` (the offline builder); put it first on PATH
    log: Path  # every docker argv, one JSON line each

    def built(self) -> list[str]:
        path = self.bin / "built.txt"
        return path.read_text(encoding="utf-8").split() if path.exists() else []

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]

    def remove_images(self) -> None:
        """Every image this release's builds made, then stale build cache (vfs keeps full copies):
        records unused for an hour, as docker/smoke.sh drops them, so the smoke build stays warm."""
        for image in dict.fromkeys([self.image, *self.built()]):
            subprocess.run(["docker", "image", "rm", "-f", image], capture_output=True, timeout=1800)
        # On vfs a prune deletes full copies of every layer: minutes on a busy engine. It is left
        # to finish (never killed half way) when it takes longer than the wait, and said so.
        prune = subprocess.Popen(
            ["docker", "builder", "prune", "-f", "--filter", "until=1h"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            prune.wait(timeout=1800)
        except subprocess.TimeoutExpired:
            warnings.warn(f"`docker builder prune -f` (pid {prune.pid}) is still running", stacklevel=1)


def offline_docker(bin_dir: Path) -> Path:
    """`bin_dir/docker`: the offline builder in front of the engine."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    client, env = buildkit_client()
    wheel = torch_wheel()
    conf = {
        "engine": shutil.which("docker"),
        "client": client,
        "env": env,
        "base": offline_base(),
        "wheel": str(wheel) if wheel else "",
        "log": str(bin_dir / "docker.log"),
        "built": str(bin_dir / "built.txt"),
    }
    script = bin_dir / "docker"
    script.write_text(
        _WRAPPER.replace("PYTHON", sys.executable, 1).replace("CONFIG", repr(json.dumps(conf)), 1),
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def _bump(tree: Path, version: str) -> None:
    from evalgate import release

    for rel, old, new in (
        ("pyproject.toml", f'version = "{release.VERSION}"', f'version = "{version}"'),
        ("src/evalgate/release.py", f'VERSION = "{release.VERSION}"', f'VERSION = "{version}"'),
    ):
        text = (tree / rel).read_text(encoding="utf-8")
        assert old in text, f"{rel} no longer says {old}"
        (tree / rel).write_text(text.replace(old, new, 1), encoding="utf-8")


def build_release(where: Path, version: str = RELEASE_VERSION) -> Release:
    """The release of this checkout as `version`: see the module's docstring."""
    tree = where / "source"
    tree.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "evalgate-out", "wheels", "*.egg-info")
    for name in RELEASE_SOURCES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, tree / name, ignore=ignore, symlinks=True)
        elif src.is_file():
            shutil.copy2(src, tree / name)
    (tree / "docker" / "wheels").mkdir(exist_ok=True)
    (tree / "docker" / "wheels" / ".gitkeep").write_text("")
    (tree / ".gitignore").write_text("docker/wheels/*\n!docker/wheels/.gitkeep\n", encoding="utf-8")
    _bump(tree, version)
    git("init", "-q", "-b", "main", cwd=tree)
    git("add", "-A", cwd=tree)
    git("commit", "-q", "-m", f"evalgate {version}", cwd=tree, who="maria")
    git("tag", f"v{version}", cwd=tree)

    bin_dir = where / "bin"
    offline_docker(bin_dir)
    out = where / "release"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [sys.executable, str(tree / "scripts" / "release.py"), "--root", str(tree), "--out", str(out),
         "--tag", f"v{version}", "--deps", sysconfig.get_paths()["purelib"]],
        capture_output=True, text=True, timeout=3600, env=env,
    )  # fmt: skip
    built = (
        (bin_dir / "built.txt").read_text(encoding="utf-8").split()
        if (bin_dir / "built.txt").exists()
        else []
    )
    if done.returncode != 0:
        for image in built:
            subprocess.run(["docker", "image", "rm", "-f", image], capture_output=True)
        raise AssertionError(
            f"scripts/release.py exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    image = json.loads((out / "release.json").read_text(encoding="utf-8"))["image"]
    # release.yml's publishing step: the released action.yml and CHANGELOG.md on the tagged source.
    for name in ("action.yml", "CHANGELOG.md"):
        shutil.copyfile(out / name, tree / name)
    git("add", "action.yml", "CHANGELOG.md", cwd=tree)
    git("commit", "-q", "-m", f"Release {version}: action.yml pins {image}", cwd=tree, who="maria")
    git("tag", f"action-v{version}", cwd=tree)
    origin = where / "origin.git"
    git("clone", "-q", "--bare", str(tree), str(origin), cwd=where)
    sha = git("rev-parse", f"action-v{version}^{{commit}}", cwd=origin)
    return Release(origin, sha, image, bin_dir, bin_dir / "docker.log")
