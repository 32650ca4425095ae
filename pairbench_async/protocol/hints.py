"""The six hint levels of Table II (seed 000), their evidence masks and feedback prompts.

A hint level is only a controlled variable if the feedback model cannot say more than
the level allows; so each level is data here: what it reveals, the prompt template the
feedback model gets, the *evidence mask* (what the feedback model may see), and a
level-safe fallback hint for when every generated hint leaked (see ``_leakage``).

| Level | Reveals                  | Evidence the feedback model sees                         |
|-------|--------------------------|----------------------------------------------------------|
| L1    | symptom                  | problem, expected and candidate outputs (+ summaries)    |
| L2    | input pattern            | L1 + failing inputs                                      |
| L3    | state tracking           | same as L2 (no code: state is inferred from behaviour)   |
| L4    | fault location           | L3 + candidate code                                      |
| L5    | conceptual correction    | L4 + reference code and reference traces                 |
| L6    | repair direction         | same as L5 (never code, pseudocode or an exact patch)    |

A mismatch summary (failure type, counts, larger/smaller) is part of every test's
evidence at every level: it is the symptom itself and contains no verbatim data.
Evidence is built from hidden data, so it is shown only to the *feedback* model, never
to the candidate. Pure module: no I/O, no randomness.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

import msgspec

from ..core.errors import ConfigError
from ..core.types import Instance, Message, Test, TestResult
from .scenarios import Scenario, failure_type
from .shapes import BINARY_TOKENS, Shape, output_shape

__all__ = [
    "EVIDENCE_FIELDS",
    "HINT_LEVELS",
    "Evidence",
    "EvidenceField",
    "FailureEvidence",
    "HintLevel",
    "build_evidence",
    "build_feedback_prompt",
    "describe_failure",
    "describe_scenario",
    "fallback_hint",
    "hint_level",
    "mask_evidence",
    "render_evidence",
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

EVIDENCE_FIELDS: Final[tuple[EvidenceField, ...]] = (
    "problem",
    "failing_inputs",
    "expected_outputs",
    "candidate_outputs",
    "candidate_code",
    "reference_code",
    "reference_trace",
)

#: Characters of one input or output shown to the feedback model.
_SHOW_CHARS: Final = 1500


class HintLevel(msgspec.Struct, frozen=True, kw_only=True):
    """One row of Table II, with its prompt template, evidence mask and fallback.

    ``template`` has the placeholders ``{scenario}``, ``{evidence}``, ``{level}`` and
    ``{name}``; ``fallback`` has ``{symptom}``, filled from the failure type only.
    """

    number: int
    name: str
    description: str
    example: str
    template: str
    mask: tuple[EvidenceField, ...]
    fallback: str


_ASK = (
    "Failure scenario: {scenario}\n\n{evidence}\n\n"
    "Write one level-{level} hint ({name}) of one to three sentences for the programmer. "
)

HINT_LEVELS: Final[tuple[HintLevel, ...]] = (
    HintLevel(
        number=1,
        name="symptom",
        description="Only the observed incorrect behaviour; no input pattern, cause or location.",
        example="The output is larger than expected, suggesting that something may be counted "
        "extra.",
        template=_ASK + "Describe only how the observed output differs from the correct one.",
        mask=("problem", "expected_outputs", "candidate_outputs"),
        fallback="On some hidden tests the program {symptom}.",
    ),
    HintLevel(
        number=2,
        name="input pattern",
        description="The type of input or edge case exposing the failure.",
        example="This failure occurs when the input contains duplicate values.",
        template=_ASK + "Describe the kind of input (its pattern or edge case) on which the "
        "program fails, without giving any concrete test input.",
        mask=("problem", "failing_inputs", "expected_outputs", "candidate_outputs"),
        fallback="On some hidden tests the program {symptom}; the examples in the statement do "
        "not cover every kind of valid input that triggers this.",
    ),
    HintLevel(
        number=3,
        name="state tracking",
        description="The information the solution fails to preserve, update or track correctly.",
        example="The solution does not keep enough information about repeated values across "
        "iterations.",
        template=_ASK + "Describe which information the solution fails to preserve, update or "
        "track while it processes such inputs.",
        mask=("problem", "failing_inputs", "expected_outputs", "candidate_outputs"),
        fallback="On some hidden tests the program {symptom}; it does not keep all the "
        "information it needs up to date while it processes the input.",
    ),
    HintLevel(
        number=4,
        name="fault location",
        description="The suspicious region of the candidate implementation.",
        example="The issue is likely in the loop that updates the count after reading each value.",
        template=_ASK + "Point to the suspicious region of the current program (you may name "
        "its lines, loops or variables) without saying how to fix it.",
        mask=(
            "problem",
            "failing_inputs",
            "expected_outputs",
            "candidate_outputs",
            "candidate_code",
        ),
        fallback="On some hidden tests the program {symptom}; the fault is likely in the part "
        "of the program that computes the answer for these inputs.",
    ),
    HintLevel(
        number=5,
        name="conceptual correction",
        description="The missing invariant, condition or reasoning needed for the scenario.",
        example="The solution needs to distinguish between seeing a value once and seeing it "
        "multiple times.",
        template=_ASK + "State the missing invariant, condition or reasoning the program needs, "
        "as a concept, without telling the programmer what to change.",
        mask=EVIDENCE_FIELDS,
        fallback="On some hidden tests the program {symptom}; the solution does not respect a "
        "condition of the problem that holds for every valid input, unusual ones included.",
    ),
    HintLevel(
        number=6,
        name="repair direction",
        description="A concrete implementation direction, without the corrected code.",
        example="Revise the update logic so repeated values are accumulated rather than "
        "overwritten.",
        template=_ASK + "Give a concrete repair direction in words. Never write code, "
        "pseudocode or an exact patch.",
        mask=EVIDENCE_FIELDS,
        fallback="On some hidden tests the program {symptom}. Re-read the conditions of the "
        "problem statement and revise the computation of the answer so that it holds for "
        "every valid input.",
    ),
)

_RULES_ALL = (
    "Never write code, pseudocode, a patch or a code block. Never quote a test input, an "
    "expected output, the program's output on a hidden test or the reference solution; "
    "describe them in words instead."
)
_RULES_BELOW_4 = (
    "Do not mention line numbers, variable or function names of the program, or its "
    "loops, branches and statements."
)
_RULES_BELOW_6 = (
    "Do not tell the programmer what to do: no instructions or imperatives (change, "
    "replace, use, add, remove, initialise, ...), and no 'should', 'must be' or 'instead'."
)

_SYSTEM = (
    "You write feedback hints for a programmer repairing a program. The programmer sees "
    "the problem statement and their program, but never the hidden tests, their expected "
    "outputs or the reference solution. Your hint must reveal exactly what level {level} "
    "({name}: {description}) allows and nothing more. Reply with the hint text only."
)


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


def hint_level(number: int) -> HintLevel:
    """The Table II row of level ``number`` (1..6)."""
    if not 1 <= number <= len(HINT_LEVELS):
        raise ConfigError(f"hint level must be in 1..{len(HINT_LEVELS)}, got {number}")
    return HINT_LEVELS[number - 1]


def mask_evidence(level: int, evidence: Evidence) -> Evidence:
    """``evidence`` with every field level ``level`` may not see set to ``None``."""
    mask = set(hint_level(level).mask)
    tests = tuple(
        msgspec.structs.replace(
            test,
            input=test.input if "failing_inputs" in mask else None,
            expected=test.expected if "expected_outputs" in mask else None,
            actual=test.actual if "candidate_outputs" in mask else None,
            trace=test.trace if "reference_trace" in mask else None,
        )
        for test in evidence.tests
    )
    return msgspec.structs.replace(
        evidence,
        problem=evidence.problem if "problem" in mask else None,
        tests=tests,
        candidate_code=evidence.candidate_code if "candidate_code" in mask else None,
        reference_code=evidence.reference_code if "reference_code" in mask else None,
    )


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
    """A failure type in words, e.g. ``runtime:ZeroDivisionError`` → stops with it."""
    if failure.startswith("runtime:"):
        name = failure.split(":", 1)[1]
        return "stops with a runtime error" if name == "unknown" else f"stops with {name}"
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
            f"the program prints {len(actual)} output line{'s' if len(actual) != 1 else ''} "
            f"where {len(expected)} {'are' if len(expected) != 1 else 'is'} expected"
        )
    for row, (got, want) in enumerate(zip(actual, expected, strict=False), start=1):
        if len(got) != len(want):
            return (
                f"the {_ordinal(row)} output line has {len(got)} value"
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
                f"the function returns a list of {len(actual)} item"
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


def _clip(text: str) -> str:
    if len(text) <= _SHOW_CHARS:
        return text
    return text[:_SHOW_CHARS] + f"\n... ({len(text) - _SHOW_CHARS} more characters)"


def _numbered(source: str) -> str:
    return "\n".join(f"{i:4d} | {line}" for i, line in enumerate(source.splitlines(), start=1))


def _ranges(lines: Sequence[int]) -> str:
    """``[1, 2, 3, 7, 9, 10]`` → ``"1-3, 7, 9-10"``."""
    runs: list[list[int]] = []
    for line in sorted(set(lines)):
        if runs and runs[-1][1] == line - 1:
            runs[-1][1] = line
        else:
            runs.append([line, line])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs) or "none"


def render_evidence(evidence: Evidence) -> str:
    """The (masked) evidence as the sections of a prompt; absent fields are left out."""
    parts: list[str] = []
    if evidence.problem is not None:
        parts.append(f"## Problem statement\n{evidence.problem.strip()}")
    for index, test in enumerate(evidence.tests, start=1):
        block = [f"## Failing test {index}", f"Symptom: {test.summary}"]
        if test.input is not None:
            block.append(f"Input:\n{_clip(test.input)}")
        if test.expected is not None:
            block.append(f"Expected output:\n{_clip(test.expected)}")
        if test.actual is not None:
            block.append(f"Program output:\n{_clip(test.actual)}")
        if test.trace is not None:
            block.append(f"Reference lines executed: {_ranges(test.trace)}")
        parts.append("\n".join(block))
    if evidence.candidate_code is not None:
        parts.append(
            f"## Current program (line numbers added)\n{_numbered(evidence.candidate_code)}"
        )
    if evidence.reference_code is not None:
        parts.append(
            f"## Reference solution (line numbers added)\n{_numbered(evidence.reference_code)}"
        )
    return "\n\n".join(parts)


def build_feedback_prompt(level: int, evidence: Evidence, scenario: str) -> list[Message]:
    """The feedback model's messages for a level-``level`` hint on ``scenario``.

    The evidence is masked again here, so passing unmasked evidence cannot widen what
    the level sees.
    """
    row = hint_level(level)
    masked = mask_evidence(level, evidence)
    rules = [_RULES_ALL]
    if level < 4:
        rules.append(_RULES_BELOW_4)
    if level < 6:
        rules.append(_RULES_BELOW_6)
    system = _SYSTEM.format(level=level, name=row.name, description=row.description)
    system += "\n\n" + "\n".join(f"- {rule}" for rule in rules)
    system += f"\n\nExample of a level-{level} hint: {row.example}"
    user = row.template.format(
        scenario=scenario, evidence=render_evidence(masked), level=level, name=row.name
    )
    return [Message(role="system", content=system), Message(role="user", content=user)]


def fallback_hint(level: int, failure: str) -> str:
    """The fixed, level-safe hint used when every generated hint was rejected."""
    return hint_level(level).fallback.format(symptom=describe_failure(failure))
