"""Code extraction from candidate replies."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairbench_async.protocol.extract import extract_code

PROGRAM = "n = int(input())\nprint(n * 2)\n"


@pytest.mark.parametrize("tag", ["python", "py", "Python3", "PY3", ""])
def test_tags_and_prose(tag: str) -> None:
    reply = f"Here is the fix.\n\n```{tag}\n{PROGRAM}```\n\nThis doubles n."
    assert extract_code(reply) == PROGRAM


def test_last_python_block_wins() -> None:
    reply = f"First try:\n```python\nprint(1)\n```\nBetter:\n```python\n{PROGRAM}```\n"
    assert extract_code(reply) == PROGRAM


def test_python_tag_beats_a_later_untagged_output_block() -> None:
    reply = f"```python\n{PROGRAM}```\nExample output:\n```\n6\n```\n"
    assert extract_code(reply) == PROGRAM


def test_untagged_block_that_parses_beats_a_later_one_that_does_not() -> None:
    reply = f"```\n{PROGRAM}```\nOutput:\n```\n6 is the answer!\n```\n"
    assert extract_code(reply) == PROGRAM


def test_other_tags_are_used_only_when_they_hold_python() -> None:
    assert extract_code(f"```text\n{PROGRAM}```") == PROGRAM
    assert extract_code("```bash\n$ python main.py < in.txt\n```") is None
    assert extract_code('```json\n{"a": 1\n```') is None


def test_unclosed_final_fence_runs_to_the_end() -> None:
    assert extract_code(f"Fixed:\n```python\n{PROGRAM}") == PROGRAM


def test_longer_fences_tildes_crlf_and_indentation() -> None:
    inner = 'print("```")\n'
    assert extract_code(f"````python\n{inner}````\n") == inner
    assert extract_code(f"~~~python\n{PROGRAM}~~~\n") == PROGRAM
    assert (
        extract_code(f"```python\r\n{PROGRAM.replace(chr(10), chr(13) + chr(10))}```\r\n")
        == PROGRAM
    )
    indented = "1. Fix:\n   ```python\n   x = 1\n   print(x)\n   ```\n"
    assert extract_code(indented) == "x = 1\nprint(x)\n"


def test_bare_code_without_fences_is_accepted_when_it_parses() -> None:
    assert extract_code(PROGRAM) == PROGRAM
    assert extract_code("def f(x):\n    return x + 1") == "def f(x):\n    return x + 1\n"


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "Done",
        "42",
        "I could not find the bug.",
        "The code is correct as it is.",
        "```python\n\n```",
    ],
)
def test_no_code(reply: str) -> None:
    assert extract_code(reply) is None


_lines = st.lists(
    st.sampled_from(
        ["x = 1", "print(x)", "for i in range(3):", "    x += i", "y = [x, 2]", "pass"]
    ),
    min_size=1,
    max_size=8,
)


@given(
    _lines, st.text(alphabet="abc .,!\n", max_size=40), st.text(alphabet="abc .,!\n", max_size=40)
)
def test_fenced_code_round_trips_through_prose(lines: list[str], before: str, after: str) -> None:
    code = "\n".join(lines) + "\n"
    reply = f"{before}\n```python\n{code}```\n{after}"
    assert extract_code(reply) == code
