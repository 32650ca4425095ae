"""A circuit breaker per model: a dead endpoint fails fast instead of per episode.

Without it a sweep against a wrong URL or a missing key spends every episode's full
retry budget (tens of seconds each) to record the same error hundreds of times. After
``threshold`` consecutive failed calls (each one already retried by the client) of a
model that never answered, or ``10 x threshold`` after it once did, the breaker opens: every later call of that
model raises at once, with the first failure's message, so its remaining episodes
end as errors in milliseconds and the run says why, once.

Until a remote model has answered once, at most ``probes`` of its calls are in
flight: a sweep's hundreds of concurrent episodes would otherwise all start their
retries against a dead endpoint before the first failure is known. Offline models
(``uses_context``) are not gated: they cannot fail that way.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from ..core.errors import ClientError
from ..core.types import Completion, Message

__all__ = ["CircuitBreaker", "CircuitOpen"]

_log = logging.getLogger("pairbench_async.runner")


class CircuitOpen(ClientError):
    """A call refused because its model's breaker is open."""


class CircuitBreaker:
    """Wraps a model client; forwards everything else (``uses_context``, ``name``...)."""

    def __init__(self, model: Any, spec: str, threshold: int = 2, probes: int = 2) -> None:
        self._model = model
        self.spec = spec
        self.threshold = threshold
        self._gate = None if getattr(model, "uses_context", False) else asyncio.Semaphore(probes)
        self.consecutive = 0
        self.answered = False
        self.first_error: str | None = None
        self.open = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def _refuse(self) -> CircuitOpen:
        return CircuitOpen(f"{self.spec} stopped after {self.consecutive} consecutive failed calls: "
                           f"{self.first_error}")

    async def complete(self, messages: Sequence[Message], **kw: Any) -> Completion:
        if self.open:
            raise self._refuse()
        if self._gate is not None and not self.answered:
            async with self._gate:
                if self.open:
                    raise self._refuse()
                if not self.answered:
                    return await self._complete(messages, **kw)
        return await self._complete(messages, **kw)

    async def _complete(self, messages: Sequence[Message], **kw: Any) -> Completion:
        try:
            completion: Completion = await self._model.complete(messages, **kw)
        except ClientError as exc:
            self.consecutive += 1
            if self.consecutive == 1:  # the first failure of this streak says why
                self.first_error = f"{type(exc).__name__}: {exc}"
            if not self.open and self.consecutive >= (self.threshold if not self.answered else 10 * self.threshold):
                self.open = True
                _log.warning("%s: stopped after %d consecutive failed calls (%s); its remaining episodes "
                             "end as errors without calling it", self.spec, self.consecutive, self.first_error)
            raise
        self.answered = True
        self.consecutive = 0
        return completion

    async def aclose(self) -> None:
        await self._model.aclose()
