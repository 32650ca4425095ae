"""What offline models are told out of band, and the usage they report.

The built-in models (:mod:`..models.sim`, :mod:`..models.rules`) implement the ``ModelClient``
protocol plus a ``context`` keyword: a :class:`TurnContext` of facts the orchestrator
gives offline models only (a real LLM sees nothing but the messages). Their token
usage is an estimate, ``ceil(chars / 4)``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import msgspec

from ..core.types import Instance, Message, Usage
from .evidence import Evidence
from .leakage import HiddenData, ValidationPolicy

__all__ = ["TurnContext", "estimate_usage", "stable_seed"]


class TurnContext(msgspec.Struct, frozen=True, kw_only=True):
    """Out-of-band facts for offline models; a real LLM only ever sees the messages.

    ``program`` is c_{t-1} (the buggy program at turn 0); ``target_lines`` are the
    reference lines executed by the targeted scenario's tests; ``evidence`` is the
    *masked* evidence of a feedback call (``None`` for candidate calls).
    """

    instance: Instance
    program: str
    turn: int
    level: int | None
    target_lines: list[int]
    evidence: Evidence | None
    attempt: int = 0
    seed: int
    protocol: str = "pair"
    #: the instance's hidden data, when the caller already holds it (it keeps the
    #: validator's per-instance index); rebuilt from ``instance`` otherwise
    hidden: HiddenData | None = None
    #: the run's validation policy (its reading of Table II), for an offline model that validates its own drafts
    validation: ValidationPolicy | None = None


def stable_seed(*parts: object) -> int:
    """A 64-bit seed from ``parts`` that is the same in every process (unlike ``hash``)."""
    text = "\x1f".join(str(part) for part in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def estimate_usage(messages: Sequence[Message], reply: str) -> Usage:
    """Tokens as ``ceil(chars / 4)`` of the prompt and of the reply."""
    return Usage(
        prompt_tokens=sum(math.ceil(len(m.content) / 4) for m in messages),
        completion_tokens=math.ceil(len(reply) / 4),
    )
