"""Failure types, signatures, hierarchical back-off, ordering and seeded sampling."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairbench_async.core.errors import ConfigError
from pairbench_async.core.types import TestResult as Result
from pairbench_async.core.types import Verdict
from pairbench_async.protocol.scenarios import (
    Grouping,
    Scenario,
    ScenarioConfig,
    failure_type,
    group_failures,
    keys_compatible,
    sample_representatives,
    scenario_id,
    signature,
    with_tests,
)
from pairbench_async.protocol.shapes import Shape

Spec = tuple[Sequence[int], Shape, Verdict, str | None]


def _world(
    specs: Mapping[str, Spec],
) -> tuple[dict[str, Result], dict[str, Sequence[int]], dict[str, Shape]]:
    """Results, traces and shapes from test id -> (trace, shape, verdict, mismatch/error)."""
    results, traces, shapes = {}, {}, {}
    for test_id, (trace, shape, verdict, detail) in specs.items():
        if verdict is Verdict.WA:
            results[test_id] = Result(id=test_id, verdict=verdict, mismatch=detail)  # type: ignore[arg-type]
        else:
            results[test_id] = Result(id=test_id, verdict=verdict, error=detail)
        traces[test_id] = trace
        shapes[test_id] = shape
    return results, traces, shapes


def _group(specs: Mapping[str, Spec], config: ScenarioConfig | None = None) -> Grouping:
    results, traces, shapes = _world(specs)
    return group_failures(specs, results, traces, shapes, config)


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (Result(id="t", verdict=Verdict.TLE), "timeout"),
        (Result(id="t", verdict=Verdict.MLE), "memory"),
        (Result(id="t", verdict=Verdict.OLE), "output_limit"),
        (Result(id="t", verdict=Verdict.SF, error="helper died"), "sandbox_fault"),
        (
            Result(id="t", verdict=Verdict.RE, error="ZeroDivisionError"),
            "runtime:ZeroDivisionError",
        ),
        (Result(id="t", verdict=Verdict.RE, error="SIGSEGV"), "runtime:SIGSEGV"),
        (Result(id="t", verdict=Verdict.RE, error="ValueError: bad"), "runtime:ValueError"),
        (Result(id="t", verdict=Verdict.RE), "runtime:unknown"),
        (Result(id="t", verdict=Verdict.RE, error="ValueError('x = 42')"), "runtime:ValueError"),
        # a name outside the closed vocabulary is never kept: dotted, program-chosen, Unicode
        (
            Result(id="t", verdict=Verdict.RE, error="  json.decoder.JSONDecodeError"),
            "runtime:ProgramDefinedException",
        ),
        (Result(id="t", verdict=Verdict.RE, error="_CANARY_7731_4242"), "runtime:ProgramDefinedException"),
        (Result(id="t", verdict=Verdict.RE, error="Ωmega_7731"), "runtime:ProgramDefinedException"),
        (Result(id="t", verdict=Verdict.RE, error="ProgramDefinedException"), "runtime:ProgramDefinedException"),
        # the sandbox's own texts, without the number a program picks
        (Result(id="t", verdict=Verdict.RE, error="exit code 42"), "runtime:ExitCode"),
        (Result(id="t", verdict=Verdict.RE, error="signal 42"), "runtime:Signal"),
        (Result(id="t", verdict=Verdict.RE, error="corrupt result report"), "runtime:CorruptReport"),
        (Result(id="t", verdict=Verdict.RE, error="no return value"), "runtime:NoReturnValue"),
        (Result(id="t", verdict=Verdict.RE, error="SourceTooLarge"), "runtime:SourceTooLarge"),
        (Result(id="t", verdict=Verdict.RE, error="'quoted' junk"), "runtime:unknown"),
        (Result(id="t", verdict=Verdict.WA, mismatch="lines"), "wrong_lines"),
        (Result(id="t", verdict=Verdict.WA, mismatch="tokens"), "wrong_tokens"),
        (Result(id="t", verdict=Verdict.WA, mismatch="value"), "wrong_value"),
        (Result(id="t", verdict=Verdict.WA), "wrong_value"),
    ],
)
def test_failure_types(result: Result, expected: str) -> None:
    assert failure_type(result) == expected


def test_passing_result_has_no_failure_type() -> None:
    with pytest.raises(ConfigError):
        failure_type(Result(id="t", verdict=Verdict.AC))


def test_signature_sorts_and_dedupes_trace() -> None:
    result = Result(id="t", verdict=Verdict.TLE)
    assert signature(result, [5, 1, 5, 3], "token") == ((1, 3, 5), "token", "timeout")


def test_full_signature_groups_when_not_fragmented() -> None:
    specs: dict[str, Spec] = {
        **{f"a{i}": ([1, 2, 3], "token", Verdict.WA, "value") for i in range(3)},
        **{f"b{i}": ([1, 4], "token", Verdict.WA, "value") for i in range(3)},
    }
    grouping = _group(specs)
    assert grouping.level == "full"
    assert [s.tests for s in grouping.scenarios] == [("a0", "a1", "a2"), ("b0", "b1", "b2")]
    first = grouping.scenarios[0]
    assert first.trace == (1, 2, 3) and first.shape == "token" and first.failure == "wrong_value"
    assert first.coverage == 3 and grouping.scenarios[1].coverage == 2


def test_back_off_to_shape_type_by_scenario_count() -> None:
    # 9 distinct traces x 3 tests: 9 > K_max = 8 groups of size 3 (median 3 = s_min).
    specs: dict[str, Spec] = {
        f"t{k}_{i}": ([k], "line", Verdict.WA, "tokens") for k in range(9) for i in range(3)
    }
    grouping = _group(specs)
    assert grouping.level == "shape_type"
    assert len(grouping.scenarios) == 1 and grouping.scenarios[0].trace is None
    assert grouping.scenarios[0].shape == "line"


def test_back_off_to_shape_type_by_median_size() -> None:
    specs: dict[str, Spec] = {f"t{k}": ([k], "grid", Verdict.TLE, None) for k in range(4)}
    grouping = _group(specs)
    assert grouping.level == "shape_type"
    assert grouping.scenarios[0].tests == ("t0", "t1", "t2", "t3")


def test_back_off_to_type_by_scenario_count() -> None:
    shapes: list[Shape] = ["token", "line", "grid"]
    specs: dict[str, Spec] = {
        f"{shape}{i}": ([i], shape, Verdict.MLE, None) for shape in shapes for i in range(3)
    }
    config = ScenarioConfig(max_scenarios=2, min_size=1)
    grouping = _group(specs, config)
    assert grouping.level == "type"
    assert len(grouping.scenarios) == 1
    assert grouping.scenarios[0].shape is None and grouping.scenarios[0].failure == "memory"


def test_back_off_to_type_by_median_size() -> None:
    specs: dict[str, Spec] = {
        "x": ([1], "token", Verdict.WA, "value"),
        "y": ([1], "line", Verdict.WA, "value"),
        "z": ([1], "grid", Verdict.WA, "value"),
    }
    grouping = _group(specs)
    assert grouping.level == "type"
    assert grouping.scenarios[0].tests == ("x", "y", "z")


def test_type_level_is_final_even_when_fragmented() -> None:
    specs: dict[str, Spec] = {
        "a": ([1], "token", Verdict.TLE, None),
        "b": ([1], "token", Verdict.MLE, None),
        "c": ([1], "token", Verdict.RE, "IndexError"),
        "d": ([1], "token", Verdict.RE, "KeyError"),
    }
    grouping = _group(specs, ScenarioConfig(max_scenarios=1))
    assert grouping.level == "type"
    assert len(grouping.scenarios) == 4


def test_no_back_off_when_neither_rule_fires() -> None:
    specs: dict[str, Spec] = {f"t{i}": ([i % 2], "token", Verdict.TLE, None) for i in range(6)}
    assert _group(specs).level == "full"
    assert _group(specs, ScenarioConfig(min_size=3.5)).level == "shape_type"


def test_order_is_size_then_coverage_then_id() -> None:
    specs: dict[str, Spec] = {
        **{f"big{i}": ([1], "token", Verdict.WA, "value") for i in range(4)},
        **{f"wide{i}": ([1, 2, 3, 4], "token", Verdict.WA, "value") for i in range(3)},
        **{f"narrow{i}": ([1, 2], "token", Verdict.WA, "value") for i in range(3)},
        **{f"tie{i}": ([7, 8], "token", Verdict.WA, "value") for i in range(3)},
    }
    scenarios = _group(specs).scenarios
    assert scenarios[0].tests[0].startswith("big")
    assert scenarios[1].tests[0].startswith("wide")
    tied = scenarios[2:]
    assert {s.tests[0][:3] for s in tied} == {"nar", "tie"}
    assert tied[0].id < tied[1].id


def test_missing_trace_is_empty_and_missing_result_or_shape_is_an_error() -> None:
    results, _, shapes = _world({"a": ([1], "token", Verdict.TLE, None)})
    grouping = group_failures(["a"], results, {}, shapes)
    assert grouping.scenarios[0].coverage == 0
    with pytest.raises(ConfigError):
        group_failures(["a", "b"], results, {}, shapes)
    with pytest.raises(ConfigError):
        group_failures(["a"], results, {}, {})


def test_empty_failing_set_has_no_scenarios() -> None:
    assert group_failures([], {}, {}, {}).scenarios == ()


def test_scenario_id_is_stable_and_depends_on_level_and_key_only() -> None:
    key: tuple[tuple[int, ...] | None, Shape | None, str] = ((1, 2), "token", "timeout")
    other: tuple[tuple[int, ...] | None, Shape | None, str] = ((9,), "grid", "timeout")
    assert scenario_id("full", key) == scenario_id("full", key)
    assert len(scenario_id("full", key)) == 12
    assert scenario_id("full", key) != scenario_id("shape_type", key)
    same_shape: tuple[tuple[int, ...] | None, Shape | None, str] = ((9,), "token", "timeout")
    assert scenario_id("shape_type", key) == scenario_id("shape_type", same_shape)
    assert scenario_id("shape_type", key) != scenario_id("shape_type", other)
    assert scenario_id("type", key) == scenario_id("type", other)
    assert scenario_id("type", other) == scenario_id("type", (None, None, "timeout"))
    # a pinned value: ids must stay comparable across releases, processes and machines
    assert scenario_id("type", (None, None, "timeout")) == "c937a09e3ebd"


def test_keys_compatible_across_levels() -> None:
    full = Scenario(id="a", level="full", trace=(1,), shape="token", failure="timeout")
    coarse = Scenario(id="b", level="type", failure="timeout")
    other = Scenario(id="c", level="shape_type", shape="grid", failure="timeout")
    assert keys_compatible(full, coarse) and keys_compatible(coarse, full)
    assert not keys_compatible(full, other)
    assert keys_compatible(other, coarse)


def test_with_tests_keeps_identity_and_recomputes_coverage() -> None:
    scenario = Scenario(id="x", level="type", failure="timeout", tests=("a", "b"), coverage=3)
    narrowed = with_tests(scenario, ["b"], {"a": [1, 2], "b": [2]})
    assert narrowed.id == "x" and narrowed.tests == ("b",) and narrowed.coverage == 1


def test_config_validation() -> None:
    for bad in ({"max_scenarios": 0}, {"min_size": 0}, {"representatives": 0}):
        with pytest.raises(ConfigError):
            ScenarioConfig(**bad)


def _scenario(tests: Sequence[str]) -> Scenario:
    return Scenario(id="s1", level="type", failure="timeout", tests=tuple(sorted(tests)))


def test_sampling_is_seeded_and_independent_of_input_order() -> None:
    tests = [f"t{i}" for i in range(20)]
    a = sample_representatives(_scenario(tests), 3, seed=7)
    b = sample_representatives(
        msgspec.structs.replace(_scenario(tests), tests=tuple(reversed(tests))), 3, seed=7
    )
    assert a == b
    assert len({sample_representatives(_scenario(tests), 3, seed=s) for s in range(10)}) > 1
    with pytest.raises(ConfigError):
        sample_representatives(_scenario(tests), 0, seed=1)


@given(
    st.lists(st.text("abcdef", min_size=1, max_size=4), unique=True, max_size=30),
    st.integers(1, 8),
    st.integers(0, 2**32),
)
def test_sampling_returns_subset_of_size_min_m_g(tests: list[str], m: int, seed: int) -> None:
    picks = sample_representatives(_scenario(tests), m, seed)
    assert set(picks) <= set(tests)
    assert len(picks) == len(set(picks)) == min(m, len(tests))
    assert picks == sample_representatives(_scenario(tests), m, seed)


_verdicts = st.sampled_from([Verdict.WA, Verdict.TLE, Verdict.RE, Verdict.MLE])
_spec = st.tuples(
    st.lists(st.integers(1, 6), max_size=4),
    st.sampled_from(["token", "line", "binary", "grid", "multiline", "empty"]),
    _verdicts,
    st.sampled_from(["lines", "tokens", "value"]),
)


@given(
    st.dictionaries(st.text("pqrs0123", min_size=1, max_size=5), _spec, max_size=40),
    st.integers(1, 10),
    st.integers(1, 5),
)
def test_grouping_partitions_the_failing_set(
    specs: dict[str, Spec], k_max: int, s_min: int
) -> None:
    grouping = _group(specs, ScenarioConfig(max_scenarios=k_max, min_size=s_min))
    seen = [test for scenario in grouping.scenarios for test in scenario.tests]
    assert sorted(seen) == sorted(specs)
    assert len({s.id for s in grouping.scenarios}) == len(grouping.scenarios)
    assert all(s.level == grouping.level for s in grouping.scenarios)
    order = [(-s.size, -s.coverage, s.id) for s in grouping.scenarios]
    assert order == sorted(order)


@pytest.mark.parametrize("max_scenarios", [9, 3, 2])  # full, shape_type, type
def test_targets_of_every_grouping_level_round_trip_through_the_record_log(max_scenarios: int) -> None:
    """A back-off drops the trace (shape_type) and the shape (type): the record must say so
    and still decode (a sweep once wrote ``"shape": null`` its own reader refused)."""
    from pairbench_async.protocol.policy import Plan
    from pairbench_async.runlog.records import Record, TurnRecord
    from pairbench_async.runner.episode import target_record

    shapes: list[Shape] = ["token", "line", "grid"]
    specs: dict[str, Spec] = {
        f"{shape}{i}": ([i], shape, Verdict.MLE, None) for shape in shapes for i in range(3)
    }
    grouping = _group(specs, ScenarioConfig(max_scenarios=max_scenarios, min_size=1))
    sc = grouping.scenarios[0]
    plan = Plan(turn=1, level=2, scenario=sc, representatives=sc.tests[:2], continued=False,
                grouping=grouping.level, scenario_count=len(grouping.scenarios))
    rec = TurnRecord(run_id="r", episode_id="e", instance_id="i", model="m", protocol="pair", run=0,
                     seed=1, turn=1, program="", passed=[], failed=list(sc.tests), pass_rate=0.0,
                     target=target_record(plan))
    back = msgspec.json.decode(msgspec.json.encode(rec), type=Record)
    assert back == rec and back.target is not None
    assert back.target.grouping == grouping.level
    assert back.target.shape == sc.shape and (sc.shape is None) == (grouping.level == "type")
