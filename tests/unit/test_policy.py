"""Algorithm 1 on scripted trajectories, its resolutions of the paper's ambiguities, resume."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pairbench_async.core.errors import ConfigError
from pairbench_async.core.types import TestResult as Result
from pairbench_async.core.types import Verdict
from pairbench_async.protocol.policy import (
    Plan,
    PolicyConfig,
    PolicyState,
    Stop,
    is_deferred,
    observe,
    plan,
    start,
)
from pairbench_async.protocol.scenarios import Scenario, ScenarioConfig, group_failures
from pairbench_async.protocol.shapes import Shape

# Three regions of three tests each: A (wrong value, widest trace), B (timeout), C (crash).
SPECS: dict[str, tuple[list[int], Shape, Result]] = {
    **{f"a{i}": ([1, 2, 3], "token", Result(id=f"a{i}", verdict=Verdict.WA)) for i in range(3)},
    **{f"b{i}": ([1, 4], "token", Result(id=f"b{i}", verdict=Verdict.TLE)) for i in range(3)},
    **{
        f"c{i}": ([5], "line", Result(id=f"c{i}", verdict=Verdict.RE, error="IndexError"))
        for i in range(3)
    },
}
A = {"a0", "a1", "a2"}
B = {"b0", "b1", "b2"}
C = {"c0", "c1", "c2"}
RESULTS = {test: spec[2] for test, spec in SPECS.items()}
TRACES = {test: spec[0] for test, spec in SPECS.items()}
SHAPES: dict[str, Shape] = {test: spec[1] for test, spec in SPECS.items()}


class Run(msgspec.Struct):
    plans: list[Plan]
    states: list[PolicyState]
    stop: Stop


def run(
    config: PolicyConfig,
    failing: set[str],
    script: Sequence[set[str]],
    *,
    state: PolicyState | None = None,
    seed: int = 0,
    universe: set[str] | None = None,
) -> Run:
    """Drive plan/observe; ``script[k]`` is the passing set after the (k+1)-th planned turn."""
    universe = universe or (A | B | C)
    state = state or start()
    plans: list[Plan] = []
    states = [state]
    steps = iter(script)
    while True:
        state, decision = plan(config, state, failing, RESULTS, TRACES, SHAPES, seed)
        if isinstance(decision, Stop):
            states.append(state)
            return Run(plans=plans, states=states, stop=decision)
        plans.append(decision)
        passed = next(steps)
        state = observe(config, state, decision, passed)
        states.append(state)
        failing = universe - passed


def test_success_fades_the_level_but_never_below_one() -> None:
    config = PolicyConfig()
    outcome = run(config, A | B, [A, A, A | B], universe=A | B)
    assert [p.level for p in outcome.plans] == [1, 1, 2]
    assert [set(p.scenario.tests) for p in outcome.plans] == [A, B, B]
    assert [p.continued for p in outcome.plans] == [False, False, True]
    # start, after each of the three observes, after the stopping plan
    assert [s.level for s in outcome.states] == [1, 1, 2, 1, 1]
    final = outcome.states[-1]
    assert [a.outcome for a in final.attempts] == ["completed", "completed"]
    assert [a.closed_level for a in final.attempts] == [1, 2]
    assert [a.levels for a in final.attempts] == [(1,), (1, 2)]
    assert outcome.stop == Stop(reason="all_pass", turns=3)
    assert final.stop == "all_pass"


def test_escalation_then_deferral_at_level_six() -> None:
    config = PolicyConfig(scenario_turns=10)
    outcome = run(config, set(A), [set()] * 6, universe=A)
    assert [p.level for p in outcome.plans] == [1, 2, 3, 4, 5, 6]
    assert len({p.scenario.id for p in outcome.plans}) == 1
    final = outcome.states[-1]
    assert final.attempts[0].outcome == "deferred" and final.attempts[0].levels == (
        1,
        2,
        3,
        4,
        5,
        6,
    )
    assert final.level == 6
    assert outcome.stop.reason == "nothing_selectable"


def test_deferral_at_the_configured_top_level() -> None:
    outcome = run(PolicyConfig(max_level=2, scenario_turns=5), set(A), [set(), set()], universe=A)
    assert [p.level for p in outcome.plans] == [1, 2]
    assert outcome.states[-1].attempts[0].outcome == "deferred"
    assert outcome.stop.reason == "nothing_selectable"


def test_deferral_at_beta_keeps_the_level_and_moves_on() -> None:
    config = PolicyConfig(scenario_turns=3)
    outcome = run(config, A | B, [set(), set(), set(), B], universe=A | B)
    assert [p.level for p in outcome.plans] == [1, 2, 3, 3]
    assert [set(p.scenario.tests) for p in outcome.plans] == [A, A, A, B]
    final = outcome.states[-1]
    assert [a.outcome for a in final.attempts] == ["deferred", "completed"]
    assert final.level == 2
    # A regroups to the same id with the same tests: it stays deferred
    assert outcome.stop.reason == "nothing_selectable"
    assert final.scenario_turns == {
        outcome.plans[0].scenario.id: 3,
        outcome.plans[3].scenario.id: 1,
    }


@pytest.mark.parametrize(("mode", "level"), [("stay", 3), ("escalate", 4), ("reset", 1)])
def test_level_after_deferral(mode: str, level: int) -> None:
    # β = 3: A fails at L1 -> L2 -> L3 and is deferred by the β limit at L3, below L6.
    # Algorithm 1 (lines 15-16) defers without changing ℓ: B starts at L3 ("stay").
    # §IV-D.2's text raises ℓ on every failure, min(6, 3 + 1) = 4 ("escalate"): the two
    # sources disagree exactly here (docs/PROTOCOL.md).
    config = PolicyConfig(scenario_turns=3, after_deferral=mode)  # type: ignore[arg-type]
    outcome = run(config, A | B, [set(), set(), set(), B], universe=A | B)
    assert outcome.plans[3].level == level


def test_completed_scenario_is_reopened_when_its_tests_fail_again() -> None:
    config = PolicyConfig()
    outcome = run(config, A | B, [A, B | {"a1", "a2"}, A | B], universe=A | B)
    first, second, third = outcome.plans
    after_second = outcome.states[2]
    assert first.scenario.id in after_second.reopened
    assert [set(s.tests) for s in after_second.completed] == [B]
    assert third.scenario.tests == ("a0",) and not third.continued
    assert outcome.stop.reason == "all_pass"


def test_continued_target_is_its_original_tests_that_still_fail() -> None:
    config = PolicyConfig()
    outcome = run(config, A | B, [{"a0"}, {"a1", "a2"}, A | B], universe=A | B)
    first, second, third = outcome.plans
    assert second.continued and second.scenario.id == first.scenario.id
    assert set(second.scenario.tests) == {"a1", "a2"}
    assert second.level == 2
    # G_2 = {a1, a2} passed, so the scenario is completed although a0 regressed
    assert outcome.states[2].attempts[0].outcome == "completed"
    # a0 is regrouped on its own; B, the larger region, goes first
    assert set(third.scenario.tests) == B and third.scenario_count == 2


def test_budget_stops_and_marks_the_open_attempt_unresolved() -> None:
    outcome = run(PolicyConfig(turns=2), set(A), [set(), set()], universe=A)
    assert len(outcome.plans) == 2
    assert outcome.stop == Stop(reason="budget", turns=2)
    assert outcome.states[-1].attempts[0].outcome == "unresolved"


def test_zero_budget_and_nothing_failing() -> None:
    assert run(PolicyConfig(turns=0), set(A), []).stop == Stop(reason="budget", turns=0)
    assert run(PolicyConfig(), set(), []).stop == Stop(reason="all_pass", turns=0)


def test_stop_is_sticky_and_observe_after_stop_fails() -> None:
    config = PolicyConfig(turns=0)
    state, decision = plan(config, start(), A, RESULTS, TRACES, SHAPES, 0)
    assert isinstance(decision, Stop)
    again, second = plan(config, state, set(), RESULTS, TRACES, SHAPES, 0)
    assert second == decision and again == state
    fake = Plan(
        turn=1,
        level=1,
        scenario=Scenario(id="x", level="type", failure="timeout"),
        representatives=(),
        continued=False,
        grouping="type",
        scenario_count=1,
    )
    with pytest.raises(ConfigError):
        observe(config, state, fake, set())


def test_observe_rejects_a_plan_from_another_state() -> None:
    config = PolicyConfig()
    state, decision = plan(config, start(), A | B, RESULTS, TRACES, SHAPES, 0)
    assert isinstance(decision, Plan)
    with pytest.raises(ConfigError):
        observe(config, state, msgspec.structs.replace(decision, turn=5), set())
    with pytest.raises(ConfigError):
        observe(config, start(), decision, set())
    other = msgspec.structs.replace(decision.scenario, id="other")
    with pytest.raises(ConfigError):
        observe(config, state, msgspec.structs.replace(decision, scenario=other), set())


def test_failing_set_that_contradicts_the_open_target_is_an_error() -> None:
    config = PolicyConfig()
    state, decision = plan(config, start(), A | B, RESULTS, TRACES, SHAPES, 0)
    assert isinstance(decision, Plan)
    state = observe(config, state, decision, set())
    with pytest.raises(ConfigError):
        plan(config, state, B, RESULTS, TRACES, SHAPES, 0)


def _deferred(
    level: str, tests: set[str], failure: str = "timeout", trace: tuple[int, ...] | None = (1,)
) -> Scenario:
    return Scenario(
        id=f"{level}-{failure}",
        level=level,  # type: ignore[arg-type]
        failure=failure,
        shape=None if level == "type" else "token",
        trace=trace if level == "full" else None,
        tests=tuple(sorted(tests)),
    )


def test_deferred_identity_rule() -> None:
    region = _deferred("full", {"x1", "x2", "x3"})
    state = PolicyState(deferred=(region,))
    same_subset = msgspec.structs.replace(region, tests=("x1", "x2"))
    grown = msgspec.structs.replace(region, tests=("x1", "x4"))
    coarse = _deferred("type", {"x1", "x3"})
    other_type = _deferred("type", {"x1"}, failure="memory")
    assert is_deferred(state, region) and is_deferred(state, same_subset)
    assert not is_deferred(state, grown)
    assert is_deferred(state, coarse)
    assert not is_deferred(state, other_type)
    two = PolicyState(deferred=(region, _deferred("full", {"y1"}, trace=(9,))))
    assert is_deferred(two, _deferred("type", {"x2", "y1"}))
    assert not is_deferred(two, _deferred("type", {"x2", "y1", "z"}))


def test_deferred_region_that_gains_a_test_is_selectable_again() -> None:
    config = PolicyConfig(scenario_turns=1, scenarios=ScenarioConfig(min_size=1))
    # turn 1 fails on {a0, a1} and defers it; a2 then fails too, with the same key
    outcome = run(config, {"a0", "a1"}, [set(), A], universe=A)
    first, second = outcome.plans
    assert set(first.scenario.tests) == {"a0", "a1"}
    assert first.scenario.id == second.scenario.id and not second.continued
    assert set(second.scenario.tests) == A
    assert [a.outcome for a in outcome.states[-1].attempts] == ["deferred", "completed"]
    assert outcome.stop.reason == "all_pass"


def test_state_round_trips_and_resumes_identically() -> None:
    config = PolicyConfig(scenario_turns=2)
    script = [set(), {"a0"}, B, B | {"c1"}, A | B | C]
    whole = run(config, A | B | C, script, seed=11)
    # two turns, then serialise, decode and continue as a resumed run would
    state = start()
    failing = A | B | C
    for passed in script[:2]:
        state, decision = plan(config, state, failing, RESULTS, TRACES, SHAPES, 11)
        assert isinstance(decision, Plan)
        state = observe(config, state, decision, passed)
        failing = (A | B | C) - passed
    restored = msgspec.json.decode(msgspec.json.encode(state), type=PolicyState)
    assert restored == state
    resumed = run(config, failing, script[2:], state=restored, seed=11)
    assert resumed.plans == whole.plans[2:]
    assert resumed.stop == whole.stop
    assert resumed.states[-1] == whole.states[-1]


def test_config_validation() -> None:
    for bad in ({"turns": -1}, {"scenario_turns": 0}, {"max_level": 0}, {"max_level": 7}):
        with pytest.raises(ConfigError):
            PolicyConfig(**bad)  # type: ignore[arg-type]


def test_representatives_are_seeded_per_turn() -> None:
    many = {f"a{i}": Result(id=f"a{i}", verdict=Verdict.WA) for i in range(12)}
    traces: Mapping[str, Sequence[int]] = {k: [1] for k in many}
    shapes: Mapping[str, Shape] = {k: "token" for k in many}
    config = PolicyConfig()
    picks = []
    for seed in (1, 1, *range(2, 12)):
        _, decision = plan(config, start(), many, many, traces, shapes, seed)
        assert isinstance(decision, Plan)
        picks.append(decision.representatives)
        assert len(decision.representatives) == 3
    assert picks[0] == picks[1]
    assert len(set(picks)) > 3


@settings(max_examples=150, deadline=None)
@given(
    turns=st.integers(0, 8),
    beta=st.integers(1, 4),
    top=st.integers(1, 6),
    mode=st.sampled_from(["stay", "escalate", "reset"]),
    script=st.lists(st.sets(st.sampled_from(sorted(A | B | C))), min_size=8, max_size=8),
    seed=st.integers(0, 1000),
)
def test_invariants_on_random_trajectories(
    turns: int, beta: int, top: int, mode: str, script: list[set[str]], seed: int
) -> None:
    config = PolicyConfig(turns=turns, scenario_turns=beta, max_level=top, after_deferral=mode)  # type: ignore[arg-type]
    universe = A | B | C
    failing = set(universe)
    state = start()
    for step in range(turns + 2):
        state, decision = plan(config, state, failing, RESULTS, TRACES, SHAPES, seed)
        assert 1 <= state.level <= top
        if isinstance(decision, Stop):
            assert decision.turns == state.turn <= turns
            if decision.reason == "all_pass":
                assert not failing
            elif decision.reason == "budget":
                assert state.turn == turns and failing
            else:
                grouping = group_failures(failing, RESULTS, TRACES, SHAPES, config.scenarios)
                assert failing and all(is_deferred(state, s) for s in grouping.scenarios)
            assert state.target is None
            break
        assert decision.turn == state.turn + 1 <= turns
        assert 1 <= decision.level <= top
        assert set(decision.scenario.tests) <= failing and decision.scenario.tests
        assert set(decision.representatives) <= set(decision.scenario.tests)
        assert len(decision.representatives) == min(3, len(decision.scenario.tests))
        passed = script[step]
        state = observe(config, state, decision, passed)
        failing = universe - passed
        assert 1 <= state.level <= top
        for done in state.completed:
            assert set(done.tests) <= passed
        assert sum(a.turns for a in state.attempts) == state.turn
        assert all(a.turns <= beta for a in state.attempts)
    else:
        pytest.fail("the policy did not stop within alpha + 1 plans")
