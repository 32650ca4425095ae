"""The offline models: ``sim:SKILL`` moves programs toward the reference as documented,
deterministically; ``rules`` writes level-conforming hints that pass the leakage validator.

Hints are checked against real evidence: the bundled fixtures' buggy programs run in the
sandbox pool (every third hidden test, to keep the module fast) and the references are
traced there on the failing ones, exactly as the orchestrator will do.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from pairbench_async.core.errors import ClientError, ConfigError
from pairbench_async.core.types import Instance, Message, TestResult, Verdict
from pairbench_async.core.types import Test as HiddenTest
from pairbench_async.datasets.files import load_dataset
from pairbench_async.models.interface import ContextModel, ModelClient
from pairbench_async.models.offline import (
    LEVEL_FACTORS,
    REGRESSION_RATE,
    TARGET_FACTOR,
    RulesFeedback,
    SimCandidate,
    TurnContext,
    parse_offline_spec,
    stable_seed,
)
from pairbench_async.protocol.evidence import Evidence, build_evidence
from pairbench_async.protocol.extract import extract_code
from pairbench_async.protocol.hints import hint_level, mask_evidence
from pairbench_async.protocol.leakage import HiddenData, hidden_data, validate_hint
from pairbench_async.protocol.prompts import initial_prompt
from pairbench_async.protocol.scenarios import Scenario, group_failures, sample_representatives
from pairbench_async.protocol.shapes import output_shape
from pairbench_async.sandbox.pool import SandboxPool
from tests.hint_loop import produce_hint

ROOT = Path(__file__).resolve().parents[2]
INSTANCES = load_dataset().instances
BY_ID = {instance.id: instance for instance in INSTANCES}
#: Two hunks: buggy lines 10 and 12 differ from reference lines 10 and 12.
TWO_HUNKS = "bracket-check.unguarded-pop"


def context(
    instance: Instance,
    program: str | None = None,
    *,
    level: int | None = 6,
    seed: int = 0,
    turn: int = 1,
    targets: list[int] | None = None,
    evidence: Evidence | None = None,
    attempt: int = 0,
) -> TurnContext:
    return TurnContext(
        instance=instance,
        program=instance.buggy if program is None else program,
        turn=turn,
        level=level,
        target_lines=targets or [],
        evidence=evidence,
        attempt=attempt,
        seed=seed,
    )


def lines(text: str) -> list[str]:
    return text.splitlines()


# --------------------------------------------------------------------------- specs


@pytest.mark.parametrize(
    ("spec", "skill", "latency"),
    [
        ("sim:0.8", 0.8, 0.0),
        ("sim:1", 1.0, 0.0),
        ("sim:0", 0.0, 0.0),
        ("sim:0.8?latency=1", 0.8, 1.0),
        (" sim:0.25?latency=0.5 ", 0.25, 0.5),
    ],
)
def test_sim_specs_parse(spec: str, skill: float, latency: float) -> None:
    model = parse_offline_spec(spec)
    assert isinstance(model, SimCandidate)
    assert (model.skill, model.latency, model.name) == (skill, latency, spec.strip())
    assert model.key == spec.strip().split("?")[0]


def test_rules_spec_parses() -> None:
    model = parse_offline_spec("rules")
    assert isinstance(model, RulesFeedback) and model.name == "rules"


@pytest.mark.parametrize(
    "spec",
    [
        "sim:",
        "sim",
        "sim:1.5",
        "sim:-0.1",
        "sim:nan",
        "sim:inf",
        "sim:high",
        "sim:0.5?latency=-1",
        "sim:0.5?latency=inf",
        "sim:0.5?latency=abc",
        "sim:0.5?latency",
        "sim:0.5?latency=1&latency=2",
        "sim:0.5?speed=2",
        "sim:0.5?latency=100000",
        "rules:strict",
        "rule",
        "openai:gpt-4o-mini",
        "",
    ],
)
def test_bad_specs_are_config_errors(spec: str) -> None:
    with pytest.raises(ConfigError):
        parse_offline_spec(spec)


def test_constructor_checks_its_arguments() -> None:
    with pytest.raises(ConfigError):
        SimCandidate(1.01)
    with pytest.raises(ConfigError):
        SimCandidate(0.5, latency=-0.5)
    with pytest.raises(ConfigError):
        SimCandidate(float("nan"))


def test_stable_seed_does_not_depend_on_the_hash_seed() -> None:
    code = (
        "from pairbench_async.models.offline import stable_seed, SimCandidate, TurnContext\n"
        "from pairbench_async.datasets.files import load_dataset\n"
        "inst = load_dataset().instances[5]\n"
        "sim = SimCandidate(0.5)\n"
        "out = [stable_seed('x', 1, inst.id)]\n"
        "for seed in range(8):\n"
        "    ctx = TurnContext(instance=inst, program=inst.buggy, turn=1, level=3,\n"
        "                      target_lines=[], evidence=None, seed=seed)\n"
        "    out.append(sim.revise(ctx).program)\n"
        "print(repr(out))\n"
    )
    outputs = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    inst = INSTANCES[5]
    expected = [stable_seed("x", 1, inst.id)] + [
        SimCandidate(0.5).revise(context(inst, level=3, seed=seed)).program for seed in range(8)
    ]
    assert outputs == {repr(expected) + "\n"}


# --------------------------------------------------------------------------- sim


async def test_models_need_a_context() -> None:
    messages = initial_prompt(INSTANCES[0])
    with pytest.raises(ConfigError):
        await SimCandidate(0.5).complete(messages)
    with pytest.raises(ConfigError):
        await RulesFeedback().complete(messages)
    with pytest.raises(ConfigError):  # a feedback call without evidence
        await RulesFeedback().complete_in_context(messages, context(INSTANCES[0]))


async def test_closed_models_refuse_calls() -> None:
    sim, rules = SimCandidate(0.5), RulesFeedback()
    await sim.aclose()
    await rules.aclose()
    with pytest.raises(ClientError):
        await sim.complete_in_context([], context(INSTANCES[0]))
    with pytest.raises(ClientError):
        await rules.complete_in_context([], context(INSTANCES[0]))


def test_offline_models_are_model_clients_that_use_the_context() -> None:
    assert isinstance(SimCandidate(0.5), ContextModel) and isinstance(RulesFeedback(), ContextModel)
    assert isinstance(SimCandidate(0.5), ModelClient)
    assert isinstance(RulesFeedback(), ModelClient)


async def test_sim_reply_is_prose_and_a_fenced_program() -> None:
    instance = INSTANCES[0]
    messages = initial_prompt(instance)
    sim = SimCandidate(1.0, name="sim:1.0")
    completion = await sim.complete_in_context(messages, context(instance, level=6))
    assert completion.model == "sim:1.0" and completion.attempts == 1
    assert completion.latency_ms == 0.0
    prose, _, _ = completion.text.partition("```")
    assert prose.strip() and "```python" in completion.text
    assert extract_code(completion.text) == sim.revise(context(instance, level=6)).program
    chars = sum(len(m.content) for m in messages)
    assert abs(completion.usage.prompt_tokens - chars / 4) <= len(messages)
    assert abs(completion.usage.completion_tokens - len(completion.text) / 4) <= 1


async def test_sim_is_deterministic_and_seed_dependent() -> None:
    sim = SimCandidate(0.5)
    instance = BY_ID[TWO_HUNKS]
    replies = set()
    for seed in range(30):
        first = await sim.complete_in_context([], context(instance, level=3, seed=seed))
        again = await SimCandidate(0.5).complete_in_context([], context(instance, level=3, seed=seed))
        assert first == again
        replies.add(first.text)
    assert len(replies) > 1
    # the turn is part of the seed too
    turns = {sim.revise(context(instance, level=3, seed=1, turn=t)).program for t in range(30)}
    assert len(turns) > 1


async def test_sim_1_at_level_6_converges_to_every_reference() -> None:
    sim = SimCandidate(1.0)
    for instance in INSTANCES:
        program = instance.buggy
        for turn in range(3):
            ctx = context(instance, program, level=6, turn=turn, seed=11)
            reply = await sim.complete_in_context(initial_prompt(instance), ctx)
            extracted = extract_code(reply.text)
            assert extracted is not None
            program = extracted
        assert lines(program) == lines(instance.reference), instance.id


def test_sim_0_at_level_1_rarely_changes_anything() -> None:
    sim = SimCandidate(0.0)
    changed = total = 0
    for instance in INSTANCES:
        for seed in range(10):
            revision = sim.revise(context(instance, level=1, seed=seed))
            assert revision.applied == 0
            total += 1
            changed += lines(revision.program) != lines(instance.buggy)
    assert changed / total <= 2 * REGRESSION_RATE


def test_probability_grows_with_skill_and_level() -> None:
    def fix_rate(skill: float, level: int | None) -> float:
        sim = SimCandidate(skill)
        fixed = 0
        for instance in INSTANCES[:40]:
            for seed in range(10):
                revision = sim.revise(context(instance, level=level, seed=seed))
                fixed += lines(revision.program) == lines(instance.reference)
        return fixed / 400

    assert fix_rate(0.2, 1) < fix_rate(0.8, 1) < fix_rate(0.8, 4) < fix_rate(0.8, 6)
    assert fix_rate(1.0, None) < fix_rate(1.0, 1)


def test_hunks_touching_the_target_are_applied_more_often() -> None:
    instance = BY_ID[TWO_HUNKS]
    reference, buggy = lines(instance.reference), lines(instance.buggy)
    assert [i for i, (a, b) in enumerate(zip(buggy, reference, strict=True)) if a != b] == [9, 11]
    sim, level, runs = SimCandidate(0.5), 2, 4000
    on_target = off_target = 0
    for seed in range(runs):
        out = lines(sim.revise(context(instance, level=level, seed=seed, targets=[10])).program)
        if len(out) == len(reference):
            on_target += out[9] == reference[9]
            off_target += out[11] == reference[11]
    expected_on = 0.5 * LEVEL_FACTORS[level] * TARGET_FACTOR  # 0.225
    expected_off = 0.5 * LEVEL_FACTORS[level]  # 0.15
    assert abs(on_target / runs - expected_on) < 0.03
    assert abs(off_target / runs - expected_off) < 0.03
    assert on_target > off_target * 1.25


def test_regressions_happen_with_small_positive_frequency() -> None:
    instance = BY_ID["ledger-balance.float-accumulator"]
    runs = 4000
    for skill in (0.0, 0.5):
        sim = SimCandidate(skill)
        kinds = [
            sim.revise(context(instance, instance.reference, level=3, seed=seed)).regression
            for seed in range(runs)
        ]
        rate = REGRESSION_RATE * (1 - skill)
        assert abs(sum(map(bool, kinds)) / runs - rate) < 0.4 * rate
        # a fixed hunk exists, so a regression brings the buggy version back
        assert set(kinds) == {"", "revert"}
    sim = SimCandidate(1.0)
    assert not any(
        sim.revise(context(instance, instance.reference, level=3, seed=seed)).regression
        for seed in range(1000)
    )


def test_a_regression_reverts_a_fixed_hunk_or_drops_a_line() -> None:
    instance = BY_ID[TWO_HUNKS]
    sim = SimCandidate(0.0)
    reverted = dropped = 0
    for seed in range(2000):
        fixed = sim.revise(context(instance, instance.reference, level=1, seed=seed))
        if fixed.regression:
            out = lines(fixed.program)
            # exactly one of the two hunks went back to the buggy program's version
            assert out != lines(instance.reference) and len(out) == len(lines(instance.buggy))
            assert (out[9], out[11]).count(lines(instance.buggy)[9]) + (out[9], out[11]).count(
                lines(instance.buggy)[11]
            ) == 1
            reverted += 1
        broken = sim.revise(context(instance, instance.buggy, level=1, seed=seed))
        if broken.regression:
            assert broken.regression == "drop"
            assert len(lines(broken.program)) == len(lines(instance.buggy)) - 1
            dropped += 1
    assert reverted > 0 and dropped > 0


def test_non_monotone_trajectories_occur_for_skill_below_one() -> None:
    instance = BY_ID[TWO_HUNKS]
    reference = lines(instance.reference)

    def fixed_hunks(program: str) -> int:
        out = lines(program)
        return sum(i < len(out) and out[i] == reference[i] for i in (9, 11))

    sim = SimCandidate(0.6)
    backwards = 0
    for seed in range(300):
        program = instance.buggy
        for turn in range(8):
            before = fixed_hunks(program)
            program = sim.revise(context(instance, program, level=2, seed=seed, turn=turn)).program
            backwards += fixed_hunks(program) < before
    assert backwards > 0


async def test_latency_is_simulated_with_seeded_jitter_and_never_changes_the_program() -> None:
    instance = INSTANCES[3]
    slow = parse_offline_spec("sim:0.5?latency=0.05")
    fast = parse_offline_spec("sim:0.5")
    assert isinstance(slow, SimCandidate) and isinstance(fast, SimCandidate)
    ctx = context(instance, level=2, seed=4)
    started = time.perf_counter()
    a = await slow.complete_in_context([], ctx)
    elapsed = time.perf_counter() - started
    b = await fast.complete_in_context([], ctx)
    assert a.text == b.text and a.model == "sim:0.5?latency=0.05"
    assert 40.0 <= a.latency_ms <= 60.0 and b.latency_ms == 0.0
    assert elapsed >= a.latency_ms / 1000 * 0.95
    assert (await slow.complete_in_context([], ctx)).latency_ms == a.latency_ms
    jitters = {
        (await slow.complete_in_context([], context(instance, seed=s))).latency_ms for s in range(8)
    }
    assert len(jitters) > 1


async def test_many_concurrent_sim_calls_overlap_their_latency() -> None:
    sim = SimCandidate(0.5, latency=0.2)
    started = time.perf_counter()
    await asyncio.gather(
        *(sim.complete_in_context([], context(INSTANCES[i % 10], seed=i)) for i in range(200))
    )
    assert time.perf_counter() - started < 1.5


# --------------------------------------------------------------------------- rules


class Case(msgspec.Struct, frozen=True):
    """One fixture scenario with real evidence for its representatives."""

    instance: Instance
    scenario: Scenario
    evidence: Evidence
    targets: list[int]


async def _cases() -> list[Case]:
    cases: list[Case] = []
    async with SandboxPool() as pool:

        async def one(instance: Instance) -> None:
            tests = instance.tests[::3]
            results = await pool.run(
                instance.program(instance.buggy), tests, instance.limits, checker=instance.checker
            )
            by_id: dict[str, TestResult] = {r.id: r for r in results}
            failing = [t for t in tests if not by_id[t.id].passed]
            traced = await pool.run(
                instance.program(instance.reference),
                failing,
                instance.limits,
                checker=instance.checker,
                trace=True,
            )
            traces = {r.id: r.lines or [] for r in traced}
            shapes = {t.id: output_shape(t) for t in instance.tests}
            grouping = group_failures([t.id for t in failing], by_id, traces, shapes)
            for scenario in grouping.scenarios[:2]:
                chosen = sample_representatives(scenario, 3, seed=5)
                evidence = build_evidence(instance, scenario, chosen, by_id, traces, instance.buggy)
                targets = sorted({line for t in scenario.tests for line in traces.get(t, [])})
                cases.append(Case(instance, scenario, evidence, targets))

        await asyncio.gather(*(one(instance) for instance in INSTANCES))
    cases.sort(key=lambda case: (case.instance.id, case.scenario.id))
    return cases


@pytest.fixture(scope="module")
def cases() -> Iterator[list[Case]]:
    found = asyncio.run(_cases())
    assert {case.instance.id for case in found} == set(BY_ID)  # every fixture fails somewhere
    yield found


def rules_context(case: Case, level: int | None, attempt: int = 0) -> TurnContext:
    evidence = mask_evidence(level, case.evidence) if level is not None else case.evidence
    return context(
        case.instance, level=level, targets=case.targets, evidence=evidence, attempt=attempt
    )


def verbatim_leaks(hint: str, instance: Instance) -> list[str]:
    """Hidden inputs, outputs and reference lines repeated in ``hint`` (a check independent
    of the validator's own rules)."""
    public = instance.problem + "\n" + instance.buggy
    leaks: list[str] = []
    for test in instance.tests:
        texts = [test.input or "", test.output or ""]
        if test.kind == "call":
            texts = [json.dumps(test.args), json.dumps(test.expected)]
        for text in texts:
            for line in text.splitlines():
                line = line.strip()
                if len(line) >= 8 and line in hint and line not in public:
                    leaks.append(line)
    for line in instance.reference.splitlines():
        line = line.strip()
        if len(line) >= 12 and line in hint and line not in public:
            leaks.append(line)
    return leaks


def test_rules_hints_pass_the_validator_at_every_level(cases: list[Case]) -> None:
    rules = RulesFeedback()
    hidden: dict[str, HiddenData] = {}
    for case in cases:
        instance = case.instance
        secret = hidden.setdefault(instance.id, hidden_data(instance))
        for level in range(1, 7):
            ctx = rules_context(case, level)
            hint = rules.hint(ctx, secret)
            assert ctx.evidence is not None
            reasons = validate_hint(hint, level, ctx.evidence, instance.buggy, secret)
            assert not reasons, (instance.id, level, hint, reasons)
            assert "```" not in hint and "`" not in hint
            assert not verbatim_leaks(hint, instance), (instance.id, level, hint)


def test_rules_hints_differ_across_levels(cases: list[Case]) -> None:
    rules = RulesFeedback()
    for case in cases[::2]:
        secret = hidden_data(case.instance)
        hints = [rules.hint(rules_context(case, level), secret) for level in range(1, 7)]
        assert len(set(hints)) == 6, hints


def test_rules_say_what_each_level_allows(cases: list[Case]) -> None:
    rules = RulesFeedback()
    case = next(c for c in cases if c.instance.id == "ledger-balance.float-accumulator")
    secret = hidden_data(case.instance)
    hints = {level: rules.hint(rules_context(case, level), secret) for level in range(1, 7)}
    for level in (1, 2, 3):
        assert "line" not in hints[level] and "total" not in hints[level]
    assert "many digits" in hints[2] or "large" in hints[2]
    assert "line 9" in hints[4] and "total" in hints[4]
    assert "floating-point" in hints[5] and "floating-point" in hints[6]
    assert hints[6].startswith("Revise")
    case = next(c for c in cases if c.instance.id == "merge-intervals.touching-not-merged")
    assert "equal" in rules.hint(rules_context(case, 5))
    assert "equal" in rules.hint(rules_context(case, 6))


def test_rules_regeneration_changes_the_wording(cases: list[Case]) -> None:
    rules = RulesFeedback()
    varied = total = 0
    for case in cases[::4]:
        secret = hidden_data(case.instance)
        for level in range(1, 7):
            first = rules.hint(rules_context(case, level, attempt=0), secret)
            second = rules.hint(rules_context(case, level, attempt=1), secret)
            third = rules.hint(rules_context(case, level, attempt=2), secret)
            assert first == rules.hint(rules_context(case, level, attempt=3), secret)
            evidence = mask_evidence(level, case.evidence)
            assert not validate_hint(second, level, evidence, case.instance.buggy, secret)
            assert not validate_hint(third, level, evidence, case.instance.buggy, secret)
            total += 1
            varied += len({first, second, third}) == 3
    assert varied / total >= 0.9


def test_rules_never_see_more_than_the_level_allows(cases: list[Case]) -> None:
    """Unmasked evidence whose hidden-at-this-level fields are tampered with gives the same
    drafts: the model masks again and never reads what the level may not see."""
    rules = RulesFeedback()
    for case in cases[::5]:
        for level in range(1, 7):
            visible = set(hint_level(level).mask)
            tampered = msgspec.structs.replace(
                case.evidence,
                tests=tuple(
                    msgspec.structs.replace(
                        test,
                        input=test.input if "failing_inputs" in visible else "0\n",
                        trace=test.trace if "reference_trace" in visible else (999,),
                    )
                    for test in case.evidence.tests
                ),
                reference_code=case.evidence.reference_code
                if "reference_code" in visible
                else "print(0)\n",
            )
            masked = rules_context(case, level)
            unmasked = msgspec.structs.replace(masked, evidence=tampered)
            assert rules.drafts(masked) == rules.drafts(unmasked), (case.instance.id, level)


def test_rules_without_level_control_write_a_safe_direction(cases: list[Case]) -> None:
    rules = RulesFeedback()
    case = cases[0]
    hint = rules.hint(rules_context(case, None))
    assert hint == rules.hint(rules_context(case, 6))
    assert not validate_hint(
        hint, 6, case.evidence, case.instance.buggy, hidden_data(case.instance)
    )


def test_rules_hints_survive_the_regeneration_loop(cases: list[Case]) -> None:
    """Driven like the orchestrator drives it: each regeneration raises ``attempt``."""
    rules = RulesFeedback()
    for case in cases[::6]:
        for level in range(1, 7):
            ctx = rules_context(case, level)
            assert ctx.evidence is not None
            calls: list[list[Message]] = []

            def generate(
                messages: list[Message],
                ctx: TurnContext = ctx,
                calls: list[list[Message]] = calls,
            ) -> str:
                calls.append(messages)
                return rules.hint(msgspec.structs.replace(ctx, attempt=len(calls) - 1))

            outcome = produce_hint(
                generate,
                level=level,
                evidence=ctx.evidence,
                candidate_code=case.instance.buggy,
                hidden=hidden_data(case.instance),
                failure=case.scenario.failure,
            )
            assert not outcome.fallback and len(outcome.attempts) == len(calls) == 1
            assert outcome.text == rules.hint(ctx)


async def test_rules_complete_returns_the_hint_as_a_completion(cases: list[Case]) -> None:
    rules = RulesFeedback()
    case = cases[1]
    ctx = rules_context(case, 2)
    messages = initial_prompt(case.instance)
    first = await rules.complete_in_context(messages, ctx)
    second = await rules.complete_in_context(messages, ctx)
    assert first == second and first.model == "rules" and first.attempts == 1
    assert first.text == rules.hint(ctx)
    assert first.usage.completion_tokens == -(-len(first.text) // 4)
    assert first.usage.prompt_tokens >= sum(len(m.content) for m in messages) // 4


def test_rules_locate_the_fault_in_a_revised_program(cases: list[Case]) -> None:
    """After the candidate fixed one of two hunks, L4 points at the one still wrong."""
    rules = RulesFeedback()
    case = next(c for c in cases if c.instance.id == TWO_HUNKS)
    reference, buggy = lines(case.instance.reference), lines(case.instance.buggy)
    half = "\n".join(reference[:10] + buggy[10:]) + "\n"  # hunk at line 10 fixed
    evidence = msgspec.structs.replace(mask_evidence(4, case.evidence), candidate_code=half)
    ctx = context(case.instance, half, level=4, evidence=evidence, targets=case.targets)
    hint = rules.hint(ctx)
    assert "line 12" in hint, hint
    assert not validate_hint(hint, 4, evidence, half, hidden_data(case.instance))


def _word_instance(words: str) -> tuple[Instance, Evidence]:
    """A tiny stdio instance whose hidden data holds ``words``, with one failing test."""
    instance = Instance(
        id="tiny.sum",
        problem="Read n and n integers; print their sum.",
        buggy="n = int(input())\nprint(sum(map(int, input().split())) + 1)\n",
        reference="n = int(input())\nprint(sum(map(int, input().split())))\n",
        tests=[
            HiddenTest(id="1", input="2\n1 2\n", output="3\n"),
            HiddenTest(id="2", input=f"1\n4\n{words}\n", output="4\n"),
        ],
        kind="stdio",
        time_limit=1.0,
        memory_limit_mb=64,
    )
    result = TestResult(id="1", verdict=Verdict.WA, stdout="4\n", mismatch="value")
    scenario = group_failures(["1"], {"1": result}, {"1": [1, 2]}, {"1": "token"}).scenarios[0]
    evidence = build_evidence(instance, scenario, ["1"], {"1": result}, {"1": [1, 2]}, "")
    return instance, evidence


def test_rules_skip_drafts_that_the_validator_rejects() -> None:
    rules = RulesFeedback()
    instance, evidence = _word_instance("suggests")  # a word of the first L1 draft
    ctx = context(instance, level=1, evidence=mask_evidence(1, evidence))
    drafts = rules.drafts(ctx)
    secret = hidden_data(instance)
    assert validate_hint(drafts[0], 1, evidence, instance.buggy, secret)
    hint = rules.hint(ctx)
    assert hint == drafts[1] and not validate_hint(hint, 1, evidence, instance.buggy, secret)
    # a regeneration starts further on and wraps around past the rejected draft
    ctx2 = msgspec.structs.replace(ctx, attempt=2)
    assert rules.hint(ctx2) == drafts[2]
    assert rules.hint(msgspec.structs.replace(ctx, attempt=3)) == drafts[1]


def test_rules_give_the_attempts_own_draft_when_every_draft_leaks() -> None:
    """The validator then rejects it and the orchestrator regenerates or falls back."""
    rules = RulesFeedback()
    instance, evidence = _word_instance("suggests observed produces")
    ctx = context(instance, level=1, evidence=mask_evidence(1, evidence), attempt=1)
    drafts = rules.drafts(ctx)
    secret = hidden_data(instance)
    assert all(validate_hint(d, 1, evidence, instance.buggy, secret) for d in drafts)
    assert rules.hint(ctx) == drafts[1]
