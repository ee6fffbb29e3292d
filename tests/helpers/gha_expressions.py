"""GitHub Actions expressions (`if:` conditions, `${{ }}`), evaluated as GitHub documents them, so
that a test can ask what a workflow's real condition decides for a given event.

What GitHub runs, and only that: a job's `if:` is evaluated by GitHub before any runner starts, so
this is the one part of a workflow a test cannot run with bash. The subset is what workflows here
use, with GitHub's documented semantics (docs.github.com, "Evaluate expressions in workflows and
actions"): literals (`'it''s'`, numbers, true, false, null), property access (`a.b`, `a['b']`; a
missing property is null), `!`, `<`, `<=`, `>`, `>=`, `==`, `!=`, `&&`, `||`, parentheses, and the
functions contains, startsWith, endsWith, success, always, cancelled, failure. String comparison
ignores case (so does `contains`); `&&` and `||` return an operand, as in JavaScript; falsy is
false, 0, '', null.

    evaluate("github.event.workflow_run.path == '.github/workflows/eval-gate.yml'", {"github": {...}})
"""

from __future__ import annotations

import re
from typing import Any

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>&&|\|\||==|!=|<=|>=|[<>!()\[\].,])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)


def _tokens(text: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read the expression at {text[pos : pos + 20]!r}")
        pos = m.end()
        if m.group("str") is not None:
            out.append(("lit", m.group("str")[1:-1].replace("''", "'")))
        elif m.group("num") is not None:
            out.append(("lit", float(m.group("num"))))
        elif m.group("op") is not None:
            out.append(("op", m.group("op")))
        else:
            name = m.group("name")
            literal = {"true": True, "false": False, "null": None}
            out.append(("lit", literal[name]) if name in literal else ("name", name))
    return out


def _truthy(value: Any) -> bool:
    return value not in (False, 0, "", None)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    if type(a) is not type(b) and not (isinstance(a, int | float) and isinstance(b, int | float)):
        # GitHub coerces mismatched types to numbers: null 0, bool 0/1, '' 0, other strings NaN.
        def num(v: Any) -> float:
            if v is None:
                return 0.0
            if isinstance(v, bool | int | float):
                return float(v)
            if isinstance(v, str):
                try:
                    return float(v) if v.strip() else 0.0
                except ValueError:
                    return float("nan")
            return float("nan")

        return num(a) == num(b)
    return a == b


class _Parser:
    def __init__(self, tokens: list[tuple[str, Any]], context: dict[str, Any], status: str) -> None:
        self.t, self.i, self.ctx, self.status = tokens, 0, context, status

    def peek(self) -> tuple[str, Any] | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, op: str | None = None) -> tuple[str, Any]:
        tok = self.peek()
        if tok is None or (op is not None and tok != ("op", op)):
            raise ValueError(f"expected {op!r}, found {tok!r}")
        self.i += 1
        return tok

    def parse(self) -> Any:
        value = self.or_()
        if self.peek() is not None:
            raise ValueError(f"unexpected {self.peek()!r}")
        return value

    def or_(self) -> Any:
        value = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_()
            value = value if _truthy(value) else right
        return value

    def and_(self) -> Any:
        value = self.compare()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.compare()
            value = right if _truthy(value) else value
        return value

    def compare(self) -> Any:
        value = self.unary()
        while self.peek() in (("op", o) for o in ("==", "!=", "<", "<=", ">", ">=")):
            op = self.take()[1]
            right = self.unary()
            if op == "==":
                value = _equal(value, right)
            elif op == "!=":
                value = not _equal(value, right)
            else:
                a, b = (v.casefold() if isinstance(v, str) else v for v in (value, right))
                value = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        return value

    def unary(self) -> Any:
        if self.peek() == ("op", "!"):
            self.take()
            return not _truthy(self.unary())
        return self.postfix()

    def postfix(self) -> Any:
        value = self.primary()
        while self.peek() in (("op", "."), ("op", "[")):
            if self.take()[1] == ".":
                kind, name = self.take()
                if kind != "name":
                    raise ValueError(f"expected a property name, found {name!r}")
                value = value.get(name) if isinstance(value, dict) else None
            else:
                key = self.or_()
                self.take("]")
                if isinstance(value, dict) and isinstance(key, str):
                    value = value.get(key)
                elif isinstance(value, list) and isinstance(key, float) and 0 <= key < len(value):
                    value = value[int(key)]
                else:
                    value = None
        return value

    def primary(self) -> Any:
        kind, value = self.take()
        if kind == "lit":
            return value
        if (kind, value) == ("op", "("):
            inner = self.or_()
            self.take(")")
            return inner
        if kind != "name":
            raise ValueError(f"unexpected {value!r}")
        if self.peek() == ("op", "("):
            self.take()
            args = []
            while self.peek() != ("op", ")"):
                args.append(self.or_())
                if self.peek() == ("op", ","):
                    self.take()
            self.take(")")
            return self.call(value, args)
        return self.ctx.get(value)

    def call(self, name: str, args: list[Any]) -> Any:
        fold = [a.casefold() if isinstance(a, str) else a for a in args]
        lowered = name.casefold()
        if lowered == "contains":
            hay, needle = fold
            return any(_equal(x, needle) for x in hay) if isinstance(hay, list) else str(needle) in str(hay)
        if lowered == "startswith":
            return str(fold[0]).startswith(str(fold[1]))
        if lowered == "endswith":
            return str(fold[0]).endswith(str(fold[1]))
        if lowered in ("success", "always", "cancelled", "failure"):
            return {
                "success": self.status == "success",
                "always": True,
                "cancelled": self.status == "cancelled",
                "failure": self.status == "failure",
            }[lowered]
        raise ValueError(f"function {name} is not known here")


def evaluate(expression: str, context: dict[str, Any], status: str = "success") -> Any:
    """The value of `expression` (with or without `${{ }}`) in `context` (github, needs, steps, ...)."""
    text = expression.strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    return _Parser(_tokens(text), context, status).parse()


def condition(expression: str | None, context: dict[str, Any], status: str = "success") -> bool:
    """Whether a job or step with this `if:` runs (no `if:` means `success()`)."""
    if expression is None:
        return status == "success"
    return _truthy(evaluate(expression, context, status))
