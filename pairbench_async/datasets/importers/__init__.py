"""Dataset importers: public datasets in, native instances (JSON Lines) out.

    report = await import_dataset("humaneval", ["HumanEval.jsonl.gz"], "he.jsonl")
    print(report.summary())

One module per source format, each owning its schema (and, for codeforces, its
column table): ``feedbackeval``, ``codeforces``, ``humaneval`` and ``jsonl`` (the
native format). :data:`FORMATS` is the registry. Importers that must run dataset
code (splitting ``check``, validating references, measuring pass rates) do it in the
sandbox pool only; the output file is written atomically, once, at the end.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import NamedTuple

from ...core.errors import ConfigError
from ...core.types import Instance
from ...sandbox.pool import SandboxConfig, SandboxPool
from ..files import write_instances
from .codeforces import import_codeforces
from .common import MALFORMED, PAPER_FILTERS, ImportOptions, ImportReport
from .feedbackeval import import_feedbackeval
from .humaneval import import_humaneval
from .jsonl import import_jsonl

__all__ = [
    "FORMATS",
    "MALFORMED",
    "PAPER_FILTERS",
    "Format",
    "ImportOptions",
    "ImportReport",
    "import_dataset",
]

Importer = Callable[[Sequence[str], ImportOptions, SandboxPool, ImportReport],
                    Awaitable[list[Instance]]]


class Format(NamedTuple):
    """A registered source format."""

    importer: Importer
    description: str
    #: Options (ImportOptions field names) that only this format reads.
    options: tuple[str, ...] = ()
    sandbox: bool = True


FORMATS: Mapping[str, Format] = MappingProxyType({
    "feedbackeval": Format(
        import_feedbackeval,
        "FeedbackEval's HumanEval_feedback.jsonl (+ --humaneval HumanEval.jsonl)",
        ("humaneval",)),
    "codeforces": Format(import_codeforces,
                         "MatrixStudio/Codeforces-Python-Submissions rows (parquet or JSONL)",
                         ("min_tests", "pass_rate", "loc", "min_complexity")),
    "humaneval": Format(import_humaneval,
                        "HumanEval-style JSONL (generation from a blank program)"),
    "jsonl": Format(import_jsonl, "the native instance format (validate and normalise)",
                    sandbox=False),
})

_FORMAT_OPTIONS = frozenset(name for fmt in FORMATS.values() for name in fmt.options)


def check_options(fmt: str, options: ImportOptions) -> None:
    """Reject options another format owns, and impossible filter bounds (``ConfigError``)."""
    for name in sorted(_FORMAT_OPTIONS - set(FORMATS[fmt].options)):
        if getattr(options, name) is not None:
            raise ConfigError(f"option {name!r} does not apply to the {fmt} format")
    if options.pass_rate is not None:
        lo, hi = options.pass_rate
        if not 0.0 <= lo <= hi <= 1.0:
            raise ConfigError(f"pass rate bounds must satisfy 0 <= low <= high <= 1, got {lo}:{hi}")
    if options.loc is not None and not 0 <= options.loc[0] <= options.loc[1]:
        raise ConfigError(f"lines-of-code bounds must satisfy 0 <= low <= high, got "
                          f"{options.loc[0]}:{options.loc[1]}")
    if options.min_tests is not None and options.min_tests < 0:
        raise ConfigError(f"min_tests must be >= 0, got {options.min_tests}")
    if not 0 < options.time_limit <= 60 or not 16 <= options.memory_limit_mb <= 16384:
        raise ConfigError("time_limit must be in (0, 60] seconds and "
                          "memory_limit_mb in [16, 16384]")
    if not (0 < options.time_floor <= options.time_limit and 0 < options.time_factor <= 1000
            and 1 <= options.time_runs <= 20):
        raise ConfigError("time_floor must be in (0, time_limit], time_factor in (0, 1000] "
                          "and time_runs in [1, 20]")
    if options.derive_limits and fmt == "codeforces":
        raise ConfigError("codeforces keeps each problem's own time limit: no --derive-limits")


async def import_dataset(fmt: str, sources: Sequence[str | os.PathLike[str]],
                         out: str | os.PathLike[str] | None, options: ImportOptions | None = None,
                         *, pool: SandboxPool | None = None) -> ImportReport:
    """Import ``sources`` in format ``fmt``; write the instances to ``out`` (atomically).

    Malformed rows and rows that make no instance are in the returned report, and the
    other rows are imported all the same; ``out`` is written even then (and even when
    empty). Raises :class:`~pairbench_async.core.errors.ConfigError` for bad arguments,
    :class:`~pairbench_async.core.errors.DatasetError` for a source that cannot be read at
    all (nothing is written then) and :class:`~pairbench_async.core.errors.SandboxError`
    when the sandbox fails. ``pool`` lets a caller share a running pool.
    """
    if fmt not in FORMATS:
        raise ConfigError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    if not sources:
        raise ConfigError("no source files given")
    options = options or ImportOptions()
    check_options(fmt, options)
    paths = [os.fspath(s) for s in sources]
    report = ImportReport(format=fmt, sources=paths)
    spec = FORMATS[fmt]
    own = pool is None
    if pool is None:
        pool = SandboxPool(SandboxConfig(workers=options.workers))
    try:
        if spec.sandbox:
            await pool.start()  # workers start only for formats that run code
        instances = await spec.importer(paths, options, pool, report)
    finally:
        if own:
            await pool.aclose()
    report.imported = len(instances)
    if out is not None:
        write_instances(out, instances)
        report.out = os.fspath(out)
    return report
