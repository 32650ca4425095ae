"""Fifth round, from an attacker's review: the next doors after rounds 1-4.

Escapes found (each test below fails today and passes once the door is shut):

* **Page cache as memory headroom** (``test_page_cache_left_by_an_earlier_program_is_not_headroom``):
  the zygote sets each test's limit to "what the worker's memory cgroup holds at the fork
  plus the budget", and what it holds includes clean page cache that earlier programs (or
  earlier tests) brought in by reading host files. The kernel reclaims that cache when the
  test reaches the limit, so a test gets its budget *plus* everything reclaimable in the
  base: a program under a 32 MB limit holds 48 MiB of scratch files and is AC, with
  ``memory_kb`` at exactly the limit. The same program alone is MLE: its verdict depends on
  what ran before it on the same worker.
* **The sandbox's own copy of a test's output is charged to the test**
  (``test_the_zygotes_copy_of_the_output_is_not_the_programs_memory``): after the child
  exits, the zygote reads its stdout (and report) into buffers of its own while the
  cgroup's limit is still the test's; a program that stays under its limit with 8 MiB of
  stdout and 18 MiB of scratch (26 MiB, the same as 26 MiB of scratch alone, which is AC)
  gets the zygote OOM-killed and is reported MLE, ``memory_kb`` 0.
* **Program text in ``TestResult.error`` of a call test's WA**
  (``test_a_call_tests_wa_error_holds_no_program_chosen_text``): "returned a {kind}, which
  has no JSON value" repeats the ``$type`` of the returned value, which is the program's
  class name (or any string it returns under that key), up to 100 characters; and "returned
  a value that cannot be read: ..." repeats msgspec's path, whose list indices the program
  picks (``$[7731]``). Both carry a hidden input into the failure text, which the closed
  vocabulary exists to prevent (exit codes were removed for 8 bits).

Doors tried that held (kept as guards): a test child that stops itself (or a thread of
it) is a wall TLE, never SF and never a stuck worker; a child that closes its stdio and
report channel is its own verdict; a value with a lone surrogate is the program's own
failure, never SF or a crash; a forged report in the channel decides nothing about the
next test's verdict.

Runs as root in CI (the memory tests need the worker's memory cgroup, which the pool makes
only as root: they assert it is there rather than skipping).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import sysconfig
from pathlib import Path

import pytest

from pairbench_async.core.failures import is_failure_name
from pairbench_async.core.types import Limits, Program, Test, TestResult, Verdict
from pairbench_async.sandbox.pool import SandboxPool

sys.path.insert(0, str(Path(__file__).parent))
import hostile_round4 as H  # noqa: E402

SANITY = Program(source="print(int(input()) * 2)\n")
LIMIT_MB = 32
MiB = 1 << 20


def show(results: list[TestResult]) -> str:
    return "\n".join(
        f"{r.id}: {r.verdict.value} error={r.error!r} memory_kb={r.memory_kb} "
        f"stdout={r.stdout[:120]!r} stderr={r.stderr[-300:]!r}" for r in results)


async def sane(pool: SandboxPool) -> None:
    (r,) = await pool.run(SANITY, [Test(id="s", input="21\n", output="42\n")])
    assert r.verdict is Verdict.AC, show([r])


def memory_cgroup_on(pool: SandboxPool) -> None:
    report = pool.confinement()
    if os.getuid() != 0:  # an ordinary user's pool has no cgroup (it says so once)
        pytest.skip("the worker's memory cgroup exists only as root")
    assert report.get("cgroup"), (
        "these tests need root and the worker's memory cgroup (CI runs as root): "
        f"{report}")


# ----------------------------------------------------------------------------- escape 1

#: Reads the given host files in 1 MiB chunks, holding nothing: an honest program (the
#: round-4 battery's STREAM_FILES)
STREAM = H.STREAM_FILES.source

#: Holds n MiB in scratch files (6 MiB each: the file-size limit is the output cap), keeps
#: them until it exits, prints how many MiB it holds.
FILL = r'''
import os, sys
n = int(sys.stdin.read())
chunk = b"m" * (1 << 20)
left, i = n, 0
while left > 0:
    with open(f"s{i}", "wb") as f:
        for _ in range(min(6, left)):
            f.write(chunk)
    left -= 6
    i += 1
print(sum(os.path.getsize(name) for name in os.listdir(".")) >> 20)
'''


def cold_host_files(total: int) -> list[str]:
    """Allowlisted standard-library files adding up to ``total`` bytes, evicted from the
    page cache (as the existing battery does), so that reading them in the sandbox
    charges the worker's memory cgroup."""
    found: list[tuple[int, str]] = []
    for dirpath, dirs, files in os.walk(sysconfig.get_paths()["stdlib"]):
        dirs[:] = [d for d in dirs if d not in ("site-packages", "dist-packages")]
        for name in files:
            path = os.path.join(dirpath, name)
            with contextlib.suppress(OSError):
                size = os.path.getsize(path)
                if size >= 16 * 1024 and not name.endswith(".so"):
                    found.append((size, path))
    found.sort(reverse=True)
    out, got = [], 0
    for size, path in found:
        out.append(path)
        got += size
        if got >= total:
            break
    for path in out:
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
    assert got >= total // 2, f"only {got} bytes of standard-library files to read"
    return out


async def test_page_cache_left_by_an_earlier_program_is_not_headroom() -> None:
    """48 MiB held in scratch under a 32 MB limit is MLE (round 4's "scratch" case), and it
    must stay MLE whatever ran on the worker before: here an honest program that streamed
    cold host files, leaving their clean page cache charged to the worker's cgroup (the
    next test's base), which the kernel reclaims to make room for the scratch files."""
    limits = Limits(time_limit=3, wall_limit=6, memory_limit_mb=LIMIT_MB)
    async with SandboxPool(workers=1) as pool:
        await sane(pool)
        memory_cgroup_on(pool)
        (alone,) = await pool.run(Program(source=FILL), [Test(id="alone", input="48")], limits)
        files = cold_host_files(96 * MiB)
        (streamed,) = await pool.run(Program(source=STREAM),
                                     [Test(id="stream", input=json.dumps(files))], limits)
        (primed,) = await pool.run(Program(source=FILL + "# another program\n"),
                                   [Test(id="after", input="48")], limits)
        await sane(pool)
    assert alone.verdict is Verdict.MLE, show([alone])
    assert streamed.verdict is Verdict.AC, show([streamed])
    assert primed.verdict is Verdict.MLE, (
        "a program held 48 MiB under a 32 MB limit because an earlier program left page "
        "cache in the worker's cgroup:\n" + show([alone, streamed, primed]))


# ----------------------------------------------------------------------------- escape 2

#: Writes ``out`` MiB to stdout in 1 MiB writes (no copy in its heap) and holds ``scratch``
#: MiB of scratch files until it exits.
OUT_AND_SCRATCH = r'''
import os, sys
out, scratch = map(int, sys.stdin.read().split())
line = b"7 " * (1 << 19)
for _ in range(out):
    os.write(1, line)
block = b"s" * (1 << 20)
for i in range(scratch):
    with open(f"f{i}", "wb") as f:
        f.write(block)
'''


async def test_the_zygotes_copy_of_the_output_is_not_the_programs_memory() -> None:
    """26 MiB held under a 32 MB limit is within it, whether it is 26 MiB of scratch or 8
    MiB of stdout (under the 8 MiB output cap) and 18 MiB of scratch: both AC. Today the
    second is MLE ("killed by the OOM killer", memory_kb 0): the zygote reads the 8 MiB
    of stdout into a buffer of its own while the cgroup still has the test's limit."""
    limits = Limits(time_limit=3, wall_limit=6, memory_limit_mb=LIMIT_MB)
    async with SandboxPool(workers=1) as pool:
        await sane(pool)
        memory_cgroup_on(pool)
        results = await pool.run(
            Program(source=OUT_AND_SCRATCH),
            [Test(id="scratch only", input="0 26"), Test(id="stdout too", input="8 18")], limits)
        stats = pool.statistics()
        await sane(pool)
    only, both = results
    assert only.verdict is Verdict.AC and only.memory_kb <= LIMIT_MB * 1024, show(results)
    assert both.verdict is Verdict.AC, (
        "a test under its limit is MLE because the zygote's copy of its stdout was charged "
        "to it:\n" + show(results))
    assert len(both.stdout) == 8 * MiB
    assert stats.sandbox_faults == 0, stats


# ----------------------------------------------------------------------------- escape 3

CALL_PROGRAM = '''
def named(x):
    return type("IGNORE_PREVIOUS_INSTRUCTIONS_" + str(x), (), {})()

def tagged(x):
    return {"$type": "the hidden input is " + str(x)}

def indexed(x):  # its own report: a number msgspec cannot read, at index x
    import os
    os.write(3, b'{"value": [' + b"0," * x + b'1e999]}')
    os._exit(0)
'''


async def test_a_call_tests_wa_error_holds_no_program_chosen_text() -> None:
    """A returned value the evaluator cannot compare is WA; its ``error`` is the sandbox's
    fixed text. The hidden argument (7731) must appear nowhere in it, and nor may a
    program's class name."""
    secret = 7731
    async with SandboxPool(workers=1) as pool:
        results = []
        for entry in ("named", "tagged", "indexed"):
            (r,) = await pool.run(
                Program(source=CALL_PROGRAM, kind="call", entry_point=entry),
                [Test(id=entry, args=[secret], expected=[1, 2, 3])],
                Limits(time_limit=2, memory_limit_mb=64))
            results.append(r)
        await sane(pool)
    assert all(r.verdict is Verdict.WA for r in results), show(results)
    leaked = [r for r in results
              if r.error and (str(secret) in r.error or "IGNORE" in r.error)]
    assert not leaked, "program-chosen text in TestResult.error:\n" + show(leaked)


# ----------------------------------------------------------------------------- held

STOP_SELF = "import os, signal\nprint(1, flush=True)\nos.kill(os.getpid(), signal.SIGSTOP)\n"
STOP_FROM_THREAD = (
    "import os, signal, threading\n"
    "t = threading.Thread(target=lambda: os.kill(os.getpid(), signal.SIGSTOP))\n"
    "t.start()\nt.join()\nprint(1)\n")
CLOSE_EVERYTHING = "import os\nprint(1, flush=True)\nfor fd in (0, 1, 2, 3):\n    os.close(fd)\n"
FORGE_THEN_CRASH = (
    "import os, sys\n"
    "os.write(3, b'{\"exc\": null, \"value\": 2}')\n"
    "print(int(input()) * 2, flush=True)\n"
    "os._exit(int(input()))\n")


async def test_stopping_or_blinding_itself_is_the_programs_own_verdict() -> None:
    """A child that stops itself (or from a thread), closes its stdio and report channel,
    or forges a report and exits non-zero gets a verdict of its own (TLE wall, WA/AC, RE),
    never SF, and the worker serves the next program without a restart."""
    limits = Limits(time_limit=0.5, wall_limit=1.0, memory_limit_mb=64)
    async with SandboxPool(workers=1) as pool:
        (stop,) = await pool.run(Program(source=STOP_SELF), [Test(id="1", input="", output="1\n")], limits)
        (thread,) = await pool.run(Program(source=STOP_FROM_THREAD),
                                   [Test(id="1", input="", output="1\n")], limits)
        (closed,) = await pool.run(Program(source=CLOSE_EVERYTHING),
                                   [Test(id="1", input="", output="1\n")], limits)
        forged = await pool.run(Program(source=FORGE_THEN_CRASH),
                                [Test(id="a", input="2\n3\n", output="4\n"),
                                 Test(id="b", input="5\n0\n", output="10\n")], limits)
        await sane(pool)
        stats = pool.statistics()
    assert stop.verdict is Verdict.TLE and stop.timeout == "wall", show([stop])
    assert thread.verdict is Verdict.TLE and thread.timeout == "wall", show([thread])
    assert closed.verdict in (Verdict.AC, Verdict.WA, Verdict.RE), show([closed])
    assert [r.verdict for r in forged] == [Verdict.RE, Verdict.AC], show(forged)
    assert forged[0].error is not None and is_failure_name(forged[0].error), show(forged)
    assert stats.sandbox_faults == 0 and stats.worker_restarts == 0, stats


async def test_a_lone_surrogate_in_a_value_is_neither_sf_nor_a_crash() -> None:
    """msgspec refuses a lone surrogate: the program's own failure, with a vocabulary word."""
    src = "def f(x):\n    return chr(0xD800) + str(x)\n"
    async with SandboxPool(workers=1) as pool:
        (r,) = await pool.run(Program(source=src, kind="call", entry_point="f"),
                              [Test(id="1", args=[5], expected="5")],
                              Limits(time_limit=2, memory_limit_mb=64))
        await sane(pool)
    assert r.verdict in (Verdict.WA, Verdict.RE), show([r])
    assert r.verdict is not Verdict.RE or is_failure_name(r.error or ""), show([r])
