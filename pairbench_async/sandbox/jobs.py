"""A job (one program on many tests) and the chunks the pool cuts it into.

Shared by the pool that schedules chunks, the worker handle that loads a job's
program and the decoder that judges its results, so none of them imports another
for it. Also what a job sends a worker: the marshalled program of a LOAD frame
(hashed, so a worker keeps a program loaded between chunks of the same job) and
the input of each TEST frame; expected outputs never leave the evaluator.
"""

from __future__ import annotations

import asyncio
import hashlib
import marshal
from collections.abc import Sequence

import msgspec

from ..core.types import Checker, Limits, Program, Test, TestResult

__all__ = ["_ARGS", "_Chunk", "_Job", "_test_input"]

_FILENAME = "solution.py"
_ARGS = msgspec.json.Encoder()


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


def _test_input(job: _Job, test: Test) -> bytes:
    if job.program.kind == "call":
        return _ARGS.encode([test.args or [], test.kwargs or {}])
    return (test.input or "").encode()
