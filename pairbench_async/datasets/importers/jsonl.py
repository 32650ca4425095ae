"""``jsonl``: the native format itself; validation and normalisation only.

Each line is decoded into an :class:`~pairbench_async.core.types.Instance` and checked
statically (:func:`~pairbench_async.datasets.files.check_instance`); nothing is run. A
malformed line is reported with its file, line and field, and the other lines are
kept. Instance ids must be unique across all the sources. Normalisation is the
re-encoding: fields in schema order, defaults omitted, one compact object per line,
so two equal datasets produce byte-identical files.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...core.types import Instance
from ...sandbox.pool import SandboxPool
from ..files import read_instances
from ._common import MALFORMED, ImportOptions, ImportReport

__all__ = ["import_jsonl"]


async def import_jsonl(sources: Sequence[str], options: ImportOptions, pool: SandboxPool,
                       report: ImportReport) -> list[Instance]:
    """Read, check and re-encode native instances (``options`` and ``pool`` are unused)."""
    instances: list[Instance] = []
    seen: dict[str, str] = {}
    for path in sources:
        read = read_instances(path, skip_invalid=True)  # an unreadable file still raises
        report.rows += len(read.instances) + len(read.skipped)
        for message in read.skipped:
            report.skip(MALFORMED, message)
        for inst in read.instances:
            if inst.id in seen:
                report.skip("duplicate instance id",
                            f"{path}: {inst.id!r} (also in {seen[inst.id]})")
                continue
            seen[inst.id] = path
            instances.append(inst)
    report.count("tests", sum(len(i.tests) for i in instances))
    return instances
