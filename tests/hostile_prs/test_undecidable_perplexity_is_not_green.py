"""A perplexity increase the gate could not decide is never a green check (issue 25; docs/gate.md,
"Verdict", `perplexity_undecided`).

Driven through `evalgate compare` on real results and baseline files: the same gate code `run`
and the Action end in, and the report, comment and console rendered from what it wrote.
"""

from __future__ import annotations

import json
import math

from helpers.factories import make_entry, make_results
from helpers.gate_inputs import write_json
from helpers.paths import REPO

from evalgate.gate.baseline import baseline_from_results
from evalgate.gate.perplexity_test import sentence_record
from evalgate.gate.results import round_floats
from evalgate.report.comment import render_comment


def _entries() -> list[dict]:
    # rounded as `run` writes them, so that the files are honest (no results-recomputed warning)
    return round_floats(
        [make_entry(f"p-{i:03d}", i % 5 != 0, language=("en", "es")[i % 2]) for i in range(200)]
    )


def _with_sentences(doc: dict, nll: list[float], tokens: list[int]) -> dict:
    doc["perplexity"].update(sentence_record(nll, tokens))
    doc["perplexity"]["value"] = math.exp(sum(nll) / sum(tokens))
    return doc


def _files(tmp_path, ratio: float, sentences: int = 12) -> tuple[str, str]:
    """Accuracy unchanged; the checkpoint's perplexity `ratio` times the baseline's over a small
    test set whose sentences move by ratio x exp(+-0.6) per token, alternately."""
    tok = [10] * sentences
    old = [30.0] * sentences
    new = [
        o + n * (math.log(ratio) + (0.6 if i % 2 else -0.6))
        for i, (o, n) in enumerate(zip(old, tok, strict=True))
    ]
    results = _with_sentences(make_results(_entries()), new, tok)
    base = baseline_from_results(
        _with_sentences(make_results(_entries()), old, tok), "demo", {"git_commit": None, "pr_number": None}
    )
    return write_json(tmp_path / "results.json", results), write_json(tmp_path / "base.json", base)


def test_a_checkpoint_raising_perplexity_past_the_limit_on_a_small_test_set_is_not_a_pass(tmp_path, cli):
    """A PR's checkpoint raises perplexity x1.14 (limit x1.10) where the test set is too small and
    noisy for the betting test to decide: it must not read "pass" and ✅ with perplexity "ok"."""
    results, base = _files(tmp_path, 1.14)
    got = cli("compare", results, base, "--out", tmp_path / "out")
    assert got.code == 0, got.err  # inconclusive exits 0 under the default gate.inconclusive: pass
    out = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert out["verdict"] == "inconclusive"
    ppl = out["comparison"]["perplexity"]
    assert ppl["test"] == "betting-nll-ratio" and ppl["ratio"] > 1.10 and ppl["status"] == "inconclusive"
    (entry,) = out["comparison"]["inconclusive"]
    assert entry["why"] == "perplexity_undecided" and entry["n"] == 12
    assert len(out["reasons"]) == 1 and "perplexity rose" in out["reasons"][0]
    assert "a larger perplexity test set" in out["reasons"][0]
    report = (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8")
    head = report.split("\n\n", 1)[0]
    assert "⚠️ evalgate: inconclusive" in head and "perplexity (×1.140 on 12 sentences" in head
    comment = render_comment(out)
    assert "inconclusive" in comment.splitlines()[0] and "perplexity (×1.140 on 12 sentences" in comment
    assert "✅" not in comment.split("\n\n", 1)[0]
    assert "verdict INCONCLUSIVE" in got.out and "perplexity rose" in got.out
    assert "results-recomputed" not in got.err  # honest files: the verdict is the gate's own


def test_the_same_undecided_perplexity_fails_where_the_base_says_inconclusive_fails(tmp_path, cli):
    """gate.inconclusive: fail (and --fail-on-inconclusive) turn the undecided perplexity into exit 1."""
    results, base = _files(tmp_path, 1.14)
    cfg = tmp_path / "gate.yml"
    text = (REPO / "evalgate.yml").read_text(encoding="utf-8")
    cfg.write_text(text.replace("inconclusive: pass", "inconclusive: fail", 1), encoding="utf-8")
    got = cli("compare", "--config", cfg, "--approve-gate-changes", results, base, "--out", tmp_path / "o1")
    assert got.code == 1, got.out + got.err
    got = cli("compare", "--fail-on-inconclusive", results, base, "--out", tmp_path / "o2")
    assert got.code == 1, got.out + got.err


def test_an_increase_within_the_limit_on_the_same_small_test_set_still_passes(tmp_path, cli):
    """The rule is no blanket: noise that hides nothing beyond the limit leaves a pass."""
    results, base = _files(tmp_path, 1.05)
    got = cli("compare", results, base, "--out", tmp_path / "out")
    assert got.code == 0, got.err
    out = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert out["verdict"] == "pass" and out["comparison"]["perplexity"]["status"] == "ok"
