"""``jsonl``: the native format itself; validation and normalisation only.

Each line is decoded into an :class:`~pairbench_async.core.types.Instance` and checked
statically (:func:`~pairbench_async.datasets.files.check_instance`); nothing is run
unless ``--derive-limits`` asks for each test's limit from its reference's measured time
(``_limits``; each instance's own ``time_limit`` is the cap). A
malformed line is reported with its file, line and field, and the other lines are
kept. Instance ids must be unique across all the sources. Normalisation is the
re-encoding: fields in schema order, defaults omitted, one compact object per line,
so two equal datasets produce byte-identical files.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import msgspec

from ...core.types import Instance
from ...sandbox.pool import SandboxPool
from ..files import read_instances
from .common import MALFORMED, ImportOptions, ImportReport
from .limits import limits_meta, measure_reference, with_limits

__all__ = ["import_jsonl"]


async def import_jsonl(sources: Sequence[str], options: ImportOptions, pool: SandboxPool,
                       report: ImportReport) -> list[Instance]:
    """Read, check and re-encode native instances (``options`` and ``pool`` are unused
    unless ``derive_limits``). The ``tests`` count is of the instances kept."""
    instances: list[Instance] = []
    seen: dict[str, str] = {}  # instance id -> file:line
    for path in sources:
        # ids are checked here, across every source, so a repeat within one file is
        # counted as the duplicate it is rather than as a malformed line (an unreadable
        # file still raises)
        read = read_instances(path, skip_invalid=True, unique_ids=False)
        report.rows += len(read.instances) + len(read.skipped)
        for message in read.skipped:
            report.skip(MALFORMED, message)
        for inst, where in zip(read.instances, read.where, strict=True):
            if inst.id in seen:
                report.skip("duplicate instance id",
                            f"{where}: {inst.id!r} (also at {seen[inst.id]})")
                continue
            seen[inst.id] = where
            instances.append(inst)
    if options.derive_limits:
        instances = await _derive(instances, seen, options, pool, report)
    report.count("tests", sum(len(i.tests) for i in instances))
    return instances


async def _derive(instances: list[Instance], where: dict[str, str], options: ImportOptions,
                  pool: SandboxPool, report: ImportReport) -> list[Instance]:
    """Each test's limit from its reference's time; each instance's own limit is the cap.
    An instance whose reference fails a test is left out (its time means nothing)."""
    await pool.start()
    timings = await asyncio.gather(*(
        measure_reference(pool, i.program(i.reference), i.tests, i.limits, i.checker,
                          options.time_runs) for i in instances))
    kept: list[Instance] = []
    for inst, ref_ms in zip(instances, timings, strict=True):
        if ref_ms is None:
            report.skip("reference fails a test while timed", f"{where[inst.id]}: {inst.id}")
            continue
        tests = with_limits(inst.tests, ref_ms, options.time_floor, options.time_factor,
                            inst.time_limit)
        meta = {**inst.meta, "limits": limits_meta(options.time_floor, options.time_factor,
                                                   options.time_runs, inst.time_limit)}
        kept.append(msgspec.structs.replace(
            inst, tests=tests, time_limit=max(t.time_limit or 0.0 for t in tests), meta=meta))
    return kept
