"""Is a dataset fit for a sweep? (``python -m pairbench_async validate``)

Static checks come from :func:`~pairbench_async.datasets.files.check_instance` while
reading. Then, in the sandbox, every reference must pass all of its hidden tests,
and every buggy program's pass rate is measured (the source paper keeps instances
whose buggy program passes 10-55 %; outside that range is reported as a warning,
not a failure, since imported datasets may use other filters).
"""

from __future__ import annotations

import asyncio
import statistics
from typing import Any

import msgspec

from ..core.types import Instance, Verdict

__all__ = ["InstanceCheck", "ValidationSummary", "failing_tests", "validate_instances"]


class InstanceCheck(msgspec.Struct):
    id: str
    tests: int
    reference_failures: dict[str, str]
    buggy_pass_rate: float
    buggy_failure_kinds: list[str]
    problems: list[str]
    warnings: list[str]


class ValidationSummary(msgspec.Struct):
    instances: int
    problems: int
    skipped_lines: int
    tests_min: int
    tests_median: float
    buggy_pass_rate_min: float
    buggy_pass_rate_max: float
    failures: list[str]
    checks: list[InstanceCheck]


def _kind(verdict: Verdict, error: str | None, mismatch: str | None) -> str:
    if verdict is Verdict.RE:
        return f"runtime:{error}"
    if verdict is Verdict.WA:
        return f"wrong_{mismatch or 'value'}"
    return verdict.value


def failing_tests(results: Any) -> dict[str, str]:
    """The tests a program failed, each with its verdict (and error): ``{"003": "WA"}``."""
    return {r.id: r.verdict.value + (f" ({r.error})" if r.error else "") for r in results if not r.passed}


async def _check(pool: Any, inst: Instance, lo: float, hi: float) -> InstanceCheck:
    limits = inst.limits
    ref, bug = await asyncio.gather(
        pool.run(inst.program(inst.reference), inst.tests, limits, checker=inst.checker),
        pool.run(inst.program(inst.buggy), inst.tests, limits, checker=inst.checker),
    )
    ref_fail = failing_tests(ref)
    rate = sum(r.passed for r in bug) / len(bug)
    kinds = sorted({_kind(r.verdict, r.error, r.mismatch) for r in bug if not r.passed})
    problems, warnings = [], []
    if ref_fail:
        first = next(iter(ref_fail.items()))
        problems.append(f"reference fails {len(ref_fail)} of {len(ref)} tests (e.g. test {first[0]}: {first[1]})")
    if any(r.verdict is Verdict.SF for r in (*ref, *bug)):
        problems.append("sandbox faults while validating")
    if rate == 1.0:
        problems.append("the buggy program passes every test")
    elif not lo <= rate <= hi:
        warnings.append(f"buggy pass rate {rate:.2f} outside [{lo:.2f}, {hi:.2f}]")
    return InstanceCheck(id=inst.id, tests=len(inst.tests), reference_failures=ref_fail,
                         buggy_pass_rate=rate, buggy_failure_kinds=kinds, problems=problems,
                         warnings=warnings)


async def validate_instances(instances: list[Instance], pool: Any, *, pass_rate: tuple[float, float] = (0.10, 0.55),
                             skipped: list[str] | None = None) -> ValidationSummary:
    checks = await asyncio.gather(*(_check(pool, inst, *pass_rate) for inst in instances))
    failures = [f"{c.id}: {p}" for c in checks for p in c.problems]
    failures += [f"skipped line: {s}" for s in skipped or []]
    sizes = [c.tests for c in checks] or [0]
    rates = [c.buggy_pass_rate for c in checks] or [0.0]
    return ValidationSummary(
        instances=len(checks), problems=len(failures), skipped_lines=len(skipped or []),
        tests_min=min(sizes), tests_median=statistics.median(sizes),
        buggy_pass_rate_min=min(rates), buggy_pass_rate_max=max(rates), failures=failures,
        checks=list(checks),
    )
