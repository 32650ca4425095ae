"""The Ray sandbox's driver logic against a fake actor (no Ray, no cluster: fast).

Each test drives :class:`RaySandbox` (or its parts: the admission queue, the membership)
through the same calls Ray would answer (a stand-in :class:`~.ray_sandbox.Backend`; an
actor method's ``.remote()`` returns a ref whose ``.future()`` settles), so that what a
node's loss, a batch's failure, a full cluster or a failing monitor round does is
checked here, and the 2-node cluster test (tests/cluster) checks it with Ray itself.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import os
import time
import types
from typing import Any

import pytest

from pairbench_async.cluster.admission import AdmissionQueue
from pairbench_async.cluster.membership import Member, Membership
from pairbench_async.cluster.options import RayOptions
from pairbench_async.cluster.placement import NodeLoad
from pairbench_async.cluster.ray_sandbox import RaySandbox, connect_ray, split_address
from pairbench_async.core.errors import ConfigError
from pairbench_async.core.types import Limits, Program, Test, TestResult, Verdict
from pairbench_async.sandbox.config import SandboxConfig
from pairbench_async.sandbox.interface import SandboxStatistics, decode_job, encode
from tests.waiting import drained, until


class RayActorError(Exception):
    pass


class ActorDiedError(RayActorError):
    pass


class ObjectLostError(Exception):
    pass


class NodeDiedError(Exception):
    pass


class RayTaskError(Exception):
    """Like Ray's: the actor's own exception as ``cause``, a message with colour codes."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__("\x1b[36mray::NodeSandbox.run()\x1b[39m (pid=1, ip=127.0.0.1)\n"
                         f"{type(cause).__name__}: {cause}")
        self.cause = cause


class FakeRay:
    """The ``ray`` module, as far as :func:`connect_ray` uses it."""

    exceptions = types.SimpleNamespace(RayActorError=RayActorError, ObjectLostError=ObjectLostError,
                                       NodeDiedError=NodeDiedError)


class FakeBackend:
    """A :class:`~pairbench_async.cluster.ray_sandbox.Backend` without Ray: ``listed`` are
    the cluster's nodes, ``spawn`` makes the actor ``make_actor()`` returns."""

    def __init__(self, listed: list[dict[str, Any]] | None = None,
                 free: dict[str, float] | None = None, make_actor: Any = None) -> None:
        self.listed = listed or []
        self.free = free or {}
        self.make_actor = make_actor or FakeActor
        self.spawned: list[tuple[str, int, float]] = []
        self.killed: list[Any] = []

    async def connect(self) -> None:
        pass

    async def disconnect(self) -> None:
        pass

    def nodes(self) -> list[dict[str, Any]]:
        return self.listed

    def free_cpus(self) -> dict[str, float]:
        return self.free

    def spawn(self, node_id: str, workers: int, cpus: float) -> Any:
        self.spawned.append((node_id, workers, cpus))
        return self.make_actor()

    def kill(self, actor: Any) -> None:
        self.killed.append(actor)

    def cancel(self, ref: Any) -> None:
        pass

    def is_node_loss(self, exc: BaseException) -> bool:
        return isinstance(exc, (RayActorError, ObjectLostError, NodeDiedError))


class Ref:
    def __init__(self, future: concurrent.futures.Future[Any]) -> None:
        self._future = future

    def future(self) -> concurrent.futures.Future[Any]:
        return self._future


class Method:
    def __init__(self, call: Any) -> None:
        self._call = call

    def remote(self, *args: Any) -> Ref:
        return Ref(self._call(*args))

    def options(self, **_: Any) -> Method:
        return self


class FakeActor:
    """Answers each batch through ``answer(job) -> bytes`` (or raises), after ``delay`` s;
    its start never finishes unless ``start_error`` is given (then it fails at once)."""

    def __init__(self, answer: Any = None, delay: float = 0.0,
                 start_error: BaseException | None = None) -> None:
        self.answer = answer or (lambda job: encode(
            [TestResult(id=t.id, verdict=Verdict.AC) for t in job.tests]))
        self.delay = delay
        self.jobs: list[Any] = []
        self.pings = 0
        self.run = Method(self._run)
        self.statistics = Method(self._statistics)
        self.start = Method(self._start)
        self.start_error = start_error
        self.ping_future: concurrent.futures.Future[Any] | None = None

    def _start(self) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        if self.start_error is not None:
            future.set_exception(self.start_error)
        return future

    def _run(self, job_bytes: bytes) -> concurrent.futures.Future[Any]:
        job = decode_job(job_bytes)
        self.jobs.append(job)
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        loop = asyncio.get_running_loop()

        def settle() -> None:
            try:
                future.set_result(self.answer(job))
            except BaseException as exc:
                future.set_exception(exc)

        loop.call_later(self.delay, settle)
        return future

    def _statistics(self) -> concurrent.futures.Future[Any]:
        self.pings += 1
        self.ping_future = concurrent.futures.Future()  # left pending: the test settles it
        return self.ping_future


def sandbox(*actors: FakeActor, workers: int = 1, config: SandboxConfig | None = None,
            backend: FakeBackend | None = None, **options: Any) -> RaySandbox:
    """A sandbox whose nodes ``node0``, ``node1``, ... serve already (no start, no monitor)."""
    sb = RaySandbox(config or SandboxConfig(), RayOptions(**options),
                    backend=backend or FakeBackend())
    sb._started = True  # nodes are given, not discovered
    for i, actor in enumerate(actors):
        node = Member(f"node{i}", workers, i, actor)
        node.ready = True
        sb.members.add(node)
    return sb


def membership(backend: FakeBackend, **options: Any) -> Membership:
    return Membership(backend, RayOptions(**options), confine=False, on_change=lambda: None)


PROGRAM = Program(source="print(input())")


def make_tests(n: int, prefix: str = "t") -> list[Test]:
    return [Test(id=f"{prefix}{i}", input="1\n", output="1\n") for i in range(n)]


async def test_an_error_raised_by_the_actor_fails_the_batch_not_the_node() -> None:
    def overflow(job: Any) -> bytes:
        raise RayTaskError(OverflowError("can't serialize ints < -2**63 or > 2**64 - 1"))

    actor, backend = FakeActor(overflow), FakeBackend()
    sb = sandbox(actor, FakeActor(), backend=backend)
    results = await sb.run(PROGRAM, make_tests(2))
    assert [r.verdict for r in results] == [Verdict.SF, Verdict.SF]
    assert results[0].error == ("the sandbox node failed this batch: OverflowError: can't "
                                "serialize ints < -2**63 or > 2**64 - 1")  # one line, no ANSI
    stats = sb.statistics()
    assert stats.nodes_lost == 0 and stats.retries == 0 and stats.nodes == 2
    assert len(actor.jobs) == 1 and backend.killed == []  # not retried, node kept


async def test_a_dead_actor_is_a_lost_node_and_its_batch_runs_once_elsewhere() -> None:
    def died(job: Any) -> bytes:
        raise ActorDiedError("The actor died unexpectedly")

    dead, good, backend = FakeActor(died), FakeActor(), FakeBackend()
    sb = sandbox(dead, good, backend=backend)
    results = await sb.run(PROGRAM, make_tests(2))
    assert [r.verdict for r in results] == [Verdict.AC, Verdict.AC]
    stats = sb.statistics()
    assert (stats.nodes_lost, stats.retries, stats.tests_retried, stats.nodes) == (1, 1, 2, 1)
    assert len(dead.jobs) == 1 and len(good.jobs) == 1 and backend.killed == [dead]


def test_the_backstop_deadline_counts_the_queue_ahead_of_the_batch() -> None:
    # a node of 2 workers with 10 tests in flight (this batch included): ceil(10 / 2) = 5
    # rounds; wall limit 2 s, result grace 1 s, load grace 3 s, heartbeat timeout 4 s:
    # 3 + 5 * (2 + 1) + 4 = 22 s (it counted this batch's 2 tests alone before: 3+1*3+4 = 10)
    sb = RaySandbox(SandboxConfig(load_grace=3, result_grace=1), RayOptions(heartbeat_timeout_s=4))
    node = Member("n", 2, 0, None)
    node.outstanding = 10
    assert sb._deadline(node, Limits(wall_limit=2)) == 22


async def test_a_busy_node_that_finishes_tests_is_not_lost_past_the_deadline() -> None:
    # deadline 0.01 + 1 * (0.05 + 0.01) + 0.02 = 0.09 s; the batch comes back after 0.4 s,
    # while the node's heartbeat shows tests finishing (its queue is moving)
    config = SandboxConfig(load_grace=0.01, result_grace=0.01)
    busy = FakeActor(delay=0.4)
    sb = sandbox(busy, FakeActor(), config=config, heartbeat_timeout_s=0.02)
    node = sb.members.get("node0")
    assert node is not None
    node.stats = SandboxStatistics(workers=1, jobs_done=0, jobs_waiting=0, tests_run=0,
                                   worker_restarts=0, sandbox_faults=0)

    async def progress() -> None:
        for i in range(1, 40):
            await asyncio.sleep(0.02)
            assert node.stats is not None
            node.stats = SandboxStatistics(**{**_fields(node.stats), "tests_run": i})

    side = asyncio.create_task(progress())
    results = await sb._run_batch(encode_job(make_tests(1)), make_tests(1), Limits(wall_limit=0.05),
                                  b"k")
    side.cancel()
    assert [r.verdict for r in results] == [Verdict.AC]
    assert sb.statistics().nodes_lost == 0 and sb.statistics().retries == 0


async def test_a_node_that_finishes_nothing_past_the_deadline_is_lost_and_the_batch_retried() -> None:
    config = SandboxConfig(load_grace=0.01, result_grace=0.01)
    stuck, good = FakeActor(delay=30), FakeActor()
    sb = sandbox(stuck, good, config=config, heartbeat_timeout_s=0.02)
    results = await sb._run_batch(encode_job(make_tests(1)), make_tests(1), Limits(wall_limit=0.05), b"k")
    assert [r.verdict for r in results] == [Verdict.AC]
    assert sb.statistics().nodes_lost == 1 and sb.statistics().retries == 1


async def test_batches_wait_their_turn_without_limit_while_a_node_serves() -> None:
    # room for one test at a time; each batch takes 0.1 s; node_wait_s is 0.05 s: the
    # last of 4 batches waits ~0.3 s, longer than node_wait_s, and is still served
    actor = FakeActor(delay=0.1)
    sb = sandbox(actor, tests_per_worker=1, node_wait_s=0.05)
    runs = [sb.run(Program(source=f"print({k})"), make_tests(1, f"p{k}-")) for k in range(4)]
    results = await asyncio.gather(*runs)
    assert all(r.verdict is Verdict.AC for rs in results for r in rs)
    assert [job.program.source for job in actor.jobs] == [f"print({k})" for k in range(4)]  # FIFO
    assert sb.statistics().sandbox_faults == 0


async def test_node_wait_applies_only_when_no_node_serves() -> None:
    sb = sandbox(node_wait_s=0.1)  # no node at all
    t0 = time.monotonic()
    results = await sb.run(PROGRAM, make_tests(1))
    assert time.monotonic() - t0 < 2
    assert results[0].verdict is Verdict.SF
    assert results[0].error == "no sandbox node was serving for 0.1s"


async def test_a_retry_is_placed_before_new_batches() -> None:
    node = NodeLoad("node0", 1)
    node.ready = True
    node.outstanding = 1  # full
    queue = AdmissionQueue(lambda: [node], tests_per_worker=1, node_wait_s=60)
    new = asyncio.create_task(queue.acquire(1))
    await until(lambda: queue.waiting() == 1)
    retry = asyncio.create_task(queue.acquire(1, retry=True))
    await until(lambda: queue.waiting() == 2)
    queue.release(node, 1)
    assert await asyncio.wait_for(retry, 1) is node
    assert not new.done() and queue.waiting() == 1 and node.outstanding == 1
    queue.release(node, 1)
    assert await asyncio.wait_for(new, 1) is node


async def test_a_lost_nodes_pending_heartbeat_is_retrieved() -> None:
    loop = asyncio.get_running_loop()
    unretrieved: list[Any] = []
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))
    actor = FakeActor()
    sb = sandbox(actor, FakeActor())
    node = sb.members.get("node0")
    assert node is not None
    sb.members.heartbeat(loop.time())  # a ping in flight
    assert node.ping is not None and actor.ping_future is not None
    source, actor.ping_future = actor.ping_future, None
    source.set_running_or_notify_cancel()  # Ray's call is under way: not cancellable
    sb.members.lose(node, "test")
    await drained()
    source.set_exception(ActorDiedError("the node died"))  # the heartbeat fails late
    await drained()  # its hand-over to the loop has run
    del node, source  # the lost node and its heartbeat are garbage now
    gc.collect()
    await drained()
    assert unretrieved == []


async def test_a_failing_monitor_round_is_logged_and_the_next_rounds_run(
        caplog: pytest.LogCaptureFixture) -> None:
    actor = FakeActor()
    sb = sandbox(actor, heartbeat_s=0.01, discover_s=0.01)
    calls = 0

    async def discover() -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("GCS hiccup")

    sb.members.discover = discover  # type: ignore[method-assign]
    task = asyncio.create_task(sb.members.watch())
    await until(lambda: task.done() or (calls >= 3 and actor.pings >= 1))
    assert not task.done()  # still watching
    task.cancel()
    assert calls >= 3 and actor.pings >= 1
    assert "a round failed" in caplog.text and "GCS hiccup" in caplog.text


async def test_a_node_gets_an_actor_sized_to_its_free_cpus_and_none_without() -> None:
    listed = [{"NodeID": "a", "Alive": True, "Resources": {"CPU": 8.0}},
              {"NodeID": "b", "Alive": True, "Resources": {"CPU": 4.0}},
              {"NodeID": "head", "Alive": True, "Resources": {"CPU": 0.0}}]
    backend = FakeBackend(listed, free={"a": 3.0, "b": 0.0, "head": 0.0})
    members = membership(backend)
    await members.discover()
    assert backend.spawned == [("a", 3, 3.0)]  # b: all 4 taken by another tenant; head: none at all
    await members.close()  # its start never finished: cancelled, its actor killed
    assert len(backend.killed) == 1


def one_cpu_node(node_id: str) -> dict[str, Any]:
    return {"NodeID": node_id, "Alive": True, "Resources": {"CPU": 1.0}}


def broken_actor() -> FakeActor:
    return FakeActor(start_error=RuntimeError("no pool"))


async def test_a_node_that_failed_to_start_is_tried_again_only_after_a_backoff() -> None:
    backend = FakeBackend([one_cpu_node("a")], make_actor=broken_actor)
    members = membership(backend, discover_s=10)  # first backoff: 10 * 2 = 20 s
    await members.discover()
    await until(lambda: members.start_errors and not members.all())  # failed, given up
    assert members.start_errors == ("node a: RuntimeError: no pool",)
    await members.discover()
    assert [s[0] for s in backend.spawned] == ["a"]  # within its backoff: not tried
    quick = FakeBackend([one_cpu_node("a")], make_actor=broken_actor)
    members = membership(quick, discover_s=0.01)  # first backoff: 0.02 s
    await members.discover()
    deadline = time.monotonic() + 10
    while len(quick.spawned) < 2:  # tried again once its backoff is over
        assert time.monotonic() < deadline, "not tried again after its backoff"
        await asyncio.sleep(0.005)
        await members.discover()


async def test_the_start_errors_kept_are_bounded() -> None:
    backend = FakeBackend([one_cpu_node(f"n{i}") for i in range(20)], make_actor=broken_actor)
    members = membership(backend, discover_s=10)
    await members.discover()
    await until(lambda: len(backend.killed) == 20)  # every start failed
    assert len(members.start_errors) == 16


def test_a_ray_address_is_checked_before_connecting() -> None:
    assert split_address("127.0.0.1:6379") == ("127.0.0.1", 6379)
    assert split_address("ray://head.example:10001") == ("head.example", 10001)
    assert split_address("[::1]:6379") == ("::1", 6379)
    assert split_address("auto") is None
    for bad in ("not an address", "127.0.0.1", "host:0", "host:99999", ":6379"):
        with pytest.raises(ConfigError, match="is not a Ray address"):
            split_address(bad)


class InitRay(FakeRay):
    def __init__(self, init: Any) -> None:
        super().__init__()
        self.init = init
        self.env: str | None = None

    def is_initialized(self) -> bool:
        return False


async def test_a_dead_address_fails_fast_and_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    sb = RaySandbox(options=RayOptions(address="127.0.0.1:1"))
    t0 = time.monotonic()
    with pytest.raises(ConfigError, match="no Ray cluster at '127.0.0.1:1'"):
        await connect_ray(InitRay(lambda **kw: pytest.fail("ray.init must not be tried")),
                          sb.options)
    assert time.monotonic() - t0 < 6


async def test_ray_init_errors_and_hangs_become_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_USAGE_STATS_ENABLED", raising=False)
    seen: dict[str, Any] = {}

    def refuse(**kw: Any) -> None:
        seen["usage_stats"] = os.environ.get("RAY_USAGE_STATS_ENABLED")
        raise ValueError("Can't find a `node_ip_address.json` file")

    with pytest.raises(ConfigError, match="no Ray cluster at 'auto' .ValueError: Can't find"):
        await connect_ray(InitRay(refuse), RayOptions())
    assert seen["usage_stats"] == "0"  # usage stats off before ray.init
    hang = InitRay(lambda **kw: time.sleep(3))
    t0 = time.monotonic()
    with pytest.raises(ConfigError, match="took over 0.2s"):
        await connect_ray(hang, RayOptions(connect_timeout_s=0.2))
    assert time.monotonic() - t0 < 1  # a daemon thread: nothing waits for the stuck init


def encode_job(tests: list[Test]) -> bytes:
    from pairbench_async.sandbox.interface import SandboxJob

    return encode(SandboxJob(PROGRAM, tests))


def _fields(stats: SandboxStatistics) -> dict[str, Any]:
    return {name: getattr(stats, name) for name in stats.__struct_fields__}
