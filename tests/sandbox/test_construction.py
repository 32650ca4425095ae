"""Round 3's mechanisms, each tested for the whole class it covers: a PID namespace per
worker (lifetimes), a minimal root (host metadata), a fresh scratch per program (state
across programs), a memory cgroup (memory outside RLIMIT_AS), fresh uids, and the
attribution of a zygote's death to the test that was running."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from pairbench_async.core.types import Limits, Program, Test, Verdict
from pairbench_async.sandbox.host import uid_alive
from pairbench_async.sandbox.pool import SandboxConfig, SandboxPool

IS_ROOT = os.getuid() == 0
SANE = Program(source="print(int(input()) * 2)\n")
SANE_TESTS = [Test(id=f"s{i}", input=f"{i}\n", output=f"{2 * i}\n") for i in range(4)]


def _uids(base: int) -> set[int]:
    """Live processes whose uid lies in [base, base + 256)."""
    out = set()
    for p in psutil.process_iter(["uids"]):
        uids = p.info["uids"]
        if uids and any(base <= u < base + 256 for u in uids):
            out.add(p.pid)
    return out


def _wait_until(condition, deadline: float = 10.0) -> bool:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


# A child that does everything a process can do to outlive its parents without
# creating a process: no parent-death signal, a session of its own, threads.
ESCAPER = textwrap.dedent("""
    import ctypes, os, threading, time
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, 0, 0, 0, 0)                      # PR_SET_PDEATHSIG 0
    for call in (os.setsid, lambda: os.setpgid(0, 0)):
        try:
            call()
        except OSError:
            pass
    for _ in range(4):
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
    print("up", flush=True)
    time.sleep(60)
""")

EVALUATOR = textwrap.dedent("""
    import asyncio, sys
    from pairbench_async import Limits, Program, SandboxConfig, SandboxPool, Test
    async def main():
        config = SandboxConfig(workers=1, uid_base=int(sys.argv[2]))
        async with SandboxPool(config) as pool:
            await pool.run(Program(source=open(sys.argv[1]).read()), [Test(id="1", input="")],
                           Limits(time_limit=30, wall_limit=60))
    asyncio.run(main())
""")


@pytest.mark.skipif(not IS_ROOT, reason="the sandbox uid range exists only as root")
def test_nothing_outlives_a_sigkilled_evaluator(tmp_path: Path) -> None:
    base = 1_990_000_000
    prog = tmp_path / "escaper.py"
    prog.write_text(ESCAPER)
    script = tmp_path / "evaluator.py"
    script.write_text(EVALUATOR)
    proc = subprocess.Popen([sys.executable, str(script), str(prog), str(base)])
    try:
        assert _wait_until(lambda: len(_uids(base)) >= 2, 30), "the program never started"
    finally:
        proc.kill()
        proc.wait()
    assert _wait_until(lambda: not _uids(base)), f"survivors: {_uids(base)}"


@pytest.mark.skipif(not IS_ROOT, reason="the sandbox uid range exists only as root")
async def test_nothing_outlives_a_closed_pool_or_its_program() -> None:
    base = 1_990_000_256
    async with SandboxPool(SandboxConfig(workers=1, uid_base=base)) as pool:
        (r,) = await pool.run(Program(source=ESCAPER), [Test(id="1", input="")],
                              Limits(time_limit=0.5, wall_limit=1.0))
        assert r.verdict is Verdict.TLE
        # the next program runs while nothing of the last one is left
        assert [x.verdict for x in await pool.run(SANE, SANE_TESTS)] == [Verdict.AC] * 4
        worker = pool._workers[0]
        assert worker is not None
        zygote_and_init = _uids(base)
        assert len(zygote_and_init) <= 1, zygote_and_init  # at most the idle zygote
    assert _wait_until(lambda: not _uids(base)), f"survivors: {_uids(base)}"


async def test_host_paths_can_be_neither_opened_nor_statted(tmp_path: Path) -> None:
    secret = tmp_path / "dataset.jsonl"
    secret.write_text("hidden\n")
    probe = textwrap.dedent(f"""
        import os
        for path in ({str(secret)!r}, {str(tmp_path)!r}, "/etc/passwd", "/etc/hostname",
                     "/proc/{os.getpid()}", "/proc/1/cmdline", "/sys/kernel", "/home",
                     "/var", "/run", "/tmp", {sys.executable!r}):
            try:
                os.stat(path)
                print("visible", path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                print("error", path, exc.errno)
        print("done")
    """)
    async with SandboxPool(workers=1) as pool:
        if not pool.confinement().get("minimal_root"):
            pytest.skip("this kernel gave the worker no minimal root (said at start)")
        (r,) = await pool.run(Program(source=probe), [Test(id="1", input="")])
    lines = r.stdout.splitlines()
    assert lines[-1:] == ["done"], r
    # the interpreter itself is not in the root (it is running already); only
    # paths on the read allowlist, or the directories on the way to one, exist
    leaked = [ln for ln in lines[:-1] if not ln.startswith("visible /tmp")]
    assert not leaked, lines


async def test_a_program_sees_only_its_workers_processes() -> None:
    probe = textwrap.dedent("""
        import os
        seen = []
        for pid in range(1, 4096):
            try:
                os.stat(f"/proc/{pid}")
                seen.append(pid)
            except OSError:
                pass
        print(len(seen), max(seen) if seen else 0, os.getpid())
    """)
    async with SandboxPool(workers=1) as pool:
        if not pool.confinement().get("pidns"):
            pytest.skip("no PID namespace on this kernel (said at start)")
        (r,) = await pool.run(Program(source=probe), [Test(id="1", input="")])
    count, highest, me = (int(x) for x in r.stdout.split())
    # the worker's init, the zygote and the child itself (hidepid may hide the init)
    assert count <= 3 and highest <= 16 and me <= 16, r.stdout


async def test_no_state_crosses_programs_through_scratch_metadata() -> None:
    """Program A moves every counter a tmpfs keeps (inode numbers, the root's times and
    mode, free blocks); program B, next on the same worker, must find what a first
    program finds."""
    mover = textwrap.dedent("""
        import os
        for i in range(300):
            open(f"f{i}", "w").write("x" * 5000)
        os.utime(".", ns=(123456789, 987654321))
        try:
            os.chmod(".", 0o755)
        except OSError:
            pass
        os.mkdir("keep")
        print("moved")
    """)
    reader = textwrap.dedent("""
        import os
        st = os.stat(".")
        fd = os.open("probe", os.O_CREAT | os.O_WRONLY)
        ino = os.fstat(fd).st_ino
        vfs = os.statvfs(".")
        print(st.st_atime_ns, st.st_mtime_ns, oct(st.st_mode), st.st_nlink, ino,
              vfs.f_bfree, vfs.f_ffree, sorted(os.listdir(".")))
    """)
    tests = [Test(id="1", input="")]
    async with SandboxPool(workers=1) as pool:
        (first,) = await pool.run(Program(source=reader), tests)
        (moved,) = await pool.run(Program(source=mover), tests)
        assert moved.stdout == "moved\n", moved
        (after,) = await pool.run(Program(source=reader + "\n# another program\n"), tests)
        # and within one program, test 2 reads before it moves, after test 1 moved
        both = await pool.run(Program(source=reader + "\n" + mover), tests * 2)
    assert first.verdict is Verdict.AC and first.stdout, first
    assert after.stdout == first.stdout, (first.stdout, after.stdout)
    # the root's times, mode and links are reset per test; inode numbers move on within
    # one program (a fresh tmpfs per program, not per test)
    assert both[0].stdout.split()[:4] == both[1].stdout.split()[:4] == first.stdout.split()[:4]


@pytest.mark.skipif(not IS_ROOT, reason="memory cgroups need root")
async def test_memory_outside_the_heap_counts_against_the_limit() -> None:
    hoard = textwrap.dedent("""
        import os, sys
        chunk = b"x" * (1 << 20)
        for i in range(12):
            with open(f"big{i}", "wb") as f:          # 48 MiB in scratch files
                for _ in range(4):
                    f.write(chunk)
        sys.stderr.write("e" * (7 << 20))             # 7 MiB in the stderr memory file
        sys.stdout.write("o" * (7 << 20) + "\\n")     # 7 MiB in the stdout memory file
        print(sum(os.path.getsize(f"big{i}") for i in range(12)))
    """)
    small = "import os\nopen('f', 'wb').write(os.urandom(4 << 20))\nprint(1)\n"
    async with SandboxPool(workers=1) as pool:
        if not pool.confinement().get("cgroup"):
            pytest.skip("no memory cgroup could be made (said at start)")
        limits = Limits(time_limit=5, memory_limit_mb=32)
        (big,) = await pool.run(Program(source=hoard), [Test(id="1", input="")], limits)
        (ok,) = await pool.run(Program(source=small), [Test(id="1", input="", output="1\n")],
                               limits)
        heap = Program(source="x = bytearray(48 << 20)\nprint(len(x))\n")
        (h,) = await pool.run(heap, [Test(id="1", input="")], limits)
        assert [x.verdict for x in await pool.run(SANE, SANE_TESTS)] == [Verdict.AC] * 4
    assert big.verdict is Verdict.MLE, big
    assert ok.verdict is Verdict.AC and ok.memory_kb >= 4096, ok   # the scratch file counts
    assert h.verdict is Verdict.MLE, h


def _is_test_2(child: psutil.Process) -> bool:
    """Whether a test child is test 2's: its stdin (a memfd, read afresh through /proc, as
    root) holds "2"; where /proc refuses, the only child that lives past 0.3 s."""
    try:
        with open(f"/proc/{child.pid}/fd/0", encoding="utf-8") as stdin:
            return stdin.read() == "2\n"
    except OSError:
        return time.time() - child.create_time() > 0.3


async def test_a_zygote_killed_while_its_child_runs_is_that_tests_fault() -> None:
    """Whoever kills a zygote while one of its test children runs (the program could,
    through any door a filter misses), that test ends RE with the signal named; every
    other test gets its own verdict, none SF."""
    prog = Program(source="import time, sys\nx = int(input())\nif x == 2:\n"
                          "    time.sleep(2)\nprint(x * 2)\n")
    tests = [Test(id=str(i), input=f"{i}\n", output=f"{2 * i}\n") for i in range(6)]
    async with SandboxPool(workers=1) as pool:
        await pool.run(SANE, SANE_TESTS)
        task = asyncio.create_task(pool.run(prog, tests, Limits(time_limit=5)))

        worker = pool._workers[0]
        assert worker is not None
        # the started worker -> its init (with a PID namespace) -> the zygote -> a child
        top = psutil.Process(worker.proc.pid)
        server = top.children()[0] if worker.report.get("pidns") else top
        end = time.monotonic() + 10
        victim = None
        while time.monotonic() < end and victim is None:
            await asyncio.sleep(0.05)
            with contextlib.suppress(psutil.NoSuchProcess, IndexError):
                zygote = server.children()[0]
                kids = zygote.children()
                if kids and _is_test_2(kids[0]):
                    victim = zygote
        assert victim is not None, "no zygote with a running child was found"
        victim.send_signal(signal.SIGKILL)
        results = await asyncio.wait_for(task, 30)
        assert [x.verdict for x in await pool.run(SANE, SANE_TESTS)] == [Verdict.AC] * 4
        stats = pool.statistics()
    verdicts = [r.verdict for r in results]
    assert Verdict.SF not in verdicts, results
    assert verdicts.count(Verdict.RE) == 1 and verdicts[2] is Verdict.RE, results
    assert results[2].error == "SIGKILL", results[2]
    assert all(v is Verdict.AC for i, v in enumerate(verdicts) if i != 2), results
    assert stats.worker_restarts == 0


@pytest.mark.skipif(not IS_ROOT, reason="sandbox uids exist only as root")
async def test_a_respawned_worker_never_takes_a_uid_in_use() -> None:
    async with SandboxPool(SandboxConfig(workers=1, uid_base=1_990_000_512)) as pool:
        await pool.run(SANE, SANE_TESTS)
        worker = pool._workers[0]
        assert worker is not None
        old = worker.uid
        os.kill(worker.proc.pid, signal.SIGKILL)  # the whole worker, mid-life
        results = await pool.run(SANE, SANE_TESTS)
        assert [r.verdict for r in results] == [Verdict.AC] * 4
        new = pool._workers[0]
        assert new is not None and new.uid != old
        assert not uid_alive(old)


@pytest.mark.skipif(not IS_ROOT, reason="cgroups are made only as root")
async def test_cgroups_of_a_killed_evaluator_are_swept(tmp_path: Path) -> None:
    """A pool whose evaluator was SIGKILLed leaves its cgroups (nothing else could remove
    them); the next pool removes every one whose evaluator is gone."""
    script = tmp_path / "evaluator.py"
    script.write_text(EVALUATOR)
    prog = tmp_path / "sleeper.py"
    prog.write_text("import time\ntime.sleep(30)\n")
    proc = subprocess.Popen([sys.executable, str(script), str(prog), "1990000768"])
    try:
        from pairbench_async.sandbox.cgroups import _mounts, _own_paths

        own = _own_paths()
        pids_root = next(os.path.join(point, own["pids"].lstrip("/"))
                         for point, kind, opts in _mounts() if kind == "cgroup" and "pids" in opts)
        theirs = os.path.join(pids_root, "pairbench-{}-".format(proc.pid))
        assert _wait_until(lambda: any(p.startswith(theirs) and os.listdir(p)
                                       for p in _children(pids_root)), 30)
    finally:
        proc.kill()
        proc.wait()
    async with SandboxPool(workers=1) as pool:
        if not pool.confinement().get("cgroup"):
            pytest.skip("no cgroup could be made (said at start)")
    assert not [p for p in _children(pids_root) if p.startswith(theirs)]


def _children(path: str) -> list[str]:
    return [os.path.join(path, name) for name in os.listdir(path)]
