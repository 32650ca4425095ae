"""``build-dataset``: PAIR-BENCH instances from raw wrong Codeforces submissions.

PAIR-BENCH (seed 000) obtains each instance's reference by *repairing the wrong
submission itself* with an LLM, the failing tests as feedback, until every test
passes (bounded turns), so that the reference keeps the original logic. This module
does that on the rows the ``codeforces`` importer reads, reusing its scan, static
filters, tests, statement and instance construction
(:mod:`pairbench_async.datasets.importers.codeforces`). Per wrong submission, in row order:

1. **Turn 0**: the submission runs on the hidden and public tests in the sandbox; its
   hidden pass rate must lie in ``--pass-rate`` and be below 1 (the importer's rule).
2. ``--prefer-ok`` only: a validated OK submission of the problem, when there is one,
   is the reference, as ``import codeforces`` would choose it.
3. **Repair turns** 1..N: the model gets the statement, the current program and up to
   :data:`SHOWN_FAILURES` failing tests (public ones first, then the shortest inputs;
   input, expected output, the program's output or error, each clipped) and answers
   with the whole program in a python block (:func:`~pairbench_async.protocol.extract.extract_code`;
   no code keeps the program). The answer runs on every test. A program that passes
   every hidden *and* public test is the reference; after N turns the submission is
   reported as ``repair failed after N turns`` with its best pass rate, never written.

**The sim stand-in.** ``sim:SKILL`` (:class:`~pairbench_async.models.offline.SimCandidate`)
moves a program hunk by hunk toward a hidden target and cannot repair anything
without one. For offline tests and benchmarks its target is the OK submission of the
same problem most similar to the wrong one (difflib ratio); it gets the failing-test
feedback's informativeness (the ``test`` protocol's level, 3). The target is never
the reference by fiat: only a program that passes every test in the sandbox is. A
problem with no OK submission cannot be simulated and is reported as such.

**The work directory** (default ``OUT.work/``) holds ``manifest.json`` (the
parameters) and ``records.jsonl``, an append-only log of :class:`RepairTurn` (one
per evaluated program) and :class:`SubmissionDone` (one per finished submission)
records, each one ``os.write`` (``runlog.store.RecordWriter``), fsynced after every
finished submission. ``--resume`` skips finished submissions, continues the others
after their last recorded turn (the failing tests shown next are in that record, so
nothing is re-run), drops a torn last line, retries submissions that ended in an
``error`` (a model or sandbox failure, not a property of the row), and refuses when
the parameters differ. The output is derived from the log at the end and written
atomically, so with the deterministic sim model a resumed build writes the same
bytes as an uninterrupted one. One failing submission never stops the build.

This module is the driver (arguments, the work directory opened or resumed, submissions
in parallel, the output); the record types and the work directory are in
:mod:`.build_workdir`, one submission's turns and the repair prompt in :mod:`.build_repair`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from ..core.errors import ConfigError, StoreError
from ..core.types import Instance
from ..runlog.store import RecordWriter
from ..sandbox.interface import Sandbox
from ..sandbox.pool import SandboxConfig, SandboxPool
from .build_repair import Build
from .build_workdir import (
    FORMAT,
    BuildParams,
    BuildRecord,
    RepairTurn,
    SubmissionDone,
    build_manifest,
    hash_sources,
    open_work,
    read_log,
    read_prior,
)
from .importers.codeforces import Candidate, Scan, make_instance, scan_sources
from .importers.common import ImportReport

__all__ = ["build_dataset"]


# -- the output ------------------------------------------------------------------------------


def _finish(params: BuildParams, scan: Scan, report: ImportReport) -> list[Instance]:
    """The instances the log says were made, in row order, checked; fills ``report``.

    Blocking (difflib, reading the log): run in a thread.
    """
    from .files import check_instance

    prior = read_prior(read_log(params.work_dir)[0], params.work_dir)
    instances: list[Instance] = []
    report.count("candidates (after the static filters)", len(scan.candidates))
    for c in scan.candidates:
        done = prior.done.get(c.id)
        turns = prior.turns.get(c.id, [])
        report.count("repair turns", max(0, len(turns) - 1))
        if done is None:
            report.skip("unfinished (interrupted)", c.sub.where)
        elif done.status in ("repaired", "ok"):
            inst = _instance(params, c, done, turns)
            problems = check_instance(inst)
            if problems:
                raise StoreError(f"{c.id}: the built instance is invalid: {problems[0]}")
            instances.append(inst)
            report.count("repaired" if done.status == "repaired" else
                         "references from OK submissions (--prefer-ok)")
        else:
            report.skip(done.reason or done.status, done.detail or c.sub.where)
    report.count("tests", sum(len(i.tests) for i in instances))
    return instances


def _instance(params: BuildParams, c: Candidate, done: SubmissionDone,
              turns: Sequence[RepairTurn]) -> Instance:
    """The importer's instance, with how its reference was obtained in ``meta``."""
    assert done.reference is not None and done.buggy_pass_rate is not None
    if done.status == "repaired":
        last = turns[-1] if turns else None
        if last is None or last.program != done.reference or not last.all_pass \
                or last.total != len(c.problem.tests) + len(c.problem.public):
            raise StoreError(f"{params.work_dir}: {c.id} is recorded as repaired, but its "
                             "last recorded program does not pass every test")
    inst = make_instance(c, done.reference, done.buggy_pass_rate)
    meta = dict(inst.meta)
    if done.status == "repaired":
        meta.update(reference_origin="repair", repair_model=params.model,
                    repair_turns=done.turns)
    else:
        meta.update(reference_origin="ok_submission")
    return msgspec.structs.replace(inst, meta=meta)


def _write(out: str, instances: list[Instance]) -> None:
    """Atomically, then read back: every written instance must load."""
    from .files import read_instances, write_instances

    write_instances(out, instances)
    back = read_instances(out).instances
    if back != instances:
        raise StoreError(f"{out}: the written instances do not read back as written")


# -- the driver ------------------------------------------------------------------------------


def _check_params(params: BuildParams, make: bool) -> Any:
    """Argument errors before anything runs (``ConfigError``); the model to repair with,
    when ``make`` (else None: the caller brought its own)."""
    from ..models.endpoint import parse_model_spec
    from ..models.specs import load_model_config, make_model
    from .importers import check_options

    if not params.sources:
        raise ConfigError("no source files given")
    if params.turns < 1 or params.concurrency < 1:
        raise ConfigError("turns and concurrency must be at least 1")
    check_options("codeforces", params.options)
    scheme = parse_model_spec(params.model)[0]
    if scheme not in ("openai", "sim"):
        raise ConfigError(f"build-dataset repairs with a candidate model (openai:MODEL[@URL] or "
                          f"sim:SKILL), not {params.model!r}")
    return make_model(params.model, load_model_config(params.config)) if make else None


async def build_dataset(params: BuildParams, *, pool: Sandbox | None = None,
                        model: Any = None,
                        on_record: Callable[[BuildRecord], None] | None = None) -> ImportReport:
    """Build (or resume) ``params.out``; the report says what happened to every row.

    ``pool`` shares a running sandbox pool; ``model`` replaces the model made from
    ``params.model`` (the spec still names it in the manifest and meta); ``on_record``
    sees every record as it is written. Raises ``ConfigError`` (bad arguments or
    sources), ``StoreError`` (a work directory that cannot be resumed) and
    ``SandboxError`` (a pool that cannot start).
    """
    made = _check_params(params, make=model is None)
    try:
        return await _build(params, pool, model if model is not None else made, on_record)
    finally:
        if made is not None:  # a model the caller brought stays the caller's to close
            await made.aclose()


async def _build(params: BuildParams, pool: Sandbox | None, model: Any,
                 on_record: Callable[[BuildRecord], None] | None) -> ImportReport:
    report = ImportReport(format=FORMAT, sources=list(params.sources))
    sources_hash = await asyncio.to_thread(hash_sources, params.sources)
    prior, valid = await asyncio.to_thread(open_work, params, build_manifest(params, sources_hash))
    scan = await asyncio.to_thread(scan_sources, params.sources, params.options, report)
    todo = [c for c in scan.candidates
            if c.id not in prior.done or prior.done[c.id].status == "error"]
    writer = RecordWriter(params.work_dir, valid_length=valid)
    own = pool is None
    if pool is None:
        pool = SandboxPool(SandboxConfig(workers=params.options.workers))
    try:
        if todo:
            await pool.start()
            await _run_all(Build(params, scan, pool, model, writer, prior, on_record), todo)
    finally:
        await writer.aclose()
        if own:
            await pool.aclose()
    instances = await asyncio.to_thread(_finish, params, scan, report)
    await asyncio.to_thread(_write, params.out, instances)
    report.imported = len(instances)
    report.out = params.out
    return report


async def _run_all(build: Build, todo: Sequence[Candidate]) -> None:
    """Up to ``concurrency`` submissions at once, pulled in row order."""
    pending = iter(todo)

    async def worker() -> None:
        for candidate in pending:
            await build.submission(candidate)

    try:
        async with asyncio.TaskGroup() as tg:
            for _ in range(min(build.params.concurrency, len(todo))):
                tg.create_task(worker())
    except ExceptionGroup as group:  # only the log itself failing gets here (disk full...)
        raise group.exceptions[0] from None
