"""The manifest is strict JSON, and the baseline remembers the sealed set without it."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.probeset_factory import ADVERSARIAL, CORE, cli_merged, dump_jsonl, write_base

from evalgate.types import Probe

PROBES = Path("data/eval/probes.jsonl")
MANIFEST = Path("data/eval/MANIFEST.json")


def _findings(cfg: Path) -> tuple[int, list[dict]]:
    code, out = cli_merged("validate", "--config", str(cfg), "--format", "json")
    return code, json.loads(out)["findings"]


def _sealed(root: Path) -> Path:
    cfg = write_base(root)
    code, out = cli_merged("probes", "seal", "--config", str(cfg))
    assert code == 0, out
    return cfg


def _baseline(root: Path, version: str = "0.1.0") -> None:
    outcomes = {
        r["id"]: {"status": "scored", "content_hash": Probe.from_record(r).content_hash()}
        for r in [*CORE, *ADVERSARIAL]
    }
    doc = {"outcomes": outcomes, "probe_set": {"version": version}}
    (root / "baselines").mkdir(exist_ok=True)
    (root / "baselines/demo.json").write_text(json.dumps(doc), encoding="utf-8")


def test_a_lock_entry_given_twice_in_the_manifest_is_refused(tmp_path):
    cfg = _sealed(tmp_path)
    text = (tmp_path / MANIFEST).read_text(encoding="utf-8")
    pid = CORE[0]["id"]
    real = json.loads(text)["lock"][pid]
    forged = "0" * 64
    entry = f'"{pid}": "{real}"'
    assert entry in text
    (tmp_path / MANIFEST).write_text(text.replace(entry, f'{entry}, "{pid}": "{forged}"'), encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "manifest-invalid"]
    assert f'"{pid}" appears twice' in f["message"]


def test_hand_edited_case_counts_are_refused(tmp_path):
    cfg = _sealed(tmp_path)
    doc = json.loads((tmp_path / MANIFEST).read_text(encoding="utf-8"))
    doc["files"]["probes.jsonl"]["cases"] += 5
    (tmp_path / MANIFEST).write_text(json.dumps(doc, indent=2), encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "manifest-cases"]
    assert (f["file"], f["field"]) == (str(PROBES), "cases")

    doc["files"]["probes.jsonl"]["cases"] -= 5
    doc["n_probes"] = 99
    (tmp_path / MANIFEST).write_text(json.dumps(doc, indent=2), encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2 and [f["field"] for f in findings if f["check"] == "manifest-cases"] == ["n_probes"]


def test_a_version_set_back_below_the_baselines_is_refused(tmp_path):
    cfg = _sealed(tmp_path)
    _baseline(tmp_path, version="0.3.0")  # the baseline was scored on a later seal
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "manifest-version-back"]
    assert "0.1.0" in f["message"] and "0.3.0" in f["message"] and f["field"] == "version"
    _baseline(tmp_path, version="0.1.0")
    assert _findings(cfg) == (0, [])


def test_a_probe_deleted_with_its_lock_line_is_refused_against_the_baseline(tmp_path):
    cfg = _sealed(tmp_path)
    _baseline(tmp_path)
    assert _findings(cfg) == (0, [])
    gone = CORE[1]["id"]
    (tmp_path / PROBES).write_bytes(dump_jsonl([r for r in CORE if r["id"] != gone]))
    # the manifest deleted (to be re-sealed from scratch): it no longer knows the probe
    (tmp_path / MANIFEST).unlink()
    code, out = cli_merged("probes", "seal", "--config", str(cfg))
    # Sealed with a warning (a maintainer may approve the gate change, docs/approval.md); the
    # re-seal does not launder it: validate (and an unapproved run) still refuse the deletion.
    assert code == 0 and "deleted-since-baseline" in out and "gate change" in out
    code, findings = _findings(cfg)
    assert code == 2
    assert [(f["check"], f.get("probe_id")) for f in findings] == [("deleted-since-baseline", gone)]
    assert "baselines/demo.json" in findings[0]["message"]


def test_a_deprecated_probe_is_not_a_deletion(tmp_path):
    cfg = write_base(tmp_path)
    _baseline(tmp_path)
    recs = [{**r, "deprecated": True} if r["id"] == CORE[2]["id"] else r for r in CORE]
    (tmp_path / PROBES).write_bytes(dump_jsonl(recs))
    _, findings = _findings(cfg)
    assert not [f for f in findings if f["check"] == "deleted-since-baseline"]
