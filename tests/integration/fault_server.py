"""A local chat-completions server that misbehaves on purpose, for client tests.

It owns one ``aiohttp.web`` app bound to 127.0.0.1 on a free port. A request picks
its behaviour by the model name (``POST /v1/chat/completions``) or by the path
(``POST /b/{behaviour}/v1/chat/completions``), written ``NAME[,key=value...]``;
with the model ``by-message`` it is the last message's content, so that one client
can drive many behaviours at once:

==================  =========================================================
``ok``              a deterministic echo with ``usage``; ``delay=S`` holds the
                    answer, ``usage=0`` omits usage
``NNN`` (a status)  that status with an OpenAI-style error body for the first
                    ``k`` requests (default: all), then ``ok``; ``retry_after=N``
                    adds ``Retry-After: N`` (``date=1``: as an HTTP-date),
                    ``retry_after_ms=N`` adds ``retry-after-ms``, ``msg=TEXT``
                    sets the message, ``long=1`` makes it 5,000 characters; a 401
                    echoes the bearer key, as some real endpoints do, and
                    a 3xx points ``Location`` at an ``ok`` route
``reset``           headers and part of the body, then a TCP reset
``drop``            a TCP reset before any byte of the answer
``slow``            headers and part of the body, then a stall of ``stall=S``
                    seconds (default 5) or until :meth:`FaultServer.release`
``truncated``       a Content-Length larger than the body, then a clean close
``invalid-json``    a 200 whose body is not JSON
``empty-choices``   a 200 with ``"choices": []``
``no-message``      a 200 whose choice has no message
``empty-content``   a 200 whose message content is ``""``
==================  =========================================================

All but ``ok`` and the statuses misbehave for the first ``k`` requests (default:
all) and then answer ``ok``. Requests are counted per behaviour string, and each
is recorded with its arrival time (``time.monotonic``, the client's default clock)
and headers; the server also tracks requests in flight and their maximum. Nothing
loops without a bound: every wait ends after its stated delay or on ``release()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import socket
import struct
import time
from collections import Counter
from typing import Any
from urllib.parse import quote

import msgspec
from aiohttp import web

__all__ = ["Behaviour", "FaultServer", "RecordedRequest"]


class Behaviour(msgspec.Struct, frozen=True):
    """A parsed behaviour string: a name and its ``key=value`` parameters."""

    name: str
    params: dict[str, str] = {}

    @classmethod
    def parse(cls, text: str) -> Behaviour:
        name, *pairs = text.split(",")
        params = {}
        for pair in pairs:
            key, _, value = pair.partition("=")
            params[key.strip()] = value.strip()
        return cls(name.strip(), params)

    def number(self, key: str, default: float) -> float:
        return float(self.params[key]) if key in self.params else default

    def misbehaves(self, index: int) -> bool:
        """Whether the ``index``-th request (1-based) of this behaviour misbehaves."""
        return "k" not in self.params or index <= int(self.params["k"])


class RecordedRequest(msgspec.Struct, frozen=True):
    """One request as the server saw it."""

    behaviour: str
    index: int
    arrived: float
    headers: dict[str, str]
    body: Any


class FaultServer:
    """The misbehaving server; ``await start()`` inside the test's loop, then ``stop()``."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._counts: Counter[str] = Counter()
        self._released = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def base_url(self, behaviour: str | None = None) -> str:
        """The ``/v1`` base URL; with ``behaviour``, one that forces it by path."""
        if behaviour is None:
            return f"{self.url}/v1"
        return f"{self.url}/b/{quote(behaviour, safe=',=')}/v1"

    def count(self, behaviour: str | None = None) -> int:
        """Requests received in all, or with one behaviour string."""
        return len(self.requests) if behaviour is None else self._counts[behaviour]

    def arrivals(self, behaviour: str | None = None) -> list[float]:
        return [r.arrived for r in self.requests if behaviour in (None, r.behaviour)]

    def release(self) -> None:
        """End every stall now and make later ones return at once."""
        self._released.set()

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/b/{behaviour}/v1/chat/completions", self._handle)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self._runner = runner
        self._port = int(runner.addresses[0][1])

    async def stop(self) -> None:
        self.release()
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        text = request.match_info.get("behaviour")
        if text is None:
            text = _from_body(body)
        self._counts[text] += 1
        index = self._counts[text]
        self.requests.append(
            RecordedRequest(text, index, time.monotonic(), dict(request.headers), body)
        )
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._dispatch(Behaviour.parse(text), index, request, body)
        finally:
            self.in_flight -= 1

    async def _dispatch(
        self, b: Behaviour, index: int, request: web.Request, body: Any
    ) -> web.StreamResponse:
        if b.name.isdigit() and b.misbehaves(index):
            return self._error(b, int(b.name), request)
        if b.name == "ok" or not b.misbehaves(index):
            return await self._ok(b, body)
        if b.name == "drop":
            _reset(request)
            return web.Response()
        if b.name == "reset":
            return await self._partial(request, close="reset")
        if b.name == "truncated":
            return await self._partial(request, close="clean")
        if b.name == "slow":
            return await self._partial(request, close="stall", stall=b.number("stall", 5.0))
        if b.name == "invalid-json":
            return web.Response(text='{"choices": [{"message": ', content_type="application/json")
        if b.name == "empty-choices":
            return web.json_response({"id": "x", "choices": [], "usage": _usage(1, 0)})
        if b.name == "no-message":
            return web.json_response({"id": "x", "choices": [{"index": 0}]})
        if b.name == "empty-content":
            empty = {"index": 0, "message": {"role": "assistant", "content": ""}}
            return web.json_response({"id": "x", "choices": [empty]})
        return web.json_response(
            {"error": {"message": f"unknown behaviour {b.name!r}"}}, status=400
        )

    async def _ok(self, b: Behaviour, body: Any) -> web.Response:
        delay = b.number("delay", 0.0)
        if delay > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._released.wait()
        messages = body.get("messages", []) if isinstance(body, dict) else []
        last = str(messages[-1].get("content", "")) if messages else ""
        text = f"echo: {last}"
        answer: dict[str, Any] = {
            "id": "chatcmpl-fault",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fault") if isinstance(body, dict) else "fault",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
        }
        if b.params.get("usage") != "0":
            prompt = sum(len(str(m.get("content", ""))) for m in messages) // 4 + 7
            answer["usage"] = _usage(prompt, len(text) // 4 + 3)
        return web.json_response(answer)

    def _error(self, b: Behaviour, status: int, request: web.Request) -> web.Response:
        message = b.params.get("msg", f"simulated {status}")
        if status == 401 and "msg" not in b.params:
            key = request.headers.get("Authorization", "").removeprefix("Bearer ")
            message = f"Incorrect API key provided: {key}. Check your key."
        if b.params.get("long") == "1":
            message = "too long " * 600
        headers = {}
        if "retry_after" in b.params:
            seconds = b.number("retry_after", 0.0)
            if b.params.get("date") == "1":
                headers["Retry-After"] = email.utils.formatdate(time.time() + seconds, usegmt=True)
            else:
                headers["Retry-After"] = b.params["retry_after"]
        if 300 <= status < 400:
            headers["Location"] = "/b/ok/v1/chat/completions"
        if "retry_after_ms" in b.params:
            headers["retry-after-ms"] = b.params["retry_after_ms"]
        payload = {"error": {"message": message, "type": "fault", "code": status}}
        return web.json_response(payload, status=status, headers=headers)

    async def _partial(
        self, request: web.Request, *, close: str, stall: float = 0.0
    ) -> web.StreamResponse:
        """Send headers promising 200 bytes and only part of them, then misbehave."""
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.content_length = 200
        await response.prepare(request)
        await response.write(b'{"id": "partial", "choices": [')
        if close == "stall":
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(stall):
                    await self._released.wait()
        elif close == "reset":
            _reset(request)
        elif request.transport is not None:
            request.transport.close()
        return response


def _reset(request: web.Request) -> None:
    """Abort the connection with a TCP RST (SO_LINGER 0), not a polite FIN."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


def _from_body(body: Any) -> str:
    if not isinstance(body, dict):
        return "ok"
    model = str(body.get("model", "ok"))
    messages = body.get("messages")
    if model == "by-message" and isinstance(messages, list) and messages:
        return str(messages[-1].get("content", "ok"))
    return model


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
