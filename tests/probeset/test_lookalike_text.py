"""Text that only looks right is refused: invisible characters, look-alike candidates, Unicode forms,
blanks glued, full-width or next to odd whitespace, templates with their own blank or not UTF-8."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.probeset_factory import cli_merged, dump_jsonl, write_base

PROBES = Path("data/eval/probes.jsonl")


def _findings(cfg: Path, *extra: str) -> tuple[int, list[dict]]:
    code, out = cli_merged("validate", "--config", str(cfg), "--format", "json", *extra)
    return code, json.loads(out)["findings"]


def test_a_template_with_its_own_blank_is_refused_by_validate(tmp_path):
    # The scorer splits the rendered text at the one ___; a template holding one would make every
    # probe unscorable, so validate (which runs before any model is loaded) must refuse it.
    cfg = write_base(tmp_path)
    (tmp_path / "data/eval/probe_prompt.txt").write_text("Fill in the ___:\n{prompt}\n", encoding="utf-8")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "template"]
    assert f["file"] == "data/eval/probe_prompt.txt" and f["line"] == 1
    assert "___" in f["message"] and f["hint"]
    code, out = cli_merged(
        "run", "--config", str(cfg), "--checkpoint", str(tmp_path / "no-such-checkpoint"),
        "--baseline", "none", "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert code == 2 and "[template]" in out and "checkpoint" not in out.split("[template]")[0]


def test_a_template_that_is_not_utf8_is_located_with_a_hint(tmp_path):
    cfg = write_base(tmp_path)
    (tmp_path / "data/eval/probe_prompt.txt").write_bytes("Línea\nCompleta: {prompt}\n".encode("latin-1"))
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "template"]
    assert f["line"] == 1 and "UTF-8" in f["hint"]


def test_invisible_characters_do_not_hide_a_leak(tmp_path):
    # TRAIN holds "The children played in the garden all afternoon." A zero-width space or a soft
    # hyphen inside a word is invisible on screen and must not turn a verbatim copy into a new probe.
    cfg = write_base(tmp_path)
    rec = json.loads((tmp_path / PROBES).read_text(encoding="utf-8").splitlines()[0])
    copy = {
        **rec, "id": "zw-copy", "verb": "play", "regularity": "regular", "tense": "past_simple",
        "person": "3sg", "prompt": "The chil\u200bdren ___ in the garden all after\u00adnoon.",
        "candidates": ["played", "plays", "play"], "expected": "played",
    }  # fmt: skip
    with (tmp_path / PROBES).open("ab") as fh:
        fh.write(dump_jsonl([copy]))
    with (tmp_path / "data/corpus/train.jsonl").open("ab") as fh:  # and the other way round
        fh.write(dump_jsonl([{"text": "Every day Maria wor\u200bks at the office."}]))
    code, findings = _findings(cfg)
    assert code == 2
    exact = {(f["probe_id"], f["evidence"]["train_line"]) for f in findings if f["check"] == "leak-exact"}
    assert exact == {("zw-copy", 1), ("en-work-pres-3sg-001", 7)}


def _with_probe(tmp_path: Path, **fields) -> Path:
    cfg = write_base(tmp_path)
    rec = json.loads((tmp_path / PROBES).read_text(encoding="utf-8").splitlines()[0])
    with (tmp_path / PROBES).open("ab") as fh:
        fh.write(dump_jsonl([{**rec, "id": "odd", **fields}]))
    return cfg


@pytest.mark.integration
def test_candidates_that_only_look_distinct_are_refused(tmp_path):
    nfc, nfd = "cociné", "cocine\u0301"
    cases = {
        "same-after-nfc": ([nfc, nfd, "cocino"], nfc),
        "surrounding-space": (["works ", " worked", "work"], "work"),
        "invisible-only": (["works", "\u200b", "worked"], "works"),
        "invisible-inside": (["wor\u200bks", "worked"], "worked"),
    }
    for name, (candidates, expected) in cases.items():
        cfg = _with_probe(
            tmp_path / name, prompt="Ayer yo ___ arroz.", candidates=candidates, expected=expected
        )
        code, findings = _findings(cfg)
        assert code == 2, name
        hits = [f for f in findings if f.get("probe_id") == "odd" and f["field"] == "candidates"]
        assert [f["check"] for f in hits] == ["text-form"] * len(hits) and hits, (name, findings)
        assert all(f["line"] == 9 and f["hint"] for f in hits)


def test_expected_that_differs_only_in_unicode_form_says_so(tmp_path):
    cfg = _with_probe(
        tmp_path, prompt="Ayer yo ___ arroz.", candidates=["cociné", "cocino"], expected="cocine\u0301"
    )
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f["check"] == "expected-not-candidate"]
    assert "Unicode" in f["message"] and "NFC" in f["message"]


def test_text_the_model_would_see_differently_from_the_reader_is_refused(tmp_path):
    # A decomposed accent or a zero-width space is tokenized as extra pieces: the probe would be
    # scored on text that only looks like the one a reviewer read.
    cases = {
        "decomposed-prompt": ({"prompt": "Ayer yo ___ arroz en la cocina\u0301."}, "prompt"),
        "invisible-prompt": ({"prompt": "Ayer yo ___ arroz\u200b en casa."}, "prompt"),
        "decomposed-candidates": (
            {"prompt": "Hoy yo ___ arroz.", "candidates": ["cocine\u0301", "cocino"], "expected": "cocino"}
            | {"language": "es", "verb": "cocinar", "tense": "present_simple", "person": "1sg"},
            "candidates",
        ),
    }
    for name, (fields, field) in cases.items():
        cfg = _with_probe(tmp_path / name, **fields)
        code, findings = _findings(cfg)
        assert code == 2, name
        hits = [f for f in findings if f.get("probe_id") == "odd"]
        assert [(f["check"], f["field"], f["line"]) for f in hits] == [("text-form", field, 9)], (name, hits)


def test_a_blank_glued_to_a_word_is_refused(tmp_path):
    glued = {"before": "Ayer yo coc___ arroz.", "after": "Ayer yo ___ado arroz."}
    for name, prompt in glued.items():
        cfg = _with_probe(tmp_path / name, prompt=prompt)
        code, findings = _findings(cfg)
        assert code == 2
        [f] = [f for f in findings if f.get("probe_id") == "odd"]
        assert (f["check"], f["field"], f["line"]) == ("blank", "prompt", 9)
        assert "glued" in f["message"]


def test_a_full_width_blank_is_named(tmp_path):
    cfg = _with_probe(tmp_path, prompt="Ayer yo ＿＿＿ arroz.")
    code, findings = _findings(cfg)
    assert code == 2
    [f] = [f for f in findings if f.get("probe_id") == "odd"]
    assert f["check"] == "blank" and "U+FF3F" in f["message"]


def test_odd_whitespace_next_to_the_blank_is_refused(tmp_path):
    # The whitespace before the blank is scored with the candidate (lm-eval convention): two spaces,
    # a tab or a no-break space there measured a different continuation than the one a reader sees.
    prompts = {
        "nbsp": "Ayer yo\u00a0___ arroz.",
        "two-spaces": "Ayer yo  ___ arroz.",
        "tab": "Ayer yo\t___ arroz.",
    }
    for name, prompt in prompts.items():
        cfg = _with_probe(tmp_path / name, prompt=prompt)
        code, findings = _findings(cfg)
        assert code == 2, name
        [f] = [f for f in findings if f.get("probe_id") == "odd" and f["check"] != "control-character"]
        assert (f["check"], f["field"]) == ("blank", "prompt"), (name, f)
        assert "one plain space" in f["message"]
    cfg = _with_probe(tmp_path / "fine", prompt="¿___ tú arroz   ayer?")  # after the blank: not scored
    assert _findings(cfg) == (0, [])
