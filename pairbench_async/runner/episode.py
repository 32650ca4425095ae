"""One episode: an (instance, candidate, protocol, run) trajectory, turn by turn.

Turn 0 is the unhinted repair (or, for FeedbackEval's protocols, the erroneous
program as given, evaluated without a model call); then every turn is the same loop,
whatever the protocol: the protocol object (:data:`~..protocol.protocols.PROTOCOLS`) gives the
turn's feedback or says the episode stops (``pair``: Algorithm 1 picks a failure
scenario and a level, the feedback model writes a hint from the level's evidence
mask, the leakage validator accepts it or asks again; the baselines: their own
feedback, or none for ``nohint``), the candidate revises, the program is evaluated
on every hidden test, and the protocol observes the result.

Every evaluated turn is emitted as a :class:`TurnRecord` (with the policy state,
the resume checkpoint) before the next begins; the episode ends with an
:class:`EpisodeRecord`. A model or sandbox error ends the episode as ``error``
after the turns already recorded; it never escapes to the sweep.

The candidate only ever gets the messages its protocol builds
(:meth:`~..protocol.protocols.Protocol.candidate_prompt`: :mod:`..protocol.prompts`, or a
source paper's own prompt with ``baselines="paper"``); offline models also get a
:class:`~..protocol.context.TurnContext` out of band.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import msgspec

from ..core.errors import BadResponse, ClientError, ConfigError, PairbenchError, SandboxError
from ..core.types import Completion, Instance, Message, TestResult, Verdict
from ..models.interface import ContextModel, ModelClient
from ..models.redact import redact
from ..protocol.context import TurnContext
from ..protocol.extract import extract_code
from ..protocol.leakage import HiddenData, ValidationPolicy
from ..protocol.policy import Plan, PolicyConfig, PolicyState, Stop
from ..protocol.prompts import TurnSummary, initial_prompt
from ..protocol.protocols import PROTOCOLS, TurnInput, derive_seed
from ..protocol.shapes import Shape
from ..protocol.styles import apply_styles, prompt_parts
from ..runlog.records import CallRecord, EpisodeRecord, HintRecord, Record, TargetRecord, TurnRecord

_log = logging.getLogger("pairbench_async.runner.calls")

__all__ = ["PROTOCOLS", "CallMeter", "EpisodeEnv", "EpisodeSpec", "derive_seed", "run_episode", "target_record"]


class EpisodeSpec(msgspec.Struct, frozen=True):
    run_id: str
    episode_id: str
    instance_id: str
    model: str
    feedback: str
    protocol: str
    run: int
    seed: int
    #: the attempt this is (``--retry-errors``: 1, 2, ... after errored ones); on every record
    attempt: int = 0


class EpisodeEnv(msgspec.Struct):
    """What an episode needs from the run: evaluation, traces, shapes, parameters."""

    evaluate: Callable[[Instance, str], Awaitable[tuple[dict[str, TestResult], float]]]
    traces: Callable[[Instance], Awaitable[Mapping[str, Sequence[int]]]]
    shapes: Callable[[Instance], Mapping[str, Shape]]
    hidden: Callable[[Instance], HiddenData]
    emit: Callable[[Record], Awaitable[None]]
    lint: Callable[[str], Awaitable[str]]
    #: the instance as the candidate sees it (``--obfuscate``: a one-sentence problem)
    view: Callable[[Instance], Awaitable[Instance]]
    policy: PolicyConfig
    validation: ValidationPolicy
    temperature: float | None = None
    max_tokens: int | None = None
    styles: tuple[str, ...] = ()
    minimal_edit: bool = False
    #: how the source papers' baselines run (``RunConfig.baselines``): ``paper`` or ``pairbench``
    baselines: str = "paper"
    #: the leakage validator's LLM judge (``--validator-model``), or None: rules only
    validator: Any = None
    #: ``(spec, ask) -> (reply, shared_from)``: turn 0's repair, one per (candidate, instance,
    #: run) across protocols; ``ask()`` makes the call when no episode has; ``shared_from``
    #: names the episode whose call it was (None: this one's). None: every episode asks.
    first_repair: Callable[[EpisodeSpec, Callable[[], Awaitable[Completion]]],
                           Awaitable[tuple[Completion, str | None]]] | None = None
    #: counts the model calls as they happen (:class:`CallMeter`), or None
    meter: Any = None

    #: stores the messages of a call and returns their ids (``runlog.messages.MessageLog.put``);
    #: None: calls are recorded without their messages
    messages: Callable[[Sequence[Message]], list[str]] | None = None


class CallMeter:
    """The model calls of a run as they happen: started, and in flight now (a status line's
    counts); each call is logged at DEBUG (``-vv``) with its model and latency."""

    __slots__ = ("in_flight", "started")

    def __init__(self) -> None:
        self.in_flight = 0
        self.started = 0


async def _call(model: ModelClient | ContextModel, messages: list[Message], context: TurnContext, *,
                temperature: float | None, max_tokens: int | None, meter: CallMeter | None = None) -> Completion:
    """One model call: a :class:`ContextModel` answers from the context, any other
    :class:`ModelClient` from the messages with the run's sampling settings.

    Whatever a client does wrong is the model's failure, recorded as the episode's error and
    named after the model: an exception of its own (not one of this package's), or a reply
    that is not a :class:`Completion`.
    """
    if meter is not None:
        meter.in_flight += 1
        meter.started += 1
    t0 = time.monotonic()
    ok = False
    try:
        if isinstance(model, ContextModel):
            reply = await model.complete_in_context(messages, context)
        else:
            reply = await model.complete(messages, temperature=temperature, max_tokens=max_tokens,
                                         seed=context.seed & 0x7FFFFFFF)
        ok = True
    except PairbenchError:
        raise
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise  # the run (or the embedder) cancelled this episode
        # a client's own CancelledError (anyio, an HTTP library's timeout) is its failure,
        # not this episode's cancellation: it would otherwise end the episode unrecorded
        raise ClientError(f"model {getattr(model, 'name', model)!r} raised CancelledError") from None
    except Exception as exc:  # an embedder's client failing its own way
        raise ClientError(f"model {getattr(model, 'name', model)!r} raised {type(exc).__name__}: {exc}") from exc
    finally:
        if meter is not None:
            meter.in_flight -= 1
        if _log.isEnabledFor(logging.DEBUG):
            _log.debug("call %s (%s, turn %d): %s after %.0f ms", getattr(model, "spec", None) or model.name,
                       context.instance.id, context.turn, "answered" if ok else "failed",
                       (time.monotonic() - t0) * 1000)
    if not isinstance(reply, Completion):
        raise BadResponse(f"model {getattr(model, 'name', model)!r} returned a {type(reply).__name__}, "
                          "not a Completion")
    if not isinstance(reply.text, str):
        raise BadResponse(f"model {getattr(model, 'name', model)!r} returned a Completion whose text is a "
                          f"{type(reply.text).__name__}, not a str")
    return reply


def _call_record(env: EpisodeEnv, role: str, sent: Sequence[Message], c: Completion) -> CallRecord:
    """The call as recorded: the messages ``sent`` (stored by content, see
    ``runlog.messages``), the raw reply, its usage."""
    ids = env.messages(sent) if env.messages is not None else []
    return CallRecord(role=role, model=c.model, text=c.text, usage=c.usage,  # type: ignore[arg-type]
                      latency_ms=c.latency_ms, attempts=c.attempts, messages=ids)


def _split(instance: Instance, results: Mapping[str, TestResult]) -> tuple[list[str], list[str]]:
    passed = [t.id for t in instance.tests if results[t.id].verdict is Verdict.AC]
    failed = [t.id for t in instance.tests if results[t.id].verdict is not Verdict.AC]
    return passed, failed


def target_record(decision: Plan) -> TargetRecord:
    """G_t as recorded; the grouping's back-off may have dropped its trace and shape."""
    sc = decision.scenario
    return TargetRecord(scenario_id=sc.id, tests=list(sc.tests), grouping=decision.grouping,
                        failure=sc.failure, shape=sc.shape, trace=list(sc.trace or ()),
                        representatives=list(decision.representatives), continued=decision.continued)


async def run_episode(
    spec: EpisodeSpec,
    instance: Instance,
    candidate: Any,
    feedback: Any,
    env: EpisodeEnv,
    prior: Sequence[TurnRecord] = (),
) -> EpisodeRecord:
    """Run (or resume after ``prior``) one episode; emits its records, returns the last."""
    protocol = PROTOCOLS.get(spec.protocol)
    if protocol is None:
        raise ConfigError(f"unknown protocol {spec.protocol!r} (known: {', '.join(PROTOCOLS)})")
    episode = _Episode(spec, instance, candidate, feedback, env, protocol)
    try:
        if prior:
            await episode.resume(prior)
        else:
            await episode.first_turn()
        traces = await env.traces(instance) if protocol.needs_traces else {}
        while True:
            stop = await episode.next_turn(traces)
            if stop is not None:
                return await episode.finish("done", episode.turn_no - 1, stop.reason)
    except (ClientError, SandboxError, ConfigError) as exc:
        # outside text (a client's message) is recorded without anything key-shaped in it
        return await episode.finish("error", max(0, episode.turn_no - 1), None,
                                    redact(f"{type(exc).__name__}: {exc}"))


class _Episode:
    """One episode between its turns: the program and its results, the pass rates so
    far, the protocol's state and the history the candidate is shown.

    Every turn, the first included, ends the same way (:meth:`_score`, then
    :meth:`_record`): the program is run, its tests split and its pass rate kept.
    """

    def __init__(self, spec: EpisodeSpec, instance: Instance, candidate: Any, feedback: Any,
                 env: EpisodeEnv, protocol: Any) -> None:
        self.spec, self.instance, self.env, self.protocol = spec, instance, env, protocol
        self.candidate, self.feedback = candidate, feedback
        self.rates: list[float] = []
        self.turn_no = 0
        self.program = instance.buggy
        self.results: dict[str, TestResult] = {}
        self.state: PolicyState | None = None
        self.history: list[TurnSummary] = []

    def _base(self, **kw: Any) -> dict[str, Any]:
        s = self.spec
        return dict(run_id=s.run_id, episode_id=s.episode_id, instance_id=self.instance.id,
                    model=s.model, protocol=s.protocol, run=s.run, seed=s.seed, attempt=s.attempt, **kw)

    async def finish(self, status: str, turns: int, reason: str | None, error: str | None = None) -> EpisodeRecord:
        rates = self.rates
        rec = EpisodeRecord(**self._base(status=status, turns=turns, stop_reason=reason, error=error,
                                         initial_pass_rate=rates[0] if rates else None,
                                         final_pass_rate=rates[-1] if rates else None,
                                         best_pass_rate=max(rates) if rates else None))
        await self.env.emit(rec)
        return rec

    async def resume(self, prior: Sequence[TurnRecord]) -> None:
        """Continue after the recorded turns: their last program, run again."""
        self.rates = [r.pass_rate for r in prior]
        self.turn_no = len(prior)
        self.program = prior[-1].program
        self.state = prior[-1].policy or self.protocol.start()
        self.results, _ = await self.env.evaluate(self.instance, self.program)
        self.history = [TurnSummary(turn=r.turn, hint=r.hint.text if r.hint else None, code_found=r.code_found,
                                    changed=i == 0 or r.program != prior[i - 1].program)
                        for i, r in enumerate(prior) if r.turn > 0]

    async def first_turn(self) -> None:
        """Turn 0: the candidate's unhinted repair, or (FeedbackEval's protocols) the
        erroneous program itself."""
        given = self.protocol.starts_from_erroneous
        calls: list[CallRecord] = []
        code: str | None = self.instance.buggy
        shared_from: str | None = None
        if not given:
            env = self.env
            context = self._context(turn=0, level=None, target_lines=[])
            shown = await env.view(self.instance)
            paper = env.baselines == "paper"
            messages = apply_styles(initial_prompt(shown, prompt_parts(env.styles, paper)), env.styles,
                                    env.minimal_edit, paper=paper)

            async def ask() -> Completion:
                return await _call(self.candidate, messages, context, temperature=env.temperature,
                                   max_tokens=env.max_tokens, meter=env.meter)

            if env.first_repair is None:
                reply = await ask()
            else:
                reply, shared_from = await env.first_repair(self.spec, ask)
            if shared_from is None:
                calls.append(_call_record(env, "candidate", messages, reply))
            code = extract_code(reply.text)
        self.state = self.protocol.start()
        await self._record(0, code, calls, given=given, shared_from=shared_from)

    async def next_turn(self, traces: Mapping[str, Sequence[int]]) -> Stop | None:
        """One hinted turn: the protocol's feedback, the candidate's revision, its score."""
        env, instance = self.env, self.instance
        failing = [t.id for t in instance.tests if self.results[t.id].verdict is not Verdict.AC]
        calls: list[CallRecord] = []
        paper = env.baselines == "paper"
        step = await self.protocol.feedback(TurnInput(
            instance=instance, program=self.program, turn=self.turn_no, failing=failing, results=self.results,
            traces=traces, shapes=env.shapes(instance), seed=self.spec.seed, state=self.state,
            last_hint=self.history[-1].hint if self.history else None),
            _TurnIO(self.candidate, self.feedback, env, calls))
        if isinstance(step, Stop):
            return step
        hint, decision = step.hint, step.plan
        context = self._context(turn=self.turn_no, level=step.level, target_lines=list(step.target_lines))
        messages = self.protocol.candidate_prompt(await env.view(instance), self.program,
                                                  hint.text if hint else None, self.history, env.styles, paper)
        # FeedbackEval's own prompt places Fig. 9's cot and fewshot texts itself
        code = await self._ask_candidate(messages, context, calls,
                                         placed=paper and self.protocol.paper_prompt == "feedbackeval")
        self.history.append(TurnSummary(turn=self.turn_no, hint=hint.text if hint else None,
                                        code_found=code is not None,
                                        changed=code is not None and code != self.program))
        await self._record(
            self.turn_no, code, calls, step=step, target=target_record(decision) if decision is not None else None,
            hint_level=decision.level if decision else None,
            hint=HintRecord(level=hint.level, text=hint.text, attempts=list(hint.attempts),
                            fallback=hint.fallback, words_cut=hint.words_cut, source=hint.source) if hint else None,
            protected=self.protocol.protected_in(paper))
        return None

    def _context(self, *, turn: int, level: int | None, target_lines: list[int]) -> TurnContext:
        return TurnContext(instance=self.instance, program=self.program, turn=turn, level=level,
                           target_lines=target_lines, evidence=None, seed=self.spec.seed, protocol=self.spec.protocol)

    async def _ask_candidate(self, messages: list[Message], context: TurnContext,
                             calls: list[CallRecord], placed: bool = False) -> str | None:
        """The candidate's reply to ``messages`` (styled), recorded; the code it holds."""
        env = self.env
        sent = apply_styles(messages, env.styles, env.minimal_edit, paper=env.baselines == "paper", placed=placed)
        reply = await _call(self.candidate, sent, context, temperature=env.temperature,
                            max_tokens=env.max_tokens, meter=env.meter)
        calls.append(_call_record(env, "candidate", sent, reply))
        return extract_code(reply.text)

    async def _record(self, turn: int, code: str | None, calls: list[CallRecord], *, step: Any = None,
                      **fields: Any) -> None:
        """Score the turn's program (the previous one when no code came back), advance
        the protocol's state and emit the turn's record."""
        program = code if code is not None else self.program
        self.results, ms = await self.env.evaluate(self.instance, program)
        passed, failed = _split(self.instance, self.results)
        self.rates.append(len(passed) / len(self.instance.tests))
        if step is not None:
            self.state = self.protocol.observe(self.env.policy, self.state, step, passed)
        self.program = program
        await self.env.emit(TurnRecord(**self._base(
            turn=turn, program=program, passed=passed, failed=failed, pass_rate=self.rates[-1],
            verdicts=dict(Counter(r.verdict.value for r in self.results.values())),
            code_found=code is not None, **fields, calls=calls,
            policy=self.state if self.protocol.controlled else None, sandbox_ms=ms)))
        self.turn_no = turn + 1


class _TurnIO:
    """A protocol's window on the run for one turn: the models (every call recorded
    in ``calls``, in order, with the messages sent; the judge's as role ``validator``), the linter, the
    candidate's view, the hidden data."""

    def __init__(self, candidate: Any, feedback: Any, env: EpisodeEnv, calls: list[CallRecord]) -> None:
        self._candidate, self._feedback, self._env, self._calls = candidate, feedback, env, calls
        self.policy = env.policy
        self.validation = env.validation
        self.offline_feedback = isinstance(feedback, ContextModel)
        self.judging = env.validator is not None
        self.paper = env.baselines == "paper"

    def hidden(self, instance: Instance) -> HiddenData:
        return self._env.hidden(instance)

    async def ask_feedback(self, messages: list[Message], context: TurnContext) -> str:
        reply = await _call(self._feedback, messages, context, temperature=self._env.temperature,
                            max_tokens=self._env.max_tokens, meter=self._env.meter)
        self._calls.append(_call_record(self._env, "feedback", messages, reply))
        return reply.text

    async def ask_candidate(self, messages: list[Message], context: TurnContext) -> str:
        reply = await _call(self._candidate, messages, context, temperature=self._env.temperature,
                            max_tokens=self._env.max_tokens, meter=self._env.meter)
        self._calls.append(_call_record(self._env, "candidate", messages, reply))
        return reply.text

    async def ask_validator(self, messages: list[Message], context: TurnContext) -> str:
        """The judge's reply, at temperature 0 (a verdict should not depend on a draw)."""
        reply = await _call(self._env.validator, messages, context, temperature=0.0,
                            max_tokens=self._env.max_tokens, meter=self._env.meter)
        self._calls.append(_call_record(self._env, "validator", messages, reply))
        return reply.text

    async def lint(self, program: str) -> str:
        return await self._env.lint(program)

    async def view(self, instance: Instance) -> Instance:
        return await self._env.view(instance)
