"""The sandbox pool: an async façade over long-lived, confined worker processes.

    async with SandboxPool(workers=2) as pool:
        results = await pool.run(program, tests, limits)

Each worker (``worker.py``, started as a small ``python -S`` process, never
forked from this one) serves one program at a time and forks a confined child
per test (~1 ms). A job (one program on many tests) is cut into chunks that
idle workers pull from a queue, so one large job spreads over every worker and
many small jobs interleave; a worker keeps its program loaded between chunks
of the same job. Only test *inputs* travel to a worker; expected outputs stay
here, where the comparison happens.

Back-pressure: at most ``max_jobs`` jobs are admitted at once; further ``run``
calls wait. A worker that dies is replaced and the tests it had not finished are
retried once; a second death turns them into ``SF`` (sandbox fault) results.
A worker that misses a deadline (LOADED within ``load_grace``, each RESULT
within the test's wall limit plus ``result_grace`` after the previous frame) is
killed and handled as a dead one, and so is any unexpected error while serving
a chunk: no program, however it corrupts its own report, can end a worker slot,
and every test of every job resolves.

The event loop is never blocked: all worker I/O is asyncio pipes. Works inside
any asyncio loop, including anyio's asyncio backend.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import importlib.util
import json
import marshal
import os
import secrets
import shutil
import signal
import struct
import sys
import sysconfig
import tempfile
import warnings
from collections import deque
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Annotated, Any

import msgspec

from ..core.errors import ConfinementUnavailable, HelperMissing, SandboxError
from ..core.types import Checker, Limits, Program, Test, TestResult, Verdict
from .compare import compare_output, values_equal

__all__ = ["UID_FLOOR", "SandboxConfig", "SandboxPool", "SandboxStatistics", "confinement_report"]

_OP_LOAD, _OP_TEST, _OP_END, _OP_QUIT = 1, 2, 3, 4
_OP_READY, _OP_LOADED, _OP_RESULT, _OP_ZDIED, _OP_FATAL = 10, 11, 12, 13, 14
_HEADER = struct.Struct("<BI")
_RESULT = struct.Struct("<iIqqqqIIII")
_FLAG_WALL_TIMEOUT, _FLAG_CONFINED = 1, 2
_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")
_FILENAME = "solution.py"
_CHANNEL = msgspec.json.Decoder()
_SIGNALS = {int(s): s.name for s in signal.Signals}


class SandboxConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How the pool runs programs. Defaults suit a shared evaluation machine.

    ``workers`` defaults to the number of usable cores: more workers than cores
    turn CPU-time limits into false TLEs on a loaded machine.
    """

    workers: int | None = None
    #: False runs programs with no confinement layer at all (benchmarks only).
    confine: bool = True
    #: Refuse to start when a mechanism (Landlock, namespaces, seccomp) is missing.
    require_full: bool = False
    #: Size of each worker's scratch tmpfs, the only writable place.
    scratch_mb: int = 64
    #: First unprivileged uid/gid used when started as root (one per worker). None:
    #: a range of this pool's own, drawn at random above UID_FLOOR and held by a lock
    #: file, so that two pools on one host never share a uid (the thread limit is
    #: per uid, and a process may re-prioritise others of its uid).
    uid_base: int | None = None
    #: Threads a program may run (RLIMIT_NPROC, per worker uid; only when root).
    nproc: int = 64
    #: Open files of a program. Also bounds the kernel buffers (pipes, socketpairs)
    #: a program can fill outside its memory limit: ~6 MB at 32.
    nofile: int = 32
    stack_mb: int = 64
    #: Non-stdlib packages a program may import (pre-imported, read-only).
    allowed_packages: tuple[str, ...] = ("numpy",)
    #: Tests per chunk (upper bound; a job is cut so every worker gets work).
    chunk: int = 32
    #: Larger programs are refused (RE ``SourceTooLarge``) before reaching a worker:
    #: compiling megabytes of literals takes gigabytes and seconds.
    max_source_bytes: int = 1 << 20
    #: Jobs admitted at once; further ``run`` calls wait (back-pressure).
    max_jobs: int | None = None
    #: Seconds a worker may take to start (READY) or to load a program (LOADED:
    #: compile and pre-imports); a worker that takes longer is killed and replaced.
    load_grace: float = 30.0
    #: Seconds on top of a test's wall limit within which its RESULT must follow
    #: the previous frame; a worker that misses it (frozen, wedged) is killed.
    result_grace: float = 5.0


#: Every sandbox uid (as root) is at least this; each pool takes a slot of _UID_SLOT.
UID_FLOOR = 1_900_000_000
_UID_SLOT = 256
_UID_SLOTS = 900_000  # the top uid stays below 2**31: APIs taking a C int (setpriority) refuse more
_SCRATCH_PREFIX = "pairbench-sandbox-"


def _claim_uid_range() -> tuple[int, int, str]:
    """A free slot of uids: (base, fd of its held lock file, lock path)."""
    tmp = tempfile.gettempdir()
    for _ in range(100):
        base = UID_FLOOR + _UID_SLOT * secrets.randbelow(_UID_SLOTS)
        path = os.path.join(tmp, f"pairbench-uids-{base}.lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.stat(path).st_ino == os.fstat(fd).st_ino:  # not unlinked meanwhile
                return base, fd, path
        except (BlockingIOError, FileNotFoundError):
            pass
        os.close(fd)
    raise SandboxError("no free range of sandbox uids (100 tries)")


def _sweep_stale_scratch() -> None:
    """Remove the scratch directories of evaluators that died without closing their pool
    (their name carries the evaluator's pid)."""
    tmp = tempfile.gettempdir()
    with contextlib.suppress(OSError):
        for name in os.listdir(tmp):
            if not name.startswith(_SCRATCH_PREFIX):
                continue
            pid = name[len(_SCRATCH_PREFIX):].split("-", 1)[0]
            if not pid.isdigit():
                continue
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)
            except OSError:
                pass


class SandboxStatistics(msgspec.Struct, frozen=True):
    """A snapshot of the pool's counters (for progress lines and benchmarks)."""

    workers: int
    jobs_done: int
    jobs_waiting: int
    tests_run: int
    worker_restarts: int
    sandbox_faults: int
    #: Workers killed for missing a deadline (a frame that did not come in time).
    worker_timeouts: int = 0
    #: Unexpected errors while serving (a bug of the pool's, never a program's):
    #: each was handled like a dead worker, or its slot was restarted.
    internal_errors: int = 0
    #: The last of those errors, for a log line.
    last_error: str | None = None


def _landlock_read_paths(origins: Mapping[str, str]) -> list[str]:
    """What a child may read: the stdlib (not site-packages), shared libraries, zoneinfo."""
    paths: set[str] = set()
    for key in ("stdlib", "platstdlib"):
        root = sysconfig.get_paths().get(key)
        if root and os.path.isdir(root):
            for entry in os.listdir(root):
                if entry in ("site-packages", "dist-packages"):
                    continue
                paths.add(os.path.join(root, entry))
    dynload = os.path.join(sysconfig.get_paths()["platstdlib"], "lib-dynload")
    if os.path.isdir(dynload):
        paths.add(dynload)
    paths.update(("/lib64", "/usr/lib64"))
    multiarch = sysconfig.get_config_var("MULTIARCH")
    if multiarch:
        paths.update((f"/lib/{multiarch}", f"/usr/lib/{multiarch}"))
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir and os.path.isdir(libdir):
        paths.update(os.path.join(libdir, e) for e in os.listdir(libdir) if e.startswith("libpython"))
    paths.update(("/etc/ld.so.cache", "/usr/share/zoneinfo", "/etc/localtime"))
    for origin in origins.values():  # the allowed packages (see _package_origins)
        pkg_dir = os.path.dirname(origin)
        paths.add(pkg_dir)
        libs = pkg_dir + ".libs"
        if os.path.isdir(libs):
            paths.add(libs)
    return sorted(p for p in paths if os.path.exists(p))


def _package_origins(allowed_packages: Sequence[str]) -> dict[str, str]:
    """Where each allowed package's ``__init__`` (or module file) is, for the worker's
    finder: a confined process may read the package but not list site-packages."""
    out: dict[str, str] = {}
    for name in allowed_packages:
        spec = importlib.util.find_spec(name) if name.isidentifier() else None
        if spec is not None and spec.origin and os.path.isfile(spec.origin):
            out[name] = spec.origin
    return out


def _extra_sys_paths(origins: Mapping[str, str]) -> list[str]:
    """site-packages directories holding an allowed package, for the worker's sys.path."""
    out: list[str] = []
    for origin in origins.values():
        parent = os.path.dirname(os.path.dirname(origin))
        if parent not in out:
            out.append(parent)
    return out


def _confine_path() -> str:
    spec = importlib.util.find_spec("pairbench_async.sandbox._confine")
    if spec is None or spec.origin is None:
        raise HelperMissing(
            "the native sandbox module pairbench_async.sandbox._confine is not built: "
            "reinstall with `pip install -e .` (needs gcc and the Python headers)"
        )
    return spec.origin


def _worker_env(scratch: str) -> dict[str, str]:
    """The whole environment of a worker: nothing of ours, above all no API key."""
    return {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": scratch,
        "TMPDIR": scratch,
        "PYTHONHASHSEED": "0",
        # numeric libraries must not start thread pools that hit the process limit
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
        "VECLIB_MAXIMUM_THREADS": "1",
    }


class _CompileTimeLimit(Exception):
    """The zygote ran out of CPU compiling the program; the worker is fine."""


class _WorkerDied(Exception):
    """The worker process (or its zygote) ended while serving a chunk."""


class _WorkerTimeout(_WorkerDied):
    """The worker sent no frame before its deadline (frozen or wedged): it is killed."""


class _Job:
    __slots__ = ("checker", "done", "error", "hash", "limits", "payload", "program", "remaining",
                 "results", "tests", "trace")

    def __init__(self, program: Program, tests: Sequence[Test], limits: Limits, checker: Checker,
                 trace: bool) -> None:
        self.program = program
        self.tests = list(tests)
        self.limits = limits
        self.checker = checker
        self.trace = trace
        self.results: list[TestResult | None] = [None] * len(self.tests)
        self.remaining = len(self.tests)
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.error: str | None = None  # compile error text, shared by all tests
        spec = (
            program.source,
            program.kind,
            program.entry_point,
            trace,
            (limits.time_limit, limits.wall_seconds, limits.memory_limit_mb * 1024 * 1024,
             limits.output_limit),
            _FILENAME,
        )
        self.payload = marshal.dumps(spec)
        self.hash = hashlib.blake2b(self.payload, digest_size=16).digest()

    def finish(self, index: int, result: TestResult) -> None:
        if self.results[index] is None:
            self.results[index] = result
            self.remaining -= 1
            if self.remaining == 0 and not self.done.done():
                self.done.set_result(None)


class _Chunk:
    __slots__ = ("attempt", "indices", "job")

    def __init__(self, job: _Job, indices: list[int], attempt: int = 0) -> None:
        self.job = job
        self.indices = indices
        self.attempt = attempt


class _Worker:
    """One worker process and the pipes to it."""

    def __init__(self, index: int, proc: asyncio.subprocess.Process, report: dict[str, Any]) -> None:
        self.index = index
        self.proc = proc
        self.report = report
        self.loaded: bytes | None = None
        self.compile_error: str | None = None

    async def frame(self) -> tuple[int, bytes]:
        assert self.proc.stdout is not None
        try:
            head = await self.proc.stdout.readexactly(_HEADER.size)
            op, n = _HEADER.unpack(head)
            payload = await self.proc.stdout.readexactly(n) if n else b""
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            raise _WorkerDied("worker exited") from exc
        if op == _OP_FATAL:
            raise _WorkerDied(payload.decode("utf-8", "replace"))
        if op == _OP_ZDIED:
            (status,) = struct.unpack("<i", payload)
            self.loaded = None
            if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
                # only compiling runs under a CPU limit in the zygote: the program's fault
                raise _CompileTimeLimit("CompileTimeLimit: compiling the program took more "
                                        "than its CPU budget")
            raise _WorkerDied(f"zygote died ({_describe_status(status)})")
        return op, payload

    def write(self, op: int, payload: bytes = b"") -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(_HEADER.pack(op, len(payload)))
        if payload:
            self.proc.stdin.write(payload)

    async def drain(self) -> None:
        assert self.proc.stdin is not None
        try:
            await self.proc.stdin.drain()
        except (ConnectionError, BrokenPipeError) as exc:
            raise _WorkerDied("worker pipe closed") from exc

    async def load(self, job: _Job) -> None:
        if self.loaded == job.hash:
            return
        if self.loaded is not None:
            self.write(_OP_END)
        self.loaded = None
        self.write(_OP_LOAD, job.payload)
        await self.drain()
        op, payload = await self.frame()
        if op != _OP_LOADED:
            raise _WorkerDied(f"unexpected frame {op} after LOAD")
        self.loaded = job.hash
        self.compile_error = payload[1:].decode("utf-8", "replace") if payload[:1] == b"\x01" else None

    async def stop(self) -> None:
        """Stop the worker and wait until nothing it started is left.

        SIGTERM makes the worker kill its zygote and reap every descendant (it is
        their subreaper) before it exits, so when this returns no process of the
        worker remains; a worker that does not exit in time is killed.
        """
        with contextlib.suppress(Exception):
            self.write(_OP_QUIT)
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.proc.wait(), timeout=5)
        except (asyncio.TimeoutError, Exception):
            await self.kill()

    async def kill(self) -> None:
        """Kill the worker, its zygote and their test child; never hangs."""
        if self.proc.returncode is None:  # not reaped yet: its pid is still its group's id
            # the worker leads its own session: the group holds zygote and child too,
            # so a frozen (SIGSTOPped) zygote cannot keep the pipes open
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), timeout=5)


def _describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return _SIGNALS.get(os.WTERMSIG(status), f"signal {os.WTERMSIG(status)}")
    return f"exit {os.WEXITSTATUS(status)}"


def confinement_report(report: dict[str, Any]) -> list[str]:
    """The confinement layers a worker report says are missing (empty = all on)."""
    missing = []
    if not report.get("seccomp"):
        missing.append("seccomp")
    if not report.get("landlock"):
        missing.append("Landlock")
    if not report.get("netns"):
        missing.append("network namespace")
    if not report.get("tmpfs"):
        missing.append("scratch tmpfs")
    if report.get("root") and not report.get("setuid"):
        missing.append("unprivileged uid")
    return missing


class SandboxPool:
    """Run untrusted programs on tests, confined, on a pool of forked workers."""

    def __init__(self, config: SandboxConfig | None = None, **overrides: Any) -> None:
        config = config or SandboxConfig()
        if overrides:
            config = msgspec.structs.replace(config, **overrides)
        self.config = config
        n = config.workers or len(os.sched_getaffinity(0)) or 1
        if n < 1:
            raise SandboxError("workers must be at least 1")
        self._n = n
        self._workers: list[_Worker | None] = [None] * n
        self._busy: list[_Chunk | None] = [None] * n  # the chunk each slot is serving
        self._tasks: list[asyncio.Task[None] | None] = []
        self._queue: deque[_Chunk] = deque()
        self._wakeup: asyncio.Condition | None = None
        self._admit: asyncio.Semaphore | None = None
        self._base: str | None = None
        self._uid_base = -1
        self._uid_lock = -1
        self._uid_lock_path = ""
        self._closed = False
        self._started = False
        self._report: dict[str, Any] = {}
        self._tests_run = 0
        self._jobs_done = 0
        self._waiting = 0
        self._restarts = 0
        self._faults = 0
        self._timeouts = 0
        self._internal_errors = 0
        self._last_error: str | None = None
        self._stderr_tails: list[deque[bytes]] = [deque(maxlen=16) for _ in range(n)]
        self._static: tuple[list[str], list[str], str, dict[str, str]] | None = None

    # -- lifecycle ---------------------------------------------------------

    async def __aenter__(self) -> SandboxPool:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        self._wakeup = asyncio.Condition()
        self._admit = asyncio.Semaphore(self.config.max_jobs or 4 * self._n)
        origins = _package_origins(self.config.allowed_packages)
        self._static = (
            _landlock_read_paths(origins),
            _extra_sys_paths(origins),
            _confine_path(),
            origins,
        )
        _sweep_stale_scratch()
        if os.getuid() == 0 and self.config.confine:
            if self.config.uid_base is None:
                self._uid_base, self._uid_lock, self._uid_lock_path = _claim_uid_range()
            else:
                self._uid_base = self.config.uid_base
            if self._n > _UID_SLOT:
                raise SandboxError(f"at most {_UID_SLOT} workers per pool")
        self._base = tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{os.getpid()}-")
        os.chmod(self._base, 0o711)  # an unprivileged child may traverse, not list
        try:
            workers = await asyncio.gather(*(self._spawn(i) for i in range(self._n)))
        except BaseException:
            await self.aclose()
            raise
        for i, w in enumerate(workers):
            self._workers[i] = w
        self._report = workers[0].report
        missing = confinement_report(self._report) if self.config.confine else []
        if missing:
            message = (
                "pairbench_async sandbox: running WITHOUT " + ", ".join(missing)
                + " on this machine (" + "; ".join(self._report.get("errors", [])) + ")"
            )
            if self.config.require_full:
                await self.aclose()
                raise ConfinementUnavailable(message)
            # once: the default warning filter prints it to stderr (a host that filters
            # warnings has chosen to); it used to be printed a second time here
            warnings.warn(message, RuntimeWarning, stacklevel=2)
        self._tasks = [None] * self._n
        for i in range(self._n):
            self._start_slot(i)

    async def _spawn(self, index: int) -> _Worker:
        assert self._base is not None and self._static is not None
        read_paths, extra_paths, confine_path, origins = self._static
        scratch = os.path.join(self._base, f"w{index}")
        os.makedirs(scratch, mode=0o700, exist_ok=True)
        root = os.getuid() == 0
        uid = self._uid_base + index if root and self.config.confine else -1
        gid = uid
        if uid >= 0:
            os.chown(scratch, uid, gid)
        cfg = {
            "confine_path": confine_path,
            "scratch": scratch,
            "scratch_mb": self.config.scratch_mb,
            "uid": uid,
            "gid": gid,
            "confine": self.config.confine,
            "read_paths": read_paths,
            "extra_paths": extra_paths,
            "allowed_packages": origins,
            "nproc": self.config.nproc,
            "nofile": self.config.nofile,
            "stack_mb": self.config.stack_mb,
            "pool_pid": os.getpid(),
            "expose_paths": [sys.base_prefix, sys.prefix, *extra_paths],
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-S", "-s", "-P", "-B", "-X", "utf8", _WORKER, json.dumps(cfg),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=_worker_env(scratch),
            cwd="/",
            start_new_session=True,
        )
        assert proc.stderr is not None
        asyncio.create_task(self._drain_stderr(index, proc.stderr))
        worker = _Worker(index, proc, {})
        try:
            op, payload = await asyncio.wait_for(worker.frame(), timeout=self.config.load_grace)
            if op != _OP_READY:
                raise SandboxError(f"sandbox worker sent frame {op} instead of READY")
            worker.report = json.loads(payload)
        except (_WorkerDied, asyncio.TimeoutError, ValueError, SandboxError) as exc:
            await worker.kill()
            if isinstance(exc, SandboxError):
                raise
            tail = b"".join(self._stderr_tails[index]).decode("utf-8", "replace")[-2000:]
            reason = exc if str(exc) else type(exc).__name__
            raise SandboxError(f"sandbox worker failed to start: {reason}\n{tail}") from exc
        except BaseException:
            await worker.kill()
            raise
        return worker

    async def _drain_stderr(self, index: int, stream: asyncio.StreamReader) -> None:
        tail = self._stderr_tails[index]
        with contextlib.suppress(Exception):
            while chunk := await stream.read(4096):
                tail.append(chunk)

    async def aclose(self) -> None:
        """Stop every worker and remove the scratch directories. Idempotent."""
        if self._closed:
            return
        self._closed = True
        tasks = [t for t in self._tasks if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await asyncio.gather(*(w.stop() for w in self._workers if w is not None))
        while self._queue:
            chunk = self._queue.popleft()
            for i in chunk.indices:
                chunk.job.finish(i, self._fault(chunk.job.tests[i], "sandbox pool closed"))
        if self._base:
            shutil.rmtree(self._base, ignore_errors=True)
        if self._uid_lock >= 0:  # no process of ours runs under these uids any more
            with contextlib.suppress(OSError):
                os.unlink(self._uid_lock_path)
            os.close(self._uid_lock)
            self._uid_lock = -1

    # -- public ------------------------------------------------------------

    @property
    def workers(self) -> int:
        return self._n

    def confinement(self) -> dict[str, Any]:
        """The first worker's report: which layers are on, Landlock ABI, RSS."""
        return dict(self._report)

    def statistics(self) -> SandboxStatistics:
        return SandboxStatistics(
            workers=self._n,
            jobs_done=self._jobs_done,
            jobs_waiting=self._waiting,
            tests_run=self._tests_run,
            worker_restarts=self._restarts,
            sandbox_faults=self._faults,
            worker_timeouts=self._timeouts,
            internal_errors=self._internal_errors,
            last_error=self._last_error,
        )

    async def run(
        self,
        program: Program,
        tests: Sequence[Test],
        limits: Limits = Limits(),
        *,
        checker: Checker = Checker(),
        trace: bool = False,
    ) -> list[TestResult]:
        """Run ``program`` on every test; one result per test, in order.

        The program's own failures are verdicts; only a pool that is closed or
        cannot start raises (:class:`SandboxError`).
        """
        if self._closed:
            raise SandboxError("the sandbox pool is closed")
        if not self._started:
            await self.start()
        if not tests:
            return []
        assert self._admit is not None and self._wakeup is not None
        self._waiting += 1
        try:
            await self._admit.acquire()
        finally:
            self._waiting -= 1
        try:
            if self._closed:  # closed while this job waited for admission
                raise SandboxError("the sandbox pool is closed")
            size_of_source = len(program.source.encode("utf-8", "surrogatepass"))
            if size_of_source > self.config.max_source_bytes:
                text = (f"SourceTooLarge: the program has {size_of_source} bytes, over the "
                        f"sandbox's limit of {self.config.max_source_bytes}")
                return [_compile_failure(t, text) for t in tests]
            job = _Job(program, tests, limits, checker, trace)
            size = max(1, min(self.config.chunk, -(-len(job.tests) // self._n)))
            for start in range(0, len(job.tests), size):
                self._queue.append(_Chunk(job, list(range(start, min(start + size, len(job.tests))))))
            async with self._wakeup:
                self._wakeup.notify_all()
            await asyncio.shield(job.done)
            self._jobs_done += 1
            return [r for r in job.results if r is not None]
        finally:
            self._admit.release()

    # -- workers -----------------------------------------------------------

    async def _next_chunk(self, worker: _Worker | None) -> _Chunk:
        assert self._wakeup is not None
        async with self._wakeup:
            while not self._queue:
                await self._wakeup.wait()
            # prefer a chunk of the program this worker has loaded
            if worker is not None and worker.loaded is not None:
                for k, chunk in enumerate(self._queue):
                    if k > 8:
                        break
                    if chunk.job.hash == worker.loaded:
                        del self._queue[k]
                        return chunk
            return self._queue.popleft()

    def _start_slot(self, index: int, stale: _Worker | None = None) -> None:
        task = asyncio.create_task(self._serve(index, stale),
                                   name=f"pairbench-sandbox-slot-{index}")
        task.add_done_callback(partial(self._slot_ended, index))
        self._tasks[index] = task

    def _slot_ended(self, index: int, task: asyncio.Task[None]) -> None:
        """Last resort: a slot task never ends while the pool is open; restart it."""
        if task.cancelled():
            return  # aclose, or the loop shutting down (_serve resolved its chunk)
        exc = task.exception()  # retrieved, so asyncio does not log it again
        if self._tasks[index] is not task:
            return
        try:
            chunk, self._busy[index] = self._busy[index], None
            if chunk is not None:
                self._abandon(chunk, f"sandbox internal error: {type(exc).__name__}")
            if self._closed or not (exc is None or isinstance(exc, Exception)):
                return  # closing, or KeyboardInterrupt/SystemExit on their way out
            self._note_error(f"worker slot {index} ended: {exc!r}")
        finally:
            if not self._closed and (exc is None or isinstance(exc, Exception)):
                # the worker's state is unknown (frames of a chunk may be in flight): a
                # new task kills it first and spawns a fresh one for its next chunk
                stale, self._workers[index] = self._workers[index], None
                self._start_slot(index, stale)

    def _note_error(self, message: str) -> None:
        self._internal_errors += 1
        self._last_error = message[:1000]

    async def _serve(self, index: int, stale: _Worker | None = None) -> None:
        """One worker slot: take chunks, run them; only cancellation ends it."""
        if stale is not None:
            await stale.kill()
        while True:
            chunk: _Chunk | None = None
            try:
                chunk = self._busy[index] = await self._next_chunk(self._workers[index])
                await self._serve_chunk(index, chunk)
            except asyncio.CancelledError:
                if chunk is not None:
                    self._abandon(chunk, "sandbox pool closed")
                raise
            except Exception as exc:  # a bug of ours: neither the tests nor the slot are lost
                self._note_error(f"worker slot {index}: {type(exc).__name__}: {exc}")
                if chunk is not None:
                    self._abandon(chunk, f"sandbox internal error: {type(exc).__name__}")
                    # the worker may be mid-chunk: its next frames would be taken for
                    # another chunk's results
                    worker, self._workers[index] = self._workers[index], None
                    if worker is not None:
                        await worker.kill()
                await asyncio.sleep(0.1)  # no busy loop if the error repeats
            self._busy[index] = None

    def _abandon(self, chunk: _Chunk, reason: str) -> None:
        job = chunk.job
        for i in chunk.indices:
            if job.results[i] is None:
                job.finish(i, self._fault(job.tests[i], reason))

    async def _serve_chunk(self, index: int, chunk: _Chunk) -> None:
        """Run ``chunk`` on the slot's worker; a worker that dies, misses a deadline
        or fails in any other way is replaced and the unfinished tests retried once."""
        job = chunk.job
        while True:
            worker = self._workers[index]
            if worker is None:  # an earlier restart failed, or the slot was restarted
                worker = await self._respawn(index, chunk, "no worker")
                if worker is None:
                    return
            try:
                await self._run_chunk(worker, chunk)
                return
            except Exception as exc:
                if isinstance(exc, _WorkerTimeout):
                    self._timeouts += 1
                elif not isinstance(exc, _WorkerDied):
                    self._note_error(f"serving a chunk: {type(exc).__name__}: {exc}")
                reason = str(exc) or type(exc).__name__
            left = [i for i in chunk.indices if job.results[i] is None]
            await worker.kill()
            self._workers[index] = None
            if await self._respawn(index, chunk, reason) is None:
                return
            if chunk.attempt >= 1:
                for i in left:
                    job.finish(i, self._fault(job.tests[i], f"worker died twice: {reason}"))
                return
            if not left:
                return
            chunk = _Chunk(job, left, attempt=1)

    async def _respawn(self, index: int, chunk: _Chunk, reason: str) -> _Worker | None:
        """A new worker for the slot, or None after failing the chunk's open tests."""
        self._restarts += 1
        try:
            worker = await self._spawn(index)
        except Exception as spawn_exc:  # SandboxError, or OSError (no fds, no memory)
            why = f"worker could not be restarted ({reason}): {spawn_exc}"
            self._abandon(chunk, why)
            await asyncio.sleep(1)
            return None
        self._workers[index] = worker
        return worker

    async def _run_chunk(self, worker: _Worker, chunk: _Chunk) -> None:
        job = chunk.job
        loop = asyncio.get_running_loop()
        # one timer for the whole chunk, moved on at every frame (a wait_for per
        # frame would cost a task per test)
        try:
            async with asyncio.timeout(self.config.load_grace) as deadline:
                if job.error is None:
                    try:
                        await worker.load(job)
                    except _CompileTimeLimit as exc:
                        job.error = str(exc)  # no other chunk compiles it again
                    else:
                        job.error = worker.compile_error
                if job.error is not None:
                    for i in chunk.indices:
                        job.finish(i, _compile_failure(job.tests[i], job.error))
                    return
                pending: deque[int] = deque()
                for i in chunk.indices:
                    if job.results[i] is not None:
                        continue
                    try:
                        data = _test_input(job, job.tests[i])
                    except Exception as exc:  # the test's own arguments cannot be encoded
                        job.finish(i, self._fault(job.tests[i], f"test input: {exc}"))
                        continue
                    worker.write(_OP_TEST, data)
                    pending.append(i)
                # No drain: the transport sends the inputs while results come back. Waiting
                # for them all to be written first could deadlock (large inputs and outputs)
                # and would count every earlier test's run time against the first deadline.
                step = job.limits.wall_seconds + self.config.result_grace
                deadline.reschedule(loop.time() + step)
                while pending:
                    op, payload = await worker.frame()
                    if op != _OP_RESULT:
                        raise _WorkerDied(f"unexpected frame {op} while running tests")
                    deadline.reschedule(loop.time() + step)
                    i = pending.popleft()
                    result = _decode_result(job, job.tests[i], payload)
                    if result.verdict is Verdict.SF:
                        self._faults += 1
                    self._tests_run += 1
                    job.finish(i, result)
        except TimeoutError as exc:
            raise _WorkerTimeout("the worker sent no frame before its deadline") from exc

    def _fault(self, test: Test, reason: str) -> TestResult:
        self._faults += 1
        return TestResult(id=test.id, verdict=Verdict.SF, error=reason)


def _compile_failure(test: Test, text: str) -> TestResult:
    """A program that did not compile: RE with the compiler's exception class
    (SyntaxError, ValueError for NUL bytes, RecursionError...), or MLE when
    compiling it went over the job's memory budget."""
    name = text.split(":", 1)[0]
    error = name if name.isidentifier() else "SyntaxError"
    if error == "CompileTimeLimit":
        return TestResult(id=test.id, verdict=Verdict.TLE, timeout="cpu", error=error, stderr=text)
    verdict = Verdict.MLE if error == "MemoryError" else Verdict.RE
    return TestResult(id=test.id, verdict=verdict, error=error, stderr=text)


_ARGS = msgspec.json.Encoder()


def _test_input(job: _Job, test: Test) -> bytes:
    if job.program.kind == "call":
        return _ARGS.encode([test.args or [], test.kwargs or {}])
    return (test.input or "").encode()


#: The child's normaliser replaces whatever lies deeper than 200 levels with a
#: tagged object; its tags ($set, $complex, $error, $int) add at most 3 levels.
#: A value nested deeper was not written by it, and is refused before anything
#: downstream (comparison, repr, hints, records) recurses on it.
_NORMALISED_DEPTH = 200
_MAX_DEPTH = _NORMALISED_DEPTH + 4
_CORRUPT = "corrupt result report"


class _Report(msgspec.Struct):
    """The child's report on fd 3. Untrusted: the program may write there too, so
    anything off-shape makes the whole report corrupt (the program's own verdict)."""

    exc: Annotated[str, msgspec.Meta(max_length=256)] | None = None
    #: decoded on its own: a value that cannot be decoded spoils only the value
    value: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    #: decoded on its own (``_traced_lines``), only once its length is known to fit
    #: the program; off-shape, it still makes the whole report corrupt
    lines: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    #: the program died of a MemoryError (or subclass) or an ENOMEM OSError
    mem: bool = False


_REPORT = msgspec.json.Decoder(_Report)
_NO_REPORT = _Report()


_CONTAINERS = frozenset((list, dict))


def _too_deep(value: list[Any] | dict[str, Any], limit: int = _MAX_DEPTH) -> bool:
    """Whether lists and dicts nest more than ``limit`` levels. Iterative, level by
    level; a list or dict holding no container costs one C-level pass over its
    items, so only containers of containers are looped over in Python."""
    level: list[Any] = [value]
    depth = 1
    while level:
        if depth > limit:
            return True
        below: list[Any] = []
        for node in level:
            items = node.values() if type(node) is dict else node
            if not _CONTAINERS.isdisjoint(map(type, items)):
                below.extend([x for x in items if type(x) is list or type(x) is dict])
        level = below
        depth += 1
    return False


# What a result may cost the evaluator. A program writes its stdout (up to
# ``Limits.output_limit``) and its report on fd 3 (up to 16 MiB) itself, so both are
# judged before they are decoded or kept: the work and memory spent on one result
# are bounded by what a legitimate answer to the test needs (the expected value or
# output), never by what the program chose to write.

#: An equal value's JSON is at most this many times the expected's compact JSON (plus
#: the margin). The child writes ``json.dumps`` text (", " and ": " separators, \u
#: escapes); the worst case is a one-digit int matched by a float within tolerance,
#: ``0,`` written back as ``-9.999999999999999e-09, `` (24 bytes for 2: 12x); escapes
#: take at most 3x (6 bytes for 2, 12 for 4); a lone scalar falls within the margin.
_VALUE_FACTOR = 16
_VALUE_MARGIN = 64 * 1024
#: An equal value has the expected's brackets and commas, plus one ``{`` for each
#: number that travels as an ``$int`` tag (at most one per bracket or comma): twice
#: the expected's count, and 4x plus a margin is generous. Counting ``[``, ``{`` and
#: ``,`` in the raw text (also inside strings, which only loosens it) bounds the
#: containers and scalars decoding may build, whatever the value's shape.
_NODE_FACTOR = 4
_NODE_MARGIN = 10_000
#: A returned value is kept in its TestResult (hints, records, exec's rows show it)
#: when its JSON is at most this long, or when it is accepted (then it is the
#: expected one), or when the test has no expected value (the value is what the
#: caller asked for, e.g. a recording); otherwise UNSET, and ``error`` says why.
_KEEP_VALUE = 64 * 1024
#: Stdout kept in a TestResult, in characters: 64 KiB plus 4x the expected output
#: (a legitimate output, accepted or not, is kept whole); beyond it, the first part.
#: The comparison has already seen all of it. A stdio test without an expected
#: output keeps all of it (the output is what the caller asked for); a call test's
#: stdout (never compared) is only decoded as far as it is kept.
_KEEP_OUTPUT = 64 * 1024
_OUTPUT_FACTOR = 4
#: A traced run's lines are a sorted set of the program's own line numbers: at most
#: ~12 bytes of JSON per line of source. Longer was not written by the child.
_LINE_BYTES = 12
_LINES = msgspec.json.Decoder(list[Annotated[int, msgspec.Meta(ge=0, lt=1 << 31)]] | None)


def _structure(text: bytes) -> int:
    """Brackets and commas in JSON text: a bound on the nodes it decodes to (C speed)."""
    return text.count(b"[") + text.count(b"{") + text.count(b",")


def _value_refusal(raw: msgspec.Raw, expected: Any) -> str | None:
    """Why the returned value (its raw JSON) cannot be ``expected``, judged without
    decoding it; None when it has to be decoded and compared."""
    try:
        text = _ARGS.encode(expected)
    except Exception:  # no JSON form (never for a decoded test): compare as before
        return None
    if len(raw) > _VALUE_FACTOR * len(text) + _VALUE_MARGIN:
        return f"returned a value too large to be the expected one ({len(raw)} bytes of JSON)"
    if _structure(bytes(raw)) > _NODE_FACTOR * _structure(text) + _NODE_MARGIN:
        return "returned a value with too many items to be the expected one"
    return None


def _traced_lines(job: _Job, raw: msgspec.Raw | msgspec.UnsetType) -> list[int] | None:
    """The report's lines, refused (ValueError: the report is corrupt) when longer
    than the program's source allows or off-shape."""
    if raw is msgspec.UNSET:
        return None
    source = job.program.source
    if len(raw) > _LINE_BYTES * (source.count("\n") + source.count("\r") + 2) + 64:
        raise ValueError("more traced lines than the program has")
    return _LINES.decode(raw)


def _kept_output(stdout: str, test: Test) -> str:
    if test.output is None:
        return stdout
    keep = _KEEP_OUTPUT + _OUTPUT_FACTOR * len(test.output)
    return stdout if len(stdout) <= keep else stdout[:keep]


def _decode_result(job: _Job, test: Test, payload: bytes) -> TestResult:
    """The TestResult of one RESULT frame. Never raises, whatever the bytes: a frame
    or report that cannot be read is the program's doing (RE, "corrupt result
    report"); a value that cannot be compared is a wrong one (WA)."""
    try:
        return _decode(job, test, payload)
    except Exception:  # defence in depth: _decode handles every case it knows
        return TestResult(id=test.id, verdict=Verdict.RE, error=_CORRUPT)


def _decode(job: _Job, test: Test, payload: bytes) -> TestResult:
    if len(payload) < _RESULT.size:
        return TestResult(id=test.id, verdict=Verdict.RE, error=_CORRUPT)
    (status, flags, cpu_us, wall_us, maxrss_kb, base_kb, n_out, n_err, n_chan,
     n_fault) = _RESULT.unpack_from(payload)
    pos = _RESULT.size
    raw_out = payload[pos:pos + n_out]
    pos += n_out
    stderr = payload[pos:pos + n_err].decode("utf-8", "replace")
    pos += n_err
    chan = payload[pos:pos + n_chan]
    pos += n_chan
    fault = payload[pos:pos + n_fault].decode("utf-8", "replace")

    limits = job.limits
    common = {
        "id": test.id,
        "cpu_ms": cpu_us / 1000,
        "wall_ms": wall_us / 1000,
        "memory_kb": max(0, maxrss_kb - base_kb),
        "stderr": stderr,
    }
    if not flags & _FLAG_CONFINED:
        return TestResult(verdict=Verdict.SF, error=f"sandbox: {fault}", **common)
    if job.program.kind == "call":  # never compared: decode only what is kept
        kept = raw_out[: min(limits.output_limit, 4 * _KEEP_OUTPUT)]  # <= 4 bytes a char
        stdout = kept.decode("utf-8", "replace")[:_KEEP_OUTPUT]
        common["stdout"] = stdout
    else:
        stdout = raw_out[: limits.output_limit].decode("utf-8", "replace")
        common["stdout"] = _kept_output(stdout, test)
    report = _NO_REPORT
    corrupt = False
    traced: list[int] | None = None
    if chan:
        try:
            report = _REPORT.decode(chan)
            traced = _traced_lines(job, report.lines)
        except Exception:  # not JSON, nested too deep, not an object, a field off-shape
            report, corrupt = _NO_REPORT, True
    exc = report.exc
    lines = traced if job.trace else None
    signaled = os.WIFSIGNALED(status)
    sig = os.WTERMSIG(status) if signaled else 0
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0
    cpu_limit_ms = limits.time_limit * 1000

    def result(verdict: Verdict, **kw: Any) -> TestResult:
        return TestResult(verdict=verdict, lines=lines, **common, **kw)

    if flags & _FLAG_WALL_TIMEOUT:
        return result(Verdict.TLE, timeout="wall")
    if cpu_us / 1000 > cpu_limit_ms or sig == signal.SIGXCPU:
        return result(Verdict.TLE, timeout="cpu")
    if len(raw_out) > limits.output_limit:
        return result(Verdict.OLE)
    if report.mem or exc == "MemoryError" or common["memory_kb"] > limits.memory_limit_mb * 1024:
        return result(Verdict.MLE, error=exc)
    if signaled:
        return result(Verdict.RE, error=_SIGNALS.get(sig, f"signal {sig}"))
    if corrupt:
        return result(Verdict.RE, error=_CORRUPT)
    if exc is not None or code != 0:
        return result(Verdict.RE, error=exc or f"exit code {code}")
    if job.program.kind == "call":
        raw = report.value
        if raw is msgspec.UNSET:
            return result(Verdict.RE, error="no return value")
        # no expected value (e.g. recording a reference's calls): the value is what the
        # caller asked for, decoded and kept whatever its size (still compared with None)
        wanted = test.expected is msgspec.UNSET
        expected = None if wanted else test.expected
        refused = None if wanted else _value_refusal(raw, expected)
        if refused is not None:
            return result(Verdict.WA, mismatch="value", error=refused)

        def with_value(verdict: Verdict, value: Any, error: str | None = None,
                       **kw: Any) -> TestResult:
            if wanted or verdict is Verdict.AC or len(raw) <= _KEEP_VALUE:
                return result(verdict, value=value, error=error, **kw)
            note = f"the returned value is not kept ({len(raw)} bytes of JSON, over {_KEEP_VALUE})"
            return result(verdict, error=f"{error}; {note}" if error else note, **kw)

        try:
            value = _CHANNEL.decode(raw)
        except RecursionError:
            return result(Verdict.WA, mismatch="value", error="returned a value nested too deep")
        except Exception as err:  # a number out of range (an integer past 4,300 digits, 1e999)
            return result(Verdict.WA, mismatch="value",
                          error=f"returned a value that cannot be read: {str(err)[:200]}")
        # fewer brackets in the whole report than the limit: no need to walk the value
        if ((type(value) is list or type(value) is dict)
                and chan.count(b"[") + chan.count(b"{") > _MAX_DEPTH and _too_deep(value)):
            return result(Verdict.WA, mismatch="value", error="returned a value nested too deep")
        if type(value) is dict and "$type" in value and not isinstance(expected, dict):
            kind = value["$type"]
            kind = kind if type(kind) is str and len(kind) <= 100 else "object"
            return with_value(Verdict.WA, value, mismatch="value",
                              error=f"returned a {kind}, which has no JSON value")
        try:
            equal = bool(values_equal(expected, value, job.checker))
        except Exception as err:  # the comparator's failure is not the sandbox's
            return with_value(Verdict.WA, value, mismatch="value",
                              error=f"the value could not be compared ({type(err).__name__})")
        if equal:
            return with_value(Verdict.AC, value)
        return with_value(Verdict.WA, value, mismatch="value")
    if test.output is None:  # nothing to compare with (e.g. computing a reference's outputs)
        return result(Verdict.AC)
    try:
        mismatch = compare_output(test.output, stdout, job.checker)
    except Exception as err:
        return result(Verdict.WA, mismatch="value",
                      error=f"the output could not be compared ({type(err).__name__})")
    if mismatch is None:
        return result(Verdict.AC)
    return result(Verdict.WA, mismatch=mismatch)
