"""Changes to a sealed probe set are found and located: a deleted or reformatted probe, an edited
lock entry, a probe changed since the baseline, a cell made short or a category made long."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.probeset_factory import CONFIG, cli_merged, dump_jsonl, write_base

PROBES = Path("data/eval/probes.jsonl")


def _findings(cfg: Path, *extra: str) -> tuple[int, list[dict]]:
    code, out = cli_merged("validate", "--config", str(cfg), "--format", "json", *extra)
    return code, json.loads(out)["findings"]


def _sealed(root: Path) -> Path:
    cfg = write_base(root)
    assert cli_merged("probes", "seal", "--config", str(cfg))[0] == 0
    return cfg


def test_a_deleted_probe_is_located_on_its_lock_line_in_the_manifest(tmp_path):
    cfg = _sealed(tmp_path)
    lines = (tmp_path / PROBES).read_text(encoding="utf-8").splitlines()
    gone = json.loads(lines[3])["id"]
    (tmp_path / PROBES).write_text("\n".join(lines[:3] + lines[4:]) + "\n", encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "lock-removed"]
    manifest = (tmp_path / "data/eval/MANIFEST.json").read_text(encoding="utf-8").splitlines()
    assert (f["probe_id"], f["field"]) == (gone, "id")
    assert f'"{gone}":' in manifest[f["line"] - 1] and "lock" not in manifest[f["line"] - 1]


@pytest.mark.integration
def test_a_formatting_only_change_after_sealing_is_named(tmp_path):
    edits = {
        "CRLF": lambda b: b.replace(b"\n", b"\r\n"),
        "final newline": lambda b: b.rstrip(b"\n"),
        "line ends": lambda b: b.replace(b"}\n", b"}  \n"),
    }
    for what, edit in edits.items():
        cfg = _sealed(tmp_path / what.replace(" ", "-"))
        path = cfg.parent / PROBES
        path.write_bytes(edit(path.read_bytes()))
        code, findings = _findings(cfg)
        assert code == 2, what
        [f] = findings
        assert (f["check"], f["file"], f["line"]) == ("manifest-file-changed", str(PROBES), 1), what
        assert what in f["message"] and "unchanged" in f["hint"], what
    # a real edit gets no such claim
    cfg = _sealed(tmp_path / "edit")
    path = cfg.parent / PROBES
    path.write_bytes(path.read_bytes().replace(b'"source": "hand"', b'"source": "generated"', 1))
    code, findings = _findings(cfg)
    assert code == 2 and [f["check"] for f in findings] == ["manifest-file-changed"]
    assert "formatting" not in findings[0]["message"]


def test_a_lock_entry_edited_in_the_manifest_is_not_blamed_on_the_probe(tmp_path):
    cfg = _sealed(tmp_path)
    path = tmp_path / "data/eval/MANIFEST.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["lock"]["en-go-past-1sg-001"] = "0" * 64
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = findings
    assert (f["check"], f["file"], f["probe_id"], f["field"]) == (
        "manifest-lock-edited",
        "data/eval/MANIFEST.json",
        "en-go-past-1sg-001",
        "lock",
    )
    assert '"en-go-past-1sg-001": "000' in path.read_text(encoding="utf-8").splitlines()[f["line"] - 1]
    assert "by hand" in f["message"] and "version control" in f["hint"]
    # sealing does not launder it
    assert cli_merged("probes", "seal", "--config", str(cfg))[0] == 2


def test_a_probe_changed_since_the_baseline_is_refused_even_without_a_manifest(tmp_path):
    # docs/validate.md: immutability against the baseline (or probe lock). Deleting MANIFEST.json
    # must not let a changed probe through validate (and run, before any model is loaded).
    cfg = write_base(tmp_path)
    lines = (tmp_path / PROBES).read_text(encoding="utf-8").splitlines()
    recs = [json.loads(x) for x in lines]
    from evalgate.types import Probe

    outcomes = {
        r["id"]: {"status": "scored", "content_hash": Probe.from_record(r).content_hash()} for r in recs
    }
    (tmp_path / "baselines").mkdir()
    (tmp_path / "baselines/demo.json").write_text(json.dumps({"outcomes": outcomes}), encoding="utf-8")
    assert _findings(cfg) == (0, [])  # the embedded default names baselines/demo.json
    lines[4] = json.dumps(
        {**recs[4], "prompt": recs[4]["prompt"].replace("___", "really ___")}, ensure_ascii=False
    )
    (tmp_path / PROBES).write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    assert [(f["check"], f["file"], f["line"], f["probe_id"]) for f in findings] == [
        ("lock-changed", str(PROBES), 5, recs[4]["id"])
    ]
    assert "baselines/demo.json" in findings[0]["message"]


def test_a_file_changed_after_sealing_is_located_at_its_first_new_or_changed_probe(tmp_path):
    cfg = _sealed(tmp_path / "new")
    with (tmp_path / "new" / PROBES).open("ab") as fh:
        rec = json.loads((tmp_path / "new" / PROBES).read_text(encoding="utf-8").splitlines()[0])
        fh.write(dump_jsonl([{**rec, "id": "added-001", "prompt": "Every week Maria ___ at home."}]))
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "manifest-file-changed"]
    assert (f["file"], f["line"], f["probe_id"], f["field"]) == (str(PROBES), 9, "added-001", "id")
    assert "new since the seal" in f["message"]

    cfg = _sealed(tmp_path / "changed")
    lines = (tmp_path / "changed" / PROBES).read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[2])
    lines[2] = json.dumps({**rec, "label": "ambiguous"}, ensure_ascii=False)
    (tmp_path / "changed" / PROBES).write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, findings = _findings(cfg)
    [f] = [f for f in findings if f["check"] == "manifest-file-changed"]
    assert (f["line"], f["probe_id"], f["field"]) == (3, rec["id"], "label")


def test_an_adversarial_category_over_its_maximum_is_located_at_the_probe_past_it(tmp_path):
    config = json.loads(json.dumps(CONFIG))
    config["coverage"]["adversarial_per_category_max"] = 1
    cfg = write_base(tmp_path, config)
    path = tmp_path / "data/eval/adversarial.jsonl"
    rec = json.loads(path.read_text(encoding="utf-8").splitlines()[0])  # PAST-IRREG
    with path.open("ab") as fh:
        fh.write(dump_jsonl([{**rec, "id": "adv-extra", "prompt": "Last year he ___ to Rome."}]))
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "coverage"]
    assert (f["file"], f["line"], f["probe_id"], f["field"]) == (
        "data/eval/adversarial.jsonl",
        4,
        "adv-extra",
        "reason_code",
    )
    assert "1 over" in f["message"]


def test_a_cell_made_short_by_deprecating_is_located_at_a_deprecated_probe(tmp_path):
    config = json.loads(json.dumps(CONFIG))
    config["coverage"]["per_tense"] = 1
    cfg = write_base(tmp_path, config)
    lines = (tmp_path / PROBES).read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[2])  # the only past_participle core probe
    lines[2] = json.dumps({**rec, "deprecated": True}, ensure_ascii=False)
    (tmp_path / PROBES).write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "coverage" and f["field"] == "tense"]
    assert (f["file"], f["line"], f["probe_id"]) == (str(PROBES), 3, rec["id"])
    assert "deprecated" in f["message"]
