"""A safe evaluator for the condition language of Argo Rollouts' analysis.

Argo evaluates ``successCondition``/``failureCondition`` with expr-lang (``utils/evaluate``);
this is the subset of that language metric conditions use, parsed by a lark grammar and walked
by :mod:`kruise.analysis.exprvalues`. Nothing is ever handed to Python's ``eval``: the only names
are ``result``, the closure element ``#`` and the built-in functions below.

Supported (expr-lang precedence, lowest first)::

    cond ? a : b                      ternary
    a or b, a || b                    short-circuit
    a and b, a && b                   short-circuit
    == != < <= > >= in, not in, matches, contains, startsWith, endsWith
    + -                               numbers; + also joins strings and lists
    not a, !a                         (binds tighter than +, looser than *)
    * / %                             / is always a float division, % integers only
    -a +a                             unary
    a ** b, a ^ b                     float power (right-associative)
    a ?? b                            b when a is nil
    a.b  a[0]  a[-1]  a['k']  f(x)    member, index, call
    {# > 1}  # > 1  .field            closures for all/any/none/one/filter/map/count

Literals: integers, floats (``1e-3``), ``'single'`` / ``"double"`` strings, ``true``, ``false``,
``nil``, ``[lists]``. Functions: Argo's ``asInt``, ``asFloat``, ``isNaN``, ``isInf``, ``isNil``,
``default``; expr-lang's ``len``, ``abs``, ``int``, ``float``, ``string``, ``lower``, ``upper``,
``trim``, ``min``, ``max``, ``all``, ``any``, ``none``, ``one``, ``filter``, ``map``, ``count``.
Date functions (``now()``, ``duration()``) are not supported. expr-lang type-checks calls at
compile time, so Argo rejects ``asFloat(result) == "1.1"`` as a type mismatch; here ``==`` between
different types is simply false, as expr-lang's runtime equality is.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import LarkError, UnexpectedInput

from kruise.analysis.exprvalues import ConditionError, Evaluator, go_type

__all__ = ["ConditionError", "evaluate_condition", "parse_condition"]

_GRAMMAR = r"""
?start: ternary

?ternary: or_test
        | or_test "?" ternary ":" ternary            -> ternary

?or_test: and_test
        | or_test ("or" | "||") and_test             -> or_

?and_test: comparison
         | and_test ("and" | "&&") comparison        -> and_

?comparison: sum
           | comparison COMP_OP sum                  -> compare
           | comparison "in" sum                     -> in_
           | comparison "not" "in" sum               -> not_in
           | comparison "matches" sum                -> matches
           | comparison "contains" sum               -> contains
           | comparison "startsWith" sum             -> starts_with
           | comparison "endsWith" sum               -> ends_with

?sum: notted
    | sum "+" notted                                 -> add
    | sum "-" notted                                 -> sub

?notted: product
       | "not" notted                                -> not_
       | "!" notted                                  -> not_

?product: unary
        | product "*" unary                          -> mul
        | product "/" unary                          -> div
        | product "%" unary                          -> mod

?unary: power
      | "-" unary                                    -> neg
      | "+" unary                                    -> pos

?power: coalesce
      | coalesce ("**" | "^") unary                  -> power

?coalesce: postfix
         | coalesce "??" postfix                     -> coalesce

?postfix: atom
        | postfix "." NAME                           -> member
        | postfix "[" ternary "]"                    -> index
        | NAME "(" [arguments] ")"                   -> call

arguments: argument ("," argument)* ","?
?argument: ternary
         | "{" ternary "}"                           -> closure

?atom: NUMBER                                        -> number
     | STRING                                        -> string
     | "true"                                        -> true
     | "false"                                       -> false
     | "nil"                                         -> nil
     | NAME                                          -> name
     | "#"                                           -> element
     | "." NAME                                      -> element_member
     | "[" [ternary ("," ternary)* ","?] "]"         -> list_
     | "(" ternary ")"

COMP_OP: "==" | "!=" | "<=" | ">=" | "<" | ">"
NAME: /[A-Za-z_$][A-Za-z0-9_$]*/
NUMBER: /(\d+\.\d+|\d+)([eE][+-]?\d+)?/
STRING: /"(\\.|[^"\\])*"/ | /'(\\.|[^'\\])*'/

%import common.WS
%ignore WS
"""

_PARSER = Lark(_GRAMMAR, parser="lalr", maybe_placeholders=True)
"""One LALR parser for the process; lark parsers are safe to share."""


@lru_cache(maxsize=512)
def parse_condition(expression: str) -> Tree[Token]:
    """Parse ``expression`` into a syntax tree (cached per expression text).

    Raises :class:`ConditionError` with the position of a syntax error, e.g.
    ``unexpected token ')' at line 1, column 12``.
    """
    if not expression.strip():
        raise ConditionError("empty expression")
    try:
        return _PARSER.parse(expression)
    except UnexpectedInput as err:
        found = getattr(err, "token", None) or getattr(err, "char", None) or "end of input"
        raise ConditionError(f"unexpected {found!r} at line {err.line}, column {err.column}") from err
    except LarkError as err:  # pragma: no cover - lark's other parse failures
        raise ConditionError(str(err)) from err


def evaluate_condition(expression: str, result: Any) -> bool:
    """Evaluate an Argo condition against a measurement ``result``; True or False.

    ``result`` is what the provider measured: a float for a Prometheus scalar, a list of floats for
    a vector (``result[0]``), a list of lists for a matrix, any JSON value for a web metric.
    Mirrors Argo's ``EvalCondition``: the expression must produce a boolean
    (``expected bool, but got int`` otherwise); an unknown name, an index out of range, comparing
    a number with a string or calling a function with the wrong type raises
    :class:`ConditionError`, which makes the measurement an Error. NaN compares false to
    everything, so ``result >= 0.95`` is false for NaN.
    """
    tree = parse_condition(expression)
    value = Evaluator(result).eval(tree)
    if not isinstance(value, bool):
        raise ConditionError(f"expected bool, but got {go_type(value)}")
    return value
