"""The comparator's judge rules, by hand and by fuzzing.

``actual`` is untrusted: no output may get AC by overflow, rounding, Unicode
digits or digit-limit tricks, and neither function may raise on any input.
"""

from __future__ import annotations

import math
import re
import time
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pairbench_async.core.types import Checker
from pairbench_async.sandbox import compare as _compare
from pairbench_async.sandbox.compare import compare_output, values_equal

C = Checker()
EXACT_NUMBERS = Checker(abs_tol=0, rel_tol=0)
MISMATCHES = {None, "lines", "tokens", "value"}
INT_LITERAL = re.compile(r"[+-]?[0-9]+")
ASCII_SPACE = " \t\n\r\v\f"
BIG = "1" + "0" * 400  # a 401-digit integer
HUGE = "7" * 12_345  # beyond Python's 4300-digit int() limit
DOUBLE_EDGE = Fraction(2**1024 - 2**970)  # doubles round this and beyond to inf


def ok(expected: str, actual: str, checker: Checker = C) -> bool:
    return compare_output(expected, actual, checker) is None


# ----------------------------------------------------------------------------- rule 1: ASCII split


@pytest.mark.parametrize("sep", [" ", "\t", "\n", "\r", "\v", "\f", "\r\n", " \t\f\v "])
def test_tokens_split_at_every_ascii_whitespace(sep: str) -> None:
    assert ok("1 2 3\n", f"1{sep}2{sep}3")


@pytest.mark.parametrize(
    "sep", ["\u00a0", "\u2003", "\u3000", "\x85", "\u2028", "\x1c", "\x1f", "\ufeff"]
)
def test_unicode_and_control_separators_do_not_split(sep: str) -> None:
    assert compare_output("1 2\n", f"1{sep}2\n") == "tokens"
    assert compare_output("1\n2\n", f"1{sep}2\n") == "lines"
    assert ok(f"a{sep}b\n", f"a{sep}b")  # but a token may contain them, by text


# ----------------------------------------------------------------------- rule 2: text, case options


def test_text_identical_tokens_and_case_options() -> None:
    assert ok("hello world 3.5 nan\n", "hello world 3.5 nan")
    assert compare_output("YES\n", "yes\n") == "value"
    assert ok("YES\n", "yes\n", Checker(yes_no_case=True))
    assert ok("True\n", "TRUE\n", Checker(yes_no_case=True))
    assert compare_output("Alice\n", "alice\n", Checker(yes_no_case=True)) == "value"
    assert ok("Alice\n", "aLICE\n", Checker(case_insensitive=True))
    assert ok("1E5\n", "1e5\n", Checker(case_insensitive=True, abs_tol=0, rel_tol=0))


# ----------------------------------------------------------------------------- rule 3: integers


@pytest.mark.parametrize(
    "expected, actual",
    [
        ("5", "+5"), ("+5", "5"), ("7", "007"), ("007", "7"), ("0", "-0"), ("-0", "+000"),
        ("-12", "-0012"), ("12345678901234567890", "12345678901234567890"), (HUGE, HUGE),
        (HUGE, "000" + HUGE), ("-" + HUGE, "-0" + HUGE),
    ],
)
def test_integer_literals_of_equal_value(expected: str, actual: str) -> None:
    assert ok(expected, actual)
    assert ok(expected, actual, EXACT_NUMBERS)


@pytest.mark.parametrize(
    "expected, actual",
    [
        ("1000000000", "1000000001"),
        ("12345678901234567890", "12345678901234567891"),
        ("5", "-5"),
        ("7", "7.0"),
        ("7", "7."),
        ("7", "7e0"),
        ("123456789", "123456790.0"),  # within 1e-8 as floats: the old forged AC
        ("1000000007", "1e9"),  # likewise
        (BIG, "1e999"),  # float('1e999') == float(BIG) == inf
        (BIG, "1e400"),
        (BIG, "1" + "0" * 399 + "1"),
        (HUGE, HUGE[:-1] + "8"),  # int() would raise ValueError here
        (HUGE, HUGE + "7"),
        (HUGE, "-" + HUGE),
        (HUGE, "7.77e12344"),
        ("12", "\u0661\u0662"),  # Arabic-Indic digits
        ("42", "\uff14\uff12"),  # fullwidth digits
        ("42", "4\uff12"),
        ("1", "\U0001d7cf"),  # mathematical bold digit one
        ("1000", "1_000"),
        ("1000", "1,000"),
        ("10", "0x0a"),
        ("5", "5\x00"),
        ("5", " +-5"),
        ("0", "--0"),
        ("0", ""),
        ("1", "inf"),
        ("1", "nan"),
    ],
)
def test_integer_expected_needs_the_same_integer_literal(expected: str, actual: str) -> None:
    lax = Checker(abs_tol=0.5, rel_tol=0.5)
    for checker in (C, lax, EXACT_NUMBERS, Checker(case_insensitive=True)):
        assert compare_output(expected + "\n", actual + "\n", checker) in MISMATCHES - {None}


def test_unicode_digits_are_not_numbers_even_when_expected_is_decimal() -> None:
    assert compare_output("12.0\n", "\u0661\u0662\n") == "value"
    assert compare_output("0.5\n", "\uff10.5\n") == "value"
    assert compare_output("\u0661\u0662\n", "12\n") == "value"  # nor as expected tokens
    assert ok("\u0661\u0662\n", "\u0661\u0662\n")


# ----------------------------------------------------------------------------- rule 4: decimals


@pytest.mark.parametrize(
    "expected, actual",
    [
        ("0.3", "0.30000000000000004"),
        ("0.5", ".5"),
        (".5", "0.5000000"),
        ("2.", "2"),
        ("2.0", "2"),
        ("1e-3", "0.001"),
        ("0.001", "1E-3"),
        ("1e5", "100000"),
        ("100000.0", "1e5"),
        ("-2.5", "-25e-1"),
        ("+1.5", "1.5"),
        ("0.0", "-0.0"),
        ("0.0", "0.000000001"),  # absolute 1e-9 <= 1e-8
        ("0.0", "1e-99999999999999"),  # tiny, within abs_tol
        ("1.5", "1.500000015"),  # relative, exactly on the 1e-8 boundary (binary 1e-8 is larger)
        ("1.5", "1.5000000150000001"),
        ("1e300", "1.000000001e300"),
        ("1e-300", "1.000000001e-300"),
        ("1e400", "1.0000000001e400"),  # both beyond double range: compared exactly
        ("0." + "3" * 20_000, "0.3333333333"),
        ("0." + "3" * 20_000, "0." + "3" * 20_001),
        ("3.14", "3.14000000" + "0" * 10_000 + "1"),
        ("12345.678", "0" * 10_000 + "12345.678"),
        ("0.5", "5" + "0" * 20_000 + "e-20001"),  # exactly 0.5
    ],
)
def test_decimal_expected_accepts_numbers_within_tolerance(expected: str, actual: str) -> None:
    assert ok(expected, actual)


@pytest.mark.parametrize(
    "expected, actual",
    [
        ("1.5", "1.50000002"),  # relative 1.3e-8
        ("1.5", "1.5000000150000002"),  # just past 1.5000000150000002 * binary(1e-8)
        ("0.0", "0.00000002"),
        ("0.5", "1e999"),  # float('1e999') is inf: never equal to a finite value
        ("1.7976931348623157e308", "1.8e308"),
        ("1.7976931348623157e308", "1e999"),
        ("1e400", "1e999"),
        ("0.5", "-0.5"),
        ("0.5", "nan"),
        ("0.5", "inf"),
        ("1e-3", "1e-3.0"),
        ("0.5", "0.5.0"),
        ("0.5", "0,5"),
        ("0.5", ".5e"),
        ("0.5", "\u0660.5"),
        ("1.0", "1e9999999999999999"),  # exponent beyond 15 digits: not a number
        ("0.0", "1e-9999999999999999999"),
        ("0." + "3" * 20_000, "0.3334"),
        ("1e10", HUGE),
        ("0.5", "5" + "0" * 20_000 + "e-20002"),
    ],
)
def test_decimal_expected_rejects_what_is_not_within_tolerance(expected: str, actual: str) -> None:
    assert compare_output(expected, actual) == "value"
    assert compare_output(expected, actual, Checker(abs_tol=1e-12, rel_tol=0)) == "value"


def test_tolerance_boundary_is_exact() -> None:
    tol = Fraction(1e-8)  # the binary value of the Checker's float
    tiny = Fraction(1, 10**120)
    for a in [Fraction(3, 2), Fraction(-7, 4), Fraction(123456789, 1000), Fraction(10**30)]:
        edge = a - tol * a  # toward zero: |a - edge| == tol * max(|a|, |edge|), exactly
        assert ok(_literal(a) + "e0", _literal(edge))
        assert not ok(_literal(a) + "e0", _literal(edge - tiny * a))
    for a in [Fraction(0), Fraction(1, 10**20), Fraction(-1, 2**40)]:
        assert ok(_literal(a) + "e0", _literal(a + tol))  # the absolute edge
        assert not ok(_literal(a) + "e0", _literal(a + tol + tiny))


def _literal(x: Fraction) -> str:
    """The exact decimal literal of a fraction whose denominator is 2**i * 5**j."""
    with localcontext() as ctx:
        ctx.prec = 2000
        d = Decimal(x.numerator) / Decimal(x.denominator)
    assert Fraction(d) == x
    return format(d, "f")


def test_zero_tolerance_compares_decimals_by_text() -> None:
    assert ok("0.5\n", "0.5\n", EXACT_NUMBERS)
    assert compare_output("0.5\n", "0.50\n", EXACT_NUMBERS) == "value"


def test_extreme_tolerances_do_not_raise() -> None:
    for abs_tol in (0.0, 1e-300, 5e-324, 1e300, math.inf, math.nan, -1.0):
        for rel_tol in (0.0, 1e-8, 0.5, 1.0, 1e300, math.inf, math.nan, -1.0):
            checker = Checker(abs_tol=abs_tol, rel_tol=rel_tol)
            for exp, got in [("0.5", "0.6"), ("1e400", "-1e400"), ("0.0", "0"), ("1.5", "1e999"),
                             ("1e-300", "-1e-300"), ("0." + "1" * 5000, "1e999999999999999")]:
                assert compare_output(exp, got, checker) in MISMATCHES
            assert ok("7", "007", checker)
            assert compare_output("7", "7.0", checker) == "value"


# ----------------------------------------------------------------------------- rule 5: words


@pytest.mark.parametrize(
    "expected, actual, accepted",
    [
        ("nan", "nan", True),
        ("nan", "NaN", False),
        ("nan", "0.0", False),
        ("inf", "inf", True),
        ("inf", "1e309", False),
        ("inf", "1e999", False),
        ("inf", "Infinity", False),
        ("-inf", "-1e999", False),
        ("1_000", "1000", False),
        ("0x10", "16", False),
        ("Infinity", "inf", False),
    ],
)
def test_non_numeric_tokens_compare_by_text(expected: str, actual: str, accepted: bool) -> None:
    assert ok(expected, actual) is accepted
    assert compare_output(expected, actual.upper(), Checker(case_insensitive=True)) is (
        None if accepted or expected.lower() == actual.lower() else "value"
    )


# ----------------------------------------------------------------------------- rule 6: mismatches


@pytest.mark.parametrize(
    "expected, actual, mismatch",
    [
        ("1 2\n3 4\n", "1 2\n", "lines"),
        ("1 2\n3 4\n", "1 2\n3\n", "tokens"),
        ("1 2\n3 4\n", "1 2\n3 5\n", "value"),
        ("1 2\n3 4\n", "1 2\r\n\r\n3 5\r\n", "value"),  # blank lines and CRLF do not count
        ("1 2\n3 4\n", "1 2\v3 5\f", "value"),
        ("1 2 3\n", "1 2\u00a03\n", "tokens"),
        ("1\n2\n", "1\u20282\n", "lines"),
        ("1\n2\n", "1\x1c2\n", "lines"),
        ("1\n", "", "lines"),
    ],
)
def test_mismatch_classification(expected: str, actual: str, mismatch: str) -> None:
    assert compare_output(expected, actual) == mismatch


def test_exact_mode() -> None:
    exact = Checker(mode="exact")
    assert ok("1 2\r\n", "1 2\n\n", exact)
    assert ok("1 2\n", "1 2 \t\v\f\r\n", exact)
    assert compare_output("1 2\n", "1 2\u00a0\n", exact) == "value"
    assert compare_output("7\n", "007\n", exact) == "value"
    assert compare_output(HUGE, HUGE[:-1] + "8", exact) == "value"


# ----------------------------------------------------------------------------- call rules


def test_values_int_and_float() -> None:
    assert values_equal(2, 2) and not values_equal(2, 3)
    assert values_equal(2**200, 2**200) and not values_equal(2**200, 2**200 + 1)
    assert values_equal(2, 2.0) and values_equal(2.0, 2)
    assert values_equal(0.1 + 0.2, 0.3) and not values_equal(1.0, 1.001)
    assert values_equal(1.0, 1.001, Checker(abs_tol=1e-2))
    assert values_equal(10**16, 1e16 + 2)  # int vs float: within the tolerance
    assert values_equal(2**53 + 1, float(2**53))
    assert not values_equal(2**53 + 1, float(2**53), EXACT_NUMBERS)
    assert not values_equal(10**400, 1e308)  # float(10**400) would raise OverflowError
    assert not values_equal(1e308, 10**400)
    assert not values_equal(-(10**5000), -1.0)
    assert not values_equal(10**400, math.inf)
    assert values_equal(1.5, 1.500000015)
    assert not values_equal(1.5, 1.50000002)
    assert values_equal(5e-324, 0.0) and not values_equal(5e-324, 0.0, EXACT_NUMBERS)
    assert values_equal(1.7976931348623157e308, 1.7976931348623157e308)
    assert not values_equal(1.7976931348623157e308, -1.7976931348623157e308)


def test_values_non_finite_floats() -> None:
    nan, inf = math.nan, math.inf
    assert not values_equal(nan, nan) and not values_equal(1.0, nan) and not values_equal(nan, 1.0)
    assert values_equal(inf, inf) and values_equal(-inf, -inf) and not values_equal(inf, -inf)
    assert not values_equal(inf, 1e308) and not values_equal(1e308, inf)
    assert not values_equal(1, inf)
    assert not values_equal(10**400, inf) and not values_equal(inf, 10**400)
    assert values_equal({"$float": "nan"}, {"$float": "nan"})
    assert not values_equal({"$float": "nan"}, nan) and not values_equal(1.0, {"$float": "inf"})
    for abs_tol in (math.inf, math.nan):
        assert not values_equal(1.0, nan, Checker(abs_tol=abs_tol))
        assert not values_equal(1.0, inf, Checker(rel_tol=abs_tol))


def test_values_int_tags() -> None:
    assert values_equal({"$int": "123456789012345678901234567890"}, 123456789012345678901234567890)
    assert values_equal(123456789012345678901234567890, {"$int": "123456789012345678901234567890"})
    assert values_equal({"$int": "-0"}, {"$int": "0"}) and values_equal({"$int": "-0"}, 0)
    assert values_equal({"$int": "0099"}, {"$int": "99"}) and values_equal({"$int": "-007"}, -7)
    assert not values_equal({"$int": "-7"}, 7) and not values_equal({"$int": "7"}, {"$int": "-7"})
    assert not values_equal({"$int": "9223372036854775808"}, 9223372036854775807)
    assert values_equal({"$int": "1" + "0" * 30}, 1e30)  # within the tolerance of a float
    assert not values_equal({"$int": "1" + "0" * 30}, 1e30, EXACT_NUMBERS)  # 1e30 is not 10**30
    assert values_equal({"$int": str(2**100)}, float(2**100), EXACT_NUMBERS)
    assert not values_equal({"$int": "1" + "0" * 400}, 1e308)
    assert not values_equal({"$int": "1" + "0" * 5000}, math.inf)
    assert not values_equal(1e308, {"$int": "1" * 100_000})
    assert not values_equal({"$int": "1" * 100_000}, True)
    # beyond the int-string limit on both sides, exactly
    huge = 10**20_000 + 12345
    assert values_equal(huge, {"$int": "1" + "0" * 19_995 + "12345"})
    assert not values_equal(huge, {"$int": "1" + "0" * 19_995 + "12346"})
    assert not values_equal(huge, {"$int": "1" + "0" * 19_994 + "12345"})
    assert not values_equal(huge, {"$int": "9" * 20_001})
    assert values_equal({"$int": HUGE}, {"$int": "000" + HUGE})
    assert not values_equal({"$int": HUGE}, {"$int": HUGE + "7"})
    # malformed tags are ordinary dicts
    for odd in ("+5", "5.0", "", "\u0665", " 5", "0x5", "1e5"):
        assert values_equal({"$int": odd}, {"$int": odd})
        assert not values_equal({"$int": odd}, 5) and not values_equal(5, {"$int": odd})
    assert not values_equal({"$int": "5", "x": 1}, 5)
    assert not values_equal({"$int": 5}, 5)


def test_values_bools() -> None:
    assert values_equal(True, True) and values_equal(False, False) and not values_equal(True, False)
    assert values_equal(True, 1) and values_equal(False, 0) and not values_equal(True, 2)
    assert values_equal(True, 1.0) and not values_equal(True, 1.0000000001)
    assert not values_equal(True, "True") and not values_equal(False, None)
    assert not values_equal(True, [1])
    assert not values_equal(True, {"$int": "1"})
    # a number is expected: a bool never equals it
    assert not values_equal(1, True) and not values_equal(0, False) and not values_equal(1.0, True)
    assert not values_equal({"$int": "1"}, True) and not values_equal([1, 0], [True, False])


def test_values_other_types() -> None:
    assert values_equal(None, None) and not values_equal(None, 0) and not values_equal(0, None)
    assert not values_equal(None, []) and not values_equal("1", 1) and not values_equal(1, "1")
    assert values_equal("Ab", "Ab") and not values_equal("Ab", "ab")
    assert values_equal("Ab", "aB", Checker(case_insensitive=True))
    assert values_equal([1, {"a": 0.1 + 0.2}], [1.0, {"a": 0.3}])
    assert not values_equal([1, 2], [1, 2, 3]) and not values_equal([1, 2], [2, 1])
    assert not values_equal({"a": 1}, {"a": 1, "b": 2}) and not values_equal({"a": 1}, {"b": 1})
    assert values_equal({"a": 1, "b": [2]}, {"b": [2], "a": 1})
    assert values_equal({"$set": [1, 2]}, {"$set": [1, 2]}) and not values_equal({"$set": [1]}, [1])
    assert values_equal({"$bytes": "00ff"}, {"$bytes": "00ff"})
    assert not values_equal({"$bytes": "00"}, "00")
    assert not values_equal({"$type": "generator"}, [0, 1, 2])
    for odd in [(1, 2), {1, 2}, b"x", 1j, object(), Decimal(1), Fraction(1), range(3), ...]:
        assert not values_equal(odd, odd) and not values_equal([odd], [odd])
        assert not values_equal(1, odd) and not values_equal(odd, 1) and not values_equal("x", odd)


def _nest(depth: int, leaf: Any, kind: str = "list") -> Any:
    value = leaf
    for i in range(depth):
        if kind == "list":
            value = [value]
        else:
            value = {"k": value, "i": i} if kind == "dict" else [i, value]
    return value


@pytest.mark.parametrize("kind", ["list", "dict", "mixed"])
def test_values_deep_nesting_never_recurses(kind: str) -> None:
    depth = 100_000
    assert values_equal(_nest(depth, 1, kind), _nest(depth, 1.0, kind))
    assert values_equal(_nest(depth, {"$int": "1" + "0" * 30}, kind), _nest(depth, 10**30, kind))
    assert not values_equal(_nest(depth, 1, kind), _nest(depth, 2, kind))
    assert not values_equal(_nest(depth, 1, kind), _nest(depth - 1, 1, kind))
    assert not values_equal(_nest(depth, 1, kind), _nest(depth, True, kind))
    deep = _nest(depth, None, kind)
    assert values_equal(deep, deep)


def test_values_cycles_terminate() -> None:
    a: list[Any] = [1]
    a.append(a)
    b: list[Any] = [1]
    b.append(b)
    assert values_equal(a, b)
    c: list[Any] = [2]
    c.append(c)
    assert not values_equal(a, c)
    d: dict[str, Any] = {}
    d["self"] = d
    assert values_equal(d, d)


# ----------------------------------------------------------------------------- fuzzing

ASCII_TEXT = st.text(alphabet=st.characters(max_codepoint=127))
DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=30)
SIGN = st.sampled_from(["", "+", "-"])


@st.composite
def numeric_tokens(draw: st.DrawFn) -> str:
    """Integer, decimal and exponent literals, some huge, plus near-misses."""
    kind = draw(st.integers(0, 6))
    if kind == 0:
        return draw(SIGN) + draw(DIGITS)
    if kind == 1:
        return draw(SIGN) + draw(DIGITS) + "." + draw(DIGITS | st.just(""))
    if kind == 2:
        return draw(SIGN) + "." + draw(DIGITS)
    if kind == 3:
        mant = draw(st.sampled_from(["1", "9.99", ".5", "0", "7."]))
        exp = draw(st.sampled_from(["308", "309", "999", "-324", "-400", "99999999999999", "9" * 16,
                                    "0" * 5000 + "3", "-0", "+12"]))
        return draw(SIGN) + mant + draw(st.sampled_from("eE")) + exp
    if kind == 4:  # 10_000+ digits
        n = draw(st.integers(10_000, 12_000))
        body = draw(st.sampled_from(["9", "1", "0"])) * n
        return draw(SIGN) + body + draw(st.sampled_from(["", ".5", "e-" + str(n), "e5"]))
    if kind == 5:
        return draw(st.sampled_from([
            "nan", "NaN", "inf", "-inf", "Infinity", "1e999", "-0", "+0", "007", "1_000", "0x1f",
            "1e", "e5", ".", "-", "+", "1..2", "1e5.5",
            "\u0661\u0662", "\uff14\uff12", "\u00b2", "\u2155", "\U0001d7cf",
        ]))
    odd = st.sampled_from(["\u0660", "\u00b9", "\uff10", "_", "\x00", "\u0301"])
    return draw(SIGN) + draw(DIGITS) + draw(odd)


ANY_TEXT = (
    st.text()
    | ASCII_TEXT
    | st.binary().map(lambda b: b.decode("utf-8", "surrogateescape"))
    | st.binary().map(lambda b: b.decode("latin-1"))
)
TOKEN = numeric_tokens() | ANY_TEXT.filter(lambda s: bool(s))
SEPARATOR = st.sampled_from(
    [" ", "\n", "\t", "\r\n", "\v", "\f", "  ", "\u00a0", "\x1c", "\u2028", "\x85"]
)


@st.composite
def outputs(draw: st.DrawFn) -> str:
    tokens = draw(st.lists(TOKEN, max_size=6))
    return "".join(t + draw(SEPARATOR) for t in tokens)


CHECKERS = st.builds(
    Checker,
    mode=st.sampled_from(["tokens", "tokens", "tokens", "exact"]),
    abs_tol=st.sampled_from([1e-8, 0.0, 1e-3, 0.5, 5e-324, 1e300, math.inf, math.nan]),
    rel_tol=st.sampled_from([1e-8, 0.0, 1e-6, 1.0, math.inf]),
    yes_no_case=st.booleans(),
    case_insensitive=st.booleans(),
)

FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(outputs(), outputs(), CHECKERS)
def test_compare_output_never_raises(expected: str, actual: str, checker: Checker) -> None:
    assert compare_output(expected, actual, checker) in MISMATCHES
    assert compare_output(expected, expected, checker) is None


@FUZZ
@given(TOKEN, TOKEN, CHECKERS)
def test_single_tokens_never_raise(expected: str, actual: str, checker: Checker) -> None:
    assert compare_output(expected, actual, checker) in MISMATCHES
    assert compare_output(actual, expected, checker) in MISMATCHES


@FUZZ
@given(numeric_tokens().filter(lambda t: INT_LITERAL.fullmatch(t) is not None) | (SIGN.flatmap(
    lambda s: DIGITS.map(lambda d: s + d))), TOKEN, CHECKERS)
def test_an_integer_expected_never_matches_a_non_integer_literal(
    expected: str, actual: str, checker: Checker
) -> None:
    assume(INT_LITERAL.fullmatch(actual) is None)
    assume(actual and not any(c in ASCII_SPACE for c in actual))  # one output token
    if checker.mode == "exact":
        checker = Checker(case_insensitive=checker.case_insensitive, abs_tol=checker.abs_tol)
    assert compare_output(expected + "\n", actual + "\n", checker) == "value"


@FUZZ
@given(st.tuples(SIGN, st.text(alphabet="0", max_size=3), DIGITS).map("".join),
       st.tuples(SIGN, st.text(alphabet="0", max_size=3), DIGITS).map("".join))
def test_integer_literals_match_exactly_by_value(expected: str, actual: str) -> None:
    assert ok(expected, actual) is (int(expected) == int(actual))


@st.composite
def decimal_literals(draw: st.DrawFn) -> str:
    lit = draw(SIGN) + draw(st.text(alphabet="0123456789", min_size=1, max_size=22))
    lit += draw(st.sampled_from(["", ".", "."])) + draw(st.text(alphabet="0123456789", max_size=22))
    if draw(st.booleans()):
        lit += "e" + str(draw(st.integers(-40, 40)))
    return lit


TOLERANCES = st.sampled_from(
    [(1e-8, 1e-8), (0.0, 1e-8), (1e-8, 0.0), (1e-3, 0.0), (0.0, 1e-15), (1e-20, 1e-20)]
)


@FUZZ
@given(decimal_literals(), decimal_literals(), TOLERANCES)
def test_tolerance_matches_exact_rational_arithmetic(
    expected: str, actual: str, tol: tuple[float, float]
) -> None:
    assume(("." in expected or "e" in expected) and expected != actual)
    abs_tol, rel_tol = tol
    a, b = Fraction(Decimal(expected)), Fraction(Decimal(actual))
    within = abs(a - b) <= max(Fraction(abs_tol), Fraction(rel_tol) * max(abs(a), abs(b)))
    assert ok(expected, actual, Checker(abs_tol=abs_tol, rel_tol=rel_tol)) is within


@FUZZ
@given(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-60, 60),
    st.sampled_from([1e-8, 1e-3, 0.0]),
)
def test_tolerance_edges_match_exact_arithmetic(x: float, shift: int, rel_tol: float) -> None:
    # a pair at (and one digit beyond) the relative edge, decided like the exact oracle
    a = Fraction(x)
    b = a * (1 + Fraction(rel_tol)) + Fraction(shift, 10**70) * abs(a)
    expected, actual = _literal(a) + "e0", _literal(b)
    if rel_tol:
        checker = Checker(abs_tol=0.0, rel_tol=rel_tol)
        within = abs(a - b) <= Fraction(rel_tol) * max(abs(a), abs(b))
    else:
        checker = Checker(abs_tol=1e-300, rel_tol=0.0)
        within = abs(a - b) <= Fraction(1e-300)
    if abs(a) < DOUBLE_EDGE <= abs(b):  # b would be inf as a double
        within = False
    assert ok(expected, actual, checker) is within


# values_equal ----------------------------------------------------------------------

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats()
    | st.floats(allow_nan=False, width=32)
    | st.text(max_size=8)
    | st.sampled_from(
        [0, 1, -1, 2**63, -(2**63) - 1, 2**64, 0.0, -0.0, 1.0, 5e-324, 1.7976931348623157e308]
    )
)
TAGS = (
    st.builds(lambda s, d: {"$int": s + d}, st.sampled_from(["", "-"]), DIGITS)
    | st.builds(lambda n: {"$int": str(n)}, st.integers(min_value=-(10**60), max_value=10**60))
    | st.builds(lambda s: {"$int": s}, st.text(max_size=6))
    | st.sampled_from([{"$float": "nan"}, {"$float": "inf"}, {"$float": "-inf"}, {"$bytes": "00ff"},
                       {"$type": "generator"}, {"$int": "9" * 5000}, {"$int": "-" + "1" * 400}])
    | st.builds(lambda v: {"$set": v}, st.lists(st.integers(), max_size=3))
)
JSON = st.recursive(
    SCALARS | TAGS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=3), children, max_size=4)
    ),
    max_leaves=25,
)


def _has_nan(v: Any) -> bool:
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, float) and math.isnan(x):
            return True
        if isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
    return False


def _copy(v: Any) -> Any:
    if isinstance(v, list):
        return [_copy(x) for x in v]
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    return v


@FUZZ
@given(JSON, JSON, CHECKERS)
def test_values_equal_never_raises(x: Any, y: Any, checker: Checker) -> None:
    assert values_equal(x, y, checker) in (True, False)
    assert values_equal(y, x, checker) in (True, False)


@FUZZ
@given(JSON, CHECKERS)
def test_values_equal_is_reflexive_without_nan(value: Any, checker: Checker) -> None:
    assume(not _has_nan(value))
    assert values_equal(value, _copy(value), checker)
    assert values_equal(value, value, checker)


@FUZZ
@given(JSON, st.integers(1, 3000), st.sampled_from(["list", "dict", "mixed"]))
def test_values_equal_never_raises_deeply_nested(leaf: Any, depth: int, kind: str) -> None:
    deep = _nest(depth, leaf, kind)
    assert values_equal(deep, _nest(depth, leaf, kind)) is (not _has_nan(leaf))
    assert values_equal(deep, _nest(depth, [leaf], kind)) in (True, False)


@FUZZ
@given(
    st.integers(),
    st.floats(),
    st.sampled_from([(1e-8, 1e-8), (0.0, 0.0), (1e-3, 0.0), (0.0, 0.5)]),
)
def test_int_float_tolerance_is_exact(i: int, f: float, tol: tuple[float, float]) -> None:
    abs_tol, rel_tol = tol
    checker = Checker(abs_tol=abs_tol, rel_tol=rel_tol)
    if not math.isfinite(f):
        expected_answer = False
    else:
        a, b = Fraction(i), Fraction(f)
        bound = max(Fraction(abs_tol), Fraction(rel_tol) * max(abs(a), abs(b)))
        expected_answer = abs(a - b) <= bound
    assert values_equal(i, f, checker) is expected_answer
    assert values_equal(f, i, checker) is expected_answer
    tag = {"$int": str(i)}
    assert values_equal(tag, f, checker) is expected_answer
    assert values_equal(tag, i, checker) and values_equal(i, tag, checker)


def test_module_surface() -> None:
    assert _compare.__all__ == ["compare_output", "values_equal"]


# ------------------------------------------------- lazy comparison: same answers, bounded cost


def _eager_split(text: str) -> list[str]:
    return _compare._TOKEN.findall(text)


def _eager_classify(expected: str, actual: str) -> str:
    """The comparator's former, eager classification (whole-text split), as the oracle."""
    def lines(text: str) -> list[list[str]]:
        return [t for line in _compare._LINE_BREAK.split(text) if (t := _eager_split(line))]

    exp_lines, got_lines = lines(expected), lines(actual)
    if len(exp_lines) != len(got_lines):
        return "lines"
    if any(len(e) != len(g) for e, g in zip(exp_lines, got_lines, strict=True)):
        return "tokens"
    return "value"


def _eager_compare(expected: str, actual: str, checker: Checker) -> str | None:
    if checker.mode == "exact":
        norm_exp = expected.replace("\r\n", "\n").rstrip(ASCII_SPACE)
        norm_got = actual.replace("\r\n", "\n").rstrip(ASCII_SPACE)
        return None if norm_exp == norm_got else _eager_classify(expected, actual)
    exp, got = _eager_split(expected), _eager_split(actual)
    if exp == got:
        return None
    if len(exp) == len(got):
        abs_tol, rel_tol = _compare._tolerances(checker)
        if all(_compare._token_equal(e, g, checker, abs_tol, rel_tol)
               for e, g in zip(exp, got, strict=True)):
            return None
    return _eager_classify(expected, actual)


LAYOUT_TOKENS = st.sampled_from(
    ["1", "2", "x", "1.5", "YES", "yes", "\x1c", "a\u00a0b", "é", "\u2028"])
LAYOUT_SEPARATORS = st.sampled_from(
    [" ", "\t", "\n", "\r\n", "\r", "\v", "\f", "  \n \n", "\n\n", " \t "])


@st.composite
def layouts(draw: st.DrawFn) -> str:
    """Small outputs made of few distinct tokens: lines and token counts often agree."""
    tokens = draw(st.lists(LAYOUT_TOKENS, max_size=8))
    lead = draw(st.sampled_from(["", " ", "\n", " \n\t"]))
    return lead + "".join(t + draw(LAYOUT_SEPARATORS) for t in tokens)


@FUZZ
@given(layouts() | outputs(), layouts() | outputs(), CHECKERS)
def test_lazy_comparison_agrees_with_the_eager_one(expected: str, actual: str,
                                                   checker: Checker) -> None:
    assert compare_output(expected, actual, checker) == _eager_compare(expected, actual, checker)
    assert _compare._classify(expected, actual) == _eager_classify(expected, actual)


MIB = 1 << 20
HOSTILE_OUTPUTS = {
    "a-lines": "a\n" * (4 * MIB),
    "replacement-chars": "\ufffd" * (8 * MIB) + "\U0001f600",
    "blank-lines": "\n" * (8 * MIB),
    "blank-lines-with-spaces": " \t\n" * (3 * MIB),
    "one-long-line": "a " * (4 * MIB),
    "control-separated": "\x1c " * (4 * MIB),
    "control-lines": "\x1c\n" * (4 * MIB),
    "unicode-spaces": "\u3000" * (4 * MIB),
    "one-huge-token": "9" * (8 * MIB),
}


@pytest.mark.parametrize("expected", ["5\n", "1 2 3\n4\n", "a\n" * 10])
@pytest.mark.parametrize("name", sorted(HOSTILE_OUTPUTS))
def test_comparing_a_hostile_output_costs_c_speed_only(name: str, expected: str) -> None:
    actual = HOSTILE_OUTPUTS[name]
    for checker in (C, Checker(mode="exact"), Checker(case_insensitive=True)):
        start = time.perf_counter()
        got = compare_output(expected, actual, checker)
        elapsed = time.perf_counter() - start
        assert got in MISMATCHES
        assert elapsed < 0.5, (name, checker.mode, elapsed)  # ~10-50 ms; the eager way took seconds


def test_hostile_outputs_are_judged_by_the_rules() -> None:
    assert compare_output("5\n", "a\n" * (4 * MIB)) == "lines"
    assert compare_output("a\n" * 10, "a\n" * (4 * MIB)) == "lines"
    assert compare_output("a\n" * 10, "a\n" * 10 + "\n" * (4 * MIB)) is None
    assert compare_output("1 2 3\n4\n", "a " * (4 * MIB)) == "lines"
    assert compare_output("1 2 3\n", "a " * (4 * MIB)) == "tokens"
    assert compare_output("5\n", "\ufffd" * MIB + "\U0001f600") == "value"
    # extra whitespace is allowed, however much of it
    assert compare_output("5\n", " " * (8 * MIB) + "5" + "\n\t " * MIB) is None
    assert compare_output("5 6\n", "5" + " \n" * (4 * MIB) + "6") is None
    assert compare_output("5 6\n", "5" + " \n" * (4 * MIB) + "6", Checker(mode="exact")) == "lines"


def test_a_large_legitimate_output_stays_fast() -> None:
    expected = "\n".join(map(str, range(300_000))) + "\n"
    start = time.perf_counter()
    assert compare_output(expected, expected.replace("\n", " \r\n")) is None
    assert compare_output(expected, expected + "7\n") == "lines"
    assert compare_output(expected, expected[:-2] + "8\n") == "value"
    assert compare_output(expected, expected.replace("\n", " 1\n", 1)) == "tokens"
    assert time.perf_counter() - start < 2.0
