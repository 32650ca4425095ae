"""``feedbackeval``: FeedbackEval's HumanEval half, joined with HumanEval itself.

Source (seed 001): ``dataset/HumanEval/HumanEval_feedback.jsonl``, per line
``task_id``, ``test`` (HumanEval's ``check`` followed by ``check(<entry_point>)``) and
``false_results``, a list of erroneous programs ``{source, generate_code, ...feedback}``;
with ``--humaneval HumanEval.jsonl`` for the prompt, canonical solution and entry
point of each task (joined by ``task_id``).

Each erroneous program becomes one call-kind instance ``<task_id>:<k>`` (``k`` its
index in ``false_results``): the buggy program is ``generate_code``, the reference
HumanEval's prompt + canonical solution, the tests FeedbackEval's ``test`` split by
the recording proxy (:mod:`.record_calls`, one split per task, shared by its
programs). Each buggy program is run on its tests in the sandbox: its pass rate goes
to ``meta["buggy_pass_rate"]``, and a program that passes every split test (its error
is not visible as a wrong return value) is skipped, since it has nothing to repair.

The recorded feedback texts are kept on ``Instance.feedback`` so that FeedbackEval's
feedback types can be replayed. The paper names four types; the published file
names its fields differently, so both spellings are read (:data:`FEEDBACK_FIELDS`):

=============  ===========================================  ====================
key            source fields, first present wins            type
=============  ===========================================  ====================
``test``       ``test_feedback``                            pytest short trace
``compiler``   ``compiler_feedback``                        list of pylint lines
``human``      ``human_feedback``, ``llm_expert_feedback``  paragraph
``simple``     ``simple_feedback``, ``minimal_feedback``    fixed sentence
=============  ===========================================  ====================

Any other ``*_feedback`` field is kept too, under its name without the suffix
(``llm_skilled_feedback`` -> ``llm_skilled``). The report counts erroneous programs
as rows.

Project context (``Instance.context``, FeedbackEval's "@@Context" and its ``nocontext``
ablation) comes only with the CoderEval half, which needs CoderEval's own container and
is not imported; HumanEval's rows have none, so ``--prompt-style nocontext`` changes
nothing on them (a native ``jsonl`` dataset may carry a ``context`` field).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import msgspec

from ...core.errors import ConfigError, DatasetError
from ...core.types import Instance, Program, Test
from ...sandbox.pool import SandboxPool
from .common import ImportOptions, ImportReport, get_field, read_jsonl, run_program
from .humaneval import HumanEvalTask, read_humaneval, record_split_counts
from .limits import limits_meta, measure_reference, with_limits
from .record_calls import INVALID_SPLIT, SplitOutcome, prepare_test_source, split_check

__all__ = ["FEEDBACK_FIELDS", "import_feedbackeval"]

#: Instance.feedback key -> FeedbackEval fields, in order of preference.
FEEDBACK_FIELDS: dict[str, tuple[str, ...]] = {
    "test": ("test_feedback",),
    "compiler": ("compiler_feedback",),
    "human": ("human_feedback", "llm_expert_feedback"),
    "simple": ("simple_feedback", "minimal_feedback"),
}

NO_TASK = "task not in the HumanEval file"
PASSES = "buggy program passes every split test"


class _Program:
    """One well-formed erroneous program of a FeedbackEval row."""

    __slots__ = ("code", "feedback", "index", "origin")

    def __init__(self, index: int, code: str, origin: str | None, feedback: dict[str, Any]) -> None:
        self.index = index
        self.code = code
        self.origin = origin
        self.feedback = feedback


class _Row:
    __slots__ = ("line", "path", "programs", "task_id", "test")

    def __init__(self, path: str, line: int, task_id: str, test: str,
                 programs: list[_Program]) -> None:
        self.path = path
        self.line = line
        self.task_id = task_id
        self.test = test
        self.programs = programs


def _feedback(item: dict[str, Any], path: str, line: int, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    used: set[str] = set()
    for key, names in FEEDBACK_FIELDS.items():
        for name in names:
            if item.get(name) is not None:
                value = item[name]
                ok = (all(isinstance(x, str) for x in value) if isinstance(value, list)
                      else isinstance(value, str))
                if not ok:
                    raise DatasetError(path, line, f"{where}.{name}",
                                       "expected a string or a list of strings")
                out[key] = value
                used.add(name)
                break
    for name, value in item.items():
        if name.endswith("_feedback") and name not in used and isinstance(value, (str, list)):
            out.setdefault(name.removesuffix("_feedback"), value)
    return out


def _programs(path: str, line: int, row: dict[str, Any], report: ImportReport) -> list[_Program]:
    items = get_field(row, "false_results", list, path, line)
    programs: list[_Program] = []
    for k, item in enumerate(items):
        where = f"false_results[{k}]"
        try:
            if not isinstance(item, dict):
                raise DatasetError(path, line, where,
                                   f"expected an object, got {type(item).__name__}")
            code = get_field(item, "generate_code", str, path, line, nonempty=True)
            origin = get_field(item, "source", str, path, line, required=False)
            programs.append(_Program(k, code, origin, _feedback(item, path, line, where)))
        except DatasetError as exc:
            if exc.field and not exc.field.startswith(where):
                exc = DatasetError(path, line, f"{where}.{exc.field}", exc.reason)
            report.malformed_row(exc)
    return programs


def _read_rows(path: str, report: ImportReport) -> list[_Row]:
    rows: list[_Row] = []
    for line, row in read_jsonl(path):
        if isinstance(row, DatasetError):
            report.rows += 1
            report.malformed_row(row)
            continue
        items = row.get("false_results")
        n = len(items) if isinstance(items, list) else 1
        report.rows += n
        try:
            task_id = get_field(row, "task_id", str, path, line, nonempty=True)
            test = get_field(row, "test", str, path, line, nonempty=True)
            programs = _programs(path, line, row, report)
        except DatasetError as exc:
            report.rows += 0 if n else 1
            report.malformed_row(exc, max(n, 1))
            continue
        rows.append(_Row(path, line, task_id, test, programs))
    return rows


async def _pass_rate(pool: SandboxPool, task: HumanEvalTask, outcome: SplitOutcome, code: str,
                     options: ImportOptions, tests: Sequence[Test]) -> float:
    """The share of ``tests`` (with their derived limits, if any) the program passes."""
    program = Program(source=code, kind="call", entry_point=task.entry_point)
    results = await run_program(pool, program, tests, options.call_limits, outcome.checker)
    return sum(r.passed for r in results) / len(results)


async def import_feedbackeval(sources: Sequence[str], options: ImportOptions, pool: SandboxPool,
                              report: ImportReport) -> list[Instance]:
    if options.humaneval is None:
        raise ConfigError("feedbackeval needs HumanEval itself: pass --humaneval HumanEval.jsonl")
    # HumanEval's own malformed lines are reported, but its rows are not this import's rows
    side = ImportReport(format="humaneval", sources=[options.humaneval])
    tasks: dict[str, HumanEvalTask] = {}
    for task in read_humaneval(options.humaneval, side):
        tasks.setdefault(task.task_id, task)
    report.problems.extend(f"(--humaneval) {p}" for p in side.problems)
    report.count("malformed rows in the HumanEval file", side.malformed)

    rows: list[tuple[_Row, HumanEvalTask, str]] = []
    seen: set[str] = set()
    for path in sources:
        for row in _read_rows(path, report):
            where = f"{row.path}:{row.line}: {row.task_id}"
            found = tasks.get(row.task_id)
            if found is None or row.task_id in seen:
                report.skip(NO_TASK if found is None else "duplicate task_id", where,
                            len(row.programs))
                continue
            try:
                test = prepare_test_source(row.test, row.path, row.line, "test")
            except DatasetError as exc:
                report.malformed_row(exc, len(row.programs))
                continue
            seen.add(row.task_id)
            rows.append((row, found, test))

    outcomes = await asyncio.gather(*(
        split_check(pool, task.reference, test, task.entry_point, options.call_limits)
        for _, task, test in rows))

    # one measurement of the reference per task: every erroneous program of a task
    # gets the same per-test limits
    derive = options.derive_limits is not False
    timings = await asyncio.gather(*(
        measure_reference(pool, Program(source=task.reference, kind="call",
                                        entry_point=task.entry_point),
                          outcome.tests, options.call_limits, outcome.checker, options.time_runs)
        if derive and outcome.failure is None else _none()
        for (_, task, _), outcome in zip(rows, outcomes, strict=True)))
    limits_of: dict[str, tuple[list[Test], float, dict[str, Any]]] = {}

    pending: list[tuple[_Row, HumanEvalTask, SplitOutcome, _Program]] = []
    for (row, task, _), outcome, ref_ms in zip(rows, outcomes, timings, strict=True):
        record_split_counts(report, outcome)
        if outcome.failure is None and derive and ref_ms is None:
            outcome = msgspec.structs.replace(
                outcome, failure=INVALID_SPLIT,
                detail="the reference failed a test while its time was measured")
        if outcome.failure is None:
            if ref_ms is None:
                limits_of[row.task_id] = (outcome.tests, options.time_limit, {})
            else:
                tests = with_limits(outcome.tests, ref_ms, options.time_floor,
                                    options.time_factor, options.time_limit)
                limits_of[row.task_id] = (
                    tests, max(t.time_limit or 0.0 for t in tests),
                    {"limits": limits_meta(options.time_floor, options.time_factor,
                                           options.time_runs, options.time_limit)})
        if outcome.failure is not None:
            report.skip(outcome.failure, f"{row.path}:{row.line}: {row.task_id}: {outcome.detail}",
                        len(row.programs))
            continue
        pending.extend((row, task, outcome, p) for p in row.programs)

    rates = await asyncio.gather(*(
        _pass_rate(pool, task, outcome, program.code, options, limits_of[row.task_id][0])
        for row, task, outcome, program in pending))

    instances: list[Instance] = []
    for (row, task, outcome, program), rate in zip(pending, rates, strict=True):
        if rate == 1.0:
            report.skip(PASSES,
                        f"{row.path}:{row.line}: {row.task_id} false_results[{program.index}]")
            continue
        report.count("tests", len(outcome.tests))
        tests, time_limit, meta = limits_of[row.task_id]
        instances.append(Instance(
            id=f"{row.task_id}:{program.index}",
            problem=task.prompt,
            buggy=program.code,
            reference=task.reference,
            tests=tests,
            kind="call",
            entry_point=task.entry_point,
            time_limit=time_limit,
            memory_limit_mb=options.memory_limit_mb,
            checker=outcome.checker,
            source="feedbackeval",
            tags=[program.origin] if program.origin else [],
            feedback=program.feedback,
            meta={"task_id": row.task_id, "false_result": program.index,
                  "buggy_pass_rate": round(rate, 6), **meta},
        ))
    return instances


async def _none() -> None:
    return None
