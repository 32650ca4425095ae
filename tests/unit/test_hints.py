"""Table II as data: levels, evidence masks, mismatch summaries, feedback prompts."""

from __future__ import annotations

import msgspec
import pytest

from pairbench_async.core.errors import ConfigError
from pairbench_async.core.types import Instance, Verdict
from pairbench_async.core.types import Test as HiddenTest
from pairbench_async.core.types import TestResult as Result
from pairbench_async.protocol.evidence import (
    EVIDENCE_FIELDS,
    PROGRAM_TEXT_CHARS,
    Evidence,
    FailureEvidence,
    bound_program_text,
    build_evidence,
    describe_failure,
    describe_scenario,
    summarize_mismatch,
)
from pairbench_async.protocol.feedback_prompt import build_feedback_prompt, render_evidence
from pairbench_async.protocol.hints import HINT_LEVELS, hint_level, mask_evidence
from pairbench_async.protocol.scenarios import Scenario

EvidenceRow = FailureEvidence


def _evidence() -> Evidence:
    return Evidence(
        problem="PROBLEM_MARK: sum the numbers.",
        scenario="3 hidden tests on which the program produces a wrong value",
        tests=(
            EvidenceRow(
                id="t1",
                failure="wrong_value",
                shape="token",
                summary="the program prints a larger number than expected",
                input="INPUT_MARK 1 2",
                expected="EXPECTED_MARK",
                actual="ACTUAL_MARK",
                trace=(1, 2, 3, 7),
            ),
        ),
        candidate_code="CODE_MARK = 1\nprint(CODE_MARK)\n",
        reference_code="REFERENCE_MARK = 2\nprint(REFERENCE_MARK)\n",
    )


def test_six_levels_in_order_with_growing_masks() -> None:
    assert [level.number for level in HINT_LEVELS] == [1, 2, 3, 4, 5, 6]
    assert [level.name for level in HINT_LEVELS] == [
        "symptom",
        "input pattern",
        "state tracking",
        "fault location",
        "conceptual correction",
        "repair direction",
    ]
    for lower, higher in zip(HINT_LEVELS, HINT_LEVELS[1:], strict=False):
        assert set(lower.mask) <= set(higher.mask)
    for level in HINT_LEVELS:
        assert set(level.mask) <= set(EVIDENCE_FIELDS) and "problem" in level.mask
        assert "{scenario}" in level.template and "{evidence}" in level.template
        assert "{symptom}" in level.fallback


@pytest.mark.parametrize(
    ("level", "visible", "hidden"),
    [
        (1, {"PROBLEM", "EXPECTED", "ACTUAL"}, {"INPUT", "CODE", "REFERENCE"}),
        (2, {"PROBLEM", "EXPECTED", "ACTUAL", "INPUT"}, {"CODE", "REFERENCE"}),
        (3, {"PROBLEM", "EXPECTED", "ACTUAL", "INPUT"}, {"CODE", "REFERENCE"}),
        (4, {"PROBLEM", "EXPECTED", "ACTUAL", "INPUT", "CODE"}, {"REFERENCE"}),
        (5, {"PROBLEM", "EXPECTED", "ACTUAL", "INPUT", "CODE", "REFERENCE"}, set()),
        (6, {"PROBLEM", "EXPECTED", "ACTUAL", "INPUT", "CODE", "REFERENCE"}, set()),
    ],
)
def test_feedback_prompt_shows_exactly_the_mask(
    level: int, visible: set[str], hidden: set[str]
) -> None:
    # unmasked evidence goes in: the builder masks it again
    messages = build_feedback_prompt(level, _evidence(), "the scenario text")
    text = "\n".join(message.content for message in messages)
    for mark in visible:
        assert f"{mark}_MARK" in text
    for mark in hidden:
        assert f"{mark}_MARK" not in text
    assert ("Reference lines executed: 1-3, 7" in text) == (level >= 5)
    assert "the scenario text" in text
    assert "the program prints a larger number than expected" in text
    assert [m.role for m in messages] == ["system", "user"]
    assert ("line numbers" in messages[0].content) == (level < 4)
    assert ("imperatives" in messages[0].content) == (level < 6)


def test_mask_blanks_fields_and_is_idempotent() -> None:
    masked = mask_evidence(1, _evidence())
    row = masked.tests[0]
    assert row.input is None and row.trace is None and row.expected == "EXPECTED_MARK"
    assert masked.candidate_code is None and masked.reference_code is None
    assert mask_evidence(1, masked) == masked
    assert mask_evidence(6, _evidence()) == _evidence()


def test_hint_level_bounds() -> None:
    assert hint_level(4).name == "fault location"
    for bad in (0, 7):
        with pytest.raises(ConfigError):
            hint_level(bad)


def _stdio(expected: str, actual: str, mismatch: str | None = "value") -> str:
    test = HiddenTest(id="t", input="", output=expected)
    result = Result(id="t", verdict=Verdict.WA, stdout=actual, mismatch=mismatch)  # type: ignore[arg-type]
    return summarize_mismatch(test, result)


def test_stdio_summaries() -> None:
    assert _stdio("1\n2\n3\n", "1\n", "lines") == (
        "the program prints 1 output line where 3 are expected"
    )
    assert _stdio("1 2\n3 4\n", "1 2\n3\n", "tokens") == (
        "the 2nd output line has 1 value where 2 are expected"
    )
    larger = _stdio("10 20\n", "10 25\n")
    assert larger.startswith("the program prints a larger number than expected")
    assert "2nd value of the 1st line" in larger
    assert _stdio("YES\n", "NO\n").startswith("the program prints the opposite yes/no answer")
    assert _stdio("abc\n", "abd\n").startswith("the program prints a different value")


def test_summaries_never_quote_the_values() -> None:
    summary = _stdio("987654321\n", "123456789\n")
    assert "987654321" not in summary and "123456789" not in summary
    assert "smaller" in summary


@pytest.mark.parametrize(
    ("expected", "value", "summary"),
    [
        (5, 7, "the function returns a larger number than expected"),
        ([1, 2, 3], [1], "the function returns a list of 1 item where 3 are expected"),
        ([1, 2], [2, 1], "the function returns a list of the right length with wrong items"),
        (True, False, "the function returns the opposite yes/no answer"),
        (3, None, "the function returns None where a value is expected"),
        ("x", [1], "the function returns a list where a str is expected"),
    ],
)
def test_call_summaries(expected: object, value: object, summary: str) -> None:
    test = HiddenTest(id="t", args=[1], expected=expected)
    result = Result(id="t", verdict=Verdict.WA, value=value)
    assert summarize_mismatch(test, result) == summary


def test_non_wrong_answer_summaries() -> None:
    test = HiddenTest(id="t", input="", output="1")
    crash = Result(id="t", verdict=Verdict.RE, error="IndexError")
    assert summarize_mismatch(test, crash) == "the program stops with IndexError"
    assert summarize_mismatch(test, Result(id="t", verdict=Verdict.TLE)) == (
        "the program exceeds the time limit"
    )
    assert describe_failure("runtime:unknown") == "stops with a runtime error"


def test_describe_scenario_uses_the_key_only() -> None:
    scenario = Scenario(
        id="abc", level="full", failure="timeout", shape="grid", trace=(1, 2), tests=("t9", "t10")
    )
    text = describe_scenario(scenario)
    assert text.startswith("2 hidden tests on which the program exceeds the time limit")
    assert "a grid of values" in text and "same execution path" in text
    assert "t9" not in text and "abc" not in text
    coarse = Scenario(id="x", level="type", failure="memory", tests=("a",))
    assert (
        describe_scenario(coarse) == "1 hidden test on which the program exceeds the memory limit"
    )


def test_build_evidence_from_a_call_instance() -> None:
    instance = Instance(
        id="i",
        problem="Write add(a, b).",
        buggy="def add(a, b):\n    return a - b\n",
        reference="def add(a, b):\n    return a + b\n",
        tests=[HiddenTest(id="t1", args=[2, 3], kwargs={"c": 1}, expected=5)],
        kind="call",
        time_limit=1.0,
        memory_limit_mb=64,
        entry_point="add",
    )
    scenario = Scenario(id="s", level="type", failure="wrong_value", tests=("t1",))
    results = {"t1": Result(id="t1", verdict=Verdict.WA, value=-1)}
    evidence = build_evidence(instance, scenario, ["t1"], results, {"t1": [2, 1]}, instance.buggy)
    row = evidence.tests[0]
    assert row.input == 'args = [2,3]; kwargs = {"c":1}'
    assert row.expected == "5" and row.actual == "-1" and row.trace == (1, 2)
    assert row.summary == "the function returns a smaller number than expected"
    assert evidence.reference_code == instance.reference
    assert "Reference solution" in render_evidence(evidence)
    with pytest.raises(ConfigError):
        build_evidence(instance, scenario, ["nope"], results, {}, instance.buggy)


def test_long_values_are_clipped_in_prompts() -> None:
    row = msgspec.structs.replace(_evidence().tests[0], input="9" * 5000)
    text = render_evidence(msgspec.structs.replace(_evidence(), tests=(row,)))
    assert "9" * 1500 in text and "9" * 1501 not in text and "3500 more characters" in text


# ------------------------------------------------------------------ what the program wrote
# The program's output on a hidden test is a function of that test's input, written as the
# program chose: bounded, its counts bounded, and cut of its echoes where inputs are hidden.


def _echo(actual: str) -> Evidence:
    row = EvidenceRow(id="t", failure="wrong_value", shape="token", summary="the program prints a "
                      "different value than expected", input="CANARY_7731 4242 1717\n", expected="5959\n",
                      actual=actual)
    return Evidence(problem="Print the sum of the two numbers after the label.", tests=(row,),
                    candidate_code="import sys\nprint(sys.stdin.read())\n")


@pytest.mark.parametrize(
    ("actual", "shown"),
    [
        ("CANARY_7731 4242 1717\n", "[hidden]\n"),  # verbatim
        ("canary-77 31\n", "[hidden]\n"),  # another case, other separators
        ("1717 2424 1377_YRANAC\n", "[hidden]\n"),  # reversed
        ("CANARY_hhdb ecec bhbh\n", "[hidden]\n"),  # digits as letters, a=0..j=9
        ("seven seven three one\n", "[hidden]\n"),  # digits as words
        ("sum 5959 of 4242\n", "sum 5959 of [hidden]\n"),  # the expected output is shown anyway
        ("print 17\n", "print 17\n"),  # the candidate's code, and tokens too short to tell
    ],
)
def test_level_one_cuts_echoes_of_the_hidden_input_from_the_program_output(actual: str, shown: str) -> None:
    evidence = _echo(actual)
    assert mask_evidence(1, evidence).tests[0].actual == shown
    prompt = "\n".join(m.content for m in build_feedback_prompt(1, evidence, "a scenario"))
    assert shown in prompt and ("[hidden]" in shown or actual in prompt)
    # the levels that show the failing inputs show the output as it is
    for level in range(2, 7):
        assert mask_evidence(level, evidence).tests[0].actual == actual
    # masking again (the prompt builder, the offline model) changes nothing
    assert mask_evidence(1, mask_evidence(1, evidence)) == mask_evidence(1, evidence)


def test_counts_the_program_chose_are_exact_only_up_to_a_bound() -> None:
    assert _stdio("1\n", "1\n2\n3\n4\n", "lines") == "the program prints 4 output lines where 1 is expected"
    assert _stdio("1\n", "7\n" * 4242, "lines") == (
        "the program prints more than 4 output lines where 1 is expected"
    )
    assert _stdio("1 2\n", "0 " * 4242 + "\n", "tokens") == (
        "the 1st output line has more than 6 values where 2 are expected"
    )
    test = HiddenTest(id="t", args=[1], expected=[1, 2])
    result = Result(id="t", verdict=Verdict.WA, value=[0] * 4242, mismatch="value")
    assert summarize_mismatch(test, result) == (
        "the function returns a list of more than 6 items where 2 are expected"
    )


def test_program_output_is_bounded_and_its_length_not_shown() -> None:
    instance = Instance(id="i", problem="p", buggy="print(7)\n", reference="print(1)\n", kind="stdio",
                        time_limit=1.0, memory_limit_mb=64, tests=[HiddenTest(id="t", input="", output="1\n")])
    scenario = Scenario(id="s", level="type", failure="wrong_lines", tests=("t",))
    results = {"t": Result(id="t", verdict=Verdict.WA, stdout="7\n" * 4321, mismatch="lines")}
    evidence = build_evidence(instance, scenario, ["t"], results, {}, instance.buggy)
    actual = evidence.tests[0].actual or ""
    assert actual.startswith("7\n" * 750) and actual.endswith("(the rest of the program's output is not shown)")
    assert bound_program_text(actual) == actual and len(actual) < PROGRAM_TEXT_CHARS + 60
    text = render_evidence(evidence)
    assert "4321" not in text and "more characters" not in text
    assert "more than 4 output lines" in text
