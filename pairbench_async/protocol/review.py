"""The one loop that turns a feedback model's replies into a hint a candidate may see.

Ask the feedback model; let the LLM judge (when one is configured) and the leakage
rules review the reply (:func:`.leakage.review`); ask again with the reasons
(:func:`.leakage.retry_messages`) until a hint is accepted or the budget is spent, then
the level's fallback. Every protocol whose feedback is model-written and validated
runs its hints through here; the rules themselves are pure and in :mod:`.leakage`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.types import Message
from .context import TurnContext
from .evidence import Evidence
from .judge import JudgeIO, judge_hint
from .leakage import HiddenData, HintAttempt, HintOutcome, ValidationPolicy, retry_messages, review

__all__ = ["ReviewIO", "reviewed_hint"]


class ReviewIO(JudgeIO):
    """What the loop needs of a protocol's window on the run (``FeedbackIO`` has it)."""

    #: the budget and thresholds of the leakage validator
    validation: ValidationPolicy

    async def ask_feedback(self, messages: list[Message], context: TurnContext) -> str: ...


async def reviewed_hint(
    io: ReviewIO,
    messages: list[Message],
    context: Callable[[int], TurnContext],
    *,
    level: int,
    evidence: Evidence,
    program: str,
    hidden: HiddenData,
    failure: str,
    reply: Callable[[str], tuple[str, int]] = lambda text: (text, 0),
) -> tuple[HintOutcome, int]:
    """Ask the feedback model, let the judge (if any) and the rules review the hint, and ask
    again with the reasons until one is accepted or the budget is spent (then the fallback).

    ``context(n)`` is attempt ``n``'s context for offline models; ``reply`` turns the model's
    text into the hint and says how many words it cut. Returns the outcome and the words cut
    from the accepted text (0 for a fallback).
    """
    attempts: tuple[HintAttempt, ...] = ()
    while True:
        attempt = context(len(attempts))
        text, cut = reply(await io.ask_feedback(messages, attempt))
        judged = await judge_hint(io, text, level=level, evidence=evidence, candidate_code=program,
                                  hidden=hidden, context=attempt, policy=io.validation)
        attempts, outcome = review(attempts, text, level=level, evidence=evidence, candidate_code=program,
                                   hidden=hidden, failure=failure, policy=io.validation, judge=judged)
        if outcome is not None:
            return outcome, 0 if outcome.fallback else cut
        messages = retry_messages(messages, attempts[-1])
