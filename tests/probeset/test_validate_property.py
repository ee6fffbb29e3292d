"""Random corruption of a valid probe set never makes `evalgate validate` raise.

Whatever happens to the bytes or the JSON values of a file, the command ends with exit 0 (the
damage happened to be harmless) or exit 2 with a message; an exception would surface as exit 3.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.probeset_factory import cli_merged, write_base
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FILES = ["data/eval/probes.jsonl", "data/eval/adversarial.jsonl", "data/corpus/train.jsonl"]
NASTY = [
    b"\\ud800",
    b"\xef\xbb\xbf",
    b"\x00",
    b"NaN",
    b"\r",
    b"\n\n",
    b'"',
    b"{",
    b"___",
    b"[" * 5000,
    b"\xff\xfe",
]
FIELDS = ["id", "language", "verb", "regularity", "tense", "person", "prompt", "candidates", "expected"]
FIELDS += ["label", "category", "reason_code", "deprecated", "source", "kind", "text", "extra"]

# Lone surrogates included: "\\ud800" is valid JSON syntax but not valid Unicode.
strings = st.text(st.characters(categories=["Cs", "Ll", "Lu", "Nd", "Zs", "Po", "Cc"]), max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | strings | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)

byte_edit = st.one_of(
    st.tuples(st.just("flip"), st.integers(min_value=0), st.integers(0, 255)),
    st.tuples(st.just("insert"), st.integers(min_value=0), st.binary(max_size=12) | st.sampled_from(NASTY)),
    st.tuples(st.just("delete"), st.integers(min_value=0), st.integers(1, 40)),
    st.tuples(st.just("truncate"), st.integers(min_value=0), st.just(0)),
)

json_edit = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(FIELDS), json_values),
    st.tuples(st.just("drop"), st.sampled_from(FIELDS), st.none()),
    st.tuples(st.just("replace"), st.none(), json_values),
    st.tuples(st.just("copy"), st.none(), st.none()),  # the same record twice: duplicate id
)


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("base")
    write_base(root)
    return root


def _apply_bytes(data: bytes, edits) -> bytes:
    for kind, pos, arg in edits:
        pos = pos % (len(data) + 1)
        if kind == "flip" and data:
            pos = min(pos, len(data) - 1)
            data = data[:pos] + bytes([arg]) + data[pos + 1 :]
        elif kind == "insert":
            data = data[:pos] + arg + data[pos:]
        elif kind == "delete":
            data = data[:pos] + data[pos + arg :]
        elif kind == "truncate":
            data = data[:pos]
    return data


def _apply_json(data: bytes, line: int, edit) -> bytes:
    lines = data.split(b"\n")[:-1]
    i = line % len(lines)
    rec = json.loads(lines[i])
    kind, field, value = edit
    if kind == "set":
        rec[field] = value
    elif kind == "drop":
        rec.pop(field, None)
    elif kind == "replace":
        rec = value
    new = json.dumps(rec).encode("ascii")  # \u escapes, so that surrogates reach the parser
    lines[i] = new
    if kind == "copy":
        lines.insert(i, new)
    return b"\n".join(lines) + b"\n"


def _run(root: Path, fmt: str) -> None:
    code, out = cli_merged("validate", "--config", str(root / "evalgate.yml"), "--format", fmt)
    assert code in (0, 2), out
    assert out.strip()
    out.encode("utf-8")  # a real stdout would refuse a lone surrogate
    if code == 2 and fmt == "text":
        assert "problem" in out and "Traceback" not in out
    if fmt == "json":
        assert json.loads(out)["ok"] is (code == 0)


def _with(base: Path, rel: str, data: bytes, fmt: str) -> None:
    path = base / rel
    original = path.read_bytes()
    try:
        path.write_bytes(data)
        _run(base, fmt)
    finally:
        path.write_bytes(original)


FORMATS = st.sampled_from(["text", "json", "github"])
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.integration
@SETTINGS
@given(rel=st.sampled_from(FILES), edits=st.lists(byte_edit, min_size=1, max_size=4), fmt=FORMATS)
def test_byte_corruption_never_raises(base, rel, edits, fmt):
    _with(base, rel, _apply_bytes((base / rel).read_bytes(), edits), fmt)


@pytest.mark.integration
@SETTINGS
@given(rel=st.sampled_from(FILES), line=st.integers(min_value=0), edit=json_edit, fmt=FORMATS)
def test_json_level_corruption_never_raises(base, rel, line, edit, fmt):
    _with(base, rel, _apply_json((base / rel).read_bytes(), line, edit), fmt)


@pytest.mark.integration
@settings(max_examples=30, deadline=None)
@given(edits=st.lists(byte_edit, min_size=1, max_size=3), edit=json_edit)
def test_a_corrupted_manifest_never_raises(tmp_path_factory, edits, edit):
    root = tmp_path_factory.mktemp("sealed")
    write_base(root)
    assert cli_merged("probes", "seal", "--config", str(root / "evalgate.yml"))[0] == 0
    manifest = root / "data/eval/MANIFEST.json"
    doc = json.loads(manifest.read_bytes())
    kind, field, value = edit
    if kind == "set":
        doc[field if field in doc else "lock"] = value
    elif kind == "drop":
        doc.pop(field, None)
    manifest.write_bytes(_apply_bytes(json.dumps(doc).encode(), edits))
    _run(root, "text")
    code, out = cli_merged("probes", "seal", "--config", str(root / "evalgate.yml"))
    assert code in (0, 2), out
