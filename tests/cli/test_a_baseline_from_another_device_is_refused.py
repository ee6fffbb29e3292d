"""The device a run scored on is part of its comparability manifest (issue 29, section 3;
docs/scoring.md, "Device"): a baseline measured on one device is refused on another (exit 2), the
message naming both devices and the command that renews the baseline; a CPU run (no `device` key,
as every run before it) still gates against a CPU baseline; `scoring.device` is validated."""

from __future__ import annotations

import gzip
import json

import pytest
from helpers.paths import REPO

from evalgate.config import load_config

pytestmark = pytest.mark.usefixtures("in_repo")
GOLDEN = REPO / "tests" / "golden" / "demo.results.json.gz"


def _cpu_run(tmp_path):
    path = tmp_path / "cpu.json"
    path.write_bytes(gzip.decompress(GOLDEN.read_bytes()))
    assert "device" not in json.loads(path.read_text("utf-8"))["manifest"]
    return path


def _on_cuda(src, dest):
    doc = json.loads(src.read_text("utf-8"))
    doc["manifest"]["device"] = "cuda"
    dest.write_text(json.dumps(doc), encoding="utf-8")
    return dest


def test_a_cpu_run_still_gates_against_the_cpu_baseline(tmp_path, cli):
    done = cli("compare", _cpu_run(tmp_path), "baselines/demo.json", "--out", tmp_path / "out")
    assert done.code == 0, done.out + done.err


def test_a_cuda_baseline_is_refused_on_a_cpu_run_with_the_command_that_renews_it(tmp_path, cli):
    baseline = _on_cuda(REPO / "baselines" / "demo.json", tmp_path / "cuda-baseline.json")
    done = cli("compare", _cpu_run(tmp_path), baseline, "--out", tmp_path / "out")
    said = done.out + done.err
    assert done.code == 2, said
    assert "measured on cuda, this run on cpu" in said and "evalgate baseline update" in said, said
    assert json.loads((tmp_path / "out" / "results.json").read_text("utf-8"))["verdict"] == "refused"


def test_a_cuda_run_is_refused_against_a_cpu_baseline(tmp_path, cli):
    run = _on_cuda(_cpu_run(tmp_path), tmp_path / "gpu.json")
    done = cli("compare", run, "baselines/demo.json", "--out", tmp_path / "out")
    said = done.out + done.err
    assert done.code == 2 and "measured on cpu, this run on cuda" in said, said
    assert "scoring.device: cuda" in said and "evalgate baseline update" in said, said


def _config(tmp_path, device_line: str):
    text = (REPO / "evalgate.yml").read_text("utf-8")
    assert "\nscoring:\n" in text
    text = text.replace("\nscoring:\n", f"\nscoring:\n{device_line}", 1)
    path = tmp_path / "evalgate.yml"
    path.write_text(text, encoding="utf-8")
    for name in ("data", "baselines", "evalgate"):
        if (REPO / name).exists() and not (tmp_path / name).exists():
            (tmp_path / name).symlink_to(REPO / name)
    return path


def test_device_cpu_pins_as_a_configuration_without_the_key(tmp_path):
    plain = load_config(REPO / "evalgate.yml").pin()
    cpu = load_config(_config(tmp_path, "  device: cpu\n")).pin()
    assert cpu["scoring"] == plain["scoring"] and "device" not in cpu["scoring"]
    (tmp_path / "cuda").mkdir()
    cuda = load_config(_config(tmp_path / "cuda", "  device: cuda\n"))
    assert cuda.pin()["scoring"]["device"] == "cuda" and cuda.scoring.device == "cuda"


def test_an_unknown_device_is_refused_naming_the_file_and_the_key(tmp_path, cli):
    config = _config(tmp_path, "  device: gpu\n")
    done = cli("validate", "--config", config)
    said = done.out + done.err
    assert done.code == 2, said
    assert "evalgate.yml" in said and "device" in said and "gpu" in said, said
