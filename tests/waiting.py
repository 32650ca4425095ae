"""Waiting in tests for something to happen, never for a fixed time.

A test that sleeps a fixed time and hopes the other side got there races it (a loaded
machine loses); these poll a condition until a deadline, and fail loudly when it passes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any


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


def soon(predicate: Callable[[], object], within: float, *, every: float = 0.02) -> bool:
    """Whether ``predicate()`` becomes true within ``within`` seconds (returns as soon as
    it does): for "nothing is left" checks that keep their time bound but not its wait."""
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(every)
    return True


def running_test_child(pool: Any, slot: int = 0, *, not_of: int | None = None) -> Any:
    """The test child that worker ``slot`` of a :class:`SandboxPool` runs now, or None:
    the started worker -> its init (with a PID namespace) -> the zygote -> the child, found
    in /proc. ``not_of``: a worker pid that no longer counts (one just killed)."""
    import psutil

    worker = pool._workers[slot]
    if worker is None or worker.proc.returncode is not None or worker.proc.pid == not_of:
        return None
    depth = 3 if worker.report.get("pidns") else 2
    try:
        level = [psutil.Process(worker.proc.pid)]
        for _ in range(depth):
            level = [child for p in level for child in p.children()]
    except psutil.Error:
        return None
    return level[0] if level else None
