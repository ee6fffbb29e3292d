"""The typed results document (gate/document.py) and the JSON schema cannot drift apart.

For every object the TypedDicts type, recursively: the schema's required keys are exactly the
TypedDict's required keys, every key the schema names is typed, the keys the code writes beyond
the schema are the listed ones (and optional), enums match their Literal and `null` is allowed on
both sides or neither. The frozen golden results are read back through the types as well.
"""

from __future__ import annotations

import json
import types
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest
from helpers.paths import GOLDEN

from evalgate.gate import document
from evalgate.schemas import schema

# Keys the code writes that the schema does not name, per TypedDict: adding one is a decision
# (add it to the schema, or list it here), never an accident.
EXTRAS: dict[str, set[str]] = {
    "Manifest": {"test_sha256", "template_sha256_by_suite"},
    "ProbeEntry": {
        "language", "verb", "regularity", "tense", "person", "prompt", "label", "category",
        "reason_code", "kind", "source", "slices", "suite",
    },
    "Slice": {"n_ambiguous", "n_model_oov", "n_excluded", "mean_entropy", "mean_entropy_norm"},
    "Perplexity": {"file", "nll"},
    "SliceComparison": {
        "n_shared", "n_new", "b", "c", "gated", "p_adjusted", "wilson_low", "wilson_high", "tolerance",
    },
    "PerplexityComparison": {"baseline", "value", "ratio", "max_ratio", "comparable", "reason"},
    "Comparison": {
        "baseline_name", "thresholds", "n_paired", "regressed", "flipped", "new_probes", "gone_probes",
        "deprecated", "unpaired",
    },
    "FindingDict": {"file", "line", "probe_id", "field", "hint", "evidence"},
    "OrdinalItem": {"status", "label"},
}  # fmt: skip

SCHEMA = schema("results")


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref:
        assert ref.startswith("#/$defs/"), ref
        return SCHEMA["$defs"][ref.removeprefix("#/$defs/")]
    return node


def _strip_none(hint: Any) -> tuple[Any, bool]:
    """(the hint without None, whether None was allowed)."""
    if get_origin(hint) in (Union, types.UnionType):
        args = [a for a in get_args(hint) if a is not type(None)]
        nullable = len(args) < len(get_args(hint))
        return (args[0] if len(args) == 1 else Union[tuple(args)]), nullable  # noqa: UP007
    return hint, False


def _schema_nullable(node: dict[str, Any]) -> bool | None:
    """Whether the schema allows null here; None when it says nothing about the type."""
    if "type" in node:
        kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
        return "null" in kinds
    if "enum" in node:
        return None in node["enum"]
    if "const" in node:
        return node["const"] is None
    return None


def _pairs() -> list[tuple[str, type, dict[str, Any]]]:
    """Every (where, TypedDict, schema object) the types cover, found by walking from the top."""
    out: list[tuple[str, type, dict[str, Any]]] = []

    def walk(where: str, td: type, node: dict[str, Any]) -> None:
        node = _resolve(node)
        if "properties" not in node and "required" not in node:
            return  # an object the schema leaves open (leaks, warnings[]): nothing to agree with
        out.append((where, td, node))
        hints = get_type_hints(td)
        for key, sub in node.get("properties", {}).items():
            if key in hints:
                descend(f"{where}.{key}", hints[key], _resolve(sub))

    def descend(where: str, hint: Any, node: dict[str, Any]) -> None:
        hint, _ = _strip_none(hint)
        if is_typeddict(hint):
            walk(where, hint, node)
        elif get_origin(hint) is list and "items" in node:
            descend(where + "[]", get_args(hint)[0], _resolve(node["items"]))
        elif get_origin(hint) is dict and isinstance(node.get("additionalProperties"), dict):
            descend(where + "{}", get_args(hint)[1], _resolve(node["additionalProperties"]))

    walk("results", document.ResultsDocument, SCHEMA)
    return out


PAIRS = _pairs()


def test_every_typed_object_of_the_schema_is_checked():
    names = {td.__name__ for _, td, _ in PAIRS}
    declared = {
        name
        for name, value in vars(document).items()
        if is_typeddict(value) and value.__module__ == document.__name__
    }
    # Inside objects the schema leaves open, or only under keys it does not name.
    assert declared - names == {"LeakSummary", "LeakGroup", "Unpaired"}


@pytest.mark.parametrize(("where", "td", "node"), PAIRS, ids=[p[0] for p in PAIRS])
def test_required_keys_agree(where, td, node):
    assert set(td.__required_keys__) == set(node.get("required", [])), where


@pytest.mark.parametrize(("where", "td", "node"), PAIRS, ids=[p[0] for p in PAIRS])
def test_every_schema_key_is_typed_and_extras_are_listed(where, td, node):
    typed = set(get_type_hints(td))
    named = set(node.get("properties", {})) | set(node.get("required", []))
    assert named <= typed, f"{where}: untyped schema keys {sorted(named - typed)}"
    extras = typed - named
    assert extras == EXTRAS.get(td.__name__, set()), where
    assert extras <= set(td.__optional_keys__), f"{where}: a key outside the schema cannot be required"


@pytest.mark.parametrize(("where", "td", "node"), PAIRS, ids=[p[0] for p in PAIRS])
def test_value_types_agree(where, td, node):
    hints = get_type_hints(td)
    for key, sub in node.get("properties", {}).items():
        sub = _resolve(sub)
        hint, nullable = _strip_none(hints[key])
        if hint is Any:
            continue
        said = _schema_nullable(sub)
        if said is not None:
            assert nullable == said, f"{where}.{key}: null allowed in one and not the other"
        if get_origin(hint) is Literal:
            allowed = sub["enum"] if "enum" in sub else [sub["const"]]
            assert set(get_args(hint)) == {v for v in allowed if v is not None}, f"{where}.{key}"
        elif "enum" in sub or "const" in sub:
            pytest.fail(f"{where}.{key}: the schema lists its values; type it as a Literal")
        if "properties" in sub or "required" in sub:
            assert is_typeddict(hint), f"{where}.{key}: an object the schema describes needs a TypedDict"
        for inner in ("items", "additionalProperties"):
            spec = sub.get(inner)
            if isinstance(spec, dict) and ("properties" in _resolve(spec) or "required" in _resolve(spec)):
                arg = get_args(hint)[-1] if get_args(hint) else None
                assert is_typeddict(_strip_none(arg)[0]), f"{where}.{key}: its {inner} need a TypedDict"


def _check_value(where: str, hint: Any, value: Any, problems: list[str]) -> None:
    hint, nullable = _strip_none(hint)
    if value is None:
        if not nullable and hint is not Any:
            problems.append(f"{where}: null, and its type does not allow None")
        return
    if is_typeddict(hint):
        if not isinstance(value, dict):
            problems.append(f"{where}: not an object")
            return
        hints = get_type_hints(hint)
        missing = set(hint.__required_keys__) - set(value)
        if missing:
            problems.append(f"{where}: missing {sorted(missing)}")
        if hint is not document.ConfigPin:  # the whole evalgate.yml pin; only `gate` is typed
            unknown = set(value) - set(hints)
            if unknown:
                problems.append(f"{where}: untyped keys {sorted(unknown)}")
        for key, sub in value.items():
            if key in hints:
                _check_value(f"{where}.{key}", hints[key], sub, problems)
    elif get_origin(hint) is list and isinstance(value, list):
        for i, item in enumerate(value):
            _check_value(f"{where}[{i}]", get_args(hint)[0], item, problems)
    elif get_origin(hint) is dict and isinstance(value, dict):
        for key, item in value.items():
            _check_value(f"{where}.{key}", get_args(hint)[1], item, problems)


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.results.json")), ids=lambda p: p.name)
def test_golden_results_read_through_the_types(path):
    problems: list[str] = []
    _check_value("results", document.ResultsDocument, json.loads(path.read_text("utf-8")), problems)
    assert not problems, "\n".join(problems[:40])


def test_a_null_the_type_does_not_allow_is_a_problem():
    """A None is checked against the type too, not skipped: `str | None` takes it, `int` does not."""
    problems: list[str] = []
    _check_value("c", document.Comparison, {"baseline_name": None, "n_paired": None}, problems)
    assert problems == ["c.n_paired: null, and its type does not allow None"]


def test_the_module_is_types_only():
    """Nothing in it runs: TypedDicts, Literal aliases and the names they are built from."""
    built_from = {"Any", "Literal", "NotRequired", "TypedDict"}
    for name, value in vars(document).items():
        if name.startswith("__") or name in built_from:
            continue
        assert is_typeddict(value) or get_origin(value) is Literal, name
