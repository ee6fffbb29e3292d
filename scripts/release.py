"""Build one release of evalgate: what .github/workflows/release.yml runs, and the same locally.

    python scripts/release.py --tag vX.Y.Z --out DIR [--push ghcr.io/OWNER/evalgate]
                              [--image REF] [--date YYYY-MM-DD] [--build-arg NAME=VALUE ...]

One version gives, in DIR (docs/release.md):

    dist/evalgate-X.Y.Z.tar.gz, dist/evalgate-X.Y.Z-py3-none-any.whl   the package (sdist + wheel)
    action.yml     the source action.yml with `image:` pinned to the image this run built
    CHANGELOG.md   the source CHANGELOG with its `## Unreleased` heading become `## X.Y.Z (DATE)`
    release.json   version, tag, action reference, image, and the SHA-256 of every file above
    notes.md       the GitHub release's notes: the `uses:`, `pip install` and `init` lines

Steps, each refusing (exit 2, nothing half-written in DIR) rather than releasing something else:

1. versions: the tag, pyproject.toml's version and evalgate.release.VERSION must be one version;
2. package: sdist and wheel built by the setuptools backend from a copy of the package's sources
   (no build isolation: nothing is downloaded), their metadata must say that version, and the
   wheel is installed (--no-deps) into a fresh venv whose `evalgate --version` must say it too;
3. image: `docker build` of docker/Dockerfile with EVALGATE_VERSION (the image labels itself with
   it and its build fails when the installed package says another); locally the image id is the
   reference, with --push the image is pushed (provenance, SBOM) and its registry digest is; or
   --image REF names an image already built (the package-only check of tests/github/);
4. action.yml and CHANGELOG.md written as above, then release.json.

Exit 0 released, 2 refused (a disagreement, a failed build), 3 a bug here.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pin_action_image import pin

ROOT = Path(__file__).resolve().parent.parent
TAG = re.compile(r"v(\d+\.\d+\.\d+)")
UNRELEASED = re.compile(r"(?m)^## Unreleased[ \t]*$")
LABEL = "org.opencontainers.image.version"
# What the sdist is built from: the package, its metadata, the README it names.
SOURCES = ("pyproject.toml", "README.md", "src")


class Refused(Exception):
    """A release that must not happen: the message says what disagrees."""


def say(message: str) -> None:
    print(f"release: {message}", flush=True)


def versions(root: Path, tag: str) -> str:
    """The one version the tag, pyproject.toml and evalgate.release.VERSION all name."""
    found = TAG.fullmatch(tag)
    if not found:
        raise Refused(f"tag {tag!r}: a release tag is vX.Y.Z")
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    module = None
    tree = ast.parse((root / "src/evalgate/release.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "VERSION" for t in node.targets):
            module = ast.literal_eval(node.value)
    said = {"the tag": found[1], "pyproject.toml": project, "src/evalgate/release.py VERSION": module}
    if len(set(said.values())) != 1:
        listed = ", ".join(f"{where} says {v!r}" for where, v in said.items())
        raise Refused(f"the versions disagree: {listed}; make them one version before tagging")
    return found[1]


def changelog(text: str, version: str, date: str) -> str:
    """CHANGELOG.md with its Unreleased section become `version`'s."""
    if f"\n## {version} " in text or f"\n## {version}\n" in text:
        raise Refused(f"CHANGELOG.md already has a section for {version}")
    heading = UNRELEASED.search(text)
    if heading is None:
        raise Refused("CHANGELOG.md has no `## Unreleased` section to release")
    rest = text[heading.end() :]
    following = re.search(r"(?m)^## ", rest)
    if not (rest[: following.start()] if following else rest).strip():
        raise Refused("CHANGELOG.md's Unreleased section is empty: nothing to release")
    return text[: heading.start()] + f"## {version} ({date})" + text[heading.end() :]


def _run(cmd: list[str], what: str, **kwargs) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
        raise Refused(f"{what} failed (exit {done.returncode}):\n{tail}")
    return done


def package(root: Path, version: str, dist: Path) -> tuple[Path, Path]:
    """sdist and wheel of `version`, built from a copy of the sources (the tree stays clean)."""
    dist.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="evalgate-release-") as scratch:
        src = Path(scratch) / "src-tree"
        src.mkdir()
        for name in SOURCES:
            if (root / name).is_dir():
                ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
                shutil.copytree(root / name, src / name, ignore=ignore)
            else:
                shutil.copy2(root / name, src / name)
        # PEP 517 hooks of the setuptools backend, called as `python -m build --no-isolation` calls
        # them: the build tools are the interpreter's own (hash-pinned in the workflow).
        # The names go to a file: the backend prints its own log on stdout.
        names = Path(scratch) / "names"
        code = (
            "import sys; from setuptools import build_meta as b; dist, names = sys.argv[1:3]; "
            "s = b.build_sdist(dist); w = b.build_wheel(dist); open(names, 'w').write(s + ' ' + w)"
        )
        _run([sys.executable, "-c", code, str(dist), str(names)], "building the sdist and wheel", cwd=src)
        sdist_name, wheel_name = names.read_text(encoding="utf-8").split()
    sdist, wheel = dist / sdist_name, dist / wheel_name
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(f"evalgate-{version}.dist-info/METADATA").decode("utf-8")
    said = re.search(r"(?m)^Version: (.+)$", meta)
    if not said or said[1] != version or sdist.name != f"evalgate-{version}.tar.gz":
        raise Refused(f"the package built is not {version}: {sdist.name}, wheel says {said and said[1]}")
    return sdist, wheel


def install_check(wheel: Path, version: str, deps: str | None) -> None:
    """The wheel installed alone into a fresh venv says `evalgate VERSION`. `deps`: a site-packages
    folder whose packages the venv may import (nothing is downloaded; the wheel brings no deps)."""
    with tempfile.TemporaryDirectory(prefix="evalgate-venv-") as scratch:
        venv = Path(scratch) / "venv"
        _run([sys.executable, "-m", "venv", str(venv)], "creating a clean venv")
        python = venv / "bin" / "python"
        if deps:
            purelib = _run(
                [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                "locating the venv's site-packages",
            ).stdout.strip()
            Path(purelib, "evalgate-release-deps.pth").write_text(deps + "\n", encoding="utf-8")
        _run(
            [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
            "installing the wheel into a clean venv",
        )
        said = _run([str(venv / "bin" / "evalgate"), "--version"], "evalgate --version").stdout.strip()
    if said != f"evalgate {version}":
        raise Refused(f"the installed wheel says {said!r}, not 'evalgate {version}'")


def image(root: Path, version: str, push: str | None, tag: str, build_args: list[str]) -> str:
    """Build docker/Dockerfile as `version`: its image id, or with `push` its registry digest."""
    args = ["-f", str(root / "docker/Dockerfile"), "--build-arg", f"EVALGATE_VERSION={version}"]
    for arg in build_args:
        args += ["--build-arg", arg]
    with tempfile.TemporaryDirectory(prefix="evalgate-image-") as scratch:
        if push:
            meta = Path(scratch) / "metadata.json"
            cmd = [
                "docker",
                "buildx",
                "build",
                "--push",
                "--provenance=mode=max",
                "--sbom=true",
                "--metadata-file",
                str(meta),
                "-t",
                f"{push}:{tag}",
                *args,
                str(root),
            ]
            say(" ".join(cmd))
            _run(cmd, "the image build")
            digest = json.loads(meta.read_text(encoding="utf-8"))["containerimage.digest"]
            ref = f"{push}@{digest}"
        else:
            iid = Path(scratch) / "iid"
            cmd = [
                "docker",
                "build",
                "--force-rm",
                "--network",
                "host",
                "--iidfile",
                str(iid),
                *args,
                str(root),
            ]
            say(" ".join(cmd))
            _run(cmd, "the image build")
            ref = iid.read_text(encoding="utf-8").strip()
    if not push:
        label = _run(
            ["docker", "image", "inspect", "-f", f'{{{{index .Config.Labels "{LABEL}"}}}}', ref],
            "inspecting the image",
        ).stdout.strip()
        if label != version:
            raise Refused(f"the image {ref} is labelled {LABEL}={label!r}, not {version!r}")
    return ref


def notes(repository: str, tag: str, version: str, ref: str, wheel: str) -> str:
    """The GitHub release's notes: the two lines a consumer copies (docs/github.md)."""
    url = f"https://github.com/{repository}/releases/download/{tag}/{wheel}"
    return (
        f"evalgate {version}: see CHANGELOG.md of `action-{tag}`.\n\n"
        f"- The action: `uses: {repository}@action-{tag}` (its action.yml pulls `{ref}`)\n"
        f"- The package: `pip install {url}`\n"
        "- Then: `evalgate init --suite NAME --items FILE --checkpoint DIR "
        f"--action {repository}@action-{tag}`\n"
    )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def release(args: argparse.Namespace) -> Path:
    root = Path(args.root).resolve()
    out = Path(args.out)
    if out.exists() and any(out.iterdir()):
        raise Refused(f"{out}: not empty; a release is written into an empty folder")
    version = versions(root, args.tag)
    # A git tree must be committed: the package is what its commit holds (docs/release.md).
    git = ["git", "-C", str(root)]
    changed = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=no", "--", "."], capture_output=True, text=True
    )
    if changed.returncode == 0 and changed.stdout.strip():
        listed = ", ".join(line[3:] for line in changed.stdout.splitlines()[:5])
        raise Refused(f"{root} has uncommitted changes ({listed}): commit them, the release is a commit")
    logged = subprocess.run([*git, "log", "-1", "--format=%cs"], capture_output=True, text=True)
    date = args.date or (logged.stdout.strip() if logged.returncode == 0 else "")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        date = datetime.date.today().isoformat()
    released_changelog = changelog((root / "CHANGELOG.md").read_text(encoding="utf-8"), version, date)
    # Everything into a staging folder beside OUT, moved into place at the end: a refusal at any
    # step leaves no partial release where a publishing step could pick it up.
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        say(f"{args.tag}: building the package of evalgate {version}")
        sdist, wheel = package(root, version, stage / "dist")
        install_check(wheel, version, args.deps)
        say(f"package ok: {sdist.name}, {wheel.name} (installed alone: evalgate {version})")
        ref = args.image or image(root, version, args.push, args.tag, args.build_arg)
        action = pin((root / "action.yml").read_text(encoding="utf-8"), ref)
        (stage / "action.yml").write_text(action, encoding="utf-8")
        (stage / "CHANGELOG.md").write_text(released_changelog, encoding="utf-8")
        files = [sdist, wheel, stage / "action.yml", stage / "CHANGELOG.md"]
        manifest = {
            "version": version,
            "tag": args.tag,
            "action_tag": f"action-{args.tag}",
            "image": ref,
            "files": {p.relative_to(stage).as_posix(): sha256(p) for p in files},
        }
        (stage / "release.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        (stage / "notes.md").write_text(notes(args.repository, args.tag, version, ref, wheel.name))
        if out.exists():
            out.rmdir()
        stage.rename(out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    say(f"{out}: evalgate {version}, image {ref}")
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="release.py", description=__doc__.splitlines()[0])
    parser.add_argument("--tag", required=True, help="the release tag, vX.Y.Z")
    parser.add_argument("--out", required=True, help="an empty or new folder for the release")
    parser.add_argument("--root", default=str(ROOT), help="the source tree (default: this repository)")
    parser.add_argument("--push", help="push the image as NAME (ghcr.io/OWNER/evalgate) with buildx")
    parser.add_argument("--image", help="an image already built (NAME@sha256:DIGEST or sha256:ID)")
    parser.add_argument("--date", help="the CHANGELOG date (default: the commit's date)")
    parser.add_argument("--deps", help="a site-packages folder the install check's venv may import")
    parser.add_argument("--build-arg", action="append", default=[], help="passed to docker build")
    parser.add_argument(
        "--repository", default="evalgate/evalgate", help="OWNER/NAME on GitHub, for the notes"
    )
    args = parser.parse_args(argv)
    try:
        release(args)
    except (Refused, ValueError) as exc:
        print(f"release: refused: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
