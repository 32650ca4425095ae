"""The body of the long-lived actor on each node: a local confined pool, driven remotely.

It imports no Ray (the driver wraps it with ``ray.remote``), so it is the plain
:class:`~..sandbox.pool.SandboxPool` behind bytes: a job arrives as a msgpack
:class:`~..sandbox.interface.SandboxJob`, its results leave as msgpack
:class:`~..core.types.TestResult` s. The pool's workers are fresh ``python -S``
processes as on one machine (they never import Ray: a worker that has imported it
forks 0.45 -> 3.4-5.3 ms per test), and each watches this actor's pid, so none
outlives an actor that is SIGKILLed.
"""

from __future__ import annotations

import os
import socket
from typing import Any

import msgspec

from ..core.errors import SandboxError
from ..sandbox.config import SandboxConfig
from ..sandbox.interface import decode_job, encode
from ..sandbox.pool import SandboxPool

__all__ = ["NodeInfo", "NodeSandbox"]


class NodeInfo(msgspec.Struct, frozen=True):
    """What a started node actor reports: where it runs and what its pool confines."""

    pid: int
    hostname: str
    workers: int
    confinement: dict[str, Any]


class NodeSandbox:
    """One node's sandbox pool (``config_bytes``: a msgpack :class:`SandboxConfig`)."""

    def __init__(self, config_bytes: bytes) -> None:
        self._config = msgspec.msgpack.decode(config_bytes, type=SandboxConfig)
        self._pool: SandboxPool | None = None

    async def start(self) -> bytes:
        self._pool = SandboxPool(self._config)
        await self._pool.start()
        return msgspec.msgpack.encode(NodeInfo(pid=os.getpid(), hostname=socket.gethostname(),
                                               workers=self._pool.workers,
                                               confinement=self._pool.confinement()))

    async def run(self, job_bytes: bytes) -> bytes:
        if self._pool is None:
            raise SandboxError("the node's sandbox pool is not started")
        job = decode_job(job_bytes)
        results = await self._pool.run(job.program, job.tests, job.limits, checker=job.checker,
                                       trace=job.trace)
        return encode(results)

    async def statistics(self) -> bytes:
        """The pool's counters; also the driver's heartbeat (a frozen node never answers)."""
        if self._pool is None:
            raise SandboxError("the node's sandbox pool is not started")
        return encode(self._pool.statistics())

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
