"""One submission's way through ``build-dataset``: turn 0, then repair turns.

The build driver (:mod:`.build`) hands each wrong submission to :class:`Build`, which
evaluates it in the sandbox, applies the pass-rate and ``--prefer-ok`` rules, and then
asks the model for repairs (:func:`repair_prompt`: the statement, the current program
and the failing tests it picked) until every test passes or the turns run out,
writing one :class:`~.build_workdir.RepairTurn` per evaluated program and one
:class:`~.build_workdir.SubmissionDone` at the end. Kept apart from the driver so
that the per-submission loop and its prompt can be read (and tested) on their own.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from ..core.errors import ClientError, ConfigError, SandboxError
from ..core.types import Completion, Instance, Message, Program, Test, TestResult
from ..models.interface import ContextModel
from ..models.offline import TurnContext, stable_seed
from ..protocol.extract import extract_code
from ..protocol.prompts import fence_for, fenced
from ..runlog.records import CallRecord
from ..sandbox.interface import Sandbox
from .build_workdir import (
    FORMAT,
    BuildParams,
    BuildRecord,
    PriorWork,
    RepairTurn,
    ShownFailure,
    SubmissionDone,
)
from .importers.codeforces import (
    Candidate,
    ReferenceValidator,
    Scan,
    make_instance,
    pass_rate_skip,
    validated_reference,
)
from .importers.common import run_program

__all__ = [
    "CLIP_ERROR",
    "CLIP_INPUT",
    "CLIP_OUTPUT",
    "INTERNAL",
    "MODEL_ERROR",
    "NO_TARGET",
    "SANDBOX_FAULT",
    "SHOWN_FAILURES",
    "SIM_LEVEL",
    "Build",
    "repair_prompt",
]

#: Failing tests shown per repair turn, and how much of each text (characters).
SHOWN_FAILURES = 3
CLIP_INPUT, CLIP_OUTPUT, CLIP_ERROR = 1500, 800, 800
#: The simulated informativeness of failing-test feedback
#: (``protocol.protocols.FailingTest.simulated_level``).
SIM_LEVEL = 3

# report categories of submissions that are not written
NO_TARGET = "cannot simulate (sim: the problem has no OK submission to aim at)"
MODEL_ERROR = "model error"
SANDBOX_FAULT = "sandbox fault"
INTERNAL = "internal error"


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


class Build:
    """One build's shared state: the scan, the sandbox, the model, the log."""

    def __init__(self, params: BuildParams, scan: Scan, pool: Sandbox, model: Any,
                 writer: Any, prior: PriorWork,
                 on_record: Callable[[BuildRecord], None] | None) -> None:
        self.params = params
        self.scan = scan
        self.pool = pool
        self.model = model
        self.simulated = isinstance(model, ContextModel)
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
        result = await self.model.complete_in_context(messages, context)
        return result
