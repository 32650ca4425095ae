"""The package's one hint review loop (:func:`~pairbench_async.protocol.review.reviewed_hint`)
driven by a synchronous ``generate(messages) -> str``, with no judge: what a test of the
leakage rules or of the offline feedback model needs, through the code a run uses."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pairbench_async.core.types import Message
from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.feedback_prompt import build_feedback_prompt
from pairbench_async.protocol.leakage import HiddenData, HintOutcome, ValidationPolicy
from pairbench_async.protocol.review import reviewed_hint


class _SyncIO:
    judging = False

    def __init__(self, generate: Callable[[list[Message]], str], policy: ValidationPolicy) -> None:
        self.generate = generate
        self.validation = policy

    async def ask_feedback(self, messages: list[Message], context: Any) -> str:
        return self.generate(messages)

    async def ask_validator(self, messages: list[Message], context: Any) -> str:
        raise AssertionError("no judge is configured")


def produce_hint(generate: Callable[[list[Message]], str], *, level: int, evidence: Evidence,
                 candidate_code: str, hidden: HiddenData, failure: str,
                 policy: ValidationPolicy | None = None) -> HintOutcome:
    """Generate, review and regenerate a hint as a run does; the outcome."""
    io = _SyncIO(generate, policy or ValidationPolicy())
    messages = build_feedback_prompt(level, evidence, evidence.scenario)
    outcome, _ = asyncio.run(reviewed_hint(io, messages, lambda attempt: None,  # type: ignore[arg-type,return-value]
                                           level=level, evidence=evidence, program=candidate_code, hidden=hidden,
                                           failure=failure))
    return outcome
