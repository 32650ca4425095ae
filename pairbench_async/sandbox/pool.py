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

This module schedules and supervises; beside it are the settings (:mod:`.config`),
jobs and their chunks (:mod:`.jobs`), a worker process and a chunk's run on it
(:mod:`.process`), a RESULT frame's verdict (:mod:`.results`) and the host (:mod:`.host`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import warnings
from collections import deque
from collections.abc import Sequence
from functools import partial
from typing import Any

import msgspec

from ..core.errors import ConfigError, ConfinementUnavailable, SandboxError, SandboxNotice
from ..core.types import Checker, Limits, Program, Test, TestResult, Verdict
from .cgroups import CgroupTree
from .config import SandboxConfig
from .host import (
    SCRATCH_PREFIX,
    UID_SLOT,
    HostPaths,
    claim_uid_range,
    confinement_report,
    host_paths,
    sweep_stale_scratch,
    uid_alive,
)
from .interface import SandboxStatistics
from .jobs import Chunk, Job, LoopRule, check_limits
from .process import Worker, WorkerDied, WorkerTimeout, start_worker
from .results import compile_failure

__all__ = ["SandboxConfig", "SandboxPool", "SandboxStatistics"]


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
        self._workers: list[Worker | None] = [None] * n
        self._busy: list[Chunk | None] = [None] * n  # the chunk each slot is serving
        self._tasks: list[asyncio.Task[None] | None] = []
        self._queue: deque[Chunk] = deque()
        self._wakeup: asyncio.Condition | None = None
        self._admit: asyncio.Semaphore | None = None
        self._base: str | None = None
        self._uid_base = -1
        self._uid_next = 0  # uids are drawn in turn from the pool's range, never reused live
        self._spawns = 0
        self._cgroups: CgroupTree | None = None
        self._cgroups_missing = ""
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
        self._static: HostPaths | None = None
        self._holding: set[Job] = set()  # jobs with chunks held back until a first result

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
        self._static = host_paths(self.config.allowed_packages)
        sweep_stale_scratch()
        if os.getuid() == 0 and self.config.confine:
            if self.config.uid_base is None:
                self._uid_base, self._uid_lock, self._uid_lock_path = claim_uid_range()
            else:
                self._uid_base = self.config.uid_base
            if self._n > UID_SLOT:
                raise SandboxError(f"at most {UID_SLOT} workers per pool")
        if self.config.confine:
            self._cgroups, self._cgroups_missing = CgroupTree.create(CgroupTree.unique_name())
        self._base = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
        os.chmod(self._base, 0o711)  # an unprivileged child may traverse, not list
        try:
            workers = await asyncio.gather(*(self._spawn(i) for i in range(self._n)))
        except BaseException:
            await self.aclose()
            raise
        for i, w in enumerate(workers):
            self._workers[i] = w
        self._report = workers[0].report
        if self._cgroups_missing:
            self._report.setdefault("errors", []).append(f"cgroups: {self._cgroups_missing}")
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
        elif self.config.confine and self._cgroups_missing and not self._report.get("root"):
            warnings.warn("pairbench_async sandbox: no cgroup for an ordinary user; memory_kb "
                          "adds what a test leaves in scratch and its output files by hand",
                          SandboxNotice, stacklevel=2)
        self._tasks = [None] * self._n
        for i in range(self._n):
            self._start_slot(i)

    async def _spawn(self, index: int) -> Worker:
        """A new worker for slot ``index``: a uid no live process has, cgroups of its own."""
        assert self._base is not None and self._static is not None
        self._spawns += 1
        uid = self._fresh_uid() if self._uid_base >= 0 else -1
        cgroup = None
        if self._cgroups is not None:
            cgroup = await asyncio.to_thread(self._cgroups.worker, f"w{index}-{self._spawns}",
                                             self.config.nproc + 2)
        try:
            return await start_worker(index, self.config, self._static, self._base, uid,
                                       self._stderr_tails[index], cgroup)
        except BaseException:
            if cgroup is not None:
                await asyncio.to_thread(cgroup.remove)
            raise

    def _fresh_uid(self) -> int:
        """The next uid of the pool's range that no worker holds and no process runs as.

        A worker's PID namespace ends everything of its uid before the worker is
        reaped, so this only proves it; a uid with a live process is skipped."""
        held = {w.uid for w in self._workers if w is not None}
        for _ in range(UID_SLOT):
            uid = self._uid_base + self._uid_next % UID_SLOT
            self._uid_next += 1
            if uid not in held and not uid_alive(uid):
                return uid
        raise SandboxError("every sandbox uid of the pool's range has a live process")

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
        for job in list(self._holding):
            self._queue.extend(job.held)
            job.held = []
        self._holding.clear()
        while self._queue:
            chunk = self._queue.popleft()
            for i in chunk.indices:
                chunk.job.finish(i, self._fault(chunk.job.tests[i], "sandbox pool closed"))
        if self._cgroups is not None:
            await asyncio.to_thread(self._cgroups.remove)
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

        Limits: a test's CPU limit is its ``time_limit`` when it has one, else
        ``limits.time_limit``; its wall limit ``limits.wall_limit``, else 3 x CPU + 1 s.

        The loop rule (``SandboxConfig.loop_factor``, ``loop_floor``, ``loop_probe``,
        ``loop_floor_shared``; ``jobs.probe_limit`` and ``jobs.tight_limit`` state it): a test whose
        reference time ``ref_ms`` is known (the importers measure it; ``pairbench run``
        measures the references it checks) runs under

            min(own limit, max(loop_probe, loop_floor + loop_factor x test.ref_ms,
                               loop_factor x the slowest test of the call that finished))

        of CPU, and once a test of this call timed out, every later test runs under

            min(own limit, max(loop_floor, loop_floor + loop_factor x test.ref_ms,
                               loop_factor x the slowest test of the call that finished))

        (with no ``ref_ms``, the first form is the test's own limit and the second
        drops its middle term), ``loop_floor_shared`` in place of ``loop_floor`` for a
        test that runs after another in a resident child (its CPU counted from its
        handover, no fork in it); at most 3 x that + 1 s of wall. "Later" is in each
        worker's order: the job's first chunk runs alone until its first result is in,
        then the other chunks are queued, starting under the rule if a test already
        timed out; a worker also applies it after a timeout of its own. So a program
        that loops from its first test spends ``loop_probe`` (0.05 s) on it and
        ``loop_floor_shared`` + 10 x the reference's time on each other test, not its own
        limit on each (a resident child is interrupted at the limit, not killed: the
        tests after it need no fork). A verdict differs from running every test to its own limit
        only for a test that the program would finish only beyond that bound: it is
        TLE instead. ``ref_ms`` is the reference's own CPU time (its module and call,
        without the ~1 ms fixed cost of a test, which ``loop_floor`` covers), so with
        ``loop_factor`` 10 that is a test needing more than 10 x its reference's time
        (and, before any timeout of the call, more than 0.05 s). A test with no
        ``ref_ms`` runs to its own limit until a test of its call timed out.
        ``loop_factor=0`` runs every test to its own limit, and so does a traced call
        (``trace=True``: sys.settrace makes a program several times slower than the
        untraced run its reference's time was measured by).
        """
        if self._closed:
            raise SandboxError("the sandbox pool is closed")
        for value, kind in ((program, Program), (limits, Limits), (checker, Checker)):
            if not isinstance(value, kind):  # the caller's mistake, not a verdict on the program
                raise ConfigError(f"SandboxPool.run takes a {kind.__name__}, got a {type(value).__name__} "
                                  f"({value!r:.80})")
        check_limits(limits, tests)
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
                return [compile_failure(t, text) for t in tests]
            # A traced run (a reference's lines, sys.settrace) is several times slower
            # than the untraced one its ref_ms measured: it runs to its own limits.
            job = Job(program, tests, limits, checker, trace,
                      LoopRule(0 if trace else self.config.loop_factor, self.config.loop_floor,
                               self.config.loop_probe, self.config.loop_floor_shared))
            # Spread a job over the workers that are idle now; with none idle (other jobs
            # queued), keep it whole: one zygote per program instead of one per worker
            # (a load and a compile each), and a looping program's first timeout
            # happens once, not on every worker at once.
            idle = sum(b is None for b in self._busy) - len(self._queue)
            size = max(1, min(self.config.chunk, -(-len(job.tests) // max(1, min(idle, self._n)))))
            chunks = [Chunk(job, list(range(start, min(start + size, len(job.tests)))))
                      for start in range(0, len(job.tests), size)]
            # The job's other chunks wait for its first result (one test's time, ~2 ms for
            # most programs): a program that loops on its first test then times out
            # once (at its probe, or its own limit), and the other workers start
            # under the loop rule.
            self._queue.append(chunks[0])
            if len(chunks) > 1:
                job.held = chunks[1:]
                job.on_first = self._release
                self._holding.add(job)
            async with self._wakeup:
                self._wakeup.notify_all()
            await asyncio.shield(job.done)
            self._jobs_done += 1
            return [r for r in job.results if r is not None]
        finally:
            self._admit.release()

    def _release(self, job: Job) -> None:
        """Queue the chunks ``job`` held back until its first result (see ``run``)."""
        held, job.held = job.held, []
        self._holding.discard(job)
        self._queue.extend(held)
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        assert self._wakeup is not None
        async with self._wakeup:
            self._wakeup.notify_all()

    # -- workers -----------------------------------------------------------

    async def _next_chunk(self, worker: Worker | None) -> Chunk:
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

    def _start_slot(self, index: int, stale: Worker | None = None) -> None:
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

    async def _serve(self, index: int, stale: Worker | None = None) -> None:
        """One worker slot: take chunks, run them; only cancellation ends it."""
        if stale is not None:
            await stale.kill()
        while True:
            chunk: Chunk | None = None
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

    def _abandon(self, chunk: Chunk, reason: str) -> None:
        job = chunk.job
        for i in chunk.indices:
            if job.results[i] is None:
                job.finish(i, self._fault(job.tests[i], reason))

    async def _serve_chunk(self, index: int, chunk: Chunk) -> None:
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
                await worker.run_chunk(chunk, self.config.load_grace, self.config.result_grace,
                                       self._fault, self._tested)
                return
            except Exception as exc:
                if isinstance(exc, WorkerTimeout):
                    self._timeouts += 1
                elif not isinstance(exc, WorkerDied):
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
            chunk = Chunk(job, left, attempt=1)

    async def _respawn(self, index: int, chunk: Chunk, reason: str) -> Worker | None:
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

    def _tested(self, result: TestResult) -> None:
        """Count a test a worker ran, before its result goes to the job."""
        if result.verdict is Verdict.SF:
            self._faults += 1
        self._tests_run += 1

    def _fault(self, test: Test, reason: str) -> TestResult:
        self._faults += 1
        return TestResult(id=test.id, verdict=Verdict.SF, error=reason)

