"""One episode: an (instance, candidate, protocol, run) trajectory, turn by turn.

Turn 0 is the unhinted repair; then the protocol decides each turn:

* ``pair``: PAIR-BENCH. The policy (Algorithm 1) picks a failure scenario and a
  hint level; the feedback model writes a hint from the level's evidence mask; the
  leakage validator accepts it or asks again (every attempt is recorded); the
  candidate revises; the program is evaluated on every hidden test.
* ``nohint``: the same number of revision turns with no hint at all.

Every evaluated turn is emitted as a :class:`TurnRecord` (with the policy state,
the resume checkpoint) before the next begins; the episode ends with an
:class:`EpisodeRecord`. A model or sandbox error ends the episode as ``error``
after the turns already recorded; it never escapes to the sweep.

The candidate only ever gets the messages built by :mod:`._prompts`; offline
models also get a :class:`~._offline.TurnContext` out of band.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import msgspec

from ._baselines import (
    BASELINES,
    MODEL_FEEDBACK,
    PROTECTED,
    RECORDED,
    SIMPLE_FEEDBACK,
    VALIDATED,
    code_corrections,
    compiler_feedback,
    critique_hint,
    feedback_messages,
    first_sentence,
    recorded_text,
    selfcritique_messages,
    simulated_level,
    test_feedback,
)
from ._errors import ClientError, ConfigError, SandboxError
from ._extract import extract_code
from ._hints import Evidence, build_evidence, build_feedback_prompt, mask_evidence
from ._leakage import (
    HiddenData,
    HintAttempt,
    HintOutcome,
    ValidationPolicy,
    retry_messages,
    review,
    validate_hint,
)
from ._offline import TurnContext
from ._policy import Plan, PolicyConfig, PolicyState, Stop, observe, plan, start
from ._prompts import TurnSummary, initial_prompt, turn_prompt
from ._records import Completion, Instance, Message, TestResult, Verdict
from ._scenarios import Scenario, failure_type, sample_representatives
from ._runlog import CallRecord, EpisodeRecord, HintRecord, Record, TargetRecord, TurnRecord
from ._shapes import Shape
from ._styles import apply_styles

__all__ = ["EpisodeEnv", "EpisodeSpec", "derive_seed", "run_episode", "target_record"]

PROTOCOLS = ("pair", *BASELINES)


def derive_seed(*parts: object) -> int:
    """A stable 63-bit seed from any parts (never Python's randomised ``hash``)."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


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
    if spec.protocol not in PROTOCOLS:
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
            state: PolicyState = prior[-1].policy or start()
            results, _ = await env.evaluate(instance, program)
            history = [TurnSummary(turn=r.turn, hint=r.hint.text if r.hint else None,
                                   code_found=r.code_found,
                                   changed=i == 0 or r.program != prior[i - 1].program)
                       for i, r in enumerate(prior) if r.turn > 0]
        else:
            context = TurnContext(instance=instance, program=instance.buggy, turn=0, level=None,
                                  target_lines=[], evidence=None, seed=spec.seed, protocol=spec.protocol)
            shown = await env.view(instance)
            reply = await _call(candidate, apply_styles(initial_prompt(shown), env.styles, env.minimal_edit),
                                env, context)
            code = extract_code(reply.text)
            program = code if code is not None else instance.buggy
            results, ms = await env.evaluate(instance, program)
            state = start()
            passed, failed = _split(instance, results)
            rates.append(len(passed) / len(instance.tests))
            await env.emit(TurnRecord(**base(
                turn=0, program=program, passed=passed, failed=failed, pass_rate=rates[-1],
                verdicts=dict(Counter(r.verdict.value for r in results.values())),
                code_found=code is not None, calls=[_call_record("candidate", reply)],
                policy=state if spec.protocol == "pair" else None, sandbox_ms=ms)))
            history = []
            turn_no = 1

        traces = await env.traces(instance) if spec.protocol in ("pair", *MODEL_FEEDBACK) else {}
        shapes = env.shapes(instance)
        while True:
            failing = [t.id for t in instance.tests if results[t.id].verdict is not Verdict.AC]
            decision: Plan | None = None
            hint: HintOutcome | None = None
            calls: list[CallRecord] = []
            if spec.protocol == "pair":
                state, step = plan(env.policy, state, failing, results, traces, shapes, spec.seed)
                if isinstance(step, Stop):
                    return await finish("done", turn_no - 1, step.reason)
                decision = step
                hint = await _hint(spec, instance, feedback, env, decision, program, results, traces, calls)
            else:
                if not failing:
                    return await finish("done", turn_no - 1, "all_pass")
                if turn_no > env.policy.turns:
                    return await finish("done", turn_no - 1, "budget")
                hint = await _baseline_hint(spec, instance, candidate, feedback, env, turn_no, program,
                                            failing, results, traces, calls)
            turn = turn_no
            target_lines = sorted({line for tid in (decision.scenario.tests if decision else ())
                                   for line in traces.get(tid, ())})
            level = decision.level if decision else simulated_level(spec.protocol, spec.seed, turn)
            context = TurnContext(instance=instance, program=program, turn=turn,
                                  level=level, target_lines=target_lines,
                                  evidence=None, seed=spec.seed, protocol=spec.protocol)
            messages = turn_prompt(await env.view(instance), program, hint.text if hint else None, history)
            reply = await _call(candidate, apply_styles(messages, env.styles, env.minimal_edit), env, context)
            calls.append(_call_record("candidate", reply))
            code = extract_code(reply.text)
            new_program = code if code is not None else program
            results, ms = await env.evaluate(instance, new_program)
            passed, failed = _split(instance, results)
            rates.append(len(passed) / len(instance.tests))
            if decision is not None:
                state = observe(env.policy, state, decision, passed)
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
                                fallback=hint.fallback) if hint else None,
                protected=spec.protocol in PROTECTED,
                calls=calls, policy=state if spec.protocol == "pair" else None, sandbox_ms=ms)))
            turn_no += 1
    except (ClientError, SandboxError, ConfigError) as exc:
        return await finish("error", max(0, turn_no - 1), None, f"{type(exc).__name__}: {exc}")


async def _baseline_hint(spec: EpisodeSpec, instance: Instance, candidate: Any, feedback: Any, env: EpisodeEnv,
                         turn: int, program: str, failing: Sequence[str], results: Mapping[str, TestResult],
                         traces: Mapping[str, Sequence[int]], calls: list[CallRecord]) -> HintOutcome | None:
    """The feedback of a baseline protocol's turn (level 0 = no level control)."""
    kind = spec.protocol
    if kind == "nohint":
        return None
    if kind in RECORDED and program == instance.buggy:
        text = recorded_text(instance.feedback.get(kind))
        # the source dataset's own feedback for this very program; a recorded review
        # must still pass the validator to count as hidden-test protected
        if text is not None and (kind != "human" or not validate_hint(
                text, 6, Evidence(problem=instance.problem), program, env.hidden(instance))):
            return HintOutcome(text=text, level=0, attempts=())
    if kind == "compiler":
        return HintOutcome(text=compiler_feedback(await env.lint(program)), level=0, attempts=())
    if kind == "simple":
        return HintOutcome(text=SIMPLE_FEEDBACK, level=0, attempts=())
    if kind == "selfcritique":
        context = TurnContext(instance=instance, program=program, turn=turn, level=None, target_lines=[],
                              evidence=None, seed=derive_seed(spec.seed, "critique"), protocol=kind)
        reply = await _call(candidate, selfcritique_messages(await env.view(instance), program), env, context)
        calls.append(_call_record("candidate", reply))
        return HintOutcome(text=critique_hint(reply.text), level=0, attempts=())
    everyone = Scenario(id="all-failing", level="type", failure=failure_type(results[failing[0]]),
                        tests=tuple(failing))
    picks = sample_representatives(everyone, env.policy.scenarios.representatives, derive_seed(spec.seed, turn))
    if kind == "test":
        by_id = {t.id: t for t in instance.tests}
        return HintOutcome(text=test_feedback(by_id[picks[0]], results[picks[0]]), level=0, attempts=())
    assert kind in MODEL_FEEDBACK
    if kind == "code" and getattr(feedback, "uses_context", False):  # the offline simulated user
        return HintOutcome(text=code_corrections(program, instance.reference), level=0, attempts=())
    evidence = build_evidence(instance, everyone, picks, results, traces, program)
    messages = feedback_messages(kind, evidence)
    hidden = env.hidden(instance)
    attempts: tuple[HintAttempt, ...] = ()
    while True:
        context = TurnContext(instance=instance, program=program, turn=turn, level=None, target_lines=[],
                              evidence=evidence, attempt=len(attempts), seed=spec.seed, protocol=kind,
                              hidden=hidden)
        reply = await _call(feedback, messages, env, context)
        calls.append(_call_record("feedback", reply))
        text = first_sentence(reply.text) if kind == "sentence" else reply.text
        if kind not in VALIDATED:
            return HintOutcome(text=text.strip(), level=0, attempts=(HintAttempt(text=text),))
        attempts, outcome = review(attempts, text, level=6, evidence=evidence, candidate_code=program,
                                   hidden=hidden, failure=everyone.failure, policy=env.validation)
        if outcome is not None:
            return msgspec.structs.replace(outcome, level=0)
        messages = retry_messages(messages, attempts[-1])


async def _hint(spec: EpisodeSpec, instance: Instance, feedback: Any, env: EpisodeEnv, decision: Plan,
                program: str, results: Mapping[str, TestResult], traces: Mapping[str, Sequence[int]],
                calls: list[CallRecord]) -> HintOutcome:
    """Generate a hint, validate it, regenerate up to the budget (every attempt kept)."""
    level = decision.level
    target_lines = sorted({line for tid in decision.scenario.tests for line in traces.get(tid, ())})
    evidence = mask_evidence(level, build_evidence(instance, decision.scenario, decision.representatives,
                                                   results, traces, program))
    messages = build_feedback_prompt(level, evidence, evidence.scenario)
    attempts: tuple[HintAttempt, ...] = ()
    hidden = env.hidden(instance)
    while True:
        context = TurnContext(instance=instance, program=program, turn=decision.turn, level=level,
                              target_lines=target_lines, evidence=evidence, attempt=len(attempts), seed=spec.seed,
                              protocol=spec.protocol, hidden=hidden)
        reply = await _call(feedback, messages, env, context)
        calls.append(_call_record("feedback", reply))
        attempts, outcome = review(attempts, reply.text, level=level, evidence=evidence,
                                   candidate_code=program, hidden=hidden,
                                   failure=decision.scenario.failure, policy=env.validation)
        if outcome is not None:
            return outcome
        messages = retry_messages(messages, attempts[-1])
