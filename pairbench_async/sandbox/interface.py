"""The one small interface every sandbox offers, and what crosses it.

The orchestrator, ``exec``, ``validate`` and ``build-dataset`` talk to a sandbox only
through :class:`Sandbox` (run a program on tests under limits, statistics, close), so
that the local pool (:class:`~.pool.SandboxPool`) and a pool per node of a cluster
(``cluster.ray_sandbox.RaySandbox``) stand in for each other and an embedder can bring
a sandbox of its own. A job and its results are msgspec Structs, which cross a
process or network boundary as typed msgpack (:func:`encode`, ``decode_*``) and never
as pickles of live objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import msgspec

from ..core.types import Checker, Limits, Program, Test, TestResult

__all__ = ["Sandbox", "SandboxJob", "SandboxStatistics", "decode_job", "decode_results",
           "decode_statistics", "encode"]


class SandboxJob(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One program on some tests: what a remote sandbox receives (expected outputs
    included: the comparison happens in the pool's trusted process, never in a worker)."""

    program: Program
    tests: list[Test]
    limits: Limits = Limits()
    checker: Checker = Checker()
    trace: bool = False


class SandboxStatistics(msgspec.Struct, frozen=True):
    """A snapshot of a sandbox's counters (for progress lines, run statistics and benchmarks)."""

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
    #: Nodes serving now (1 for a local pool).
    nodes: int = 1
    #: Nodes lost while serving (killed actor, lost or frozen node).
    nodes_lost: int = 0
    #: Batches of tests run again on another node because their node was lost
    #: mid-batch; each test still has exactly one result.
    retries: int = 0
    #: Tests of those batches.
    tests_retried: int = 0


@runtime_checkable
class Sandbox(Protocol):
    """Run untrusted programs on tests, confined; the results in test order.

    ``run`` returns one :class:`TestResult` per test: a program's failures are
    verdicts, the sandbox's own are ``SF``; it raises (``SandboxError``) only when
    the sandbox is closed or cannot start.
    """

    @property
    def workers(self) -> int: ...

    async def start(self) -> None: ...

    async def aclose(self) -> None: ...

    async def run(self, program: Program, tests: Sequence[Test], limits: Limits = Limits(), *,
                  checker: Checker = Checker(), trace: bool = False) -> list[TestResult]: ...

    def statistics(self) -> SandboxStatistics: ...

    def confinement(self) -> dict[str, Any]: ...


#: msgpack extension codes of the tagged fallback (values plain msgpack cannot carry)
_EXT_INT = 1  # an int outside msgpack's 64 bits, as its decimal digits
_EXT_STR = 2  # a str with a lone surrogate, as UTF-8 with surrogatepass

_ENCODER = msgspec.msgpack.Encoder()


def _ext_hook(code: int, data: memoryview) -> Any:
    if code == _EXT_INT:
        return int(bytes(data))
    if code == _EXT_STR:
        return bytes(data).decode("utf-8", "surrogatepass")
    return msgspec.msgpack.Ext(code, bytes(data))


_JOB = msgspec.msgpack.Decoder(SandboxJob, ext_hook=_ext_hook)
_RESULTS = msgspec.msgpack.Decoder(list[TestResult], ext_hook=_ext_hook)
_STATISTICS = msgspec.msgpack.Decoder(SandboxStatistics, ext_hook=_ext_hook)
_ANY = msgspec.msgpack.Decoder(ext_hook=_ext_hook)
_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1


def _tagged(value: Any) -> Any:
    """``value`` (builtins) with each big int and each str holding a lone surrogate as an Ext."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if _INT64_MIN <= value <= _UINT64_MAX:
            return value
        return msgspec.msgpack.Ext(_EXT_INT, str(value).encode())
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return msgspec.msgpack.Ext(_EXT_STR, value.encode("utf-8", "surrogatepass"))
        return value
    if isinstance(value, list):
        return [_tagged(v) for v in value]
    if isinstance(value, dict):
        return {_tagged(k): _tagged(v) for k, v in value.items()}
    return value


def encode(value: SandboxJob | list[TestResult] | SandboxStatistics) -> bytes:
    """msgpack bytes of a job, its results or statistics (what a remote call carries).

    The local pool handles a call test's int beyond 64 bits and a str with a lone
    surrogate (a program's source or output); plain msgpack carries neither, so such a
    value falls back to a tagged encoding (msgpack extension types) that the
    ``decode_*`` functions undo: a remote sandbox sees exactly what a local one does.
    """
    try:
        return _ENCODER.encode(value)
    except (OverflowError, UnicodeEncodeError):
        return _ENCODER.encode(_tagged(msgspec.to_builtins(value, builtin_types=(bytes,))))


def _decode(decoder: msgspec.msgpack.Decoder[Any], kind: Any, data: bytes) -> Any:
    try:
        return decoder.decode(data)
    except msgspec.ValidationError:
        # a tagged str where the type says str: decode untyped (the ext hook restores
        # it), then check the type; a real mismatch raises here as it would have
        return msgspec.convert(_ANY.decode(data), kind)


def decode_job(data: bytes) -> SandboxJob:
    return _decode(_JOB, SandboxJob, data)


def decode_results(data: bytes) -> list[TestResult]:
    return _decode(_RESULTS, list[TestResult], data)


def decode_statistics(data: bytes) -> SandboxStatistics:
    return _decode(_STATISTICS, SandboxStatistics, data)
