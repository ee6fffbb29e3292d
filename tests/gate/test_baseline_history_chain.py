"""gate/history.py: a baseline history is a hash chain back to its anchor; any line changed,
dropped, reordered or re-spelled is refused with its file, line and field (docs/gate.md "Drift")."""

from __future__ import annotations

import itertools
import json

import pytest

from evalgate.errors import RefusedError
from evalgate.gate import history as hist

SHOWN = "baselines/history/demo.jsonl"


def _baseline(acc: float) -> tuple[bytes, dict]:
    doc = {"name": "demo", "slices": {"overall": {"n": 100, "correct": round(acc * 100), "accuracy": acc}}}
    return json.dumps(doc).encode(), doc


def chain(*accs: float) -> tuple[bytes, list[bytes]]:
    """A history: the first baseline anchored, then one update per further accuracy."""
    files = [_baseline(a) for a in accs]
    data = hist.appended(hist.History(), [hist.anchor_record("demo", files[0][0])])
    for (old, old_doc), (new, _) in itertools.pairwise(files):
        data = hist.appended(hist.parse_history(data, SHOWN), [hist.update_record("demo", old, old_doc, new)])
    return data, [f for f, _ in files]


def test_a_history_of_updates_parses_and_names_the_last_baseline():
    data, files = chain(0.9, 0.88, 0.86)
    got = hist.parse_history(data, SHOWN)
    assert [r["event"] for r in got.records] == ["anchor", "update", "update"]
    assert got.anchor_sha256 == hist.sha256_hex(files[0])
    assert got.last_sha256 == hist.sha256_hex(files[2])
    assert got.updates_since_anchor == 2
    assert [s["overall"]["accuracy"] for _, s in got.earlier] == [0.9, 0.88]
    hist.verify(
        got,
        baseline_sha256=hist.sha256_hex(files[2]),
        anchor=files[0],
        history_shown=SHOWN,
        anchor_shown="a.json",
        baseline_shown="b.json",
    )


def _lines(data: bytes) -> list[str]:
    return data.decode().splitlines()


def _edit(line: str, **fields) -> str:
    rec = json.loads(line)
    rec.update(fields)
    return hist.dump_line(rec)


@pytest.mark.parametrize(
    ("tamper", "where"),
    [
        (lambda ls: [ls[0], _edit(ls[1], seq=5), ls[2]], ":2: field seq"),
        (lambda ls: [ls[0], _edit(ls[1], replaced_sha256="0" * 64), ls[2]], ":2: field replaced_sha256"),
        # a line rewritten: the next one no longer chains to it
        (lambda ls: [ls[0], _edit(ls[1], replaced_slices={}), ls[2]], ":3: field prev"),
        (lambda ls: [ls[0], ls[2]], ":2: field seq"),  # a line dropped
        (lambda ls: [ls[0], ls[2], ls[1]], ":2: field seq"),  # reordered
        (lambda ls: [ls[0], ls[1].replace(",", ", ", 1), ls[2]], ":2: not in evalgate's one form"),
        (lambda ls: [ls[1], ls[2]], ":1: field seq"),  # the anchor line removed
        (lambda ls: [ls[0], ls[1], ls[2], "{"], ":4: not a JSON line"),
        (lambda ls: [_edit(ls[0], event="rewrite"), *ls[1:]], ":1: field event"),
        (lambda ls: [ls[0], _edit(ls[1], extra=1), ls[2]], ":2: fields extra"),
    ],
)
def test_a_rewritten_history_is_refused_at_its_line_and_field(tamper, where):
    data, _ = chain(0.9, 0.88, 0.86)
    bad = "".join(line + "\n" for line in tamper(_lines(data))).encode()
    with pytest.raises(RefusedError) as err:
        hist.parse_history(bad, SHOWN)
    assert f"{SHOWN}{where}" in err.value.message


def test_a_history_cut_short_mid_line_is_refused():
    data, _ = chain(0.9, 0.88)
    with pytest.raises(RefusedError, match=r":2: the last line has no newline"):
        hist.parse_history(data[:-5], SHOWN)


def test_a_rebuilt_chain_with_another_anchor_parses_but_does_not_name_the_anchor_file():
    """Rewriting every line consistently makes a valid chain; the anchor file (kept from the
    base) and the baseline still have to be the ones it names."""
    _, files = chain(0.9, 0.88)
    forged, _ = chain(0.5, 0.88)  # an anchor the model never had
    got = hist.parse_history(forged, SHOWN)
    shown = {"history_shown": SHOWN, "anchor_shown": "a.json", "baseline_shown": "b.json"}
    with pytest.raises(RefusedError, match=r"demo.jsonl:2: field baseline_sha256"):
        hist.verify(got, baseline_sha256="f" * 64, anchor=files[0], **shown)
    with pytest.raises(RefusedError, match=r"demo.jsonl:1: field anchor_sha256: a.json is not the anchor"):
        hist.verify(got, baseline_sha256=got.last_sha256, anchor=files[0], **shown)


def test_the_history_sits_beside_the_baseline_it_belongs_to():
    assert hist.history_paths("baselines/demo.json") == (
        "baselines/history/demo.jsonl",
        "baselines/history/demo.anchor.json",
    )
    assert hist.history_paths("eval/x.json") == ("eval/history/x.jsonl", "eval/history/x.anchor.json")
    assert hist.history_paths("x.json") == ("history/x.jsonl", "history/x.anchor.json")
