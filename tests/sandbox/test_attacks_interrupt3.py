"""Third attack on the resident child and its interrupt (after e5aec5e: re-runs pinned to
their lone limit, fds 0-3 restored from copies, sys.modules no longer purged).
docs/PROTOCOL.md, "One child for a program's tests": for a program whose tests do not depend
on what its earlier tests left, every resident verdict is that of a child per test
(SandboxConfig(resident=False)), or, where that is a timeout under the loop rule's tight
limit, possibly the full limit's (loop_factor=0); never worse than both. Each test here was a
finding of that attack (its docstring says what was seen) and failed on e5aec5e; fixed in
worker.py (stop 32): a finished test's objects are frozen when it ends (gc.freeze: no later
test collects or reuses them), the decimal context, warnings filters, asyncio's policy, the
collector's thresholds and the switch interval are restored, the streams are replaced before
fds 0-3 are put back and carry the interpreter's mode and name, exit and quit are builtins as
under site, and a stdin program's atexit handlers run when it ends."""

from __future__ import annotations

import pytest

from pairbench_async.core.types import Program, Test, Verdict
from tests.resident import PID, children, cpu, run, within_the_promise


async def test_a_finished_tests_garbage_is_not_collected_under_a_later_tests_probe_limit() -> None:
    """FINDING (gc, a *finished* test; the interrupted test's case was fixed in stop 31):
    a stdin program that keeps its data in a module global and defines a function (its
    namespace is then a cycle, as almost every program's is) leaves that data as garbage
    when a big test ends cleanly. Its objects survived the big test's collections into the
    oldest generation, where only a full collection frees them, and the harness collects
    only after an *interrupted* test. A full collection runs when enough objects are
    promoted (more than a quarter of the long-lived ones): here in a later small test
    (30,000 lists, ~3-4 ms; ref_ms 3, so its probe limit is max(50 ms, 2 ms + 30 ms)), which
    is charged ~60-170 ms for the big test's 1.4 M lists and killed at 50 ms (the collection
    is C code: past the interrupt's grace). The kill of a shared test at its CPU limit
    stands: TLE, where a child per test and the full limit give AC in ~4 ms. Seen twice
    with N = 1.4 M (the 4th small test: TLE, cpu 66 ms, then a new child), and at
    N = 1.0 M (7th, 63 ms) and 1.8 M (3rd, 68 ms)."""
    program = Program(source="def helper():\n    return 1\n"
                      "n = int(input())\n"
                      "data = [[i] for i in range(n)]\nprint(n)\n")
    big = 1_400_000
    tests = [Test(id="big", input=f"{big}\n", output=f"{big}\n", ref_ms=800)] + [
        Test(id=f"small{i}", input="30000\n", output="30000\n", ref_ms=3) for i in range(8)]
    alone = await run(program, tests, resident=False)
    full = await run(program, tests, resident=False, loop_factor=0)
    assert all(r.verdict is Verdict.AC for r in alone + full), (cpu(alone), cpu(full))
    resident = await run(program, tests)
    assert within_the_promise(resident, alone, full), cpu(resident)


async def test_decimals_precision_set_by_one_test_does_not_slow_the_next() -> None:
    """FINDING (interpreter state not restored: the decimal context): ``decimal`` is
    pre-imported in the zygote when the program names it, and its context (thread-local,
    like the integer-digit limit and recursion limit that Interpreter.restore does put back)
    is kept between tests. One test sets ``getcontext().prec = 40000`` for a square root to
    many digits (the usual way); the program's other tests use the default context (28
    digits) and never set it. In the resident child each later test runs its 2,000
    divisions at 40,000 digits: ~50 ms against ~2 ms, interrupted at its probe limit (50 ms,
    ref_ms 1) and TLE, which stands; a child per test and the full limit give AC in ~2 ms.
    Seen twice: resident [AC, TLE 50.4, TLE 50.4, TLE 50.3], alone and full all AC (at
    prec 20000 the same tests pass at ~34 ms against ~2 ms alone: 15x the cost)."""
    program = Program(source="from decimal import Decimal, getcontext\n"
                      "w = input().strip()\n"
                      "if w == 'precise':\n    getcontext().prec = 40000\n"
                      "    print(str(Decimal(2).sqrt())[:12])\n"
                      "else:\n    x = Decimal(1)\n    for i in range(1, 2000):\n"
                      "        x = x * Decimal(i) / Decimal(i + 1)\n    print(str(x)[:8])\n")
    tests = [Test(id="precise", input="precise\n", output="1.4142135623\n", ref_ms=50)] + [
        Test(id=f"plain{i}", input="x\n", output="0.000499\n", ref_ms=1) for i in range(3)]
    alone = await run(program, tests, resident=False)
    full = await run(program, tests, resident=False, loop_factor=0)
    assert all(r.verdict is Verdict.AC for r in alone + full), (cpu(alone), cpu(full))
    resident = await run(program, tests)
    assert within_the_promise(resident, alone, full), cpu(resident)


@pytest.mark.parametrize("body", ["sys.stdin = open(0)\nprint(sys.stdin.readline().strip())\n",
                                  "sys.stdout = open(1, 'w')\nprint(input().strip())\n"])
async def test_replacing_sys_stdin_or_stdout_with_open_keeps_the_child(body: str) -> None:
    """FINDING (cost; stop 32's fd copies restored in the wrong order): ``sys.stdin =
    open(0)`` (PROTOCOL.md names it as fixed) and ``sys.stdout = open(1, 'w')`` (a fast-
    output idiom) leave a file object that owns fd 0 or 1 in ``sys``. Interpreter.restore
    first dup2s the copies onto fds 0-3, then replaces the streams: the test's file object
    goes then and closes the fd just restored. The next test's stdin or stdout is a closed
    descriptor: it raises (or its output is lost), ends its child and is run again in its
    place, so every test after a child's first runs twice and forks. Seen twice, both
    idioms: 4 tests, 4 children (stderr pids 2, 3, 4, 5), all AC; a child per test is AC
    too, and one child would serve them all. (Replacing the streams before the dup2s, or
    making the streams with closefd semantics the test cannot own, would keep one child.)"""
    program = Program(source=PID + body)
    tests = [Test(id=f"t{i}", input=f"w{i}\n", output=f"w{i}\n") for i in range(4)]
    resident = await run(program, tests)
    assert [r.verdict for r in resident] == [Verdict.AC] * 4, cpu(resident)
    assert children(resident) == 1, [r.stderr for r in resident]


async def test_an_asyncio_program_that_closes_its_event_loop_keeps_its_child() -> None:
    """FINDING (cost; modules kept since stop 32, with their state): the long-standing
    asyncio idiom ``loop = asyncio.get_event_loop(); loop.run_until_complete(main());
    loop.close()``. asyncio is kept between tests, and so is its event loop policy, which
    holds the first test's loop: the next test's ``get_event_loop()`` returns that closed
    loop, ``run_until_complete`` raises "Event loop is closed", the test ends its child and
    is run again in its place. Every test after a child's first runs twice and forks: seen
    twice, 4 tests, 4 children (pids 2, 3, 4, 5), all AC (~28-30 ms each, as alone). The
    harness could reset the policy's loop (``asyncio.set_event_loop(None)`` where asyncio is
    imported, as it reseeds ``random``)."""
    program = Program(source=PID + "import asyncio\n"
                      "async def main(w):\n    await asyncio.sleep(0)\n    return w\n"
                      "loop = asyncio.get_event_loop()\n"
                      "print(loop.run_until_complete(main(input().strip())))\n"
                      "loop.close()\n")
    tests = [Test(id=f"t{i}", input=f"w{i}\n", output=f"w{i}\n") for i in range(4)]
    resident = await run(program, tests)
    assert [r.verdict for r in resident] == [Verdict.AC] * 4, cpu(resident)
    assert children(resident) == 1, [r.stderr for r in resident]


#: PyRival's FastIO template (github.com/cheran-senthil/PyRival, templates/template.py), the
#: usual fast-input/output prelude of Python competitive programming, with a trivial main
PYRIVAL = r'''
import os, sys
from io import BytesIO, IOBase
BUFSIZE = 8192

class FastIO(IOBase):
    newlines = 0

    def __init__(self, file):
        self._fd = file.fileno()
        self.buffer = BytesIO()
        self.writable = "x" in file.mode or "r" not in file.mode
        self.write = self.buffer.write if self.writable else None

    def read(self):
        while True:
            b = os.read(self._fd, max(os.fstat(self._fd).st_size, BUFSIZE))
            if not b:
                break
            ptr = self.buffer.tell()
            self.buffer.seek(0, 2), self.buffer.write(b), self.buffer.seek(ptr)
        self.newlines = 0
        return self.buffer.read()

    def readline(self):
        while self.newlines == 0:
            b = os.read(self._fd, max(os.fstat(self._fd).st_size, BUFSIZE))
            self.newlines = b.count(b"\n") + (not b)
            ptr = self.buffer.tell()
            self.buffer.seek(0, 2), self.buffer.write(b), self.buffer.seek(ptr)
        self.newlines -= 1
        return self.buffer.readline()

    def flush(self):
        if self.writable:
            os.write(self._fd, self.buffer.getvalue())
            self.buffer.truncate(0), self.buffer.seek(0)


class IOWrapper(IOBase):
    def __init__(self, file):
        self.buffer = FastIO(file)
        self.flush = self.buffer.flush
        self.writable = self.buffer.writable
        self.write = lambda s: self.buffer.write(s.encode("ascii"))
        self.read = lambda: self.buffer.read().decode("ascii")
        self.readline = lambda: self.buffer.readline().decode("ascii")


sys.stdin, sys.stdout = IOWrapper(sys.stdin), IOWrapper(sys.stdout)
input = lambda: sys.stdin.readline().rstrip("\r\n")

def main():
    n = int(input())
    print(n * 2)

if __name__ == "__main__":
    main()
'''


async def test_pyrivals_fastio_template_keeps_the_child() -> None:
    """FINDING (cost; Interpreter.restore's fresh streams are not the interpreter's): the
    streams restore makes for each test (``_fresh_stream``: a TextIOWrapper built by hand)
    have no ``mode`` attribute, which ``open()`` and the interpreter's own ``sys.stdin`` /
    ``sys.stdout`` have ("r", "w"). PyRival's FastIO template, the most common Python
    competitive-programming prelude, reads ``file.mode`` to decide whether a stream is
    writable: in every test after a child's first it raises AttributeError
    ("'_io.TextIOWrapper' object has no attribute 'mode'", reproduced in-process with
    worker.Interpreter and worker.execute), ends its child and is run again in its place.
    Seen twice: 6 tests, 6 children (stderr pids 2-7), all AC; a child per test is AC at
    the same ~1.2 ms, so each test costs a shared run, a fork and a lone run. (Setting
    ``mode`` on the fresh streams, and ``name`` "<stdin>"/"<stdout>"/"<stderr>" as the
    interpreter's are, would keep one child.)"""
    program = Program(source=PID + PYRIVAL)
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{2 * i}\n") for i in range(6)]
    resident = await run(program, tests)
    assert [r.verdict for r in resident] == [Verdict.AC] * 6, cpu(resident)
    assert children(resident) == 1, [r.stderr for r in resident]


@pytest.mark.parametrize("ending", ["exit()", "quit()", "exit(0)"])
async def test_exit_and_quit_are_defined_as_under_python(ending: str) -> None:
    """FINDING (not the resident child's: both ways alike): the worker runs Python with
    ``-S`` (process.py), so ``site`` never adds ``exit`` and ``quit`` to the builtins, and
    a program that ends with ``print(ans); exit()`` (a common competitive-programming
    idiom) raises NameError: RE in a child per test, with the full limit and resident
    (4 of 4 tests each, seen twice), where ``python solution.py`` gives AC. The harness
    could add site's two Quitter builtins (or equivalents raising SystemExit) to the
    builtins it restores."""
    program = Program(source=f"print(input())\n{ending}\n")
    tests = [Test(id=f"t{i}", input=f"w{i}\n", output=f"w{i}\n") for i in range(2)]
    for resident in (False, True):
        results = await run(program, tests, resident=resident)
        assert [r.verdict for r in results] == [Verdict.AC] * 2, [r.error for r in results]


async def test_a_shared_tests_memory_is_its_own_peak_not_what_it_reused_of_an_earlier_tests_garbage() -> None:
    """FINDING (memory_kb; the garbage of a finished test, as in the first test here):
    PROTOCOL.md says "a test's memory is the memory cgroup's peak, as for a child of its
    own". A shared test's peak is measured above what the cgroup holds at its handover
    (confine.c), which includes the earlier test's garbage (its module namespace is a
    cycle: 1 M lists, ~105 MB). The test's collections free that garbage and it builds its
    own 1 M lists in the freed memory, so the cgroup barely grows: seen twice, resident
    memory_kb 117, 22, 23, 27, 5, 4, 4, 4 MB for 8 equal tests, each ~115 MB in a child
    of its own. (The same tests also pay for the earlier test's garbage in CPU: ~415-465
    ms each against ~320-345 ms alone.) Collecting after each test, on its own time,
    before the next handover's base is read would give both back."""
    program = Program(source="def helper():\n    return 1\n"
                      "n = int(input())\n"
                      "data = [[i] for i in range(n)]\nprint(n)\n")
    tests = [Test(id=f"t{i}", input="1000000\n", output="1000000\n") for i in range(4)]
    alone = await run(program, tests, resident=False)
    resident = await run(program, tests)
    if any(r.memory_kb <= 0 for r in alone):
        pytest.skip("no memory cgroup here: memory_kb is not a peak")
    assert [r.verdict for r in resident] == [Verdict.AC] * 4
    assert all(r.memory_kb >= a.memory_kb // 2 for r, a in zip(resident, alone, strict=True)), \
        ([r.memory_kb // 1024 for r in resident], [a.memory_kb // 1024 for a in alone])


@pytest.mark.parametrize("resident", [False, True])
async def test_atexit_handlers_run_when_the_program_ends(resident: bool) -> None:
    """FINDING F8 (noted by the attack, no test there; both ways alike): a stdin program's
    ``atexit`` handlers never ran (a child ends with ``os._exit``), so the fast-output idiom
    that collects its answers in a buffer and writes it at exit printed nothing: WA where
    ``python`` gives AC. They run now when the program's module ends (after an exit() too),
    and a resident child's next test does not find them."""
    program = Program(source="import atexit, io, sys\n"
                      "out = io.StringIO()\n"
                      "atexit.register(lambda: sys.stdout.write(out.getvalue()))\n"
                      "out.write(input().strip() + '\\n')\n"
                      "if out.getvalue().startswith('q'):\n    exit()\n")
    tests = [Test(id=f"t{i}", input=f"{w}\n", output=f"{w}\n") for i, w in enumerate(["a", "q1", "b", "c"])]
    results = await run(program, tests, resident=resident)
    assert [r.verdict for r in results] == [Verdict.AC] * 4, [(r.stdout, r.error) for r in results]
