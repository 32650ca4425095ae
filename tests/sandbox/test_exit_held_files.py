"""A stdin program's end flushes the files it holds in containers, closures and partials, as python's own exit
does (its teardown frees the namespace, and a freed file flushes), both ways (a child per test and resident).

Stop 33 left these unflushed: the harness's walk (``worker._held_files``) entered instances and bound methods but no
list, dict, closure or ``functools.partial``, so a program that wrote its answer through one of them printed
nothing: WA, where ``python3 prog.py`` prints the answer. Each expected verdict is checked against python itself."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pairbench_async.core.types import Program, Test, Verdict
from tests.resident import LIMITS, run

ANSWER = 'str(int(input()) * 2) + "\\n"'
PROGRAMS = {
    "list": f'outs = [open(1, "w")]\nouts[0].write({ANSWER})\n',
    "dict": f'files = {{"out": open(1, "w")}}\nfiles["out"].write({ANSWER})\n',
    "closure": ('def make():\n    f = open(1, "w")\n    def w(s):\n        f.write(s)\n    return w\n'
                f"w = make()\nw({ANSWER})\n"),
    "partial": f'import functools\nw = functools.partial(open(1, "w").write)\nw({ANSWER})\n',
    "default": f'def w(s, f=open(1, "w")):\n    f.write(s)\nw({ANSWER})\n',
    "tuple_in_list": f'outs = [(0, open(1, "w"))]\nouts[0][1].write({ANSWER})\n',
}


def python_prints(source: str, stdin: str) -> str:
    """What python itself prints for ``source`` on ``stdin`` (stdout a pipe, as the sandbox's)."""
    return subprocess.run([sys.executable, "-c", source], input=stdin, capture_output=True, text=True,
                          timeout=30).stdout


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("resident", [False, True])
async def test_a_file_held_in_a_container_closure_or_partial_is_flushed_at_the_end(resident: bool,
                                                                                     name: str) -> None:
    source = PROGRAMS[name]
    assert python_prints(source, "3\n") == "6\n"  # python's own exit flushes it
    tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{2 * i}\n") for i in range(1, 4)]
    results = await run(Program(source=source), tests, LIMITS, resident=resident)
    assert [r.verdict for r in results] == [Verdict.AC] * 3, [(r.verdict.value, r.stdout, r.stderr)
                                                              for r in results]


async def test_a_wide_container_costs_the_walk_its_bound_not_its_size() -> None:
    """A namespace holding a list of two million values: the walk queues at most its bound (10,000 objects), so
    the end costs about what the same list held where the walk does not go (a module's attribute) costs."""
    build = "big = list(range(2_000_000))\n"
    wide = f"{build}print({ANSWER[:-7]})\n"
    hidden = f"import sys\nsys.{build}print({ANSWER[:-7]})\n"
    tests = [Test(id="t", input="3\n", output="6\n")]
    cpu = {}
    for name, source in (("wide", wide), ("hidden", hidden)) * 2:
        results = await run(Program(source=source), tests, LIMITS, resident=False)
        assert [r.verdict for r in results] == [Verdict.AC], results
        cpu[name] = min(cpu.get(name, 1e9), results[0].cpu_ms)
    assert cpu["wide"] - cpu["hidden"] < 40, cpu
