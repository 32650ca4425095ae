"""The resident child (SandboxConfig.resident, sandbox/confine.c "Resident child"): a
function-call program's tests run one after another in one child, each with its own
limits, its own outputs, a fresh module namespace, an empty scratch directory and the
interpreter's state restored; a test that ran after another and neither passed nor was
killed at its CPU limit is run again alone. So verdicts equal a child per test's except,
by design, a test that passes (or times out) only after its program's earlier tests ran
in the same process."""

from __future__ import annotations

import asyncio

import pytest

from pairbench_async.core.types import Limits, Program, Test, TestResult, Verdict
from pairbench_async.sandbox.config import SandboxConfig
from pairbench_async.sandbox.pool import SandboxPool

LIMITS = Limits(time_limit=2.0, memory_limit_mb=256)


def call(source: str) -> Program:
    return Program(source=source, kind="call", entry_point="f")


def cases_of(expected: list[object]) -> list[Test]:
    return [Test(id=str(i), args=[i], expected=e) for i, e in enumerate(expected)]


async def both(program: Program, cases: list[Test], limits: Limits = LIMITS,
               ) -> tuple[list[TestResult], list[TestResult]]:
    """The results with a resident child and with a child per test."""
    out = []
    for resident in (True, False):
        async with SandboxPool(SandboxConfig(workers=1, resident=resident)) as pool:
            async with asyncio.timeout(60):
                out.append(await pool.run(program, cases, limits))
    return out[0], out[1]


def verdicts(results: list[TestResult]) -> list[str]:
    return [r.verdict.value for r in results]


async def test_tests_share_one_child_and_cost_less() -> None:
    program = call("import os, sys\ndef f(x):\n    print(os.getpid(), file=sys.stderr)\n    return x * 2\n")
    cases = cases_of([2 * i for i in range(12)])
    shared, alone = await both(program, cases)
    assert verdicts(shared) == verdicts(alone) == ["AC"] * 12
    assert len({r.stderr for r in shared}) == 1  # one process ran them all
    assert len({r.stderr for r in alone}) == 12
    # the tests after the first pay no fork, confinement or exit
    later = sorted(r.cpu_ms for r in shared[1:])
    assert later[len(later) // 2] < min(r.cpu_ms for r in alone)


async def test_each_test_gets_a_fresh_module_and_its_own_outputs() -> None:
    program = call(
        "import sys\n"
        "seen = []\n"
        "def f(x):\n"
        "    seen.append(x)\n"
        "    print('out', x)\n"
        "    print('err', x, file=sys.stderr)\n"
        "    return len(seen)\n")
    shared, alone = await both(program, cases_of([1] * 6))
    assert verdicts(shared) == verdicts(alone) == ["AC"] * 6
    for i, r in enumerate(shared):
        assert r.stdout == f"out {i}\n"
        assert r.stderr == f"err {i}\n"


async def test_a_failure_after_an_earlier_test_changed_the_interpreter_is_judged_alone() -> None:
    # test 0 changes a module every test shares; alone, test 1 finds math.pi intact
    program = call(
        "import math\n"
        "def f(x):\n"
        "    if x == 0:\n"
        "        math.pi = 3\n"
        "    return math.pi\n")
    import math
    shared, alone = await both(program, cases_of([3, math.pi, math.pi]))
    assert verdicts(shared) == verdicts(alone) == ["AC", "AC", "AC"]


async def test_the_documented_difference_a_pass_that_needs_an_earlier_test() -> None:
    # the one way a verdict may differ: test 1 passes only because test 0 ran before it
    # in the same process (state kept outside the program's module)
    program = call(
        "import math\n"
        "def f(x):\n"
        "    if x == 0:\n"
        "        math.kept = 7\n"
        "    return getattr(math, 'kept', None)\n")
    shared, alone = await both(program, cases_of([7, 7]))
    assert verdicts(alone) == ["AC", "WA"]
    assert verdicts(shared) == ["AC", "AC"]


async def test_interpreter_state_is_restored_between_tests() -> None:
    program = call(
        "import sys, random, builtins\n"
        "def f(x):\n"
        "    state = [sys.getrecursionlimit(), random.random(), hasattr(builtins, 'zz'),\n"
        "             sys.stdout is sys.__stdout__]\n"
        "    sys.setrecursionlimit(50000)\n"
        "    random.random()\n"
        "    builtins.zz = 1\n"
        "    sys.stdout = open('/dev/null', 'w')\n"
        "    return state\n")
    cases = [Test(id=str(i), args=[i]) for i in range(5)]
    shared, alone = await both(program, cases)
    # every test finds what a child of its own finds, random seeded afresh as in every
    # forked child (random's at-fork hook)
    assert [r.value[::2] + r.value[3:] for r in shared] == [[1000, False, True]] * 5
    assert [r.value[::2] + r.value[3:] for r in alone] == [[1000, False, True]] * 5
    assert len({r.value[1] for r in shared}) == len({r.value[1] for r in alone}) == 5


async def test_the_scratch_directory_is_empty_for_every_test() -> None:
    program = call(
        "import os\n"
        "def f(x):\n"
        "    before = sorted(os.listdir('.'))\n"
        "    with open(f'file{x}', 'w') as fh:\n"
        "        fh.write('x')\n"
        "    return before\n")
    shared, alone = await both(program, cases_of([[]] * 4))
    assert verdicts(shared) == verdicts(alone) == ["AC"] * 4


async def test_exceptions_and_exits_end_the_child_and_the_next_test_gets_a_new_one() -> None:
    program = call(
        "import os, sys\n"
        "def f(x):\n"
        "    if x == 1:\n"
        "        raise ValueError('no')\n"
        "    if x == 2:\n"
        "        sys.exit(3)\n"
        "    if x == 3:\n"
        "        os._exit(0)\n"
        "    return [x, os.getpid()]\n")
    cases = [Test(id=str(i), args=[i], expected=None) for i in range(6)]
    shared, alone = await both(program, cases)
    assert verdicts(shared) == verdicts(alone)
    assert shared[1].error == alone[1].error == "ValueError"
    assert shared[4].value[1] != shared[0].value[1]  # a new child after the failures


async def test_each_test_keeps_its_own_cpu_limit() -> None:
    # six tests of ~0.3 s each under a 0.5 s limit: a shared clock would time out the second
    program = call(
        "import time\n"
        "def f(x):\n"
        "    t = time.process_time()\n"
        "    while time.process_time() - t < 0.3:\n"
        "        pass\n"
        "    return x\n")
    limits = Limits(time_limit=0.5, memory_limit_mb=256)
    async with SandboxPool(SandboxConfig(workers=1)) as pool:
        async with asyncio.timeout(60):
            results = await pool.run(program, cases_of(list(range(6))), limits)
    assert verdicts(results) == ["AC"] * 6
    assert all(250 < r.cpu_ms < 500 for r in results), [r.cpu_ms for r in results]


async def test_a_timeout_in_a_shared_child_is_run_again_in_its_place_and_the_rest_run_on() -> None:
    program = call("def f(x):\n    while x == 2:\n        pass\n    return x\n")
    limits = Limits(time_limit=0.3, memory_limit_mb=256)
    shared, alone = await both(program, cases_of(list(range(5))), limits)
    assert verdicts(shared) == verdicts(alone) == ["AC", "AC", "TLE", "AC", "AC"]
    assert shared[2].timeout == "cpu"


async def test_a_thread_left_running_does_not_reach_the_next_test() -> None:
    program = call(
        "import threading\n"
        "def spin():\n"
        "    while True:\n"
        "        pass\n"
        "def f(x):\n"
        "    if x == 0:\n"
        "        threading.Thread(target=spin, daemon=True).start()\n"
        "    return x\n")
    limits = Limits(time_limit=0.5, memory_limit_mb=256)
    shared, alone = await both(program, cases_of(list(range(4))), limits)
    assert verdicts(shared) == verdicts(alone) == ["AC"] * 4


async def test_memory_kept_by_earlier_tests_is_not_a_later_tests_limit() -> None:
    # each test keeps 40 MB in a module every test shares: together past the 100 MB budget,
    # each alone well within it
    program = call(
        "import math\n"
        "def f(x):\n"
        "    math.__dict__.setdefault('held', []).append(bytearray(40 << 20))\n"
        "    return x\n")
    limits = Limits(time_limit=2.0, memory_limit_mb=100)
    shared, alone = await both(program, cases_of(list(range(5))), limits)
    assert verdicts(alone) == ["AC"] * 5
    assert verdicts(shared) == ["AC"] * 5


@pytest.mark.parametrize("hostile", [
    # forges "done" itself, then keeps computing
    "os.write(5, b'd')\n    t = time.process_time()\n    while time.process_time() - t < 0.05:\n        pass\n",
    # closes the control pipes
    "os.close(4)\n    os.close(5)\n",
    # steals the next test's go byte: its harness then waits until the wall limit
    "os.set_blocking(4, False)\n    try:\n        os.read(4, 1)\n    except OSError:\n        pass\n",
    # puts its own bytes into the inbox
    "os.pwrite(0, b'[[99], {}]', 0)\n",
])
async def test_a_program_tampering_with_the_control_pipes_harms_only_its_own_results(hostile: str) -> None:
    program = call("import os, time\ndef f(x):\n    " + hostile + "    return x\n")
    limits = Limits(time_limit=0.5, wall_limit=1.5, memory_limit_mb=256)
    async with SandboxPool(SandboxConfig(workers=1)) as pool:
        async with asyncio.timeout(90):
            results = await pool.run(program, cases_of(list(range(4))), limits)
            # the pool goes on serving others, with the right results
            after = await pool.run(call("def f(x):\n    return x + 1\n"),
                                   cases_of([1, 2, 3]), LIMITS)
    assert len(results) == 4
    assert all(r.verdict is not Verdict.SF for r in results), verdicts(results)
    assert verdicts(after) == ["AC"] * 3


async def test_stdin_programs_share_a_child_and_read_each_input_from_its_start() -> None:
    # each test's module runs as __main__ on fresh streams over its own input: whatever the
    # test before it read, buffered or left unread
    program = Program(source=(
        "import os, sys\n"
        "first = input()\n"
        "rest = sys.stdin.read()\n"
        "print(first, len(rest.split()), os.getpid() > 0)\n"
        "print(os.getpid(), file=sys.stderr)\n"))
    cases = [Test(id=str(i), input=f"w{i}\n" + "x " * (i * 3000) + "\n", output=f"w{i} {i * 3000} True\n")
             for i in range(5)]
    shared, alone = await both(program, cases)
    assert verdicts(shared) == verdicts(alone) == ["AC"] * 5
    assert len({r.stderr for r in shared}) == 1
    assert len({r.stderr for r in alone}) == 5


async def test_stdin_programs_recorded_without_an_output_run_alone() -> None:
    program = Program(source="import os\ninput()\nprint(os.getpid())\n")
    cases = [Test(id=str(i), input="x\n") for i in range(4)]
    async with SandboxPool(SandboxConfig(workers=1)) as pool:
        async with asyncio.timeout(60):
            results = await pool.run(program, cases, LIMITS)
    assert len({r.stdout for r in results}) == 4


async def test_calls_recorded_without_an_expected_value_run_alone() -> None:
    # a value nothing can judge must not depend on an earlier test (here: decimal's context)
    program = call(
        "import os\n"
        "from decimal import Decimal, getcontext\n"
        "def f(x):\n"
        "    if x == 0:\n"
        "        getcontext().prec = 40\n"
        "    return [str(Decimal(1) / Decimal(7)), os.getpid()]\n")
    cases = [Test(id=str(i), args=[i]) for i in range(4)]
    shared, alone = await both(program, cases)
    assert [r.value[0] for r in shared] == [r.value[0] for r in alone]
    assert len({r.value[1] for r in shared}) == 4


async def test_a_child_of_its_own_sees_only_its_stdio_and_report_channel() -> None:
    program = Program(source=(
        "import os\nfds = []\nfor fd in range(256):\n    try:\n        os.fstat(fd)\n        fds.append(fd)\n"
        "    except OSError:\n        pass\nprint(fds)\n"))
    shared, alone = await both(program, [Test(id="1", input="", output="x\n")])
    assert alone[0].stdout == "[0, 1, 2, 3]\n"
    # and the go and done pipes, and copies of 0-3 kept to restore them between tests
    assert shared[0].stdout == "[0, 1, 2, 3, 4, 5, 10, 11, 12, 13]\n"


async def test_a_resident_childs_extra_descriptors_are_its_own_stdio_and_report() -> None:
    """fds 10-13 of a resident child are the same open files as its 0-3 (what a test
    closes or replaces of 0-3 is restored from them for the next test), nothing else."""
    program = Program(source=(
        "import os\n"
        "print([(os.fstat(fd).st_ino == os.fstat(fd + 10).st_ino, os.lseek(fd + 10, 0, os.SEEK_CUR)"
        " == os.lseek(fd, 0, os.SEEK_CUR) if fd != 1 else True) for fd in range(4)])\n"))
    shared, _ = await both(program, [Test(id="1", input="abc\n", output="x\n")])
    assert shared[0].stdout == "[(True, True), (True, True), (True, True), (True, True)]\n"


async def test_what_a_test_writes_to_its_inbox_never_reaches_the_next_test() -> None:
    # a resident child's stdin is its inbox, not sealed (the zygote rewrites it for each
    # test): the program may write it, but the next test reads its own input only, and
    # nothing written is kept (the zygote empties the inbox when the test ends)
    program = Program(source=(
        "import os\n"
        "line = input()\n"
        "os.pwrite(0, b'FORGED ' * 1000, 0)\n"
        "os.ftruncate(0, 1 << 20)\n"
        "print(line)\n"))
    cases = [Test(id=str(i), input=f"in{i}\n", output=f"in{i}\n") for i in range(4)]
    shared, alone = await both(program, cases)
    assert verdicts(alone) == ["RE"] * 4  # sealed: the write is refused
    assert verdicts(shared) == ["AC"] * 4
    assert [r.stdout for r in shared] == [f"in{i}\n" for i in range(4)]
