"""The OpenAI-compatible HTTP client, a :class:`~.interface.ModelClient` (the endpoint
settings it takes are in :mod:`.endpoint`).

This module owns everything about talking to a chat-completions endpoint: the
per-endpoint limits, the retry policy and the translation of
aiohttp/OS failures into the named errors of :mod:`pairbench_async.core.errors` (how
each attempt's answer or exception is classified is in :mod:`.http_outcomes`). Nothing
else in the package imports aiohttp for model calls, so the orchestrator sees only
``Completion`` values or ``ClientError`` subclasses (and ``CancelledError``, which is
never translated).

Limits, per client (one client = one model at one endpoint = one aiohttp session):

* ``max_concurrency`` bounds requests in flight, with an ``asyncio.Semaphore`` and the
  connector's pool of the same size, so that no request waits for a connection
  inside aiohttp's own timeout.
* ``requests_per_minute`` and ``tokens_per_minute`` are two ``aiolimiter`` leaky
  buckets refilled continuously over ``burst_seconds``: at most
  ``rpm * burst_seconds / 60`` (at least one) requests start at once, and over any
  interval of T seconds at most that burst plus ``rpm * T / 60`` start. The token
  bucket is charged an *estimate* taken before sending: ``ceil(chars / 4)`` plus 4
  per message for the prompt, plus ``max_tokens`` (or 512 when unset) for the
  answer. An estimate larger than one burst is paid in burst-sized chunks, which
  keeps the per-minute rate honest at the price of spreading large requests; raise
  ``burst_seconds`` (up to 60) to let them through at once. Every HTTP attempt,
  retries included, is charged to both buckets, because the endpoint counts them.
  The buckets run on the event loop's clock, not on the injected ``clock``.

Retries (``max_retries`` beyond the first attempt):

* retried: 429; 408, 409 and every 5xx except 501 and 505; connection errors
  (refused, reset, disconnected); timeouts (``timeout`` covers one whole attempt,
  body included); truncated bodies; and 2xx answers that are not usable (invalid
  JSON, no ``choices``, a choice without a message, ``null`` or empty content),
  because overloaded servers produce those and the next attempt usually succeeds;
* not retried: every other status (400, 401, 403, 404, 422..., and redirects, which
  are not followed so that the key goes nowhere else), raised at once as
  ``BadResponse`` with the server's error message (truncated to 300 characters);
* the delay before retry *n* (0-based) is full jitter,
  ``uniform(0, min(backoff_max, backoff_base * 2**n))`` from an injectable RNG,
  unless the answer carried ``retry-after-ms`` or ``Retry-After`` (delta-seconds or
  an HTTP-date). That value is honoured even when it exceeds ``backoff_max``, up to
  the separate ``retry_after_max``, plus up to 10 % of jitter so that many callers
  told the same value do not come back in the same instant;
* when the budget is spent the last failure decides the error: ``RateLimited``
  after a 429, ``BadResponse`` after an unusable 2xx, ``TransientError`` otherwise.
  The message names the endpoint, the attempts, the last status and error.

Secrets: the API key is read from the environment variable ``api_key_env`` at each
attempt and only placed in that request's ``Authorization`` header. It is never
stored on the client, in a Struct, a record or a log line, and every text taken
from the server or from an exception is scrubbed of it before it goes into an error.
The key and the raw answer live only in the frame of one attempt; the aiohttp error
behind a ``ClientError`` is kept as ``__cause__`` without its traceback (whose frames
hold the request headers), so even a traceback printer that shows locals cannot
reveal the key. Redirects are not followed, and a base URL with embedded credentials
is rejected without echoing it.

Token usage comes from the answer's ``usage``; when the endpoint omits it, it is
estimated (``ceil(chars / 4)``) and counted in ``ClientStatistics.estimated_usage``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType

import aiohttp
import msgspec
from aiolimiter import AsyncLimiter

from ..core.errors import BadResponse, ClientError, ConfigError, RateLimited, TransientError
from ..core.types import Completion, Message, Usage
from .endpoint import (
    ClientStatistics,
    EndpointSettings,
    estimate_prompt_tokens,
    estimate_tokens,
    parse_model_spec,
)
from .http_outcomes import (
    TRANSPORT_ERRORS,
    Answer,
    Failure,
    classify_exception,
    classify_status,
    detached,
    error_text,
)

#: ``-v`` shows retries (INFO); failures that end a call surface as exceptions, not logs
_log = logging.getLogger("pairbench_async.models")

__all__ = ["OpenAIClient"]

#: Extra delay on top of an honoured Retry-After, as a fraction of it (uniform).
_RETRY_AFTER_JITTER = 0.1

_ENCODER = msgspec.json.Encoder()


class _Counters:
    """The mutable counters behind :class:`ClientStatistics`; owned by one client."""

    __slots__ = (
        "calls",
        "completions",
        "errors",
        "requests",
        "retries",
        "rate_limited",
        "timeouts",
        "in_flight",
        "max_in_flight",
        "prompt_tokens",
        "completion_tokens",
        "estimated_usage",
    )

    def __init__(self) -> None:
        self.calls = self.completions = self.errors = 0
        self.requests = self.retries = self.rate_limited = self.timeouts = 0
        self.in_flight = self.max_in_flight = 0
        self.prompt_tokens = self.completion_tokens = self.estimated_usage = 0

    def snapshot(self) -> ClientStatistics:
        return ClientStatistics(**{name: getattr(self, name) for name in self.__slots__})


class OpenAIClient:
    """An OpenAI-compatible chat-completions client with limits and retries.

    Create it anywhere; its aiohttp session is created on first use inside the
    running loop and closed by :meth:`aclose` (or ``async with``). ``clock`` and
    ``sleep`` time calls and back-off, ``wall_clock`` resolves HTTP-date
    Retry-After values, ``rng`` draws the jitter; tests inject all four.
    """

    def __init__(
        self,
        model: str,
        settings: EndpointSettings | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        wall_clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        name: str | None = None,
    ) -> None:
        if not model or any(ch.isspace() for ch in model):
            raise ConfigError(f"model name {model!r} is empty or contains whitespace")
        self.model = model
        #: what the records call this model: the spec it was made from, else ``openai:MODEL``
        self.name = name if name is not None else f"openai:{model}"
        self.settings = settings if settings is not None else EndpointSettings()
        self._url = self.settings.base_url.rstrip("/") + "/chat/completions"
        self._clock = clock
        self._sleep = sleep
        self._wall_clock = wall_clock
        self._rng = rng if rng is not None else random.Random()
        self._semaphore = asyncio.Semaphore(self.settings.max_concurrency)
        window = self.settings.burst_seconds
        self._request_limiter = _bucket(self.settings.requests_per_minute, window)
        self._token_limiter = _bucket(self.settings.tokens_per_minute, window)
        self._session: aiohttp.ClientSession | None = None
        self._closed = False
        self._counters = _Counters()

    @classmethod
    def from_spec(cls, spec: str, settings: EndpointSettings | None = None) -> OpenAIClient:
        """A client for an ``openai:MODEL[@BASE_URL]`` spec; the URL overrides settings'."""
        scheme, model, base_url = parse_model_spec(spec)
        if scheme != "openai":
            raise ConfigError(f"model spec {spec!r} is not an openai: spec")
        settings = settings if settings is not None else EndpointSettings()
        if base_url is not None:
            settings = msgspec.structs.replace(settings, base_url=base_url)
        return cls(model, settings, name=spec)

    def __repr__(self) -> str:
        return f"OpenAIClient(model={self.model!r}, base_url={self.settings.base_url!r})"

    async def __aenter__(self) -> OpenAIClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def statistics(self) -> ClientStatistics:
        return self._counters.snapshot()

    async def aclose(self) -> None:
        """Close the session; safe to call twice."""
        self._closed = True
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    def _get_session(self) -> aiohttp.ClientSession:
        if self._closed:
            raise ClientError(f"{self!r} is closed")
        if self._session is None:
            s = self.settings
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=s.max_concurrency),
                timeout=aiohttp.ClientTimeout(total=s.timeout),
                trust_env=s.trust_env,
                headers={"User-Agent": "pairbench_async"},
            )
        return self._session

    def _api_key(self) -> str | None:
        name = self.settings.api_key_env
        # a key read from a CRLF .env file keeps its "\r": never send (or echo) that
        return (os.environ.get(name, "").strip() or None) if name is not None else None

    def _delay(self, failure: Failure, retry_index: int) -> float:
        s = self.settings
        if failure.retry_after is not None:
            honoured = min(failure.retry_after, s.retry_after_max)
            return honoured + self._rng.uniform(0, _RETRY_AFTER_JITTER * honoured)
        return self._rng.uniform(0, min(s.backoff_max, s.backoff_base * 2.0**retry_index))

    async def _acquire(self, tokens: int) -> None:
        if self._request_limiter is not None:
            await self._request_limiter.acquire()
        limiter = self._token_limiter
        if limiter is not None:
            remaining = float(tokens)
            while remaining > 0:
                chunk = min(remaining, limiter.max_rate)
                await limiter.acquire(chunk)
                remaining -= chunk

    async def _attempt(self, body: bytes) -> tuple[Failure | Answer, BaseException | None]:
        """One HTTP attempt, classified: the only frame that holds the key and raw answer.

        Returns the outcome (a failure already scrubbed of the key) and, for transport
        failures, the aiohttp/OS exception, detached from its traceback.
        """
        key = self._api_key()
        headers = {"Content-Type": "application/json"}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        session = self._get_session()
        counters = self._counters
        outcome: Failure | Answer
        cause: BaseException | None = None
        async with self._semaphore:
            counters.requests += 1
            counters.in_flight += 1
            counters.max_in_flight = max(counters.max_in_flight, counters.in_flight)
            try:
                # No redirects: an API endpoint has no reason to send the key elsewhere.
                async with session.post(
                    self._url, data=body, headers=headers, allow_redirects=False
                ) as resp:
                    payload = await resp.read()
                    outcome = classify_status(
                        resp.status, resp.headers, payload, self._wall_clock()
                    )
            except TRANSPORT_ERRORS as exc:  # the one seam for aiohttp and OS errors
                cause = detached(exc)
                outcome = classify_exception(exc, self.settings.timeout)
                if isinstance(exc, asyncio.TimeoutError):
                    counters.timeouts += 1
            finally:
                counters.in_flight -= 1
        if isinstance(outcome, Failure):
            reason = error_text(outcome.reason, key)
            outcome = Failure(outcome.kind, reason, outcome.status, outcome.retry_after)
        return outcome, cause

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Completion:
        """Send ``messages``; per-call options override the settings' defaults."""
        s = self.settings
        temperature = temperature if temperature is not None else s.temperature
        max_tokens = max_tokens if max_tokens is not None else s.max_tokens
        seed = seed if seed is not None else s.seed
        request: dict[str, object] = {"model": self.model, "messages": list(messages)}
        if temperature is not None:
            request["temperature"] = temperature
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        if seed is not None:
            request["seed"] = seed
        body = _ENCODER.encode(request)
        charge = estimate_tokens(messages, max_tokens)
        counters = self._counters
        counters.calls += 1
        started = self._clock()
        try:
            return await self._run(messages, body, charge, started)
        except ClientError:
            counters.errors += 1
            raise

    async def _run(
        self, messages: Sequence[Message], body: bytes, charge: int, started: float
    ) -> Completion:
        s = self.settings
        counters = self._counters
        attempts = s.max_retries + 1
        failure: Failure | None = None
        cause: BaseException | None = None
        for attempt in range(1, attempts + 1):
            if attempt > 1:
                assert failure is not None
                counters.retries += 1
                delay = self._delay(failure, attempt - 2)
                _log.info("%s at %s: %s; retry %d of %d in %.1fs", self.model, s.base_url, failure.describe(),
                          attempt - 1, attempts - 1, delay)
                await self._sleep(delay)
            self._get_session()  # fail fast (before waiting on limits) once closed
            await self._acquire(charge)
            outcome, cause = await self._attempt(body)
            if isinstance(outcome, Answer):
                return self._completion(outcome, messages, attempt, started)
            failure = outcome
            if failure.kind == "rate_limit":
                counters.rate_limited += 1
            if not failure.retryable:
                hint = ""
                if failure.status == 401 and s.api_key_env and self._api_key() is None:
                    hint = f" (environment variable {s.api_key_env} is not set)"
                error = BadResponse(
                    f"{self.model} at {s.base_url}: {failure.describe()}{hint}; not retried"
                )
                raise error from cause
        assert failure is not None
        message = (
            f"{self.model} at {s.base_url}: gave up after {attempts} attempt"
            f"{'s' if attempts != 1 else ''}; last error: {failure.describe()}"
        )
        error_type: type[ClientError] = {
            "rate_limit": RateLimited,
            "malformed": BadResponse,
        }.get(failure.kind, TransientError)
        raise error_type(message) from cause

    def _completion(
        self, answer: Answer, messages: Sequence[Message], attempts: int, started: float
    ) -> Completion:
        counters = self._counters
        usage = answer.usage
        if usage is None:
            counters.estimated_usage += 1
            usage = Usage(
                prompt_tokens=estimate_prompt_tokens(messages),
                completion_tokens=math.ceil(len(answer.text) / 4),
            )
        counters.completions += 1
        counters.prompt_tokens += usage.prompt_tokens
        counters.completion_tokens += usage.completion_tokens
        return Completion(
            text=answer.text,
            model=answer.model or self.model,
            usage=usage,
            latency_ms=(self._clock() - started) * 1000.0,
            attempts=attempts,
            finish_reason=answer.finish_reason,
        )


def _bucket(per_minute: float | None, window: float) -> AsyncLimiter | None:
    """A leaky bucket of ``per_minute * window / 60`` (at least 1), refilled over ``window``."""
    if per_minute is None:
        return None
    capacity = max(1.0, per_minute * window / 60.0)
    return AsyncLimiter(capacity, capacity * 60.0 / per_minute)
