"""The sealed manifest: version, digest, file hashes, the probe lock, and the seal/deprecate workflow."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from helpers.probeset_factory import ADVERSARIAL, CORE, apply_step, cli_merged, write_base

from evalgate.config import load_config
from evalgate.probeset.manifest import bump_version, probe_set_digest
from evalgate.probeset_io import validate
from evalgate.types import Probe

MANIFEST = Path("data/eval/MANIFEST.json")


def seal(root: Path, *extra: str) -> tuple[int, str]:
    return cli_merged("probes", "seal", "--config", str(root / "evalgate.yml"), *extra)


def check(root: Path, *extra: str) -> tuple[int, dict]:
    code, out = cli_merged("validate", "--config", str(root / "evalgate.yml"), "--format", "json", *extra)
    return code, json.loads(out)


def manifest(root: Path) -> dict:
    return json.loads((root / MANIFEST).read_text(encoding="utf-8"))


def checks(doc: dict, key: str = "findings") -> set[str]:
    return {f["check"] for f in doc[key]}


@pytest.fixture
def sealed(tmp_path) -> Path:
    write_base(tmp_path)
    code, out = seal(tmp_path)
    assert code == 0, out
    return tmp_path


def test_first_seal_records_version_hashes_cases_digest_and_lock(sealed):
    m = manifest(sealed)
    assert m["schema_version"] == 1 and m["version"] == "0.1.0"
    probes_file = sealed / "data/eval/probes.jsonl"
    assert m["files"]["probes.jsonl"] == {
        "sha256": hashlib.sha256(probes_file.read_bytes()).hexdigest(),
        "cases": len(CORE),
    }
    assert m["files"]["adversarial.jsonl"]["cases"] == len(ADVERSARIAL)
    probes = [Probe.from_record(r) for r in CORE + ADVERSARIAL]
    assert m["digest"] == probe_set_digest(probes)
    assert m["lock"] == {p.id: p.content_hash() for p in probes}
    code, doc = check(sealed)
    assert code == 0 and doc["summary"]["version"] == "0.1.0"
    assert "manifest-missing" not in checks(doc, "warnings")


def test_an_unsealed_set_validates_with_a_warning(tmp_path):
    write_base(tmp_path)
    code, doc = check(tmp_path)
    assert code == 0
    assert checks(doc, "warnings") == {"manifest-missing"}
    assert doc["summary"]["version"] is None


def test_sealing_is_deterministic_and_idempotent(sealed, tmp_path_factory):
    before = (sealed / MANIFEST).read_bytes()
    code, out = seal(sealed)
    assert code == 0 and "up to date" in out
    assert (sealed / MANIFEST).read_bytes() == before
    other = tmp_path_factory.mktemp("other")
    write_base(other)
    assert seal(other)[0] == 0
    assert (other / MANIFEST).read_bytes() == before


def test_deprecate_and_replace_then_reseal_bumps_the_version_and_keeps_the_lock(sealed):
    old_hash = manifest(sealed)["lock"]["en-go-past-1sg-001"]
    apply_step(
        sealed, {"set": {"file": "probes.jsonl", "id": "en-go-past-1sg-001", "fields": {"deprecated": True}}}
    )
    replacement = {**CORE[1], "id": "en-go-past-1sg-002", "prompt": "Yesterday I ___ to the park."}
    apply_step(sealed, {"append": {"file": "probes.jsonl", "record": replacement}})

    code, doc = check(sealed)  # deprecating is no content change, but the file is not sealed any more
    assert code == 2 and checks(doc) == {"manifest-file-changed"}

    code, out = seal(sealed)
    assert code == 0 and "0.1.0 -> 0.1.1 (patch)" in out
    m = manifest(sealed)
    assert m["version"] == "0.1.1"
    assert m["lock"]["en-go-past-1sg-001"] == old_hash
    assert "en-go-past-1sg-002" in m["lock"]
    code, doc = check(sealed)
    assert code == 0, doc
    assert doc["summary"]["deprecated"] == 1


@pytest.mark.parametrize(("bump", "version"), [("minor", "0.2.0"), ("major", "1.0.0"), ("patch", "0.1.1")])
def test_bump_flag(sealed, bump, version):
    new = {**CORE[0], "id": "en-work-pres-3sg-002", "prompt": "On Fridays Maria ___ from home."}
    apply_step(sealed, {"append": {"file": "probes.jsonl", "record": new}})
    assert seal(sealed, "--bump", bump)[0] == 0
    assert manifest(sealed)["version"] == version


def test_changing_a_sealed_probe_names_the_field_and_sealing_refuses_it(sealed):
    before = (sealed / MANIFEST).read_bytes()
    apply_step(
        sealed,
        {
            "set": {
                "file": "adversarial.jsonl",
                "id": "adv-have-pres-3sg-001",
                "fields": {"candidates": ["has", "hav"]},
            }
        },
    )
    code, doc = check(sealed)
    assert code == 2
    (f,) = [f for f in doc["findings"] if f["check"] == "lock-changed"]
    assert (f["probe_id"], f["line"], f["field"]) == ("adv-have-pres-3sg-001", 2, "candidates")
    assert "deprecate it and add a replacement with a new id" in f["message"]
    code, out = seal(sealed)
    assert code == 2 and "lock-changed" in out and "nothing was sealed" in out
    assert (sealed / MANIFEST).read_bytes() == before


def test_deleting_a_sealed_probe_is_refused_and_sealing_does_not_launder_it(sealed):
    apply_step(sealed, {"remove": {"file": "probes.jsonl", "id": "es-comer-inf-1sg-001"}})
    code, doc = check(sealed)
    assert code == 2 and "lock-removed" in checks(doc)
    code, out = seal(sealed)
    assert code == 2 and "deprecate instead of deleting" in out


def test_sealing_refuses_an_invalid_set(tmp_path):
    write_base(tmp_path)
    apply_step(
        tmp_path, {"set": {"file": "probes.jsonl", "id": "en-eat-pp-3sg-001", "fields": {"expected": "eats"}}}
    )
    code, out = seal(tmp_path)
    assert code == 2 and "expected-not-candidate" in out
    assert not (tmp_path / MANIFEST).exists()


def test_a_broken_manifest_is_a_finding_and_is_not_overwritten(sealed):
    (sealed / MANIFEST).write_text('{"version": "one"}', encoding="utf-8")
    code, doc = check(sealed)
    assert code == 2
    (f,) = [f for f in doc["findings"] if f["check"] == "manifest-invalid"]
    assert f["file"] == "data/eval/MANIFEST.json" and "restore it" in f["hint"]
    assert seal(sealed)[0] == 2
    assert (sealed / MANIFEST).read_text(encoding="utf-8") == '{"version": "one"}'


def test_validating_part_of_a_sealed_set_skips_the_deletion_check_and_cannot_be_sealed(sealed):
    only_core = str(sealed / "data/eval/probes.jsonl")
    code, doc = check(sealed, "--probes", only_core)
    assert checks(doc) == {"coverage"}  # no adversarial probes in this run; but no "lock-removed"
    assert {f["field"] for f in doc["findings"]} == {"category"}  # the adversarial total
    assert "manifest-partial" in checks(doc, "warnings")
    code, out = seal(sealed, "--probes", only_core)
    assert code == 2 and "manifest-partial" in out


def test_explicit_probe_files_elsewhere_use_the_manifest_beside_them(sealed, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("mine")
    for name in ("probes.jsonl", "adversarial.jsonl"):
        shutil.copy(sealed / "data/eval" / name, elsewhere / name)
    files = [str(elsewhere / "probes.jsonl"), str(elsewhere / "adversarial.jsonl")]
    code, doc = check(sealed, "--probes", *files)
    assert code == 0 and "manifest-missing" in checks(doc, "warnings")  # not the repository's manifest
    assert seal(sealed, "--probes", *files)[0] == 0
    assert json.loads((elsewhere / "MANIFEST.json").read_text("utf-8"))["files"].keys() == {
        "probes.jsonl",
        "adversarial.jsonl",
    }
    code, doc = check(sealed, "--probes", *files)
    assert code == 0 and doc["summary"]["version"] == "0.1.0"


def test_outcome_carries_the_sealed_version_and_file_facts(sealed):
    outcome = validate(load_config(sealed / "evalgate.yml"))
    assert outcome.ok
    assert outcome.probe_set["version"] == "0.1.0"
    assert outcome.probe_set["digest"] == manifest(sealed)["digest"]
    assert outcome.probe_set["files"]["data/eval/probes.jsonl"]["cases"] == len(CORE)
    assert outcome.inputs["data/eval/MANIFEST.json"]["role"] == "manifest"


def test_bump_version_and_digest_order():
    assert bump_version("0.1.9", "patch") == "0.1.10"
    assert bump_version("0.9.3", "minor") == "0.10.0"
    assert bump_version("1.2.3", "major") == "2.0.0"
    probes = [Probe.from_record(r) for r in CORE]
    assert probe_set_digest(probes) == probe_set_digest(list(reversed(probes)))
    assert probe_set_digest(probes) != probe_set_digest(probes[1:])
