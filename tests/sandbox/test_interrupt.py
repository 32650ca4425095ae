"""The interrupt (sandbox/confine.c, "Interrupt"): a test of a resident child at its CPU
limit is stopped, signalled and continued; the harness raises CpuLimit in the program's
code, and the child, unwound, takes the next test. The test is a CPU timeout either way
(the zygote decides, not the program), and a program that will not unwind within the
grace (a loop inside C code, the signal caught, ignored or blocked) is killed at once, as
a test of its own would have been, and the rest of its job is killed at its limits."""

from __future__ import annotations

import asyncio

from pairbench_async.core.types import Limits, Program, Test, TestResult, Verdict
from pairbench_async.sandbox.config import SandboxConfig
from pairbench_async.sandbox.pool import SandboxPool

LIMITS = Limits(time_limit=2.0, memory_limit_mb=256)
#: print the child's pid (its pid namespace's: a new child, a new number), then the word's
#: behaviour: "loop" in Python bytecode, "cloop" inside C code, else echo it
HEAD = "import os, sys\nprint(os.getpid(), file=sys.stderr)\nword = input().strip()\n"
ECHO = "print(word)\n"


def stdin(body: str) -> Program:
    return Program(source=HEAD + body + ECHO)


def case(word: str, ident: str) -> Test:
    # ref_ms: the loop rule applies (probe, then the tight limits)
    return Test(id=ident, input=word + "\n", output=word + "\n", ref_ms=0.05)


async def run(program: Program, tests: list[Test], **config: object) -> list[TestResult]:
    async with SandboxPool(SandboxConfig(workers=1, **config)) as pool:  # type: ignore[arg-type]
        async with asyncio.timeout(60):
            return await pool.run(program, tests, LIMITS)


def children(results: list[TestResult]) -> int:
    return len({r.stderr for r in results})


async def test_a_looping_test_is_interrupted_and_its_child_takes_the_next() -> None:
    program = stdin("if word == 'loop':\n    while True:\n        pass\n")
    words = ["loop", "a", "loop", "b", "loop", "loop", "c"]
    results = await run(program, [case(w, str(i)) for i, w in enumerate(words)])
    assert [r.verdict for r in results] == [Verdict.TLE if w == "loop" else Verdict.AC for w in words]
    assert all(r.timeout == "cpu" for r in results if r.verdict is Verdict.TLE)
    assert children(results) == 1  # no kill, no fork: one child ran them all
    # the tests after the first TLE run under the loop rule's tight limit, not the 50 ms
    # probe: 10 x the slowest finished test, a shared test's time counted with the fixed cost
    # a child of its own adds (loop_floor - loop_floor_shared: ~10 x 1.6 ms; until stop 33,
    # 10 x its bare ~0.1 ms, tighter than a child per test, test_attacks_interrupt5.py)
    assert max(r.cpu_ms for r in results[2:] if r.verdict is Verdict.TLE) < 35


async def test_the_verdicts_are_those_of_a_child_per_test() -> None:
    program = stdin("if word == 'loop':\n    while True:\n        pass\n")
    tests = [case(w, str(i)) for i, w in enumerate(["a", "loop", "b", "loop", "c"])]
    resident = await run(program, tests)
    alone = await run(program, tests, resident=False)
    assert [r.verdict for r in resident] == [r.verdict for r in alone]
    assert [r.stdout for r in resident if r.verdict is Verdict.AC] == \
        [r.stdout for r in alone if r.verdict is Verdict.AC]


async def test_a_loop_in_c_code_is_killed_and_the_rest_of_the_job_too() -> None:
    # the signal's Python handler runs only once the C function returns: past the grace the
    # child is killed, and the job's later tests are killed at their limits (a fork each)
    program = stdin("if word == 'cloop':\n    sum(range(10 ** 15))\n")
    words = ["cloop", "cloop", "a", "cloop", "b"]
    results = await run(program, [case(w, str(i)) for i, w in enumerate(words)])
    assert [r.verdict for r in results] == [Verdict.TLE if w == "cloop" else Verdict.AC for w in words]
    assert all(r.cpu_ms < 120 for r in results)  # the probe (50 ms) and the grace, not 2 s


async def test_a_program_that_swallows_the_interrupt_is_killed() -> None:
    swallow = ("if word == 'loop':\n    while True:\n        try:\n            while True:\n"
               "                pass\n        except BaseException:\n            pass\n")
    ignore = ("import signal\nif word == 'loop':\n"
              "    for s in range(signal.SIGRTMIN, signal.SIGRTMAX + 1):\n"
              "        signal.signal(s, signal.SIG_IGN)\n    while True:\n        pass\n")
    block = ("import signal\nif word == 'loop':\n"
             "    signal.pthread_sigmask(signal.SIG_BLOCK, range(signal.SIGRTMIN, signal.SIGRTMAX + 1))\n"
             "    while True:\n        pass\n")
    for body in (swallow, ignore, block):
        words = ["a", "loop", "b", "loop", "c"]
        results = await run(stdin(body), [case(w, str(i)) for i, w in enumerate(words)])
        assert [r.verdict for r in results] == \
            [Verdict.TLE if w == "loop" else Verdict.AC for w in words], body
        assert all(r.timeout == "cpu" for r in results if r.verdict is Verdict.TLE)
        assert all(r.cpu_ms < 120 for r in results), [r.cpu_ms for r in results]
        # and what it did to the signal did not reach the tests after it: each test after a
        # kill is a new child's, whose handler is the harness's again
        assert children(results) >= 2


async def test_a_program_that_finishes_after_catching_it_is_still_a_timeout() -> None:
    # it unwinds within the grace and returns a value: the zygote's verdict, TLE, stands
    program = Program(source=(
        "import os, sys\ndef f(x):\n    print(os.getpid(), file=sys.stderr)\n"
        "    try:\n        while True:\n            pass\n"
        "    except BaseException:\n        return x\n"), kind="call", entry_point="f")
    tests = [Test(id=str(i), args=[i], expected=i, ref_ms=0.05) for i in range(4)]
    results = await run(program, tests)
    assert [r.verdict for r in results] == [Verdict.TLE] * 4
    assert children(results) == 1


async def test_a_program_raising_the_signal_itself_gains_nothing() -> None:
    # the handler raises CpuLimit into the program whoever sent the signal: a program that
    # signals itself ends its own test (RE, run again alone, where it is the default action's
    # death), never a verdict of the zygote's
    program = stdin("import signal\nif word == 'self':\n    os.kill(os.getpid(), signal.SIGRTMIN + 3)\n"
                    "    while True:\n        pass\n")
    words = ["a", "self", "b"]
    results = await run(program, [case(w, str(i)) for i, w in enumerate(words)])
    assert results[0].verdict is Verdict.AC and results[2].verdict is Verdict.AC
    assert results[1].verdict is not Verdict.AC
