"""Values and operators of the condition language (see :mod:`kruise.analysis.condition`).

Semantics follow expr-lang as Argo Rollouts runs it, with Go's types in mind: JSON numbers are
numbers whether written ``1`` or ``1.0``; a boolean is never a number (Python's ``True == 1``
does not leak through); ``==`` between different types is false while ``<`` between them is an
error; ``/`` divides as floats (``1/0`` is ``+Inf``) and ``**`` is a float power. Errors carry
Go-style type names (``float64``, ``string``, ``<nil>``) so messages read like Argo's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from lark import Token, Tree

__all__ = ["ConditionError", "Evaluator", "Node", "equal", "go_type", "is_number"]

Node = Tree[Token] | Token
"""A node of a parsed condition."""


class ConditionError(ValueError):
    """A condition that cannot be parsed or evaluated; the measurement becomes an Error."""


def is_number(value: Any) -> bool:
    """Whether ``value`` is an int or float (booleans are not numbers)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def go_type(value: Any) -> str:
    """The Go type name expr-lang would report for ``value`` (``float64``, ``[]interface {}``...)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "[]interface {}"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return type(value).__name__


def equal(left: Any, right: Any) -> bool:
    """expr-lang equality: numbers by value, lists and maps deeply, other types never equal."""
    if is_number(left) and is_number(right):
        return bool(left == right)
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left is right
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(equal(left[k], right[k]) for k in left)
    if type(left) is not type(right):
        return False
    return bool(left == right)


def _mismatch(op: str, left: Any, right: Any) -> ConditionError:
    return ConditionError(f"invalid operation: {op} (mismatched types {go_type(left)} and {go_type(right)})")


def _order(op: str, left: Any, right: Any) -> bool:
    if not (is_number(left) and is_number(right)) and not (isinstance(left, str) and isinstance(right, str)):
        raise _mismatch(op, left, right)
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)


def _numbers(op: str, left: Any, right: Any) -> tuple[Any, Any]:
    if not (is_number(left) and is_number(right)):
        raise _mismatch(op, left, right)
    return left, right


def _divide(left: Any, right: Any) -> float:
    a, b = (float(x) for x in _numbers("/", left, right))
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _power(left: Any, right: Any) -> float:
    a, b = (float(x) for x in _numbers("**", left, right))
    try:
        return math.pow(a, b)
    except OverflowError:
        return math.inf if a > 0 or (float(b).is_integer() and int(b) % 2 == 0) else -math.inf
    except ValueError:
        return math.nan


def _as_int(value: Any) -> int:
    if is_number(value):
        if isinstance(value, float) and not math.isfinite(value):
            raise ConditionError(f"asInt() not supported on float64 {value}")
        return int(value)
    if isinstance(value, str):
        if not re.fullmatch(r"[+-]?\d+", value):
            raise ConditionError(f'strconv.ParseInt: parsing "{value}": invalid syntax')
        return int(value)
    raise ConditionError(f"asInt() not supported on {go_type(value)} {value}")


def _as_float(value: Any) -> float:
    if is_number(value):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise ConditionError(f'strconv.ParseFloat: parsing "{value}": invalid syntax') from None
    raise ConditionError(f"asFloat() not supported on {go_type(value)} {value}")


def _number_arg(name: str, value: Any) -> float:
    if not is_number(value):
        raise ConditionError(f"{name}() needs a number, got {go_type(value)}")
    return float(value)


def _length(value: Any) -> int:
    if isinstance(value, str | list | tuple | dict):
        return len(value)
    raise ConditionError(f"invalid argument for len (type {go_type(value)})")


def _string_arg(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConditionError(f"{name}() needs a string, got {go_type(value)}")
    return value


def _extreme(name: str, args: Sequence[Any]) -> Any:
    values = list(args[0]) if len(args) == 1 and isinstance(args[0], list | tuple) else list(args)
    if not values or not all(is_number(v) for v in values):
        raise ConditionError(f"{name}() needs numbers")
    return min(values) if name == "min" else max(values)


def _to_int(value: Any) -> int:
    if isinstance(value, str):
        return _as_int(value)
    return int(_number_arg("int", value))


_FUNCTIONS: dict[str, tuple[int, Callable[..., Any]]] = {
    "asInt": (1, _as_int),
    "asFloat": (1, _as_float),
    "isNaN": (1, lambda v: math.isnan(_number_arg("isNaN", v))),
    "isInf": (1, lambda v: math.isinf(_number_arg("isInf", v))),
    "isNil": (1, lambda v: v is None),
    "default": (2, lambda v, d: d if v is None else v),
    "len": (1, _length),
    "abs": (1, lambda v: abs(v) if is_number(v) else _number_arg("abs", v)),
    "int": (1, _to_int),
    "float": (1, _as_float),
    "string": (1, lambda v: v if isinstance(v, str) else str(v)),
    "lower": (1, lambda v: _string_arg("lower", v).lower()),
    "upper": (1, lambda v: _string_arg("upper", v).upper()),
    "trim": (1, lambda v: _string_arg("trim", v).strip()),
}
"""name -> (arity, implementation); ``min``/``max`` are variadic and the closures are lazy."""

_CLOSURES = ("all", "any", "none", "one", "filter", "map", "count")
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0"}


def _unquote(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code.startswith("u") and len(code) == 5:
            return chr(int(code[1:], 16))
        return _ESCAPES.get(code, code)

    return _ESCAPE.sub(one, text[1:-1])


def _fetch(obj: Any, key: Any) -> Any:
    if isinstance(obj, dict):
        return obj.get(key)
    if isinstance(obj, list | tuple | str) and is_number(key):
        index = int(key)
        if index != key:
            raise ConditionError(f"invalid index {key} (type float64)")
        size = len(obj)
        if not -size <= index < size:
            raise ConditionError(f"index out of range: {index} (array length is {size})")
        return obj[index]
    raise ConditionError(f"cannot fetch {key} from {go_type(obj)}")


def _boolean(op: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConditionError(f"invalid operation: {op} on {go_type(value)} (expected bool)")
    return value


class Evaluator:
    """Walks a parsed condition with ``result`` bound; one instance per evaluation."""

    def __init__(self, result: Any) -> None:
        self.result = result
        self._elements: list[Any] = []

    def eval(self, node: Node) -> Any:
        """The value of ``node``; raises :class:`ConditionError` on any evaluation error."""
        try:
            return self._eval(node)
        except ConditionError:
            raise
        except RecursionError:
            raise ConditionError("expression nested too deeply") from None
        except (TypeError, ValueError, OverflowError, re.error) as err:
            raise ConditionError(str(err)) from err

    def _eval(self, node: Node) -> Any:
        if isinstance(node, Token):  # pragma: no cover - every token is wrapped by an alias rule
            raise ConditionError(f"unexpected token {node}")
        kind, kids = node.data, node.children
        ev = self._eval
        if kind == "number":
            text = str(kids[0])
            return float(text) if any(c in text for c in ".eE") else int(text)
        if kind == "string":
            return _unquote(str(kids[0]))
        if kind in ("true", "false", "nil"):
            return {"true": True, "false": False, "nil": None}[kind]
        if kind == "name":
            if str(kids[0]) == "result":
                return self.result
            raise ConditionError(f"unknown name {kids[0]}")
        if kind == "element":
            return self._element()
        if kind == "element_member":
            return _fetch(self._element(), str(kids[0]))
        if kind == "list_":
            return [ev(k) for k in kids if k is not None]
        if kind == "member":
            return _fetch(ev(kids[0]), str(kids[1]))
        if kind == "index":
            return _fetch(ev(kids[0]), ev(kids[1]))
        if kind == "call":
            arguments = kids[1]
            return self._call(str(kids[0]), list(arguments.children) if isinstance(arguments, Tree) else [])
        if kind == "ternary":
            return ev(kids[1]) if _boolean("?:", ev(kids[0])) else ev(kids[2])
        if kind == "or_":
            return _boolean("or", ev(kids[0])) or _boolean("or", ev(kids[1]))
        if kind == "and_":
            return _boolean("and", ev(kids[0])) and _boolean("and", ev(kids[1]))
        if kind == "not_":
            return not _boolean("not", ev(kids[0]))
        if kind == "coalesce":
            left = ev(kids[0])
            return ev(kids[1]) if left is None else left
        if kind == "neg":
            value = ev(kids[0])
            return -_numbers("-", 0, value)[1]
        if kind == "pos":
            return _numbers("+", 0, ev(kids[0]))[1]
        left, right = ev(kids[0]), ev(kids[-1])
        return self._binary(kind, str(kids[1]) if kind == "compare" else kind, left, right)

    def _binary(self, kind: str, op: str, left: Any, right: Any) -> Any:
        if kind == "compare":
            if op == "==":
                return equal(left, right)
            if op == "!=":
                return not equal(left, right)
            return _order(op, left, right)
        if kind in ("in_", "not_in"):
            found = self._contains(left, right)
            return found if kind == "in_" else not found
        if kind in ("matches", "contains", "starts_with", "ends_with"):
            if not (isinstance(left, str) and isinstance(right, str)):
                raise _mismatch(kind, left, right)
            if kind == "matches":
                return re.search(right, left) is not None
            if kind == "contains":
                return right in left
            return left.startswith(right) if kind == "starts_with" else left.endswith(right)
        if kind == "add":
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            if isinstance(left, list) and isinstance(right, list):
                return left + right
            a, b = _numbers("+", left, right)
            return a + b
        if kind == "sub":
            a, b = _numbers("-", left, right)
            return a - b
        if kind == "mul":
            a, b = _numbers("*", left, right)
            return a * b
        if kind == "div":
            return _divide(left, right)
        if kind == "mod":
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in (left, right)):
                raise _mismatch("%", left, right)
            if right == 0:
                raise ConditionError("integer divide by zero")
            remainder = abs(left) % abs(right)  # Go truncates toward zero: the sign follows left
            return remainder if left >= 0 else -remainder
        if kind == "power":
            return _power(left, right)
        raise ConditionError(f"unsupported expression {kind}")  # pragma: no cover

    @staticmethod
    def _contains(needle: Any, haystack: Any) -> bool:
        if isinstance(haystack, list | tuple):
            return any(equal(needle, item) for item in haystack)
        if isinstance(haystack, dict):
            return needle in haystack if isinstance(needle, str) else False
        raise _mismatch("in", needle, haystack)

    def _element(self) -> Any:
        if not self._elements:
            raise ConditionError("# is only allowed inside a closure")
        return self._elements[-1]

    def _call(self, name: str, args: list[Node]) -> Any:
        if name in _CLOSURES:
            return self._closure(name, args)
        values = [self._eval(a) for a in args]
        if name in ("min", "max"):
            return _extreme(name, values)
        if name not in _FUNCTIONS:
            raise ConditionError(f"unknown func {name}")
        arity, func = _FUNCTIONS[name]
        if len(values) != arity:
            raise ConditionError(f"{name}() takes {arity} argument(s), got {len(values)}")
        return func(*values)

    def _closure(self, name: str, args: list[Node]) -> Any:
        if len(args) != 2:
            raise ConditionError(f"{name}() takes 2 arguments, got {len(args)}")
        items = self._eval(args[0])
        if not isinstance(items, list | tuple):
            raise ConditionError(f"{name}() needs an array, got {go_type(items)}")
        body = args[1].children[0] if isinstance(args[1], Tree) and args[1].data == "closure" else args[1]
        if name in ("map", "filter", "count", "one"):
            outputs = [self._apply(body, item) for item in items]
            if name == "map":
                return outputs
            hits = [_boolean(name, out) for out in outputs]
            if name == "filter":
                return [item for item, hit in zip(items, hits, strict=True) if hit]
            return sum(hits) if name == "count" else sum(hits) == 1
        # all/any/none stop at the first decisive element, as expr-lang does
        for item in items:
            hit = _boolean(name, self._apply(body, item))
            if name == "all" and not hit:
                return False
            if name in ("any", "none") and hit:
                return name == "any"
        return name != "any"

    def _apply(self, body: Node, item: Any) -> Any:
        self._elements.append(item)
        try:
            return self._eval(body)
        finally:
            self._elements.pop()
