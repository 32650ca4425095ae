"""Waiting in tests for something to happen, never for a fixed time.

A test that sleeps a fixed time and hopes the other side got there races it (a loaded
machine loses); these poll a condition until a deadline, and fail loudly when it passes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


def wait_until(predicate: Callable[[], object], within: float = 10.0, *,
               every: float = 0.005, what: str = "") -> None:
    """Block until ``predicate()`` is true; AssertionError after ``within`` seconds."""
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within:g}s: {what or predicate}")
        time.sleep(every)


async def until(predicate: Callable[[], object], within: float = 10.0, *,
                every: float = 0.002, what: str = "") -> None:
    """:func:`wait_until` for a test on the event loop (the loop runs while it waits)."""
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within:g}s: {what or predicate}")
        await asyncio.sleep(every)


async def drained() -> None:
    """Return once every callback scheduled on the running loop so far has run (e.g. the
    hand-over of a thread's future, ``call_soon_threadsafe``): an event, not a delay."""
    marker = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().call_soon(marker.set_result, None)
    await marker
