"""GitHub Actions expressions (`${{ ... }}` and `if:`), evaluated the way a runner does, for the
workflow runner of the tests (helpers/workflow_runner.py).

What the workflows of this repository use: literals, property access (`a.b`, `a['b']`, the `*`
filter), `!`, comparisons (strings compared case-insensitively, as GitHub does), `&&`/`||`
(which return an operand, not a bool), and the functions contains, startsWith, endsWith, format,
join, toJSON, fromJSON and the status functions. An unknown name is an error, never a silent
empty string: a test must not pass because an expression it did not understand read as ''.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<num>-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?))
      | (?P<str>'(?:[^']|'')*')
      | (?P<op>==|!=|<=|>=|&&|\|\||[<>!().,\[\]*])
      | (?P<name>[A-Za-z_][A-Za-z0-9_-]*)
    )""",
    re.VERBOSE,
)

STATUS = ("success", "always", "cancelled", "failure")


class ExprError(ValueError):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ExprError(f"cannot read {text[pos:]!r} in {text!r}")
        kind = m.lastgroup
        assert kind is not None
        out.append((kind, m.group(kind)))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


def to_str(value: Any) -> str:
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


def truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value != ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value != 0
    return value not in (None, False)


def _coerce_num(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip()) if value.strip() else 0.0
        except ValueError:
            return float("nan")
    return float("nan")


def _equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b) and not (isinstance(a, int | float) and isinstance(b, int | float)):
        if isinstance(a, dict | list) or isinstance(b, dict | list):
            return False
        return _coerce_num(a) == _coerce_num(b)
    if isinstance(a, str):
        return a.casefold() == b.casefold()
    if isinstance(a, dict | list):
        return a is b
    return a == b


class _Parser:
    def __init__(self, text: str, context: Mapping[str, Any], status: Callable[[str], bool]):
        self.toks = _tokens(text)
        self.i = 0
        self.ctx = context
        self.status = status
        self.text = text

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            raise ExprError(f"expected {value!r} in {self.text!r}")
        self.i += 1
        return tok

    def parse(self) -> Any:
        value = self.or_()
        if self.peek() is not None:
            raise ExprError(f"unexpected {self.peek()} in {self.text!r}")
        return value

    def or_(self) -> Any:
        left = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_()
            left = left if truthy(left) else right
        return left

    def and_(self) -> Any:
        left = self.cmp()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.cmp()
            left = right if truthy(left) else left
        return left

    def cmp(self) -> Any:
        left = self.unary()
        while (tok := self.peek()) and tok[1] in ("==", "!=", "<", "<=", ">", ">="):
            op = self.take()[1]
            right = self.unary()
            if op == "==":
                left = _equal(left, right)
            elif op == "!=":
                left = not _equal(left, right)
            else:
                a, b = _coerce_num(left), _coerce_num(right)
                left = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        return left

    def unary(self) -> Any:
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.postfix()

    def postfix(self) -> Any:
        value = self.primary()
        while (tok := self.peek()) and tok[1] in (".", "["):
            self.take()
            if tok[1] == ".":
                kind, name = self.take()
                if kind == "op" and name == "*":
                    value = _star(value)
                elif kind != "name":
                    raise ExprError(f"expected a property name in {self.text!r}")
                else:
                    value = _prop(value, name)
            else:
                if self.peek() == ("op", "*"):
                    self.take()
                    value = _star(value)
                else:
                    key = self.or_()
                    value = _prop(value, key)
                self.take("]")
        return value

    def primary(self) -> Any:
        kind, text = self.take()
        if kind == "num":
            return float(int(text, 16)) if text.lower().startswith(("0x", "-0x")) else float(text)
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "op" and text == "(":
            value = self.or_()
            self.take(")")
            return value
        if kind != "name":
            raise ExprError(f"unexpected {text!r} in {self.text!r}")
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if self.peek() == ("op", "("):
            self.take()
            args = []
            while self.peek() != ("op", ")"):
                args.append(self.or_())
                if self.peek() == ("op", ","):
                    self.take()
            self.take(")")
            return self.call(text, args)
        if text not in self.ctx:
            raise ExprError(f"unknown context {text!r} in {self.text!r}")
        return self.ctx[text]

    def call(self, name: str, args: list[Any]) -> Any:
        low = name.lower()
        if low in STATUS:
            return self.status(low)
        if low == "contains":
            hay, needle = args
            if isinstance(hay, list):
                return any(_equal(h, needle) for h in hay)
            return to_str(needle).casefold() in to_str(hay).casefold()
        if low == "startswith":
            return to_str(args[0]).casefold().startswith(to_str(args[1]).casefold())
        if low == "endswith":
            return to_str(args[0]).casefold().endswith(to_str(args[1]).casefold())
        if low == "format":
            out = to_str(args[0])
            for i, arg in enumerate(args[1:]):
                out = out.replace("{" + str(i) + "}", to_str(arg))
            return out
        if low == "join":
            sep = to_str(args[1]) if len(args) > 1 else ","
            items = args[0] if isinstance(args[0], list) else [args[0]]
            return sep.join(to_str(v) for v in items)
        if low == "tojson":
            return json.dumps(args[0], indent=2)
        if low == "fromjson":
            return json.loads(to_str(args[0]))
        raise ExprError(f"unknown function {name!r}")


def _prop(value: Any, name: Any) -> Any:
    if isinstance(value, Mapping):
        key = to_str(name)
        for k, v in value.items():
            if str(k).casefold() == key.casefold():
                return v
        return None
    if isinstance(value, list) and isinstance(name, int | float):
        i = int(name)
        return value[i] if 0 <= i < len(value) else None
    if isinstance(value, list):  # after a `*` filter
        return [_prop(v, name) for v in value]
    return None


def _star(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return list(value.values())
    return list(value) if isinstance(value, list) else []


def evaluate(expr: str, context: Mapping[str, Any], status: Callable[[str], bool] | None = None) -> Any:
    def no_status(name: str) -> bool:
        raise ExprError(f"{name}() is only allowed in `if:`")

    return _Parser(expr, context, status or no_status).parse()


_INTERP = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)


def interpolate(text: Any, context: Mapping[str, Any]) -> Any:
    """A YAML value with every `${{ expr }}` replaced by its string; non-strings pass through.
    A value that is one whole expression keeps its type (as GitHub does for `with:` values)."""
    if not isinstance(text, str):
        return text
    whole = _INTERP.fullmatch(text.strip())
    if whole:
        return to_str(evaluate(whole.group(1), context))
    return _INTERP.sub(lambda m: to_str(evaluate(m.group(1), context)), text)


def condition(text: Any, context: Mapping[str, Any], status: Callable[[str], bool] | str = "success") -> bool:
    """A step's or job's `if:`: without a status function it means `success() && (...)`.
    `status` answers success()/failure()/...: a function, or the job's status so far by name."""
    if isinstance(status, str):
        state = status
        status = lambda fn: fn == "always" or fn == state  # noqa: E731
    if text is None or text == "":
        return status("success")
    if isinstance(text, bool):
        return text and status("success")
    expr = str(text).strip()
    whole = _INTERP.fullmatch(expr)
    if whole:
        expr = whole.group(1)
    elif "${{" in expr:
        return truthy(interpolate(expr, context)) and status("success")
    uses_status = any(re.search(rf"\b{s}\s*\(", expr, re.IGNORECASE) for s in STATUS)
    value = truthy(evaluate(expr, context, status))
    return value if uses_status else value and status("success")
