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

The parts: :mod:`.membership` (which nodes serve, their actors' start, the heartbeat,
a node's loss: no Ray, the cluster reached through :class:`RayBackend`),
:mod:`.admission` (batches waiting their turn for room) and :mod:`.placement` (where
a batch goes); this module connects, cuts jobs into batches, retries them and keeps
the counters.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

import msgspec

from ..core.errors import ConfigError, SandboxError
from ..core.types import Checker, Limits, Program, Test, TestResult, Verdict
from ..sandbox.config import SandboxConfig
from ..sandbox.interface import SandboxJob, SandboxStatistics, decode_results, encode
from .admission import AdmissionQueue
from .membership import HEARTBEAT_GROUP, Cluster, Member, Membership, NodeLost, one_line
from .node import NodeInfo, NodeSandbox
from .options import RayOptions

__all__ = ["Backend", "RayBackend", "RaySandbox", "connect_ray", "import_ray", "split_address"]

_log = logging.getLogger("pairbench_async.cluster")
#: programs whose node is remembered (affinity)
_AFFINITY = 4096
#: seconds the GCS address must accept a TCP connection in before ``ray.init`` is tried
_PROBE_S = 5.0


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`ConfigError` that says how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("--sandbox ray needs Ray, an optional extra: pip install "
                          "'pairbench_async[ray]' (in a checkout: pip install -e '.[ray]')"
                          ) from exc
    return ray


class _BatchFailed(Exception):
    """The node's actor raised on this batch: the batch's tests are ``SF``, the node serves on."""


class _QuietSigterm(logging.Filter):
    """Drop Ray's "SIGTERM handler is not set" warning: ``ray.init`` runs off the main
    thread on purpose (the event loop keeps its own signal handling)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("SIGTERM handler is not set")


def split_address(address: str) -> tuple[str, int] | None:
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


async def _probe(address: str) -> None:
    """A :class:`ConfigError` unless the GCS address accepts a TCP connection within 5 s
    (Ray itself retries a dead address for minutes)."""
    where = split_address(address)
    if where is None:
        return
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(*where), _PROBE_S)
    except (OSError, asyncio.TimeoutError) as exc:
        why = str(exc) or f"no answer within {_PROBE_S:g}s"
        raise ConfigError(f"no Ray cluster at {address!r} ({why}); start one with "
                          "`ray start --head` (README: running on a cluster) or fix "
                          "--ray-address") from exc
    writer.close()


async def connect_ray(ray: Any, options: RayOptions) -> None:
    """``ray.init``, bounded: a wrong address is a clear :class:`ConfigError`, never a hang.

    The GCS address is probed with a TCP connect first; ``ray.init`` runs in a daemon
    thread, so that neither a stuck connect nor SIGINT/SIGTERM waits for it. Usage stats
    are off unless the environment says otherwise.
    """
    address = options.address or "auto"
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    await _probe(address)
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
        await asyncio.wait_for(asyncio.shield(done), options.connect_timeout_s)
    except asyncio.TimeoutError as exc:
        raise ConfigError(f"connecting to the Ray cluster at {address!r} took over "
                          f"{options.connect_timeout_s:g}s") from exc
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise ConfigError(f"no Ray cluster at {address!r} ({one_line(exc)}); start one "
                          "with `ray start --head` (README: running on a cluster) or "
                          "pass --ray-address") from exc
    finally:
        ray_logger.removeFilter(quiet)


class Backend(Cluster, Protocol):
    """All a :class:`RaySandbox` asks of Ray (:class:`RayBackend`; a stand-in in tests)."""

    async def connect(self) -> None:
        """Connect unless connected."""

    async def disconnect(self) -> None:
        """Disconnect if :meth:`connect` connected (the cluster stays)."""

    def cancel(self, ref: Any) -> None:
        """Cancel an actor call (never raises)."""

    def is_node_loss(self, exc: BaseException) -> bool:
        """Whether an actor call's error means the node (or its actor) is gone."""


class RayBackend:
    """:class:`Backend` with Ray: imported and connected by :meth:`connect`."""

    def __init__(self, config: SandboxConfig, options: RayOptions) -> None:
        self._config = config
        self._options = options
        self._ray: Any = None
        self._actor_class: Any = None
        self._connected = False  # this object called ray.init, so it disconnects

    async def connect(self) -> None:
        ray = import_ray()
        if not ray.is_initialized():
            await connect_ray(ray, self._options)
            self._connected = True
        self._ray = ray
        self._actor_class = ray.remote(concurrency_groups={HEARTBEAT_GROUP: 1})(NodeSandbox)

    async def disconnect(self) -> None:
        if self._connected:
            self._connected = False
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self._ray.shutdown)

    def nodes(self) -> list[dict[str, Any]]:
        return list(self._ray.nodes())

    def free_cpus(self) -> dict[str, float]:
        """Each node's CPUs not taken by other actors and tasks (Ray's available resources):
        an actor reserves what is free, never the node's total, which another tenant may
        hold (its actor would then wait for ever). Empty if Ray cannot say."""
        try:
            from ray._private.state import available_resources_per_node

            return {k: float(v.get("CPU", 0)) for k, v in available_resources_per_node().items()}
        except Exception as exc:  # an older or newer Ray without it: size from the total
            _log.debug("available resources per node unknown: %s", exc)
            return {}

    def spawn(self, node_id: str, workers: int, cpus: float) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        config = msgspec.structs.replace(self._config, workers=workers)
        return self._actor_class.options(
            num_cpus=cpus, max_restarts=0, max_task_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
        ).remote(msgspec.msgpack.encode(config))

    def kill(self, actor: Any) -> None:
        with contextlib.suppress(Exception):
            self._ray.kill(actor, no_restart=True)

    def cancel(self, ref: Any) -> None:
        with contextlib.suppress(Exception):
            self._ray.cancel(ref)

    def is_node_loss(self, exc: BaseException) -> bool:
        """Only these mean the node (or its actor) is gone; any other error is the batch's."""
        errors = self._ray.exceptions
        return isinstance(exc, (errors.RayActorError, errors.ObjectLostError,
                                errors.NodeDiedError))


class RaySandbox:
    """Run programs confined on the nodes of a Ray cluster (see the module docstring).

    ``backend``: how Ray is reached; None is :class:`RayBackend` (tests pass a stand-in).
    """

    def __init__(self, config: SandboxConfig | None = None,
                 options: RayOptions | None = None, *, backend: Backend | None = None) -> None:
        self.config = config or SandboxConfig()
        self.options = options or RayOptions()
        self._backend: Backend = backend or RayBackend(self.config, self.options)
        #: batches waiting for room on the nodes
        self.admission: AdmissionQueue[Member] = AdmissionQueue(
            self._all_members, tests_per_worker=self.options.tests_per_worker,
            node_wait_s=self.options.node_wait_s)
        #: the nodes and their actors
        self.members = Membership(self._backend, self.options, confine=self.config.confine,
                                  on_change=self.admission.notify)
        self._monitor: asyncio.Task[None] | None = None
        self._affinity: OrderedDict[bytes, str] = OrderedDict()
        self._started = False
        self._closed = False
        self._jobs_done = 0
        self._waiting = 0
        self._faults = 0
        self._retries = 0
        self._tests_retried = 0

    def _all_members(self) -> list[Member]:
        return self.members.all()

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
        try:
            await self._backend.connect()
            await self.members.start()
        except BaseException:
            await self.aclose()
            raise
        self._monitor = asyncio.create_task(self.members.watch(), name="pairbench-ray-monitor")

    async def aclose(self) -> None:
        """Close every node's pool, kill this sandbox's actors, disconnect if we connected."""
        if self._closed:
            return
        self._closed = True
        if self._monitor is not None:
            self._monitor.cancel()
            await asyncio.gather(self._monitor, return_exceptions=True)
        self.admission.close()
        await self.members.close()
        await self._backend.disconnect()

    # -- public ------------------------------------------------------------

    @property
    def workers(self) -> int:
        """Sandbox workers over every serving node."""
        return sum(m.workers for m in self.members.serving())

    def nodes(self) -> dict[str, NodeInfo]:
        """Serving nodes: Ray node id -> where its actor runs (pid, host, workers)."""
        return {m.node_id: m.info for m in self.members.serving() if m.info is not None}

    def node_statistics(self) -> dict[str, SandboxStatistics]:
        """Serving nodes' counters as of their last heartbeat (which node ran how much)."""
        return {m.node_id: m.stats for m in self.members.serving() if m.stats is not None}

    def in_flight(self) -> dict[str, int]:
        """Tests in flight per serving node (the load batches are spread by)."""
        return {m.node_id: m.outstanding for m in self.members.serving()}

    def confinement(self) -> dict[str, Any]:
        """The first node's report: which layers are on, Landlock ABI, RSS (each node's
        missing layers are warned about when it starts)."""
        return dict(self.members.report)

    def statistics(self) -> SandboxStatistics:
        every = self.members.counters()

        def total(name: str) -> int:
            return sum(getattr(s, name) for s in every)

        errors = [s.last_error for s in every if s.last_error]
        return SandboxStatistics(
            workers=self.workers, jobs_done=self._jobs_done, jobs_waiting=self._waiting,
            tests_run=total("tests_run"), worker_restarts=total("worker_restarts"),
            sandbox_faults=total("sandbox_faults") + self._faults,
            worker_timeouts=total("worker_timeouts"), internal_errors=total("internal_errors"),
            last_error=errors[-1] if errors else None,
            nodes=len(self.members.serving()), nodes_lost=self.members.lost,
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
            node = await self.admission.acquire(len(tests), self._affinity.get(key), avoid,
                                                retry=attempt > 0)
            if node is None:
                why = f"no sandbox node was serving for {self.options.node_wait_s:g}s"
                return self._faulted(tests, why + (f" ({reason})" if reason else ""))
            try:
                data = await self._call(node, job, self._deadline(node, limits))
            except NodeLost as exc:
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
                self.admission.release(node, len(tests))
            try:
                results = decode_results(data)
            except msgspec.MsgspecError as exc:
                return self._faulted(tests, f"the sandbox node's answer did not decode: {exc}")
            if [r.id for r in results] != [t.id for t in tests]:  # never a program's doing
                return self._faulted(tests, "sandbox node answered for other tests")
            self._remember(key, node.node_id)
            return results
        raise AssertionError("unreachable")  # pragma: no cover

    def _deadline(self, node: Member, limits: Limits) -> float:
        """A backstop for a node that answers heartbeats but not this batch: every test in
        flight on the node (this batch and the queue ahead of it) at its wall limit, on
        the node's workers, plus the pool's own graces. It is renewed while the node
        finishes tests (:meth:`_call`): a loaded node is slow, not lost."""
        rounds = -(-max(node.outstanding, 1) // node.workers)
        return (self.config.load_grace + rounds * (limits.wall_seconds + self.config.result_grace)
                + self.options.heartbeat_timeout_s)

    async def _call(self, node: Member, job: bytes, timeout: float) -> bytes:
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
            done_before = node.tests_done
            while not waiter.done() and not node.lost:
                finished, _ = await asyncio.wait({waiter}, timeout=timeout)
                if finished or node.lost:
                    break
                done_now = node.tests_done
                if done_now > done_before:  # busy, not stuck: its queue is moving
                    done_before = done_now
                    continue
                self.members.lose(node, f"no test finished on it for {timeout:.0f}s while a batch "
                                 "waited")
            return await waiter
        except NodeLost:
            raise
        except asyncio.CancelledError:
            self._backend.cancel(ref)
            raise
        except Exception as exc:
            reason = one_line(exc)
            if not self._backend.is_node_loss(exc):  # e.g. RayTaskError: the actor raised
                _log.warning("sandbox node %s failed a batch: %s", node.node_id[:12], reason)
                raise _BatchFailed(reason) from exc
            self.members.lose(node, reason)  # ActorDiedError, ActorUnavailableError, ...
            raise NodeLost(reason) from exc
        finally:
            node.waiters.discard(waiter)

    def _remember(self, key: bytes, node_id: str) -> None:
        """The node that ran a program last (affinity), for its next batches."""
        self._affinity[key] = node_id
        self._affinity.move_to_end(key)
        if len(self._affinity) > _AFFINITY:
            self._affinity.popitem(last=False)

    def _faulted(self, tests: list[Test], reason: str) -> list[TestResult]:
        self._faults += len(tests)
        return [TestResult(id=t.id, verdict=Verdict.SF, error=reason) for t in tests]
