"""Bounded work on hostile sizes, each configured file once, encodings detected (real files)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from helpers.probeset_factory import CONFIG, CORE, TRAIN, cli_merged, dump_jsonl, write_base

PROBES = Path("data/eval/probes.jsonl")
TRAIN_JSONL = Path("data/corpus/train.jsonl")


def _findings(cfg: Path) -> tuple[int, list[dict]]:
    code, out = cli_merged("validate", "--config", str(cfg), "--format", "json")
    return code, json.loads(out)["findings"]


def test_a_huge_prompt_is_refused_quickly(tmp_path):
    cfg = write_base(tmp_path)
    prompts = [
        "a" * 200_000 + " ___ .",  # a word run before the blank (the glued-blank check)
        "Ayer yo" + " " * 200_000 + "___ arroz.",  # a whitespace run before the blank
        "x" * 200_000,  # no blank at all (the look-alike scan)
    ]
    recs = [{**CORE[0], "id": f"huge-{i}", "prompt": p} for i, p in enumerate(prompts)]
    with (tmp_path / PROBES).open("ab") as fh:
        fh.write(dump_jsonl(recs))
    start = time.perf_counter()
    code, findings = _findings(cfg)
    assert time.perf_counter() - start < 20  # was over a minute: quadratic regexes
    assert code == 2
    for i in range(3):
        mine = [f for f in findings if f["probe_id"] == f"huge-{i}"]
        assert any(f["field"] == "prompt" and "2000" in f["message"] for f in mine)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_a_probe_file_that_is_a_device_is_refused_by_type(tmp_path, device):
    cfg = write_base(tmp_path)
    (tmp_path / PROBES).unlink()
    (tmp_path / PROBES).symlink_to(device)
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if "character device" in f["message"]]
    assert f["check"] == "file-missing" and f["file"].endswith(str(PROBES))


def test_a_probe_file_that_is_a_fifo_is_refused_without_waiting(tmp_path):
    cfg = write_base(tmp_path)
    (tmp_path / PROBES).unlink()
    os.mkfifo(tmp_path / PROBES)  # no writer: reading it would block forever
    code, findings = _findings(cfg)
    assert code == 2
    assert any(f["file"] == str(PROBES) and "FIFO" in f["message"] for f in findings)


def test_a_probe_file_over_the_byte_cap_is_not_read(tmp_path, monkeypatch):
    from evalgate.edges import input_files

    monkeypatch.setitem(input_files.BYTE_CAPS, "probes", 1000)
    cfg = write_base(tmp_path)
    code, findings = _findings(cfg)
    assert code == 2
    assert any(f["file"] == str(PROBES) and "larger than" in f["message"] for f in findings)


def test_two_configured_names_for_one_file_are_refused(tmp_path):
    cfg = write_base(tmp_path)
    adv = tmp_path / "data/eval/adversarial.jsonl"
    adv.unlink()
    adv.symlink_to("probes.jsonl")  # replaced by a symlink to another configured file
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "file-twice"]
    assert f["file"] == "data/eval/adversarial.jsonl" and "data/eval/probes.jsonl" in f["message"]


def test_a_probe_file_listed_twice_is_refused(tmp_path):
    cfg = write_base(tmp_path, {**CONFIG, "probes": [*CONFIG["probes"], "data/eval/probes.jsonl"]})
    code, findings = _findings(cfg)
    assert code == 2 and [f["check"] for f in findings if f["check"] == "file-twice"] == ["file-twice"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])  # utf-16 writes a BOM
def test_a_utf16_training_txt_is_named_not_read_as_nul_text(tmp_path, encoding):
    cfg = write_base(tmp_path, {**CONFIG, "train": ["data/corpus/train.txt"]})
    (tmp_path / "data/corpus/train.txt").write_bytes(
        "\n".join([*TRAIN, "Every day Maria works at the office."]).encode(encoding)
    )
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["file"] == "data/corpus/train.txt"]
    assert f["check"] == "corpus-encoding" and "UTF-16, save as UTF-8" in f["message"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le"])
def test_a_utf16_probe_file_is_named_not_invalid_json(tmp_path, encoding):
    cfg = write_base(tmp_path)
    (tmp_path / PROBES).write_bytes(dump_jsonl(CORE).decode("utf-8").encode(encoding))
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["file"] == str(PROBES)]
    assert f["check"] == "jsonl-encoding" and "UTF-16, save as UTF-8" in f["message"]


def test_a_utf8_bom_in_a_training_jsonl_is_accepted_and_read(tmp_path):
    cfg = write_base(tmp_path)
    lines = [*TRAIN, "Every day Maria works at the office."]
    (tmp_path / TRAIN_JSONL).write_bytes(b"\xef\xbb\xbf" + dump_jsonl([{"text": t} for t in lines]))
    code, findings = _findings(cfg)
    assert code == 2
    assert [f["check"] for f in findings] == ["leak-exact"]  # the leak, and no BOM complaint
    (tmp_path / TRAIN_JSONL).write_bytes(b"\xef\xbb\xbf" + dump_jsonl([{"text": t} for t in TRAIN]))
    assert _findings(cfg) == (0, [])
