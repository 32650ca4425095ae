"""Membership: which nodes serve, their actors' start, the heartbeat, and a node's loss.

Every alive node with CPUs gets one actor (:class:`~.node.NodeSandbox`), sized to the
CPUs free on it; nodes are looked up again every ``discover_s``, so one that joins
later gets an actor, and one whose actor failed to start is tried again after a
backoff. Every ``heartbeat_s`` each serving node is asked for its counters in a
concurrency group of its own (:data:`HEARTBEAT_GROUP`, never behind its batches); a
node whose heartbeat fails, or stays unanswered ``heartbeat_timeout_s`` (frozen: Ray
notices late), or that left the cluster, is lost: its waiting batches get
:class:`NodeLost`, its actor is killed, its last counters are kept.

No Ray here: the cluster is reached through :class:`Cluster` (listing nodes, starting
and killing actors), which :mod:`.ray_sandbox` implements with Ray; an actor is any
handle whose methods answer ``.remote()`` with a ref that has ``.future()``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import warnings
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import msgspec

from ..core.errors import ConfinementUnavailable, SandboxError
from ..sandbox.host import confinement_report
from ..sandbox.interface import SandboxStatistics, decode_statistics
from .node import NodeInfo
from .options import RayOptions
from .placement import NodeLoad

__all__ = ["HEARTBEAT_GROUP", "Cluster", "Member", "Membership", "NodeLost", "one_line"]

_log = logging.getLogger("pairbench_async.cluster")
#: the concurrency group of the heartbeat, so that it never waits behind ``run`` calls
HEARTBEAT_GROUP = "heartbeat"
#: start failures kept for the error message when no node could start
_START_ERRORS = 16
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class NodeLost(Exception):
    """The node serving a batch was lost (actor dead, node gone, frozen, or deadline missed)."""


class Cluster(Protocol):
    """What membership asks of the cluster (:class:`~.ray_sandbox.RayBackend` with Ray)."""

    def nodes(self) -> list[dict[str, Any]]:
        """Every node, as ``ray.nodes()`` lists them (``NodeID``, ``Alive``, ``Resources``)."""

    def free_cpus(self) -> dict[str, float]:
        """CPUs not taken by other actors and tasks, per node id; empty if unknown."""

    def spawn(self, node_id: str, workers: int, cpus: float) -> Any:
        """A new :class:`~.node.NodeSandbox` actor pinned to the node (not started)."""

    def kill(self, actor: Any) -> None:
        """Kill an actor (never raises)."""


def one_line(exc: BaseException) -> str:
    """One line, without Ray's colour codes: the actor's own exception when Ray wrapped it."""
    cause = getattr(exc, "cause", None)
    err = cause if isinstance(cause, BaseException) else exc
    text = _ANSI.sub("", str(err)).strip()
    return f"{type(err).__name__}: {text.splitlines()[-1] if text else ''}"[:300]


class Member(NodeLoad):
    """One node's actor and the driver's state of it."""

    __slots__ = ("actor", "info", "lost", "ping", "ping_sent", "stats", "waiters")

    def __init__(self, node_id: str, workers: int, order: int, actor: Any) -> None:
        super().__init__(node_id, workers, order)
        self.actor = actor
        self.info: NodeInfo | None = None
        self.lost = False
        self.ping: asyncio.Future[Any] | None = None
        self.ping_sent = 0.0
        self.stats: SandboxStatistics | None = None
        self.waiters: set[asyncio.Future[Any]] = set()  # batches in flight on it

    @property
    def tests_done(self) -> int:
        """Tests the node has finished, as of its last heartbeat."""
        return self.stats.tests_run if self.stats is not None else 0

    def send_ping(self) -> Any:
        """A heartbeat call, in its own concurrency group: never behind the node's batches."""
        return self.actor.statistics.options(concurrency_group=HEARTBEAT_GROUP).remote()

    def fail_waiters(self, reason: str) -> None:
        """Every batch waiting on this node gets :class:`NodeLost`."""
        for waiter in list(self.waiters):
            if not waiter.done():
                waiter.set_exception(NodeLost(reason))

    def drop_ping(self) -> None:
        """Forget a pending heartbeat, its outcome retrieved (never "Future exception was
        never retrieved" when a lost node's heartbeat fails later)."""
        ping, self.ping = self.ping, None
        if ping is None:
            return
        if ping.done():
            if not ping.cancelled():
                ping.exception()
        else:
            ping.add_done_callback(lambda f: f.cancelled() or f.exception())
            ping.cancel()


class Membership:
    """The nodes of one sandbox: started, serving, lost (see the module docstring).

    ``on_change`` is called whenever a node starts serving or is lost.
    """

    def __init__(self, cluster: Cluster, options: RayOptions, *, confine: bool,
                 on_change: Callable[[], None]) -> None:
        self._cluster = cluster
        self._options = options
        self._confine = confine
        self._on_change = on_change
        self._members: dict[str, Member] = {}
        self._order = itertools.count()
        self._starting: set[asyncio.Task[None]] = set()
        self._backoff: dict[str, tuple[int, float]] = {}  # node -> (failed starts, next try)
        self._retired: list[SandboxStatistics] = []  # last counters of lost nodes
        self._start_errors: deque[str] = deque(maxlen=_START_ERRORS)
        self._closed = False
        #: nodes lost so far
        self.lost = 0
        #: the first node's confinement report
        self.report: dict[str, Any] = {}

    # -- views -------------------------------------------------------------

    def all(self) -> list[Member]:
        """Every node with an actor, serving or still starting."""
        return list(self._members.values())

    def serving(self) -> list[Member]:
        return [m for m in self._members.values() if m.ready]

    def get(self, node_id: str) -> Member | None:
        return self._members.get(node_id)

    def counters(self) -> list[SandboxStatistics]:
        """The last counters of every node: those with an actor, then those lost."""
        return [*(m.stats for m in self._members.values() if m.stats is not None),
                *self._retired]

    @property
    def start_errors(self) -> tuple[str, ...]:
        """The latest failures to start a node's actor (at most 16)."""
        return tuple(self._start_errors)

    def add(self, member: Member) -> None:
        """Take in a node's actor (ready if ``member.ready``: then batches may go to it)."""
        self._members[member.node_id] = member
        if member.ready:
            self._on_change()

    # -- lifecycle ---------------------------------------------------------

    async def start(self) -> None:
        """Start an actor on every node, return once one serves; a :class:`SandboxError`
        (:class:`ConfinementUnavailable` if that was why) when none could."""
        await self.discover()
        # serve as soon as one node is ready; the others join when their pools are up
        while self._starting and not self.serving():
            await asyncio.wait(set(self._starting), return_when=asyncio.FIRST_COMPLETED)
        if self.serving():
            return
        why = "; ".join(list(self._start_errors)[:3]) or "no alive node with free CPUs"
        if any("ConfinementUnavailable" in e for e in self._start_errors):
            raise ConfinementUnavailable(f"no node could start a sandbox pool: {why}")
        raise SandboxError(f"no node of the Ray cluster could start a sandbox pool: {why}")

    async def close(self) -> None:
        """Stop starting nodes, take every node's last counters, close its pool, kill it."""
        self._closed = True
        tasks = list(self._starting)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        members = list(self._members.values())
        ready = [m for m in members if m.ready]
        # last counters, then a graceful close (workers stopped, scratch removed)
        stats = await _gather([m.send_ping() for m in ready], timeout=5)
        for member, data in zip(ready, stats, strict=True):
            if isinstance(data, bytes):
                member.stats = decode_statistics(data)
        await _gather([m.actor.aclose.remote() for m in ready], timeout=10)
        for member in members:
            member.fail_waiters("sandbox closed")
            member.drop_ping()
            self._cluster.kill(member.actor)
            if member.stats is not None:
                self._retired.append(member.stats)
            member.ready = False
        self._members.clear()

    def lose(self, member: Member, reason: str) -> None:
        """Give a node up: its batches get :class:`NodeLost`, its actor is killed."""
        if member.lost:
            return
        member.lost = True
        member.ready = False
        self.lost += 1
        if self._members.get(member.node_id) is member:
            del self._members[member.node_id]
        if member.stats is not None:
            self._retired.append(member.stats)
        _log.warning("sandbox node %s lost: %s", member.node_id[:12], reason)
        member.fail_waiters(f"node {member.node_id[:12]} lost: {reason}")
        member.drop_ping()
        self._cluster.kill(member.actor)
        self._on_change()

    # -- discovery ---------------------------------------------------------

    async def discover(self) -> None:
        """Start an actor on every alive node that has none; give up nodes that left."""
        try:
            listed = await asyncio.to_thread(self._cluster.nodes)
        except Exception as exc:  # the GCS is briefly unreachable: next time
            _log.warning("listing the Ray cluster's nodes failed: %s", exc)
            return
        alive = {n["NodeID"]: n for n in listed if n.get("Alive")}
        for node_id, member in list(self._members.items()):
            if node_id not in alive:
                self.lose(member, "the node left the cluster")
        new = [i for i in alive if i not in self._members]
        if not new or self._closed:
            return
        free = await asyncio.to_thread(self._cluster.free_cpus)
        now = asyncio.get_running_loop().time()
        for node_id in new:
            if node_id in self._members or self._closed:
                continue
            if now < self._backoff.get(node_id, (0, 0.0))[1]:
                continue
            total = float(alive[node_id].get("Resources", {}).get("CPU", 0))
            cpus = free.get(node_id, total)
            if total < 1:
                continue  # a node kept free of work (e.g. a head started with --num-cpus 0)
            if cpus < 1:
                _log.info("sandbox node %s: no free CPU (its %g are taken): waiting for them",
                          node_id[:12], total)
                continue
            workers = self._options.workers_per_node or int(cpus)
            self._spawn(node_id, workers, min(float(workers), float(int(cpus))))

    def _spawn(self, node_id: str, workers: int, cpus: float) -> None:
        member = Member(node_id, workers, next(self._order),
                        self._cluster.spawn(node_id, workers, cpus))
        self._members[node_id] = member
        task = asyncio.create_task(self._start_member(member),
                                   name=f"pairbench-ray-start-{node_id[:8]}")
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    async def _start_member(self, member: Member) -> None:
        future = asyncio.wrap_future(member.actor.start.remote().future())
        try:
            data = await asyncio.wait_for(future, self._options.start_timeout_s)
        except Exception as exc:
            self._start_failed(member, exc)
            return
        member.info = msgspec.msgpack.decode(data, type=NodeInfo)
        member.workers = max(1, member.info.workers)
        self._backoff.pop(member.node_id, None)
        if not self.report:
            self.report = dict(member.info.confinement)
        missing = confinement_report(member.info.confinement) if self._confine else []
        if missing:  # each node (with --require-full-confinement its pool refused to start)
            warnings.warn(f"pairbench_async sandbox (Ray node {member.node_id[:12]}, "
                          f"{member.info.hostname}): running WITHOUT " + ", ".join(missing),
                          RuntimeWarning, stacklevel=2)
        if not member.lost and not self._closed:
            member.ready = True
            self._on_change()

    def _start_failed(self, member: Member, exc: Exception) -> None:
        """Note why, back off from the node (doubling up to 60 s), kill its actor."""
        text = str(exc).strip()
        reason = f"{type(exc).__name__}: {text.splitlines()[-1] if text else ''}"
        self._start_errors.append(f"node {member.node_id[:12]}: {reason[:300]}")
        failures = self._backoff.get(member.node_id, (0, 0.0))[0] + 1
        wait = min(60.0, self._options.discover_s * 2 ** failures)
        self._backoff[member.node_id] = (failures, asyncio.get_running_loop().time() + wait)
        _log.warning("no sandbox on node %s (try %d, next in %.0fs): %s", member.node_id[:12],
                     failures, wait, reason)
        if self._members.get(member.node_id) is member:
            del self._members[member.node_id]
        self._cluster.kill(member.actor)

    # -- heartbeat ---------------------------------------------------------

    async def watch(self) -> None:
        """Heartbeats every ``heartbeat_s``; new and departed nodes every ``discover_s``.
        A round that fails is logged and the next one runs: heartbeats never stop."""
        loop = asyncio.get_running_loop()
        next_look = loop.time() + self._options.discover_s
        while True:
            await asyncio.sleep(self._options.heartbeat_s)
            try:
                now = loop.time()
                self.heartbeat(now)
                if now >= next_look:
                    next_look = now + self._options.discover_s
                    await self.discover()
            except Exception:
                _log.exception("sandbox cluster monitor: a round failed (next in %gs)",
                               self._options.heartbeat_s)

    def heartbeat(self, now: float) -> None:
        """One round: take each serving node's answer, lose a node whose heartbeat failed or
        is overdue, send the next heartbeat."""
        timeout = self._options.heartbeat_timeout_s
        for member in self.serving():
            ping = member.ping
            if ping is not None and ping.done():
                member.ping = None
                exc = None if ping.cancelled() else ping.exception()
                if exc is not None:
                    self.lose(member, f"heartbeat failed: {one_line(exc)}")
                    continue
                if not ping.cancelled():
                    member.stats = decode_statistics(ping.result())
            elif ping is not None and now - member.ping_sent > timeout:
                self.lose(member, f"no heartbeat for {timeout:g}s (frozen or cut off)")
                continue
            if member.ping is None:
                member.ping = asyncio.wrap_future(member.send_ping().future())
                member.ping_sent = now


async def _gather(refs: list[Any], timeout: float) -> list[Any]:
    """The refs' results within ``timeout`` (None for each that failed or is late)."""
    if not refs:
        return []
    futures = [asyncio.wrap_future(ref.future()) for ref in refs]
    await asyncio.wait(futures, timeout=timeout)
    out: list[Any] = []
    for f in futures:
        if f.done() and not f.cancelled() and f.exception() is None:
            out.append(f.result())
        else:
            f.cancel()
            out.append(None)
    return out
