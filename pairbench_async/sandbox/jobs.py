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
import itertools
import marshal
import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import msgspec

from ..core.errors import ConfigError
from ..core.types import Checker, Limits, Program, Test, TestResult, Verdict
from .wire import HEAD_ISOLATED, HEAD_START_TIGHT, TEST_HEAD

__all__ = ["ARGS", "Chunk", "IO_SECONDS_PER_BYTE", "IO_SECONDS_PER_VALUE", "Job", "LoopRule", "TEST_HEAD", "check_limits", "io_allowance", "probe_limit",
           "test_input", "tight_limit"]

_FILENAME = "solution.py"
ARGS = msgspec.json.Encoder()
#: A TEST frame's payload starts with a ``wire.TEST_HEAD`` (sandbox/confine.c's struct
#: test_head): job serial, the test's CPU and wall limits (ms), the loop rule's
#: floor + factor x the reference's time (us, 0: unknown), its probe limit (us, 0: none),
#: its floor and its floor for a test after another in a resident child (us), and factor
#: (0: off), flags (``HEAD_START_TIGHT``: a test of the job
#: already timed out).
_U32 = 2**31 - 1  # a C int on the way: ~24 days in ms
_serials = itertools.count(1)


class LoopRule(NamedTuple):
    """The loop rule's parameters (SandboxConfig.loop_factor, loop_floor, loop_probe,
    loop_floor_shared)."""

    factor: int = 10
    floor: float = 0.002
    probe: float = 0.05
    #: the floor of a test that runs after another in a resident child (at most ``floor``)
    floor_shared: float = 0.0005


#: What the loop rule allows a call test for the harness's decoding of its arguments and
#: encoding of its value: by size (JSON, ~100-200 MB/s here: 50 MB/s) and by the number of
#: values, since encoding a value is a Python step per element (~0.35 us a small integer,
#: ~1.7 us a set's item, which is sorted on its JSON text): 3 us a value. By size alone, the
#: reference itself was TLE on a 100,000-item set (~0.17 s of encoding against 0.1 s).
IO_SECONDS_PER_BYTE = 1 / 50e6
IO_SECONDS_PER_VALUE = 3e-6


def _us(seconds: float) -> int:
    """A loop-rule bound in whole microseconds, at least 1 (the head's 64-bit fields)."""
    return min(_U32 * 1000, max(1, math.ceil(seconds * 1e6)))


def _ms(seconds: float) -> int:
    return min(_U32, max(1, math.ceil(seconds * 1000)))


def test_limits(test: Test, limits: Limits) -> tuple[float, float]:
    """A test's own CPU and wall limits (seconds): its ``time_limit`` when it has
    one, else the call's; the wall is the call's ``wall_limit`` or 3 x CPU + 1 s."""
    cpu = test.time_limit if test.time_limit is not None else limits.time_limit
    wall = limits.wall_limit if limits.wall_limit is not None else 3 * cpu + 1
    return cpu, wall


def _floor(rule: LoopRule, shared: bool) -> float:
    return min(rule.floor, rule.floor_shared) if shared else rule.floor


def _tight_floor(rule: LoopRule, ref_ms: float | None, shared: bool) -> float:
    """The least tight limit: ``floor_shared`` after another test in a resident child only
    where the reference's time is known. Without it the floor is the whole bound (nothing
    of the program finished yet), and a shared test's tail (a trivial one's p99 ~1.5 ms,
    median ~0.08 ms) needs the lone floor's room."""
    return _floor(rule, shared and ref_ms is not None)


def _ref_bound(ref_ms: float | None, rule: LoopRule, io: float = 0.0,
               shared: bool = False) -> float:
    """floor + factor x the reference's time + ``io``, the harness's time to decode and
    encode a call's arguments and expected value (:func:`io_allowance`; seconds; 0 when
    the reference's time is unknown). ``ref_ms`` is the program's own module and call
    (``work_ms``): the decoding of a call's input and encoding of its value are the
    harness's, the same for every program, so they are allowed for once, not ``factor``
    times. ``shared``: the test runs after another in a resident child, whose time has no
    fork or confinement in it (``floor_shared`` instead of ``floor``)."""
    if ref_ms is None:
        return 0.0
    return _floor(rule, shared) + rule.factor * ref_ms / 1000 + io


def tight_limit(cpu: float, ref_ms: float | None, slowest_ms: float, rule: LoopRule,
                io: float = 0.0, shared: bool = False) -> float:
    """The loop rule's CPU limit (seconds) of a test whose own limit is ``cpu``, once a
    test of the same call timed out: min(cpu, max(floor, floor + factor x ref, factor x
    the slowest test of the call that finished, that last term at most the probe where
    ``ref`` is known)), with ``floor_shared`` for ``floor`` in a test that runs after
    another in a resident child (``shared``: its CPU is counted from its handover, with no
    fork or confinement in it) where ``ref`` is known (:func:`_tight_floor`). The zygote
    applies it (confine.c); this is its statement in Python, for the tests and the
    documentation."""
    if rule.factor <= 0:
        return cpu
    return min(cpu, max(_tight_floor(rule, ref_ms, shared), _ref_bound(ref_ms, rule, io, shared),
                        _own_term(ref_ms, slowest_ms, rule, io)))


def _own_term(ref_ms: float | None, slowest_ms: float, rule: LoopRule, io: float = 0.0) -> float:
    """factor x the slowest finished test (seconds); with a known reference time, at most
    the probe, so that a program cannot buy looser limits by being slow first. Where the
    reference's time is known the zygote counts a shared test's time with the fixed cost a
    child of its own adds (floor - floor_shared), so the term is no tighter in a resident
    child than with a child per test; ``slowest_ms`` is that count."""
    own = rule.factor * slowest_ms / 1000
    return own if ref_ms is None else min(own, max(rule.probe, _ref_bound(ref_ms, rule, io)))


def probe_limit(cpu: float, ref_ms: float | None, slowest_ms: float, rule: LoopRule,
                io: float = 0.0) -> float:
    """The CPU limit (seconds) of a test before any test of its call timed out: its own
    limit when the reference's time is unknown, else min(cpu, max(probe, floor + factor
    x ref)), whatever ran before it. Stated here as :func:`tight_limit` is; the zygote
    applies it."""
    if rule.factor <= 0 or ref_ms is None:
        return cpu
    return min(cpu, max(rule.probe, _ref_bound(ref_ms, rule, io)))


def check_limits(limits: Limits, tests: Sequence[Test]) -> None:
    """The caller's limits, refused with a :class:`ConfigError` naming the field when they
    mean nothing (a dataset file is checked the same way when it is read): a CPU or wall
    limit that is not a positive, finite number of seconds (at most 60 per test), a memory
    or output budget that is not positive, a reference time that is not finite and >= 0."""
    def seconds(value: float | None, where: str) -> None:
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value) or value <= 0):
            raise ConfigError(f"{where}: {value!r} is not a limit in seconds (finite, in (0, inf])")

    seconds(limits.time_limit, "Limits.time_limit")
    seconds(limits.wall_limit, "Limits.wall_limit")
    for name in ("memory_limit_mb", "output_limit"):
        value = getattr(limits, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"Limits.{name}: {value!r} is not a positive integer")
    for test in tests:
        if not isinstance(test, Test):
            raise ConfigError(f"SandboxPool.run takes Test objects, got a {type(test).__name__} ({test!r:.80})")
        for name in test.bad_limits():
            if name == "time_limit":
                raise ConfigError(f"test {test.id!r}: time_limit: {test.time_limit!r} is not a limit in "
                                  "seconds (finite, in (0, 60])")
            raise ConfigError(f"test {test.id!r}: ref_ms {test.ref_ms!r} is not a time in ms (finite, >= 0)")


def io_allowance(test: Test) -> float:
    """What the harness may take (seconds) to decode a call test's arguments and encode its
    value, judged by its arguments and expected value as JSON: their size at
    ``IO_SECONDS_PER_BYTE`` and their number of values (a comma or colon each, roughly) at
    ``IO_SECONDS_PER_VALUE``; 0 for a stdio test (reading its input is the program's)."""
    if test.kind != "call":
        return 0.0
    try:
        parts = [ARGS.encode([test.args or [], test.kwargs or {}])]
        if test.expected is not msgspec.UNSET:
            parts.append(ARGS.encode(test.expected))
    except (TypeError, ValueError, OverflowError):
        return 0.0
    size = sum(len(b) for b in parts)
    values = sum(b.count(b",") + b.count(b":") + 1 for b in parts)
    return size * IO_SECONDS_PER_BYTE + values * IO_SECONDS_PER_VALUE


class Job:
    __slots__ = ("checker", "done", "error", "hash", "heads", "held", "limits", "max_wall",
                 "on_first", "payload", "program", "remaining", "results", "serial", "tests",
                 "timed_out", "trace")

    def __init__(self, program: Program, tests: Sequence[Test], limits: Limits, checker: Checker,
                 trace: bool, rule: LoopRule = LoopRule()) -> None:
        self.program = program
        self.tests = list(tests)
        self.limits = limits
        self.serial = next(_serials) & 0xFFFFFFFF
        #: chunks the pool queues only once the job's first result is in (pool.run)
        self.held: list[Chunk] = []
        self.on_first: Callable[[Job], None] | None = None
        #: a test of this job timed out: chunks sent from now on start under the loop rule
        self.timed_out = False
        own = [test_limits(t, limits) for t in self.tests]
        self.max_wall = max((wall for _, wall in own), default=limits.wall_seconds)
        floor_us = min(_U32 * 1000, max(0, math.ceil(rule.floor * 1e6)))
        shared_floor_us = min(floor_us, max(0, math.ceil(rule.floor_shared * 1e6)))
        factor = max(0, int(rule.factor))
        #: each test's TEST head but its flags
        # (the harness's size allowance is encoded only for a test whose bound is used)
        bounds = [_ref_bound(t.ref_ms, rule, io_allowance(t)) if t.ref_ms is not None and factor else 0.0
                  for t in self.tests]
        self.heads = [
            (self.serial, _ms(cpu), _ms(wall),
             _us(bound) if t.ref_ms is not None and factor else 0,
             _us(max(rule.probe, bound)) if t.ref_ms is not None and factor else 0,
             floor_us, shared_floor_us, factor)
            for t, (cpu, wall), bound in zip(self.tests, own, bounds, strict=True)]
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
        if result.verdict is Verdict.TLE:
            self.timed_out = True
        if self.held and self.on_first is not None:
            self.on_first(self)
        if self.results[index] is None:
            self.results[index] = result
            self.remaining -= 1
            if self.remaining == 0 and not self.done.done():
                self.done.set_result(None)


class Chunk:
    __slots__ = ("attempt", "indices", "job")

    def __init__(self, job: Job, indices: list[int], attempt: int = 0) -> None:
        self.job = job
        self.indices = indices
        self.attempt = attempt


def test_input(job: Job, index: int, alone: bool = False, pinned_us: int = 0) -> bytes:
    """The payload of test ``index``'s TEST frame: its head (limits), then its input;
    ``alone``: in a child of its own, never a resident one (a re-run); ``pinned_us``: a
    re-run's CPU limit exactly (the lone limit its first run reported), not the rule's
    state when it runs again, which the tests run in between may have loosened. A test recorded
    without an expected value or output (a reference's) always runs alone: nothing could
    tell a result that an earlier test's leftovers changed (a ``decimal`` context) from the
    right one."""
    test = job.tests[index]
    unjudged = test.expected is msgspec.UNSET if job.program.kind == "call" else test.output is None
    alone = alone or unjudged
    flags = (HEAD_START_TIGHT if job.timed_out else 0) | (HEAD_ISOLATED if alone else 0)
    head = TEST_HEAD.pack(*job.heads[index], max(0, pinned_us), flags)
    if job.program.kind == "call":
        return head + ARGS.encode([test.args or [], test.kwargs or {}])
    return head + (test.input or "").encode()
