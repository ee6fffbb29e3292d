"""Schema validation of documents holding many records of one shape, with jsonschema's own errors.

jsonschema spends about 1.5 ms on each per-probe record of a results file (155 s of a 100,000-probe
`compare`, issue 25 §4). `BulkValidator` splits the document's schema at one place, the schema of
the records of one container (results.json's `probes` items, a baseline's `outcomes` values):

- the envelope, the whole schema with that records' schema replaced by `true`, is validated by
  jsonschema as before, on the whole document: every other keyword, the container's own ones
  included (its type, a baseline's `propertyNames`), applies unchanged;
- each record is checked by a predicate compiled from the records' schema (`_compile`), a few
  microseconds each. It supports the keywords these schemas use (type, enum, const, required,
  properties, additionalProperties, items, minimum, maximum, pattern, propertyNames, local $ref
  and the annotations); a schema with any other keyword is not compiled, and every record then
  goes through jsonschema (slower, never weaker).

A record the predicate rejects is validated by jsonschema in the document's context, so its
errors are jsonschema's own, at their full path (e.g. probes/41/correct). The predicate accepts
exactly what jsonschema accepts for these keywords (tests/gate/test_bulk_schema.py compares the
two on valid, corrupted and random records); if it ever accepted a record jsonschema rejects,
that record would go unchecked, which is why it refuses to compile what it does not know.
Pure: the schema comes from the caller.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import jsonschema

Check = Callable[[Any], bool]

# Keywords that never constrain a value (annotations); "format" is an annotation under
# jsonschema's default (no format checker), as in every validator of this project.
_ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "$comment",
        "examples",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
    }
)


class _Unsupported(Exception):
    """The records' schema uses a keyword `_compile` does not implement."""


def _is_type(value: Any, name: str) -> bool:
    # jsonschema's Draft 2020-12 types: a bool is no number; 1.0 is an integer
    if name == "string":
        return isinstance(value, str)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if name == "number":
        return isinstance(value, int | float)
    if name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    raise _Unsupported(f"type {name!r}")


def _equal(a: Any, b: Any) -> bool:
    """JSON equality as jsonschema's enum and const read it: True is not 1, 1 is 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return False
    return bool(a == b)


def _resolve(ref: str, root: Mapping[str, Any]) -> Any:
    if not ref.startswith("#/"):
        raise _Unsupported(f"$ref {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            raise _Unsupported(f"$ref {ref!r}")
        node = node[part]
    return node


def _all_of(checks: list[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]

    def check(v: Any) -> bool:
        # a loop, not all(generator): this runs for every field of every record
        for c in checks:  # noqa: SIM110
            if not c(v):
                return False
        return True

    return check


_SIMPLE_TYPES: dict[str, type] = {
    "string": str,
    "object": dict,
    "array": list,
    "boolean": bool,
    "null": type(None),
}


def _type_check(names: list[str]) -> Check:
    for name in names:
        _is_type(None, name)  # an unknown type name is refused here, not at run time
    simple = tuple(_SIMPLE_TYPES[n] for n in names if n in _SIMPLE_TYPES)
    number, integer = "number" in names, "integer" in names

    def typed(v: Any) -> bool:
        if isinstance(v, simple):
            return True
        if isinstance(v, bool) or not isinstance(v, int | float):
            return False  # a bool is no number (and matched above when "boolean" is allowed)
        return number or (integer and (isinstance(v, int) or v.is_integer()))

    return typed


def _keyword(key: str, arg: Any, schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> Check:
    """The predicate of one keyword of `schema`, or _Unsupported."""
    if key == "$ref":
        return _compile(_resolve(arg, root), root, depth + 1)
    if key == "type":
        return _type_check([arg] if isinstance(arg, str) else list(arg))
    if key in ("enum", "const"):
        options = list(arg) if key == "enum" else [arg]
        if all(isinstance(o, str) for o in options):
            strings = frozenset(options)

            def one_of_strings(v: Any) -> bool:
                return isinstance(v, str) and v in strings  # only a string equals a string

            return one_of_strings

        def one_of(v: Any) -> bool:
            return any(_equal(v, o) for o in options)

        return one_of
    if key in ("minimum", "maximum"):
        low = key == "minimum"

        def within(v: Any) -> bool:
            if isinstance(v, bool) or not isinstance(v, int | float):
                return True
            return bool(v >= arg) if low else bool(v <= arg)

        return within
    if key == "pattern":
        rx = re.compile(arg)

        def matches(v: Any) -> bool:
            return not isinstance(v, str) or rx.search(v) is not None

        return matches
    if key == "required":
        names = list(arg)

        def present(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for n in names:  # noqa: SIM110 (a loop: see _all_of)
                if n not in v:
                    return False
            return True

        return present
    if key == "properties":
        props = {name: _compile(sub, root, depth + 1) for name, sub in arg.items()}

        pairs = list(props.items())

        def each_property(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for n, c in pairs:  # noqa: SIM110 (a loop: see _all_of)
                if n in v and not c(v[n]):
                    return False
            return True

        return each_property
    if key == "additionalProperties":
        if "patternProperties" in schema:
            raise _Unsupported("patternProperties")
        known = frozenset(schema.get("properties", {}))
        extra = _compile(arg, root, depth + 1)

        def others(v: Any) -> bool:
            return not isinstance(v, dict) or all(extra(x) for k, x in v.items() if k not in known)

        return others
    if key == "propertyNames":
        name_ok = _compile(arg, root, depth + 1)

        def names_ok(v: Any) -> bool:
            return not isinstance(v, dict) or all(name_ok(k) for k in v)

        return names_ok
    if key == "items":
        if "prefixItems" in schema:
            raise _Unsupported("prefixItems")
        item_ok = _compile(arg, root, depth + 1)

        def items_ok(v: Any) -> bool:
            if not isinstance(v, list):
                return True
            for x in v:  # noqa: SIM110 (a loop: see _all_of)
                if not item_ok(x):
                    return False
            return True

        return items_ok
    raise _Unsupported(key)


def _compile(schema: Any, root: Mapping[str, Any], depth: int = 0) -> Check:
    """A predicate equal to jsonschema's `is_valid` for this (sub)schema, or _Unsupported."""
    if depth > 32:
        raise _Unsupported("nesting")
    if isinstance(schema, bool):
        return _all_of([]) if schema else _all_of([lambda _: False])
    if not isinstance(schema, Mapping):
        raise _Unsupported("schema")
    return _all_of([_keyword(k, a, schema, root, depth) for k, a in schema.items() if k not in _ANNOTATIONS])


class BulkValidator:
    """jsonschema's errors of a document whose schema's `records` place holds many records.

    `records` is the path in the schema to the records' schema: ("properties", NAME, "items")
    for an array NAME of records, ("properties", NAME, "additionalProperties") for an object
    NAME mapping ids to records (the object's schema then has no other property keywords).
    """

    def __init__(self, schema: Mapping[str, Any], records: tuple[str, str, str]):
        _, self.name, self.kind = records
        self.full = jsonschema.Draft202012Validator(schema)
        container = schema["properties"][self.name]
        record = container[self.kind]
        envelope = copy.deepcopy(dict(schema))
        envelope["properties"][self.name][self.kind] = True
        self.envelope = jsonschema.Draft202012Validator(envelope)
        # the records' schema in the document's context, so that its $refs resolve
        self.record = self.full.evolve(schema=record)
        try:
            if self.kind == "additionalProperties" and ({"properties", "patternProperties"} & set(container)):
                raise _Unsupported("properties beside additionalProperties")
            self.check: Check | None = _compile(record, schema)
        except _Unsupported:
            self.check = None

    def _records(self, doc: Any) -> list[tuple[Any, Any]] | None:
        """(key, record) of every record the records' schema applies to, or None when the fast
        path does not apply (then jsonschema checks the whole document)."""
        if self.check is None or not isinstance(doc, dict) or self.name not in doc:
            return None
        container = doc[self.name]
        if self.kind == "items":
            return list(enumerate(container)) if isinstance(container, list) else None
        return list(container.items()) if isinstance(container, dict) else None

    def iter_errors(self, doc: Any) -> Iterator[jsonschema.ValidationError]:
        """The errors jsonschema's `iter_errors` gives for `doc` (the same messages, validators
        and paths), in the envelope's order and then the records'."""
        records = self._records(doc)
        if records is None:
            yield from self.full.iter_errors(doc)
            return
        yield from self.envelope.iter_errors(doc)
        check = self.check
        assert check is not None
        for key, record in records:
            if check(record):
                continue
            for error in self.record.iter_errors(record):
                error.relative_path.extendleft((key, self.name))
                yield error
