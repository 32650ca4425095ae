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

The candidate only ever gets the messages built by :mod:`..protocol.prompts`; offline
models also get a :class:`~..protocol.context.TurnContext` out of band.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import msgspec

from ..core.errors import ClientError, ConfigError, SandboxError
from ..core.types import Completion, Instance, Message, TestResult, Verdict
from ..protocol.context import TurnContext
from ..protocol.extract import extract_code
from ..protocol.leakage import HiddenData, ValidationPolicy
from ..protocol.policy import Plan, PolicyConfig, PolicyState, Stop
from ..protocol.prompts import TurnSummary, initial_prompt, turn_prompt
from ..protocol.protocols import PROTOCOLS, TurnInput, derive_seed
from ..protocol.shapes import Shape
from ..protocol.styles import apply_styles, prompt_parts
from ..runlog.records import CallRecord, EpisodeRecord, HintRecord, Record, TargetRecord, TurnRecord

__all__ = ["PROTOCOLS", "EpisodeEnv", "EpisodeSpec", "derive_seed", "run_episode", "target_record"]


class EpisodeSpec(msgspec.Struct, frozen=True):
    run_id: str
    episode_id: str
    instance_id: str
    model: str
    feedback: str
    protocol: str
    run: int
    seed: int


class Model(Protocol):
    async def complete(self, messages: Sequence[Message], **kw: Any) -> Completion: ...


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
    #: the leakage validator's LLM judge (``--validator-model``), or None: rules only
    validator: Any = None


async def _call(model: Any, messages: list[Message], env: EpisodeEnv, context: TurnContext) -> Completion:
    if getattr(model, "uses_context", False):
        return await model.complete(messages, context=context)
    return await model.complete(messages, temperature=env.temperature, max_tokens=env.max_tokens,
                                seed=context.seed & 0x7FFFFFFF)


def _call_record(role: str, c: Completion) -> CallRecord:
    return CallRecord(role=role, model=c.model, text=c.text, usage=c.usage,  # type: ignore[arg-type]
                      latency_ms=c.latency_ms, attempts=c.attempts)


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
    rates: list[float] = [r.pass_rate for r in prior]
    turn_no = len(prior)

    def base(**kw: Any) -> dict[str, Any]:
        return dict(run_id=spec.run_id, episode_id=spec.episode_id, instance_id=instance.id,
                    model=spec.model, protocol=spec.protocol, run=spec.run, seed=spec.seed, **kw)

    async def finish(status: str, turns: int, reason: str | None, error: str | None = None) -> EpisodeRecord:
        rec = EpisodeRecord(**base(status=status, turns=turns, stop_reason=reason, error=error,
                                   initial_pass_rate=rates[0] if rates else None,
                                   final_pass_rate=rates[-1] if rates else None,
                                   best_pass_rate=max(rates) if rates else None))
        await env.emit(rec)
        return rec

    try:
        if prior:
            program = prior[-1].program
            state: PolicyState | None = prior[-1].policy or protocol.start()
            results, _ = await env.evaluate(instance, program)
            history = [TurnSummary(turn=r.turn, hint=r.hint.text if r.hint else None,
                                   code_found=r.code_found,
                                   changed=i == 0 or r.program != prior[i - 1].program)
                       for i, r in enumerate(prior) if r.turn > 0]
        else:
            given = protocol.starts_from_erroneous
            if given:  # FeedbackEval: the first feedback is on the erroneous program itself
                code, calls0 = instance.buggy, []
            else:
                context = TurnContext(instance=instance, program=instance.buggy, turn=0, level=None,
                                      target_lines=[], evidence=None, seed=spec.seed, protocol=spec.protocol)
                shown = await env.view(instance)
                first = initial_prompt(shown, prompt_parts(env.styles))
                reply = await _call(candidate, apply_styles(first, env.styles, env.minimal_edit), env, context)
                code, calls0 = extract_code(reply.text), [_call_record("candidate", reply)]
            program = code if code is not None else instance.buggy
            results, ms = await env.evaluate(instance, program)
            state = protocol.start()
            passed, failed = _split(instance, results)
            rates.append(len(passed) / len(instance.tests))
            await env.emit(TurnRecord(**base(
                turn=0, program=program, passed=passed, failed=failed, pass_rate=rates[-1],
                verdicts=dict(Counter(r.verdict.value for r in results.values())),
                code_found=code is not None, calls=calls0, given=given,
                policy=state if protocol.controlled else None, sandbox_ms=ms)))
            history = []
            turn_no = 1

        traces = await env.traces(instance) if protocol.needs_traces else {}
        shapes = env.shapes(instance)
        while True:
            failing = [t.id for t in instance.tests if results[t.id].verdict is not Verdict.AC]
            calls: list[CallRecord] = []
            io = _TurnIO(candidate, feedback, env, calls)
            step = await protocol.feedback(TurnInput(instance=instance, program=program, turn=turn_no,
                                                     failing=failing, results=results, traces=traces,
                                                     shapes=shapes, seed=spec.seed, state=state), io)
            if isinstance(step, Stop):
                return await finish("done", turn_no - 1, step.reason)
            turn, hint, decision = turn_no, step.hint, step.plan
            context = TurnContext(instance=instance, program=program, turn=turn,
                                  level=step.level, target_lines=list(step.target_lines),
                                  evidence=None, seed=spec.seed, protocol=spec.protocol)
            messages = turn_prompt(await env.view(instance), program, hint.text if hint else None, history,
                                   prompt_parts(env.styles))
            reply = await _call(candidate, apply_styles(messages, env.styles, env.minimal_edit), env, context)
            calls.append(_call_record("candidate", reply))
            code = extract_code(reply.text)
            new_program = code if code is not None else program
            results, ms = await env.evaluate(instance, new_program)
            passed, failed = _split(instance, results)
            rates.append(len(passed) / len(instance.tests))
            state = protocol.observe(env.policy, state, step, passed)
            history.append(TurnSummary(turn=turn, hint=hint.text if hint else None,
                                       code_found=code is not None, changed=new_program != program))
            program = new_program
            target = target_record(decision) if decision is not None else None
            await env.emit(TurnRecord(**base(
                turn=turn, program=program, passed=passed, failed=failed, pass_rate=rates[-1],
                verdicts=dict(Counter(r.verdict.value for r in results.values())),
                code_found=code is not None, target=target,
                hint_level=decision.level if decision else None,
                hint=HintRecord(level=hint.level, text=hint.text, attempts=list(hint.attempts),
                                fallback=hint.fallback, words_cut=hint.words_cut) if hint else None,
                protected=protocol.protected,
                calls=calls, policy=state if protocol.controlled else None, sandbox_ms=ms)))
            turn_no += 1
    except (ClientError, SandboxError, ConfigError) as exc:
        return await finish("error", max(0, turn_no - 1), None, f"{type(exc).__name__}: {exc}")


class _TurnIO:
    """A protocol's window on the run for one turn: the models (every call recorded
    in ``calls``, in order; the judge's as role ``validator``), the linter, the
    candidate's view, the hidden data."""

    def __init__(self, candidate: Any, feedback: Any, env: EpisodeEnv, calls: list[CallRecord]) -> None:
        self._candidate, self._feedback, self._env, self._calls = candidate, feedback, env, calls
        self.policy = env.policy
        self.validation = env.validation
        self.offline_feedback = bool(getattr(feedback, "uses_context", False))
        self.judging = env.validator is not None

    def hidden(self, instance: Instance) -> HiddenData:
        return self._env.hidden(instance)

    async def ask_feedback(self, messages: list[Message], context: TurnContext) -> str:
        reply = await _call(self._feedback, messages, self._env, context)
        self._calls.append(_call_record("feedback", reply))
        return reply.text

    async def ask_candidate(self, messages: list[Message], context: TurnContext) -> str:
        reply = await _call(self._candidate, messages, self._env, context)
        self._calls.append(_call_record("candidate", reply))
        return reply.text

    async def ask_validator(self, messages: list[Message], context: TurnContext) -> str:
        """The judge's reply, at temperature 0 (a verdict should not depend on a draw)."""
        model = self._env.validator
        if getattr(model, "uses_context", False):
            reply = await model.complete(messages, context=context)
        else:
            reply = await model.complete(messages, temperature=0.0, max_tokens=self._env.max_tokens,
                                         seed=context.seed & 0x7FFFFFFF)
        self._calls.append(_call_record("validator", reply))
        return reply.text

    async def lint(self, program: str) -> str:
        return await self._env.lint(program)

    async def view(self, instance: Instance) -> Instance:
        return await self._env.view(instance)
