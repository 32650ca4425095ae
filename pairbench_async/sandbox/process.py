"""One worker process, the framed pipes to it, and running a chunk of tests on it.

A worker is ``worker.py`` started as a fresh ``python -S`` process (never forked
from the evaluator, so it inherits nothing of ours) that leads a session of its
own. This module starts one and waits for its READY report, speaks the
length-prefixed frame protocol, holds a worker to its deadlines, turns one that
dies, fails or misses a deadline into an exception, and stops or kills it with its
zygote and test child. Kept apart from the pool, which decides what each worker
serves and what happens when one is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import signal
import sys
from collections import deque
from collections.abc import Callable
from typing import Any

from ..core.errors import SandboxError
from ..core.failures import NONZERO_EXIT
from ..core.types import Test, TestResult, Verdict
from .cgroups import WorkerCgroup
from .config import SandboxConfig
from .host import HostPaths, worker_env
from .jobs import Chunk, Job, test_input
from .results import SIGNAL_NAMES, compile_failure, decode_result, interrupted_late, signal_name
from .wire import (
    EXIT_COMPILE_CPU,
    FLAG_CPU_TIMEOUT,
    FLAG_SHARED,
    HEADER,
    OP_END,
    OP_FATAL,
    OP_LOAD,
    OP_LOADED,
    OP_QUIT,
    OP_READY,
    OP_RESULT,
    OP_TEST,
    OP_ZDIED,
    RESULT,
    ZDIED,
)

__all__ = ["WORKER", "Worker", "WorkerDied", "WorkerTimeout", "start_worker"]

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")


@functools.cache
def _worker_source() -> str:
    """worker.py's text: the worker runs it with ``-c``, so that no code object, frame or
    ``sys.argv`` of the interpreter a program inherits names the package's directory."""
    with open(WORKER, encoding="utf-8") as f:
        return f.read()


class WorkerDied(Exception):
    """The worker process (or its zygote) ended while serving a chunk."""


class WorkerTimeout(WorkerDied):
    """The worker sent no frame before its deadline (frozen or wedged): it is killed."""


class _ZygoteDied(WorkerDied):
    """The zygote ended abnormally. While the pool awaited a test's result, one of the
    program's test children was running (or about to): that is the program's doing,
    since nothing else in the zygote's PID namespace runs its code. While loading, a
    SIGXCPU or exit status wire.EXIT_COMPILE_CPU is the compile's CPU budget
    (the program's TLE); anything else there is handled as a dead worker."""

    def __init__(self, status: int, oom: bool) -> None:
        super().__init__(f"zygote died ({_describe_status(status)})")
        self.status = status
        self.oom = oom
        #: the index of the test whose result was awaited, set by the chunk's run
        self.head: int | None = None

    def verdict(self, test: Test) -> TestResult:
        """The test whose child ran when the zygote died: MLE when the memory cgroup's
        OOM killer struck, else RE with the signal named."""
        if self.oom:
            return TestResult(id=test.id, verdict=Verdict.MLE, error="killed by the OOM killer")
        # the status is the program's to pick: named from the closed vocabulary only
        error = (signal_name(os.WTERMSIG(self.status)) if os.WIFSIGNALED(self.status)
                 else NONZERO_EXIT)
        return TestResult(id=test.id, verdict=Verdict.RE,
                          error=error, stderr=f"the program's zygote ended ({error})")


class Worker:
    """One worker process, the pipes to it, and the cgroups of its programs."""

    def __init__(self, index: int, proc: asyncio.subprocess.Process, report: dict[str, Any],
                 uid: int = -1, cgroup: WorkerCgroup | None = None) -> None:
        self.index = index
        self.proc = proc
        self.report = report
        self.uid = uid
        self.cgroup = cgroup
        self.loaded: bytes | None = None
        self.compile_error: str | None = None

    async def frame(self) -> tuple[int, bytes]:
        assert self.proc.stdout is not None
        try:
            head = await self.proc.stdout.readexactly(HEADER.size)
            op, n = HEADER.unpack(head)
            payload = await self.proc.stdout.readexactly(n) if n else b""
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            raise WorkerDied("worker exited") from exc
        if op == OP_FATAL:
            raise WorkerDied(payload.decode("utf-8", "replace"))
        if op == OP_ZDIED:
            status, oom = ZDIED.unpack(payload)
            self.loaded = None
            raise _ZygoteDied(status, bool(oom))
        return op, payload

    def write(self, op: int, payload: bytes = b"") -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(HEADER.pack(op, len(payload)))
        if payload:
            self.proc.stdin.write(payload)

    async def drain(self) -> None:
        assert self.proc.stdin is not None
        try:
            await self.proc.stdin.drain()
        except (ConnectionError, BrokenPipeError) as exc:
            raise WorkerDied("worker pipe closed") from exc

    def send_load(self, job: Job) -> bool:
        """Write the LOAD frame of ``job``'s program unless it is already loaded; True
        if one was written (its LOADED is then awaited by ``loaded_reply``). The
        chunk's TEST frames may follow at once: the zygote reads them after compiling,
        and a zygote that could not compile (or died) leaves them to the worker, which
        skips them, so LOAD costs no round trip of its own."""
        if self.loaded == job.hash:
            return False
        if self.loaded is not None:
            self.write(OP_END)
        self.loaded = None
        self.write(OP_LOAD, job.payload)
        return True

    async def loaded_reply(self, job: Job) -> None:
        op, payload = await self.frame()
        if op != OP_LOADED:
            raise WorkerDied(f"unexpected frame {op} after LOAD")
        self.loaded = job.hash
        self.compile_error = payload[1:].decode("utf-8", "replace") if payload[:1] == b"\x01" else None

    async def run_chunk(self, chunk: Chunk, load_grace: float, result_grace: float,
                        fault: Callable[[Test, str], TestResult],
                        tested: Callable[[TestResult], None]) -> None:
        """Run ``chunk``: load its program, send each test it has not finished and give
        each decoded result to ``tested`` (to count) and then to the job. A program that
        does not compile fails every test of the chunk; a test whose input cannot be
        encoded is ``fault``'s. Deadlines: LOADED within ``load_grace``, then each RESULT
        within the test's wall limit plus ``result_grace`` after the previous frame; a
        worker that misses one raises WorkerTimeout."""
        job = chunk.job
        loop = asyncio.get_running_loop()
        # one timer for the whole chunk, moved on at every frame (a wait_for per
        # frame would cost a task per test)
        try:
            async with asyncio.timeout(load_grace) as deadline:
                while True:
                    try:
                        await self._run_once(chunk, deadline, result_grace, fault, tested)
                        return
                    except _ZygoteDied as died:
                        # A test child was running: the program ended its own zygote (the
                        # worker is fine). That test has its verdict; the program is
                        # loaded again for the rest, which the worker skipped.
                        if died.head is None:
                            raise
                        i = died.head
                        result = died.verdict(job.tests[i])
                        tested(result)
                        job.finish(i, result)
                        if all(job.results[k] is not None for k in chunk.indices):
                            return
                        deadline.reschedule(loop.time() + load_grace)
        except TimeoutError as exc:
            raise WorkerTimeout("the worker sent no frame before its deadline") from exc

    async def _run_once(self, chunk: Chunk, deadline: asyncio.Timeout, result_grace: float,
                        fault: Callable[[Test, str], TestResult],
                        tested: Callable[[TestResult], None]) -> None:
        """Load the chunk's program and run the tests it has not finished; a zygote
        that dies raises _ZygoteDied naming the test it was running (``head``)."""
        job = chunk.job
        loop = asyncio.get_running_loop()
        loading = job.error is None and self.send_load(job)
        if job.error is None and not loading:
            # loaded already, by an earlier call of the same program: a zygote that could
            # not compile it reads no TEST frame (only END), so its error is this job's too
            job.error = self.compile_error
        pending: deque[int] = deque()
        unencodable: list[tuple[int, Exception]] = []
        if job.error is None:
            for i in chunk.indices:
                if job.results[i] is not None:
                    continue
                try:
                    data = test_input(job, i)
                except Exception as exc:  # the test's own arguments cannot be encoded
                    unencodable.append((i, exc))
                    continue
                self.write(OP_TEST, data)
                pending.append(i)
        if loading:
            try:
                await self.loaded_reply(job)
            except _ZygoteDied as died:
                if ((os.WIFSIGNALED(died.status) and os.WTERMSIG(died.status) == signal.SIGXCPU)
                        or (os.WIFEXITED(died.status)
                            and os.WEXITSTATUS(died.status) == EXIT_COMPILE_CPU)):
                    # only compiling runs under a CPU limit in the zygote: the program's fault
                    job.error = ("CompileTimeLimit: compiling the program took more than its "
                                 "CPU budget")
                else:
                    raise
            else:
                job.error = self.compile_error
        if job.error is not None:
            # (the TEST frames sent are skipped: by the zygote that could not compile,
            # or by the worker once its zygote died)
            for i in chunk.indices:
                if job.results[i] is None:
                    job.finish(i, compile_failure(job.tests[i], job.error))
            return
        for i, exc in unencodable:
            job.finish(i, fault(job.tests[i], f"test input: {exc}"))
        # No drain: the transport sends the inputs while results come back. Waiting
        # for them all to be written first could deadlock (large inputs and outputs)
        # and would count every earlier test's run time against the first deadline.
        step = job.max_wall + result_grace
        deadline.reschedule(loop.time() + step)
        while pending:
            try:
                op, payload = await self.frame()
            except _ZygoteDied as died:
                died.head = pending[0]
                raise
            if op != OP_RESULT:
                raise WorkerDied(f"unexpected frame {op} while running tests")
            deadline.reschedule(loop.time() + step)
            i = pending.popleft()
            result = decode_result(job, job.tests[i], payload)
            if _again_alone(payload, result):
                # under the lone limit of its place: the tests run since may have loosened
                # the rule's state (a slower finished test), which a child of its own
                # running it there would not have seen
                self.write(OP_TEST, test_input(job, i, alone=True, pinned_us=_alone_us(payload)))
                pending.append(i)
                continue
            tested(result)
            job.finish(i, result)

    async def stop(self) -> None:
        """Stop the worker and wait until nothing it started is left.

        SIGTERM makes the worker kill its zygote and reap every descendant (it is
        their subreaper) before it exits, so when this returns no process of the
        worker remains; a worker that does not exit in time is killed.
        """
        with contextlib.suppress(Exception):
            self.write(OP_QUIT)
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.proc.wait(), timeout=5)
        except (asyncio.TimeoutError, Exception):
            await self.kill()
        await self._release()

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
        await self._release()

    async def _release(self) -> None:
        """Once the worker is gone: nothing may remain in its cgroups (the PID namespace
        already ended everything; this is the second layer), then remove them."""
        cgroup, self.cgroup = self.cgroup, None
        if cgroup is not None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(cgroup.remove)


def _again_alone(payload: bytes, result: TestResult) -> bool:
    """Whether a test's result must be taken again in a child of its own: it ran in a
    resident child after another test (FLAG_SHARED) and did not pass, so what its
    program's earlier tests left in the process may be why. (A shared test that ended its
    child the zygote already ran again in its place, but for a kill at its CPU limit, which
    stands; what else comes here ended cleanly, with a wrong value or past its limit. A
    call without an expected value never runs shared: jobs.test_input.) A timeout at its
    CPU limit stands, unless its interrupt came once the program had returned (the report's
    ``late``): its limit, the shared floor's, went to the harness's work on its value."""
    if len(payload) < RESULT.size:
        return False
    flags = RESULT.unpack_from(payload)[1]
    if not flags & FLAG_SHARED or result.verdict is Verdict.AC:
        return False
    if result.verdict is Verdict.TLE and flags & FLAG_CPU_TIMEOUT:
        return interrupted_late(payload)
    return True


def _alone_us(payload: bytes) -> int:
    """The CPU limit (us) a child of its own had at a RESULT's test's place."""
    return int(RESULT.unpack_from(payload)[8])


def _describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return SIGNAL_NAMES.get(os.WTERMSIG(status), f"signal {os.WTERMSIG(status)}")
    return f"exit {os.WEXITSTATUS(status)}"


async def start_worker(index: int, config: SandboxConfig, host: HostPaths, base: str,
                        uid: int, tail: deque[bytes],
                        cgroup: WorkerCgroup | None = None) -> Worker:
    """Start worker ``index`` in its directory under ``base`` (its programs as ``uid``
    when >= 0, in ``cgroup`` when given) and wait for its READY report; ``tail`` keeps
    the end of its stderr for the error raised when it fails to start (SandboxError)."""
    read_paths, extra_paths, confine_path, origins = host
    scratch = os.path.join(base, f"w{index}")
    os.makedirs(scratch, mode=0o700, exist_ok=True)
    gid = uid
    if uid >= 0:
        os.chown(scratch, uid, gid)
    cfg = {
        "confine_path": confine_path,
        "scratch": scratch,
        "scratch_mb": config.scratch_mb,
        "uid": uid,
        "gid": gid,
        "confine": config.confine,
        "read_paths": read_paths,
        "extra_paths": extra_paths,
        "allowed_packages": origins,
        "nproc": config.nproc,
        "nofile": config.nofile,
        "stack_mb": config.stack_mb,
        "resident": config.resident,
        "pool_pid": os.getpid(),
        "expose_paths": [sys.base_prefix, sys.prefix, *extra_paths],
        "cgroup": cgroup.spec() if cgroup is not None else None,
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-S", "-s", "-P", "-B", "-X", "utf8", "-c", _worker_source(),
        json.dumps(cfg),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=worker_env(scratch),
        cwd="/",
        start_new_session=True,
    )
    assert proc.stderr is not None
    asyncio.create_task(_drain_stderr(proc.stderr, tail))
    worker = Worker(index, proc, {}, uid, cgroup)
    try:
        op, payload = await asyncio.wait_for(worker.frame(), timeout=config.load_grace)
        if op != OP_READY:
            raise SandboxError(f"sandbox worker sent frame {op} instead of READY")
        worker.report = json.loads(payload)
    except (WorkerDied, asyncio.TimeoutError, ValueError, SandboxError) as exc:
        await worker.kill()
        if isinstance(exc, SandboxError):
            raise
        text = b"".join(tail).decode("utf-8", "replace")[-2000:]
        reason = exc if str(exc) else type(exc).__name__
        raise SandboxError(f"sandbox worker failed to start: {reason}\n{text}") from exc
    except BaseException:
        await worker.kill()
        raise
    return worker


async def _drain_stderr(stream: asyncio.StreamReader, tail: deque[bytes]) -> None:
    with contextlib.suppress(Exception):
        while chunk := await stream.read(4096):
            tail.append(chunk)
