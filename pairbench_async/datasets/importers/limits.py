"""Per-test time limits derived from the reference's measured time.

Datasets that carry a problem's limit (Codeforces, the bundled fixtures) keep it.
HumanEval and FeedbackEval carry none (OpenAI's harness gives a whole sample 3 s of
wall time), so their importers, and ``import jsonl --derive-limits``, measure the
reference and write, for every hidden test,

    ref_ms     = the median of ``runs`` measurements of the reference's CPU time on
                 the test in the sandbox pool, in ms: its module and call
                 (``TestResult.work_ms``), without the ~1 ms of CPU a confined child
                 costs before the program's first line and after its last
    time_limit = min(cap, max(floor, factor x ref_ms / 1000)), rounded up to 10 ms

EvalPlus's rule (``max(min_time_limit, gt_time_limit_factor x reference time)``,
1 s and 4 by default there and here). ``cap`` is the import's ``--time-limit``. The
instance's own ``time_limit`` becomes the largest per-test limit, so a reader that
ignores per-test limits is never stricter than the derived ones; its ``meta["limits"]``
records the rule and its parameters, and each test's ``ref_ms`` the measurement that
the sandbox's loop rule reads (``SandboxConfig.loop_factor``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

import msgspec

from ...core.types import Checker, Limits, Program, Test, Verdict
from ...sandbox.interface import Sandbox
from .common import run_program

__all__ = ["LIMIT_RULE", "derive_limit", "limits_meta", "measure_reference", "with_limits"]

LIMIT_RULE = "max(floor, factor x ref)"


def derive_limit(ref_ms: float, floor: float, factor: float, cap: float) -> float:
    """``min(cap, max(floor, factor x ref_ms / 1000))`` seconds, rounded up to 10 ms."""
    raw = max(floor, factor * ref_ms / 1000.0)
    return min(cap, math.ceil(round(raw * 100, 6)) / 100)


def limits_meta(floor: float, factor: float, runs: int, cap: float) -> dict[str, Any]:
    """What ``meta["limits"]`` of an instance with derived limits records."""
    return {"rule": LIMIT_RULE, "floor": floor, "factor": factor, "runs": runs, "cap": cap}


async def measure_reference(pool: Sandbox, program: Program, tests: Sequence[Test],
                            limits: Limits, checker: Checker, runs: int) -> list[float] | None:
    """The median CPU time (ms) of ``program`` on each test over ``runs`` runs, or None
    when it does not pass every test in every run (its time would mean nothing)."""
    samples: list[list[float]] = [[] for _ in tests]
    for _ in range(max(1, runs)):
        results = await run_program(pool, program, tests, limits, checker)
        if any(r.verdict is not Verdict.AC for r in results):
            return None
        for k, r in enumerate(results):
            samples[k].append(r.work_ms if r.work_ms is not None else r.cpu_ms)
    return [round(statistics.median(s), 3) for s in samples]


def with_limits(tests: Sequence[Test], ref_ms: Sequence[float], floor: float, factor: float,
                cap: float) -> list[Test]:
    """``tests`` with their derived ``time_limit`` and measured ``ref_ms``."""
    return [msgspec.structs.replace(t, ref_ms=r, time_limit=derive_limit(r, floor, factor, cap))
            for t, r in zip(tests, ref_ms, strict=True)]
