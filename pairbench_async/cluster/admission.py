"""The admission queue: batches of tests wait their turn for room on a node.

A batch asks for a node with room for its tests (:func:`~.placement.pick_node`) and
waits, first come, first served, retries ahead of new batches; the queue stops at the
first batch that has no room, so that a large batch is not overtaken for ever by small
ones. A batch waits as long as some node is serving, and gives up (None) once no node
has served for ``node_wait_s``. Whoever changes the nodes (room freed, a node joined or
was lost) calls :meth:`AdmissionQueue.notify`. No Ray here: the nodes are
:class:`~.placement.NodeLoad` s, listed by a callable.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from ..core.errors import SandboxError
from .placement import NodeLoad, pick_node

__all__ = ["AdmissionQueue"]

N = TypeVar("N", bound=NodeLoad)  # the caller's kind of node, handed back as it is


class _Waiter(Generic[N]):
    """A batch waiting for room on some node."""

    __slots__ = ("avoid", "future", "preferred", "tests")

    def __init__(self, tests: int, preferred: str | None, avoid: Sequence[str],
                 future: asyncio.Future[N]) -> None:
        self.tests = tests
        self.preferred = preferred
        self.avoid = avoid
        self.future = future


class AdmissionQueue(Generic[N]):
    """Batches waiting for room on the nodes ``nodes()`` lists (ready or not)."""

    def __init__(self, nodes: Callable[[], Sequence[N]], *, tests_per_worker: int,
                 node_wait_s: float) -> None:
        self._nodes = nodes
        self._tests_per_worker = tests_per_worker
        self._node_wait_s = node_wait_s
        self._queue: deque[_Waiter[N]] = deque()  # new batches, first come first
        self._retries: deque[_Waiter[N]] = deque()  # retries, served before new batches
        self._changed: asyncio.Future[None] | None = None
        self._closed = False

    async def acquire(self, tests: int, preferred: str | None = None,
                      avoid: Sequence[str] = (), *, retry: bool = False) -> N | None:
        """A node with room for ``tests``, its load taken (give it back with :meth:`release`);
        waits its turn for as long as a node is serving, and None once no node has been
        serving for ``node_wait_s``. A :class:`SandboxError` once the queue is closed."""
        loop = asyncio.get_running_loop()
        waiter: _Waiter[N] = _Waiter(tests, preferred, avoid, loop.create_future())
        (self._retries if retry else self._queue).append(waiter)
        self._dispatch()
        no_node_since: float | None = None
        try:
            while not waiter.future.done():
                if self._closed:
                    raise SandboxError("the sandbox is closed")
                if any(n.ready for n in self._nodes()):
                    no_node_since = None
                    await asyncio.wait(self._wakers(waiter))
                    continue
                now = loop.time()
                no_node_since = now if no_node_since is None else no_node_since
                remaining = no_node_since + self._node_wait_s - now
                if remaining <= 0:
                    return None
                await asyncio.wait(self._wakers(waiter), timeout=remaining)
            return waiter.future.result()
        except BaseException:
            if waiter.future.done() and not waiter.future.cancelled():
                self.release(waiter.future.result(), tests)  # placed, then cancelled
            raise
        finally:
            if not waiter.future.done():
                waiter.future.cancel()  # skipped by _dispatch from now on

    def waiting(self) -> int:
        """Batches waiting for room now."""
        return sum(not w.future.done() for q in (self._retries, self._queue) for w in q)

    def release(self, node: N, tests: int) -> None:
        """Give back the room :meth:`acquire` took on ``node``."""
        node.outstanding -= tests
        self.notify()

    def notify(self) -> None:
        """Place what waits for room (a node freed some, joined, or left), and wake every
        waiting batch."""
        if not self._closed:
            self._dispatch()
        changed, self._changed = self._changed, None
        if changed is not None and not changed.done():
            changed.set_result(None)

    def close(self) -> None:
        """Place nothing more; every waiting batch wakes to a :class:`SandboxError`."""
        self._closed = True
        self.notify()

    def _wakers(self, waiter: _Waiter[N]) -> set[asyncio.Future[Any]]:
        """What ends a wait: the batch placed, or a :meth:`notify` (which settles the other)."""
        if self._changed is None:
            self._changed = asyncio.get_running_loop().create_future()
        return {waiter.future, self._changed}

    def _dispatch(self) -> None:
        """Place waiting batches in order, retries first; stop at the first that has no room."""
        nodes = list(self._nodes())
        for queue in (self._retries, self._queue):
            while queue:
                waiter = queue[0]
                if waiter.future.done():
                    queue.popleft()
                    continue
                node = pick_node(nodes, waiter.tests, tests_per_worker=self._tests_per_worker,
                                 preferred=waiter.preferred, avoid=waiter.avoid)
                if node is None:
                    return
                node.outstanding += waiter.tests
                waiter.future.set_result(node)
                queue.popleft()
