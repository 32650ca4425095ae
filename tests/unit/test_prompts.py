"""Candidate prompts, and hidden-test protection across whole scripted episodes.

The protection tests build instances whose every hidden input, expected output and
reference source carry a canary string, drive episodes through the policy, evidence,
a feedback model that echoes whatever its mask lets it see, the leakage validator and
the prompt builders, and assert that the canary never reaches the candidate.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairbench_async.core.types import Instance, Message, Mismatch, Verdict
from pairbench_async.core.types import Test as HiddenTest
from pairbench_async.core.types import TestResult as Result
from pairbench_async.protocol.evidence import build_evidence
from pairbench_async.protocol.extract import extract_code
from pairbench_async.protocol.leakage import HintOutcome, hidden_data, validate_hint
from pairbench_async.protocol.policy import PolicyConfig, Stop, observe, plan, start
from pairbench_async.protocol.prompts import TurnSummary, fenced, initial_prompt, turn_prompt
from pairbench_async.protocol.scenarios import Scenario
from pairbench_async.protocol.shapes import Shape, output_shape
from tests.hint_loop import produce_hint

CANARY = "CANARY_7f3a"


def _stdio_instance() -> Instance:
    tests = [
        HiddenTest(
            id=f"t{i:02d}",
            input=f"{i}\n{CANARY} payload {i} {i * i}\n",
            output=f"{2 * i}\n{CANARY} result {i}\n",
        )
        for i in range(12)
    ]
    return Instance(
        id="canary-stdio",
        problem="Read n and a line of words. Print 2n, then the line with its second word "
        "replaced by the word result and its last word removed.",
        buggy="n = int(input())\nline = input()\nprint(n + 2)\nprint(line)\n",
        reference=f"# {CANARY} reference solution\n"
        "n = int(input())\n"
        "words = input().split()\n"
        "print(n * 2)\n"
        f"print(words[0], 'result', *words[2:-1])  # {CANARY}\n",
        tests=tests,
        kind="stdio",
        time_limit=1.0,
        memory_limit_mb=64,
    )


def _call_instance() -> Instance:
    tests = [
        HiddenTest(
            id=f"c{i:02d}",
            args=[f"{CANARY}-{i}", i],
            expected=[f"{CANARY}-{i}"] * (i % 3 + 1),
        )
        for i in range(12)
    ]
    return Instance(
        id="canary-call",
        problem="Write repeat(word, k) returning a list holding word (k % 3 + 1) times.",
        buggy="def repeat(word, k):\n    return [word] * k\n",
        reference=f"def repeat(word, k):\n    # {CANARY}\n    return [word] * (k % 3 + 1)\n",
        tests=tests,
        kind="call",
        time_limit=1.0,
        memory_limit_mb=64,
        entry_point="repeat",
    )


def _results(instance: Instance, failing: set[str]) -> dict[str, Result]:
    """Failing results that echo hidden inputs back, in three failure modes."""
    results: dict[str, Result] = {}
    for index, test in enumerate(instance.tests):
        if test.id not in failing:
            results[test.id] = Result(id=test.id, verdict=Verdict.AC)
        elif index % 3 == 2:
            results[test.id] = Result(
                id=test.id,
                verdict=Verdict.RE,
                error=f"IndexError({test.input!r}, {test.args!r})",
                stderr=f"{test.input}{test.args}",
            )
        elif instance.kind == "call":
            results[test.id] = Result(id=test.id, verdict=Verdict.WA, value=test.args)
        else:
            mismatch: Mismatch = "value" if index % 3 == 0 else "lines"
            results[test.id] = Result(
                id=test.id, verdict=Verdict.WA, stdout=test.input or "", mismatch=mismatch
            )
    return results


class EchoFeedback:
    """A feedback model that leaks whatever its prompt shows, then sometimes behaves."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.leaky_attempts = 0

    def __call__(self, messages: list[Message]) -> str:
        attempt = sum(message.role == "assistant" for message in messages)
        evidence = messages[1].content
        canary_lines = [line for line in evidence.splitlines() if CANARY in line]
        if attempt == 0:
            reply = "Everything I was shown:\n" + evidence
        elif attempt == 1 and canary_lines:
            reply = "Note that " + self.rng.choice(canary_lines).strip() + " matters."
        elif self.rng.random() < 0.5:
            reply = "The output differs from the expected one on inputs of this kind."
        else:
            reply = "Look at this: " + "\n".join(canary_lines[:3])
        self.leaky_attempts += CANARY in reply
        return reply


def _reply(rng: random.Random, program: str, turn: int) -> str:
    roll = rng.random()
    if roll < 0.15:
        return "I believe the program is already correct."
    if roll < 0.3:
        return f"Same program:\n```python\n{program}```"
    return f"Revised:\n```python\n{program}# revision {turn}\n```\nIt should work now."


def _drive(
    instance: Instance, config: PolicyConfig, seed: int, script: Sequence[set[str]] | None
) -> tuple[list[list[Message]], list[HintOutcome], EchoFeedback]:
    rng = random.Random(seed)
    everything = {test.id for test in instance.tests}
    hidden = hidden_data(instance)
    shapes: dict[str, Shape] = {test.id: output_shape(test) for test in instance.tests}
    traces = {
        test.id: [1, 2, 3] if i % 2 else [1, 2, 4, 5] for i, test in enumerate(instance.tests)
    }
    feedback = EchoFeedback(seed)
    sent: list[list[Message]] = [initial_prompt(instance)]
    program = extract_code(_reply(rng, instance.buggy, 0)) or instance.buggy

    def passing_after(turn: int) -> set[str]:
        if script is not None:
            return script[min(turn, len(script) - 1)]
        return {test for test in sorted(everything) if rng.random() < 0.3}

    passed = passing_after(0)
    failing = everything - passed
    history: list[TurnSummary] = []
    outcomes: list[HintOutcome] = []
    state = start()
    while True:
        results = _results(instance, failing)
        state, decision = plan(config, state, failing, results, traces, shapes, seed)
        if isinstance(decision, Stop):
            return sent, outcomes, feedback
        evidence = build_evidence(
            instance, decision.scenario, decision.representatives, results, traces, program
        )
        outcome = produce_hint(
            feedback,
            level=decision.level,
            evidence=evidence,
            candidate_code=program,
            hidden=hidden,
            failure=decision.scenario.failure,
        )
        outcomes.append(outcome)
        sent.append(turn_prompt(instance, program, outcome.text, history))
        new = extract_code(_reply(rng, program, decision.turn))
        history.append(
            TurnSummary(
                turn=decision.turn,
                hint=outcome.text,
                code_found=new is not None,
                changed=new is not None and new != program,
            )
        )
        program = new or program
        passed = passing_after(decision.turn)
        state = observe(config, state, decision, passed)
        failing = everything - passed


@pytest.mark.parametrize("make", [_stdio_instance, _call_instance])
def test_canary_never_reaches_the_candidate(make: object) -> None:
    instance = make()  # type: ignore[operator]
    assert CANARY not in instance.problem and CANARY not in instance.buggy
    levels: set[int] = set()
    fallbacks = accepted = leaky = 0
    configs = [
        PolicyConfig(),
        PolicyConfig(turns=10, scenario_turns=10),
        PolicyConfig(turns=6, scenario_turns=2, after_deferral="escalate"),
    ]
    for seed in range(12):
        for config in configs:
            # nothing ever passes on half the runs, so the policy climbs to L6
            script: list[set[str]] | None = [set()] if seed % 2 else None
            sent, outcomes, feedback = _drive(instance, config, seed, script)
            for messages in sent:
                for message in messages:
                    assert CANARY not in message.content, (seed, config, message.content)
            for outcome in outcomes:
                levels.add(outcome.level)
                fallbacks += outcome.fallback
                accepted += not outcome.fallback
                for attempt in outcome.attempts:
                    if CANARY in attempt.text:
                        assert attempt.reasons, attempt.text
            leaky += feedback.leaky_attempts
    # the check is not vacuous: every level was exercised, leaks were attempted and caught,
    # and both accepted model hints and fallbacks reached the candidate
    assert levels == {1, 2, 3, 4, 5, 6}
    assert leaky > 0 and fallbacks > 0 and accepted > 0


@given(st.data())
def test_any_quoted_hidden_span_with_the_canary_is_rejected(data: st.DataObject) -> None:
    instance = _stdio_instance()
    hidden = hidden_data(instance)
    source = data.draw(st.sampled_from([*hidden.inputs, *hidden.outputs, hidden.reference]))
    at = source.index(CANARY)
    start_ = data.draw(st.integers(0, at))
    end = data.draw(st.integers(at + len(CANARY), len(source)))
    level = data.draw(st.integers(1, 6))
    hint = f"Notice {source[start_:end]} here."
    evidence = build_evidence(instance, _any_scenario(), [], {}, {}, instance.buggy)
    assert validate_hint(hint, level, evidence, instance.buggy, hidden)


def _any_scenario() -> Scenario:
    return Scenario(id="s", level="type", failure="wrong_value")


# --------------------------------------------------------------------------- builders


def test_initial_prompt_for_a_stdio_instance() -> None:
    instance = _stdio_instance()
    system, user = initial_prompt(instance)
    assert system.role == "system" and user.role == "user"
    assert instance.problem in user.content
    assert fenced(instance.buggy) in user.content
    assert "standard input" in user.content and "```python fenced code block" in user.content


def test_initial_prompt_for_a_call_instance_keeps_the_entry_point() -> None:
    _, user = initial_prompt(_call_instance())
    assert "`repeat`" in user.content and "keep its name and signature" in user.content


def test_turn_prompt_with_hint_and_history() -> None:
    instance = _stdio_instance()
    history = [
        TurnSummary(turn=1, hint="The output is too small."),
        TurnSummary(turn=2, hint="", code_found=False, changed=False),
        TurnSummary(turn=3, hint="Large inputs fail.", changed=False),
    ]
    _, user = turn_prompt(instance, "print(1)\n", "Only odd inputs fail.", history)
    text = user.content
    assert "Only odd inputs fail." in text and fenced("print(1)\n") in text
    assert "Turn 1 feedback: The output is too small." in text
    assert "Turn 2 feedback: (no feedback was given)" in text
    assert "Turn 2 reply: no code block found" in text
    assert "Turn 3 reply: the program was returned unchanged" in text
    assert text.index("Earlier turns") < text.index("Current program") < text.index("Only odd")


def test_turn_prompt_without_hint() -> None:
    _, user = turn_prompt(_call_instance(), "def repeat(w, k):\n    return []\n", None)
    assert "no further feedback is available" in user.content
    assert "Earlier turns" not in user.content and "`repeat`" in user.content


def test_fence_survives_backticks_in_the_program() -> None:
    program = 'print("```")\nprint("````")\n'
    block = fenced(program)
    assert block.startswith("`````python\n")
    assert extract_code(f"Here:\n{block}\n") == program
