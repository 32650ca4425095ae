"""Seventh attack on the resident child (after 096f047: a stdin program's end clears the threading
exit hooks its own code registered, keeps a library's (``_programs``), prints a hook's error, marks
the main thread stopped around the join, flushes files in ``__slots__``; a test that leaves the
lowest free fd higher retires its child; only a stdin program's namespace is held).
docs/PROTOCOL.md, "One child for a program's tests": each resident verdict is a child per test's
(SandboxConfig(resident=False)), or the full limit's (loop_factor=0) where that is a timeout under
the tight limit; never better than the full limit's. Each test is a finding of that attack (its
docstring says what was seen) and fails on 096f047.

Every finding here is one class: code an earlier test left for the interpreter to call later
(a hook, a callback, a signal handler) runs in a later test of the same resident child and prints
that test's expected answer, so a program that answers only its first test passes the second:
resident AC where a child per test, and python, give WA. The re-run of a failing shared test
cannot catch a pass. Each program registers its hook only for input ``a`` and prints nothing for
input ``b``."""

from __future__ import annotations

import pytest

from pairbench_async.core.types import Limits, Program, Test, Verdict
from tests.resident import cpu, run, within_the_promise

LIMITS = Limits(time_limit=1.0, memory_limit_mb=256)


async def _a_later_test_is_not_answered_by_an_earlier_ones_code(source: str, answer: str = "YES\n") -> None:
    program = Program(source=source)
    tests = [Test(id="t1", input="a\n", output=answer), Test(id="t2", input="b\n", output=answer)]
    alone = await run(program, tests, LIMITS, resident=False)
    assert [r.verdict for r in alone] == [Verdict.AC, Verdict.WA], cpu(alone)
    resident = await run(program, tests, LIMITS)
    full = await run(program, tests, LIMITS, loop_factor=0)
    assert within_the_promise(resident, alone, full), (cpu(resident), cpu(alone), cpu(full))


#: a library's function as the hook: pprint.pprint's code is pprint.py's
LIBRARY_FUNCTION = ("import threading, pprint\ns = input()\n"
                    "if s == 'a':\n    threading._register_atexit(pprint.pprint, 'YES')\n")
#: the program's own lambda, compiled under another file name
OTHER_FILENAME = ("import threading\ns = input()\n"
                  "if s == 'a':\n    threading._register_atexit("
                  "eval(compile(\"lambda: print('YES')\", '<lib>', 'eval')))\n")


@pytest.mark.parametrize(("source", "answer"), [(LIBRARY_FUNCTION, "'YES'\n"), (OTHER_FILENAME, "YES\n")],
                         ids=["library_function", "other_filename"])
async def test_a_thread_exit_hook_the_program_registered_is_cleared_whatever_its_code(
        source: str, answer: str) -> None:
    """FINDING (096f047, _program_exit and _programs): a threading exit hook is kept for the
    child's life when its function's ``__code__.co_filename`` is not the program's, taken to
    mean a library registered it at its import. But what is tested is the function, not who
    registered it: the program can register a library's Python function
    (``threading._register_atexit(pprint.pprint, 'YES')``) or its own code compiled under
    another name (``compile(..., '<lib>', 'eval')``). Registered only for input ``a``, the hook
    prints at the end of every later test of the resident child: alone [AC, WA] (python too:
    nothing printed for ``b``), resident [AC, AC] (the second at 0.2 ms CPU), full [AC, AC];
    seen twice each. Attack 6's first finding again, through the filter. Keeping a hook only
    when it *is* a library's registered function (by identity: in python3.11's standard library
    only ``concurrent.futures.thread._python_exit`` and ``concurrent.futures.process
    ._python_exit`` call ``_register_atexit``, once, at their import), clearing and holding every
    other, would not depend on where the function's code lives. (Not "hooks added during the
    test": concurrent.futures' first import registers its hook during a test, and must stay.)"""
    await _a_later_test_is_not_answered_by_an_earlier_ones_code(source, answer)


async def test_a_gc_callback_of_an_earlier_test_does_not_answer_a_later_test() -> None:
    """FINDING (096f047, Interpreter.restore): the restore puts back the collector's switch and
    thresholds but not ``gc.callbacks``. A callback appended by the first test is called at
    every collection of every later test of the resident child (and at one during the harness's
    own work between tests, whose output goes to the next test's fresh ``sys.stdout``). A
    program that appends, for input ``a`` only, a callback printing ``YES`` once on a
    ``sys.stdout`` other than its own, and for ``b`` builds 3,000 lists (a collection) and
    prints nothing: alone [AC, WA], resident [AC, AC] (0.4 ms), full [AC, AC]; seen twice. Fix:
    ``Interpreter`` records ``gc.callbacks`` (a copy) and ``restore`` holds the test's list and
    puts the start's contents back (``gc.callbacks[:] = ...``)."""
    await _a_later_test_is_not_answered_by_an_earlier_ones_code(
        "import gc, sys\ns = input()\n"
        "if s == 'a':\n    print('YES')\n    mine = sys.stdout\n"
        "    def cb(phase, info, done=[]):\n"
        "        if sys.stdout is not mine and sys.stdout not in done:\n"
        "            done.append(sys.stdout)\n            print('YES')\n"
        "    gc.callbacks.append(cb)\n"
        "else:\n    x = [[] for _ in range(3000)]\n")


async def test_a_signal_handler_and_timer_of_an_earlier_test_do_not_answer_a_later_test() -> None:
    """FINDING (096f047, Interpreter.restore and serve_resident): neither the program's signal
    handlers nor its interval timers are put back between tests (``Gate.install`` resets only
    SIG_INTERRUPT's). A first test that sets ``signal.signal(SIGALRM, h)`` and
    ``signal.setitimer(ITIMER_REAL, 0.02, 0.02)`` keeps both for the child's life (seen in the
    second test: ``getitimer`` (0.018, 0.02), ``getsignal`` the first test's lambda, its ticks on
    the second test's stderr); ``h`` prints ``YES`` once on a ``sys.stdout`` other than the first
    test's. Input ``b`` spins 0.1 s and prints nothing: alone [AC, WA] (python: nothing printed,
    the timer dies with the process), resident [AC, AC] (100 ms), full [AC, AC]; seen twice. A
    handler that fires between tests runs in the harness's wait for "g" and writes into the
    next test's fresh stream. Fix: ``restore`` disarms ``ITIMER_REAL``/``VIRTUAL``/``PROF`` and
    puts every signal's handler back to the start's (``signal.getsignal`` recorded by
    ``Interpreter``; what the test set held), or a test that armed a timer or changed a
    handler retires its child as a leaked fd does."""
    await _a_later_test_is_not_answered_by_an_earlier_ones_code(
        "import signal, sys, time\ns = input()\n"
        "if s == 'a':\n    print('YES')\n    mine = sys.stdout\n"
        "    def h(*args, done=[]):\n"
        "        if sys.stdout is not mine and sys.stdout not in done:\n"
        "            done.append(sys.stdout)\n            print('YES')\n"
        "    signal.signal(signal.SIGALRM, h)\n"
        "    signal.setitimer(signal.ITIMER_REAL, 0.02, 0.02)\n"
        "else:\n    t = time.time()\n    while time.time() - t < 0.1:\n        pass\n")


async def test_an_audit_hook_of_an_earlier_test_does_not_answer_a_later_test() -> None:
    """FINDING (096f047, Interpreter.restore): ``sys.addaudithook`` cannot be undone, and a hook
    the first test adds sees every audited event of every later test in the resident child,
    the harness's ``exec`` of the next test's module among them. A hook that prints ``YES``
    once per ``sys.stdout`` other than the first test's at an ``exec`` event: alone [AC, WA],
    resident [AC, AC] (0.2 ms), full [AC, AC]; seen twice. It cannot be removed, so the fix is
    to retire the child: the harness adds its own audit hook at the child's start (before any
    program code) that notes the ``sys.addaudithook`` event, and ``serve_resident`` ends the
    child after a test during which it fired (the next test is run again as a new child's
    first, as for a leaked fd)."""
    await _a_later_test_is_not_answered_by_an_earlier_ones_code(
        "import sys\ns = input()\n"
        "if s == 'a':\n    print('YES')\n    mine = sys.stdout\n"
        "    def h(event, args, done=[]):\n"
        "        if event == 'exec' and sys.stdout is not mine and sys.stdout not in done:\n"
        "            done.append(sys.stdout)\n            print('YES')\n"
        "    sys.addaudithook(h)\n")


@pytest.mark.parametrize("resident", [False, True])
async def test_a_thread_that_joins_the_main_thread_lets_the_program_end(resident: bool) -> None:
    """FINDING (9adda75, _program_exit; both ways alike): python's ``threading._shutdown``
    releases the main thread's ``_tstate_lock`` and stops it before joining the threads left, so
    a thread blocked in ``threading.main_thread().join()`` returns when the module ends (``echo 5
    | python3.11 prog.py``: ``10``, rc 0). The harness only sets ``main._is_stopped`` around the
    join: ``is_alive()`` says False, but ``join()`` waits on the tstate lock, still held, so the
    program's thread and the harness's join of it wait for each other until the wall limit: TLE
    in every test, resident and alone (1 s limit: ~2 s of wall per test, no output; seen twice),
    where python gives AC. Doing what ``_shutdown`` does (release ``_tstate_lock`` and
    ``main._stop()``) and, after the join, acquiring it again and putting back ``_tstate_lock``
    and ``_is_stopped`` for the next test would give python's verdict."""
    program = Program(source="import threading\n"
                      "def wait():\n    threading.main_thread().join()\n    print(int(x) * 2)\n"
                      "x = input()\nthreading.Thread(target=wait).start()\n")
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{2 * i}\n") for i in range(1, 3)]
    results = await run(program, tests, LIMITS, resident=resident)
    assert [r.verdict for r in results] == [Verdict.AC] * 2, cpu(results)


@pytest.mark.parametrize("resident", [False, True])
async def test_an_exit_status_too_big_for_a_c_long_fails_as_under_python(resident: bool) -> None:
    """FINDING (execute's ``except SystemExit``; both ways alike): python takes an integer exit
    code through ``PyLong_AsLong``; one that does not fit (``sys.exit(10 ** 20)``, ``2 ** 64``,
    ``-2 ** 64``) exits with status 255 (python3.11: ``echo 5 | python3 prog.py`` prints ``10``,
    rc 255), as ``sys.exit(-1)`` does, which the sandbox gives RE. The harness takes ``code &
    0xFF``: 10 ** 20 is a multiple of 256, so status 0 and AC, resident and alone (2 of 2 each,
    seen twice), where python's status fails the program. Taking 255 for a code outside
    [-2 ** 63, 2 ** 63) (what ``PyLong_AsLong`` refuses), ``code & 0xFF`` inside it, would give
    python's status."""
    program = Program(source="import sys\nprint(int(input()) * 2)\nsys.exit(10 ** 20)\n")
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{2 * i}\n") for i in range(1, 3)]
    results = await run(program, tests, LIMITS, resident=resident)
    assert [r.verdict for r in results] == [Verdict.RE] * 2, cpu(results)


#: an honest tree whose nodes hold their parent through a weakref.proxy; the parent is gone
DEAD_PROXY = ("import weakref\nclass Node:\n    def __init__(self, parent=None):\n"
              "        self.parent = weakref.proxy(parent) if parent is not None else None\n"
              "def build():\n    top = Node()\n    return Node(top)\n"
              "leaf = build()\nprint(int(input()) * 2)\n")


@pytest.mark.parametrize("resident", [False, True])
async def test_a_dead_weakref_proxy_in_the_namespace_is_not_an_error(resident: bool) -> None:
    """FINDING (096f047, _held_files; both ways alike): the walk for held files asks
    ``isinstance(value, _io._IOBase)`` (and ``MethodType``, ``ModuleType``, ``type``) of every
    value; for an object that is not of such a type, ``isinstance`` reads ``value.__class__``
    through the object's own attribute lookup and lets any error but AttributeError out. A
    ``weakref.proxy`` whose referent died (a tree node's ``self.parent = weakref.proxy(parent)``,
    one step from the namespace) raises ``ReferenceError`` there, out of ``_program_exit``, taken
    as the program's: RE in every test, resident and alone (2 of 2 each, stdout right, stderr
    ``ReferenceError: weakly-referenced object no longer exists``; seen twice), where python
    prints the answer and exits 0 (python3.11: ``10``, rc 0). Asking the type instead
    (``issubclass(type(value), ...)``, no code of the object's runs) and letting nothing of the
    walk fail the program would give python's verdict."""
    program = Program(source=DEAD_PROXY)
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{2 * i}\n") for i in range(1, 3)]
    results = await run(program, tests, LIMITS, resident=resident)
    assert [r.verdict for r in results] == [Verdict.AC] * 2, [(r.verdict.value, r.stderr) for r in results]


@pytest.mark.parametrize("resident", [False, True])
async def test_the_walk_for_held_files_runs_no_code_of_the_programs(resident: bool) -> None:
    """FINDING (096f047, _held_files; both ways alike; its docstring says attributes are read
    without the program's ``__getattr__``): ``isinstance`` reads ``__class__`` through the
    object's ``__getattribute__``, so the walk runs the program's code after its end, which
    python's exit never does (an instance's teardown reads no attribute). A program whose
    class's ``__getattribute__`` prints the answer when asked for ``__class__``, and which
    prints nothing itself: python prints nothing (``echo 5 | python3.11 prog.py``: no output, rc
    0: WA), the harness prints what the walk made it print: AC, resident and alone (2 of 2
    each, seen twice). ``issubclass(type(value), ...)`` for the checks, and
    ``type.__dict__['__mro__'].__get__(type(value))`` in ``_slot_values`` (a metaclass's
    ``__mro__`` property is the program's code too), would run none of it."""
    program = Program(source="class P:\n    def __getattribute__(self, name, done=[]):\n"
                      "        if name == '__class__' and not done:\n"
                      "            done.append(1)\n            print(int(x) * 2)\n"
                      "        return object.__getattribute__(self, name)\n"
                      "p = P()\nx = input()\n")
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{2 * i}\n") for i in range(1, 3)]
    results = await run(program, tests, LIMITS, resident=resident)
    assert [r.verdict for r in results] == [Verdict.WA] * 2, cpu(results)


async def test_a_thread_a_finalizer_starts_after_a_timeout_does_not_answer_a_later_test() -> None:
    """FINDING (096f047, serve_resident): after an interrupted test the harness collects its
    garbage (``gc.collect()``, on its time), which runs the program's finalizers, but it has
    already asked ``_thread._count()`` whether the test left a thread. A finalizer of the
    interrupted test's garbage (a cycle, kept from the test's own collections by
    ``gc.disable()``, which the restore undoes) that starts a thread is never seen: the thread
    is stopped with the child and runs on in the next test, printing on its ``sys.stdout``,
    and that test's end joins it. Input ``a`` spins to its limit; ``b`` prints nothing; ``c``
    prints ``NO`` (a finished test, so that ``b``'s bound after the timeout is not the floor):
    alone [AC, TLE, WA], resident [AC, TLE, AC] (the third at 0.9 ms), full [AC, TLE, AC] (seen
    twice, 0.3 s limit). Asking for threads after that collection (or collecting before the
    check), and ending the child if a finalizer left one, would give a child per test's."""
    program = Program(source=(
        "import gc, sys, threading, time\ns = input()\n"
        "if s == 'c':\n    print('NO')\n"
        "if s == 'a':\n    print('YES')\n"
        "    def later():\n        time.sleep(0.05)\n        print('YES')\n"
        "    class X:\n        def __del__(self):\n            threading.Thread(target=later).start()\n"
        "    gc.disable()\n    x = X()\n    x.me = x\n    del x\n"
        "    while True:\n        pass\n"))
    tests = [Test(id="t0", input="c\n", output="NO\n"), Test(id="t1", input="a\n", output="YES\n"),
             Test(id="t2", input="b\n", output="YES\n")]
    limits = Limits(time_limit=0.3, memory_limit_mb=256)
    alone = await run(program, tests, limits, resident=False)
    assert [r.verdict for r in alone] == [Verdict.AC, Verdict.TLE, Verdict.WA], cpu(alone)
    resident = await run(program, tests, limits)
    full = await run(program, tests, limits, loop_factor=0)
    assert within_the_promise(resident, alone, full), (cpu(resident), cpu(alone), cpu(full))


@pytest.mark.parametrize("resident", [False, True])
async def test_a_thread_started_by_a_thread_during_the_join_is_waited_for(resident: bool) -> None:
    """FINDING (_program_exit's join; both ways alike): python's ``threading._shutdown`` joins
    in a loop until no thread is left that is not a daemon, so a thread started while it waits
    (by a thread it is joining) is waited for too (``echo 5 | python3.11 prog.py``: ``10``, rc
    0). The harness joins the threads of one ``threading.enumerate()``, taken when the module
    ends: a thread that ``main``'s thread starts 50 ms later (it sleeps 0.2 s, then prints) is
    not among them, the program's end writes its report while that thread still sleeps, and
    its answer is lost: WA in every test, resident and alone (2 of 2 each, empty stdout; seen
    three times, first with 10 ms and 50 ms sleeps), where python gives AC.
    Enumerating again after each join until no such thread is left would give python's
    verdict."""
    program = Program(source="import threading, time\n"
                      "def solve():\n    time.sleep(0.2)\n    print(int(x) * 2)\n"
                      "def main():\n    time.sleep(0.05)\n    threading.Thread(target=solve).start()\n"
                      "x = input()\nthreading.Thread(target=main).start()\n")
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{2 * i}\n") for i in range(1, 3)]
    results = await run(program, tests, LIMITS, resident=resident)
    assert [r.verdict for r in results] == [Verdict.AC] * 2, cpu(results)


@pytest.mark.parametrize("resident", [False, True])
async def test_held_files_are_flushed_in_the_namespaces_order_as_under_python(resident: bool) -> None:
    """FINDING (096f047, _held_files; both ways alike): python's teardown clears ``__main__``'s
    dict in its order, so of two files on fd 1 the first defined is flushed first
    (``a = open(1, 'w', closefd=False); b = open(1, 'w', closefd=False)``, ``a`` written ``x``,
    ``b`` ``2x``: ``echo 5 | python3.11 prog.py`` prints ``5`` then ``10``). The walk is a stack
    (pushed in the namespace's order, popped from its end): ``b`` is flushed first, ``2`` before
    ``1`` for input 1: WA, resident and alone (seen twice), where python gives AC. Walking in the
    namespace's order (push reversed) would give python's. (With the default ``closefd=True``
    python's first flush also closes fd 1 and the second file's output is lost: ``5`` only; the
    harness closes nothing and prints ``2\\n1\\n``.)"""
    program = Program(source="x = int(input())\na = open(1, 'w', closefd=False)\n"
                      "b = open(1, 'w', closefd=False)\na.write(f'{x}\\n')\nb.write(f'{2 * x}\\n')\n")
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{i}\n{2 * i}\n") for i in range(1, 3)]
    results = await run(program, tests, LIMITS, resident=resident)
    assert [r.verdict for r in results] == [Verdict.AC] * 2, [(r.verdict.value, r.stdout) for r in results]


PICKLE = ("import pickle\nclass P:\n    def __init__(self, v):\n        self.v = v\n"
          "x = int(input())\nprint(pickle.loads(pickle.dumps(P(x))).v * 2)\n")
DUNDER_FILE = "print(int(input()) * 2 if __file__ else 0)\n"


@pytest.mark.parametrize("source", [PICKLE, DUNDER_FILE], ids=["pickle", "dunder_file"])
@pytest.mark.parametrize("resident", [False, True])
async def test_a_stdin_program_runs_as_pythons_main_module(resident: bool, source: str) -> None:
    """FINDING (execute; both ways alike, not the resident child's): the definition runs a
    stdin program's module "as ``__main__``", but its namespace is a bare dict named so:
    ``sys.modules['__main__']`` is the worker's own module, and ``__file__`` is not set. A
    program that pickles an instance of its own class (``pickle.loads(pickle.dumps(P(x)))``,
    a deep-copy idiom) fails: ``PicklingError: Can't pickle <class '__main__.P'>: attribute
    lookup P on __main__ failed``, RE in every test, resident and alone (seen twice); one that
    reads ``__file__`` raises NameError: RE; python gives AC for both (``echo 5 | python3.11
    prog.py``: ``10``). (``import __main__`` also hands the program the harness's module.) Making
    the namespace a ``types.ModuleType('__main__')``'s dict, with ``__file__`` the program's
    file name, in ``sys.modules['__main__']`` for the test (the restore puts the worker's back
    and holds the test's) would give python's verdict."""
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{2 * i}\n") for i in range(1, 3)]
    results = await run(Program(source=source), tests, LIMITS, resident=resident)
    assert [r.verdict for r in results] == [Verdict.AC] * 2, [(r.verdict.value, r.stderr) for r in results]


async def test_the_restore_runs_no_code_of_the_programs_into_the_next_tests_streams() -> None:
    """FINDING (096f047, Interpreter.restore): the restore puts ``sys.path`` back by slice
    assignment into whatever object ``sys.path`` is (``sys.path[:] = self.path``, and the same
    for ``sys.argv``), after it has made the next test's fresh streams. A test that sets
    ``sys.path`` to a ``list`` subclass has its ``__setitem__`` run by the harness at every
    later restore, printing into the next test's ``sys.stdout``. The program does so for input
    ``a`` only (printing ``YES`` once); ``b`` prints nothing, ``c`` prints ``NO``: alone [AC, AC,
    WA], resident [AC, AC, AC] (the third at 0.2 ms), full [AC, AC, AC]; seen twice. Rebinding
    (``sys.path = list(self.path)``, ``sys.argv = list(self.argv)``, the test's objects held)
    and comparing only exact lists would run none of its code."""
    program = Program(source=(
        "import sys\ns = input()\nif s == 'c':\n    print('NO')\n"
        "if s == 'a':\n    print('YES')\n"
        "    class L(list):\n        def __setitem__(self, key, value, done=[]):\n"
        "            if not done:\n                done.append(1)\n                print('YES')\n"
        "            list.__setitem__(self, key, value)\n"
        "    sys.path = L(sys.path)\n"))
    tests = [Test(id="t0", input="c\n", output="NO\n"), Test(id="t1", input="a\n", output="YES\n"),
             Test(id="t2", input="b\n", output="YES\n")]
    alone = await run(program, tests, LIMITS, resident=False)
    assert [r.verdict for r in alone] == [Verdict.AC, Verdict.AC, Verdict.WA], cpu(alone)
    resident = await run(program, tests, LIMITS)
    full = await run(program, tests, LIMITS, loop_factor=0)
    assert within_the_promise(resident, alone, full), (cpu(resident), cpu(alone), cpu(full))
