"""The one way evalgate parses YAML a pull request controls (evalgate.yml, the grammar table).

YAML keeps the last of two equal keys silently: in a gate configuration that hides a setting, in
the verb table a verb's first entry. `UniqueKeyLoader` and `FastUniqueKeyLoader` refuse the second
one (`DuplicateKey`, with both lines).

A SafeLoader constructs no objects, but it does follow anchors and aliases: a 450-byte file of
nested aliases (a "billion laughs") expands to gigabytes once anything walks it. Our files have no
use for them, so any anchor (`&name`) or alias (`*name`) is refused, located, before anything is
constructed. The check walks libyaml's event stream (fast, and aliases are not expanded there),
so it works for the C loaders too, whose composer cannot be overridden.

Parser errors are described by their problem and line only: PyYAML's own message quotes the
offending line, which for a file that is not what it claims could be anyone's secret.
"""

from __future__ import annotations

from typing import Any

import yaml

from evalgate.console import clean

FAST_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class AliasRefused(yaml.YAMLError):
    """An anchor or alias in a file that may not use them."""

    def __init__(self, kind: str, name: str, mark: Any):
        self.problem = f"YAML {kind} '{clean(name, 40)}' refused (anchors and aliases are not allowed)"
        self.problem_mark = mark
        super().__init__(self.problem)


class DuplicateKey(yaml.YAMLError):
    """A key written twice in one mapping (`first` and `again` are 1-based lines)."""

    def __init__(self, key: Any, first: int, again: int, mark: Any):
        self.key, self.first, self.again = key, first, again
        self.problem = f"key '{clean(key, 40)}' appears twice (lines {first} and {again})"
        self.problem_mark = mark
        super().__init__(self.problem)


class _UniqueKeys:
    """Loader mixin: `DuplicateKey` at the second of two equal keys of a mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[attr-defined]
            if isinstance(key, str | int | float | bool):  # an unhashable key is the base loader's error
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise DuplicateKey(key, seen[key], line, key_node.start_mark)
                seen[key] = line
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]


class UniqueKeyLoader(_UniqueKeys, yaml.SafeLoader):
    """PyYAML's own parser: its error messages (and what it accepts) are the configuration's."""


class FastUniqueKeyLoader(_UniqueKeys, FAST_SAFE_LOADER):  # type: ignore[misc,valid-type]
    """libyaml's parser when present: the same safe subset, ~10x faster on the verb table."""


def refuse_aliases(text: str, loader: type = FAST_SAFE_LOADER) -> None:
    """Raise `AliasRefused` at the first anchor or alias of `text` (other YAML errors as PyYAML's)."""
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent):
            raise AliasRefused("alias", f"*{event.anchor}", event.start_mark)
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise AliasRefused("anchor", f"&{anchor}", event.start_mark)


def load(text: str, loader: type = FAST_SAFE_LOADER) -> Any:
    """`yaml.load` with `loader` (a SafeLoader or a subclass) once the text has no alias."""
    if not issubclass(loader, yaml.SafeLoader | getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        raise TypeError(f"{loader.__name__} is not a safe loader")
    refuse_aliases(text, loader)
    return yaml.load(text, Loader=loader)  # a SafeLoader, checked above


def describe(exc: yaml.YAMLError) -> tuple[str, int | None]:
    """(what is wrong, 1-based line) of a YAML error, without quoting the file."""
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or type(exc).__name__
    context = getattr(exc, "context", None)
    text = f"{context}: {problem}" if context else str(problem)
    return clean(text), line


def located(source: str, exc: yaml.YAMLError) -> tuple[str, str]:
    """(`source:line`, or `source` when the error has no line; what is wrong) for a message."""
    problem, line = describe(exc)
    return (f"{source}:{line}" if line is not None else source), problem
