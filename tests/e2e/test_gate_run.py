"""The gate end to end through the real CLI, on the shipped demo (issue 4, point 7).

Real checkpoints, real probe files, real outputs: `evalgate` passes on the demo, fails on the
regressed checkpoint naming the slices, refuses a leaking probe set before any model is loaded.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.golden import differences, read_golden
from helpers.paths import REPO, allow_shipped_data

from evalgate.cli import main
from evalgate.gate.results import validate_results

# The demo's results.json as the release before suites wrote it (this machine's CPU); compared
# exactly but for the float32 noise another CPU adds (tests/helpers/golden.py).
DEMO_RESULTS = REPO / "tests" / "golden" / "demo.results.json.gz"
OUTPUTS = ("results.json", "per_slice.csv", "per_slice.png", "REPORT.md", "badge.svg", "badge.json")


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def _results(out: Path) -> dict:
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    validate_results(doc, "results.json")
    return doc


@pytest.mark.slow
def test_plain_evalgate_gates_the_demo_and_passes(demo_runs):
    code, tmp_path = demo_runs()
    assert code == 0
    for name in OUTPUTS:
        assert (tmp_path / name).stat().st_size > 0, name
    res = _results(tmp_path)
    assert res["verdict"] == "pass" and res["reasons"] == []
    # A configuration without `suites:` reads exactly as before suites existed (docs/suites.md):
    # the demo's results.json keeps its keys, order and values. Change the golden file only with a
    # deliberate, recorded change.
    assert differences(res, read_golden(DEMO_RESULTS)) == []
    assert res["comparison"]["baseline"] == "baselines/demo.json"
    assert all(row["status"] in ("ok", "too_small") for row in res["comparison"]["slices"].values())
    assert res["slices"]["overall"]["accuracy"] >= 0.8
    # The perplexity is gated by the paired per-sentence betting test against the shipped baseline.
    ppl = res["comparison"]["perplexity"]
    assert ppl["test"] == "betting-nll-ratio" and ppl["status"] == "ok" and ppl["p_value"] == 1.0
    assert (
        len(res["perplexity"]["sentence_nll"])
        == ppl["n_sentences"]
        == len(res["perplexity"]["sentence_tokens"])
    )
    # Every input is hashed: probes, template, test set, config, baseline, checkpoint files.
    roles = {rec.get("role") for rec in res["inputs"].values()}
    assert {"probes", "template", "test", "config", "baseline", "checkpoint", "train"} <= roles
    assert "data/checkpoints/demo/model.safetensors" in res["inputs"]
    report = (tmp_path / "REPORT.md").read_text(encoding="utf-8")
    assert report.startswith("## ✅") and "<!-- evalgate:report" in report
    badge = json.loads((tmp_path / "badge.json").read_text(encoding="utf-8"))
    assert badge["schemaVersion"] == 1 and badge["message"].startswith("pass")


@pytest.mark.slow
def test_regressed_checkpoint_fails_naming_the_regressed_slices(demo_runs):
    code, tmp_path = demo_runs("--checkpoint", "data/checkpoints/demo-regressed")
    assert code == 1
    res = _results(tmp_path)
    assert res["verdict"] == "fail"
    status = {k: v["status"] for k, v in res["comparison"]["slices"].items()}
    for regressed in ("regularity:irregular", "tense:past_simple", "tense:past_participle"):
        assert status[regressed] == "regressed", regressed
        assert any(reason.startswith(regressed) for reason in res["reasons"])
    # The regression is confined: what the regressed model still saw is not flagged.
    for kept in ("regularity:regular", "tense:future", "tense:present_simple", "tense:infinitive"):
        assert status[kept] == "ok", kept
    assert res["comparison"]["flipped"]["right_to_wrong"]
    # Its perplexity rose about x1.18: significantly above the x1.10 tolerance over 2,000 sentences.
    ppl = res["comparison"]["perplexity"]
    assert ppl["status"] == "regressed" and ppl["p_value"] < 1e-6 and ppl["p_adjusted"] < 1e-5
    assert any(r.startswith("perplexity rose") and "paired test" in r for r in res["reasons"])
    report = (tmp_path / "REPORT.md").read_text(encoding="utf-8")
    assert report.startswith("## ❌") and "tense:past\\_simple" in report


@pytest.mark.slow
def test_same_command_twice_gives_byte_identical_results(tmp_path):
    for out in ("a", "b"):
        assert main(["--baseline", "none", "--out", str(tmp_path / out)]) == 0
    for name in ("results.json", "REPORT.md", "per_slice.csv", "per_slice.png", "badge.svg"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    res = _results(tmp_path / "a")
    assert res["comparison"] is None and res["verdict"] == "pass"


def _leaking_probe_files(tmp_path: Path) -> list[str]:
    """The shipped probe files plus one core probe copied from a training sentence."""
    train = json.loads((REPO / "data/corpus/train.jsonl").read_text(encoding="utf-8").splitlines()[2])
    assert train["text"] == "I have just studied music."
    leak = {
        "id": "probe-leak-001",
        "language": "en",
        "verb": "study",
        "regularity": "regular",
        "tense": "past_participle",
        "person": "1sg",
        "prompt": "I have just ___ music.",
        "candidates": ["studied", "study", "studies"],
        "expected": "studied",
        "label": "correct",
        "category": "core",
    }
    files = []
    for name in ("probes.jsonl", "adversarial.jsonl", "ordinal.jsonl"):
        target = tmp_path / name
        shutil.copy(REPO / "data/eval" / name, target)
        files.append(str(target))
    with open(files[0], "a", encoding="utf-8") as fh:
        fh.write(json.dumps(leak, ensure_ascii=False) + "\n")
    return files


def test_leaking_probe_set_is_refused_before_any_model_is_loaded(tmp_path, monkeypatch, capsys):
    import evalgate.scorers.loaders as loaders

    def must_not_load(*args, **kwargs):
        raise AssertionError("a model was loaded for a refused probe set")

    monkeypatch.setattr(loaders, "load_scorer", must_not_load)
    files = _leaking_probe_files(tmp_path)
    code = main(["--probes", *files, "--out", str(tmp_path / "out")])
    assert code == 2
    err = capsys.readouterr().err
    assert "probe-leak-001" in err and "data/corpus/train.jsonl:3" in err
    res = _results(tmp_path / "out")
    assert res["verdict"] == "refused" and res["probes"] == []
    assert any(
        f["check"].startswith("leak") and f.get("probe_id") == "probe-leak-001" for f in res["findings"]
    )
    report = (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8")
    assert report.startswith("## ⛔") and "probe-leak-001" in report


def test_compare_gates_two_existing_results_without_a_model(tmp_path, monkeypatch, demo_runs):
    code, run = demo_runs("--checkpoint", "data/checkpoints/demo-regressed", "--baseline", "none")
    assert code == 0
    import evalgate.scorers.loaders as loaders

    monkeypatch.setattr(loaders, "load_scorer", lambda *a, **k: pytest.fail("compare loaded a model"))
    results = str(run / "results.json")
    assert main(["compare", results, "baselines/demo.json", "--out", str(tmp_path / "c")]) == 1
    assert _results(tmp_path / "c")["verdict"] == "fail"
    # A results.json is accepted as the baseline too: a run against itself passes.
    assert main(["compare", results, results, "--out", str(tmp_path / "same")]) == 0


@pytest.mark.slow
def test_incomparable_baseline_is_refused_naming_the_difference(tmp_path, capsys, monkeypatch):
    cfg = tmp_path / "evalgate.yml"
    text = (
        (REPO / "evalgate.yml")
        .read_text(encoding="utf-8")
        .replace("normalization: tokens", "normalization: chars")
    )
    # Same repository layout, one measuring difference: paths resolve against the repo root.
    cfg.write_text(text, encoding="utf-8")
    (tmp_path / "data").symlink_to(REPO / "data")
    shutil.copytree(REPO / "baselines", tmp_path / "baselines")
    allow_shipped_data(monkeypatch)  # data/ links to the repository's
    code = main(["--config", str(cfg), "--out", str(tmp_path / "out")])
    assert code == 2
    err = capsys.readouterr().err
    assert "normalization" in err and "tokens" in err and "chars" in err
    assert _results(tmp_path / "out")["verdict"] == "refused"


@pytest.mark.slow
def test_baseline_update_writes_the_same_bytes_twice(tmp_path, monkeypatch):
    (tmp_path / "data").symlink_to(REPO / "data")
    allow_shipped_data(monkeypatch)  # data/ links to the repository's
    shutil.copy(REPO / "evalgate.yml", tmp_path / "evalgate.yml")
    args = [
        "baseline",
        "update",
        "--config",
        str(tmp_path / "evalgate.yml"),
        "--name",
        "demo",
        "--commit",
        "0" * 40,
    ]
    assert main(args) == 0
    first = (tmp_path / "baselines" / "demo.json").read_bytes()
    assert main(args) == 0
    assert (tmp_path / "baselines" / "demo.json").read_bytes() == first
    doc = json.loads(first)
    assert doc["provenance"] == {"git_commit": "0" * 40, "pr_number": None}
    assert doc["outcomes"]["probe-en-write-pp-1sg-001"]["content_hash"]


def test_unexpected_error_exits_3_with_a_short_message(tmp_path, monkeypatch, capsys):
    import evalgate.gate.slices as slices

    def boom(*args, **kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(slices, "aggregate", boom)
    assert main(["--baseline", "none", "--out", str(tmp_path)]) == 3
    err = capsys.readouterr().err
    assert "unexpected error" in err and "simulated bug" in err and "Traceback" not in err


def test_missing_checkpoint_is_refused_with_exit_2(tmp_path, capsys):
    assert main(["--checkpoint", str(tmp_path / "nope"), "--out", str(tmp_path / "out")]) == 2
    assert "nope" in capsys.readouterr().err
    assert _results(tmp_path / "out")["verdict"] == "refused"
