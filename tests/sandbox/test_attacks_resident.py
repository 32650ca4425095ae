"""Attacks on the resident child (SandboxConfig.resident; sandbox/confine.c "Resident
child"). Each test states a claim of that design and a program that breaks it: a verdict
that differs from a child per test other than by passing or timing out at the CPU limit,
a zygote that dies or hangs because of what a test did, a process of a job that runs on
past its test's limits, a re-run alone that does not start in an empty scratch
directory. Every test compares with ``resident=False`` where the claim is "the same as a
child per test"."""

from __future__ import annotations

import asyncio
import glob
import os

from pairbench_async.core.types import Limits, Program, Test, TestResult, Verdict
from pairbench_async.sandbox.config import SandboxConfig
from pairbench_async.sandbox.pool import SandboxPool


def call(source: str) -> Program:
    return Program(source=source, kind="call", entry_point="f")


def verdicts(results: list[TestResult]) -> list[str]:
    return [r.verdict.value for r in results]


async def run_once(resident: bool, program: Program, cases: list[Test], limits: Limits,
                   ) -> tuple[list[TestResult], int, int]:
    """Results, sandbox faults and worker restarts of one run on a fresh one-worker pool."""
    async with SandboxPool(SandboxConfig(workers=1, resident=resident)) as pool:
        async with asyncio.timeout(120):
            results = await pool.run(program, cases, limits)
        stats = pool.statistics()
    return results, stats.sandbox_faults, stats.worker_restarts


async def test_sealing_its_inbox_cannot_turn_the_rest_of_the_chunk_into_sandbox_faults() -> None:
    # A resident child's stdin is an unsealed memfd made with MFD_ALLOW_SEALING (the
    # inbox, rewritten for every test). One fcntl seals it against shrinking; the
    # zygote's ftruncate after the test then fails, serve() raises "write result", the
    # zygote dies with FATAL, the worker is killed and the chunk retried, and the retry
    # dies the same way: every later test is SF ("worker died twice"), a verdict a
    # child per test never gives (its stdin is sealed with F_SEAL_SEAL: the fcntl fails).
    program = call(
        "import fcntl\n"
        "def f(x):\n"
        "    try:\n"
        "        fcntl.fcntl(0, 1033, 0x0002)  # F_ADD_SEALS, F_SEAL_SHRINK\n"
        "    except OSError:\n"
        "        pass\n"
        "    return x\n")
    cases = [Test(id=str(i), args=[i], expected=i) for i in range(6)]
    limits = Limits(time_limit=0.5, wall_limit=1.0)
    shared, faults, restarts = await run_once(True, program, cases, limits)
    alone, _, _ = await run_once(False, program, cases, limits)
    assert verdicts(alone) == ["AC"] * 6
    assert verdicts(shared) == verdicts(alone), [r.error for r in shared]
    assert (faults, restarts) == (0, 0)


async def test_a_full_go_pipe_cannot_hang_the_zygote() -> None:
    # The child can open /proc/self/fd/4 (its go pipe) for writing and fill it: the
    # zygote's blocking write(rs.go, "g") at the next handover then never returns. The
    # pool kills the worker at its deadline (wall + result_grace), retries the chunk,
    # the retry hangs the same way, and the tests left become SF. (The odd tests report
    # their own value before they hang, a misreport of their own result the design
    # allows; the even tests are plain and pass alone.)
    program = call(
        "import os, json, time, fcntl\n"
        "def f(x):\n"
        "    if x % 2:\n"
        "        w = os.open('/proc/self/fd/4', os.O_WRONLY | os.O_NONBLOCK)\n"
        "        try:\n"
        "            fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ\n"
        "        except OSError:\n"
        "            pass\n"
        "        try:\n"
        "            while True:\n"
        "                os.write(w, b'x' * 4096)\n"
        "        except BlockingIOError:\n"
        "            pass\n"
        "        os.write(3, json.dumps({'value': x}).encode())\n"
        "        os.write(5, b'd')\n"
        "        while True:\n"
        "            time.sleep(1)\n"
        "    return x\n")
    cases = [Test(id=str(i), args=[i], expected=i) for i in range(8)]
    limits = Limits(time_limit=0.5, wall_limit=1.0)
    shared, faults, restarts = await run_once(True, program, cases, limits)
    alone, _, _ = await run_once(False, program, cases, limits)
    assert verdicts(alone)[::2] == ["AC"] * 4
    assert verdicts(shared)[::2] == ["AC"] * 4, [r.error for r in shared]
    assert (faults, restarts) == (0, 0)


def _cpu_ticks_below(roots: list[int]) -> int:
    """utime + stime (clock ticks) of every process below ``roots``."""
    stats = {}
    for path in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(path) as fh:
                text = fh.read()
        except OSError:
            continue
        fields = text.rsplit(")", 1)[1].split()
        stats[int(text.split()[0])] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    below, grew = set(roots), True
    while grew:
        grew = False
        for pid, (ppid, _) in stats.items():
            if ppid in below and pid not in below:
                below.add(pid)
                grew = True
    return sum(stats[p][1] for p in below - set(roots))


async def test_a_child_that_forged_done_does_not_run_on_after_its_job() -> None:
    # The last test writes its own report, then "d" on fd 5: the zygote takes the test
    # as done, sends its RESULT and blocks reading the pool's next frame, watching the
    # child no more. The child, with three more threads, computes on with no CPU or wall
    # limit (up to its RLIMIT_CPU backstop, 30 s past the test's limit) after run() has
    # returned, on a host whose other workers' tests it slows. A child per test is
    # killed at its limit.
    program = call(
        "import os, json, _thread\n"
        "def spin():\n"
        "    while True:\n"
        "        pass\n"
        "def f(x):\n"
        "    if x == 3:\n"
        "        os.write(3, json.dumps({'value': x}).encode())\n"
        "        os.write(5, b'd')\n"
        "        for _ in range(3):\n"
        "            _thread.start_new_thread(spin, ())\n"
        "        spin()\n"
        "    return x\n")
    cases = [Test(id=str(i), args=[i], expected=i) for i in range(4)]
    async with SandboxPool(SandboxConfig(workers=1, resident=True)) as pool:
        async with asyncio.timeout(60):
            await pool.run(program, cases, Limits(time_limit=0.5, wall_limit=1.0))
        roots = [w.proc.pid for w in pool._workers if w is not None]
        before = _cpu_ticks_below(roots)
        await asyncio.sleep(2.0)
        used = (_cpu_ticks_below(roots) - before) / os.sysconf("SC_CLK_TCK")
    assert used < 0.3, f"{used:.2f} s of CPU in the 2 s after run() returned"


async def test_a_re_run_alone_starts_in_an_empty_scratch_directory() -> None:
    # Test 1 fails only because test 0 ran before it in the same child, so it is run
    # again alone: that re-run is the verdict that stands. Test 2 reports its own value,
    # forges "d" and keeps creating files in scratch: the zygote empties scratch after
    # test 2's RESULT while the child still runs, then reads test 1's HEAD_ISOLATED frame
    # and kills the child only then. Files made in between are in scratch when test 1's
    # lone child starts, and the re-run fails. (Test 1's shared result is large so the
    # pool takes a moment to decode it before it sends the re-run; the race is lost now
    # and then, hence several programs.)
    seen = []
    async with SandboxPool(SandboxConfig(workers=1, resident=True)) as pool:
        for k in range(10):
            program = call(
                f"# attempt {k}\n"
                "import os, math\n"
                "def f(x):\n"
                "    if x == 0:\n"
                "        math.flag = 1\n"
                "        return []\n"
                "    if x == 1:\n"
                "        if getattr(math, 'flag', 0):\n"
                "            print('y' * 4000000)\n"
                "            return [[i, str(i)] for i in range(200000)]\n"
                "        return sorted(os.listdir('.'))\n"
                "    os.write(3, b'{\"value\": []}')\n"
                "    os.write(5, b'd')\n"
                "    n = 0\n"
                "    while True:\n"
                "        n += 1\n"
                "        try:\n"
                "            open(f'junk{n}', 'w').close()\n"
                "        except OSError:\n"
                "            pass\n")
            cases = [Test(id=str(i), args=[i], expected=[]) for i in range(3)]
            async with asyncio.timeout(60):
                shared = await pool.run(program, cases, Limits(time_limit=2.0))
            seen.append(shared[1].value if shared[1].verdict is not Verdict.AC else [])
    assert all(v == [] for v in seen), [v[:2] for v in seen]


async def test_values_recorded_without_expected_do_not_depend_on_earlier_tests() -> None:
    # A test with no expected value records what the program returned (as a reference's
    # calls are recorded); _again_alone lets such a value stand after a shared run. Test
    # 1 raises the decimal context's precision, a state Interpreter.restore leaves as it
    # is, and the values recorded for tests 2 and 3 are not what a child per test (or
    # the same program run alone) returns.
    program = call(
        "from decimal import Decimal, getcontext\n"
        "def f(n):\n"
        "    if n > 30:\n"
        "        getcontext().prec = n\n"
        "    return str(Decimal(1) / Decimal(7))\n")
    cases = [Test(id=str(i), args=[n]) for i, n in enumerate([5, 40, 5, 6])]
    limits = Limits(time_limit=1.0)
    shared, _, _ = await run_once(True, program, cases, limits)
    alone, _, _ = await run_once(False, program, cases, limits)
    assert [r.value for r in alone][2] == "0.1428571428571428571428571429"
    assert [r.value for r in shared] == [r.value for r in alone]


async def test_a_discarded_shared_timeout_does_not_tighten_the_re_run_and_later_tests() -> None:
    # Test 1 arms a timer whose handler sleeps: it fires in test 2, which times out at its
    # wall limit in the shared child. The pool discards that result and runs test 2 again
    # alone, but the zygote has already set its loop-rule state (tight: any timeout), so
    # the re-run alone, and every later test of the job, runs under loop_factor x the
    # slowest test so far (~10 ms) instead of its own 0.5 s, and its CPU kill stands:
    # three tests of 0.1 s are TLE where a child per test passes them all.
    program = call(
        "import signal, time\n"
        "def f(x):\n"
        "    if x == 1:\n"
        "        signal.signal(signal.SIGALRM, lambda *a: time.sleep(30))\n"
        "        signal.setitimer(signal.ITIMER_REAL, 0.05)\n"
        "    if x >= 2:\n"
        "        t = time.process_time()\n"
        "        while time.process_time() - t < 0.1:\n"
        "            pass\n"
        "    return x\n")
    cases = [Test(id=str(i), args=[i], expected=i) for i in range(5)]
    limits = Limits(time_limit=0.5, wall_limit=1.0)
    shared, _, _ = await run_once(True, program, cases, limits)
    alone, _, _ = await run_once(False, program, cases, limits)
    assert verdicts(alone) == ["AC"] * 5
    assert verdicts(shared) == verdicts(alone), [(r.timeout, r.cpu_ms) for r in shared]
