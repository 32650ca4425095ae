"""Second attack on the interrupt and on stop 31's fixes (43f68c9: ``late`` and the pool's
re-run alone, sys.modules restored before each test, gc.collect after an interrupt).
docs/PROTOCOL.md, "One child for a program's tests": for a program whose tests do not depend
on what its earlier tests left, every verdict is that of a child per test
(SandboxConfig(resident=False)), or, where that child's is a timeout under the loop rule's
tight limit, possibly the full limit's. Each test was a finding (its docstring says what was
seen), fixed in stop 32: a re-run alone is pinned to the lone limit of its first place
(confine.c test_head.pinned_us); sys.modules is no longer emptied of a test's imports; fds 0-3
are restored from copies at each handover."""

from __future__ import annotations

from pairbench_async.core.types import Program, Test, Verdict
from tests.resident import PID, children, run, verdicts

#: CPU-bound for ``ms`` milliseconds of this thread's CPU
SPIN = ("import time\n"
        "def spin(ms):\n    end = time.thread_time() + ms / 1000\n"
        "    while time.thread_time() < end:\n        pass\n")


async def test_a_forged_late_buys_a_timed_out_test_a_looser_limit() -> None:
    """FINDING (late, forged): the program reaches the harness's Gate (it is the handler of
    SIGRTMIN+3: ``signal.getsignal``) and sets ``late`` before its slow work. Its timeout at
    the loop rule's tight limit (10 x the slowest finished test, ~25 ms here) is then
    reported late, and the pool runs it again alone, but only after the chunk's later tests:
    one of them finished slower (8 ms), the slowest finished test is now ~80 ms, and the
    re-run (40 ms of work) passes. A child of its own runs it at its place, under ~25 ms:
    TLE. results.interrupted_late says a program that forges it "buys only a run alone"; it
    buys the run under the loop rule's state of a later moment (the same holds for an
    honest late interrupt: the re-run's limit is not the one the test had). Deterministic
    here: resident [AC, TLE, AC, AC], alone [AC, TLE, TLE, AC]. (Stop 32: the target's work
    80 ms and the slow test's 12 ms, from 40 and 8, so that the warm test's CPU under load,
    4 ms once, cannot lift the bound at the target's place to its work: 10 x 4.1 ms passed
    40 ms alone.)"""
    program = Program(source=SPIN + "import signal\n"
                      "def f(x):\n"
                      "    if x == 'loop':\n        while True:\n            pass\n"
                      "    if x == 'target':\n"
                      "        gate = signal.getsignal(signal.SIGRTMIN + 3)\n"
                      "        if hasattr(gate, 'late'):\n            gate.late = True\n"
                      "        spin(80)\n        return 1\n"
                      "    spin(x)\n    return 1\n", kind="call", entry_point="f")
    tests = [Test(id="warm", args=[2], expected=1),
             Test(id="loop", args=["loop"], expected=1, time_limit=0.3),
             Test(id="target", args=["target"], expected=1),
             Test(id="slow", args=[12], expected=1)]
    alone = await run(program, tests, resident=False)
    assert verdicts(alone) == ["AC", "TLE", "TLE", "AC"], [round(r.cpu_ms, 1) for r in alone]
    resident = await run(program, tests)
    assert verdicts(resident) == verdicts(alone), [round(r.cpu_ms, 1) for r in resident]


async def test_an_asyncio_program_keeps_its_child() -> None:
    """FINDING (sys.modules restored, a C extension's state): ``_asyncio`` is a single-phase
    C extension whose statics (CancelledError, the event loop policy getter, ...) point at
    the Python modules of the first import. Interpreter.restore deletes asyncio's modules
    before each test; the next test imports asyncio afresh, but ``_asyncio`` comes back
    from the extension cache without its init: a cancelled task raises the *first* test's
    CancelledError, which ``except asyncio.CancelledError`` (the new class) does not catch,
    and ``asyncio.wait_for``'s timeout escapes as CancelledError. Every test after a child's
    first raises, ends its child and is run again in its place: one fork and one wasted run
    per test (here 6 children for 6 tests, each test ~24 ms twice, costlier than a child per
    test). A program that catches BaseException in a retry loop would spin there to its CPU
    limit instead, which stands. Before 43f68c9 asyncio was kept and these tests shared one
    child."""
    program = Program(source=PID + "import asyncio\n"
                      "async def main(word):\n"
                      "    q = asyncio.Queue()\n"
                      "    try:\n        await asyncio.wait_for(q.get(), 0.001)\n"
                      "    except asyncio.TimeoutError:\n        return word\n"
                      "print(asyncio.run(main(input().strip())))\n")
    tests = [Test(id=str(i), input=f"w{i}\n", output=f"w{i}\n") for i in range(6)]
    alone = await run(program, tests, resident=False)
    assert verdicts(alone) == ["AC"] * 6
    resident = await run(program, tests)
    assert verdicts(resident) == verdicts(alone)
    assert children(resident) == 1, [r.stderr for r in resident]


async def test_reading_stdin_with_open0_keeps_the_child() -> None:
    """FINDING (cost; the inbox's descriptor): ``open(0).read()`` (the usual way to read all
    of stdin in competitive programming; ``sys.stdin = open(0)`` alike) closes fd 0 when its
    file object goes, at the end of the test or when Interpreter.restore replaces the
    streams. The next test's fresh stdin is then on a closed descriptor: it raises, ends the
    child and is run again in its place. Every test after a child's first runs twice and
    forks (6 children for 6 tests here), so such a program costs more in a resident child
    than with a child per test. The harness could keep the child's fds 0-3 (dup2 from
    copies of its own) in restore."""
    program = Program(source=PID + "data = open(0).read().split()\nprint(data[0])\n")
    tests = [Test(id=str(i), input=f"{i}\n", output=f"{i}\n") for i in range(6)]
    resident = await run(program, tests)
    assert verdicts(resident) == ["AC"] * 6
    assert children(resident) == 1, [r.stderr for r in resident]


async def test_a_timed_out_tests_compiled_regex_speeds_up_later_tests_only_to_the_full_limits_verdict() -> None:
    """FINDING (interrupt, the sibling of the import cache that 43f68c9 fixed): ``re`` is
    pre-imported (it is in the child's start modules, so restore keeps it) and so is its
    cache of compiled patterns. A program compiles a large pattern (~5 ms here) before its
    first test loops. In a child of its own each later test compiles it again, more than
    the loop rule's tight limit (loop_floor 2 ms + 10 x 0.05 ms): TLE, every one. In the
    resident child the interrupted test's pattern is in ``re._cache`` and each later test
    takes it from there: AC. (A finished test's compile would have raised the later limits
    through "10 x the slowest finished test"; an interrupted one does not feed it.) The same
    holds for every cache of a pre-imported module (functools.lru_cache'd helpers, struct's
    format cache, typing's): restoring sys.modules does not reach them.

    Stop 32: no harness reaches every cache, and a warm one only makes a later test faster.
    Each later test here finishes (the full limit's verdict is AC); the issue's promise
    allows a verdict to differ from the full limit's only by a timeout under the rule, not
    the other way. Asserted: each resident verdict is a child per test's or, where that is
    a timeout under the tight limit, the full limit's."""
    words = "|".join(f"(?:w{i}x+y*z?)" for i in range(600))
    program = Program(source="import re\n"
                      f"PATTERN = re.compile({words!r})\n"
                      "word = input().strip()\n"
                      "if word == 'loop':\n    while True:\n        pass\n"
                      "print(word)\n")
    tests = [Test(id=str(i), input=w + "\n", output=w + "\n", ref_ms=0.05,
                  time_limit=0.3 if w == "loop" else None)
             for i, w in enumerate(["loop", "a", "b", "c", "d"])]
    alone = await run(program, tests, resident=False)
    assert verdicts(alone) == ["TLE"] * 5, [round(r.cpu_ms, 1) for r in alone]
    full = await run(program, tests, resident=False, loop_factor=0)
    assert verdicts(full) == ["TLE"] + ["AC"] * 4
    resident = await run(program, tests)
    assert all(r.verdict is a.verdict or (a.verdict is Verdict.TLE and r.verdict is f.verdict)
               for r, a, f in zip(resident, alone, full, strict=True)), \
        [(r.verdict.value, round(r.cpu_ms, 2)) for r in resident]
