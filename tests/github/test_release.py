"""release.yml and the released action.yml: built on a version tag, pushed by digest with
provenance, and the action that consumers pin pulls exactly that digest."""

from __future__ import annotations

import shutil
import subprocess
import sys

import yaml
from helpers.paths import REPO

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
    build = by_uses["docker/build-push-action"]
    assert build["with"]["file"] == "docker/Dockerfile" and build["with"]["push"] is True
    assert build["with"]["provenance"] == "mode=max"
    attest = by_uses["actions/attest-build-provenance"]
    assert attest["with"]["subject-digest"] == "${{ steps.build.outputs.digest }}"
    publish = next(s for s in job["steps"] if "released action.yml" in s.get("name", ""))
    assert 'pin_action_image.py action.yml "$IMAGE@$DIGEST"' in publish["run"]
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
    pinned["inputs"]["image"]["default"] = ""
    assert pinned == source  # nothing else changed
    for bad in ("ghcr.io/owner/evalgate:v1", DIGEST + "\nrun: evil"):
        refused = subprocess.run(
            [sys.executable, str(script), str(action), bad], capture_output=True, text=True
        )
        assert refused.returncode == 2 and "by digest" in refused.stderr
