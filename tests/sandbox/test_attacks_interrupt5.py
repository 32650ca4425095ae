"""Fifth attack on the resident child and its interrupt (after fe0ba20: stop 32's exit
semantics for a stdin program, _program_exit; stop 33's start state taken once in the zygote
and restored at the end of each test, after its report). docs/PROTOCOL.md, "One child for a
program's tests": for a program whose tests do not depend on what its earlier tests left,
every resident verdict is that of a child per test (SandboxConfig(resident=False)), or, where
that is a timeout under the loop rule's tight limit, possibly the full limit's
(loop_factor=0); never better than the full limit's; and no common, honest idiom costs more
in a resident child than with a child per test. Each test here is a finding of that attack
(its docstring says what was seen) and failed on fe0ba20; all nine are fixed in stop 33."""

from __future__ import annotations

import pytest

from pairbench_async.core.types import Limits, Program, Test, Verdict
from tests.resident import PID, children, cpu, run


async def test_every_test_runs_in_the_scratch_directory() -> None:
    """FINDING (stop 33, a4ef4db: the start state taken in the zygote): ``Interpreter``
    records ``os.getcwd()`` in the zygote, whose working directory is the minimal root's
    ``/``; the child is moved into the scratch directory only by its confinement
    (confine.c do_confine, ``chdir(c->cwd)``), after the fork. The restore at the end of the
    first test then moves the child to ``/``: every later test runs there (seen: stderr
    ``/sandbox/scratch`` for the first test, ``/`` for the three after, twice), where it
    can write nothing. A program that writes a scratch file in its working directory
    (``open('note.txt', 'w')``) raises PermissionError in every test after a child's first,
    which ends the child and is run again as a new child's first: 4 children for 4 tests
    (twice), every test's work done twice, where a child of its own writes the file. The
    verdicts stay AC. Taking ``cwd`` in the child (``keep_fds``), or the scratch path from
    the config, would keep every test in scratch."""
    program = Program(source=PID + "print(os.getcwd(), file=sys.stderr)\n"
                      "with open('note.txt', 'w') as f:\n    f.write(input())\n"
                      "with open('note.txt') as f:\n    print(f.read())\n")
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{i}\n") for i in range(4)]
    alone = await run(program, tests, resident=False)
    assert [r.verdict for r in alone] == [Verdict.AC] * 4, cpu(alone)
    resident = await run(program, tests)
    assert [r.verdict for r in resident] == [Verdict.AC] * 4, cpu(resident)
    assert children(resident) == 1, [r.stderr for r in resident]


async def test_a_later_tests_working_directory_is_the_scratch_directory() -> None:
    """FINDING (the same, as a program sees it): ``os.getcwd()`` is ``/sandbox/scratch`` in
    a child of its own and in a resident child's first test, ``/`` in every later test of
    the same child (seen twice: ['/sandbox/scratch', '/', '/', '/'], one child, all AC)."""
    program = Program(source=PID + "print(os.getcwd(), file=sys.stderr)\nprint(input())\n")
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{i}\n") for i in range(4)]
    alone = await run(program, tests, resident=False)
    resident = await run(program, tests)
    assert [r.verdict for r in resident] == [Verdict.AC] * 4, cpu(resident)
    here = {(r.stderr or "").split("\n")[1] for r in alone}
    seen = [(r.stderr or "").split("\n")[1] for r in resident]
    assert seen == [*here] * 4, seen


@pytest.mark.parametrize("resident", [False, True])
async def test_a_thread_pool_left_open_does_not_hang_the_programs_end(resident: bool) -> None:
    """FINDING (stop 32's exit semantics, _program_exit; both ways alike): a stdin program
    that makes a ``concurrent.futures.ThreadPoolExecutor`` without ``with`` or ``shutdown``
    (``ex = ThreadPoolExecutor(2); print(sum(ex.map(f, xs)))``) exits at once under
    ``python`` with its output (seen: "30", 0.03 s): the interpreter's exit
    (``threading._shutdown``) first calls the hooks ``threading._register_atexit`` holds
    (the executor's ``_python_exit`` wakes its idle workers and tells them to stop), then
    joins the non-daemon threads. ``_program_exit`` joins the workers without those hooks:
    they wait on their queue forever, the test idles to its wall limit, and its output,
    still buffered, is lost: TLE with empty stdout in every test, resident, alone and with
    the full limit (3 of 3 each, seen twice). Calling ``threading._threading_atexits``
    (reversed) before the join would give python's verdict; the resident child must then
    reset what they set (``concurrent.futures.thread._shutdown``, and ``threading``'s
    ``_SHUTTING_DOWN``), or its later tests cannot submit work ("cannot schedule new
    futures after interpreter shutdown")."""
    program = Program(source="from concurrent.futures import ThreadPoolExecutor\n"
                      "ex = ThreadPoolExecutor(2)\n"
                      "n = int(input())\n"
                      "print(sum(ex.map(lambda x: x * x, range(n))))\n")
    tests = [Test(id=f"t{n}", input=f"{n}\n", output=f"{sum(x * x for x in range(n))}\n")
             for n in (3, 4, 5)]
    results = await run(program, tests, Limits(time_limit=1.0, wall_limit=2.0), resident=resident)
    assert [r.verdict for r in results] == [Verdict.AC] * 3, [(r.verdict.value, r.stdout)
                                                              for r in results]


@pytest.mark.parametrize("resident", [False, True])
async def test_output_of_print_and_of_a_file_on_fd_1_keeps_pythons_order(resident: bool) -> None:
    """FINDING (stop 32's exit semantics, _program_exit; both ways alike): a program that
    writes to ``sys.stdout`` (``print``) and to its own file on fd 1 (``out = open(1, 'w')``,
    the idiom _program_exit's docstring names), both left buffered at its end, prints
    ``a0\\nb0\\n`` under ``python`` (seen 3 of 3): its exit flushes the standard streams
    (``flush_std_files``) before the module's namespace is torn down, which closes (and
    flushes) ``out``. The harness flushes the namespace's files in ``_program_exit`` first
    and ``sys.stdout`` after, in ``execute``: ``b0\\na0\\n``, WA in every test, resident,
    alone and with the full limit (3 of 3 each, seen twice). Flushing the standard streams
    before the namespace's files would give python's output."""
    program = Program(source="out = open(1, 'w')\nx = input()\n"
                      "print('a' + x)\nout.write('b' + x + '\\n')\n")
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"a{i}\nb{i}\n") for i in range(3)]
    results = await run(program, tests, resident=resident)
    assert [r.verdict for r in results] == [Verdict.AC] * 3, [r.stdout for r in results]


#: a stdout replacement that writes what it was given when it is finalized (flush: nothing)
DEL_WRITER = ("import os, sys\n"
              "class Out:\n"
              "    def __init__(self):\n        self.parts = []\n"
              "    def write(self, s):\n        self.parts.append(s)\n"
              "    def flush(self):\n        pass\n"
              "    def __del__(self):\n        os.write(1, ''.join(self.parts).encode())\n"
              "sys.stdout = Out()\n"
              "print(int(input()) * 2)\n")


#: the same through the builtins, which the restore also replaces after the report
DEL_BUILTIN = ("import os, builtins\n"
               "class Keep:\n"
               "    def __init__(self, s):\n        self.s = s\n"
               "    def __del__(self):\n        os.write(1, self.s.encode())\n"
               "builtins.answer = Keep(str(int(input()) * 2) + '\\n')\n")


@pytest.mark.parametrize("source", [DEL_WRITER, DEL_BUILTIN], ids=["stdout", "builtins"])
async def test_a_finalizer_run_by_the_restore_gives_no_better_verdict(source: str) -> None:
    """FINDING (stop 33, a4ef4db: the restore at the end of a test, after its report): a
    stdin program replaces ``sys.stdout`` with an object that writes what it holds only
    when it is finalized. A child per test ends with ``os._exit``: the finalizer never
    runs, stdout is empty, WA in every test, alone and with the full limit. The resident
    child's restore drops the test's streams (``sys.stdout = None``) after its report and
    before "done": the finalizer runs then, writes the answer to the test's own stdout
    (fd 1 is the test's file until the restore's dup2s), and the zygote reads it as the
    test's output: AC in every test (3 of 3, seen twice). A verdict better than the full
    limit's, which the promise rules out. (Before stop 33 the restore ran at the next
    test's handover, and this output went into the next test's stdout.) ``python`` gives
    AC (its exit puts ``sys.__stdout__`` back, dropping the replacement: "42", rc 0, 3 of
    3), so doing that in ``_program_exit`` (on the program's time, before the report, both
    ways) would make the three agree with python; dropping the streams before the report
    would at least make the resident child agree with a child per test. The same with an
    object the program puts in the builtins (``builtins.clear()`` drops it): resident AC,
    alone and full WA (seen twice). Keeping what the restore replaces referenced
    and frozen with the test's namespace (its finalizers never run, as after a child's
    ``os._exit``) would cover every such object."""
    program = Program(source=source)
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{2 * i}\n") for i in range(3)]
    full = await run(program, tests, resident=False, loop_factor=0)
    resident = await run(program, tests)
    assert [r.verdict for r in resident] == [r.verdict for r in full], (cpu(resident), cpu(full))


async def test_a_stdout_replacements_finalizer_writes_as_under_python() -> None:
    """The same program in a child per test, against python's AC (its exit restores
    ``sys.stdout`` from ``sys.__stdout__`` before the modules are torn down, and the
    replacement's finalizer writes). Seen: WA with empty stdout (3 of 3, twice); the
    resident child gives AC (the test above)."""
    program = Program(source=DEL_WRITER)
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{2 * i}\n") for i in range(3)]
    results = await run(program, tests, resident=False)
    assert [r.verdict for r in results] == [Verdict.AC] * 3, [r.stdout for r in results]


@pytest.mark.parametrize("resident", [False, True])
@pytest.mark.parametrize("idiom", [
    "write = open(1, 'w').write\nwrite(str(solve(int(input()))) + '\\n')\n",
    "class W:\n    def __init__(self):\n        self.f = open(1, 'w')\n"
    "w = W()\nw.f.write(str(solve(int(input()))) + '\\n')\n",
], ids=["bound-write", "file-in-an-instance"])
async def test_a_file_the_namespace_holds_indirectly_is_flushed(idiom: str, resident: bool) -> None:
    """FINDING (stop 32's exit semantics, _program_exit; both ways alike): _program_exit
    flushes the files the program's namespace holds *directly* (``out = open(1, 'w')``).
    The namespace is a cycle (the program defines a function) and is frozen, never torn
    down, so a file held one step away is never flushed: ``write = open(1, 'w').write``
    (the namespace holds a bound method) or a file in an instance's attribute. ``python``
    prints the answer (its exit clears the module's namespace, which frees the holder and
    closes the file: "42", 3 of 3 for the bound method, 1 of 1 for the instance); the
    harness gives WA with empty stdout in every test, resident, alone and with the full
    limit (3 of 3 each, twice). Flushing every writable, open ``io.IOBase`` the collector
    tracks outside the frozen generation (``gc.get_objects()``) when the module ends, or
    clearing the namespace as python does, would give python's output."""
    program = Program(source="def solve(x):\n    return x * 2\n" + idiom)
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{2 * i}\n") for i in range(3)]
    results = await run(program, tests, resident=resident)
    assert [r.verdict for r in results] == [Verdict.AC] * 3, [r.stdout for r in results]


#: CPU-bound for ``ms`` milliseconds of this thread's CPU
SPIN = ("import time\n"
        "def spin(ms):\n    end = time.thread_time() + ms / 1000\n"
        "    while time.thread_time() < end:\n        pass\n")


async def test_the_slowest_test_term_is_no_tighter_for_a_test_with_a_reference_time() -> None:
    """FINDING (the loop rule's own term in a resident child, tests with ``ref_ms``; stop
    32's 7572fcf kept the shared floor for them): after a timeout a test's tight limit is
    max(floor + 10 x ref, 10 x the slowest test of the job that finished). The shared floor
    (0.5 ms where a child of its own has 2 ms) allows for a shared test's CPU having no
    fork or confinement in it, but the second term does not: the finished tests it takes
    were themselves measured from their handover. Here the first test loops (TLE, the child
    is kept), two trivial tests finish in ~0.3 ms shared (~1.4 ms in a child of their own),
    and a test with ref_ms 0.2 that takes 8 ms gets max(0.5 + 2, 10 x 0.3) = ~3 ms
    resident: TLE at 3.1 ms, where a child of its own gets max(2 + 2, 10 x 1.4) = 14 ms:
    AC in 9.3 ms, and the full limit AC (seen twice, 2 of 2 each way). PROTOCOL.md owns
    this tightening only "for tests without ref_ms". Counting a shared test's CPU into
    the slowest-test term with the floor's difference added (floor_us - shared_floor_us),
    as the floor itself is, would give the lone verdict."""
    program = Program(source=SPIN + "def f(x):\n    if x < 0:\n        while True:\n"
                      "            pass\n    spin(x)\n    return 1\n", kind="call", entry_point="f")
    tests = [Test(id="loop", args=[-1], expected=1, ref_ms=0.1),
             Test(id="a", args=[0.1], expected=1, ref_ms=0.1),
             Test(id="b", args=[0.1], expected=1, ref_ms=0.1),
             Test(id="target", args=[8], expected=1, ref_ms=0.2)]
    limits = Limits(time_limit=1.0)
    alone = await run(program, tests, limits, resident=False)
    assert [r.verdict.value for r in alone] == ["TLE", "AC", "AC", "AC"], cpu(alone)
    resident = await run(program, tests, limits)
    assert [r.verdict for r in resident] == [r.verdict for r in alone], (cpu(resident), cpu(alone))


@pytest.mark.parametrize("resident", [False, True])
async def test_a_program_that_rewraps_a_detached_stdout_is_not_an_error(resident: bool) -> None:
    """FINDING (stop 32's _open_streams, eb63897: sys.__stdout__ flushed, a closed stream
    skipped; both ways alike): ``sys.stdout = io.TextIOWrapper(sys.stdout.detach(),
    encoding='utf-8', newline='\\n')`` (re-wrapping the standard output's buffer) leaves
    ``sys.__stdout__`` detached, and a detached wrapper's ``closed`` raises ValueError
    ("underlying buffer has been detached"), which ``getattr(stream, 'closed', False)``
    does not catch. It escapes ``_open_streams``'s generator outside the flush's ``try``,
    out of ``execute``, before the report is written: the child exits 70, RE ("non-zero
    exit code") with the right output, in every test, resident, alone and with the full
    limit (3 of 3 each, seen twice). ``python`` prints "42" and exits 0 (its exit flushes
    ``sys.stdout`` and ``sys.stderr`` only). Catching any exception from ``closed`` (a
    stream that cannot say is skipped) would give python's verdict."""
    program = Program(source="import io, sys\n"
                      "sys.stdout = io.TextIOWrapper(sys.stdout.detach(), encoding='utf-8',"
                      " newline='\\n')\n"
                      "print(int(input()) * 2)\n")
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{2 * i}\n") for i in range(3)]
    results = await run(program, tests, resident=resident)
    assert [r.verdict for r in results] == [Verdict.AC] * 3, [(r.stdout, r.error) for r in results]


async def test_a_later_tests_stdout_buffers_as_the_interpreters_does() -> None:
    """FINDING (the restore's fresh streams, worker._fresh_stream): the interpreter's own
    standard streams buffer ``st_blksize`` bytes of their file (4,096 here: stdout and
    stdin ``buffer.__sizeof__()`` 4248 in a child of its own and in a resident child's
    first test), the fresh ones made for every later test ``io.DEFAULT_BUFFER_SIZE``
    (8,192: 8344). A program that writes both through ``print`` and straight to fd 1
    (``os.write(1, ...)``) interleaves them where its buffer fills, so its output in every
    test after a child's first differs from python's and from a child of its own's: WA
    there, which the pool then runs again alone (AC). Seen twice: 3 children for 3 tests
    (every later test's work done twice), AC in the end. Making the fresh streams with the
    file's block size (``buffering=-1`` as ``io.open`` does, or the size the spec records)
    would keep one child and python's output."""
    program = Program(source=PID + "n = int(input())\n"
                      "for i in range(n):\n    print(i)\n"
                      "    if i % 500 == 0:\n        os.write(1, b'!\\n')\n")
    probe = await run(program, [Test(id="p", input="3000\n", output="")], resident=False)
    tests = [Test(id=f"t{i}", input="3000\n", output=probe[0].stdout or "") for i in range(3)]
    resident = await run(program, tests)
    assert [r.verdict for r in resident] == [Verdict.AC] * 3, cpu(resident)
    assert children(resident) == 1, [r.stderr for r in resident]


async def test_a_later_tests_stdin_is_no_more_seekable_than_a_child_of_its_owns() -> None:
    """FINDING (the restore's fresh streams, worker._fresh_stream): the interpreter's own
    ``sys.stdin`` was made when the worker started, on a pipe, and caches that it cannot
    seek (``seekable()`` False, ``tell``/``seek`` raise); a fresh stream, made on the
    inbox (a file), can. So a program that reads the first line and rewinds when it is a
    header (``sys.stdin.seek(0)``) raises UnsupportedOperation in a child of its own and
    with the full limit (RE), and passes in every resident test after a child's first:
    [AC, AC] where both others give [AC, RE] (seen twice). A verdict better than the full
    limit's. (``python`` agrees with the resident child when stdin is a file, with a child
    of its own when it is a pipe.) The same holds for ``sys.stdout`` and ``sys.stderr``
    (``seekable()`` False first, True after). Giving every test, in both ways, streams
    made the same way in the child (fresh, on its fds, with the file's block size) would
    make the two agree."""
    program = Program(source="import sys\n"
                      "first = sys.stdin.readline()\n"
                      "if first.startswith('#'):\n    sys.stdin.seek(0)\n"
                      "print(sum(int(t) for t in sys.stdin.read().split() if t.isdigit()))\n")
    tests = [Test(id="plain", input="1\n2 3\n", output="5\n"),
             Test(id="header", input="# 2 numbers\n4 5\n", output="11\n")]
    full = await run(program, tests, resident=False, loop_factor=0)
    alone = await run(program, tests, resident=False)
    resident = await run(program, tests)
    assert [r.verdict for r in alone] == [r.verdict for r in full], (cpu(alone), cpu(full))
    assert [r.verdict for r in resident] == [r.verdict for r in alone], (cpu(resident), cpu(alone))
