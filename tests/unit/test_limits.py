"""Hand-worked cases of the derived per-test limits (importers) and of the loop rule
(sandbox), and the instance schema staying backward compatible."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from pairbench_async.core.types import Checker, Instance, Limits, Program, Test
from pairbench_async.datasets.importers.limits import derive_limit, with_limits
from pairbench_async.sandbox.jobs import Job, LoopRule, probe_limit, tight_limit
from pairbench_async.sandbox.wire import TEST_HEAD
from pairbench_async.sandbox.jobs import test_limits as own_limits


@pytest.mark.parametrize(("ref_ms", "floor", "factor", "cap", "limit"), [
    (1.0, 1.0, 4.0, 3.0, 1.0),       # a fast reference: the floor
    (300.0, 1.0, 4.0, 3.0, 1.2),     # 4 x 0.3 s
    (301.0, 1.0, 4.0, 3.0, 1.21),    # 1.204 s rounded up to 10 ms
    (2000.0, 1.0, 4.0, 3.0, 3.0),    # 8 s capped
    (250.0, 1.0, 4.0, 3.0, 1.0),     # exactly the floor
    (2.5, 0.01, 10.0, 3.0, 0.03),    # 0.025 s rounded up
])
def test_derived_limit(ref_ms: float, floor: float, factor: float, cap: float,
                       limit: float) -> None:
    assert derive_limit(ref_ms, floor, factor, cap) == limit


def test_with_limits_records_the_time_and_the_limit() -> None:
    tests = [Test(id="1", args=[1], expected=1), Test(id="2", args=[2], expected=2)]
    out = with_limits(tests, [1.25, 400.0], 1.0, 4.0, 3.0)
    assert out == [Test(id="1", args=[1], expected=1, time_limit=1.0, ref_ms=1.25),
                   Test(id="2", args=[2], expected=2, time_limit=1.6, ref_ms=400.0)]


def test_old_instance_files_load_and_mean_what_they_meant() -> None:
    old = (b'{"id":"a","problem":"p","buggy":"b","reference":"r","kind":"stdio",'
           b'"time_limit":2.0,"memory_limit_mb":256,"tests":[{"id":"1","input":"1","output":"1"}]}')
    inst = msgspec.json.decode(old, type=Instance)
    assert inst.tests[0].time_limit is None and inst.tests[0].ref_ms is None
    assert own_limits(inst.tests[0], inst.limits) == (2.0, 7.0)  # the instance's limit
    # and a test without the new fields encodes as before
    assert msgspec.json.encode(inst.tests[0]) == b'{"id":"1","input":"1","output":"1"}'


def test_a_tests_own_limit_wins() -> None:
    test = Test(id="1", input="", time_limit=0.5)
    assert own_limits(test, Limits(time_limit=3.0)) == (0.5, 2.5)
    assert own_limits(test, Limits(time_limit=3.0, wall_limit=10.0)) == (0.5, 10.0)


RULE = LoopRule(factor=10, floor=0.05, probe=0.1)  # the default floor is 0.002; 0.05 reads easier


@pytest.mark.parametrize(("cpu", "ref_ms", "slowest_ms", "limit"), [
    (1.0, 1.0, 0.0, 0.06),     # the floor + 10 x 1 ms
    (1.0, 20.0, 0.0, 0.25),    # the floor + 10 x the reference
    (1.0, 1.0, 8.0, 0.08),     # 10 x the program's own slowest finished test
    (1.0, 20.0, 30.0, 0.25),   # ... at most max(probe, floor + 10 x ref) where ref is known
    (1.0, None, 30.0, 0.3),    # (no reference: not capped)
    (1.0, None, 2.0, 0.05),    # no reference: the floor, or 10 x its own slowest
    (1.0, None, 12.0, 0.12),
    (1.0, 200.0, 0.0, 1.0),    # never above the test's own limit
    (0.03, 1.0, 0.0, 0.03),
])
def test_tight_limit(cpu: float, ref_ms: float | None, slowest_ms: float, limit: float) -> None:
    assert tight_limit(cpu, ref_ms, slowest_ms, RULE) == pytest.approx(limit)


@pytest.mark.parametrize(("cpu", "ref_ms", "slowest_ms", "limit"), [
    (1.0, 1.0, 0.0, 0.1),      # the probe: above the floor + 10 x 1 ms = 0.06
    (1.0, 20.0, 0.0, 0.25),    # the floor + 10 x the reference, above the probe
    (1.0, 1.0, 30.0, 0.1),     # whatever ran before it (10 x 30 ms would be 0.3)
    (1.0, None, 0.0, 1.0),     # no reference: the test's own limit, whatever else
    (1.0, None, 30.0, 1.0),
    (0.05, 1.0, 0.0, 0.05),    # never above the test's own limit
])
def test_probe_limit(cpu: float, ref_ms: float | None, slowest_ms: float, limit: float) -> None:
    assert probe_limit(cpu, ref_ms, slowest_ms, RULE) == pytest.approx(limit)


SHARED = LoopRule(factor=10, floor=0.05, probe=0.1, floor_shared=0.01)


@pytest.mark.parametrize(("cpu", "ref_ms", "slowest_ms", "limit"), [
    (1.0, 1.0, 0.0, 0.02),     # floor_shared + 10 x 1 ms (a lone child's: 0.06)
    (1.0, 20.0, 0.0, 0.21),    # floor_shared + 10 x the reference
    (1.0, 1.0, 8.0, 0.08),     # 10 x the program's own slowest finished test, as alone
    (1.0, None, 8.0, 0.08),    # no reference: 10 x its own slowest ...
    (1.0, None, 0.5, 0.05),    # ... or the lone floor (stop 32: without the reference's time
                               # the floor is the whole bound, and needs a shared test's tail)
    (0.015, 1.0, 0.0, 0.015),  # never above the test's own limit
])
def test_tight_limit_after_another_test_in_a_resident_child(cpu: float, ref_ms: float | None,
                                                           slowest_ms: float, limit: float) -> None:
    assert tight_limit(cpu, ref_ms, slowest_ms, SHARED, shared=True) == pytest.approx(limit)
    # a lone child's test (or a resident child's first) keeps the floor
    assert tight_limit(cpu, ref_ms, slowest_ms, SHARED) >= limit


def test_floor_shared_is_at_most_the_floor() -> None:
    rule = LoopRule(factor=10, floor=0.002, probe=0.1, floor_shared=0.01)
    assert tight_limit(1.0, None, 0.0, rule, shared=True) == pytest.approx(0.002)


def test_the_loop_rule_off() -> None:
    assert tight_limit(1.0, 1.0, 0.0, LoopRule(factor=0)) == 1.0
    assert probe_limit(1.0, 1.0, 0.0, LoopRule(factor=0)) == 1.0


def test_the_heads_carry_the_rule() -> None:
    """What a TEST head tells the zygote: floor + 10 x ref and the probe, in us (0: no
    reference time), the floor and the floor of a test after another in a resident child
    (us), and the factor."""
    tests = [Test(id="1", input="", ref_ms=2.0), Test(id="2", input="")]

    async def heads() -> list[tuple[int, ...]]:
        job = Job(Program(source="print()"), tests, Limits(time_limit=1.0), Checker(), False,
                  LoopRule(factor=10, floor=0.005, probe=0.1))
        return [h[1:] for h in job.heads]

    assert asyncio.run(heads()) == [(1000, 4000, 25000, 100000, 5000, 500, 10),
                                    (1000, 4000, 0, 0, 5000, 500, 10)]


def test_test_head_layout() -> None:
    """The head confine.c's struct test_head reads: 4 uint32 (serial, CPU and wall limits
    in ms, factor), the rule's 4 bounds and a re-run's pinned limit as uint64 in us, and
    one flag byte."""
    assert TEST_HEAD.size == 57


def test_a_tests_own_limits_are_checked() -> None:
    from pairbench_async.datasets.files import check_instance

    def problems(**fields: float) -> list[str]:
        inst = Instance(id="x", problem="p", buggy="print(1)", reference="print(2)",
                        tests=[Test(id="1", input="", output="2\n", **fields)], kind="stdio",
                        time_limit=1.0, memory_limit_mb=256)
        return check_instance(inst)

    assert problems() == []
    assert problems(time_limit=0.5, ref_ms=0.0) == []
    assert problems(time_limit=-1.0) == ["tests[0].time_limit: -1.0 not in (0, 60] seconds"]
    assert problems(time_limit=1e9) == ["tests[0].time_limit: 1000000000.0 not in (0, 60] seconds"]
    assert problems(ref_ms=float("nan")) == ["tests[0].ref_ms: nan is not a time in ms (finite, >= 0)"]
    assert problems(ref_ms=-2.0) == ["tests[0].ref_ms: -2.0 is not a time in ms (finite, >= 0)"]


@pytest.mark.parametrize(("test", "limits", "message"), [
    (Test(id="a", input="", output="", time_limit=-1.0), Limits(), "test 'a': time_limit: -1.0"),
    (Test(id="a", input="", output="", time_limit=0.0), Limits(), "test 'a': time_limit: 0.0"),
    (Test(id="a", input="", output="", ref_ms=float("nan")), Limits(), "test 'a': ref_ms nan"),
    (Test(id="a", input="", output="", ref_ms=-1.0), Limits(), "test 'a': ref_ms -1.0"),
    (Test(id="a", input="", output=""), Limits(time_limit=-1), "Limits.time_limit: -1"),
    (Test(id="a", input="", output=""), Limits(time_limit=float("nan")), "Limits.time_limit: nan"),
    (Test(id="a", input="", output=""), Limits(wall_limit=0.0), "Limits.wall_limit: 0.0"),
    (Test(id="a", input="", output=""), Limits(memory_limit_mb=-5), "Limits.memory_limit_mb: -5"),
])
def test_the_pool_refuses_limits_that_mean_nothing(test: Test, limits: Limits, message: str) -> None:
    # the caller's mistake, named, before any worker starts (not a TLE or MLE verdict)
    from pairbench_async.core.errors import ConfigError
    from pairbench_async.sandbox.pool import SandboxPool

    async def run() -> None:
        pool = SandboxPool(workers=1)
        try:
            await pool.run(Program(source="print(1)"), [test], limits)
        finally:
            await pool.aclose()

    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        asyncio.run(run())


def test_a_tests_file_with_a_bad_limit_names_its_line_and_field(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pairbench_async.core.errors import DatasetError
    from pairbench_async.datasets.files import read_tests

    path = tmp_path / "t.jsonl"
    path.write_text('{"id":"1","input":"1\\n","output":"1\\n"}\n'
                    '{"id":"2","input":"1\\n","output":"1\\n","time_limit":-1}\n')
    with pytest.raises(DatasetError, match=r"t.jsonl:2: field 'time_limit': -1.0 not in \(0, 60\] seconds"):
        read_tests(str(path))
