"""Third round, from an attacker's review: channels between tests through the metadata
of shared memory files, memory kept in stdin, other processes' scheduling, pools that
shared uids, a compile that ran out of CPU charged to the sandbox, scratch directories
left by killed evaluators."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pairbench_async.core.types import Limits, Program, Test, Verdict
from pairbench_async.sandbox import host as host_module
from pairbench_async.sandbox.config import SandboxConfig
from pairbench_async.sandbox.pool import SandboxPool

IS_ROOT = os.getuid() == 0
SANITY = Program(source="print(int(input()) * 2)\n")


async def sane(pool: SandboxPool) -> None:
    (r,) = await pool.run(SANITY, [Test(id="s", input="21\n", output="42\n")])
    assert r.verdict is Verdict.AC, r


# Test k encodes its input into whatever outlives it on its descriptors (times, status
# flags, size, locks); test k+1 prints what it finds there. Every test must find the
# same fresh state, whatever the previous one did.
LEAK = r"""
import fcntl, os, sys
found = []
for fd in (0, 1, 2, 3):
    st = os.fstat(fd)
    found.append((st.st_atime_ns, st.st_mtime_ns % 10**9 if fd == 0 else 0,
                  fcntl.fcntl(fd, fcntl.F_GETFL) & ~0o2, st.st_size if fd else 0))
data = sys.stdin.read().strip()
secret = int.from_bytes(data.encode()[:7].ljust(7, b"\0"), "big")
print("clean" if not any(v and v.to_bytes(8, "big").lstrip(b"\0").startswith(b"SEC")
                        for v in [a for a, *_ in found] + [m for _, m, *_ in found]) else "LEAK",
      sorted(set(f for *_, f, _ in found)), [s for *_, s in found], flush=True)
for fd in (0, 1, 2, 3):
    calls = [lambda: os.utime(fd, ns=(secret, secret)),
             lambda: fcntl.fcntl(fd, fcntl.F_SETFL, os.O_APPEND | os.O_NONBLOCK | os.O_NOATIME),
             lambda: fcntl.flock(fd, fcntl.LOCK_EX)]
    if fd in (0, 2):  # content beyond what the evaluator reads
        calls += [lambda: os.posix_fallocate(fd, 0, 1 << 20),
                  lambda: os.pwrite(fd, data.encode() * 1000, 1 << 20)]
    for call in calls:
        try:
            call()
        except OSError:
            pass
"""


async def test_nothing_crosses_tests_through_descriptor_metadata() -> None:
    tests = [Test(id=str(i), input=f"SEC{i:04d}\n", output="x\n") for i in range(6)]
    async with SandboxPool(workers=1) as pool:
        first = await pool.run(Program(source=LEAK), tests)
        # the same program again (same zygote): the hidden inputs of the first job
        again = await pool.run(Program(source=LEAK), tests[:2])
        await sane(pool)
    outputs = [r.stdout for r in first + again]
    assert all(o.startswith("clean") for o in outputs), outputs
    # every test saw the same state: fresh files, nothing of the previous test
    assert len({o.split(" ", 1)[1] for o in outputs}) == 1, outputs


async def test_stdin_is_sealed_in_a_child_of_its_own() -> None:
    """A child per test (SandboxConfig(resident=False)): its stdin is sealed. A resident
    child's inbox cannot be (it is rewritten for each test): tests/sandbox/test_resident.py
    shows what holds there instead."""
    src = (
        "import os\nout = []\n"
        "for call in (lambda: os.write(0, b'x' * 4096), lambda: os.pwrite(0, b'x' * (8 << 20), 0),\n"
        "             lambda: os.truncate(0, 1 << 24), lambda: os.ftruncate(0, 0)):\n"
        "    try:\n        call()\n        out.append('ok')\n"
        "    except OSError as e:\n        out.append(e.errno)\n"
        "print(out, input())\n"
    )
    async with SandboxPool(SandboxConfig(workers=1, resident=False)) as pool:
        (r,) = await pool.run(Program(source=src), [Test(id="1", input="kept\n", output="x\n")])
        await sane(pool)
    assert "ok" not in r.stdout and r.stdout.rstrip().endswith("kept"), r


SCHEDULING = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
NR = {"x86_64": {"ioprio_set": 251, "sched_setattr": 314}, "aarch64": {"ioprio_set": 30, "sched_setattr": 274}}[os.uname().machine]
out = []
def attempt(name, fn):
    try:
        fn()
        out.append(name)
    except OSError:
        pass
for who in (0, os.getppid(), 1):
    attempt(f"prio{who}", lambda: os.setpriority(os.PRIO_PROCESS, who, 19))
    attempt(f"affinity{who}", lambda: os.sched_setaffinity(who, {0}))
    attempt(f"sched{who}", lambda: os.sched_setscheduler(who, os.SCHED_IDLE, os.sched_param(0)))
    attempt(f"param{who}", lambda: os.sched_setparam(who, os.sched_param(0)))
attempt("prio_user", lambda: os.setpriority(os.PRIO_USER, os.getuid(), 19))
attempt("prio_pgrp", lambda: os.setpriority(os.PRIO_PGRP, 0, 19))
for who, which in ((0, 1), (os.getppid(), 1), (os.getuid(), 3)):
    if libc.syscall(NR["ioprio_set"], which, who, (3 << 13)) == 0:
        out.append(f"ioprio{which}:{who}")
attr = (ctypes.c_uint32 * 14)(56, 5)  # SCHED_IDLE
if libc.syscall(NR["sched_setattr"], os.getppid(), attr, 0) == 0:
    out.append("setattr")
print("changed:", out)
"""


async def test_no_process_can_be_reprioritised() -> None:
    async with SandboxPool(workers=1) as pool:
        (r,) = await pool.run(Program(source=SCHEDULING), [Test(id="1", input="\n", output="x\n")])
        await sane(pool)
    assert r.stdout == "changed: []\n", r


@pytest.mark.skipif(not IS_ROOT, reason="sandbox uids are assigned only when started as root")
async def test_two_pools_never_share_a_uid() -> None:
    async with SandboxPool(workers=2) as a, SandboxPool(workers=2) as b:
        ranges = [range(p._uid_base, p._uid_base + p.workers) for p in (a, b)]
        assert not set(ranges[0]) & set(ranges[1])
        assert all(r.start >= host_module.UID_FLOOR for r in ranges)
        src = "import os\nprint(os.getuid())\n"
        (ua,) = await a.run(Program(source=src), [Test(id="1", input="", output="x\n")])
        (ub,) = await b.run(Program(source=src), [Test(id="1", input="", output="x\n")])
        assert int(ua.stdout) in ranges[0] and int(ub.stdout) in ranges[1]
        # the slot is held: nobody else can claim it while the pool lives
        lock = a._uid_lock_path
        assert os.path.exists(lock)
    assert not os.path.exists(lock)


async def test_a_compile_that_runs_out_of_cpu_is_the_programs_tle() -> None:
    # Python 3.11 parses this f-string in quadratic time (~20 s of CPU); under the
    # source-size cap, and under the job's memory limit
    bomb = Program(source="x = f'" + "{a}{{" * 200_000 + "'\n")
    async with SandboxPool(workers=1) as pool:
        results = await asyncio.wait_for(
            pool.run(bomb, [Test(id=str(i), input="", output="x\n") for i in range(3)],
                     Limits(memory_limit_mb=1024)), timeout=60)
        await sane(pool)
        stats = pool.statistics()
    assert [r.verdict for r in results] == [Verdict.TLE] * 3, results
    assert results[0].error == "CompileTimeLimit" and results[0].timeout == "cpu"
    assert stats.worker_restarts == 0 and stats.sandbox_faults == 0, stats


def test_scratch_of_a_killed_evaluator_is_swept(tmp_path: Path) -> None:
    # an evaluator SIGKILLed with an open pool leaves its (empty) scratch base behind
    script = tmp_path / "evaluator.py"
    script.write_text(
        "import asyncio, os, signal\nfrom pairbench_async import SandboxPool\n"
        "async def main():\n    async with SandboxPool(workers=1) as pool:\n"
        "        print(pool._base, flush=True)\n        os.kill(os.getpid(), signal.SIGKILL)\n"
        "asyncio.run(main())\n"
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    left = Path(proc.stdout.strip())
    assert left.is_dir() and left.parent == Path(tempfile.gettempdir())

    async def start_another() -> None:
        async with SandboxPool(workers=1) as pool:
            await sane(pool)

    asyncio.run(start_another())
    assert not left.exists()
