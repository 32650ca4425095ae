"""Output comparison: is a program's output (or return value) the expected one?

Comparison happens in the evaluator, never in the sandboxed child, so a program
can neither see the expected output nor patch the comparator.

Stdio rule (default, FixEval's): whitespace-separated tokens; two tokens are equal
when they are the same text, or both integers of equal value, or both numbers
within ``abs_tol`` *or* ``rel_tol`` (1e-8). Integers are compared exactly, never
through floats, so long integers keep every digit. ``yes_no_case`` makes yes/no
style words case-insensitive; ``case_insensitive`` folds every token.
``exact`` compares the text itself after normalising line endings and trailing
whitespace at the very end.

When outputs differ, the *mismatch* says how, for failure signatures: ``lines``
(different number of non-empty lines), ``tokens`` (same lines, a line with a
different number of tokens) or ``value``.

Call rule: the JSON-normalised return value against ``expected`` (JSON). Numbers
compare as Python's ``==`` does across int, float and bool (``2 == 2.0``,
``True == 1``), with the float tolerance applied at any depth inside lists and
dicts. Tuples were already turned into lists in the child, so tuple/list
differences are invisible by design.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ._records import Checker, Mismatch

__all__ = ["compare_output", "values_equal"]

_INT = re.compile(r"[+-]?\d+\Z")
_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)\Z")
_YES_NO = frozenset({"yes", "no", "true", "false"})


def _close(a: float, b: float, abs_tol: float, rel_tol: float) -> bool:
    if a == b:
        return True
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return False
    diff = abs(a - b)
    return diff <= abs_tol or diff <= rel_tol * max(abs(a), abs(b))


def _token_equal(exp: str, got: str, checker: Checker) -> bool:
    if exp == got:
        return True
    if checker.case_insensitive and exp.lower() == got.lower():
        return True
    if checker.yes_no_case and exp.lower() in _YES_NO and exp.lower() == got.lower():
        return True
    if _INT.match(exp) and _INT.match(got):
        return int(exp) == int(got)
    if (checker.abs_tol or checker.rel_tol) and _FLOAT.match(exp) and _FLOAT.match(got):
        return _close(float(exp), float(got), checker.abs_tol, checker.rel_tol)
    return False


def _lines(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


def _classify(expected: str, actual: str) -> Mismatch:
    exp_lines, got_lines = _lines(expected), _lines(actual)
    if len(exp_lines) != len(got_lines):
        return "lines"
    if any(len(e) != len(g) for e, g in zip(exp_lines, got_lines, strict=True)):
        return "tokens"
    return "value"


def compare_output(expected: str, actual: str, checker: Checker = Checker()) -> Mismatch | None:
    """None when ``actual`` is accepted, else how it differs from ``expected``."""
    if checker.mode == "exact":
        norm_exp = expected.replace("\r\n", "\n").rstrip()
        norm_got = actual.replace("\r\n", "\n").rstrip()
        return None if norm_exp == norm_got else _classify(expected, actual)
    exp_tokens, got_tokens = expected.split(), actual.split()
    if len(exp_tokens) == len(got_tokens) and all(
        _token_equal(e, g, checker) for e, g in zip(exp_tokens, got_tokens, strict=True)
    ):
        return None
    return _classify(expected, actual)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float))  # bool is an int, as in Python's ==


def values_equal(expected: Any, actual: Any, checker: Checker = Checker()) -> bool:
    """Python ``==`` on JSON values, with the numeric tolerance applied at any depth."""
    if _is_number(expected) and _is_number(actual):
        if isinstance(expected, float) or isinstance(actual, float):
            return _close(float(expected), float(actual), checker.abs_tol, checker.rel_tol)
        return bool(expected == actual)
    if isinstance(expected, str) and isinstance(actual, str):
        if checker.case_insensitive:
            return expected.lower() == actual.lower()
        return expected == actual
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            values_equal(e, a, checker) for e, a in zip(expected, actual, strict=True)
        )
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            values_equal(v, actual[k], checker) for k, v in expected.items()
        )
    return bool(expected is None and actual is None)
