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
import os
import re
import threading
import warnings
from collections import OrderedDict, deque
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
#: start failures kept for the error message when no node could start
_START_ERRORS = 16
#: seconds the GCS address must accept a TCP connection in before ``ray.init`` is tried
_PROBE_S = 5.0
#: the concurrency group of the heartbeat, so that it never waits behind ``run`` calls
_HEARTBEAT_GROUP = "heartbeat"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


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


class _BatchFailed(Exception):
    """The node's actor raised on this batch: the batch's tests are ``SF``, the node serves on."""


class _Waiter:
    """A batch waiting for room on some node (served first come, first served)."""

    __slots__ = ("avoid", "future", "preferred", "tests")

    def __init__(self, tests: int, preferred: str | None, avoid: Sequence[str],
                 future: asyncio.Future[_Node]) -> None:
        self.tests = tests
        self.preferred = preferred
        self.avoid = avoid
        self.future = future


class _QuietSigterm(logging.Filter):
    """Drop Ray's "SIGTERM handler is not set" warning: ``ray.init`` runs off the main
    thread on purpose (the event loop keeps its own signal handling)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("SIGTERM handler is not set")


def _split_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a GCS address (``HOST:PORT`` or ``ray://HOST:PORT``); None for
    ``auto``/``local`` (Ray finds those itself); a :class:`ConfigError` for anything else."""
    if address in ("auto", "local"):
        return None
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536 or " " in host:
        raise ConfigError(f"--ray-address {address!r} is not a Ray address (HOST:PORT, e.g. "
                          "127.0.0.1:6379, or auto)")
    return host, int(port)


def _is_node_loss(ray: Any, exc: BaseException) -> bool:
    """Only these mean the node (or its actor) is gone; any other error is the batch's."""
    errors = ray.exceptions
    return isinstance(exc, (errors.RayActorError, errors.ObjectLostError, errors.NodeDiedError))


def _reason(exc: BaseException) -> str:
    """One line, without Ray's colour codes: the actor's own exception when Ray wrapped it."""
    cause = getattr(exc, "cause", None)
    err = cause if isinstance(cause, BaseException) else exc
    text = _ANSI.sub("", str(err)).strip()
    return f"{type(err).__name__}: {text.splitlines()[-1] if text else ''}"[:300]


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
        self._queue: deque[_Waiter] = deque()  # batches waiting for room, first come first
        self._retry_queue: deque[_Waiter] = deque()  # retries, served before new batches
        self._backoff: dict[str, tuple[int, float]] = {}  # node -> (failed starts, next try)
        self._affinity: OrderedDict[bytes, str] = OrderedDict()
        self._retired: list[SandboxStatistics] = []  # last counters of lost nodes
        self._start_errors: deque[str] = deque(maxlen=_START_ERRORS)
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
            await self._connect(ray)
        self._actor_class = ray.remote(concurrency_groups={_HEARTBEAT_GROUP: 1})(NodeSandbox)
        try:
            await self._discover()
            # serve as soon as one node is ready; the others join when their pools are up
            while self._starting and not any(n.ready for n in self._nodes.values()):
                await asyncio.wait(set(self._starting), return_when=asyncio.FIRST_COMPLETED)
            if not any(n.ready for n in self._nodes.values()):
                why = "; ".join(list(self._start_errors)[:3]) or "no alive node with free CPUs"
                if any("ConfinementUnavailable" in e for e in self._start_errors):
                    raise ConfinementUnavailable(f"no node could start a sandbox pool: {why}")
                raise SandboxError(f"no node of the Ray cluster could start a sandbox pool: {why}")
        except BaseException:
            await self.aclose()
            raise
        self._monitor = asyncio.create_task(self._watch(), name="pairbench-ray-monitor")

    async def _connect(self, ray: Any) -> None:
        """``ray.init``, bounded: a wrong address is a clear :class:`ConfigError`, never a hang.

        The GCS address is probed with a TCP connect first (Ray itself retries a dead
        address for minutes); ``ray.init`` runs in a daemon thread, so that neither a
        stuck connect nor SIGINT/SIGTERM waits for it. Usage stats are off unless the
        environment says otherwise.
        """
        address = self.options.address or "auto"
        where = _split_address(address)
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if where is not None:
            try:
                _, writer = await asyncio.wait_for(asyncio.open_connection(*where), _PROBE_S)
            except (OSError, asyncio.TimeoutError) as exc:
                why = str(exc) or f"no answer within {_PROBE_S:g}s"
                raise ConfigError(f"no Ray cluster at {address!r} ({why}); start one with "
                                  "`ray start --head` (README: running on a cluster) or fix "
                                  "--ray-address") from exc
            writer.close()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def settle(exc: BaseException | None) -> None:
            if not done.done():
                done.set_exception(exc) if exc is not None else done.set_result(None)

        def init() -> None:
            try:
                ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
            except BaseException as exc:  # handed to the loop, raised there
                outcome: BaseException | None = exc
            else:
                outcome = None
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                loop.call_soon_threadsafe(settle, outcome)

        quiet = _QuietSigterm()
        ray_logger = logging.getLogger("ray._private.worker")
        ray_logger.addFilter(quiet)
        try:
            threading.Thread(target=init, name="pairbench-ray-init", daemon=True).start()
            await asyncio.wait_for(asyncio.shield(done), self.options.connect_timeout_s)
        except asyncio.TimeoutError as exc:
            raise ConfigError(f"connecting to the Ray cluster at {address!r} took over "
                              f"{self.options.connect_timeout_s:g}s") from exc
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise ConfigError(f"no Ray cluster at {address!r} ({_reason(exc)}); start one "
                              "with `ray start --head` (README: running on a cluster) or "
                              "pass --ray-address") from exc
        finally:
            ray_logger.removeFilter(quiet)
        self._connected = True

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
        stats = await self._gather([self._ping(n) for n in ready], timeout=5)
        for node, data in zip(ready, stats, strict=True):
            if isinstance(data, bytes):
                node.stats = decode_statistics(data)
        await self._gather([n.actor.aclose.remote() for n in ready], timeout=10)
        for node in nodes:
            self._fail_waiters(node, "sandbox closed")
            self._drop_ping(node)
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
        """The first node's report: which layers are on, Landlock ABI, RSS (each node's
        missing layers are warned about when it starts)."""
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
        key = hashlib.blake2b(encode(SandboxJob(program, [])), digest_size=16).digest()
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
            node = await self._acquire(len(tests), self._affinity.get(key), avoid,
                                       retry=attempt > 0)
            if node is None:
                why = f"no sandbox node was serving for {self.options.node_wait_s:g}s"
                return self._faulted(tests, why + (f" ({reason})" if reason else ""))
            try:
                data = await self._call(node, job, self._deadline(node, limits))
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
            except _BatchFailed as exc:  # the batch's own doing: not retried, node kept
                return self._faulted(tests, f"the sandbox node failed this batch: {exc}")
            finally:
                self._release(node, len(tests))
            try:
                results = decode_results(data)
            except msgspec.MsgspecError as exc:
                return self._faulted(tests, f"the sandbox node's answer did not decode: {exc}")
            if [r.id for r in results] != [t.id for t in tests]:  # never a program's doing
                return self._faulted(tests, "sandbox node answered for other tests")
            self._affinity[key] = node.node_id
            self._affinity.move_to_end(key)
            if len(self._affinity) > _AFFINITY:
                self._affinity.popitem(last=False)
            return results
        raise AssertionError("unreachable")  # pragma: no cover

    def _deadline(self, node: _Node, limits: Limits) -> float:
        """A backstop for a node that answers heartbeats but not this batch: every test in
        flight on the node (this batch and the queue ahead of it) at its wall limit, on
        the node's workers, plus the pool's own graces. It is renewed while the node
        finishes tests (:meth:`_call`): a loaded node is slow, not lost."""
        rounds = -(-max(node.outstanding, 1) // node.workers)
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
            done_before = self._tests_done(node)
            while not waiter.done() and not node.lost:
                finished, _ = await asyncio.wait({waiter}, timeout=timeout)
                if finished or node.lost:
                    break
                done_now = self._tests_done(node)
                if done_now > done_before:  # busy, not stuck: its queue is moving
                    done_before = done_now
                    continue
                self._lose(node, f"no test finished on it for {timeout:.0f}s while a batch "
                                 "waited")
            return await waiter
        except _NodeLost:
            raise
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                ray.cancel(ref)
            raise
        except Exception as exc:
            reason = _reason(exc)
            if not _is_node_loss(ray, exc):  # e.g. RayTaskError: the actor raised
                _log.warning("sandbox node %s failed a batch: %s", node.node_id[:12], reason)
                raise _BatchFailed(reason) from exc
            self._lose(node, reason)  # ActorDiedError, ActorUnavailableError, ...
            raise _NodeLost(reason) from exc
        finally:
            node.waiters.discard(waiter)

    @staticmethod
    def _tests_done(node: _Node) -> int:
        """Tests the node has finished, as of its last heartbeat."""
        return node.stats.tests_run if node.stats is not None else 0

    async def _acquire(self, tests: int, preferred: str | None, avoid: Sequence[str], *,
                       retry: bool = False) -> _Node | None:
        """A node with room for ``tests``, its load taken; waits its turn (first come, first
        served, retries first) for as long as a node is serving, and None once no node has
        been serving for ``node_wait_s``."""
        loop = asyncio.get_running_loop()
        waiter = _Waiter(tests, preferred, avoid, loop.create_future())
        (self._retry_queue if retry else self._queue).append(waiter)
        self._dispatch()
        no_node_since: float | None = None
        try:
            while not waiter.future.done():
                if self._closed:
                    raise SandboxError("the sandbox is closed")
                assert self._changed is not None
                if any(n.ready for n in self._nodes.values()):
                    no_node_since = None
                    await asyncio.wait({waiter.future, self._changed})
                    continue
                now = loop.time()
                no_node_since = now if no_node_since is None else no_node_since
                remaining = no_node_since + self.options.node_wait_s - now
                if remaining <= 0:
                    return None
                await asyncio.wait({waiter.future, self._changed}, timeout=remaining)
            return waiter.future.result()
        except BaseException:
            if waiter.future.done() and not waiter.future.cancelled():
                self._release(waiter.future.result(), tests)  # placed, then cancelled
            raise
        finally:
            if not waiter.future.done():
                waiter.future.cancel()  # skipped by _dispatch from now on

    def _dispatch(self) -> None:
        """Place waiting batches in order, retries first; stop at the first that has no room
        (so that a large batch is not overtaken for ever by small ones)."""
        nodes = list(self._nodes.values())
        for queue in (self._retry_queue, self._queue):
            while queue:
                waiter = queue[0]
                if waiter.future.done():
                    queue.popleft()
                    continue
                node = pick_node(nodes, waiter.tests,
                                 tests_per_worker=self.options.tests_per_worker,
                                 preferred=waiter.preferred, avoid=waiter.avoid)
                if node is None:
                    return
                assert isinstance(node, _Node)
                node.outstanding += waiter.tests
                waiter.future.set_result(node)
                queue.popleft()

    def _release(self, node: _Node, tests: int) -> None:
        node.outstanding -= tests
        self._notify()

    def _notify(self) -> None:
        """Place what waits for room (a node freed some, joined, or the sandbox closed), and
        wake every waiting batch."""
        if not self._closed:
            self._dispatch()
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
        self._drop_ping(node)
        with contextlib.suppress(Exception):
            self._ray.kill(node.actor, no_restart=True)
        self._notify()

    def _ping(self, node: _Node) -> Any:
        """A heartbeat call, in its own concurrency group: never behind the node's batches."""
        return node.actor.statistics.options(concurrency_group=_HEARTBEAT_GROUP).remote()

    @staticmethod
    def _drop_ping(node: _Node) -> None:
        """Forget a node's pending heartbeat, its outcome retrieved (never "Future exception
        was never retrieved" when a lost node's heartbeat fails later)."""
        ping, node.ping = node.ping, None
        if ping is None:
            return
        if ping.done():
            if not ping.cancelled():
                ping.exception()
        else:
            ping.add_done_callback(lambda f: f.cancelled() or f.exception())
            ping.cancel()

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
        new = [i for i in alive if i not in self._nodes]
        if not new or self._closed:
            return
        free = await asyncio.to_thread(self._free_cpus)
        now = asyncio.get_running_loop().time()
        for node_id in new:
            if node_id in self._nodes or self._closed:
                continue
            failures, next_try = self._backoff.get(node_id, (0, 0.0))
            if now < next_try:
                continue
            total = float(alive[node_id].get("Resources", {}).get("CPU", 0))
            cpus = free.get(node_id, total)
            if total < 1:
                continue  # a node kept free of work (e.g. a head started with --num-cpus 0)
            if cpus < 1:
                _log.info("sandbox node %s: no free CPU (its %g are taken): waiting for them",
                          node_id[:12], total)
                continue
            workers = self.options.workers_per_node or int(cpus)
            self._start_node(node_id, workers, min(float(workers), float(int(cpus))))

    def _free_cpus(self) -> dict[str, float]:
        """Each node's CPUs not taken by other actors and tasks (Ray's available resources):
        an actor reserves what is free, never the node's total, which another tenant may
        hold (its actor would then wait for ever). Empty if Ray cannot say."""
        try:
            from ray._private.state import available_resources_per_node

            return {k: float(v.get("CPU", 0)) for k, v in available_resources_per_node().items()}
        except Exception as exc:  # an older or newer Ray without it: size from the total
            _log.debug("available resources per node unknown: %s", exc)
            return {}

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
            failures = self._backoff.get(node.node_id, (0, 0.0))[0] + 1
            wait = min(60.0, self.options.discover_s * 2 ** failures)
            self._backoff[node.node_id] = (failures, asyncio.get_running_loop().time() + wait)
            _log.warning("no sandbox on node %s (try %d, next in %.0fs): %s", node.node_id[:12],
                         failures, wait, reason)
            if self._nodes.get(node.node_id) is node:
                del self._nodes[node.node_id]
            with contextlib.suppress(Exception):
                self._ray.kill(node.actor, no_restart=True)
            return
        node.info = msgspec.msgpack.decode(data, type=NodeInfo)
        node.workers = max(1, node.info.workers)
        self._backoff.pop(node.node_id, None)
        if not self._report:
            self._report = dict(node.info.confinement)
        missing = confinement_report(node.info.confinement) if self.config.confine else []
        if missing:  # each node (with --require-full-confinement its pool refused to start)
            warnings.warn(f"pairbench_async sandbox (Ray node {node.node_id[:12]}, "
                          f"{node.info.hostname}): running WITHOUT " + ", ".join(missing),
                          RuntimeWarning, stacklevel=2)
        if not node.lost and not self._closed:
            node.ready = True
            self._notify()

    async def _watch(self) -> None:
        """Heartbeats every ``heartbeat_s``; new and departed nodes every ``discover_s``.
        A round that fails is logged and the next one runs: heartbeats never stop."""
        loop = asyncio.get_running_loop()
        next_look = loop.time() + self.options.discover_s
        while True:
            await asyncio.sleep(self.options.heartbeat_s)
            try:
                now = loop.time()
                self._heartbeat(now)
                if now >= next_look:
                    next_look = now + self.options.discover_s
                    await self._discover()
            except Exception:
                _log.exception("sandbox cluster monitor: a round failed (next in %gs)",
                               self.options.heartbeat_s)

    def _heartbeat(self, now: float) -> None:
        for node in [n for n in self._nodes.values() if n.ready]:
            ping = node.ping
            if ping is not None and ping.done():
                node.ping = None
                exc = None if ping.cancelled() else ping.exception()
                if exc is not None:
                    self._lose(node, f"heartbeat failed: {_reason(exc)}")
                    continue
                if not ping.cancelled():
                    node.stats = decode_statistics(ping.result())
            elif ping is not None and now - node.ping_sent > self.options.heartbeat_timeout_s:
                self._lose(node, f"no heartbeat for {self.options.heartbeat_timeout_s:g}s "
                                 "(frozen or cut off)")
                continue
            if node.ping is None:
                node.ping = asyncio.wrap_future(self._ping(node).future())
                node.ping_sent = now
