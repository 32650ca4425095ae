"""RaySandbox: the sandbox spread over a Ray cluster, one long-lived pool actor per node.

    async with RaySandbox(SandboxConfig(), RayOptions(address="auto")) as sandbox:
        results = await sandbox.run(program, tests, limits)

The only module that imports Ray, and only when a Ray sandbox starts (it is an
optional extra: ``pip install 'pairbench_async[ray]'``). The driver runs in the
orchestrator's own event loop:

* **placement.** Every alive node with CPUs gets one actor (:class:`~.node.NodeSandbox`)
  pinned to it (``NodeAffinitySchedulingStrategy``, not soft), reserving the CPUs its
  confined pool uses (the node's ``CPU`` resource, or ``workers_per_node``). Nodes are
  looked up again every ``discover_s``: one that joins later gets an actor and work.
* **spreading.** A job is cut into batches of at most ``batch_tests`` tests; each goes
  to the node with the least outstanding tests per worker that has room (at most
  ``tests_per_worker`` per worker in flight: back-pressure per node), a program
  preferring the node that ran it last (:mod:`.placement`).
* **faults.** A batch whose actor dies, whose node leaves, or whose node stops
  answering the heartbeat (``heartbeat_timeout_s``: a frozen node, which Ray itself
  notices late) is run again, once, on another node; a second loss makes its tests
  ``SF``. Each batch resolves exactly once: a late answer from a node given up is
  dropped, and the retry is counted (``SandboxStatistics.retries``). The lost actor is
  killed; its pool's workers watch its pid and die with it.
* **shutdown.** Only what this object started is stopped: its actors (closed, then
  ``ray.kill``), and its driver connection (``ray.shutdown`` disconnects; the cluster
  stays). Never ``ray stop``, which kills every Ray process on the machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import msgspec

from ..core.errors import ConfigError, ConfinementUnavailable, SandboxError
from ..core.types import Checker, Limits, Program, Test, TestResult, Verdict
from ..sandbox.config import SandboxConfig
from ..sandbox.host import confinement_report
from ..sandbox.interface import (
    SandboxJob,
    SandboxStatistics,
    decode_results,
    decode_statistics,
    encode,
)
from .node import NodeInfo, NodeSandbox
from .options import RayOptions
from .placement import NodeLoad, pick_node

__all__ = ["RaySandbox", "import_ray"]

_log = logging.getLogger("pairbench_async.cluster")
#: programs whose node is remembered (affinity)
_AFFINITY = 4096


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`ConfigError` that says how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("--sandbox ray needs Ray, an optional extra: pip install "
                          "'pairbench_async[ray]' (in a checkout: pip install -e '.[ray]')"
                          ) from exc
    return ray


class _NodeLost(Exception):
    """The node serving a batch was lost (actor dead, node gone, frozen, or deadline missed)."""


class _Node(NodeLoad):
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
        self.waiters: set[asyncio.Future[Any]] = set()


class RaySandbox:
    """Run programs confined on the nodes of a Ray cluster (see the module docstring)."""

    def __init__(self, config: SandboxConfig | None = None,
                 options: RayOptions | None = None) -> None:
        self.config = config or SandboxConfig()
        self.options = options or RayOptions()
        self._ray: Any = None
        self._actor_class: Any = None
        self._connected = False  # this object called ray.init, so it disconnects
        self._nodes: dict[str, _Node] = {}
        self._order = itertools.count()
        self._starting: set[asyncio.Task[None]] = set()
        self._monitor: asyncio.Task[None] | None = None
        self._changed: asyncio.Future[None] | None = None
        self._affinity: OrderedDict[bytes, str] = OrderedDict()
        self._retired: list[SandboxStatistics] = []  # last counters of lost nodes
        self._start_errors: list[str] = []
        self._started = False
        self._closed = False
        self._jobs_done = 0
        self._waiting = 0
        self._faults = 0
        self._nodes_lost = 0
        self._retries = 0
        self._tests_retried = 0
        self._report: dict[str, Any] = {}

    # -- lifecycle ---------------------------------------------------------

    async def __aenter__(self) -> RaySandbox:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Connect (unless connected), start an actor on every node, wait for the first."""
        if self._started:
            return
        self._started = True
        ray = self._ray = import_ray()
        self._changed = asyncio.get_running_loop().create_future()
        if not ray.is_initialized():
            address = self.options.address or "auto"
            try:
                await asyncio.to_thread(ray.init, address=address, logging_level=logging.WARNING,
                                        log_to_driver=False)
            except ConnectionError as exc:
                raise ConfigError(f"no Ray cluster at {address!r} ({exc}); start one with "
                                  "`ray start --head` (README: running on a cluster) or pass "
                                  "--ray-address") from exc
            self._connected = True
        self._actor_class = ray.remote(NodeSandbox)
        try:
            await self._discover()
            if self._starting:
                await asyncio.wait(set(self._starting))
            if not any(n.ready for n in self._nodes.values()):
                why = "; ".join(self._start_errors[:3]) or "no alive node with CPUs"
                if any("ConfinementUnavailable" in e for e in self._start_errors):
                    raise ConfinementUnavailable(f"no node could start a sandbox pool: {why}")
                raise SandboxError(f"no node of the Ray cluster could start a sandbox pool: {why}")
        except BaseException:
            await self.aclose()
            raise
        missing = confinement_report(self._report) if self.config.confine else []
        if missing:
            warnings.warn("pairbench_async sandbox (Ray nodes): running WITHOUT "
                          + ", ".join(missing), RuntimeWarning, stacklevel=2)
        self._monitor = asyncio.create_task(self._watch(), name="pairbench-ray-monitor")

    async def aclose(self) -> None:
        """Close every node's pool, kill this sandbox's actors, disconnect if we connected."""
        if self._closed:
            return
        self._closed = True
        tasks = [t for t in (self._monitor, *self._starting) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._notify()
        nodes = list(self._nodes.values())
        ready = [n for n in nodes if n.ready]
        # last counters, then a graceful close (workers stopped, scratch removed)
        stats = await self._gather([n.actor.statistics.remote() for n in ready], timeout=5)
        for node, data in zip(ready, stats, strict=True):
            if isinstance(data, bytes):
                node.stats = decode_statistics(data)
        await self._gather([n.actor.aclose.remote() for n in ready], timeout=10)
        for node in nodes:
            self._fail_waiters(node, "sandbox closed")
            with contextlib.suppress(Exception):
                self._ray.kill(node.actor, no_restart=True)
            if node.stats is not None:
                self._retired.append(node.stats)
            node.ready = False
        self._nodes.clear()
        if self._connected:
            self._connected = False
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self._ray.shutdown)

    async def _gather(self, refs: list[Any], timeout: float) -> list[Any]:
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

    # -- public ------------------------------------------------------------

    @property
    def workers(self) -> int:
        """Sandbox workers over every serving node."""
        return sum(n.workers for n in self._nodes.values() if n.ready)

    def nodes(self) -> dict[str, NodeInfo]:
        """Serving nodes: Ray node id -> where its actor runs (pid, host, workers)."""
        return {n.node_id: n.info for n in self._nodes.values() if n.ready and n.info is not None}

    def node_statistics(self) -> dict[str, SandboxStatistics]:
        """Serving nodes' counters as of their last heartbeat (which node ran how much)."""
        return {n.node_id: n.stats for n in self._nodes.values() if n.ready and n.stats is not None}

    def in_flight(self) -> dict[str, int]:
        """Tests in flight per serving node (the load batches are spread by)."""
        return {n.node_id: n.outstanding for n in self._nodes.values() if n.ready}

    def confinement(self) -> dict[str, Any]:
        """The first node's report: which layers are on, Landlock ABI, RSS."""
        return dict(self._report)

    def statistics(self) -> SandboxStatistics:
        live = [n.stats for n in self._nodes.values() if n.stats is not None]
        every = [*live, *self._retired]

        def total(name: str) -> int:
            return sum(getattr(s, name) for s in every)

        errors = [s.last_error for s in every if s.last_error]
        return SandboxStatistics(
            workers=self.workers, jobs_done=self._jobs_done, jobs_waiting=self._waiting,
            tests_run=total("tests_run"), worker_restarts=total("worker_restarts"),
            sandbox_faults=total("sandbox_faults") + self._faults,
            worker_timeouts=total("worker_timeouts"), internal_errors=total("internal_errors"),
            last_error=errors[-1] if errors else None,
            nodes=sum(1 for n in self._nodes.values() if n.ready), nodes_lost=self._nodes_lost,
            retries=self._retries, tests_retried=self._tests_retried,
        )

    async def run(self, program: Program, tests: Sequence[Test], limits: Limits = Limits(), *,
                  checker: Checker = Checker(), trace: bool = False) -> list[TestResult]:
        """Run ``program`` on every test, spread over the nodes; one result per test, in order."""
        if self._closed:
            raise SandboxError("the sandbox is closed")
        if not self._started:
            await self.start()
        if not tests:
            return []
        tests = list(tests)
        key = hashlib.blake2b(msgspec.msgpack.encode(program), digest_size=16).digest()
        count = -(-len(tests) // self.options.batch_tests)
        size = -(-len(tests) // count)  # even batches
        batches = [tests[i:i + size] for i in range(0, len(tests), size)]
        self._waiting += 1
        try:
            parts = await asyncio.gather(*(
                self._run_batch(encode(SandboxJob(program, batch, limits, checker, trace)), batch,
                                limits, key)
                for batch in batches))
        finally:
            self._waiting -= 1
        self._jobs_done += 1
        return [r for part in parts for r in part]

    # -- batches -----------------------------------------------------------

    async def _run_batch(self, job: bytes, tests: list[Test], limits: Limits,
                         key: bytes) -> list[TestResult]:
        avoid: tuple[str, ...] = ()
        reason = ""
        for attempt in (0, 1):
            node = await self._acquire(len(tests), self._affinity.get(key), avoid)
            if node is None:
                why = f"no sandbox node had room within {self.options.node_wait_s:g}s"
                return self._faulted(tests, why + (f" ({reason})" if reason else ""))
            try:
                data = await self._call(node, job, self._deadline(node, tests, limits))
            except _NodeLost as exc:
                reason = str(exc)
                if self._closed:
                    return self._faulted(tests, "sandbox closed")
                if attempt == 0:
                    self._retries += 1
                    self._tests_retried += len(tests)
                    avoid = (node.node_id,)
                    continue
                return self._faulted(tests, f"sandbox node lost twice: {reason}")
            finally:
                self._release(node, len(tests))
            results = decode_results(data)
            if [r.id for r in results] != [t.id for t in tests]:  # never a program's doing
                return self._faulted(tests, "sandbox node answered for other tests")
            self._affinity[key] = node.node_id
            self._affinity.move_to_end(key)
            if len(self._affinity) > _AFFINITY:
                self._affinity.popitem(last=False)
            return results
        raise AssertionError("unreachable")  # pragma: no cover

    def _deadline(self, node: _Node, tests: list[Test], limits: Limits) -> float:
        """A backstop for a node that answers heartbeats but not this batch: every test
        at its wall limit, on the node's workers, plus the pool's own graces."""
        rounds = -(-len(tests) // node.workers)
        return (self.config.load_grace + rounds * (limits.wall_seconds + self.config.result_grace)
                + self.options.heartbeat_timeout_s)

    async def _call(self, node: _Node, job: bytes, timeout: float) -> bytes:
        ray = self._ray
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Any] = loop.create_future()
        ref = node.actor.run.remote(job)

        def settle(cf: Any) -> None:
            if waiter.done():
                return  # the node was given up: this late answer is dropped
            exc = cf.exception()
            if exc is not None:
                waiter.set_exception(exc)
            else:
                waiter.set_result(cf.result())

        def done(cf: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(settle, cf)

        ref.future().add_done_callback(done)
        node.waiters.add(waiter)
        try:
            finished, _ = await asyncio.wait({waiter}, timeout=timeout)
            if not finished:
                self._lose(node, f"a batch of {timeout:.0f}s at most did not come back")
            return await waiter
        except _NodeLost:
            raise
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                ray.cancel(ref)
            raise
        except Exception as exc:  # ActorDiedError, ActorUnavailableError, RayTaskError, ...
            reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
            self._lose(node, reason)
            raise _NodeLost(reason) from exc
        finally:
            node.waiters.discard(waiter)

    async def _acquire(self, tests: int, preferred: str | None,
                       avoid: Sequence[str]) -> _Node | None:
        """A node with room for ``tests``, its load taken; None after ``node_wait_s``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.options.node_wait_s
        while True:
            if self._closed:
                raise SandboxError("the sandbox is closed")
            node = pick_node(list(self._nodes.values()), tests,
                             tests_per_worker=self.options.tests_per_worker, preferred=preferred,
                             avoid=avoid)
            if node is not None:
                node.outstanding += tests
                assert isinstance(node, _Node)
                return node
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            assert self._changed is not None
            await asyncio.wait({self._changed}, timeout=remaining)

    def _release(self, node: _Node, tests: int) -> None:
        node.outstanding -= tests
        self._notify()

    def _notify(self) -> None:
        """Wake every batch waiting for room (a node freed some, joined, or the sandbox closed)."""
        changed = self._changed
        if changed is not None and not changed.done():
            self._changed = asyncio.get_running_loop().create_future()
            changed.set_result(None)

    def _faulted(self, tests: list[Test], reason: str) -> list[TestResult]:
        self._faults += len(tests)
        return [TestResult(id=t.id, verdict=Verdict.SF, error=reason) for t in tests]

    # -- nodes -------------------------------------------------------------

    def _fail_waiters(self, node: _Node, reason: str) -> None:
        for waiter in list(node.waiters):
            if not waiter.done():
                waiter.set_exception(_NodeLost(reason))

    def _lose(self, node: _Node, reason: str) -> None:
        """Give a node up: its batches are retried elsewhere, its actor is killed."""
        if node.lost:
            return
        node.lost = True
        node.ready = False
        self._nodes_lost += 1
        if self._nodes.get(node.node_id) is node:
            del self._nodes[node.node_id]
        if node.stats is not None:
            self._retired.append(node.stats)
        _log.warning("sandbox node %s lost: %s", node.node_id[:12], reason)
        self._fail_waiters(node, f"node {node.node_id[:12]} lost: {reason}")
        with contextlib.suppress(Exception):
            self._ray.kill(node.actor, no_restart=True)
        self._notify()

    async def _discover(self) -> None:
        """Start an actor on every alive node that has none; give up nodes that left."""
        try:
            listed = await asyncio.to_thread(self._ray.nodes)
        except Exception as exc:  # the GCS is briefly unreachable: next time
            _log.warning("listing the Ray cluster's nodes failed: %s", exc)
            return
        alive = {n["NodeID"]: n for n in listed if n.get("Alive")}
        for node_id, node in list(self._nodes.items()):
            if node_id not in alive:
                self._lose(node, "the node left the cluster")
        for node_id, entry in alive.items():
            if node_id in self._nodes or self._closed:
                continue
            cpus = float(entry.get("Resources", {}).get("CPU", 0))
            workers = self.options.workers_per_node or int(cpus)
            if cpus < 1 or workers < 1:
                continue  # a node kept free of work (e.g. a head started with --num-cpus 0)
            self._start_node(node_id, workers, min(float(workers), cpus))

    def _start_node(self, node_id: str, workers: int, cpus: float) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        config = msgspec.structs.replace(self.config, workers=workers)
        actor = self._actor_class.options(
            num_cpus=cpus, max_restarts=0, max_task_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
        ).remote(msgspec.msgpack.encode(config))
        node = _Node(node_id, workers, next(self._order), actor)
        self._nodes[node_id] = node
        task = asyncio.create_task(self._started_node(node),
                                   name=f"pairbench-ray-start-{node_id[:8]}")
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    async def _started_node(self, node: _Node) -> None:
        future = asyncio.wrap_future(node.actor.start.remote().future())
        try:
            data = await asyncio.wait_for(future, self.options.start_timeout_s)
        except Exception as exc:
            text = str(exc).strip()
            reason = f"{type(exc).__name__}: {text.splitlines()[-1] if text else ''}"
            self._start_errors.append(f"node {node.node_id[:12]}: {reason[:300]}")
            _log.warning("no sandbox on node %s: %s", node.node_id[:12], reason)
            if self._nodes.get(node.node_id) is node:
                del self._nodes[node.node_id]
            with contextlib.suppress(Exception):
                self._ray.kill(node.actor, no_restart=True)
            return
        node.info = msgspec.msgpack.decode(data, type=NodeInfo)
        node.workers = max(1, node.info.workers)
        if not self._report:
            self._report = dict(node.info.confinement)
        if not node.lost and not self._closed:
            node.ready = True
            self._notify()

    async def _watch(self) -> None:
        """Heartbeats every ``heartbeat_s``; new and departed nodes every ``discover_s``."""
        loop = asyncio.get_running_loop()
        next_look = loop.time() + self.options.discover_s
        while True:
            await asyncio.sleep(self.options.heartbeat_s)
            now = loop.time()
            for node in [n for n in self._nodes.values() if n.ready]:
                ping = node.ping
                if ping is not None and ping.done():
                    node.ping = None
                    exc = ping.exception()
                    if exc is not None:
                        self._lose(node, f"heartbeat failed: {type(exc).__name__}")
                        continue
                    node.stats = decode_statistics(ping.result())
                elif ping is not None and now - node.ping_sent > self.options.heartbeat_timeout_s:
                    self._lose(node, f"no heartbeat for {self.options.heartbeat_timeout_s:g}s "
                                     "(frozen or cut off)")
                    continue
                if node.ping is None:
                    node.ping = asyncio.wrap_future(node.actor.statistics.remote().future())
                    node.ping_sent = now
            if now >= next_look:
                next_look = now + self.options.discover_s
                await self._discover()
