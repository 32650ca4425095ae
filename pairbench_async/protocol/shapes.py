"""Expected-output shapes: the second component of a failure signature.

PAIR-BENCH (seed 000, Section IV-A) groups failing tests partly by the *shape* of the
answer the reference expects, computed from the oracle output alone, never from the
candidate's output. This module owns that classification, so that scenarios, hints
and reports agree on it. It is pure: no I/O, no randomness.

Rules for a stdin/stdout test (its ``output`` text):

* ``empty``: nothing but whitespace (or no expected output at all);
* ``binary``: one line holding one token from :data:`BINARY_TOKENS`, in any case
  (``YES``, ``no``, ``True``, ``Impossible``, ...);
* ``token``: one line holding any other single token;
* ``line``: one line of two or more tokens;
* ``grid``: two or more lines that all hold the same number (at least two) of tokens;
* ``multiline``: anything else with several lines (blank lines in the middle included).

Trailing blank lines and trailing spaces never count. Rules for a function-call test
(its JSON ``expected`` value): a bool is ``binary``; any other scalar (number, string
without a newline, null) is ``token``; a string containing a newline is ``multiline``;
a list of scalars (the empty list included) is ``line``; a list of two or more lists
of scalars, all of the same length of at least two, is ``grid``; every other value
(dicts, ragged or deeper nesting, a single row) is ``multiline``. A call test with no
expected value is ``empty``. The call rules mirror the stdio ones: a value printed one
row per line would get the same shape.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

from ..core.types import Test

__all__ = ["BINARY_TOKENS", "SHAPES", "Shape", "output_shape", "text_shape", "value_shape"]

Shape = Literal["token", "line", "binary", "grid", "multiline", "empty"]

#: Every shape, in the order reports list them.
SHAPES: Final[tuple[Shape, ...]] = ("token", "line", "binary", "grid", "multiline", "empty")

#: Single tokens that make a one-line answer a yes/no-style decision (lower case).
BINARY_TOKENS: Final = frozenset(
    {"yes", "no", "true", "false", "possible", "impossible", "ok", "accepted", "rejected"}
)


def output_shape(test: Test) -> Shape:
    """The shape of ``test``'s expected output (stdio text or call return value)."""
    if test.kind == "call":
        if test.expected is msgspec.UNSET:
            return "empty"
        return value_shape(test.expected)
    return text_shape(test.output)


def text_shape(text: str | None) -> Shape:
    """The shape of an expected stdout text; see the module docstring for the rules."""
    if text is None:
        return "empty"
    lines = [line.split() for line in text.rstrip().splitlines()]
    if not lines or not any(lines):
        return "empty"
    if len(lines) == 1:
        tokens = lines[0]
        if len(tokens) == 1:
            return "binary" if tokens[0].lower() in BINARY_TOKENS else "token"
        return "line"
    width = len(lines[0])
    if width >= 2 and all(len(tokens) == width for tokens in lines):
        return "grid"
    return "multiline"


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def value_shape(value: Any) -> Shape:
    """The shape of an expected JSON value of a call test."""
    if isinstance(value, bool):
        return "binary"
    if isinstance(value, str):
        return "multiline" if "\n" in value.strip() else "token"
    if _is_scalar(value):
        return "token"
    if isinstance(value, (list, tuple)):
        if all(_is_scalar(item) for item in value):
            return "line"
        rows = list(value)
        if (
            len(rows) >= 2
            and all(isinstance(row, (list, tuple)) for row in rows)
            and all(all(_is_scalar(item) for item in row) for row in rows)
        ):
            width = len(rows[0])
            if width >= 2 and all(len(row) == width for row in rows):
                return "grid"
    return "multiline"
