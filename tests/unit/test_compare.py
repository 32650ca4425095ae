"""The comparator, by hand."""

from __future__ import annotations

import pytest

from pairbench_async.core.types import Checker
from pairbench_async.sandbox.compare import compare_output, values_equal


@pytest.mark.parametrize(
    "expected, actual, checker, mismatch",
    [
        ("1 2\n3\n", "1 2 3", Checker(), None),  # whitespace folded
        ("0.3\n", "0.30000000000000004\n", Checker(), None),  # within 1e-8
        ("1000000000\n", "1000000001\n", Checker(), "value"),  # ints exact, even big ones
        ("12345678901234567890\n", "12345678901234567891\n", Checker(), "value"),
        ("1.5\n", "1.50000002\n", Checker(), "value"),  # relative 1.3e-8 > 1e-8
        ("YES\n", "yes\n", Checker(), "value"),
        ("YES\n", "yes\n", Checker(yes_no_case=True), None),
        ("Alice\n", "alice\n", Checker(yes_no_case=True), "value"),
        ("Alice\n", "alice\n", Checker(case_insensitive=True), None),
        ("1 2\n3 4\n", "1 2\n", Checker(), "lines"),
        ("1 2\n3 4\n", "1 2\n3\n", Checker(), "tokens"),
        ("1 2\n", "1  2\n", Checker(mode="exact"), "value"),
        ("1 2\r\n", "1 2\n\n", Checker(mode="exact"), None),
        ("nan\n", "nan\n", Checker(), None),
        ("inf\n", "1e309\n", Checker(), "value"),
        ("1_000\n", "1000\n", Checker(), "value"),
    ],
)
def test_compare_output(expected: str, actual: str, checker: Checker, mismatch: str | None) -> None:
    assert compare_output(expected, actual, checker) == mismatch


def test_values_equal_follows_python_eq_with_nested_tolerance() -> None:
    c = Checker()
    assert values_equal(2, 2.0, c) and values_equal(True, 1, c) and not values_equal(True, 2, c)
    assert values_equal([1, {"a": 0.1 + 0.2}], [1.0, {"a": 0.3}], c)
    assert not values_equal([1, 2], [1, 2, 3], c)
    assert not values_equal({"a": 1}, {"a": 1, "b": 2}, c)
    assert not values_equal("1", 1, c) and values_equal(None, None, c) and not values_equal(None, 0, c)
    assert values_equal({"$set": [1, 2]}, {"$set": [1, 2]}, c)
    assert not values_equal(1.0, 1.001, c) and values_equal(1.0, 1.001, Checker(abs_tol=1e-2))
