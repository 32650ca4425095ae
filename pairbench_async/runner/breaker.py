"""A circuit breaker per model: a dead endpoint fails fast instead of per episode.

Without it a sweep against a wrong URL or a missing key spends every episode's full
retry budget (tens of seconds each) to record the same error hundreds of times.
The breaker only judges an endpoint that has **never answered**: until its first
answer, at most ``probes`` calls are in flight (a sweep's hundreds of concurrent
episodes would otherwise all start their retries against it at once), and after
``threshold`` failed calls (each already retried by the client) it opens: later
calls fail at once with the first failure's message. Every ``reprobe`` seconds one
call is let through again; an answer closes the breaker for good. A model that has
answered once is never stopped: a later outage or a refused prompt costs only the
episodes it hits, as the client's retry budget decides. Offline models
(:class:`~..models.interface.ContextModel`) are not wrapped at all.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..core.errors import ClientError
from ..core.types import Completion, Message

__all__ = ["CircuitBreaker", "CircuitOpen"]

_log = logging.getLogger("pairbench_async.runner")


class CircuitOpen(ClientError):
    """A call refused because its model's breaker is open."""


class CircuitBreaker:
    """Wraps a model client; forwards everything else (``name``, ``statistics``...)."""

    def __init__(self, model: Any, spec: str, threshold: int = 3, probes: int = 2, reprobe: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._model = model
        self.spec = spec
        self.threshold = threshold
        self.reprobe = reprobe
        self._clock = clock
        self._gate = asyncio.Semaphore(probes)
        self.failures = 0
        self.answered = False
        self.first_error: str | None = None
        self.open = False
        self._opened_at = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def _refuse(self) -> CircuitOpen:
        return CircuitOpen(f"{self.spec} stopped: {self.failures} calls failed and none answered; "
                           f"first error: {self.first_error}")

    async def complete(self, messages: Sequence[Message], **kw: Any) -> Completion:
        if self.answered:
            return await self._model.complete(messages, **kw)
        async with self._gate:
            if self.answered:
                return await self._model.complete(messages, **kw)
            if self.open:
                if self._clock() - self._opened_at < self.reprobe:
                    raise self._refuse()
                self._opened_at = self._clock()  # this call is the next probe
            try:
                completion: Completion = await self._model.complete(messages, **kw)
            except ClientError as exc:
                self.failures += 1
                if self.first_error is None:
                    self.first_error = f"{type(exc).__name__}: {exc}"
                if not self.open and self.failures >= self.threshold:
                    self.open = True
                    self._opened_at = self._clock()
                    _log.warning("%s: stopped after %d failed calls and no answer (%s); its remaining "
                                 "episodes end as errors (one probe every %.0fs)", self.spec, self.failures,
                                 self.first_error, self.reprobe)
                raise
            if self.open:
                _log.warning("%s: answered again; the circuit breaker is closed", self.spec)
            self.answered, self.open = True, False
            return completion

    async def aclose(self) -> None:
        await self._model.aclose()
