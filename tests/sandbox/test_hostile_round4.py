"""Fourth-round hostile battery: the programs of ``hostile_round4.py`` against the pool.

Classes (numbers as in the review that asked for them):

1. a test child signals its zygote or worker (SIGIO via F_SETOWN/F_SETOWN_EX/FIOSETOWN,
   kill, tgkill, pidfd): the zygote keeps serving, no test is SF;
2. a child outlives its zygote, worker, pool or evaluator: nothing of the sandbox uid
   range survives a closed pool or a SIGKILLed evaluator;
3. an orphan does not hurt the next programs of its worker slot;
4. kernel interfaces no program needs are refused, and the host's AIO budget is intact;
5. nothing crosses tests or programs through the scratch directory's metadata;
6. memory outside the address-space limit (tmpfs, memory files, kernel buffers, timers)
   is counted: MLE under a cgroup (root only);
7. the host's file system and processes cannot be seen (stat, listdir, /proc, mountinfo);
8. a hidden input never reaches ``TestResult.error``;
9. new doors: /proc of the zygote, host identity and strings, shared places, core dumps,
   crashes and own seccomp filters, prctl and rlimits, fake reports, process creation,
   thread signals, descriptor counts, terminals, links, locks and page cache of host
   files, pid and inode counters as channels.

Most tests share one module-scoped pool of one worker (so "the next program" always runs
where the last one did); those that leave processes behind or need a particular cwd
start their own pool with a uid range of their own and end, by pid, whatever of that
range is left. Every assertion decides containment; none is skipped or expected to fail
to hide a failure (class 6 and the uid-based process checks need root, and class 6 a
memory cgroup controller).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import ctypes
import fcntl
import json
import os
import re
import secrets
import signal
import socket
import struct
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

import psutil
import pytest
import pytest_asyncio

import pairbench_async
from pairbench_async.core.types import Limits, Program, Test, TestResult, Verdict
from pairbench_async.sandbox.host import UID_SLOT, claim_uid_range, host_paths
from pairbench_async.sandbox.pool import SandboxConfig, SandboxPool

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import hostile_round4 as H  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="module")

IS_ROOT = os.getuid() == 0
QUICK = Limits(time_limit=0.5, wall_limit=1.0, memory_limit_mb=64)
SANITY = Program(source="print(int(input()) * 2)\n")
SIGNAL_NAMES = {s.name for s in signal.Signals}
BUILTIN_EXCEPTIONS = {
    name for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
}
SANDBOX_ERRORS = {"corrupt result report", "no return value", "non-zero exit code",
                  "unnamed signal", "ProgramDefinedException"}


def _memory_cgroup() -> str | None:
    """Why class 6 cannot run here, or None: it needs root and a memory controller."""
    if not IS_ROOT:
        return "the sandbox puts workers in a cgroup only when started as root"
    if os.path.isdir("/sys/fs/cgroup/memory"):
        return None
    with contextlib.suppress(OSError):
        if "memory" in Path("/sys/fs/cgroup/cgroup.controllers").read_text().split():
            return None
    return "no memory cgroup controller mounted (v1 /sys/fs/cgroup/memory or v2)"


NO_CGROUP = _memory_cgroup()


# ----------------------------------------------------------------------------- helpers


@contextlib.contextmanager
def own_uid_range():
    """(lo, hi): a range of sandbox uids held, like a pool's, by a lock file, so that no
    other pool (of this run or another) uses it meanwhile; whatever of it is left at the
    end is killed (by pid: only this test's processes run under it)."""
    base, fd, path = claim_uid_range()
    try:
        yield base, base + UID_SLOT
    finally:
        end_range(base, base + UID_SLOT)
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)


def make_tests(*inputs: str, output: str | None = None) -> list[Test]:
    return [Test(id=str(i), input=x, output=output) for i, x in enumerate(inputs)]


def program(h: H.Hostile, tag: str = "") -> Program:
    """The hostile's program; ``tag`` makes a distinct program (a new zygote) of it."""
    return Program(source=h.source + (f"\n# {tag}\n" if tag else ""))


def show(results: list[TestResult]) -> str:
    return "\n".join(
        f"  {r.id}: {r.verdict.value} error={r.error!r} mem={r.memory_kb} "
        f"out={r.stdout[:300]!r} err={r.stderr[-300:]!r}"
        for r in results
    )


async def sane(pool: SandboxPool) -> TestResult:
    (r,) = await pool.run(SANITY, [Test(id="s", input="21\n", output="42\n")], QUICK)
    return r


def first_line(r: TestResult) -> str:
    return r.stdout.split("\n", 1)[0]


def sandbox_processes(lo: int, hi: int) -> list[psutil.Process]:
    """Live processes whose uid lies in [lo, hi). A zombie counts when threads of it still
    run (a main thread that ended alone leaves the process a "zombie" leader)."""
    out = []
    for p in psutil.process_iter(["uids", "status"]):
        with contextlib.suppress(psutil.Error):
            uids = p.info["uids"]
            if uids and any(lo <= u < hi for u in (uids.real, uids.effective)):
                if p.info["status"] != psutil.STATUS_ZOMBIE or threads(p.pid) > 1:
                    out.append(p)
    return out


def threads(pid: int) -> int:
    """Threads of a process, also of a "zombie" whose main thread alone has ended (psutil
    refuses to look at zombies)."""
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def proc_uid(pid: int) -> int | None:
    """The real uid of a process (from its status: /proc/PID itself belongs to root when the
    process is not dumpable)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    return None


def describe(procs: list[psutil.Process]) -> list[str]:
    out = []
    for p in procs:
        try:
            stat = Path(f"/proc/{p.pid}/stat").read_text()
            state, ppid, _, sid = stat.rsplit(")", 1)[1].split()[:4]
            cmd = Path(f"/proc/{p.pid}/cmdline").read_bytes().replace(b"\0", b" ")[:80]
        except OSError:
            continue
        out.append(f"pid {p.pid} ppid {ppid} sid {sid} state {state} threads {threads(p.pid)} "
                   f"{cmd.decode(errors='replace')}")
    return out


async def left_after(lo: int, hi: int, within: float) -> list[str]:
    """What of the uid range is still alive once ``within`` seconds have passed (or
    nothing, as soon as nothing is)."""
    deadline = time.monotonic() + within
    while True:
        left = sandbox_processes(lo, hi)
        if not left or time.monotonic() > deadline:
            return describe(left)
        await asyncio.sleep(0.05)


def end_range(lo: int, hi: int) -> None:
    """Kill, by pid, whatever this test's own uid range left behind."""
    for p in sandbox_processes(lo, hi):
        with contextlib.suppress(OSError):
            os.kill(p.pid, signal.SIGKILL)


async def wait_for_child(lo: int, hi: int, at_least: int, within: float = 20) -> psutil.Process:
    """A process of the range running at least ``at_least`` threads (the test child)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        for p in sandbox_processes(lo, hi):
            if threads(p.pid) >= at_least:
                return p
        await asyncio.sleep(0.05)
    raise AssertionError(f"no test child with {at_least} threads within {within} s")


def io_setup_works() -> bool:
    """Whether this (host) process can still get an AIO context."""
    libc = ctypes.CDLL(None, use_errno=True)
    nr = {"x86_64": (206, 207), "aarch64": (0, 1)}[os.uname().machine]
    ctx = ctypes.c_ulong(0)
    if libc.syscall(nr[0], 1, ctypes.byref(ctx)) != 0:
        return False
    libc.syscall(nr[1], ctx)
    return True


def allowlist() -> list[str]:
    """Host paths a sandboxed program may legitimately find: the read allowlist, the
    interpreter's prefixes, the allowed packages' site-packages, the devices."""
    read, extra, _, _ = host_paths(SandboxConfig().allowed_packages)
    paths = set(read) | set(extra) | {sys.prefix, sys.base_prefix}
    paths |= {os.path.realpath(p) for p in paths}
    paths |= {"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"}
    return sorted(paths)


def related(path: str, allowed: list[str]) -> bool:
    """``path`` is an allowlisted path, lies beneath one, or is an ancestor of one (a
    minimal root holds the directories down to what it binds)."""
    path = path.rstrip("/") or "/"
    for a in allowed:
        if path == a or path.startswith(a + "/") or path == "/" or a.startswith(path + "/"):
            return True
    return False


def pid_token(text: str, pid: int) -> bool:
    return re.search(rf"(?<![0-9]){pid}(?![0-9])", text) is not None


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool():
    """One worker for the whole module: the next program always runs where the last did."""
    async with SandboxPool(workers=1, result_grace=1.0) as p:
        yield p


# ----------------------------------------------------------------------------- 1. signals

SIGNAL_ATTACKS = ["setown_sigkill", "setown_sigstop", "setown_sigxcpu", "setown_sigio",
                  "setown_ex", "setown_pgrp", "fiosetown", "siocspgrp", "kill", "init_sigterm",
                  "pidfd", "tgkill"] + (["kill_all"] if IS_ROOT else [])


@pytest.mark.parametrize("attack", SIGNAL_ATTACKS)
async def test_a_test_child_cannot_signal_its_zygote(pool: SandboxPool, attack: str) -> None:
    """Clean, attack, clean, clean: the clean tests are AC and report one and the same
    parent (the zygote kept serving), nothing is SF, the attack itself is at most RE, and
    the next program is AC."""
    results = await pool.run(program(H.SIGNAL_PARENT), make_tests("clean", attack, "clean", "clean"),
                             QUICK)
    after = await sane(pool)
    assert all(r.verdict is not Verdict.SF for r in results), "sandbox fault:\n" + show(results)
    clean = [results[0], *results[2:]]
    assert all(r.verdict is Verdict.AC and r.stdout.endswith("ok\n") for r in clean), show(results)
    parents = {first_line(r) for r in clean}
    if results[1].verdict is Verdict.AC:
        parents.add(first_line(results[1]))
    assert len(parents) == 1, f"the zygote was replaced (parents {parents}):\n" + show(results)
    attacked = results[1]
    assert attacked.verdict in (Verdict.AC, Verdict.RE), show(results)
    if attacked.verdict is Verdict.RE:
        assert attacked.error in SIGNAL_NAMES | BUILTIN_EXCEPTIONS, show(results)
    assert after.verdict is Verdict.AC, after


# ----------------------------------------------------------------------------- 2. outliving

OUTLIVE_CASES = {
    # (input words, wall limit, close the pool while the test runs)
    "setsid_pool_closed_mid_test": ("linger", 20.0, True),
    "sigio_zygote_then_close": ("sigio", 1.5, False),
    "threads_after_main_exit": ("sigio main_exit", 1.5, False),
}


@pytest.mark.skipif(not IS_ROOT, reason="sandbox processes are told apart by their uid only as root")
@pytest.mark.parametrize("case", list(OUTLIVE_CASES))
async def test_nothing_outlives_a_closed_pool(case: str) -> None:
    words, wall, mid_test = OUTLIVE_CASES[case]
    results: list[TestResult] | None = None
    with own_uid_range() as (lo, hi):
        async with SandboxPool(SandboxConfig(workers=1, uid_base=lo, result_grace=1.0)) as pool:
            job = asyncio.ensure_future(pool.run(
                program(H.OUTLIVE), make_tests(f"{words} 12"),
                Limits(time_limit=1, wall_limit=wall, memory_limit_mb=64)))
            if mid_test:
                # its escapes (PDEATHSIG cleared, setsid, setpgid) come before its threads
                await wait_for_child(lo, hi, at_least=5)
            else:
                results = await asyncio.wait_for(job, timeout=30)
        if mid_test:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(job, timeout=5)
        left = await left_after(lo, hi, within=3.0)
    assert not left, f"sandbox processes outlived the closed pool ({case}):\n" + "\n".join(left)
    if results is not None:  # every test ends with a verdict of the program's, never SF
        assert [r.verdict for r in results] != [Verdict.SF], show(results)


EVALUATOR = r"""
import asyncio, sys
from pairbench_async import Limits, Program, SandboxConfig, SandboxPool, Test

source, uid_base = open(sys.argv[1]).read(), int(sys.argv[2])

async def main():
    async with SandboxPool(SandboxConfig(workers=1, uid_base=uid_base)) as pool:
        job = asyncio.ensure_future(pool.run(
            Program(source=source), [Test(id="1", input="linger 12", output="x\n")],
            Limits(time_limit=5, wall_limit=20, memory_limit_mb=64)))
        print("submitted", flush=True)
        await job

asyncio.run(main())
"""


@pytest.mark.skipif(not IS_ROOT, reason="sandbox processes are told apart by their uid only as root")
async def test_nothing_outlives_a_sigkilled_evaluator(tmp_path: Path) -> None:
    """The evaluator (a script) runs a child that cleared its parent-death signal and left
    the session; the evaluator is SIGKILLed: nothing of its uid range may remain."""
    script = tmp_path / "evaluator.py"
    script.write_text(EVALUATOR)
    source = tmp_path / "outlive.py"
    source.write_text(H.OUTLIVE.source)
    with own_uid_range() as (lo, hi):
        proc = subprocess.Popen([sys.executable, str(script), str(source), str(lo)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            # its escapes (PDEATHSIG cleared, setsid, setpgid) come before its threads
            await wait_for_child(lo, hi, at_least=5)
            proc.send_signal(signal.SIGKILL)
            await asyncio.to_thread(proc.wait, 10)
            left = await left_after(lo, hi, within=3.0)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()
    assert not left, "sandbox processes outlived the SIGKILLed evaluator:\n" + "\n".join(left)


# ----------------------------------------------------------------------------- 3. orphans


@pytest.mark.skipif(not IS_ROOT, reason="sandbox uids (and RLIMIT_NPROC per uid) exist only as root")
async def test_an_orphan_does_not_hurt_the_next_programs_of_its_slot() -> None:
    """After HOG_AND_HUNT (an orphan holding its uid's thread budget and killing every new
    process of its uid): an innocent 20-thread program on the same slot is AC, never runs
    under the uid of a process still alive, and a traced reference has full traces."""
    reference = Program(source=H.TRACED_REFERENCE)
    with own_uid_range() as (lo, hi):
        async with SandboxPool(SandboxConfig(workers=1, uid_base=lo, result_grace=1.0)) as pool:
            baseline = await pool.run(reference, make_tests("7\n", output="5\n"), Limits(time_limit=2),
                                      trace=True)
            hostile = await pool.run(program(H.HOG_AND_HUNT), make_tests("56 12"),
                                     Limits(time_limit=1, wall_limit=1.5, memory_limit_mb=64))
            innocent = await pool.run(program(H.INNOCENT_THREADS), make_tests("\n"),
                                      Limits(time_limit=2, memory_limit_mb=256))
            ours = {q.pid for q in psutil.Process().children(recursive=True)}
            alive_uids = {proc_uid(p.pid) for p in sandbox_processes(lo, hi) if p.pid not in ours}
            traced = await pool.run(reference, make_tests("7\n", output="5\n"), Limits(time_limit=2),
                                    trace=True)
    expected = str(sum(sum(range(i * 1000)) for i in range(20)))
    (r,) = innocent
    (t,) = traced
    (base,) = baseline
    assert base.verdict is Verdict.AC and base.lines, show(baseline)
    problems = []
    if not (r.verdict is Verdict.AC and first_line(r) == expected):
        problems.append("the innocent threaded program after the orphan:\n" + show(innocent))
    elif int(r.stdout.split()[1]) in alive_uids:
        problems.append(f"the innocent program ran as uid {r.stdout.split()[1]}, which an "
                        f"orphan still held")
    if not (t.verdict is Verdict.AC and t.lines == base.lines):
        problems.append(f"the traced reference after it: {show(traced)} lines={t.lines}, on a "
                        f"clean slot {base.lines}")
    assert not problems, "\n".join(problems) + "\nthe hostile program:\n" + show(hostile)


# ----------------------------------------------------------------------------- 4. refused


REFUSED = ["io_setup", "io_uring_setup", "userfaultfd", "process_vm_readv", "add_key", "keyctl",
           "perf_event_open", "bpf", "unshare", "setns", "mount", "ptrace_traceme",
           "ptrace_attach", "personality", "memfd_create", "memfd_secret", "socket_inet",
           "socket_inet6", "socket_netlink", "connect_unix", "inotify", "fanotify", "dnotify",
           "lease", "pipe_size", "kcmp", "pidfd_getfd", "sched_setaffinity", "name_to_handle_at"]


@pytest.mark.parametrize("call", REFUSED)
async def test_kernel_interfaces_are_refused(pool: SandboxPool, call: str) -> None:
    args: dict[str, object] = {"call": call}
    listener = None
    sock_dir = None
    if call == "connect_unix":
        # a world-traversable directory outside every hidden tree, socket open to all
        sock_dir = Path(tempfile.mkdtemp(prefix="_r4sock", dir=HERE))
        sock_dir.chmod(0o755)
        path = sock_dir / "s"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        path.chmod(0o777)
        listener.listen(4)
        listener.setblocking(False)
        args["path"] = str(path)
    try:
        (r,) = await pool.run(program(H.REFUSED_SYSCALLS), make_tests(json.dumps(args)), QUICK)
        accepted = None
        if listener is not None:
            with contextlib.suppress(BlockingIOError):
                conn, _ = listener.accept()
                accepted = conn.recv(100)
                conn.close()
    finally:
        if listener is not None:
            listener.close()
        if sock_dir is not None:
            for f in sock_dir.iterdir():
                f.unlink()
            sock_dir.rmdir()
    killed = r.verdict is Verdict.RE and r.error == "SIGSYS"
    assert killed or (r.verdict is Verdict.AC and r.stdout.startswith("refused")), show([r])
    assert accepted is None, f"a host socket accepted a connection from the sandbox: {accepted!r}"


async def test_stdin_cannot_be_mapped_writable(pool: SandboxPool) -> None:
    secret = f"input-{secrets.token_hex(8)}"
    (r,) = await pool.run(program(H.STDIN_MMAP), make_tests(secret), QUICK)
    assert r.verdict is Verdict.AC, show([r])
    done, seen = r.stdout.split("\n")[:2]
    assert json.loads(done) == [] and seen == secret, show([r])


async def test_the_hosts_aio_budget_is_intact(pool: SandboxPool) -> None:
    """AIO contexts count against a system-wide budget: the program gets none, and the host
    can get one during and after the test."""
    assert io_setup_works(), "precondition: the host can get an AIO context"
    failures: list[float] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            if not io_setup_works():
                failures.append(time.monotonic())
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        (r,) = await pool.run(program(H.AIO_EXHAUST), make_tests("1.5"),
                              Limits(time_limit=1, wall_limit=3, memory_limit_mb=64))
    finally:
        stop.set()
        watcher.join()
    assert not failures, f"the host's io_setup failed {len(failures)} times while the program ran"
    assert io_setup_works(), "the host's AIO budget is not back after the test"
    assert first_line(r) == "0", f"the program got {first_line(r)} AIO events:\n" + show([r])


# ----------------------------------------------------------------------------- 5. metadata


def _times(results: list[TestResult]) -> list[dict]:
    return [json.loads(first_line(r)) for r in results]


async def test_scratch_root_times_and_mode_do_not_carry(pool: SandboxPool) -> None:
    """Each test sets the root's times to a value of its own (and tries a mode): no later
    test, of this program or the next one, may see a value written before it."""
    values = [10**18 + secrets.randbelow(10**15) * 1000 for _ in range(6)]
    mk = lambda v, m: json.dumps({"v": v, "mode": m})  # noqa: E731
    a = await pool.run(program(H.ROOT_TIMES, "A"),
                       make_tests(*(mk(v, 0o755 if i % 2 else 0o711) for i, v in enumerate(values[:3]))),
                       QUICK)
    b = await pool.run(program(H.ROOT_TIMES, "B"),
                       make_tests(*(mk(v, 0o705) for v in values[3:])), QUICK)
    results = a + b
    assert all(r.verdict is Verdict.AC for r in results), show(results)
    seen = _times(results)
    carried = [(i, s) for i, s in enumerate(seen)
               if {s["atime"], s["mtime"]} & set(values[:i])]
    assert not carried, f"tests saw root times written by earlier tests: {carried}"
    assert len({s["mode"] for s in seen}) == 1, f"the root's mode changed: {seen}"
    assert all(s["entries"] == [] for s in seen), seen


async def test_inode_counter_does_not_carry_across_programs(pool: SandboxPool) -> None:
    """Program A creates N files; program B, next on the worker, probes the inode number of
    a new file. B's number must be the same whatever N was."""
    probes = []
    for n in (secrets.randbelow(100) + 20, secrets.randbelow(100) + 300):
        await pool.run(program(H.INODES, "A"), make_tests(f"create {n}"), QUICK)
        (r,) = await pool.run(program(H.INODES, "B"), make_tests("probe"), QUICK)
        assert r.verdict is Verdict.AC, show([r])
        probes.append((n, int(first_line(r))))
    assert probes[0][1] == probes[1][1], f"B's inode number follows A's file count: {probes}"


async def test_leftovers_are_gone_for_the_next_program(pool: SandboxPool) -> None:
    names = [f"SECRET{secrets.token_hex(4)}" for _ in range(3)]
    v = 10**18 + secrets.randbelow(10**15)
    w = await pool.run(program(H.LEFTOVERS, "writer"),
                       make_tests(json.dumps({"op": "write", "names": names, "v": v})), QUICK)
    r = await pool.run(program(H.LEFTOVERS, "reader"), make_tests(json.dumps({"op": "read"})), QUICK)
    assert w[0].verdict is Verdict.AC, show(w)
    assert r[0].verdict is Verdict.AC and json.loads(first_line(r[0])) == [], show(r)


async def test_pid_counter_is_not_a_channel_between_programs(pool: SandboxPool) -> None:
    """Program A starts N threads; program B, next on the same worker, prints its pid: it
    must not tell N. Each zygote is the init of a PID namespace of its own, so every
    program's first test has the same pid. (Between the tests of one program the counter,
    like the scratch tmpfs's inode counter, is shared: a namespace or a tmpfs per test
    needs privilege per fork. What crosses is one program's own test inputs, which its
    own outputs show anyway; the README's confinement table says so.)"""
    pids = []
    for k, n in enumerate(secrets.randbelow(150) + 30 for _ in range(4)):
        a = await pool.run(program(H.PID_COUNTER, f"a{k}"), make_tests(str(n)),
                           Limits(time_limit=2, memory_limit_mb=64))
        b = await pool.run(program(H.PID_COUNTER, f"b{k}"), make_tests("0"),
                           Limits(time_limit=2, memory_limit_mb=64))
        assert a[0].verdict is Verdict.AC and b[0].verdict is Verdict.AC, show(a + b)
        pids.append(int(first_line(b[0])))
    assert len(set(pids)) == 1, f"program B's pid moves with program A's thread count: {pids}"


async def test_memory_kb_does_not_carry_across_tests(pool: SandboxPool) -> None:
    """Test k holds N_k MiB (under the limit), test k+1 holds nothing: each test's memory_kb
    is its own (a peak that is not reset per test would carry N_k into test k+1's result,
    a channel and a false MLE)."""
    src = ("import sys\nn = int(sys.stdin.read())\nb = bytearray(n << 20)\n"
           "b[::4096] = b'x' * len(b[::4096])\nprint(len(b))\n")
    sizes = ["0", "40", "0", "10", "0"]
    results = await pool.run(Program(source=src), make_tests(*sizes),
                             Limits(time_limit=2, memory_limit_mb=64))
    assert all(r.verdict is Verdict.AC for r in results), show(results)
    idle = [r.memory_kb for s, r in zip(sizes, results) if s == "0"]
    assert results[1].memory_kb >= 36 * 1024, show(results)  # 40 MiB held, 90 % of it
    assert max(idle) - min(idle) < 4 * 1024, f"memory_kb of the idle tests: {idle}\n" + show(results)


# ----------------------------------------------------------------------------- 6. memory

LIMIT_MB = 32
MEMORY_CASES = {
    # how: (parameters, the memory_kb a sound sandbox reports at least, or None for MLE)
    "heap": ({"mib": 48}, None),
    "scratch": ({"mib": 48}, None),
    "stdio": ({"mib": 24}, None),
    "mmap": ({"mib": 42}, None),
    "unlinked": ({"mib": 42}, None),
    "fallocate": ({"mib": 42}, None),
    "threads": ({}, None),
    "sockets": ({}, "buffered"),
    "timers": ({}, "timers"),
}


#: what the address-space limit alone already catches (run without a cgroup too)
WITHOUT_CGROUP = {"heap", "threads"}


#: ways of holding memory through a call a sandbox may refuse instead of counting
REFUSABLE = frozenset({"fallocate"})


@pytest.mark.parametrize("how", list(MEMORY_CASES))
async def test_memory_outside_the_address_space_is_counted(pool: SandboxPool, how: str) -> None:
    """Under a 32 MB limit. MLE for everything over it; for kernel buffers and timers (which
    may stay under), memory_kb must count at least 70 % of what the program holds on top
    of its 16 MiB heap; then the next program is AC. With root and a memory cgroup all of
    it is expected; without one (not root) only the heap and threads cases, which the
    address-space limit catches, are: tmpfs pages, memory files and kernel buffers are then
    bounded only by the scratch size, the output cap and the open-file limit."""
    if how not in WITHOUT_CGROUP and NO_CGROUP is not None:
        pytest.skip(NO_CGROUP)
    params, held = MEMORY_CASES[how]
    limits = Limits(time_limit=2, wall_limit=4, memory_limit_mb=LIMIT_MB)
    results = await pool.run(program(H.MEMORY), make_tests(json.dumps({"how": how, **params})), limits)
    after = await sane(pool)
    (r,) = results
    assert r.verdict is not Verdict.SF, show(results)
    if held is None:
        # refused outright (the allowlist has no fallocate) holds nothing: contained too
        refused = (how in REFUSABLE and r.verdict is Verdict.RE and r.error == "PermissionError"
                   and r.memory_kb < LIMIT_MB * 1024)
        assert r.verdict is Verdict.MLE or refused, (
            f"{how}: not MLE (memory_kb {r.memory_kb}):\n" + show(results))
    else:
        assert r.verdict in (Verdict.AC, Verdict.MLE), show(results)
        info = json.loads(r.stdout.strip().splitlines()[-1]) if r.verdict is Verdict.AC else {}
        extra_kb = info.get("buffered", 0) // 1024 if held == "buffered" else info.get("timers", 0) * 0.3
        want = 16 * 1024 + 0.7 * extra_kb
        assert r.verdict is Verdict.MLE or r.memory_kb >= want, (
            f"{how}: memory_kb {r.memory_kb} < {want:.0f} (16 MiB heap + 70 % of {extra_kb:.0f} kB "
            f"held in the kernel):\n" + show(results))
    assert after.verdict is Verdict.AC, after


def _big_allowlisted_files(total: int) -> list[str]:
    """Readable allowlisted host files (not shared libraries, which others map) adding up
    to ``total`` bytes, largest first; shared libraries of the allowed packages if need be."""
    found: list[tuple[int, str]] = []
    roots = [sysconfig.get_paths()["stdlib"]]
    for root in roots:
        for dirpath, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in ("site-packages", "dist-packages", "__pycache__")]
            for f in files:
                p = os.path.join(dirpath, f)
                with contextlib.suppress(OSError):
                    size = os.path.getsize(p)
                    if size >= 256 * 1024:
                        found.append((size, p))
    found.sort(reverse=True)
    out, got = [], 0
    for size, p in found:
        out.append(p)
        got += size
        if got >= total:
            return out
    packages = [p for p in allowlist() if "-packages/" in p and os.path.isdir(p)]
    for d in packages:  # the allowed packages' own files (shared libraries among them)
        for dirpath, _, files in os.walk(d):
            for f in sorted(files):
                p = os.path.join(dirpath, f)
                if os.path.getsize(p) >= 256 * 1024:
                    out.append(p)
                    got += os.path.getsize(p)
                    if got >= total:
                        return out
    return out


async def test_reading_host_files_is_not_the_programs_memory(pool: SandboxPool) -> None:
    """Not an attack: streaming 40 MiB of (cold) allowlisted host files under a 32 MB limit
    holds nothing; it is AC within the limit, and the next test's memory_kb does not carry
    the page cache it brought in (the design counts page cache: it must not turn reading
    into MLE)."""
    files = _big_allowlisted_files(40 << 20)
    for p in files:  # make them cold, so that reading them charges the sandbox, if anything
        with contextlib.suppress(OSError):
            fd = os.open(p, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
    limits = Limits(time_limit=3, wall_limit=6, memory_limit_mb=LIMIT_MB)
    (before,) = await pool.run(SANITY, [Test(id="b", input="1\n", output="2\n")], limits)
    (r,) = await pool.run(program(H.STREAM_FILES), make_tests(json.dumps(files)), limits)
    (later,) = await pool.run(SANITY, [Test(id="a", input="1\n", output="2\n")], limits)
    assert r.verdict is Verdict.AC and int(first_line(r)) == sum(map(os.path.getsize, files)), (
        show([r]))
    assert r.memory_kb <= LIMIT_MB * 1024, show([r])
    assert later.verdict is Verdict.AC and later.memory_kb <= before.memory_kb + 8 * 1024, (
        f"memory_kb {before.memory_kb} before, {later.memory_kb} after the streaming test")


# ----------------------------------------------------------------------------- 7. host view


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def host_view(tmp_path_factory: pytest.TempPathFactory):
    """HOST_METADATA run once by a pool started from a cwd of its own (the evaluator's cwd,
    which must be invisible), with a dataset file there."""
    cwd = tmp_path_factory.mktemp("evaluator_cwd")
    dataset = cwd / "dataset.jsonl"
    dataset.write_text('{"id": "1", "input": "hidden"}\n')
    allowed = allowlist()
    me = psutil.Process()
    must_fail = {str(dataset), str(cwd), "/etc/passwd", "/etc/shadow", "/root", "/home", "/sys",
                 "/boot", "/var", f"/proc/{os.getpid()}", f"/proc/{os.getppid()}"}
    for d in ("/", "/root", "/home", "/etc", "/var", "/opt", "/srv", "/mnt", "/work", "/usr"):
        with contextlib.suppress(OSError):
            extra = [os.path.join(d, e) for e in sorted(os.listdir(d))]
            must_fail.update([p for p in extra if not related(p, allowed)][:4])
    must_fail = {p for p in must_fail if not related(p, allowed) and os.path.lexists(p)}
    listed = ["/", "/proc", str(cwd), "/root", "/home", "/etc"]
    read = ["/proc/self/mountinfo", "/proc/1/cmdline"]
    old = os.getcwd()
    os.chdir(cwd)
    try:
        async with SandboxPool(workers=1, result_grace=1.0) as pool:
            worker_pid = pool._workers[0].proc.pid
            extra_pids = {os.getpid(), os.getppid(), worker_pid, me.ppid()}
            must_fail |= {f"/proc/{pid}" for pid in extra_pids}
            payload = {"stat": sorted(must_fail) + ["/proc"], "list": listed, "read": read}
            (r,) = await pool.run(program(H.HOST_METADATA), make_tests(json.dumps(payload)),
                                  Limits(time_limit=2, memory_limit_mb=64))
            base = pool._base
    finally:
        os.chdir(old)
    assert r.verdict is Verdict.AC, show([r])
    seen = json.loads(first_line(r))
    return {"seen": seen, "must_fail": must_fail, "cwd": str(cwd), "allowed": allowed,
            "pids": extra_pids, "base": base}


async def test_host_paths_cannot_be_stated(host_view) -> None:
    stat = host_view["seen"]["stat"]
    visible = sorted(p for p in host_view["must_fail"] if stat[p][0] == "ok")
    assert not visible, f"host paths outside the allowlist can be stat'ed: {visible}"


async def test_proc_is_the_sandboxs_own(host_view) -> None:
    """/proc is a fresh procfs (not the host's: another device) listing none of the host's
    pids, and /proc/1/cmdline is not the host's init."""
    seen = host_view["seen"]
    proc = seen["stat"]["/proc"]
    problems = []
    if proc[0] == "ok" and proc[4] == os.stat("/proc").st_dev:
        problems.append("/proc is the host's procfs (same device)")
    listing = seen["list"]["/proc"]
    if listing[0] == "ok":
        pids = {int(e) for e in listing[1] if e.isdigit()}
        if pids & host_view["pids"]:
            problems.append(f"/proc lists host pids {sorted(pids & host_view['pids'])}")
        if len(pids) > 8:
            problems.append(f"/proc lists {len(pids)} processes")
    cmdline = seen["read"]["/proc/1/cmdline"]
    host_init = Path("/proc/1/cmdline").read_text(errors="replace")
    if cmdline[0] == "ok" and cmdline[1] == host_init:
        problems.append(f"/proc/1/cmdline is the host's init: {host_init!r}")
    # the decisive one: a program that can stat the host's pids sees the host's procfs
    visible = sorted(p for p in host_view["must_fail"]
                     if p.startswith("/proc/") and seen["stat"][p][0] == "ok")
    if visible:
        problems.append(f"host pids exist in the sandbox's /proc: {visible}")
    assert not problems, problems


async def test_listings_show_only_the_minimal_root(host_view) -> None:
    seen = host_view["seen"]
    allowed = host_view["allowed"]
    problems = []
    for d, res in seen["list"].items():
        if res[0] != "ok" or d == "/proc":
            continue
        if d == host_view["cwd"]:
            problems.append(f"the evaluator's cwd can be listed: {res[1]}")
            continue
        own = seen["cwd"].strip("/").split("/")[0]  # the top of the scratch directory
        extra = [e for e in res[1] if not related(os.path.join(d, e), allowed)
                 and e not in ("dev", "proc", own)]
        if extra:
            problems.append(f"{d} shows host entries {extra[:10]}")
    assert not problems, problems


async def test_mountinfo_names_no_host_path(host_view) -> None:
    res = host_view["seen"]["read"]["/proc/self/mountinfo"]
    cwd = host_view["seen"]["cwd"]
    if res[0] != "ok":
        return  # unreadable: nothing shown
    bad = []
    for line in res[1].splitlines():
        fields = line.split()
        for path in (fields[3], fields[4]):  # root within its fs, mount point
            if path in ("/", "/proc", "/dev") or path.startswith(("/dev/", "/proc/")):
                continue
            if path == cwd or path.startswith(cwd + "/"):  # the scratch directory
                continue
            if not related(path, host_view["allowed"]):
                bad.append(path)
    assert not bad, f"mountinfo names host paths outside the allowlist: {bad[:10]}"


# ----------------------------------------------------------------------------- 8. errors


@pytest.mark.parametrize("name", list(H.ERROR_NAMES))
async def test_hidden_input_never_reaches_the_error(pool: SandboxPool, name: str) -> None:
    h = H.ERROR_NAMES[name]
    if name == "exit_code":
        inputs = [secrets.choice("ABCDEFGH") + secrets.token_hex(3) for _ in range(3)]
        while len({i[0] for i in inputs}) < 2:
            inputs[0] = secrets.choice("ABCDEFGH") + inputs[0][1:]
    else:
        inputs = [f"{secrets.token_hex(3)} HIDDEN{secrets.token_hex(4)}" for _ in range(3)]
    results = await pool.run(program(h), make_tests(*inputs), QUICK)
    tokens = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", h.source))
    for inp, r in zip(inputs, results):
        assert r.verdict is not Verdict.AC and r.verdict is not Verdict.SF, show(results)
        err = r.error or ""
        words = [w for w in re.split(r"\s+", inp) if len(w) > 3]
        assert not any(w in err for w in words), f"the hidden input reached the error: {err!r}"
        ok = (err in BUILTIN_EXCEPTIONS | SIGNAL_NAMES | SANDBOX_ERRORS or err in tokens
              or re.fullmatch(r"exit code \d+", err))
        assert ok, f"error {err!r} is neither a built-in exception, a signal nor a program token"
    if name == "exit_code":
        assert len({r.error for r in results}) == 1, (
            "the error tells the input's first byte: " + ", ".join(repr(r.error) for r in results))


# ----------------------------------------------------------------------------- 9. new doors


async def test_the_zygotes_proc_entries_are_closed(pool: SandboxPool) -> None:
    (r,) = await pool.run(program(H.ZYGOTE_PROC), make_tests("\n"), QUICK)
    assert r.verdict is Verdict.AC, show([r])
    seen = json.loads(first_line(r))
    guarded = ("mem", "environ", "maps", "syscall", "stack", "auxv", "pagemap", "cwd", "root",
               "fd")
    opened = [p for p, v in seen.items() if p.rsplit("/", 1)[1] in guarded and v[0] == "ok"]
    assert not opened, f"ptrace-guarded /proc entries of the zygote or pid 1 opened: {opened}"
    text = " ".join(v[1] if isinstance(v[1], str) else " ".join(v[1])
                    for v in seen.values() if v[0] == "ok")
    assert not pid_token(text, os.getpid()) and pool._base not in text, (
        f"the zygote's /proc tells host metadata: {text[:500]!r}")


async def test_the_host_is_anonymous(pool: SandboxPool) -> None:
    """uname's nodename (no UTS namespace), hostname, boot_id, the kernel command line,
    /etc/hostname and machine-id: none is the host's."""
    (r,) = await pool.run(program(H.HOST_IDENTITY), make_tests("\n"), QUICK)
    assert r.verdict is Verdict.AC, show([r])
    seen = json.loads(first_line(r))
    host = {"nodename": os.uname().nodename}
    for p in ("/proc/sys/kernel/hostname", "/proc/sys/kernel/random/boot_id", "/proc/cmdline",
              "/etc/hostname", "/etc/machine-id"):
        with contextlib.suppress(OSError):
            host[p] = Path(p).read_text().strip()
    same = {k: v for k, v in seen.items() if v and host.get(k) == v}
    assert not same, f"the program sees the host's identity: {same}"


async def test_the_interpreter_tells_nothing_of_the_host(pool: SandboxPool) -> None:
    """sys.argv, os.environ, the cwd, the frames above the program and the strings the
    interpreter holds: none names the evaluator's pid, the host path of the scratch base
    or the evaluator's package directory (none of which is on the allowlist)."""
    (r,) = await pool.run(program(H.HOST_STRINGS), make_tests("\n"), Limits(time_limit=2))
    assert r.verdict is Verdict.AC, show([r])
    text = r.stdout
    package = os.path.dirname(os.path.abspath(pairbench_async.__file__))
    found = []
    if pid_token(text, os.getpid()):
        found.append(f"the evaluator's pid {os.getpid()}")
    if pool._base and pool._base in text:
        found.append(f"the scratch base {pool._base}")
    if package in text:
        found.append(f"the package directory {package}")
    seen = json.loads(text)
    where = [k for k, v in seen.items()
             if pid_token(json.dumps(v), os.getpid()) or package in json.dumps(v)
             or (pool._base and pool._base in json.dumps(v))]
    assert not found, f"the program learns {found} (through {where})"


async def test_no_shared_place_is_writable(pool: SandboxPool) -> None:
    (r,) = await pool.run(program(H.SHARED_PLACES), make_tests("\n"), QUICK)
    assert r.verdict is Verdict.AC and json.loads(first_line(r)) == [], show([r])


async def test_randomness_is_the_programs_cpu(pool: SandboxPool) -> None:
    results = await pool.run(program(H.RANDOMNESS), make_tests("\n"), QUICK)
    after = await sane(pool)
    (r,) = results
    assert "allowed" not in r.stdout, show(results)
    # the kernel's time generating is the program's CPU time (its rusage's system time)
    assert r.verdict is Verdict.TLE and r.cpu_ms >= 0.5 * QUICK.time_limit * 1000, (
        show(results) + f" cpu_ms={r.cpu_ms} wall_ms={r.wall_ms}")
    assert after.verdict is Verdict.AC, after


async def test_a_test_child_stays_non_dumpable(pool: SandboxPool) -> None:
    """A dumpable process's core goes to a pipe core_pattern's host helper whatever
    RLIMIT_CORE says (the message shows this host's core_pattern)."""
    (r,) = await pool.run(program(H.DUMPABLE), make_tests("\n"), QUICK)
    assert r.verdict is Verdict.RE and r.error == "SIGSEGV", show([r])
    assert first_line(r) == "0 0", (
        f"PR_GET_DUMPABLE before/after PR_SET_DUMPABLE(1): {first_line(r)} (core_pattern "
        f"{Path('/proc/sys/kernel/core_pattern').read_text().strip()!r})")


async def test_crashes_and_own_filters_are_the_programs(pool: SandboxPool) -> None:
    inputs = ("clean", "segv", "clean", "filter", "clean", "kill_filter", "clean")
    results = await pool.run(program(H.CRASH_AND_RECOVER), make_tests(*inputs),
                             Limits(time_limit=2, wall_limit=4, memory_limit_mb=256))
    assert all(r.verdict is not Verdict.SF for r in results), show(results)
    clean = [r for i, r in zip(inputs, results) if i == "clean"]
    assert all(r.verdict is Verdict.AC and r.stdout.endswith("ok\n") for r in clean), show(results)
    assert len({first_line(r) for r in clean}) == 1, "the zygote was replaced:\n" + show(results)
    crashed = {i: r for i, r in zip(inputs, results) if i != "clean"}
    assert crashed["segv"].verdict is Verdict.RE and crashed["segv"].error == "SIGSEGV", show(results)
    # its own filter may be refused (an OSError of the program's) or work (the program
    # cannot write or exit cleanly, or is killed by SIGSYS): RE either way
    assert crashed["filter"].verdict is Verdict.RE, show(results)
    assert crashed["kill_filter"].verdict is Verdict.RE, show(results)


async def test_prctl_and_rlimit_games(pool: SandboxPool) -> None:
    limits = Limits(time_limit=0.5, wall_limit=3, memory_limit_mb=32)
    results = await pool.run(program(H.PRCTL_AND_RLIMITS), make_tests("none", "cpu", "as", "nofile"),
                             limits)
    allowed = [json.loads(first_line(r)) for r in results if r.stdout]
    assert allowed and all(a == [] for a in allowed), f"allowed: {allowed}\n" + show(results)
    none, cpu, as_, nofile = results
    assert none.verdict is Verdict.AC, show(results)
    assert cpu.verdict is Verdict.TLE and cpu.timeout == "cpu", show(results)
    assert as_.verdict is Verdict.MLE, show(results)
    assert nofile.verdict is Verdict.AC, show(results)
    assert int(nofile.stdout.split()[-1]) <= pool.config.nofile, show(results)


async def test_a_fake_report_decides_nothing_but_its_own_value(pool: SandboxPool) -> None:
    prog = Program(source=H.FAKE_REPORT.source, kind="call", entry_point="f")
    cases = ["plain", "pipe", "stdout", "forge"]
    results = await pool.run(prog, [Test(id=c, args=[c], expected=c) for c in cases], QUICK)
    got = {r.id: r for r in results}
    assert got["plain"].verdict is Verdict.AC, show(results)
    assert got["pipe"].verdict is Verdict.RE and got["stdout"].verdict is Verdict.RE, show(results)
    assert got["forge"].verdict is Verdict.WA, show(results)


async def test_no_process_can_be_made(pool: SandboxPool) -> None:
    (r,) = await pool.run(program(H.NO_PROCESS), make_tests("\n"), QUICK)
    assert r.verdict is Verdict.AC, show([r])
    seen = json.loads(first_line(r))
    made = [k for k, v in seen["results"].items() if v == "ok"]
    assert seen["made"] == [] and not made, seen


async def test_thread_signals_and_timers_do_not_reach_the_zygote(pool: SandboxPool) -> None:
    results = await pool.run(program(H.THREAD_SIGNALS), make_tests("clean", "attack", "clean"), QUICK)
    assert all(r.verdict is Verdict.AC for r in results), show(results)
    assert len({first_line(r) for r in results}) == 1, "the zygote was replaced:\n" + show(results)
    res = json.loads(results[1].stdout.splitlines()[1])
    assert res["tgkill"] != "ok" and res["timer_thread_id"] != "ok", res


async def test_descriptor_backed_objects_stay_under_the_open_file_limit(pool: SandboxPool) -> None:
    (r,) = await pool.run(program(H.DESCRIPTOR_COUNTS), make_tests("\n"), QUICK)
    assert r.verdict is Verdict.AC and int(first_line(r)) <= pool.config.nofile, show([r])


async def test_no_terminal(pool: SandboxPool) -> None:
    (r,) = await pool.run(program(H.TTY), make_tests("\n"), QUICK)
    assert r.verdict is Verdict.AC and json.loads(first_line(r)) == [], show([r])


async def test_no_link_out_of_the_scratch(pool: SandboxPool) -> None:
    target = os.path.join(os.path.dirname(json.__file__), "tool.py")
    before = (Path(target).read_bytes(), os.stat(target).st_mtime_ns)
    (r,) = await pool.run(program(H.LINKS), make_tests(json.dumps({"stdlib": target})), QUICK)
    after = (Path(target).read_bytes(), os.stat(target).st_mtime_ns)
    assert r.verdict is Verdict.AC and json.loads(first_line(r)) == [], show([r])
    assert before == after, "the host file changed"


async def test_no_lock_on_a_host_file(pool: SandboxPool) -> None:
    """While the program holds what locks it can get on host files it may read, the host
    must be able to take (and release) an exclusive flock on each and see no POSIX lock."""
    paths = [os.path.join(os.path.dirname(json.__file__), "decoder.py"), "/dev/null", "/dev/urandom"]
    conflicts: set[str] = set()
    stop = threading.Event()

    def watch() -> None:
        fds = {p: os.open(p, os.O_RDONLY) for p in paths}
        try:
            while not stop.is_set():
                for p, fd in fds.items():
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        fcntl.flock(fd, fcntl.LOCK_UN)
                    except BlockingIOError:
                        conflicts.add(f"flock {p}")
                    query = struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0)
                    held = struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, query))
                    if held[0] != fcntl.F_UNLCK:
                        conflicts.add(f"posix {p} (pid {held[4]})")
                time.sleep(0.02)
        finally:
            for fd in fds.values():
                os.close(fd)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        (r,) = await pool.run(program(H.HOST_LOCKS), make_tests(json.dumps({"paths": paths, "hold": 1.0})),
                              Limits(time_limit=1, wall_limit=3))
    finally:
        stop.set()
        watcher.join()
    assert r.verdict is Verdict.AC, show([r])
    assert not conflicts, (f"the sandbox held locks the host saw: {sorted(conflicts)} "
                           f"(the program got {first_line(r)})")


def resident(path: str) -> float:
    """The fraction of ``path``'s pages in the host's page cache (mincore)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    size = os.path.getsize(path)
    pages = (size + 4095) // 4096
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
        assert addr not in (None, ctypes.c_void_p(-1).value)
        vec = (ctypes.c_ubyte * pages)()
        try:
            assert libc.mincore(addr, size, vec) == 0
        finally:
            libc.munmap(addr, size)
    finally:
        os.close(fd)
    return sum(v & 1 for v in vec) / pages


async def test_the_hosts_page_cache_cannot_be_evicted(pool: SandboxPool) -> None:
    """posix_fadvise(DONTNEED) on a host file bound into the sandbox drops the host's cached
    pages of it (a file nobody maps: a large standard-library file)."""
    (target,) = _big_allowlisted_files(1)[:1]
    with open(target, "rb") as f:
        while f.read(1 << 20):
            pass
    before = resident(target)
    assert before > 0.9, f"precondition: {target} is cached ({before:.0%})"
    (r,) = await pool.run(program(H.FADVISE_EVICT), make_tests(json.dumps({"path": target})), QUICK)
    after = resident(target)
    assert r.verdict is Verdict.AC, show([r])
    assert after >= 0.9 * before, (
        f"the program evicted the host's page cache of {target}: {before:.0%} -> {after:.0%} "
        f"(fadvise said {first_line(r)})")

