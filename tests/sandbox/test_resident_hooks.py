"""The restore's one mechanism for every hook through which the interpreter calls code a test left
(pairbench_async/sandbox/worker.py, ``Interpreter``), beyond attack 7's findings
(``test_attacks_interrupt7.py``): each program here leaves such a hook for input ``a`` only, one
that prints ``YES`` once on a ``sys.stdout`` other than its own, and for input ``b`` does what would
call it, printing nothing itself. A child per test gives [AC, WA]; a resident child must give the
same (docs/PROTOCOL.md, "One child for a program's tests"): the restore puts the start's hook back
and holds the test's."""

from __future__ import annotations

import pytest

from pairbench_async.core.types import Limits, Program, Test, Verdict
from tests.resident import cpu, run, within_the_promise

LIMITS = Limits(time_limit=1.0, memory_limit_mb=256)

#: a hook that answers a later test: prints YES once, on a stdout that is not test a's
HOOK = ("import sys\ns = input()\nif s == 'a':\n    print('YES')\n    mine = sys.stdout\n"
        "    def answer(*args, done=[], **kwargs):\n"
        "        if sys.stdout is not mine and not done:\n"
        "            done.append(1)\n            print('YES')\n")

CASES = {
    # the restore's own calls are the start's, not what a test bound in a module
    "os_chdir_rebound": ("    import os\n    chdir = os.chdir\n"
                         "    os.chdir = lambda path: (answer(), chdir(path))\n", ""),
    "meta_path_finder": ("    class Finder:\n        def find_spec(self, *args):\n            answer()\n"
                         "    sys.meta_path.insert(0, Finder())\n", "else:\n    import queue\n"),
    "path_hooks": ("    def hook(path):\n        answer()\n        raise ImportError\n"
                   "    sys.path_hooks.insert(0, hook)\n    sys.path_importer_cache.clear()\n",
                   "else:\n    import queue\n"),
    "unraisablehook": ("    sys.unraisablehook = answer\n",
                       "else:\n    class D:\n        def __del__(self):\n            raise ValueError\n"
                       "    D()\n"),
    "asyncgen_hooks": ("    sys.set_asyncgen_hooks(firstiter=answer)\n",
                       "else:\n    async def g():\n        yield 1\n"
                       "    try:\n        g().__anext__().send(None)\n    except StopIteration:\n        pass\n"),
    "threading_excepthook": ("    import threading\n    threading.excepthook = answer\n",
                             "else:\n    import threading\n    t = threading.Thread(target=lambda: 1 / 0)\n"
                             "    t.start()\n    t.join()\n"),
    "threading_settrace": ("    import threading\n    threading.settrace(lambda *a: answer())\n",
                           "else:\n    import threading\n    t = threading.Thread(target=len, args=('',))\n"
                           "    t.start()\n    t.join()\n"),
    # a stdin program's end (threading._shutdown's work) calls none of threading's functions
    "threading_main_thread_rebound": ("    import threading\n    main = threading.main_thread\n"
                                      "    threading.main_thread = lambda: (answer(), main())[1]\n"
                                      "    threading.current_thread = threading.main_thread\n",
                                      "else:\n    import threading\n"),
    "os_environ": ("    import os\n    os.environ['ANSWER'] = 'YES'\n",
                   "else:\n    import os\n    if os.environ.get('ANSWER'):\n        print(os.environ['ANSWER'])\n"),
    "gc_debug_saveall": ("    import gc\n    gc.set_debug(gc.DEBUG_SAVEALL)\n",
                         "else:\n    import gc\n    x = []\n    x.append(x)\n    del x\n    gc.collect()\n"
                         "    if gc.garbage:\n        print('YES')\n"),
    "umask": ("    import os\n    os.umask(0o777)\n",
              "else:\n    import os\n    open('f', 'w').close()\n"
              "    if os.stat('f').st_mode & 0o777 == 0:\n        print('YES')\n"),
}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_a_hook_an_earlier_test_left_does_not_answer_a_later_test(case: str) -> None:
    leave, trigger = CASES[case]
    program = Program(source=HOOK + leave + trigger)
    tests = [Test(id="t1", input="a\n", output="YES\n"), Test(id="t2", input="b\n", output="YES\n")]
    alone = await run(program, tests, LIMITS, resident=False)
    assert [r.verdict for r in alone] == [Verdict.AC, Verdict.WA], [(r.verdict.value, r.stderr) for r in alone]
    resident = await run(program, tests, LIMITS)
    full = await run(program, tests, LIMITS, loop_factor=0)
    assert within_the_promise(resident, alone, full), (cpu(resident), cpu(alone), cpu(full))


#: a call program that, for its first test, rebinds a function of a module the harness uses to write
#: every later report: returns "YES" for "a", nothing for "b"
REPORT_WRITER = {
    "json_dumps": ("        import json\n        dumps = json.dumps\n"
                   "        def forge(report, *a, **k):\n"
                   "            if 'value' in report:\n                report = {**report, 'value': 'YES'}\n"
                   "            return dumps(report, *a, **k)\n"
                   "        json.dumps = forge\n"),
    "os_write": ("        import os\n        write = os.write\n"
                 "        def forge(fd, data):\n"
                 "            if fd == 3 and bytes(data[:1]) == b'{':\n"
                 "                write(fd, b'{\"value\": \"YES\"}')\n"
                 "                return len(data)\n"
                 "            return write(fd, data)\n"
                 "        os.write = forge\n"),
}


@pytest.mark.parametrize("case", sorted(REPORT_WRITER))
async def test_a_function_an_earlier_test_rebound_does_not_write_a_later_tests_report(case: str) -> None:
    """A resident child's harness writes each report with functions taken at the worker's start (the
    C JSON encoder, os's): a test that rebound ``json.dumps`` or ``os.write`` forged every later test's
    returned value (resident AC where a child per test gives WA)."""
    source = "def f(s):\n    if s == 'a':\n" + REPORT_WRITER[case] + "        return 'YES'\n    return None\n"
    program = Program(source=source, kind="call", entry_point="f")
    tests = [Test(id="t1", args=["a"], expected="YES"), Test(id="t2", args=["b"], expected="YES")]
    alone = await run(program, tests, LIMITS, resident=False)
    assert [r.verdict for r in alone] == [Verdict.AC, Verdict.WA], [(r.verdict.value, r.stderr) for r in alone]
    resident = await run(program, tests, LIMITS)
    full = await run(program, tests, LIMITS, loop_factor=0)
    assert within_the_promise(resident, alone, full), (cpu(resident), cpu(alone), cpu(full))
