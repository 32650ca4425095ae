"""The Ray sandbox's driver logic against a fake actor (no Ray, no cluster: fast).

Each test drives :class:`RaySandbox` through the same calls Ray would answer (an actor
method's ``.remote()`` returns a ref whose ``.future()`` settles), so that what a
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

from pairbench_async.cluster.options import RayOptions
from pairbench_async.cluster.ray_sandbox import RaySandbox, _Node, _split_address
from pairbench_async.core.errors import ConfigError
from pairbench_async.core.types import Limits, Program, Test, TestResult, Verdict
from pairbench_async.sandbox.config import SandboxConfig
from pairbench_async.sandbox.interface import SandboxStatistics, decode_job, encode


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
    exceptions = types.SimpleNamespace(RayActorError=RayActorError, ObjectLostError=ObjectLostError,
                                       NodeDiedError=NodeDiedError)

    def __init__(self) -> None:
        self.killed: list[Any] = []

    def kill(self, actor: Any, no_restart: bool = True) -> None:
        self.killed.append(actor)

    def cancel(self, ref: Any) -> None:
        pass


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
    """Answers each batch through ``answer(job) -> bytes`` (or raises), after ``delay`` s."""

    def __init__(self, answer: Any = None, delay: float = 0.0) -> None:
        self.answer = answer or (lambda job: encode(
            [TestResult(id=t.id, verdict=Verdict.AC) for t in job.tests]))
        self.delay = delay
        self.jobs: list[Any] = []
        self.pings = 0
        self.run = Method(self._run)
        self.statistics = Method(self._statistics)
        self.ping_future: concurrent.futures.Future[Any] | None = None

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
            **options: Any) -> RaySandbox:
    sb = RaySandbox(config or SandboxConfig(), RayOptions(**options))
    sb._ray = FakeRay()
    sb._started = True
    sb._changed = asyncio.get_running_loop().create_future()
    for i, actor in enumerate(actors):
        node = _Node(f"node{i}", workers, i, actor)
        node.ready = True
        sb._nodes[node.node_id] = node
    return sb


PROGRAM = Program(source="print(input())")


def make_tests(n: int, prefix: str = "t") -> list[Test]:
    return [Test(id=f"{prefix}{i}", input="1\n", output="1\n") for i in range(n)]


async def test_an_error_raised_by_the_actor_fails_the_batch_not_the_node() -> None:
    def overflow(job: Any) -> bytes:
        raise RayTaskError(OverflowError("can't serialize ints < -2**63 or > 2**64 - 1"))

    actor = FakeActor(overflow)
    sb = sandbox(actor, FakeActor())
    results = await sb.run(PROGRAM, make_tests(2))
    assert [r.verdict for r in results] == [Verdict.SF, Verdict.SF]
    assert results[0].error == ("the sandbox node failed this batch: OverflowError: can't "
                                "serialize ints < -2**63 or > 2**64 - 1")  # one line, no ANSI
    stats = sb.statistics()
    assert stats.nodes_lost == 0 and stats.retries == 0 and stats.nodes == 2
    assert len(actor.jobs) == 1 and sb._ray.killed == []  # not retried, node kept


async def test_a_dead_actor_is_a_lost_node_and_its_batch_runs_once_elsewhere() -> None:
    def died(job: Any) -> bytes:
        raise ActorDiedError("The actor died unexpectedly")

    dead, good = FakeActor(died), FakeActor()
    sb = sandbox(dead, good)
    results = await sb.run(PROGRAM, make_tests(2))
    assert [r.verdict for r in results] == [Verdict.AC, Verdict.AC]
    stats = sb.statistics()
    assert (stats.nodes_lost, stats.retries, stats.tests_retried, stats.nodes) == (1, 1, 2, 1)
    assert len(dead.jobs) == 1 and len(good.jobs) == 1 and sb._ray.killed == [dead]


def test_the_backstop_deadline_counts_the_queue_ahead_of_the_batch() -> None:
    # a node of 2 workers with 10 tests in flight (this batch included): ceil(10 / 2) = 5
    # rounds; wall limit 2 s, result grace 1 s, load grace 3 s, heartbeat timeout 4 s:
    # 3 + 5 * (2 + 1) + 4 = 22 s (it counted this batch's 2 tests alone before: 3+1*3+4 = 10)
    sb = RaySandbox(SandboxConfig(load_grace=3, result_grace=1), RayOptions(heartbeat_timeout_s=4))
    node = _Node("n", 2, 0, None)
    node.outstanding = 10
    assert sb._deadline(node, Limits(wall_limit=2)) == 22


async def test_a_busy_node_that_finishes_tests_is_not_lost_past_the_deadline() -> None:
    # deadline 0.01 + 1 * (0.05 + 0.01) + 0.02 = 0.09 s; the batch comes back after 0.4 s,
    # while the node's heartbeat shows tests finishing (its queue is moving)
    config = SandboxConfig(load_grace=0.01, result_grace=0.01)
    busy = FakeActor(delay=0.4)
    sb = sandbox(busy, FakeActor(), config=config, heartbeat_timeout_s=0.02)
    node = sb._nodes["node0"]
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
    sb = sandbox(FakeActor(), tests_per_worker=1)
    node = sb._nodes["node0"]
    node.outstanding = 1  # full
    new = asyncio.create_task(sb._acquire(1, None, ()))
    await asyncio.sleep(0)
    retry = asyncio.create_task(sb._acquire(1, None, (), retry=True))
    await asyncio.sleep(0.01)
    sb._release(node, 1)
    await asyncio.sleep(0.01)
    assert retry.done() and retry.result() is node and not new.done()
    sb._release(node, 1)
    assert await asyncio.wait_for(new, 1) is node


async def test_a_lost_nodes_pending_heartbeat_is_retrieved() -> None:
    loop = asyncio.get_running_loop()
    unretrieved: list[Any] = []
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))
    actor = FakeActor()
    sb = sandbox(actor, FakeActor())
    node = sb._nodes["node0"]
    sb._heartbeat(loop.time())  # a ping in flight
    assert node.ping is not None and actor.ping_future is not None
    source, actor.ping_future = actor.ping_future, None
    source.set_running_or_notify_cancel()  # Ray's call is under way: not cancellable
    sb._lose(node, "test")
    await asyncio.sleep(0.01)
    source.set_exception(ActorDiedError("the node died"))  # the heartbeat fails late
    await asyncio.sleep(0.01)
    del node, source  # the lost node and its heartbeat are garbage now
    gc.collect()
    await asyncio.sleep(0.01)
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

    sb._discover = discover  # type: ignore[method-assign]
    task = asyncio.create_task(sb._watch())
    await asyncio.sleep(0.3)
    assert not task.done()  # still watching
    task.cancel()
    assert calls >= 3 and actor.pings >= 1
    assert "a round failed" in caplog.text and "GCS hiccup" in caplog.text


async def test_a_node_gets_an_actor_sized_to_its_free_cpus_and_none_without() -> None:
    sb = sandbox()
    started: list[tuple[str, int, float]] = []
    sb._start_node = lambda node_id, workers, cpus: started.append(  # type: ignore[method-assign]
        (node_id, workers, cpus))
    listed = [{"NodeID": "a", "Alive": True, "Resources": {"CPU": 8.0}},
              {"NodeID": "b", "Alive": True, "Resources": {"CPU": 4.0}},
              {"NodeID": "head", "Alive": True, "Resources": {"CPU": 0.0}}]
    sb._ray.nodes = lambda: listed  # type: ignore[attr-defined]
    sb._free_cpus = lambda: {"a": 3.0, "b": 0.0, "head": 0.0}  # type: ignore[method-assign]
    await sb._discover()
    assert started == [("a", 3, 3.0)]  # b: all 4 taken by another tenant; head: none at all


async def test_a_node_that_failed_to_start_is_tried_again_only_after_a_backoff() -> None:
    sb = sandbox(discover_s=10)
    started: list[str] = []
    sb._start_node = lambda node_id, workers, cpus: started.append(node_id)  # type: ignore[method-assign]
    sb._ray.nodes = lambda: [{"NodeID": "a", "Alive": True, "Resources": {"CPU": 1.0}}]  # type: ignore[attr-defined]
    sb._free_cpus = dict  # type: ignore[method-assign]
    sb._backoff["a"] = (1, asyncio.get_running_loop().time() + 20)  # failed once, 20 s ago
    await sb._discover()
    assert started == []
    sb._backoff["a"] = (1, asyncio.get_running_loop().time() - 1)
    await sb._discover()
    assert started == ["a"]
    for i in range(100):  # the start errors kept are bounded
        sb._start_errors.append(f"e{i}")
    assert len(sb._start_errors) == 16


def test_a_ray_address_is_checked_before_connecting() -> None:
    assert _split_address("127.0.0.1:6379") == ("127.0.0.1", 6379)
    assert _split_address("ray://head.example:10001") == ("head.example", 10001)
    assert _split_address("[::1]:6379") == ("::1", 6379)
    assert _split_address("auto") is None
    for bad in ("not an address", "127.0.0.1", "host:0", "host:99999", ":6379"):
        with pytest.raises(ConfigError, match="is not a Ray address"):
            _split_address(bad)


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
        await sb._connect(InitRay(lambda **kw: pytest.fail("ray.init must not be tried")))
    assert time.monotonic() - t0 < 6


async def test_ray_init_errors_and_hangs_become_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_USAGE_STATS_ENABLED", raising=False)
    seen: dict[str, Any] = {}

    def refuse(**kw: Any) -> None:
        seen["usage_stats"] = os.environ.get("RAY_USAGE_STATS_ENABLED")
        raise ValueError("Can't find a `node_ip_address.json` file")

    with pytest.raises(ConfigError, match="no Ray cluster at 'auto' .ValueError: Can't find"):
        await RaySandbox()._connect(InitRay(refuse))
    assert seen["usage_stats"] == "0"  # usage stats off before ray.init
    hang = InitRay(lambda **kw: time.sleep(3))
    t0 = time.monotonic()
    with pytest.raises(ConfigError, match="took over 0.2s"):
        await RaySandbox(options=RayOptions(connect_timeout_s=0.2))._connect(hang)
    assert time.monotonic() - t0 < 1  # a daemon thread: nothing waits for the stuck init


def encode_job(tests: list[Test]) -> bytes:
    from pairbench_async.sandbox.interface import SandboxJob

    return encode(SandboxJob(PROGRAM, tests))


def _fields(stats: SandboxStatistics) -> dict[str, Any]:
    return {name: getattr(stats, name) for name in stats.__struct_fields__}
