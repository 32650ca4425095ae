"""Splitting a HumanEval ``check(candidate)`` into one call test per candidate call.

HumanEval-style tests are a function ``check(candidate)`` whose asserts come in every
style: plain ``assert candidate(x) == y``, loops over random inputs, tolerance checks,
helpers from the prompt (``poly``, ``encode_cyclic``), expected exceptions. Parsing
assert shapes cannot cover them; *running* ``check`` can. The importer builds one
call-kind program (:func:`build_recorder`) that defines

1. the reference (prompt + canonical solution),
2. the dataset's test source, with any top-level ``check(...)`` call removed,
3. ``__pb_record__()``, which calls ``check`` with a recording proxy as ``candidate``.

The proxy deep-copies each call's arguments *before* the call (the reference may
mutate them), calls the real reference, deep-copies its result at once (``check``
may mutate it afterwards) and hands the result back to ``check``, so ``check`` runs
exactly as it would against the reference. ``__pb_record__`` returns the list of
calls; the sandbox child JSON-normalises it exactly as it normalises a candidate's
return value later, so the recorded expected values and the values candidates
return are compared on the same footing. The program runs in the sandbox pool like
any untrusted code: dataset test sources are never executed in this process.

A call becomes a test only when its arguments are JSON values (None, bools, numbers,
finite floats, strings, lists, tuples, dicts with string keys) and the reference
returned a value with a JSON form (sets, bytes, NaN and complex numbers have tagged
forms; generators and other objects do not). Tuples in arguments arrive as lists: a
function that distinguishes the two is caught by the validation run. A call whose
reference raised (``check`` expecting an exception) cannot be a value test either.
Such calls are counted per reason and left out; identical calls are kept once.

A split test asks for the reference's own value, which is at least as strict as the
assert it came from and sometimes stricter: an assert that checked only a property
(truthiness, membership, ``poly(xs, root) ~ 0`` for HumanEval/32) also accepted other
values, which the split test rejects. On HumanEval every task splits, and the only
call left out is HumanEval/95's dict with integer keys.

Tolerance rule: HumanEval compares with ``==``, so a task's checker compares return
values exactly (``abs_tol = rel_tol = 0``), unless its test source contains a
tolerance check (a call of ``abs``, ``fabs``, ``isclose``, ``allclose`` or
``approx``): then numbers match within ``1e-6``, absolute or relative, at any depth.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

import msgspec

from ...core.errors import DatasetError
from ...core.types import Checker, Limits, Program, Test, Verdict
from ...sandbox.pool import SandboxPool
from .common import describe_failures, run_program

__all__ = [
    "EXACT",
    "RECORDER_ENTRY",
    "TOLERANT",
    "Recording",
    "Split",
    "SplitOutcome",
    "build_recorder",
    "checker_for",
    "prepare_test_source",
    "recording_from_value",
    "split_calls",
    "split_check",
    "strip_check_calls",
]

#: The entry point of the recording program.
RECORDER_ENTRY = "__pb_record__"
#: Limits of the one recording run (the whole ``check``, with copying overhead).
RECORD_LIMITS = Limits(time_limit=30.0, memory_limit_mb=1024, wall_limit=90.0)
#: Calls recorded at most per task; further calls still run, unrecorded (and counted).
MAX_CALLS = 5000

EXACT = Checker(abs_tol=0.0, rel_tol=0.0)
TOLERANT = Checker(abs_tol=1e-6, rel_tol=1e-6)
_TOLERANCE = re.compile(r"\b(?:abs|fabs|isclose|allclose|approx)\s*\(")

# Runs inside the sandbox child, appended to the reference and the test source.
# Names it adds at module level start with ``__pb_`` so they cannot collide.
_RECORDER = '''

def __pb_record__():
    import copy
    calls = []
    limit = {max_calls}
    reference = __pb_reference__
    overflow = [0]

    def issue(value, depth):
        if depth > 100:
            return "nested too deeply"
        if value is None or isinstance(value, (bool, int, str)):
            return None
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                return "a non-finite float argument"
            return None
        if isinstance(value, (list, tuple)):
            for item in value:
                why = issue(item, depth + 1)
                if why is not None:
                    return why
            return None
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    return "a dict argument with non-string keys"
                why = issue(item, depth + 1)
                if why is not None:
                    return why
            return None
        return "a " + type(value).__name__ + " argument"

    def candidate(*args, **kwargs):
        if len(calls) >= limit:
            overflow[0] += 1
            return reference(*args, **kwargs)
        entry = {{}}
        calls.append(entry)
        why = issue(list(args), 0) or issue(kwargs, 0)
        if why is None:
            try:
                entry["args"] = copy.deepcopy(list(args))
                entry["kwargs"] = copy.deepcopy(kwargs)
            except BaseException:
                why = "arguments that cannot be copied"
        if why is not None:
            entry["why"] = why
        try:
            result = reference(*args, **kwargs)
        except BaseException as exc:
            entry["why"] = entry.get("why") or "the reference raised " + type(exc).__name__
            raise
        try:
            entry["value"] = copy.deepcopy(result)
        except BaseException:
            entry["why"] = entry.get("why") or "a " + type(result).__name__ + " result"
        return result

    error = None
    try:
        check(candidate)
    except BaseException as exc:
        try:
            text = str(exc)
        except BaseException:
            text = ""
        error = (type(exc).__name__ + (": " + text if text else ""))[:500]
    return {{"calls": calls, "error": error, "overflow": overflow[0]}}
'''


def strip_check_calls(test_source: str) -> str:
    """``test_source`` without top-level ``check(...)`` statements (FeedbackEval appends one).

    Raises ``SyntaxError`` when the source does not parse and ``ValueError`` when it
    defines no ``check`` function.
    """
    tree = ast.parse(test_source)
    if not any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body):
        raise ValueError("defines no check(candidate) function")
    lines = test_source.splitlines(keepends=True)
    for node in reversed(tree.body):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name) and node.value.func.id == "check"):
            end = node.end_lineno if node.end_lineno is not None else node.lineno
            del lines[node.lineno - 1:end]
    return "".join(lines)


def checker_for(test_source: str) -> Checker:
    """The tolerance rule of the module docstring."""
    return TOLERANT if _TOLERANCE.search(test_source) else EXACT


def build_recorder(reference: str, test_source: str, entry_point: str) -> Program:
    """The call-kind program whose ``__pb_record__()`` returns every candidate call.

    ``test_source`` must already be stripped of top-level ``check(...)`` calls.
    """
    source = (
        reference.rstrip("\n") + "\n\n"
        + f"__pb_reference__ = {entry_point}\n\n"
        + test_source.rstrip("\n") + "\n"
        + _RECORDER.format(max_calls=MAX_CALLS)
    )
    return Program(source=source, kind="call", entry_point=RECORDER_ENTRY)


class RecordedCall(msgspec.Struct, frozen=True):
    """One call of ``candidate`` as the child reported it (already JSON-normalised)."""

    args: list[Any] | None = None
    kwargs: dict[str, Any] | None = None
    value: Any | msgspec.UnsetType = msgspec.UNSET
    why: str | None = None


class Recording(msgspec.Struct, frozen=True):
    """What one run of ``check`` with the recording proxy produced."""

    calls: list[RecordedCall]
    error: str | None = None
    overflow: int = 0


def recording_from_value(value: Any) -> Recording:
    """Decode the recorder's normalised return value; ``ValueError`` when it is not one."""
    try:
        return msgspec.convert(value, Recording)
    except msgspec.ValidationError as exc:
        raise ValueError(f"the recording program returned no recording ({exc})") from exc


class Split(msgspec.Struct):
    """The tests split out of one ``check``, with why some calls were left out."""

    tests: list[Test]
    #: reason -> number of calls left out for it
    left_out: dict[str, int] = {}
    duplicates: int = 0
    calls: int = 0


def _has_no_json_value(value: Any, depth: int = 0) -> bool:
    """True when a normalised value holds an object with no JSON form (``$type``/``$error``)."""
    if depth > 200:
        return True
    if isinstance(value, list):
        return any(_has_no_json_value(v, depth + 1) for v in value)
    if isinstance(value, dict):
        if "$type" in value or "$error" in value:
            return True
        return any(_has_no_json_value(v, depth + 1) for v in value.values())
    return False


def split_calls(recording: Recording) -> Split:
    """Turn recorded calls into call tests ``001``, ``002``, ... in first-call order."""
    split = Split(tests=[], calls=len(recording.calls))
    seen: set[str] = set()
    kept: list[tuple[list[Any], dict[str, Any] | None, Any]] = []

    def leave_out(reason: str) -> None:
        split.left_out[reason] = split.left_out.get(reason, 0) + 1

    for call in recording.calls:
        if call.why is not None:
            leave_out(call.why)
            continue
        if call.args is None or call.value is msgspec.UNSET:
            leave_out("an incomplete record")
            continue
        if _has_no_json_value(call.value):
            leave_out("a result with no JSON value")
            continue
        key = json.dumps([call.args, call.kwargs or {}], sort_keys=True)
        if key in seen:
            split.duplicates += 1
            continue
        seen.add(key)
        kept.append((call.args, call.kwargs or None, call.value))
    if recording.overflow:
        split.left_out[f"calls beyond the first {MAX_CALLS}"] = recording.overflow
    width = max(3, len(str(len(kept))))
    split.tests = [Test(id=f"{i:0{width}d}", args=args, kwargs=kwargs, expected=value)
                   for i, (args, kwargs, value) in enumerate(kept, start=1)]
    return split


def prepare_test_source(test_source: str, path: str, line: int, field: str) -> str:
    """:func:`strip_check_calls`, with a bad source reported as a malformed field."""
    try:
        return strip_check_calls(test_source)
    except SyntaxError as exc:
        raise DatasetError(path, line, field, f"does not parse as Python 3 ({exc.msg}, "
                           f"line {exc.lineno})") from exc
    except ValueError as exc:
        raise DatasetError(path, line, field, str(exc)) from exc


#: Task-level reasons a ``check`` yields no instance (skip categories).
DOES_NOT_RUN = "reference or test source does not run"
CHECK_FAILS = "reference fails the original check"
NO_CALLS = "check has no splittable calls"
INVALID_SPLIT = "reference fails its split tests"


class SplitOutcome(msgspec.Struct):
    """The tests of one task, or the reason (a skip category) and details why there are none."""

    tests: list[Test]
    checker: Checker
    split: Split | None = None
    failure: str | None = None
    detail: str = ""


async def split_check(pool: SandboxPool, reference: str, test_source: str, entry_point: str,
                      limits: Limits) -> SplitOutcome:
    """Record ``check``'s calls against ``reference`` in the sandbox, then validate them.

    ``test_source`` is already stripped (:func:`prepare_test_source`). Validation runs
    the reference on the produced tests, as a candidate would be run (``limits``, the
    task's checker): a task whose reference does not pass them all gets a failure.
    """
    checker = checker_for(test_source)
    recorder = build_recorder(reference, test_source, entry_point)
    # no expected value: the pool keeps the recording whole, whatever its size (a test
    # with one would refuse a value much larger than it, and keep at most 64 KiB)
    [result] = await run_program(pool, recorder, [Test(id="record", args=[])],
                                 RECORD_LIMITS, EXACT)
    if result.verdict not in (Verdict.AC, Verdict.WA):
        tail = result.stderr.strip().splitlines()[-1:] if result.stderr.strip() else []
        why = result.verdict.value + (f" {result.error}" if result.error else "")
        return SplitOutcome(tests=[], checker=checker, failure=DOES_NOT_RUN,
                            detail=why + (f" ({tail[0][:300]})" if tail else ""))
    try:
        recording = recording_from_value(result.value)
    except ValueError as exc:
        return SplitOutcome(tests=[], checker=checker, failure=DOES_NOT_RUN, detail=str(exc)[:300])
    split = split_calls(recording)
    if recording.error is not None:
        return SplitOutcome(tests=[], checker=checker, split=split, failure=CHECK_FAILS,
                            detail=recording.error)
    if not split.tests:
        reasons = ", ".join(f"{n} x {why}" for why, n in sorted(split.left_out.items()))
        return SplitOutcome(tests=[], checker=checker, split=split, failure=NO_CALLS,
                            detail=f"{split.calls} call(s)" + (f": {reasons}" if reasons else ""))
    program = Program(source=reference, kind="call", entry_point=entry_point)
    failures = describe_failures(await run_program(pool, program, split.tests, limits, checker))
    if failures:
        return SplitOutcome(tests=[], checker=checker, split=split, failure=INVALID_SPLIT,
                            detail=failures)
    return SplitOutcome(tests=split.tests, checker=checker, split=split)
