"""Output comparison: is a program's output (or return value) the expected one?

Comparison happens in the evaluator, never in the sandboxed child, so a program
can neither see the expected output nor patch the comparator. ``actual`` is
untrusted, ``expected`` trusted; neither function raises for any input and no
output can pass by overflow, rounding or a digit-limit error.

Stdio rule (default; testlib's ``wcmp``/``dcmp`` as judges use them): tokens are
split on ASCII whitespace only (space, ``\\t \\n \\r \\v \\f``), and a token is
judged by the *expected* token:

* text-identical tokens are equal (``case_insensitive`` folds every token,
  ``yes_no_case`` folds yes/no/true/false);
* an integer literal (ASCII ``[+-]?[0-9]+``) is matched only by an integer
  literal of the same value, compared as normalised digit strings (sign, leading
  zeros, ``-0`` == ``0``): never through ``int()`` (digit limit) or ``float``
  (``1e9`` is not ``1000000007``, ``123456790.0`` is not ``123456789``);
* a decimal or exponent literal (``0.5``, ``1e-3``, ``2.``, ``.5``) is matched
  by an ASCII integer/decimal/exponent literal within ``abs_tol`` *or*
  ``rel_tol`` (1e-8) of it, i.e. ``|a-b| <= max(abs_tol, rel_tol*max(|a|,|b|))``
  with ``abs_tol``/``rel_tol`` taken as the exact binary values of the floats.
  The decision is exact: a double-precision test with a rigorous error margin
  decides almost every pair, the rest are decided in ``decimal`` with directed
  rounding (bounds, then exact precision). A literal that rounds to infinity as
  a double never equals one that does not (``1e999`` passes nothing finite);
  exponents beyond 15 digits make a token non-numeric. Both tolerances 0 means
  decimals compare by text only;
* anything else (``nan``, ``inf``, ``1_000``, non-ASCII digits such as ``١٢``)
  is equal by text only.

``exact`` compares the text itself after normalising line endings and dropping
trailing ASCII whitespace at the very end.

When outputs differ, the *mismatch* says how, for failure signatures: ``lines``
(different number of non-empty lines), ``tokens`` (same lines, a line with a
different number of tokens) or ``value``. Lines break at ``\\n``, ``\\r\\n``,
``\\r``, ``\\v``, ``\\f``; tokens use the same ASCII split.

Cost: ``actual`` may be megabytes written to cost the evaluator (the comparison
runs in its event loop). It is only ever scanned at C speed (``str`` methods,
compiled regexes); the Python-level work and the lists built from it are bounded
by ``expected``: at most one token more than ``expected`` has (and, to classify a
mismatch, one non-empty line more, each counted up to one token more than the
expected line) is ever taken from it. The rules above are unchanged by this: a
whitespace-padded output with the right tokens is still accepted.

Call rule: the JSON-normalised return value against ``expected`` (JSON), walked
iteratively (any depth, cycles terminate). int vs int is exact; int vs float and
float vs float are equal within the tolerance, decided exactly as above; a
non-finite float only equals the same infinity. ``{"$int": "-?digits"}`` (an
integer beyond int64, on either side) equals a number of exactly its value, or a
tag with the same normalised digits; a tag of more than 400 digits never equals a
float. bool is not a number unless ``expected`` is a bool: then ``actual`` may be
a bool, or a number ``==`` to it (``assert f(x) == True`` accepts ``1``). Strings
compare by text (``case_insensitive`` folds), None only equals None, lists
elementwise, dicts by keys and values; tagged objects (``{"$float": "nan"}``,
``{"$set": [...]}``, ...) compare as dicts. Tuples were already turned into lists
in the child, so tuple/list differences are invisible by design.
"""

from __future__ import annotations

import math
import re
from decimal import MAX_EMAX, MIN_EMIN, ROUND_DOWN, ROUND_UP, Context, Decimal
from itertools import islice
from typing import Any

from ..core.types import Checker, Mismatch

__all__ = ["compare_output", "values_equal"]

# ASCII integer, decimal or exponent literal, at most 15 significant exponent
# digits; ``lastindex`` is None exactly for an integer literal ([+-]?[0-9]+).
# Possessive quantifiers: no backtracking, linear on megabyte tokens.
_NUM = re.compile(
    r"[+-]?(?:[0-9]++(\.[0-9]*+)?|(\.)[0-9]++)"
    r"(?:([eE])[+-]?(?=[0-9])0*+(?:[1-9][0-9]{0,14})?)?"
)
_TAG_INT = re.compile(r"-?[0-9]++")
_TOKEN = re.compile(r"[^ \t\n\r\v\f]+")
_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f]")
# From a position: the next non-empty line, from its first token to its end (group 1).
# Possessive: whitespace and blank lines are skipped once, never backtracked into.
_NEXT_LINE = re.compile(r"[ \t\n\r\v\f]*+([^\n\r\v\f]++)")
_GROUP = re.Match.group
_YES_NO = frozenset({"yes", "no", "true", "false"})
_INF = math.inf

#: Doubles round every value at least this large (in magnitude) to infinity.
_EDGE = Decimal(2**1024 - 2**970)
#: Tokens up to this length take the double-precision fast path.
_FAST_LEN = 40
#: Exact decisions needing more digits than this reject instead.
_MAX_PREC = 100_000
_TAG_FLOAT_DIGITS = 400
_CHUNK = 600  # int() on at most this many digits (below any int_max_str_digits)


# ----------------------------------------------------------------------------- numbers


def _tolerances(checker: Checker) -> tuple[float, float]:
    a, r = checker.abs_tol, checker.rel_tol
    return (a if a > 0 else 0.0), (r if r > 0 else 0.0)  # NaN and negatives are 0


def _close_float(a: float, b: float, abs_tol: float, rel_tol: float) -> bool | None:
    """Decide ``|a-b| <= max(abs_tol, rel_tol*max(|a|,|b|))`` for finite doubles that
    are within 2**-53 (relative) of the true values, or None when too close to call.

    The computed difference and bound are each off by under 5e-16 of ``m + t``
    (plus a subnormal's worth), so a 1e-15 margin makes both answers rigorous.
    """
    d = abs(a - b)
    m = max(abs(a), abs(b))
    t = max(abs_tol, rel_tol * m)
    slack = (m + t) * 1e-15 + 1e-300
    if d <= t - slack:
        return True
    if d > t + slack:
        return False
    return None  # also when something overflowed: inf - inf is nan


def _ctx(prec: int, rounding: str) -> Context:
    return Context(prec=prec, rounding=rounding, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[])


_UP, _DOWN = _ctx(60, ROUND_UP), _ctx(60, ROUND_DOWN)


def _close_exact(a: Decimal, b: Decimal, abs_tol: float, rel_tol: float) -> bool:
    """The same test on exact finite decimals: 60-digit directed-rounding bounds,
    then, if still undecided, enough precision to be exact (or reject if absurd)."""
    ta, tr = Decimal(abs_tol), Decimal(rel_tol)
    m = max(a.copy_abs(), b.copy_abs())
    up, down = _UP, _DOWN
    for _ in range(2):
        d_hi, d_lo = up.subtract(a, b).copy_abs(), down.subtract(a, b).copy_abs()
        t_hi, t_lo = max(ta, up.multiply(tr, m)), max(ta, down.multiply(tr, m))
        if d_hi <= t_lo:
            return True
        if d_lo > t_hi:
            return False
        xa, xb, xr, xm = a.as_tuple(), b.as_tuple(), tr.as_tuple(), m.as_tuple()
        lo = min(int(xa.exponent), int(xb.exponent))
        hi = max(a.adjusted(), b.adjusted())
        prec = max(hi - lo + 2, len(xr.digits) + len(xm.digits) + 2) + 2
        if prec > _MAX_PREC:
            return False
        up, down = _ctx(prec, ROUND_UP), _ctx(prec, ROUND_DOWN)
    return False  # unreachable: at exact precision both bounds agree


def _close_literals(exp: str, got: str, abs_tol: float, rel_tol: float) -> bool:
    """Tolerance test on two ASCII numeric literals (``_NUM``)."""
    if abs_tol == _INF or rel_tol == _INF:
        return True
    if len(exp) <= _FAST_LEN and len(got) <= _FAST_LEN:
        a, b = float(exp), float(got)  # correctly rounded; cannot raise on _NUM text
        if math.isfinite(a):
            if not math.isfinite(b):
                return False
            verdict = _close_float(a, b, abs_tol, rel_tol)
            if verdict is not None:
                return verdict
    da, db = Decimal(exp), Decimal(got)  # exact, any length; exponent < 10**15
    if da.copy_abs() < _EDGE <= db.copy_abs():
        return False
    return _close_exact(da, db, abs_tol, rel_tol)


def _norm_int(token: str) -> str:
    """Canonical digits of an integer literal: no plus, no leading zeros, ``-0`` is 0."""
    body = token.lstrip("+-").lstrip("0")
    if not body:
        return "0"
    return "-" + body if token[0] == "-" else body


def _digits_value(digits: str) -> int:
    """int(digits) without hitting the int-string digit limit."""
    if len(digits) <= _CHUNK:
        return int(digits)
    half = len(digits) // 2
    return _digits_value(digits[:-half]) * 10**half + _digits_value(digits[-half:])


def _int_tag(v: Any) -> str | None:
    """The normalised digits of a ``{"$int": "-?digits"}`` tag, else None."""
    if isinstance(v, dict) and len(v) == 1:
        s = v.get("$int")
        if isinstance(s, str) and _TAG_INT.fullmatch(s):
            return _norm_int(s)
    return None


def _tag_equals_int(tag: str, n: int) -> bool:
    if (n < 0) != (tag[0] == "-"):
        return False
    digits = tag.lstrip("-")
    if digits == "0":
        return n == 0
    bits, count = abs(n).bit_length(), len(digits)
    # 10**(count-1) <= |n| < 10**count, with room for rounding in the logs
    if bits < (count - 1) * 3.3219 - 2 or bits > count * 3.3220 + 2:
        return False
    return _digits_value(digits) == abs(n)


def _tag_equals_number(tag: str, other: Any, abs_tol: float, rel_tol: float) -> bool:
    """A normalised ``$int`` tag against a non-tag value (bools are not numbers)."""
    if isinstance(other, bool):
        return False
    if isinstance(other, int):
        return _tag_equals_int(tag, other)
    if isinstance(other, float):
        if len(tag.lstrip("-")) > _TAG_FLOAT_DIGITS:  # no float is within reach
            return False
        return _int_float_close(int(tag), other, abs_tol, rel_tol)  # int() of <= 400 digits
    return False


def _int_float_close(i: int, f: float, abs_tol: float, rel_tol: float) -> bool:
    if not math.isfinite(f):
        return False
    if i == f:  # exact in Python
        return True
    if abs_tol == _INF or rel_tol == _INF:
        return True
    if -(2**53) <= i <= 2**53:
        return _floats_close(float(i), f, abs_tol, rel_tol)
    bits = i.bit_length()
    # |f| < 2**1024, so |i - f| > |i|/2 > every tolerance below 0.5 (and abs_tol).
    if (bits > 1100 and rel_tol < 0.5) or bits > 20_000:
        return False
    return _close_exact(Decimal(i), Decimal(f), abs_tol, rel_tol)


def _floats_close(a: float, b: float, abs_tol: float, rel_tol: float) -> bool:
    if a == b:
        return True
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    if abs_tol == _INF or rel_tol == _INF:
        return True
    verdict = _close_float(a, b, abs_tol, rel_tol)
    if verdict is not None:
        return verdict
    return _close_exact(Decimal(a), Decimal(b), abs_tol, rel_tol)


def _numbers_equal(e: Any, a: Any, abs_tol: float, rel_tol: float) -> bool:
    """``e`` is an int, float or ``$int`` tag (never a bool)."""
    if isinstance(a, bool):
        return False
    e_tag, a_tag = _int_tag(e), _int_tag(a)
    if e_tag is not None:
        if a_tag is not None:
            return a_tag == e_tag  # normalised digit strings
        return _tag_equals_number(e_tag, a, abs_tol, rel_tol)
    if a_tag is not None:
        return _tag_equals_number(a_tag, e, abs_tol, rel_tol)
    if isinstance(a, float):
        if isinstance(e, float):
            return _floats_close(e, a, abs_tol, rel_tol)
        return _int_float_close(e, a, abs_tol, rel_tol)
    if isinstance(a, int):
        if isinstance(e, float):
            return _int_float_close(a, e, abs_tol, rel_tol)
        return bool(e == a)
    return False


# ----------------------------------------------------------------------------- stdio


def _plain(text: str) -> bool:
    """True when str.split() and str.splitlines() break only at ASCII whitespace
    (they also break at Unicode spaces and \\x1c-\\x1f), so the fast builtins apply."""
    return (text.isascii() and "\x1c" not in text and "\x1d" not in text
            and "\x1e" not in text and "\x1f" not in text)


def _split(text: str) -> list[str]:
    """Tokens separated by ASCII whitespace only (for the trusted ``expected``)."""
    return text.split() if _plain(text) else _TOKEN.findall(text)


def _first_tokens(text: str, n: int) -> list[str]:
    """The tokens of ``text`` when it has at most ``n``, else a list of ``n + 1`` items
    (the last one need not be a token: it only says there are more). The list is
    bounded by ``n`` whatever ``text`` holds; the rest is scanned at C speed."""
    if _plain(text):
        return text.split(None, n)  # n + 1 items: the unsplit remainder is the last
    return list(map(_GROUP, islice(_TOKEN.finditer(text), n + 1)))


def _token_equal(exp: str, got: str, checker: Checker, abs_tol: float, rel_tol: float) -> bool:
    if exp == got:
        return True
    if checker.case_insensitive or checker.yes_no_case:
        low = exp.lower()
        if low == got.lower() and (checker.case_insensitive or low in _YES_NO):
            return True
    e = _NUM.fullmatch(exp)
    if e is None:
        return False  # nan, inf, words: text only
    g = _NUM.fullmatch(got)
    if e.lastindex is None:  # integer literal: the same integer, digit by digit
        return g is not None and g.lastindex is None and _norm_int(exp) == _norm_int(got)
    if g is None or not (abs_tol or rel_tol):
        return False
    return _close_literals(exp, got, abs_tol, rel_tol)


def _line_counts(text: str) -> list[int]:
    """The token count of each non-empty line (for the trusted ``expected``)."""
    if _plain(text):
        return [n for line in text.splitlines() if (n := len(line.split()))]
    return [n for line in _LINE_BREAK.split(text) if (n := len(_TOKEN.findall(line)))]


def _classify(expected: str, actual: str) -> Mismatch:
    """How ``actual`` differs. Its non-empty lines are taken one anchored regex match
    at a time (whitespace-only lines skipped in C), and each one's tokens counted only
    up to the expected line's count plus one; the walk stops at one line more than
    expected. Python work is bounded by ``expected``, whatever ``actual`` holds."""
    want = _line_counts(expected)
    rows, plain = len(want), _plain(actual)
    row, differ, pos = 0, False, 0
    while (m := _NEXT_LINE.match(actual, pos)) is not None:
        if row == rows:
            return "lines"  # more non-empty lines than expected
        w = want[row]
        if plain:
            got = len(m.group(1).split(None, w))
        else:  # matches within the line's span: no copy of it
            got = len(list(islice(_TOKEN.finditer(actual, m.start(1), m.end(1)), w + 1)))
        differ = differ or got != w
        row, pos = row + 1, m.end()
    if row != rows:
        return "lines"
    return "tokens" if differ else "value"


def compare_output(expected: str, actual: str, checker: Checker = Checker()) -> Mismatch | None:
    """None when ``actual`` is accepted, else how it differs from ``expected``.

    Cost: C-speed scans over ``actual`` plus Python work bounded by ``expected``'s
    size (at most its token count plus one of ``actual``'s tokens are ever taken)."""
    if checker.mode == "exact":
        norm_exp = expected.replace("\r\n", "\n").rstrip(" \t\n\r\v\f")
        norm_got = actual.replace("\r\n", "\n").rstrip(" \t\n\r\v\f")
        return None if norm_exp == norm_got else _classify(expected, actual)
    exp_tokens = _split(expected)
    got_tokens = _first_tokens(actual, len(exp_tokens))
    if exp_tokens == got_tokens:
        return None
    if len(exp_tokens) == len(got_tokens):  # then got_tokens are all of actual's tokens
        abs_tol, rel_tol = _tolerances(checker)
        if all(e == g or _token_equal(e, g, checker, abs_tol, rel_tol)
               for e, g in zip(exp_tokens, got_tokens, strict=True)):
            return None
    del got_tokens
    return _classify(expected, actual)


# ----------------------------------------------------------------------------- call


_MISSING = object()


def values_equal(expected: Any, actual: Any, checker: Checker = Checker()) -> bool:
    """``expected`` and ``actual`` JSON values equal, by the call rule above."""
    abs_tol, rel_tol = _tolerances(checker)
    fold = checker.case_insensitive
    stack: list[tuple[Any, Any]] = [(expected, actual)]
    seen: set[tuple[int, int]] = set()  # container pairs already queued: cycles end
    while stack:
        e, a = stack.pop()
        if isinstance(e, bool):
            if isinstance(a, bool):
                if e is not a:
                    return False
            elif not (isinstance(a, (int, float)) and a == e):
                return False
        elif isinstance(e, (int, float)) or _int_tag(e) is not None:
            if not _numbers_equal(e, a, abs_tol, rel_tol):
                return False
        elif isinstance(e, str):
            if not isinstance(a, str) or not (e == a or (fold and e.lower() == a.lower())):
                return False
        elif isinstance(e, list):
            if not isinstance(a, list) or len(e) != len(a):
                return False
            key = (id(e), id(a))
            if key not in seen:
                seen.add(key)
                stack.extend(zip(e, a))
        elif isinstance(e, dict):
            if not isinstance(a, dict) or len(e) != len(a):
                return False
            key = (id(e), id(a))
            if key not in seen:
                seen.add(key)
                for k, v in e.items():
                    got = a.get(k, _MISSING)
                    if got is _MISSING:
                        return False
                    stack.append((v, got))
        elif e is not None or a is not None:
            return False  # None only equals None; other types never equal
    return True
