"""Expected-output shapes (stdio text and call values)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairbench_async.core.types import Test as HiddenTest
from pairbench_async.protocol.shapes import SHAPES, output_shape, text_shape, value_shape


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        (None, "empty"),
        ("", "empty"),
        ("  \n\n", "empty"),
        ("42\n", "token"),
        ("  -3.5  ", "token"),
        ("YES\n", "binary"),
        ("no", "binary"),
        ("Impossible\n", "binary"),
        ("True", "binary"),
        ("1 2 3\n", "line"),
        ("yes no", "line"),
        ("1 2\n3 4\n", "grid"),
        ("1 2 \n3 4  \n\n\n", "grid"),
        ("a b c\nd e f\ng h i", "grid"),
        ("1\n2\n", "multiline"),
        ("1 2\n3\n", "multiline"),
        ("1 2\n\n3 4\n", "multiline"),
        ("YES\nNO\n", "multiline"),
    ],
)
def test_text_shapes(text: str | None, shape: str) -> None:
    assert text_shape(text) == shape
    assert output_shape(HiddenTest(id="t", input="", output=text)) == shape


@pytest.mark.parametrize(
    ("value", "shape"),
    [
        (True, "binary"),
        (False, "binary"),
        (5, "token"),
        (2.5, "token"),
        (None, "token"),
        ("abc def", "token"),
        ("a\nb", "multiline"),
        ([], "line"),
        ([1, "x", None], "line"),
        ([[1, 2], [3, 4]], "grid"),
        ([[1, 2], [3]], "multiline"),
        ([[1, 2]], "multiline"),
        ([[1], [2]], "multiline"),
        ([[[1, 2]], [[3, 4]]], "multiline"),
        ({"a": 1}, "multiline"),
    ],
)
def test_value_shapes(value: Any, shape: str) -> None:
    assert value_shape(value) == shape
    assert output_shape(HiddenTest(id="t", args=[1], expected=value)) == shape


def test_call_test_without_expected_value_is_empty() -> None:
    test = HiddenTest(id="t", args=[], expected=msgspec.UNSET)
    assert test.kind == "call"
    assert output_shape(test) == "empty"


def test_every_shape_is_listed() -> None:
    assert set(SHAPES) == {"token", "line", "binary", "grid", "multiline", "empty"}


_token = st.text(alphabet="abcxyz0123456789-.", min_size=1, max_size=6).filter(
    lambda t: t.lower() not in {"yes", "no"}
)


@given(st.integers(2, 6), st.integers(2, 6), st.data())
def test_equal_width_rows_are_a_grid(rows: int, width: int, data: st.DataObject) -> None:
    lines = [
        " ".join(data.draw(st.lists(_token, min_size=width, max_size=width))) for _ in range(rows)
    ]
    assert text_shape("\n".join(lines) + "\n") == "grid"
    assert value_shape([line.split() for line in lines]) == "grid"


@given(st.lists(_token, min_size=2, max_size=10))
def test_one_row_of_tokens_is_a_line(tokens: list[str]) -> None:
    assert text_shape(" ".join(tokens)) == "line"
    assert value_shape(tokens) == "line"
