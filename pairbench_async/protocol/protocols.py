"""Every protocol as an object, and the registry of them: name → protocol.

A protocol decides one thing per turn: the feedback the candidate gets (or that the
episode stops). The episode loop (:mod:`..runner.episode`) is the same for all of
them: ask the protocol for this turn's feedback, ask the candidate, evaluate, let the
protocol observe the result, record. What differs between protocols is said here,
as attributes (hidden-test protected, validated, written by the feedback model,
controlled by Algorithm 1's policy, ...) and in :meth:`Protocol.feedback`.

Pure like the rest of the wing: the models, the linter and the candidate's view of
the instance are reached through the :class:`FeedbackIO` the runner passes in, so
this module does no I/O of its own. Adding a protocol is a subclass here and a line
in :data:`PROTOCOLS`.

The source papers' baselines run as the papers ran them by default (``paper``, see
:data:`BASELINE_MODES`): FeedbackEval's four with its Fig. 5 repair prompt and the
dataset's recorded texts replayed verbatim, When Benchmarks Talk's five with its user-
and code-model prompts (the candidate sees only its latest attempt; ``selfcritique``
critiques it itself) and no leakage validator. ``pairbench`` is the earlier adaptation (validated feedback, PAIR-BENCH's
candidate prompt with the history), kept so that runs made with it resume as they ran.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from typing import ClassVar, Literal
from typing import Protocol as Interface

import msgspec

from ..core.types import Instance, Message, TestResult
from .baselines import (
    SIMPLE_FEEDBACK,
    WORD_CAPS,
    cap_words,
    code_corrections,
    compiler_feedback,
    critique_hint,
    feedback_messages,
    first_sentence,
    recorded_text,
    selfcritique_messages,
    test_feedback,
)
from .context import TurnContext
from .evidence import Evidence, build_evidence
from .feedback_prompt import build_feedback_prompt
from .feedbackeval_prompts import feedbackeval_prompt, pylint_lines
from .hints import mask_evidence
from .leakage import (
    HiddenData,
    HintAttempt,
    HintOutcome,
    ValidationPolicy,
    validate_hint,
)
from .policy import Plan, PolicyConfig, PolicyState, Stop, observe, plan, start
from .prompts import TurnSummary, turn_prompt
from .review import reviewed_hint
from .scenarios import Scenario, failure_type, sample_representatives
from .shapes import Shape
from .styles import prompt_parts
from .wbt_prompts import code_model_prompt, self_critique_code_prompt, self_critique_messages, user_model_messages

__all__ = [
    "BASELINES",
    "BASELINE_MODES",
    "BaselineMode",
    "CallBudget",
    "PROTOCOLS",
    "Feedback",
    "FeedbackIO",
    "Protocol",
    "TurnInput",
    "derive_seed",
]


#: How the source papers' baselines run: ``paper`` (as the papers ran them, the default)
#: or ``pairbench`` (the earlier adaptation; see the module docstring)
BaselineMode = Literal["paper", "pairbench"]
BASELINE_MODES: tuple[str, ...] = ("paper", "pairbench")


def derive_seed(*parts: object) -> int:
    """A stable 63-bit seed from any parts (never Python's randomised ``hash``)."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


class TurnInput(msgspec.Struct, frozen=True, kw_only=True):
    """What a protocol knows when it decides turn ``turn``'s feedback."""

    instance: Instance
    program: str
    turn: int
    failing: Sequence[str]
    results: Mapping[str, TestResult]
    traces: Mapping[str, Sequence[int]]
    shapes: Mapping[str, Shape]
    seed: int
    #: the policy state (the resume checkpoint) of a controlled protocol, else None
    state: PolicyState | None
    #: the feedback of the most recent revision turn (None: none yet, or none given);
    #: ``rephrase`` rewrites the question it last rephrased
    last_hint: str | None = None


class Feedback(msgspec.Struct, frozen=True, kw_only=True):
    """One turn's feedback: the hint (None: revise without one) and what it was about."""

    hint: HintOutcome | None
    #: PAIR-BENCH's G_t and level; None for the baselines, which have neither
    plan: Plan | None = None
    #: how informative the feedback is, for the offline ``sim`` candidate only
    level: int | None = None
    #: reference lines executed by the targeted tests (the sim candidate's fault locator)
    target_lines: Sequence[int] = ()
    #: a controlled protocol's policy state once this turn was planned
    state: PolicyState | None = None


class FeedbackIO(Interface):
    """What a protocol may use besides its inputs; the runner provides it and records
    every model call made through it."""

    policy: PolicyConfig
    validation: ValidationPolicy
    #: the feedback model is the offline one, which reads the turn context itself
    offline_feedback: bool
    #: a validator model (``--validator-model``) judges the hints the rules accept
    judging: bool
    #: the baselines run as their papers ran them (``baselines="paper"``)
    paper: bool

    def hidden(self, instance: Instance) -> HiddenData: ...

    async def ask_feedback(self, messages: list[Message], context: TurnContext) -> str: ...

    async def ask_candidate(self, messages: list[Message], context: TurnContext) -> str: ...

    async def ask_validator(self, messages: list[Message], context: TurnContext) -> str: ...

    async def lint(self, program: str) -> str: ...

    async def view(self, instance: Instance) -> Instance: ...


class CallBudget(msgspec.Struct, frozen=True):
    """At most how many model calls one episode makes: turn 0's candidate call (none
    when the protocol starts from the erroneous program), then per revision turn."""

    first_candidate: int
    candidate_per_turn: int
    feedback_per_turn: int
    judge_per_turn: int


class Protocol:
    """A feedback protocol. Subclasses set the attributes and implement :meth:`hint`."""

    name: ClassVar[str]
    #: the paper that defines it (for ``docs/PROTOCOL.md`` and the report)
    source: ClassVar[str] = ""
    #: never shows a hidden test, expected output or reference line to the candidate
    protected: ClassVar[bool] = True
    #: its feedback is written by the feedback model
    model_written: ClassVar[bool] = False
    #: model-written feedback goes through the leakage validator (at level 6 for baselines)
    validated: ClassVar[bool] = False
    #: ``protected`` and ``validated`` under ``baselines="pairbench"``, where they differ
    pairbench_protected: ClassVar[bool | None] = None
    pairbench_validated: ClassVar[bool | None] = None
    #: the paper's own candidate prompt, used with ``baselines="paper"``: ``feedbackeval``
    #: (Fig. 5), ``wbt`` (When Benchmarks Talk's Fig. 14), ``rephrase`` (its Fig. 13
    #: with the rephrased question) or ``selfcritique`` (its Fig. 13 with the latest
    #: attempt and its critique); empty: PAIR-BENCH's prompt
    paper_prompt: ClassVar[str] = ""
    #: an imported instance may carry this protocol's feedback on the original program
    #: (FeedbackEval), replayed on the turn whose program is still the buggy one
    recorded: ClassVar[bool] = False
    #: Algorithm 1 chooses scenario and level; its state is recorded every turn
    controlled: ClassVar[bool] = False
    #: turn 0 is the erroneous program as given, evaluated without a model call, and
    #: the first feedback is computed on it (FeedbackEval: "the LLMs were provided with
    #: the initial erroneous code and corresponding feedback, after which they performed
    #: a repair iteration"); otherwise turn 0 is PAIR-BENCH's unhinted repair
    starts_from_erroneous: ClassVar[bool] = False
    #: candidate calls per revision turn: the revision (``selfcritique`` adds its critique)
    candidate_calls_per_turn: ClassVar[int] = 1

    def protected_in(self, paper: bool) -> bool:
        """``protected`` under ``baselines="paper"`` (``paper``) or ``"pairbench"``."""
        return self.protected if paper or self.pairbench_protected is None else self.pairbench_protected

    def validated_in(self, paper: bool) -> bool:
        """``validated`` under ``baselines="paper"`` (``paper``) or ``"pairbench"``."""
        return self.validated if paper or self.pairbench_validated is None else self.pairbench_validated

    def call_budget(self, hint_budget: int, *, judged: bool, paper: bool = True) -> CallBudget:
        """The most model calls an episode of this protocol makes, by role and turn.

        ``hint_budget``: generations per validated hint; ``judged``: a validator model
        gives a verdict on each generation of validated feedback; ``paper``: the
        ``baselines`` mode.
        """
        validated = self.validated_in(paper)
        feedback = (hint_budget if validated else 1) if self.model_written else 0
        return CallBudget(first_candidate=0 if self.starts_from_erroneous else 1,
                          candidate_per_turn=self.candidate_calls_per_turn, feedback_per_turn=feedback,
                          judge_per_turn=feedback if judged and validated else 0)

    def candidate_prompt(self, view: Instance, program: str, hint: str | None, history: Sequence[TurnSummary],
                         styles: Sequence[str], paper: bool) -> list[Message]:
        """The candidate's messages for a revision turn (before :func:`.styles.apply_styles`).

        ``view`` is the instance as the candidate sees it. PAIR-BENCH's prompt with the
        history, unless ``paper`` and the protocol's paper has a prompt of its own.
        """
        parts = prompt_parts(styles, paper)
        if paper and self.paper_prompt == "feedbackeval":  # Fig. 5: no history in it
            return feedbackeval_prompt(view, program, hint, parts, cot="cot" in styles,
                                       fewshot="fewshot" in styles)
        if paper and self.paper_prompt == "wbt":  # Fig. 14: the latest attempt and its feedback only
            return code_model_prompt(view, view.problem, program, hint)
        if paper and self.paper_prompt == "rephrase":  # Fig. 13 with the rephrased question
            return code_model_prompt(view, hint or view.problem)
        if paper and self.paper_prompt == "selfcritique":  # Fig. 13, the latest attempt and its critique
            return self_critique_code_prompt(view, view.problem, program, hint)
        return turn_prompt(view, program, hint, history, parts)

    @property
    def needs_traces(self) -> bool:
        """Reference line traces feed its evidence (and the sim's fault locator)."""
        return self.controlled or self.model_written

    def start(self) -> PolicyState | None:
        """The state before turn 1 (None: the protocol keeps none)."""
        return None

    def simulated_level(self, seed: int, turn: int) -> int | None:
        """How informative the feedback is, for the offline ``sim`` candidate only.

        Real models never see it. Baselines have no level; this stands for their
        uncontrolled informativeness, which PAIR-BENCH's level control removes.
        """
        return None

    async def feedback(self, turn: TurnInput, io: FeedbackIO) -> Stop | Feedback:
        """This turn's feedback, or why the episode stops (a baseline stops when every
        test passes or after α revision turns)."""
        if not turn.failing:
            return Stop(reason="all_pass", turns=turn.turn - 1)
        if turn.turn > io.policy.turns:
            return Stop(reason="budget", turns=turn.turn - 1)
        return Feedback(hint=await self.hint(turn, io), level=self.simulated_level(turn.seed, turn.turn))

    def observe(self, policy: PolicyConfig, state: PolicyState | None, feedback: Feedback,
                passed: Sequence[str]) -> PolicyState | None:
        """The state after the turn was evaluated (``passed``: P_t); ``state`` is the one
        the turn started from, ``feedback.state`` the one its planning left."""
        return state

    async def hint(self, turn: TurnInput, io: FeedbackIO) -> HintOutcome | None:
        raise NotImplementedError

    # shared by the baselines that ground their feedback in failing tests
    def _everyone(self, turn: TurnInput, io: FeedbackIO) -> tuple[Scenario, Sequence[str]]:
        """All failing tests as one scenario, and its representatives for this turn."""
        failing = tuple(turn.failing)
        everyone = Scenario(id="all-failing", level="type", failure=failure_type(turn.results[failing[0]]),
                            tests=failing)
        picks = sample_representatives(everyone, io.policy.scenarios.representatives,
                                       derive_seed(turn.seed, turn.turn))
        return everyone, picks

    def _recorded(self, turn: TurnInput, io: FeedbackIO) -> HintOutcome | None:
        """The source dataset's own feedback for this very program, if it has one."""
        if not self.recorded or turn.program != turn.instance.buggy:
            return None
        text = recorded_text(turn.instance.feedback.get(self.name))
        return None if text is None else HintOutcome(text=text, level=0, attempts=(), source="recorded")


def _fixed(text: str) -> HintOutcome:
    return HintOutcome(text=text, level=0, attempts=())


def _draw(seed: int, turn: int, name: str, top: int) -> int:
    return random.Random(f"{seed}:{turn}:{name}").randint(1, top)


class Pair(Protocol):
    """PAIR-BENCH: Algorithm 1 picks a failure scenario and a hint level; the feedback
    model writes a hint from the level's evidence mask; the leakage validator accepts
    it or asks again (every attempt recorded)."""

    name = "pair"
    source = "PAIR-BENCH (seed 000), Section IV"
    model_written = True
    validated = True
    controlled = True

    def start(self) -> PolicyState:
        return start()

    async def feedback(self, turn: TurnInput, io: FeedbackIO) -> Stop | Feedback:
        state = turn.state if turn.state is not None else start()
        state, step = plan(io.policy, state, turn.failing, turn.results, turn.traces, turn.shapes, turn.seed)
        if isinstance(step, Stop):
            return step
        level = step.level
        target_lines = sorted({line for tid in step.scenario.tests for line in turn.traces.get(tid, ())})
        reading = io.policy.evidence_reading
        evidence = mask_evidence(level, build_evidence(turn.instance, step.scenario, step.representatives,
                                                       turn.results, turn.traces, turn.program), reading)
        hidden = io.hidden(turn.instance)

        def context(attempt: int) -> TurnContext:
            return TurnContext(instance=turn.instance, program=turn.program, turn=step.turn, level=level,
                               target_lines=target_lines, evidence=evidence, attempt=attempt,
                               seed=turn.seed, protocol=self.name, hidden=hidden, validation=io.validation)

        outcome, _ = await reviewed_hint(io, build_feedback_prompt(level, evidence, evidence.scenario, reading),
                                          context,
                                          level=level, evidence=evidence, program=turn.program, hidden=hidden,
                                          failure=step.scenario.failure)
        return Feedback(hint=outcome, plan=step, level=level, target_lines=target_lines, state=state)

    def observe(self, policy: PolicyConfig, state: PolicyState | None, feedback: Feedback,
                passed: Sequence[str]) -> PolicyState | None:
        assert feedback.state is not None and feedback.plan is not None
        return observe(policy, feedback.state, feedback.plan, passed)


class NoHint(Protocol):
    """The same number of revision turns with no feedback at all (PAIR-BENCH's RQ2 baseline)."""

    name = "nohint"
    source = "PAIR-BENCH (seed 000), RQ2"

    async def hint(self, turn: TurnInput, io: FeedbackIO) -> HintOutcome | None:
        return None


class Simple(Protocol):
    """"The code is wrong. Please fix it." (FeedbackEval)."""

    name = "simple"
    source = "FeedbackEval (seed 001)"
    recorded = True
    starts_from_erroneous = True
    paper_prompt = "feedbackeval"

    def simulated_level(self, seed: int, turn: int) -> int | None:
        return 1

    async def hint(self, turn: TurnInput, io: FeedbackIO) -> HintOutcome | None:
        return self._recorded(turn, io) or _fixed(SIMPLE_FEEDBACK)


class Compiler(Protocol):
    """pylint's messages on the current program (FeedbackEval)."""

    name = "compiler"
    source = "FeedbackEval (seed 001)"
    recorded = True
    starts_from_erroneous = True
    paper_prompt = "feedbackeval"

    def simulated_level(self, seed: int, turn: int) -> int | None:
        return 2

    async def hint(self, turn: TurnInput, io: FeedbackIO) -> HintOutcome | None:
        recorded = self._recorded(turn, io)
        if recorded is not None:
            return recorded
        output = await io.lint(turn.program)
        if io.paper:  # every message, worded and joined as a recorded text is (seed 001, Fig. 1)
            lines = pylint_lines(output, turn.program)
            return _fixed("\n".join(lines) if lines else compiler_feedback(""))
        return _fixed(compiler_feedback(output))


class FailingTest(Protocol):
    """One failing hidden test with its input, expected and actual output and the error
    (FeedbackEval): NOT hidden-test protected, and marked so in every record."""

    name = "test"
    source = "FeedbackEval (seed 001)"
    protected = False
    recorded = True
    starts_from_erroneous = True
    paper_prompt = "feedbackeval"

    def simulated_level(self, seed: int, turn: int) -> int | None:
        return 3

    async def hint(self, turn: TurnInput, io: FeedbackIO) -> HintOutcome | None:
        recorded = self._recorded(turn, io)
        if recorded is not None:
            return recorded
        _, picks = self._everyone(turn, io)
        test = next(t for t in turn.instance.tests if t.id == picks[0])
        return _fixed(test_feedback(test, turn.results[picks[0]]))


class SelfCritique(Protocol):
    """The candidate critiques its own program; its critique is its next feedback
    (When Benchmarks Talk's Self-Critique Baseline). With ``baselines="paper"`` both
    steps see only the (obfuscated) problem and the latest attempt, in that paper's
    code-model wording (Fig. 13); with ``pairbench``, PAIR-BENCH's prompts and history."""

    name = "selfcritique"
    source = "When Benchmarks Talk (Self-Critique Baseline)"
    paper_prompt = "selfcritique"
    candidate_calls_per_turn = 2  # the critique, then the revision

    def simulated_level(self, seed: int, turn: int) -> int | None:
        return 1

    async def hint(self, turn: TurnInput, io: FeedbackIO) -> HintOutcome | None:
        context = TurnContext(instance=turn.instance, program=turn.program, turn=turn.turn, level=None,
                              target_lines=[], evidence=None, seed=derive_seed(turn.seed, "critique"),
                              protocol=self.name)
        view = await io.view(turn.instance)
        messages = (self_critique_messages(view.problem, turn.program) if io.paper
                    else selfcritique_messages(view, turn.program))
        reply = await io.ask_candidate(messages, context)
        return _fixed(critique_hint(reply))


class ModelWritten(Protocol):
    """Feedback the feedback model writes, with no scenario selection and no level control:
    from the failing tests' evidence (validated at the most permissive level, 6, where the
    protocol is validated), or, for When Benchmarks Talk's protocols with
    ``baselines="paper"``, as that paper's user model (Figs. 8-12), unvalidated."""

    model_written = True
    validated = True
    #: the highest simulated level drawn per turn (uncontrolled informativeness)
    top_level: ClassVar[int] = 6
    #: the most words the candidate gets (the rest is cut and counted); None: no cap
    word_cap: ClassVar[int | None] = None

    def simulated_level(self, seed: int, turn: int) -> int | None:
        return _draw(seed, turn, self.name, self.top_level)

    def shape(self, text: str) -> str:
        """The model's reply as the feedback text (``sentence`` keeps one sentence)."""
        return text

    async def hint(self, turn: TurnInput, io: FeedbackIO) -> HintOutcome | None:
        everyone, picks = self._everyone(turn, io)
        evidence = build_evidence(turn.instance, everyone, picks, turn.results, turn.traces, turn.program)
        messages = feedback_messages(self.name, evidence)
        hidden = io.hidden(turn.instance)

        def context(attempt: int) -> TurnContext:
            return TurnContext(instance=turn.instance, program=turn.program, turn=turn.turn, level=None,
                               target_lines=[], evidence=evidence, attempt=attempt, seed=turn.seed,
                               protocol=self.name, hidden=hidden, validation=io.validation)

        def reply(text: str) -> tuple[str, int]:
            text = self.shape(text)
            return cap_words(text, self.word_cap) if self.word_cap is not None else (text, 0)

        if io.paper and self.paper_prompt in ("wbt", "rephrase"):  # the user model of seed 002's Figs. 8-12
            shown = turn.last_hint if self.paper_prompt == "rephrase" and turn.last_hint else None
            messages = user_model_messages(self.name, turn.instance.problem, turn.instance.reference,
                                           turn.program, shown or (await io.view(turn.instance)).problem)
        if not self.validated_in(io.paper):
            text, cut = reply(await io.ask_feedback(messages, context(0)))
            return HintOutcome(text=text.strip(), level=0, attempts=(HintAttempt(text=text),), words_cut=cut)
        outcome, cut = await reviewed_hint(io, messages, context, level=6, evidence=evidence, program=turn.program,
                                            hidden=hidden, failure=everyone.failure, reply=reply)
        return msgspec.structs.replace(outcome, level=0, words_cut=cut)


class Vanilla(ModelWritten):
    """A feedback-model hint on the failing tests every turn (PAIR-BENCH's RQ2 baseline)."""

    name = "vanilla"
    source = "PAIR-BENCH (seed 000), RQ2"


class Human(ModelWritten):
    """A review paragraph, as an experienced human reviewer would write it (FeedbackEval).

    The dataset's recorded review of the erroneous program is replayed verbatim; where
    there is none (a later program, or a row without one) the feedback model writes the
    review, and the record says so (``source``). Neither is validated: the recorded
    reviews were written by a model shown the correct code, so the protocol is NOT
    hidden-test protected. With ``baselines="pairbench"`` a recorded review must pass the
    validator, else a validated generated one replaces it (then protected).
    """

    name = "human"
    source = "FeedbackEval (seed 001)"
    recorded = True
    starts_from_erroneous = True
    paper_prompt = "feedbackeval"
    protected = False
    validated = False
    pairbench_protected = True
    pairbench_validated = True

    async def hint(self, turn: TurnInput, io: FeedbackIO) -> HintOutcome | None:
        recorded = self._recorded(turn, io)
        if recorded is not None and (io.paper or not validate_hint(
                recorded.text, 6, Evidence(problem=turn.instance.problem), turn.program, io.hidden(turn.instance),
                io.validation)):
            return recorded
        outcome = await super().hint(turn, io)
        return None if outcome is None else msgspec.structs.replace(outcome, source="generated")


class Paragraph(ModelWritten):
    """A simulated user who knows the reference explains the problem in a paragraph of at
    most 100 words (seed 002: "Do not write more than 100 words"). Unvalidated, as in the
    paper, so NOT hidden-test protected (validated and protected with ``pairbench``)."""

    name = "paragraph"
    source = "When Benchmarks Talk"
    word_cap = WORD_CAPS["paragraph"]
    paper_prompt = "wbt"
    protected = False
    validated = False
    pairbench_protected = True
    pairbench_validated = True


class Sentence(ModelWritten):
    """The same in one sentence of at most 50 words (seed 002: "Do not write more than 50
    words")."""

    name = "sentence"
    source = "When Benchmarks Talk"
    top_level = 3
    word_cap = WORD_CAPS["sentence"]
    paper_prompt = "wbt"
    protected = False
    validated = False
    pairbench_protected = True
    pairbench_validated = True

    def shape(self, text: str) -> str:
        return first_sentence(text)


class Rephrase(ModelWritten):
    """The feedback model rephrases the problem statement to clarify what the program misses;
    the candidate then writes the program from the rephrased question alone (seed 002)."""

    name = "rephrase"
    source = "When Benchmarks Talk"
    paper_prompt = "rephrase"
    protected = False
    validated = False
    pairbench_protected = True
    pairbench_validated = True


class Code(ModelWritten):
    """A simulated user who knows the reference gives line-level corrections. It shows
    reference code, so it is NOT hidden-test protected, and it is not validated."""

    name = "code"
    source = "When Benchmarks Talk"
    protected = False
    validated = False
    paper_prompt = "wbt"

    def simulated_level(self, seed: int, turn: int) -> int | None:
        return 6

    async def hint(self, turn: TurnInput, io: FeedbackIO) -> HintOutcome | None:
        if io.offline_feedback:  # the deterministic stand-in for a user who knows the solution
            return _fixed(code_corrections(turn.program, turn.instance.reference))
        return await super().hint(turn, io)


#: Every protocol by name, PAIR-BENCH first, then the baselines in the papers' order.
PROTOCOLS: Mapping[str, Protocol] = {
    p.name: p
    for p in (Pair(), NoHint(), Vanilla(), Simple(), Compiler(), FailingTest(), Human(), Paragraph(),
              Sentence(), Code(), Rephrase(), SelfCritique())
}
#: The baselines' names.
BASELINES: tuple[str, ...] = tuple(name for name in PROTOCOLS if name != "pair")
