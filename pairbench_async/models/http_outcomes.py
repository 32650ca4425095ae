"""What one HTTP attempt at a chat-completions endpoint came to, for the retry loop.

:mod:`.client` sends requests and decides when to try again; this module turns what
came back into that decision, with no session, limiter or clock of its own: the wire
format of an answer, the classification of an HTTP status or of an aiohttp/OS error
into a usable :class:`Answer` or a :class:`Failure` (retryable or not, with the
server's ``Retry-After``), and the scrubbing that keeps the API key out of every
error text and traceback. Kept apart so the client class reads as the retry loop it is.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
from collections.abc import Mapping
from typing import Literal

import aiohttp
import msgspec

from ..core.types import Usage
from .redact import redact

__all__ = [
    "TRANSPORT_ERRORS",
    "Answer",
    "Failure",
    "FailureKind",
    "classify_exception",
    "classify_status",
    "detached",
    "error_text",
    "parse_retry_after",
]

#: Characters of a server's error text kept in an exception message.
_MESSAGE_LIMIT = 300


class _WireMessage(msgspec.Struct):
    content: str | None = None


class _WireChoice(msgspec.Struct):
    message: _WireMessage | None = None
    finish_reason: str | None = None


class _WireUsage(msgspec.Struct):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _WireResponse(msgspec.Struct):
    choices: list[_WireChoice] = []
    usage: _WireUsage | None = None
    model: str | None = None


_RESPONSE_DECODER = msgspec.json.Decoder(_WireResponse)

FailureKind = Literal["rate_limit", "transient", "malformed", "fatal"]


class Failure(msgspec.Struct, frozen=True):
    """Why one attempt failed, and whether (and when) to try again; never holds a secret."""

    kind: FailureKind
    reason: str
    status: int | None = None
    retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        return self.kind != "fatal"

    def describe(self) -> str:
        return self.reason if self.status is None else f"HTTP {self.status}: {self.reason}"


class Answer(msgspec.Struct, frozen=True):
    text: str
    usage: Usage | None
    finish_reason: str | None
    model: str | None


def error_text(text: str, key: str | None) -> str:
    """Text from outside as it may go into an error: redacted (:func:`.redact.redact`)
    and cut to a readable length."""
    text = redact(text, key)
    if len(text) > _MESSAGE_LIMIT:
        text = text[:_MESSAGE_LIMIT] + "..."
    return text


def _server_message(payload: bytes) -> str:
    """The human part of an error body: OpenAI's ``error.message`` or the raw text."""
    try:
        data = msgspec.json.decode(payload)
    except msgspec.DecodeError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        for key in ("error", "message", "detail"):
            if isinstance(data.get(key), str):
                return str(data[key])
    text = payload.decode("utf-8", "replace").strip()
    return " ".join(text.split()) or "(empty body)"


def parse_retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds the server asked us to wait, from ``retry-after-ms`` or ``Retry-After``.

    ``now`` is the wall clock (epoch seconds), used for the HTTP-date form.
    Unparseable values are ignored; dates in the past mean "now".
    """
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            ms = float(raw_ms)
        except ValueError:
            ms = math.nan
        if math.isfinite(ms) and ms >= 0:
            return ms / 1000
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        return max(0.0, when.timestamp() - now)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def classify_status(
    status: int, headers: Mapping[str, str], payload: bytes, now: float
) -> Failure | Answer:
    """Turn one HTTP answer into a usable answer or a classified failure."""
    if 200 <= status < 300:
        return _parse_answer(status, payload)
    message = _server_message(payload)
    if status == 429:
        return Failure("rate_limit", message, status, parse_retry_after(headers, now))
    if status in (408, 409) or (500 <= status < 600 and status not in (501, 505)):
        return Failure("transient", message, status, parse_retry_after(headers, now))
    return Failure("fatal", message, status)


def _parse_answer(status: int, payload: bytes) -> Failure | Answer:
    try:
        wire = _RESPONSE_DECODER.decode(payload)
    except msgspec.ValidationError as exc:
        return Failure("malformed", f"unexpected response shape: {exc}", status)
    except msgspec.DecodeError as exc:
        return Failure("malformed", f"invalid JSON ({len(payload)} bytes): {exc}", status)
    if not wire.choices:
        return Failure("malformed", "response has no choices", status)
    choice = wire.choices[0]
    if choice.message is None:
        return Failure("malformed", "first choice has no message", status)
    if not choice.message.content:
        return Failure("malformed", "first choice has empty content", status)
    usage = None
    if wire.usage is not None:
        usage = Usage(
            prompt_tokens=max(0, wire.usage.prompt_tokens),
            completion_tokens=max(0, wire.usage.completion_tokens),
        )
    return Answer(choice.message.content, usage, choice.finish_reason, wire.model)


def classify_exception(exc: BaseException, timeout: float) -> Failure:
    """The one seam where aiohttp and OS errors become retry decisions."""
    if isinstance(exc, asyncio.TimeoutError):  # includes aiohttp.ServerTimeoutError
        return Failure("transient", f"timed out after {timeout:g} s ({type(exc).__name__})")
    if isinstance(exc, aiohttp.ClientPayloadError):
        return Failure("transient", f"truncated or malformed body: {exc}")
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return Failure("transient", "server disconnected before answering")
    if isinstance(exc, aiohttp.ClientConnectorError):
        return Failure("transient", f"cannot connect: {exc.os_error.strerror or exc}")
    if isinstance(exc, aiohttp.InvalidURL):
        return Failure("fatal", "invalid URL")
    return Failure("transient", f"connection error: {type(exc).__name__}: {exc}")


#: Everything a request may raise that is the endpoint's or the network's fault.
TRANSPORT_ERRORS = (aiohttp.ClientError, OSError, asyncio.TimeoutError)


def detached(exc: BaseException) -> BaseException | None:
    """``exc`` and its chain without tracebacks, whose frames hold the request headers.

    The type and message of the underlying error survive as ``__cause__``; the
    aiohttp frames (and their locals, which include the Authorization header) do
    not, so a traceback printer that shows locals cannot reveal the key.
    """
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, aiohttp.ClientResponseError):
            return None  # its request_info holds the request headers: do not keep it
        seen.add(id(link))
        link.__traceback__ = None
        link = link.__cause__ or link.__context__
    return exc
