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
records, each one ``os.write`` (``_store.RecordWriter``), fsynced after every
finished submission. ``--resume`` skips finished submissions, continues the others
after their last recorded turn (the failing tests shown next are in that record, so
nothing is re-run), drops a torn last line, retries submissions that ended in an
``error`` (a model or sandbox failure, not a property of the row), and refuses when
the parameters differ. The output is derived from the log at the end and written
atomically, so with the deterministic sim model a resumed build writes the same
bytes as an uninterrupted one. One failing submission never stops the build.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from ..core.errors import ClientError, ConfigError, SandboxError, StoreError
from ..core.types import Completion, Instance, Message, Program, Test, TestResult
from ..models.offline import TurnContext, stable_seed
from ..protocol.extract import extract_code
from ..protocol.prompts import fence_for, fenced
from ..runlog.records import CallRecord
from ..runlog.store import (
    RECORDS,
    RecordWriter,
    check_resume,
    read_manifest_as,
    write_manifest,
)
from ..runlog.store import read_log as read_jsonl_log
from ..sandbox.pool import SandboxConfig, SandboxPool
from .importers._common import ImportOptions, ImportReport, run_program
from .importers.codeforces import (
    Candidate,
    ReferenceValidator,
    Scan,
    make_instance,
    pass_rate_skip,
    scan_sources,
    validated_reference,
)

__all__ = [
    "BuildManifest",
    "BuildParams",
    "BuildRecord",
    "RepairTurn",
    "ShownFailure",
    "SubmissionDone",
    "build_dataset",
    "read_log",
    "repair_prompt",
]

#: Bumped when a record or the manifest changes shape.
BUILD_SCHEMA = 1
FORMAT = "build-dataset"
#: Failing tests shown per repair turn, and how much of each text (characters).
SHOWN_FAILURES = 3
CLIP_INPUT, CLIP_OUTPUT, CLIP_ERROR = 1500, 800, 800
#: The simulated informativeness of failing-test feedback (``protocol.protocols.FailingTest.simulated_level``).
SIM_LEVEL = 3

# report categories of submissions that are not written
NO_TARGET = "cannot simulate (sim: the problem has no OK submission to aim at)"
MODEL_ERROR = "model error"
SANDBOX_FAULT = "sandbox fault"
INTERNAL = "internal error"

Status = Literal["repaired", "ok", "skipped", "failed", "error"]


class BuildParams(msgspec.Struct, frozen=True, kw_only=True):
    """One build's parameters (the CLI's flags)."""

    sources: list[str]
    out: str
    model: str
    turns: int = 5
    concurrency: int = 16
    seed: int = 0
    prefer_ok: bool = False
    resume: bool = False
    #: the work directory; default ``OUT`` + ``.work``
    work: str | None = None
    #: TOML model config (``--config``)
    config: str | None = None
    options: ImportOptions = ImportOptions()

    @property
    def work_dir(self) -> Path:
        return Path(self.work) if self.work else Path(self.out + ".work")


class BuildManifest(msgspec.Struct, frozen=True, omit_defaults=True):
    """What a work directory's records belong to; ``--resume`` compares :meth:`comparable`."""

    created: str
    software_version: str
    sources: list[str]
    sources_hash: str
    model: str
    turns: int
    seed: int
    prefer_ok: bool
    filters: dict[str, Any]
    schema: int = BUILD_SCHEMA

    def comparable(self) -> dict[str, Any]:
        """Source paths may differ (another working directory); their content may not."""
        return {"sources_hash": self.sources_hash, "model": self.model, "turns": self.turns,
                "seed": self.seed, "prefer_ok": self.prefer_ok, "filters": self.filters,
                "schema": self.schema}


class ShownFailure(msgspec.Struct, frozen=True, omit_defaults=True):
    """A failing test as the next prompt shows it: what the program did (clipped)."""

    id: str
    verdict: str
    output: str = ""
    error: str = ""


class RepairTurn(msgspec.Struct, frozen=True, omit_defaults=True, tag_field="kind", tag="turn"):
    """One evaluated program: turn 0 is the submission itself, 1..N the model's repairs."""

    id: str
    turn: int
    program: str
    #: tests passed, of the hidden ones and of all (hidden + public)
    hidden_passed: int
    passed: int
    total: int
    #: the failing tests the next turn's prompt shows
    shown: list[ShownFailure] = []
    code_found: bool = True
    call: CallRecord | None = None
    schema: int = BUILD_SCHEMA

    @property
    def all_pass(self) -> bool:
        return self.passed == self.total


class SubmissionDone(msgspec.Struct, frozen=True, omit_defaults=True, tag_field="kind",
                     tag="submission"):
    """How a submission ended. ``repaired``/``ok`` carry the reference; ``error`` is retried
    on resume; the others are final and name their report category in ``reason``."""

    id: str
    status: Status
    reason: str | None = None
    detail: str | None = None
    #: repair turns used
    turns: int = 0
    reference: str | None = None
    buggy_pass_rate: float | None = None
    best_pass_rate: float | None = None
    schema: int = BUILD_SCHEMA


BuildRecord = RepairTurn | SubmissionDone
_LOG = msgspec.json.Decoder(BuildRecord)
_MANIFEST = msgspec.json.Decoder(BuildManifest)


# -- the work directory ----------------------------------------------------------------------


def read_log(work: Path) -> tuple[list[BuildRecord], int]:
    """The records and the byte length of their valid prefix (``_store.read_log``'s rule:
    a torn last line is dropped, a bad line anywhere else is corruption)."""
    return read_jsonl_log(work / RECORDS, _LOG)


def _sources_hash(paths: Sequence[str]) -> str:
    """A content hash of the sources (blocking: run in a thread)."""
    h = hashlib.sha256()
    for path in paths:
        try:
            with open(path, "rb") as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc
        h.update(b"\0")
    return h.hexdigest()


def _manifest(params: BuildParams, sources_hash: str) -> BuildManifest:
    from ..core.version import __version__

    o = params.options
    filters = msgspec.to_builtins({"min_tests": o.min_tests, "pass_rate": o.pass_rate,
                                   "loc": o.loc, "min_complexity": o.min_complexity,
                                   "reference_candidates": o.reference_candidates})
    return BuildManifest(created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                         software_version=__version__, sources=list(params.sources),
                         sources_hash=sources_hash, model=params.model, turns=params.turns,
                         seed=params.seed, prefer_ok=params.prefer_ok, filters=filters)


class _Prior(msgspec.Struct):
    """What the log already says: turns per submission, and the finished ones."""

    turns: dict[str, list[RepairTurn]]
    done: dict[str, SubmissionDone]


def _prior(records: Sequence[BuildRecord], work: Path) -> _Prior:
    prior = _Prior(turns={}, done={})
    for rec in records:
        if isinstance(rec, RepairTurn):
            prior.turns.setdefault(rec.id, []).append(rec)
        else:
            prior.done[rec.id] = rec  # a later record supersedes (an error, then retried)
    for sid, turns in prior.turns.items():
        turns.sort(key=lambda r: r.turn)
        if [r.turn for r in turns] != list(range(len(turns))):
            raise StoreError(f"{work}: submission {sid} has non-consecutive turns")
    return prior


def _open_work(params: BuildParams, manifest: BuildManifest) -> tuple[_Prior, int]:
    """Check or write the manifest; the prior records and the log's valid length."""
    work = params.work_dir
    old = read_manifest_as(work, _MANIFEST)
    records, valid = read_log(work)
    if old is not None or records:
        if not params.resume:
            raise StoreError(f"{work} already holds a build; pass --resume to continue it "
                             "(or another --work)")
        if old is None:
            raise StoreError(f"{work}: records without a manifest; cannot resume")
        check_resume(old, manifest, what="build", where=str(work))
    else:
        write_manifest(work, manifest)
    return _prior(records, work), valid


# -- prompts ---------------------------------------------------------------------------------


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rstrip("\n") + f"\n... ({len(text) - limit} more characters)\n"


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "...\n" + text[-limit:]


def _block(text: str) -> str:
    """``text`` (test data: trailing spaces kept) in a plain fence it cannot close."""
    fence = fence_for(text)
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}"


def _shown(result: TestResult) -> ShownFailure:
    error = " ".join(p for p in (result.error or "", result.timeout or "") if p)
    if result.stderr.strip():
        error = (error + "\n" + _tail(result.stderr.strip(), CLIP_ERROR)).strip()
    return ShownFailure(id=result.id, verdict=result.verdict.value,
                        output=_clip(result.stdout, CLIP_OUTPUT), error=error)


def _pick_failures(results: Sequence[TestResult], tests: Sequence[Test],
                   hidden: int) -> list[ShownFailure]:
    """Public tests first (the statement has them), then the shortest inputs: the easiest
    failures to reason about; stable, so every run shows the same ones."""
    failing = [(i, t) for i, (t, r) in enumerate(zip(tests, results, strict=True))
               if not r.passed]
    failing.sort(key=lambda it: (it[0] < hidden, len(it[1].input or "")))
    return [_shown(results[i]) for i, _ in failing[:SHOWN_FAILURES]]


_SYSTEM = ("You are an expert Python programmer. You fix wrong programs with the smallest "
           "change that makes them correct, keeping their approach.")


def repair_prompt(problem: str, program: str, failures: Sequence[tuple[Test, ShownFailure]],
                  ) -> list[Message]:
    """Statement, current program, failing tests; the answer is the whole program."""
    shown = []
    for test, fail in failures:
        part = [f"### Test {test.id}: {fail.verdict}",
                f"Input:\n{_block(_clip(test.input or '', CLIP_INPUT))}",
                f"Expected output:\n{_block(_clip(test.output or '', CLIP_OUTPUT))}",
                f"The program's output:\n{_block(fail.output) if fail.output else '(nothing)'}"]
        if fail.error:
            part.append(f"Error:\n{_block(fail.error)}")
        shown.append("\n".join(part))
    user = "\n\n".join((
        f"## Problem\n{problem.strip()}",
        f"## Program\n{fenced(program)}",
        "## Failing tests\n" + "\n\n".join(shown),
        "The program fails the tests above (and possibly others). Correct it so that it "
        "passes every test, changing as little as needed and keeping its approach. It reads "
        "standard input and writes the answer to standard output.",
        "Reply with the complete corrected program in a single ```python fenced code block.",
    ))
    return [Message(role="system", content=_SYSTEM), Message(role="user", content=user)]


# -- one submission --------------------------------------------------------------------------


def _call_record(c: Completion) -> CallRecord:
    return CallRecord(role="candidate", model=c.model, text=c.text, usage=c.usage,
                      latency_ms=c.latency_ms, attempts=c.attempts)


class _Build:
    """One build's shared state: the scan, the sandbox, the model, the log."""

    def __init__(self, params: BuildParams, scan: Scan, pool: SandboxPool, model: Any,
                 writer: Any, prior: _Prior,
                 on_record: Callable[[BuildRecord], None] | None) -> None:
        self.params = params
        self.scan = scan
        self.pool = pool
        self.model = model
        self.simulated = bool(getattr(model, "uses_context", False))
        self.writer = writer
        self.prior = prior
        self.on_record = on_record
        self.validator = ReferenceValidator(pool)

    def emit(self, record: BuildRecord) -> None:
        self.writer.write(record)
        if self.on_record is not None:
            self.on_record(record)

    async def submission(self, c: Candidate) -> None:
        """Process one submission; whatever happens, it ends with one durable record."""
        try:
            done = await self._process(c, list(self.prior.turns.get(c.id, ())))
        except (ClientError, ConfigError) as exc:
            done = self._error(c, MODEL_ERROR, exc)
        except SandboxError as exc:
            done = self._error(c, SANDBOX_FAULT, exc)
        except Exception as exc:  # a bug costs one submission, never the build
            where = traceback.extract_tb(exc.__traceback__)[-1]
            done = self._error(c, INTERNAL, exc,
                               f" ({where.filename.rsplit('/', 1)[-1]}:{where.lineno})")
        self.emit(done)
        await self.writer.sync()

    def _error(self, c: Candidate, reason: str, exc: BaseException,
               suffix: str = "") -> SubmissionDone:
        turns = len(self.prior.turns.get(c.id, ()))
        return SubmissionDone(id=c.id, status="error", reason=reason, turns=max(0, turns - 1),
                              detail=f"{c.sub.where}: {type(exc).__name__}: {exc}{suffix}")

    async def _evaluate(self, c: Candidate, turn: int, program: str, code_found: bool = True,
                        call: CallRecord | None = None) -> RepairTurn:
        p = c.problem
        tests = [*p.tests, *p.public]
        results = await run_program(self.pool, Program(source=program), tests, p.limits,
                                    p.checker)
        hidden = len(p.tests)
        record = RepairTurn(id=c.id, turn=turn, program=program,
                            hidden_passed=sum(r.passed for r in results[:hidden]),
                            passed=sum(r.passed for r in results), total=len(tests),
                            shown=_pick_failures(results, tests, hidden),
                            code_found=code_found, call=call)
        self.emit(record)
        self.prior.turns.setdefault(c.id, []).append(record)
        return record

    async def _process(self, c: Candidate, history: list[RepairTurn]) -> SubmissionDone:
        if not history:
            history.append(await self._evaluate(c, 0, c.sub.code))
        rate = history[0].hidden_passed / len(c.problem.tests)
        skip = pass_rate_skip(c, rate, self.params.options)
        if skip is not None:
            return SubmissionDone(id=c.id, status="skipped", reason=skip[0], detail=skip[1],
                                  buggy_pass_rate=rate)
        ranked = await asyncio.to_thread(self.scan.similar_ok, c)
        if self.params.prefer_ok:
            found = await validated_reference(c, ranked, self.validator, self.params.options)
            if isinstance(found, str):
                return SubmissionDone(id=c.id, status="ok", reference=found,
                                      buggy_pass_rate=rate)
        if self.simulated and not ranked:
            return SubmissionDone(id=c.id, status="skipped", reason=NO_TARGET,
                                  detail=c.sub.where, buggy_pass_rate=rate)
        target = None
        if self.simulated:
            target = await asyncio.to_thread(make_instance, c, ranked[0], rate)
        return await self._repair(c, history, rate, target)

    async def _repair(self, c: Candidate, history: list[RepairTurn], rate: float,
                      target: Instance | None) -> SubmissionDone:
        """Turns after the last recorded one, until every test passes or the budget ends."""
        by_id = {t.id: t for t in (*c.problem.tests, *c.problem.public)}
        seed = stable_seed(FORMAT, self.params.seed, c.id)
        last = history[-1]
        while not (last.turn > 0 and last.all_pass) and last.turn < self.params.turns:
            turn = last.turn + 1
            messages = repair_prompt(c.problem.text, last.program,
                                     [(by_id[f.id], f) for f in last.shown])
            reply = await self._ask(messages, last.program, turn, seed, target)
            code = extract_code(reply.text)
            last = await self._evaluate(c, turn, code if code is not None else last.program,
                                        code is not None, _call_record(reply))
            history.append(last)
        best = max(t.passed / t.total for t in history[1:]) if len(history) > 1 else 0.0
        if last.turn > 0 and last.all_pass:
            return SubmissionDone(id=c.id, status="repaired", turns=last.turn,
                                  reference=last.program, buggy_pass_rate=rate,
                                  best_pass_rate=1.0)
        n = self.params.turns
        return SubmissionDone(id=c.id, status="failed", turns=n, buggy_pass_rate=rate,
                              best_pass_rate=best,
                              reason=f"repair failed after {n} turn{'s' if n != 1 else ''}",
                              detail=f"{c.sub.where} (best pass rate {best:.2f})")

    async def _ask(self, messages: list[Message], program: str, turn: int, seed: int,
                   target: Instance | None) -> Completion:
        """A real model sees only the messages; the sim gets its hidden target out of band."""
        if target is None:
            result: Completion = await self.model.complete(messages, seed=seed & 0x7FFFFFFF)
            return result
        context = TurnContext(instance=target, program=program, turn=turn, level=SIM_LEVEL,
                              target_lines=[], evidence=None, seed=seed, protocol=FORMAT)
        result = await self.model.complete(messages, context=context)
        return result


# -- the output ------------------------------------------------------------------------------


def _finish(params: BuildParams, scan: Scan, report: ImportReport) -> list[Instance]:
    """The instances the log says were made, in row order, checked; fills ``report``.

    Blocking (difflib, reading the log): run in a thread.
    """
    from .files import check_instance

    prior = _prior(read_log(params.work_dir)[0], params.work_dir)
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
    from .importers import _check_options

    if not params.sources:
        raise ConfigError("no source files given")
    if params.turns < 1 or params.concurrency < 1:
        raise ConfigError("turns and concurrency must be at least 1")
    _check_options("codeforces", params.options)
    scheme = parse_model_spec(params.model)[0]
    if scheme not in ("openai", "sim"):
        raise ConfigError(f"build-dataset repairs with a candidate model (openai:MODEL[@URL] or "
                          f"sim:SKILL), not {params.model!r}")
    return make_model(params.model, load_model_config(params.config)) if make else None


async def build_dataset(params: BuildParams, *, pool: SandboxPool | None = None,
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


async def _build(params: BuildParams, pool: SandboxPool | None, model: Any,
                 on_record: Callable[[BuildRecord], None] | None) -> ImportReport:
    report = ImportReport(format=FORMAT, sources=list(params.sources))
    sources_hash = await asyncio.to_thread(_sources_hash, params.sources)
    prior, valid = await asyncio.to_thread(_open_work, params, _manifest(params, sources_hash))
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
            await _run_all(_Build(params, scan, pool, model, writer, prior, on_record), todo)
    finally:
        await writer.aclose()
        if own:
            await pool.aclose()
    instances = await asyncio.to_thread(_finish, params, scan, report)
    await asyncio.to_thread(_write, params.out, instances)
    report.imported = len(instances)
    report.out = params.out
    return report


async def _run_all(build: _Build, todo: Sequence[Candidate]) -> None:
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
