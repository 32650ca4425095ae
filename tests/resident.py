"""What the resident child's attack tests share (tests/sandbox/test_attacks_interrupt*.py): one worker's pool
run both ways, the verdicts, the promise they are held to, and a count of the children that ran them."""

from __future__ import annotations

import asyncio

from pairbench_async.core.types import Limits, Program, Test, TestResult, Verdict
from pairbench_async.sandbox.config import SandboxConfig
from pairbench_async.sandbox.pool import SandboxPool

LIMITS = Limits(time_limit=2.0, memory_limit_mb=512)

#: print the child's pid (its pid namespace's) first, to count children
PID = "import os, sys\nprint(os.getpid(), file=sys.stderr)\n"


async def run(program: Program, tests: list[Test], limits: Limits = LIMITS,
              **config: object) -> list[TestResult]:
    """``program``'s ``tests`` through a one-worker pool made with ``config`` (``resident=False``: a child per
    test; ``loop_factor=0``: every test to its full limit)."""
    async with SandboxPool(SandboxConfig(workers=1, **config)) as pool:  # type: ignore[arg-type]
        async with asyncio.timeout(120):
            return await pool.run(program, tests, limits)


def verdicts(results: list[TestResult]) -> list[str]:
    return [r.verdict.value for r in results]


def cpu(results: list[TestResult]) -> list[tuple[str, float]]:
    return [(r.verdict.value, round(r.cpu_ms, 1)) for r in results]


def within_the_promise(resident: list[TestResult], alone: list[TestResult],
                       full: list[TestResult]) -> bool:
    """Each resident verdict is a child per test's, or the full limit's where the child's
    was a timeout under the loop rule's tight limit."""
    return all(r.verdict is a.verdict or (a.verdict is Verdict.TLE and r.verdict is f.verdict)
               for r, a, f in zip(resident, alone, full, strict=True))


def children(results: list[TestResult]) -> int:
    """How many children ran the tests: each program prints its pid (:data:`PID`) first, so a test that ended
    its child, or that the pool ran again alone, shows as a new pid (a shared test that ended its child is run
    again in its place: only that run is seen)."""
    return len({(r.stderr or "").split("\n")[0] for r in results})
