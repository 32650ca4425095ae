"""What a model is to the evaluator: the two protocols an embedder's client can meet.

Every model the evaluator talks to is a :class:`ModelClient`: it has a ``name`` (what
the records and the leaderboard call it) and answers chat messages. A model that
cannot work from text alone and answers from the turn's out-of-band
:class:`~..protocol.context.TurnContext` (the built-in ``sim:`` and ``rules`` models, a
``replay:``) says so by being a :class:`ContextModel`: the evaluator then calls
``complete_in_context`` instead of ``complete`` and never wraps it in a circuit breaker
(it cannot be unreachable). Both are checked structurally (``isinstance``), so a client
needs no base class; ``aclose`` is optional, and a client an embedder gives is never
closed by the evaluator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ..core.errors import ConfigError
from ..core.types import Completion, Message
from ..protocol.context import TurnContext

__all__ = ["ContextModel", "ContextOnly", "ModelClient"]


@runtime_checkable
class ModelClient(Protocol):
    """Anything that answers chat messages: the HTTP client, an embedder's client, a fake."""

    #: what the records, the manifest and the leaderboard call this model
    name: str

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Completion:
        """Answer ``messages``; raise a ``ClientError`` when no usable answer comes (the
        episode then ends in error with that message, and the sweep goes on)."""
        ...


@runtime_checkable
class ContextModel(Protocol):
    """A model that answers from the turn's context rather than from the prompt alone."""

    name: str

    async def complete_in_context(self, messages: Sequence[Message], context: TurnContext) -> Completion:
        """Answer ``messages`` knowing ``context`` (the program, the evidence, the seed)."""
        ...


class ContextOnly:
    """A base for a :class:`ContextModel` that cannot answer from text alone (the built-in
    offline models): its ``complete`` is refused, naming it."""

    name: str

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Completion:
        """Refused: the evaluator calls ``complete_in_context``."""
        raise ConfigError(f"{self.name} is an offline model and needs a TurnContext")
