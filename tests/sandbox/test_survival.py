"""Class D of the second-round battery: nothing of a sandbox outlives its evaluator.

An evaluator process (a script started here) runs a pool and a program that
busy-loops, sleeps, or blocks SIGTERM, with 60-second limits. Once the test child
runs, the evaluator is SIGKILLed (no ``finally``, no ``aclose``); one second later no
worker, zygote or child may remain, and no zombie. The same for the ``exec``
command, and for a pool closed in-process while a job is still running.

Which processes are ours: as root a test child runs under ``uid_base + worker``
(each evaluator here gets its own base, so a concurrent run of the suite does not
count), and workers and zygotes carry the worker script and their pool's pid in
their command line; descendants of the evaluator seen while it ran count too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from pairbench_async.core.errors import SandboxError
from pairbench_async.core.types import Limits, Program, Test, Verdict
from pairbench_async.sandbox.pool import SandboxConfig, SandboxPool
from tests.waiting import running_test_child, soon, until

IS_ROOT = os.getuid() == 0

PROGRAMS = {
    "busy_loop": "while True:\n    pass\n",
    "sleep": "import time\ntime.sleep(120)\n",
    "block_sigterm": (
        "import signal, time\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})\n"
        "for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):\n"
        "    signal.signal(s, signal.SIG_IGN)\n"
        "while True:\n    time.sleep(0.01)\n"
    ),
    # killed while the zygote is still compiling it, or just after: under the pool's
    # 1 MiB source cap, and compiling it takes ~160 MB (so the job gets 512 MB)
    "slow_compile": "def f():\n" + "    x = 1\n" * 100_000 + "while True:\n    pass\n",
    "sleeping_threads": (
        "import threading, time\n"
        "threading.stack_size(1 << 18)\n"
        "for _ in range(8):\n    threading.Thread(target=time.sleep, args=(120,)).start()\n"
        "time.sleep(120)\n"
    ),
}

EVALUATOR = r"""
import asyncio, sys
from pairbench_async import Limits, Program, SandboxConfig, SandboxPool, Test

source, uid_base, memory = open(sys.argv[1]).read(), int(sys.argv[2]), int(sys.argv[3])

async def main():
    async with SandboxPool(SandboxConfig(workers=1, uid_base=uid_base)) as pool:
        job = asyncio.ensure_future(pool.run(Program(source=source), [Test(id="1", input="\n", output="x\n")],
                                             Limits(time_limit=60, wall_limit=60, memory_limit_mb=memory)))
        print("submitted", flush=True)
        await job

asyncio.run(main())
"""


def _stderr(proc: subprocess.Popen) -> str:
    return proc.stderr.read()[-2000:] if proc.poll() is not None else ""


def _uid_base() -> int:
    return 1_920_000_000 + 64 * secrets.randbelow(100_000)


def _ours(
    uid_base: int | None, pool_pids: set[int], extra: set[int], since: float
) -> list[psutil.Process]:
    owners = [f'"pool_pid": {pid}' for pid in pool_pids]
    out = []
    for p in psutil.process_iter(["uids", "cmdline", "create_time"]):
        with contextlib.suppress(psutil.Error):
            if p.pid in extra:
                out.append(p)
                continue
            if p.info["create_time"] < since - 2:
                continue
            uids, cmdline = p.info["uids"], p.info["cmdline"] or []
            if uid_base is not None and uids is not None and uid_base <= uids.real < uid_base + 64:
                out.append(p)
            elif any(o in arg for arg in cmdline for o in owners):
                out.append(p)
    return out


def _describe(procs: list[psutil.Process]) -> list[str]:
    out = []
    for p in procs:
        with contextlib.suppress(psutil.Error):
            out.append(
                f"pid {p.pid} ppid {p.ppid()} uid {p.uids().real} {p.status()} "
                f"{' '.join(p.cmdline())[:100]}"
            )
    return out


def _is_child(p: psutil.Process, root_pid: int, uid_base: int | None) -> bool:
    """A test child: as root, a process of the sandbox uid range; otherwise a process
    three levels below the pool (pool -> worker -> zygote -> child)."""
    if IS_ROOT and uid_base is not None:
        return uid_base <= p.uids().real < uid_base + 64
    chain = [p]
    while len(chain) < 4 and chain[-1].ppid() not in (0, root_pid):
        chain.append(psutil.Process(chain[-1].ppid()))
    return len(chain) == 3 and chain[-1].ppid() == root_pid


def _test_child(uid_base: int | None, root: psutil.Process, timeout: float = 20) -> psutil.Process:
    """Wait until a test child of ``root``'s pool runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in root.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if _is_child(p, root.pid, uid_base):
                    return p
        time.sleep(0.05)
    raise AssertionError(
        f"no test child started within {timeout} s: {_describe(root.children(recursive=True))}"
    )


def _settle(find, grace: float = 2.0) -> list[psutil.Process]:
    """What ``find`` returns, once zombies already handed to init (pid 1) have had
    ``grace`` seconds to be reaped: that reaping is init's, not the sandbox's."""
    deadline = time.monotonic() + grace
    while True:
        left = find()
        pending = []
        for p in left:
            with contextlib.suppress(psutil.Error):
                if not (p.status() == psutil.STATUS_ZOMBIE and p.ppid() == 1):
                    return left
                pending.append(p)
        if not pending or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def _end(procs: list[psutil.Process]) -> None:
    """End leftovers this test started (by pid)."""
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.kill()


def _kill_and_check(
    proc: subprocess.Popen, uid_base: int | None, since: float, child_uid_base: int | None = None
) -> None:
    root = psutil.Process(proc.pid)
    _test_child(uid_base if uid_base is not None else child_uid_base, root)
    seen = {p.pid for p in root.children(recursive=True)}
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    # the same bound as ever (1 s, then init's reaping), but done as soon as nothing is left
    soon(lambda: not _ours(uid_base, {proc.pid}, seen, since), within=1.0)
    left = _settle(lambda: _ours(uid_base, {proc.pid}, seen, since))
    described = _describe(left)
    zombies = [
        c.pid
        for c in psutil.Process().children(recursive=True)
        if c.status() == psutil.STATUS_ZOMBIE
    ]
    _end(left)
    assert not described, "sandbox processes outlived the evaluator:\n" + "\n".join(described)
    assert not zombies, f"zombies: {zombies}"


@pytest.mark.parametrize("program", list(PROGRAMS), ids=list(PROGRAMS))
def test_evaluator_sigkilled_mid_test(program: str, tmp_path: Path) -> None:
    script = tmp_path / "evaluator.py"
    script.write_text(EVALUATOR)
    source = tmp_path / "program.py"
    source.write_text(PROGRAMS[program])
    uid_base = _uid_base()
    since = time.time()
    proc = subprocess.Popen(
        [sys.executable, str(script), str(source), str(uid_base),
         "512" if program == "slow_compile" else "64"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.strip() == "submitted", f"evaluator failed: {line!r} {_stderr(proc)}"
        _kill_and_check(proc, uid_base, since)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_exec_command_sigkilled_mid_test(tmp_path: Path) -> None:
    prog = tmp_path / "sleeper.py"
    prog.write_text(PROGRAMS["sleep"])
    tests = tmp_path / "tests.jsonl"
    tests.write_text(json.dumps({"id": "1", "input": "\n", "output": "x\n"}) + "\n")
    since = time.time()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pairbench_async",
            "exec",
            str(prog),
            "--tests",
            str(tests),
            "--time-limit",
            "60",
            "--wall-limit",
            "60",
            "--workers",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # the exec command uses the default uid base (shared with any concurrent run):
        # its processes are found as descendants, and by the pool pid in their command line
        _kill_and_check(proc, None, since, child_uid_base=SandboxConfig().uid_base)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


async def _wait_for_child(uid_base: int, within: float = 20) -> None:
    deadline = time.monotonic() + within
    me = psutil.Process()
    while time.monotonic() < deadline:
        for p in me.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if _is_child(p, me.pid, uid_base):
                    return
        await asyncio.sleep(0.05)
    raise AssertionError("no test child started")


BUSY = Program(source=PROGRAMS["busy_loop"])
LONG = Limits(time_limit=60, wall_limit=60, memory_limit_mb=64)


async def test_pool_closed_in_process_with_cancelled_job() -> None:
    """``async with`` exits (the running job cancelled first): nothing remains at once."""
    uid_base = _uid_base()
    since = time.time()
    seen: set[int] = set()

    async def scenario() -> None:
        async with SandboxPool(SandboxConfig(workers=1, uid_base=uid_base)) as pool:
            job = asyncio.ensure_future(
                pool.run(BUSY, [Test(id="1", input="\n", output="x\n")], LONG)
            )
            await _wait_for_child(uid_base)
            seen.update(p.pid for p in psutil.Process().children(recursive=True))
            job.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await job

    t0 = time.monotonic()
    await asyncio.wait_for(scenario(), timeout=30)
    took = time.monotonic() - t0
    found = _settle(lambda: _ours(uid_base, {os.getpid()}, seen, since), grace=1.0)
    left = _describe(found)
    _end(found)
    assert not left, (
        f"sandbox processes remain after the pool closed ({took:.1f} s):\n" + "\n".join(left)
    )


async def test_pool_closed_in_process_with_two_busy_workers() -> None:
    """Two workers, both running a test, several jobs queued: closing ends them all."""
    uid_base = _uid_base()
    since = time.time()
    seen: set[int] = set()

    async def scenario() -> None:
        async with SandboxPool(SandboxConfig(workers=2, uid_base=uid_base)) as pool:
            jobs = [
                asyncio.ensure_future(
                    pool.run(
                        BUSY, [Test(id=str(i), input="\n", output="x\n") for i in range(4)], LONG
                    )
                )
                for _ in range(3)
            ]
            await until(lambda: running_test_child(pool, 0) and running_test_child(pool, 1),
                        what="both workers running a test")
            seen.update(p.pid for p in psutil.Process().children(recursive=True))
            for job in jobs:
                job.cancel()
            await asyncio.gather(*jobs, return_exceptions=True)

    await asyncio.wait_for(scenario(), timeout=30)
    found = _settle(lambda: _ours(uid_base, {os.getpid()}, seen, since), grace=1.0)
    left = _describe(found)
    _end(found)
    assert not left, "sandbox processes remain after the pool closed:\n" + "\n".join(left)


async def test_beyond_spec_run_pending_when_pool_closes() -> None:
    """Beyond the specification: a ``run`` still awaiting its results when the pool
    closes must end (SF results or SandboxError), not wait forever; and nothing remains."""
    uid_base = _uid_base()
    since = time.time()
    seen: set[int] = set()
    outcome: dict[str, object] = {}

    async def scenario() -> None:
        pool = SandboxPool(SandboxConfig(workers=1, uid_base=uid_base))
        async with pool:
            job = asyncio.ensure_future(
                pool.run(BUSY, [Test(id="1", input="\n", output="x\n")], LONG)
            )
            await _wait_for_child(uid_base)
            seen.update(p.pid for p in psutil.Process().children(recursive=True))
        done, _ = await asyncio.wait({job}, timeout=5)
        if job in done:
            try:
                outcome["results"] = [r.verdict for r in job.result()]
            except SandboxError as exc:
                outcome["error"] = exc
        else:
            job.cancel()
            outcome["hung"] = True

    await asyncio.wait_for(scenario(), timeout=30)
    found = _settle(lambda: _ours(uid_base, {os.getpid()}, seen, since), grace=1.0)
    left = _describe(found)
    _end(found)
    assert not left, "sandbox processes remain after the pool closed:\n" + "\n".join(left)
    assert not outcome.get("hung"), "run() still waits 5 s after the pool closed"
    if "results" in outcome:
        assert outcome["results"] == [Verdict.SF], outcome
