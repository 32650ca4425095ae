"""The evidence for a hint: what a feedback model could be shown about a failing scenario.

:func:`build_evidence` gathers, for the representative tests of a scenario, the input,
the expected and the candidate's output, the reference trace and a mismatch summary
(failure type, counts, larger/smaller: the symptom itself, with no verbatim data), plus
the problem, the candidate's code and the reference. It is the part of a hint that reads
hidden data, kept apart from the level masks that decide how much of it a level sees
(:mod:`.hints`) and from the prompt that shows it (:mod:`.feedback_prompt`). Evidence is
built from hidden data, so it is shown only to the *feedback* model, never to the
candidate.

What the program wrote is hidden data too (its output on a hidden test is a function of
that test's input), and the program chose it: the only program-derived text here is the
candidate output (stdout, or a call's returned value as JSON), bounded to
:data:`PROGRAM_TEXT_CHARS`; the failure type is a word of the closed vocabulary
(:mod:`..core.failures`); and a count the program chose (its output lines, the values on
a line, a returned list's items) is shown exactly only up to twice the expected count
plus two. Stderr, exception messages and tracebacks are never evidence. Pure module: no
I/O, no randomness.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, get_args

import msgspec

from ..core.errors import ConfigError
from ..core.failures import runtime_phrase
from ..core.types import Instance, Test, TestResult
from .scenarios import Scenario, failure_type
from .shapes import BINARY_TOKENS, Shape, output_shape

__all__ = [
    "EVIDENCE_FIELDS",
    "PROGRAM_TEXT_CHARS",
    "Evidence",
    "EvidenceField",
    "FailureEvidence",
    "bound_program_text",
    "build_evidence",
    "describe_failure",
    "describe_scenario",
    "render_value",
    "summarize_mismatch",
]

EvidenceField = Literal[
    "problem",
    "failing_inputs",
    "expected_outputs",
    "candidate_outputs",
    "candidate_code",
    "reference_code",
    "reference_trace",
]

EVIDENCE_FIELDS: Final[tuple[EvidenceField, ...]] = get_args(EvidenceField)


class FailureEvidence(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One representative failing test as the feedback model may see it."""

    id: str
    failure: str
    shape: Shape
    summary: str
    input: str | None = None
    expected: str | None = None
    actual: str | None = None
    trace: tuple[int, ...] | None = None


class Evidence(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Everything a feedback model could be shown for one hint; masked per level."""

    problem: str | None = None
    scenario: str = ""
    tests: tuple[FailureEvidence, ...] = ()
    candidate_code: str | None = None
    reference_code: str | None = None


#: Characters of a program's output kept as evidence (what a feedback model is shown).
PROGRAM_TEXT_CHARS: Final = 1500
#: The mark of a cut program output: without a number, since the length is the program's choice.
_CUT: Final = "\n... (the rest of the program's output is not shown)"


def bound_program_text(text: str) -> str:
    """A program's output cut to :data:`PROGRAM_TEXT_CHARS` characters (idempotent)."""
    if len(text) <= PROGRAM_TEXT_CHARS or (
        len(text) == PROGRAM_TEXT_CHARS + len(_CUT) and text.endswith(_CUT)
    ):
        return text
    return text[:PROGRAM_TEXT_CHARS] + _CUT


def _count(chosen: int, expected: int) -> str:
    """A count the program chose, exact up to twice the expected count plus two: beyond
    that, the length of its output could spell a hidden number in the prompt."""
    bound = 2 * expected + 2
    return str(chosen) if chosen <= bound else f"more than {bound}"


def render_value(value: Any) -> str:
    """A JSON value as compact text (how call-test data is shown)."""
    return msgspec.json.encode(value).decode()


def _call_input(test: Test) -> str:
    parts = [f"args = {render_value(test.args or [])}"]
    if test.kwargs:
        parts.append(f"kwargs = {render_value(test.kwargs)}")
    return "; ".join(parts)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _number(token: Any) -> float | None:
    if isinstance(token, bool):
        return None
    if isinstance(token, float):
        return token
    if isinstance(token, int):  # a returned integer may be far beyond float range
        try:
            return float(token)
        except OverflowError:
            return math.inf if token > 0 else -math.inf
    if isinstance(token, str):
        try:
            return float(token)
        except ValueError:
            return None
    return None


def _compare_scalars(actual: Any, expected: Any, verb: str) -> str:
    a, e = _number(actual), _number(expected)
    if a is not None and e is not None:
        return f"{verb} a {'larger' if a > e else 'smaller'} number than expected"
    if isinstance(expected, bool) or (
        isinstance(expected, str) and expected.lower() in BINARY_TOKENS
    ):
        return f"{verb} the opposite yes/no answer"
    return f"{verb} a different value than expected"


_FAILURES: Final = {
    "timeout": "exceeds the time limit",
    "memory": "exceeds the memory limit",
    "output_limit": "prints more output than the limit allows",
    "sandbox_fault": "could not be evaluated (sandbox fault)",
    "wrong_lines": "prints the wrong number of output lines",
    "wrong_tokens": "prints the wrong number of values on some output line",
    "wrong_value": "produces a wrong value",
}


def describe_failure(failure: str) -> str:
    """A failure type in words, e.g. ``runtime:ZeroDivisionError`` → stops with it.

    Worded from the closed vocabulary only (:func:`..core.failures.runtime_phrase`): a
    runtime word outside it (an old record's key) is "a runtime error", never repeated.
    """
    if failure.startswith("runtime:"):
        return f"stops with {runtime_phrase(failure.split(':', 1)[1])}"
    return _FAILURES.get(failure, "fails")


_SHAPE_WORDS: Final = {
    "token": "a single value",
    "line": "one line of several values",
    "binary": "a yes/no-style answer",
    "grid": "a grid of values",
    "multiline": "several lines",
    "empty": "no output",
}


def describe_scenario(scenario: Scenario) -> str:
    """The scenario in words, from its key only (no test data)."""
    n = scenario.size
    text = f"{n} hidden test{'s' if n != 1 else ''} on which the program "
    text += describe_failure(scenario.failure)
    if scenario.shape is not None:
        text += f"; the expected answer is {_SHAPE_WORDS[scenario.shape]}"
    if scenario.trace is not None:
        text += "; the reference solution takes the same execution path on all of them"
    return text


def summarize_mismatch(test: Test, result: TestResult) -> str:
    """How the result differs from the expected output, in counts and directions only."""
    failure = failure_type(result)
    if test.kind == "call":
        if failure != "wrong_value" or result.value is msgspec.UNSET:
            return f"the program {describe_failure(failure)}"
        return _summarize_value(result.value, test.expected)
    expected = [line.split() for line in (test.output or "").rstrip().splitlines()]
    actual = [line.split() for line in result.stdout.rstrip().splitlines()]
    if failure == "wrong_lines" or (failure == "wrong_value" and len(actual) != len(expected)):
        return (
            f"the program prints {_count(len(actual), len(expected))} output "
            f"line{'s' if len(actual) != 1 else ''} "
            f"where {len(expected)} {'are' if len(expected) != 1 else 'is'} expected"
        )
    for row, (got, want) in enumerate(zip(actual, expected, strict=False), start=1):
        if len(got) != len(want):
            return (
                f"the {_ordinal(row)} output line has {_count(len(got), len(want))} value"
                f"{'s' if len(got) != 1 else ''} where {len(want)} "
                f"{'are' if len(want) != 1 else 'is'} expected"
            )
        for col, (a, e) in enumerate(zip(got, want, strict=True), start=1):
            if a != e and not _close(a, e):
                where = f" (first difference: {_ordinal(col)} value of the {_ordinal(row)} line)"
                return _compare_scalars(a, e, "the program prints") + where
    return f"the program {describe_failure(failure)}"


def _close(a: str, e: str) -> bool:
    x, y = _number(a), _number(e)
    return x is not None and y is not None and abs(x - y) <= 1e-8 * max(1.0, abs(y))


def _summarize_value(actual: Any, expected: Any) -> str:
    if actual is None and expected is not None:
        return "the function returns None where a value is expected"
    if isinstance(expected, list) and isinstance(actual, list):
        if len(actual) != len(expected):
            return (
                f"the function returns a list of {_count(len(actual), len(expected))} item"
                f"{'s' if len(actual) != 1 else ''} where {len(expected)} are expected"
            )
        return "the function returns a list of the right length with wrong items"
    if type(actual) is not type(expected) and _number(actual) is None:
        return (
            f"the function returns a {type(actual).__name__} where a "
            f"{type(expected).__name__} is expected"
        )
    return _compare_scalars(actual, expected, "the function returns")


def build_evidence(
    instance: Instance,
    scenario: Scenario,
    representatives: Sequence[str],
    results: Mapping[str, TestResult],
    traces: Mapping[str, Sequence[int]],
    candidate_code: str,
) -> Evidence:
    """All evidence for a hint on ``scenario`` grounded in ``representatives`` (unmasked)."""
    by_id = {test.id: test for test in instance.tests}
    tests: list[FailureEvidence] = []
    for test_id in representatives:
        test, result = by_id.get(test_id), results.get(test_id)
        if test is None or result is None:
            raise ConfigError(f"representative test {test_id!r} has no test or no result")
        if test.kind == "call":
            shown_input = _call_input(test)
            expected = render_value(test.expected) if test.expected is not msgspec.UNSET else ""
            actual = render_value(result.value) if result.value is not msgspec.UNSET else ""
        else:
            shown_input, expected, actual = test.input or "", test.output or "", result.stdout
        actual = bound_program_text(actual)
        tests.append(
            FailureEvidence(
                id=test_id,
                failure=failure_type(result),
                shape=output_shape(test),
                summary=summarize_mismatch(test, result),
                input=shown_input,
                expected=expected,
                actual=actual,
                trace=tuple(sorted(set(traces.get(test_id, ())))),
            )
        )
    return Evidence(
        problem=instance.problem,
        scenario=describe_scenario(scenario),
        tests=tuple(tests),
        candidate_code=candidate_code,
        reference_code=instance.reference,
    )
