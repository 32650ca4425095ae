"""The loop rule of SandboxPool.run: a looping program costs about one probe (0.05 s by
default; several tests here set 0.1 s, the value they were written for) per call when its tests carry the reference's time, one own limit when they do not,
not one limit per test; and verdicts differ from running every test to its own limit
only for tests the program would finish only beyond the rule's bound: more than
loop_floor + loop_factor x the reference's time (and, before any timeout of the call,
more than loop_probe), or than loop_factor x its own slowest finished test."""

from __future__ import annotations

import asyncio
import time

import msgspec

from pairbench_async.core.types import Limits, Program, Test, Verdict
from pairbench_async.sandbox.config import SandboxConfig
from pairbench_async.sandbox.pool import SandboxPool

#: stdin "loop": runs forever; "burn:N": N ms of CPU, then its input's echo; else the echo
PROGRAM = Program(source=(
    "import time\n"
    "word = input().strip()\n"
    "if word == 'loop':\n"
    "    while True:\n"
    "        pass\n"
    "if word.startswith('burn:'):\n"
    "    t = time.process_time()\n"
    "    while time.process_time() - t < int(word.split(':')[1]) / 1000:\n"
    "        pass\n"
    "print(word)\n"))


def case(word: str, ident: str, ref_ms: float | None = None) -> Test:
    return Test(id=ident, input=word + "\n", output=word + "\n", ref_ms=ref_ms)


async def test_a_looping_program_costs_about_one_limit_not_one_per_test() -> None:
    n, limit = 30, 1.0
    tests = [case("loop", str(i)) for i in range(n)]
    async with SandboxPool(workers=2) as pool:
        async with asyncio.timeout(60):  # a deadline, not a measurement
            t0 = time.monotonic()
            results = await pool.run(PROGRAM, tests, Limits(time_limit=limit))
            wall = time.monotonic() - t0
    assert [r.verdict for r in results] == [Verdict.TLE] * n
    cpu = sum(r.cpu_ms for r in results) / 1000
    # every test to its limit would be 30 s of CPU; the rule: one limit, then 29 x 10 ms
    # (generous bounds: a loaded machine stretches both)
    assert cpu < 2 * limit + n * 0.06, cpu
    assert wall < 4 * limit + n * 0.2, wall
    # the first timeout ran to the full limit, the others to the rule's
    assert max(r.cpu_ms for r in results) >= 0.6 * limit * 1000
    assert sorted(r.cpu_ms for r in results)[n - 2] < 0.2 * limit * 1000


async def test_with_reference_times_a_looping_program_never_spends_its_own_limit() -> None:
    n, limit = 30, 2.0
    tests = [case("loop", str(i), ref_ms=0.5) for i in range(n)]
    async with SandboxPool(workers=2) as pool:
        async with asyncio.timeout(60):
            results = await pool.run(PROGRAM, tests, Limits(time_limit=limit))
    assert [r.verdict for r in results] == [Verdict.TLE] * n
    # the first test (on each worker) stops at the 0.1 s probe, the others at
    # 2 ms + 10 x 0.5 ms = 7 ms; every one to its own limit would be 60 s of CPU
    assert max(r.cpu_ms for r in results) < 0.5 * 1000
    assert sum(r.cpu_ms for r in results) / 1000 < 2 * 0.1 + n * 0.05


async def test_the_probe_leaves_a_slow_program_alone_below_it() -> None:
    # 25 ms of CPU on tests whose reference takes 0.1 ms: 250 x the reference, but under
    # the 0.05 s probe and no timeout in the call: AC, as with the full limit
    assert SandboxConfig().loop_probe == 0.05
    tests = [case("burn:25", str(i), ref_ms=0.1) for i in range(3)]
    async with SandboxPool(workers=1) as pool:
        async with asyncio.timeout(60):
            results = await pool.run(PROGRAM, tests, Limits(time_limit=1.0))
    assert [r.verdict for r in results] == [Verdict.AC] * 3
    # and work_ms, what ref_ms measures, is the program's own time without the test's
    # fixed cost
    assert all(22 <= r.work_ms <= r.cpu_ms for r in results if r.work_ms is not None)
    assert all(r.work_ms is not None for r in results)


async def test_verdicts_after_a_timeout_are_those_of_the_full_limit_within_the_rule() -> None:
    tests = [case("a", "1"), case("loop", "2"), case("b", "3"),
             # 150 ms of CPU with a 30 ms reference: within 2 ms + 10 x, still AC
             case("burn:150", "4", ref_ms=30.0),
             # 80 ms with a 2 ms reference: over 2 ms + 10 x -- but no more than 10 x the
             # program's own slowest finished test (test 4), a term capped at the 0.1 s
             # probe where the reference's time is known: AC
             case("burn:80", "5", ref_ms=2.0),
             case("c", "6")]
    async with SandboxPool(workers=1, loop_probe=0.1) as pool:
        async with asyncio.timeout(60):
            ruled = await pool.run(PROGRAM, tests, Limits(time_limit=1.0))
    assert [r.verdict for r in ruled] == [Verdict.AC, Verdict.TLE, Verdict.AC, Verdict.AC,
                                          Verdict.AC, Verdict.AC]
    # without test 4 before it, test 5 is over every bound of the rule: TLE by the rule
    tests = tests[:3] + [tests[4], tests[3], tests[5]]
    async with SandboxPool(workers=1, loop_probe=0.1) as pool:
        async with asyncio.timeout(60):
            ruled = await pool.run(PROGRAM, tests, Limits(time_limit=1.0))
            assert [r.verdict for r in ruled] == [Verdict.AC, Verdict.TLE, Verdict.AC, Verdict.TLE,
                                                  Verdict.AC, Verdict.AC]
            assert ruled[3].cpu_ms < 100  # stopped near 2 + 10 x 2 ms = 22 ms, not 1 s
            # the same call, each test alone (no timeout before it in its call): the test
            # with no reference time runs to its own limit, the others under the 0.1 s
            # probe, which they finish within: no difference from the full limit
            alone = [(await pool.run(PROGRAM, [t], Limits(time_limit=1.0)))[0] for t in tests]
    assert [r.verdict for r in alone] == [Verdict.AC, Verdict.TLE, Verdict.AC, Verdict.AC,
                                          Verdict.AC, Verdict.AC]
    assert alone[1].cpu_ms > 500  # no reference time: its own limit (1 s), not the 0.1 s probe
    # and a test over both 10 x its reference and the probe stops at the probe
    over = [case("burn:150", "x", ref_ms=2.0)]
    async with SandboxPool(workers=1, loop_probe=0.1) as pool:
        async with asyncio.timeout(60):
            [stopped] = await pool.run(PROGRAM, over, Limits(time_limit=1.0))
    assert stopped.verdict is Verdict.TLE and 90 < stopped.cpu_ms < 500


async def test_a_program_cannot_buy_looser_limits_by_being_slow_first() -> None:
    # 60 ms on the first test, then loops: 10 x its slowest finished test would be ~0.6 s
    # a test; with the reference's time known that term is capped at the 0.1 s probe
    tests = [case("burn:60", "0", ref_ms=1.0)] + [case("loop", str(i), ref_ms=1.0) for i in range(1, 6)]
    async with SandboxPool(workers=1, loop_probe=0.1) as pool:
        async with asyncio.timeout(60):
            results = await pool.run(PROGRAM, tests, Limits(time_limit=2.0))
    assert [r.verdict for r in results] == [Verdict.AC] + [Verdict.TLE] * 5
    assert max(r.cpu_ms for r in results[1:]) < 400


async def test_a_test_ending_just_past_the_probe_is_not_a_timeout_for_the_next() -> None:
    # whether test 1 (ending near the 0.1 s probe) is killed or ends just past it before
    # the kill, the zygote and the verdict agree: test 2 (40 ms, under the probe) runs
    # tight only if test 1 was judged TLE
    src = ("import time\ndef f(ms):\n    while time.thread_time() * 1000 < ms:\n        pass\n"
           "    return 1\n")
    program = Program(source=src, kind="call", entry_point="f")
    async with SandboxPool(workers=1, loop_probe=0.1) as pool:
        async with asyncio.timeout(120):
            for tenth in range(985, 1012, 3):
                tests = [Test(id="1", args=[tenth / 10], expected=1, ref_ms=0.01),
                         Test(id="2", args=[40], expected=1, ref_ms=0.01)]
                first, second = await pool.run(program, tests, Limits(time_limit=1.0))
                if first.verdict is Verdict.AC:
                    assert second.verdict is Verdict.AC, (tenth, first, second)


async def test_the_rule_is_per_call_and_can_be_turned_off() -> None:
    slow = case("burn:60", "burn", ref_ms=2.0)  # under the 0.1 s probe, over 2 + 10 x 2 ms
    async with SandboxPool(workers=1, loop_probe=0.1) as pool:
        async with asyncio.timeout(60):
            first = await pool.run(PROGRAM, [case("loop", "l"), slow], Limits(time_limit=1.0))
            # the same program again (its zygote kept): no timeout in this call yet
            again = await pool.run(PROGRAM, [slow], Limits(time_limit=1.0))
    assert [r.verdict for r in first] == [Verdict.TLE, Verdict.TLE]
    assert again[0].verdict is Verdict.AC
    async with SandboxPool(workers=1, loop_factor=0, loop_probe=0.1) as pool:
        async with asyncio.timeout(60):
            off = await pool.run(PROGRAM, [case("loop", "l"), slow], Limits(time_limit=1.0))
    assert [r.verdict for r in off] == [Verdict.TLE, Verdict.AC]


async def test_a_tests_own_limit_is_its_cpu_limit() -> None:
    tests = [Test(id="1", input="loop\n", output="", time_limit=0.2),
             Test(id="2", input="x\n", output="x\n", time_limit=0.2)]
    async with SandboxPool(workers=1) as pool:
        async with asyncio.timeout(30):
            results = await pool.run(PROGRAM, tests, Limits(time_limit=5.0))
    assert [r.verdict for r in results] == [Verdict.TLE, Verdict.AC]
    assert 150 < results[0].cpu_ms < 1000  # 0.2 s, not the call's 5 s


async def test_a_traced_call_runs_to_its_own_limits() -> None:
    # 150 ms of CPU against a 1 ms reference: over the probe untraced, but a traced run
    # (a reference's lines, several times slower than its measured time) is not ruled
    tests = [case("burn:150", "1", ref_ms=1.0), case("loop", "2", ref_ms=1.0),
             case("burn:150", "3", ref_ms=1.0)]
    async with SandboxPool(workers=1) as pool:
        async with asyncio.timeout(60):
            traced = await pool.run(PROGRAM, tests, Limits(time_limit=1.0), trace=True)
            ruled = await pool.run(PROGRAM, tests, Limits(time_limit=1.0))
    assert [r.verdict for r in traced] == [Verdict.AC, Verdict.TLE, Verdict.AC]
    assert traced[1].cpu_ms > 900  # its own limit
    assert [r.verdict for r in ruled] == [Verdict.TLE, Verdict.TLE, Verdict.TLE]


async def test_decoding_a_large_argument_is_allowed_for_by_its_size() -> None:
    # the reference's own time (its call) is tiny, but the harness decodes 2 MB of
    # arguments for the test: the rule allows for that by size, so the reference itself,
    # with its own ref_ms, passes even after a timeout (before this, it got TLE)
    src = "def f(xs):\n    if not xs:\n        while True:\n            pass\n    return len(xs)\n"
    program = Program(source=src, kind="call", entry_point="f")
    big = Test(id="big", args=[list(range(300_000))], expected=300_000)
    async with SandboxPool(workers=1) as pool:
        async with asyncio.timeout(120):
            [measured] = await pool.run(program, [big], Limits(time_limit=2.0))
            assert measured.verdict is Verdict.AC and measured.work_ms is not None
            assert measured.work_ms < measured.cpu_ms / 2  # the call is cheap, the decoding is not
            timed = msgspec.structs.replace(big, ref_ms=measured.work_ms)
            loop = Test(id="loop", args=[[]], expected=0, ref_ms=0.01)
            results = await pool.run(program, [loop, timed], Limits(time_limit=2.0))
    assert [r.verdict for r in results] == [Verdict.TLE, Verdict.AC]


async def test_a_looping_test_is_killed_at_its_tight_limit_not_a_tick_later() -> None:
    # Read from the zygote, a running child's CPU clock moves only at scheduler ticks
    # (4 ms at HZ=250): killing at "clock >= limit" overshot by half a tick on average.
    # The zygote stops the child to read its time exactly once it may be near the limit.
    n = 40
    tests = [case("loop", str(i), ref_ms=0.05) for i in range(n)]
    # loop_floor_shared + loop_factor x ref_ms (ms): the tests after the first run in its
    # resident child (interrupted, not killed); the first of another chunk's child runs
    # under loop_floor's larger bound, never before this one either
    bound = 0.5 + 10 * 0.05
    medians = []
    async with SandboxPool(workers=1) as pool:
        for _ in range(3):  # a loaded host delays the zygote's own wake-up at times
            async with asyncio.timeout(60):
                results = await pool.run(PROGRAM, tests, Limits(time_limit=2.0))
            assert [r.verdict for r in results] == [Verdict.TLE] * n
            over = sorted(r.cpu_ms - bound for r in results[1:])
            assert over[0] >= 0, over  # never before the limit
            medians.append(over[len(over) // 2])
            # what is left over is the interrupt and the test's unwinding, not a tick
            if medians[-1] < 1.5:
                break
    assert min(medians) < 1.5, medians


async def test_a_written_report_buys_a_test_its_exit_and_no_more() -> None:
    # The harness writes its report on fd 3 last, then exits: past the limit with the report
    # written, what runs is the kernel tearing the child down, no timeout. The program can
    # write fd 3 itself, so that grace is once and 5 ms: a program that writes a report and
    # then loops is still TLE, within the bound plus 5 ms (and the child's exit).
    forging = Program(source="import os\nos.write(3, b'{}')\nwhile True:\n    pass\n")
    tests = [case("x", str(i), ref_ms=0.05) for i in range(12)]
    async with SandboxPool(workers=1) as pool:
        async with asyncio.timeout(60):
            results = await pool.run(forging, tests, Limits(time_limit=2.0))
    assert [r.verdict for r in results] == [Verdict.TLE] * len(tests)
    bound = 2 + 10 * 0.05
    # bound + the 5 ms grace, plus a tick of a loaded host and the exit: far under the probe
    assert max(r.cpu_ms for r in results[1:]) < bound + 5 + 12, [r.cpu_ms for r in results]
