"""Our JSON outputs are spelled as json.dumps(indent=2, sort_keys=True, ensure_ascii=False) spells
them: edges/files.py writes them with its own faster encoder, which must give the same bytes."""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from enum import IntEnum
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalgate.edges.files import dump_json

REPO = Path(__file__).resolve().parents[2]


def _reference(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
)
_documents = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet=st.characters(codec="utf-8"), max_size=8), inner, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(_documents)
def test_a_document_is_spelled_as_json_dumps_spells_it(doc):
    assert dump_json(doc) == _reference(doc)


class _Level(IntEnum):
    HIGH = 3


@pytest.mark.parametrize(
    "doc",
    [
        {"b": (1, 2.5, "x"), "a": [[], {}, [{}], {"k": []}]},
        {"nan": math.nan, "inf": [math.inf, -math.inf], "zero": -0.0, "tiny": 5e-324, "big": 1e300},
        OrderedDict([("z", 1), ("a", OrderedDict([("y", True)]))]),  # dict subclasses
        {"level": _Level.HIGH, "flag": [True, False, None]},  # an int subclass
        {1: "one", 2: "two"},  # non-string keys, as json.dumps converts them
        {"text": 'quote " backslash \\ newline \n tab \t nul \x00 é ✓ \u2028 \U0001f600'},
        "a bare string",
        3.25,
        None,
    ],
)
def test_unusual_values_are_spelled_as_json_dumps_spells_them(doc):
    assert dump_json(doc) == _reference(doc)


def test_what_json_dumps_refuses_is_refused_alike():
    with pytest.raises(TypeError):
        dump_json({"a": {1, 2}})
    with pytest.raises(TypeError):
        dump_json({1: "x", "y": 2})  # keys json.dumps cannot sort
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        dump_json(loop)


@pytest.mark.parametrize("path", sorted((REPO / "tests" / "golden").rglob("*.json")), ids=lambda p: p.name)
def test_the_golden_documents_keep_their_bytes(path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert dump_json(doc) == _reference(doc)
