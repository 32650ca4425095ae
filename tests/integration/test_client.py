"""Tests of the OpenAI-compatible client against a real, misbehaving local server.

They prove on real sockets what the client promises: back-off delays drawn as
documented (with an injected sleep, clock and RNG, plus one real-time run),
Retry-After honoured, request/token rates and concurrency bounded, usage recorded,
the retry budget ending in the right named error, non-retryable statuses raised at
once, the API key never leaking, cancellation propagating untouched, and a crowd of
calls all ending. The spec parser and settings validation are tested here as well,
beside the client that uses them.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import socket
import time
import traceback
from collections.abc import Awaitable, Callable

import aiohttp
import msgspec
import pytest

from pairbench_async.core.errors import (
    BadResponse,
    ClientError,
    ConfigError,
    RateLimited,
    TransientError,
)
from pairbench_async.core.types import Completion, Message, Usage
from pairbench_async.models.client import OpenAIClient
from pairbench_async.models.endpoint import (
    ClientStatistics,
    EndpointSettings,
    estimate_tokens,
    parse_model_spec,
)
from pairbench_async.models.http_outcomes import parse_retry_after
from pairbench_async.models.interface import ModelClient
from tests.integration.fault_server import FaultServer

HELLO = [Message("user", "hello")]
SECRET = "sk-test-5EcReT-do-not-leak-0123456789"
#: The model name that makes the server read the behaviour from the last message.
BY_MESSAGE = "by-message"


def say(behaviour: str) -> list[Message]:
    """Messages that select ``behaviour`` through a ``by-message`` client."""
    return [Message("user", behaviour)]


class FakeTime:
    """An injected clock and sleep: sleeping records the delay and advances the clock."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        self.sleeps.append(delay)
        self.now += delay
        await asyncio.sleep(0)


def settings(server: FaultServer, **overrides: object) -> EndpointSettings:
    base: dict[str, object] = {
        "base_url": server.base_url(),
        "api_key_env": "PB_TEST_KEY",
        "max_retries": 2,
        "backoff_base": 0.001,
        "backoff_max": 0.01,
        "timeout": 5.0,
    }
    base.update(overrides)
    return msgspec.convert(base, EndpointSettings)


def client(
    server: FaultServer, model: str = "ok", fake: FakeTime | None = None, **overrides: object
) -> OpenAIClient:
    if fake is None:
        return OpenAIClient(model, settings(server, **overrides), rng=random.Random(0))
    return OpenAIClient(
        model,
        settings(server, **overrides),
        clock=fake.clock,
        sleep=fake.sleep,
        rng=random.Random(0),
    )


async def eventually(condition: Callable[[], bool], within: float = 3.0) -> None:
    """Wait (bounded) until ``condition()`` holds."""
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.005)


def foreign_tasks() -> set[asyncio.Task[object]]:
    """Pending tasks other than this test and the fault server's own handlers."""
    current = asyncio.current_task()
    found = set()
    for task in asyncio.all_tasks():
        code = getattr(task.get_coro(), "cr_code", None)
        filename = code.co_filename if code is not None else ""
        if task is not current and not filename.endswith(("web_protocol.py", "fault_server.py")):
            found.add(task)
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ---------------------------------------------------------------------------
# Spec parsing, settings, pure helpers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai:gpt-4o-mini", ("openai", "gpt-4o-mini", None)),
        (
            "openai:qwen2.5-coder@http://127.0.0.1:8000/v1",
            ("openai", "qwen2.5-coder", "http://127.0.0.1:8000/v1"),
        ),
        ("openai:m@https://host.example/v1/", ("openai", "m", "https://host.example/v1")),
        ("openai:claude-3@20240229", ("openai", "claude-3@20240229", None)),
        ("openai:ft:gpt-4o-mini:org::abc", ("openai", "ft:gpt-4o-mini:org::abc", None)),
        ("sim:skill=0.5", ("sim", "skill=0.5", None)),
        ("rules", ("rules", "", None)),
        ("replay:runs/a@b.jsonl", ("replay", "runs/a@b.jsonl", None)),
    ],
)
def test_parse_model_spec(spec: str, expected: tuple[str, str, str | None]) -> None:
    assert parse_model_spec(spec) == expected


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "   ",
        "openai:",
        "openai",
        "OpenAI:gpt",
        ":gpt",
        "openai:m@127.0.0.1:8000/v1",
        "openai:m@ftp://host/v1",
        "openai:@http://127.0.0.1:8000/v1",
        "openai:bad name",
        "openai:m@http://user:pw@host/v1",
    ],
)
def test_parse_model_spec_rejects(spec: str) -> None:
    with pytest.raises(ConfigError):
        parse_model_spec(spec)


def test_spec_with_credentials_is_rejected_without_echoing_them() -> None:
    with pytest.raises(ConfigError) as info:
        parse_model_spec("openai:m@http://user:hunter2@host/v1")
    assert "hunter2" not in str(info.value)
    with pytest.raises(ConfigError) as info:
        EndpointSettings(base_url="https://user:hunter2@host/v1")
    assert "hunter2" not in str(info.value)


@pytest.mark.parametrize(
    "bad",
    [
        {"base_url": "127.0.0.1:8000/v1"},
        {"base_url": "http://host/v1?key=1"},
        {"api_key_env": "not a name"},
        {"max_concurrency": 0},
        {"requests_per_minute": 0},
        {"tokens_per_minute": -5},
        {"requests_per_minute": float("inf")},
        {"burst_seconds": 0},
        {"burst_seconds": 61},
        {"timeout": 0},
        {"max_retries": -1},
        {"backoff_base": -1},
        {"backoff_base": 2.0, "backoff_max": 1.0},
        {"retry_after_max": -1},
        {"temperature": 3},
        {"max_tokens": 0},
    ],
)
def test_settings_validation(bad: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        EndpointSettings(**bad)  # type: ignore[arg-type]


def test_settings_round_trip_and_decode_validation() -> None:
    s = EndpointSettings(requests_per_minute=120, max_tokens=64, seed=3)
    assert msgspec.json.decode(msgspec.json.encode(s), type=EndpointSettings) == s
    with pytest.raises(ConfigError):
        msgspec.json.decode(b'{"timeout": -1}', type=EndpointSettings)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"api_key": "sk-x"}', type=EndpointSettings)


def test_parse_retry_after_forms() -> None:
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 5, usegmt=True)
    assert parse_retry_after({"retry-after": "3"}, now) == 3.0
    assert parse_retry_after({"retry-after": "1.5"}, now) == 1.5
    assert parse_retry_after({"retry-after": date}, now) == pytest.approx(5.0)
    past = email.utils.formatdate(now - 50, usegmt=True)
    assert parse_retry_after({"retry-after": past}, now) == 0.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}, now) == 0.25
    assert parse_retry_after({"retry-after": "soon"}, now) is None
    assert parse_retry_after({"retry-after": "-1"}, now) is None
    assert parse_retry_after({}, now) is None


def test_estimate_tokens() -> None:
    messages = [Message("system", "x" * 8), Message("user", "y" * 9)]
    assert estimate_tokens(messages, 100) == (2 + 4) + (3 + 4) + 100
    assert estimate_tokens(messages, None) == 13 + 512


def test_openai_client_is_a_model_client() -> None:
    c = OpenAIClient.from_spec("openai:m@http://127.0.0.1:9/v1")
    assert isinstance(c, ModelClient)
    assert (c.model, c.settings.base_url) == ("m", "http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError):
        OpenAIClient.from_spec("sim:skill=1")


# ---------------------------------------------------------------------------
# Requests, usage, limits
# ---------------------------------------------------------------------------


async def test_request_body_headers_and_usage(
    fault_server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PB_TEST_KEY", SECRET)
    async with client(fault_server, temperature=0.2, max_tokens=50) as c:
        first = await c.complete(HELLO)
        second = await c.complete(HELLO, temperature=0.0, max_tokens=9, seed=11)
        stats = c.statistics()
    one, two = fault_server.requests
    assert one.body == {
        "model": "ok",
        "messages": [{"role": "user", "content": "hello"}],
        "temperature": 0.2,
        "max_tokens": 50,
    }
    assert two.body["temperature"] == 0.0 and two.body["max_tokens"] == 9
    assert two.body["seed"] == 11
    assert one.headers["Authorization"] == f"Bearer {SECRET}"
    assert one.headers["Content-Type"] == "application/json"
    assert first.text == "echo: hello" and first.attempts == 1
    assert first.finish_reason == "stop"
    assert first.usage == Usage(prompt_tokens=8, completion_tokens=5)  # the server's numbers
    assert second.usage == first.usage
    assert stats.prompt_tokens == 16 and stats.completion_tokens == 10
    assert (stats.calls, stats.completions, stats.requests, stats.estimated_usage) == (2, 2, 2, 0)


async def test_no_key_sends_no_authorization(
    fault_server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PB_TEST_KEY", raising=False)
    async with client(fault_server, BY_MESSAGE) as c:
        await c.complete(say("ok"))
        with pytest.raises(BadResponse, match="PB_TEST_KEY is not set"):
            await c.complete(say("401"))
    assert "Authorization" not in fault_server.requests[0].headers


async def test_missing_usage_is_estimated(fault_server: FaultServer) -> None:
    async with client(fault_server, "ok,usage=0") as c:
        completion = await c.complete(HELLO)
        stats = c.statistics()
    # ceil(5 / 4) + 4 for the prompt, ceil(len("echo: hello") / 4) for the answer
    assert completion.usage == Usage(prompt_tokens=6, completion_tokens=3)
    assert stats.estimated_usage == 1 and stats.prompt_tokens == 6


async def test_concurrency_limit(fault_server: FaultServer) -> None:
    async with client(fault_server, "ok,delay=0.05", max_concurrency=3) as c:
        results = await asyncio.gather(*(c.complete(HELLO) for _ in range(12)))
        stats = c.statistics()
    assert len(results) == 12
    assert fault_server.max_in_flight == 3
    assert stats.max_in_flight == 3 and stats.in_flight == 0


async def test_requests_per_minute_limit(fault_server: FaultServer) -> None:
    # 600 rpm refilled over 0.1 s: a burst of 1, then one request every 0.1 s.
    async with client(fault_server, requests_per_minute=600, burst_seconds=0.1) as c:
        start = time.monotonic()
        await asyncio.gather(*(c.complete(HELLO) for _ in range(8)))
    arrivals = sorted(fault_server.arrivals())
    assert len(arrivals) == 8
    # A leaky bucket of capacity 1 draining 10/s: request k starts no earlier than k / 10 s,
    # so the first half second sees at most the burst (1) plus 0.5 s x 10/s requests.
    for k, at in enumerate(arrivals):
        assert at - start >= k / 10 - 0.02, (k, at - start)
    assert sum(1 for at in arrivals if at - start < 0.5) <= 1 + 5
    assert arrivals[-1] - start >= 0.68


async def test_tokens_per_minute_limit(fault_server: FaultServer) -> None:
    messages = [Message("user", "x" * 36)]
    charge = estimate_tokens(messages, 7)
    assert charge == 20
    # 6000 tokens/min = 100 tokens/s, a burst of 10 tokens: each request waits ~0.2 s.
    async with client(fault_server, tokens_per_minute=6000, burst_seconds=0.1) as c:
        start = time.monotonic()
        await asyncio.gather(*(c.complete(messages, max_tokens=7) for _ in range(5)))
    arrivals = sorted(fault_server.arrivals())
    assert len(arrivals) == 5
    # By the time request k is sent, k + 1 charges are paid from 10 + 100 t tokens.
    for k, at in enumerate(arrivals):
        paid = charge * (k + 1)
        assert at - start >= (paid - 10) / 100 - 0.02, (k, at - start)


# ---------------------------------------------------------------------------
# Retries and back-off
# ---------------------------------------------------------------------------


async def test_full_jitter_backoff_with_injected_time(fault_server: FaultServer) -> None:
    fake = FakeTime()
    c = client(fault_server, "503,k=4", fake, max_retries=5, backoff_base=0.1, backoff_max=0.5)
    async with c:
        completion = await c.complete(HELLO)
    rng = random.Random(0)
    expected = [rng.uniform(0, min(0.5, 0.1 * 2**n)) for n in range(4)]
    assert fake.sleeps == expected
    assert all(d <= min(0.5, 0.1 * 2**n) for n, d in enumerate(fake.sleeps))
    assert completion.attempts == 5 and fault_server.count() == 5
    # Latency is measured on the injected clock, which only the back-off moved.
    assert completion.latency_ms == pytest.approx(sum(expected) * 1000)
    assert c.statistics().retries == 4


async def test_backoff_in_real_time(fault_server: FaultServer) -> None:
    c = client(fault_server, "500,k=3", max_retries=3, backoff_base=0.05, backoff_max=0.2)
    async with c:
        completion = await c.complete(HELLO)
    rng = random.Random(0)
    expected = [rng.uniform(0, min(0.2, 0.05 * 2**n)) for n in range(3)]
    arrivals = fault_server.arrivals()
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    assert completion.attempts == 4 and len(gaps) == 3
    for gap, delay in zip(gaps, expected, strict=True):
        assert delay - 0.002 <= gap <= delay + 0.5


async def test_retry_after_is_honoured_in_real_time(fault_server: FaultServer) -> None:
    # Retry-After (1 s) exceeds backoff_max (0.01 s); it is honoured anyway.
    async with client(fault_server, "429,k=1,retry_after=1") as c:
        completion = await c.complete(HELLO)
    first, second = fault_server.arrivals()
    assert fault_server.requests[0].index == 1
    assert second - first >= 1.0
    assert second - first <= 1.0 * 1.1 + 0.5
    assert completion.attempts == 2 and c.statistics().rate_limited == 1


@pytest.mark.parametrize(
    ("behaviour", "low", "high"),
    [
        ("429,k=2,retry_after=7", 7.0, 7.7),
        ("503,k=2,retry_after=7", 7.0, 7.7),
        ("429,k=2,retry_after_ms=1500", 1.5, 1.65),
        ("429,k=2,retry_after=3,date=1", 2.0, 3.3),  # HTTP-date: 1 s resolution
        ("429,k=2,retry_after=500", 20.0, 22.0),  # capped by retry_after_max
    ],
)
async def test_retry_after_forms_with_injected_sleep(
    fault_server: FaultServer, behaviour: str, low: float, high: float
) -> None:
    fake = FakeTime()
    async with client(fault_server, behaviour, fake, retry_after_max=20.0) as c:
        completion = await c.complete(HELLO)
    assert completion.attempts == 3
    assert len(fake.sleeps) == 2
    assert all(low <= d <= high for d in fake.sleeps), fake.sleeps


@pytest.mark.parametrize(
    ("behaviour", "error"),
    [
        ("429,retry_after=0", RateLimited),
        ("503", TransientError),
        ("502", TransientError),
        ("drop", TransientError),
        ("reset", TransientError),
        ("truncated", TransientError),
        ("slow,stall=3", TransientError),
        ("invalid-json", BadResponse),
        ("empty-choices", BadResponse),
        ("no-message", BadResponse),
        ("empty-content", BadResponse),
    ],
)
async def test_budget_spent_raises_named_error(
    fault_server: FaultServer, behaviour: str, error: type[ClientError]
) -> None:
    fake = FakeTime()
    async with client(fault_server, behaviour, fake, max_retries=2, timeout=0.2) as c:
        with pytest.raises(error) as info:
            await c.complete(HELLO)
        stats = c.statistics()
    assert type(info.value) is error
    assert "after 3 attempts" in str(info.value)
    assert fault_server.count() == 3 and len(fake.sleeps) == 2
    assert (stats.calls, stats.errors, stats.requests, stats.retries) == (1, 1, 3, 2)
    assert stats.in_flight == 0
    if behaviour.startswith(("429", "5")):
        assert f"HTTP {behaviour[:3]}" in str(info.value)
    if behaviour.startswith("slow"):
        assert "timed out" in str(info.value) and stats.timeouts == 3


@pytest.mark.parametrize(
    "behaviour",
    [
        "503,k=2",
        "504,k=1",
        "408,k=1",
        "empty-choices,k=1",
        "empty-content,k=1",
        "invalid-json,k=2",
        "reset,k=1",
        "drop,k=2",
        "truncated,k=1",
        "slow,k=1,stall=3",
    ],
)
async def test_transient_failures_recover(fault_server: FaultServer, behaviour: str) -> None:
    fake = FakeTime()
    async with client(fault_server, behaviour, fake, max_retries=2, timeout=0.2) as c:
        completion = await c.complete(HELLO)
    k = int(behaviour.split("k=")[1].split(",")[0])
    assert completion.text == "echo: hello"
    assert completion.attempts == k + 1 == fault_server.count()


@pytest.mark.parametrize("status", [307, 400, 401, 403, 404, 422, 501])
async def test_non_retryable_status_fails_at_once(fault_server: FaultServer, status: int) -> None:
    fake = FakeTime()
    async with client(fault_server, BY_MESSAGE, fake) as c:
        with pytest.raises(BadResponse, match=f"HTTP {status}: nope {status}.*; not retried"):
            await c.complete(say(f"{status},msg=nope {status}"))
    assert fault_server.count() == 1 and fake.sleeps == []


async def test_server_message_is_truncated(fault_server: FaultServer) -> None:
    async with client(fault_server, "400,long=1") as c:
        with pytest.raises(BadResponse) as info:
            await c.complete(HELLO)
    message = str(info.value)
    assert "too long" in message and message.count("too long") < 60
    assert len(message) < 500


async def test_connection_refused_is_transient() -> None:
    s = EndpointSettings(
        base_url=f"http://127.0.0.1:{free_port()}/v1", max_retries=1, backoff_base=0.001
    )
    async with OpenAIClient("m", s) as c:
        with pytest.raises(TransientError, match="cannot connect") as info:
            await c.complete(HELLO)
        assert c.statistics().requests == 2
    assert isinstance(info.value.__cause__, aiohttp.ClientConnectorError)


async def test_closed_client_refuses_calls(fault_server: FaultServer) -> None:
    c = client(fault_server)
    await c.complete(HELLO)
    await c.aclose()
    await c.aclose()
    with pytest.raises(ClientError, match="closed"):
        await c.complete(HELLO)
    assert fault_server.count() == 1


# ---------------------------------------------------------------------------
# Secrets
# ---------------------------------------------------------------------------


def _texts(exc: BaseException) -> list[str]:
    """str, repr, formatted traceback and frame locals of an exception and its chain.

    Frame locals are what a traceback printer such as rich's ``show_locals`` shows;
    the test's own frame is left out.
    """
    texts = ["".join(traceback.format_exception(exc))]
    seen: BaseException | None = exc
    while seen is not None:
        texts += [str(seen), repr(seen), repr(seen.args), repr(vars(seen))]
        tb = seen.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename != __file__:
                texts.append(repr(tb.tb_frame.f_locals))
            tb = tb.tb_next
        seen = seen.__cause__ or seen.__context__
    return texts


async def test_secret_never_leaks(
    fault_server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PB_TEST_KEY", SECRET)
    leaks: list[str] = []
    for behaviour in ["401", "403", "503", "reset", "drop", "invalid-json"]:
        async with client(fault_server, behaviour, FakeTime()) as c:
            with pytest.raises(ClientError) as info:
                await c.complete(HELLO)
            leaks += _texts(info.value)
            if behaviour == "401":  # the server echoed the key; the client redacted it
                assert "Incorrect API key provided: [redacted]" in str(info.value)
            leaks += [repr(c), repr(vars(c)), repr(c.statistics()), repr(c.settings)]
            leaks.append(msgspec.json.encode(c.settings).decode())
    async with client(fault_server, "ok") as c:
        completion = await c.complete(HELLO)
        leaks += [repr(completion), msgspec.json.encode(completion).decode(), repr(vars(c))]
    # The key did reach the server...
    assert fault_server.requests[0].headers["Authorization"] == f"Bearer {SECRET}"
    # ...but nothing the client keeps or raises contains it.
    assert not [text for text in leaks if SECRET in text]


# ---------------------------------------------------------------------------
# Cancellation
# ---------------------------------------------------------------------------


async def _cancel_when(call: Awaitable[Completion], ready: Callable[[], bool]) -> None:
    """Run ``call`` as a task, cancel it once ``ready()``, and expect CancelledError."""

    async def run() -> Completion:
        return await call

    task = asyncio.create_task(run())
    await eventually(ready)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_cancel_in_flight_request(fault_server: FaultServer) -> None:
    before = foreign_tasks()
    async with client(fault_server, BY_MESSAGE, max_concurrency=1, timeout=10.0) as c:
        await _cancel_when(c.complete(say("slow,stall=5")), lambda: fault_server.count() == 1)
        stats = c.statistics()
        assert (stats.in_flight, stats.errors, stats.completions) == (0, 0, 0)
        assert foreign_tasks() == before
        # The only concurrency slot was given back: the next call goes through.
        completion = await asyncio.wait_for(c.complete(say("ok")), 2.0)
        assert completion.text == "echo: ok"
    fault_server.release()
    assert foreign_tasks() == before


async def test_cancel_during_backoff_and_limiter(fault_server: FaultServer) -> None:
    before = foreign_tasks()
    c = client(fault_server, "429,retry_after=30", retry_after_max=30.0)
    async with c:
        await _cancel_when(c.complete(HELLO), lambda: fault_server.count() == 1)
        # Cancelled while sleeping 30 s: CancelledError, never RateLimited.
        assert c.statistics().errors == 0
    limited = client(fault_server, "ok", requests_per_minute=1)
    async with limited:
        await limited.complete(HELLO)
        # The second call waits ~60 s for the bucket; cancel it while it waits.
        waited = time.monotonic() + 0.05
        await _cancel_when(limited.complete(HELLO), lambda: time.monotonic() > waited)
        assert limited.statistics().requests == 1
    assert foreign_tasks() == before


# ---------------------------------------------------------------------------
# A crowd
# ---------------------------------------------------------------------------


async def test_two_hundred_concurrent_calls_all_end(fault_server: FaultServer) -> None:
    expected: dict[str, type[object]] = {
        "ok": Completion,
        "ok,delay=0.02": Completion,
        "503,k=3": Completion,  # the first 3 of 20 fail once, then their retries succeed
        "503": TransientError,
        "429,retry_after=0": RateLimited,
        "reset": TransientError,
        "drop,k=5": Completion,
        "invalid-json": BadResponse,
        "401": BadResponse,
        "empty-choices,k=2": Completion,
    }
    behaviours = list(expected)
    async with client(
        fault_server, BY_MESSAGE, max_concurrency=16, max_retries=3, timeout=2.0
    ) as c:
        calls = [c.complete(say(behaviours[i % len(behaviours)])) for i in range(200)]
        results = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 15.0)
        stats: ClientStatistics = c.statistics()
    for i, result in enumerate(results):
        behaviour = behaviours[i % len(behaviours)]
        assert isinstance(result, expected[behaviour]), (behaviour, result)
    assert stats.calls == 200 and stats.completions == 100 and stats.errors == 100
    assert stats.in_flight == 0 and 1 < stats.max_in_flight <= 16
    assert fault_server.max_in_flight <= 16
