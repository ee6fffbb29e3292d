from __future__ import annotations

import pytest
from helpers.paths import REPO

from evalgate.config import default_config_text, load_config
from evalgate.errors import ConfigError


def test_repository_config_is_the_embedded_default():
    assert (REPO / "evalgate.yml").read_text(encoding="utf-8") == default_config_text()


def test_defaults_load_with_seed_thresholds(tmp_path):
    cfg = load_config(cwd=tmp_path)
    assert cfg.coverage.per_language == 30 and cfg.coverage.irregular_verb_min == 2
    assert cfg.leaks.window == 5 and cfg.gate.alpha == 0.05
    assert cfg.scoring.method == "candidate" and cfg.scoring.normalization == "tokens"


def test_unknown_key_is_refused_with_its_name(tmp_path):
    (tmp_path / "evalgate.yml").write_text("gate:\n  alpah: 0.01\nprobez: []\n", encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_config(cwd=tmp_path)
    assert "alpah" in exc.value.message and "probez" in exc.value.message


def test_bad_value_is_refused(tmp_path):
    (tmp_path / "evalgate.yml").write_text("gate:\n  rule: bonferroni\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="bonferroni"):
        load_config(cwd=tmp_path)


def test_a_nan_or_infinite_threshold_is_refused_naming_each(tmp_path):
    # NaN passes every minimum and maximum of the schema, and a NaN tolerance, floor or alpha
    # never fails anything: a pull request could switch its gate off with `.nan`
    text = (
        "gate:\n  alpha: .nan\n  min_accuracy: {overall: .nan}\n"
        "suites:\n  q:\n    kind: multiple-choice\n    probes: [q.jsonl]\n    gate: {tolerance: -.inf}\n"
    )
    (tmp_path / "evalgate.yml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_config(cwd=tmp_path)
    for where in ("gate.alpha", "gate.min_accuracy.overall", "suites.q.gate.tolerance"):
        assert f"evalgate.yml: {where}: must be a finite number" in exc.value.message


def test_flags_override_file_and_none_baseline(tmp_path):
    (tmp_path / "evalgate.yml").write_text("out: here\n", encoding="utf-8")
    cfg = load_config(cwd=tmp_path, overrides={"baseline": "none", "out": None})
    assert cfg.baseline is None and cfg.out == "here" and cfg.root == tmp_path


def test_pin_is_plain_json(tmp_path):
    import json

    pin = load_config(cwd=tmp_path).pin()
    assert json.loads(json.dumps(pin)) == pin
    assert pin["gate"]["slices"][0] == "overall"


def test_clusters_and_westfall_young_are_refused_together(tmp_path):
    # Westfall-Young's joint draws flip single probes, the independence clustering gives up
    text = "gate:\n  cluster: verb\n  multiplicity: westfall-young\n"
    (tmp_path / "evalgate.yml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"cannot go with gate\.multiplicity: westfall-young"):
        load_config(cwd=tmp_path)
    (tmp_path / "evalgate.yml").write_text(text.replace("westfall-young", "holm"), encoding="utf-8")
    assert load_config(cwd=tmp_path).gate.cluster == "verb"
