"""A `gate.cluster` field too coarse for the gate to ever fail (issue 25 §4, first bullet).

With G clusters no sign-flip p-value is below 2^-G, and a slice turns a passing gate into a failing
one only at the first Holm step, alpha / (gated slices): `gate.cluster: language` (2 clusters) or
`tense` (5) let the demo go from 97.7% to 2.3% with exit 0. Now a field that leaves no gated slice
enough clusters is refused (exit 2) before any model is loaded, saying how many a slice needs; a
slice that alone lacks them is inconclusive with that reason when it shows a drop (docs/gate.md,
"Clustered flips" and "Verdict").
"""

from __future__ import annotations

import json
import shutil

import pytest
from helpers.factories import make_entry, make_results
from helpers.gate_inputs import baseline_of, write_json
from helpers.paths import REPO, allow_shipped_data

from evalgate.cli import main


def _demo_config(tmp_path, monkeypatch, field: str):
    allow_shipped_data(monkeypatch)  # data/ links to the repository's
    text = (REPO / "evalgate.yml").read_text(encoding="utf-8")
    cfg = tmp_path / "evalgate.yml"
    cfg.write_text(text.replace("gate:\n", f"gate:\n  cluster: {field}\n", 1), encoding="utf-8")
    (tmp_path / "data").symlink_to(REPO / "data")
    shutil.copytree(REPO / "baselines", tmp_path / "baselines")
    return cfg


@pytest.mark.integration
@pytest.mark.parametrize(("field", "most"), [("language", 2), ("tense", 5)])
def test_a_cluster_field_no_gated_slice_can_fail_on_is_refused_before_scoring(
    tmp_path, monkeypatch, capsys, field, most
):
    import evalgate.scorers.loaders as loaders

    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setattr(loaders, "load_scorer", lambda *a, **k: pytest.fail("a model was loaded"))
    cfg = _demo_config(tmp_path, monkeypatch, field)
    out = tmp_path / "out"
    regressed = str(REPO / "data/checkpoints/demo-regressed")
    args = ["--config", str(cfg), "--approve-gate-changes", "--checkpoint", regressed, "--out", str(out)]
    code = main(args)
    assert code == 2
    err = capsys.readouterr().err
    assert f"gate.cluster: {field} leaves every gated slice too few clusters to ever fail" in err
    assert f"the most any of the 15 gated slices has is {most}" in err
    assert "a slice needs at least 9 clusters" in err  # 2^-9 < 0.05 / 15 <= 2^-8
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["verdict"] == "refused"


def _verbs(tense_of, right) -> list[dict]:
    """40 verbs x 15 forms; `tense_of(v)` the tense of verb v, `right(v, i)` whether form i is right."""
    return [
        make_entry(
            f"v{v:02d}-{i:02d}",
            right(v, i),
            language=("en", "es")[v % 2],
            verb=f"verb{v}",
            tense=tense_of(v),
        )
        for v in range(40)
        for i in range(15)
    ]


@pytest.mark.integration
def test_a_slice_with_too_few_clusters_and_a_drop_is_inconclusive_naming_the_clusters_it_needs(
    tmp_path, capsys
):
    # tense:future holds 3 verbs (45 probes), all right in the baseline and all wrong now; every
    # other slice holds 37 or more verbs and barely moves
    future = lambda v: "future" if v >= 37 else "present_simple"  # noqa: E731
    old = _verbs(future, lambda v, i: i % 5 != 0)
    new = _verbs(future, lambda v, i: i % 5 != 0 and v < 37)
    results = write_json(tmp_path / "results.json", make_results(new))
    base = write_json(tmp_path / "base.json", baseline_of(old))
    cfg = tmp_path / "gate.yml"
    cfg.write_text(
        (REPO / "evalgate.yml").read_text(encoding="utf-8").replace("gate:\n", "gate:\n  cluster: verb\n", 1),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    code = main(["compare", "--config", str(cfg), "--approve-gate-changes", results, base, "--out", str(out)])
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    row = doc["comparison"]["slices"]["tense:future"]
    level = doc["comparison"]["mde_level"]
    assert row["gated"] and row["n_clusters"] == 3 and row["mde"] is None and row["underpowered"]
    assert row["clusters_needed"] == next(g for g in range(1, 17) if 2.0**-g < level)
    assert row["status"] == "inconclusive"
    entry = next(e for e in doc["comparison"]["inconclusive"] if e["slice"] == "tense:future")
    assert entry["why"] == "too_few_clusters" and entry["n_clusters"] == 3
    assert entry["clusters_needed"] == row["clusters_needed"] and entry["level"] == level
    reason = next(r for r in doc["reasons"] if r.startswith("tense:future"))
    assert "3 verb clusters give no p-value below 0.125" in reason
    assert f"decidable with {row['clusters_needed']} clusters" in reason
    # the other slices have the clusters to fail: the gate is not refused, and it does not pass
    assert doc["verdict"] == "inconclusive" and code == 0
    report = (out / "REPORT.md").read_text(encoding="utf-8")
    assert f"tense:future (-80.0 pts on 45; 3 clusters, needs {row['clusters_needed']})" in report
    assert f"3 clusters, it needs {row['clusters_needed']} to ever fail" in report


@pytest.mark.integration
def test_compare_refuses_a_cluster_field_that_leaves_the_gate_blind(tmp_path, capsys):
    # `evalgate compare` (and `merge`) decide on the results: the same refusal, from the comparison
    good = _verbs(lambda v: "present_simple", lambda v, i: True)
    bad = _verbs(lambda v: "present_simple", lambda v, i: i == 0)  # 100% -> 6.7%
    results = write_json(tmp_path / "results.json", make_results(bad))
    base = write_json(tmp_path / "base.json", baseline_of(good))
    cfg = tmp_path / "gate.yml"
    cfg.write_text(
        (REPO / "evalgate.yml")
        .read_text(encoding="utf-8")
        .replace("gate:\n", "gate:\n  cluster: language\n", 1),
        encoding="utf-8",
    )
    code = main(
        [
            "compare",
            "--config",
            str(cfg),
            "--approve-gate-changes",
            results,
            base,
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2
    assert (
        "gate.cluster: language leaves every gated slice too few clusters to ever fail"
        in capsys.readouterr().err
    )
