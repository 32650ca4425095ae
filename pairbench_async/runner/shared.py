"""What the episodes of one evaluator share, so that no work is done twice.

Each distinct program is run once per test suite (a cache keyed by content, and
episodes that reach a program while it runs wait for that run), and turn 0's unhinted
repair is asked once per (candidate, instance, run) and shared by every protocol that
starts from it (PAIR-BENCH §V-B's paired design, by construction). A sandbox's fault
(``SF``), a failed run or a failed ask is never kept: the next episode tries again.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import msgspec

from ..core.types import Completion, Instance, Test, TestResult
from ..runlog.records import TurnRecord
from ..sandbox.interface import Sandbox
from .episode import EpisodeSpec

__all__ = ["SharedWork"]

#: Evaluations kept (least recently used first out).
_CACHE_SIZE = 4096
#: What :func:`_joined` returns when the work it waited for was cancelled and this task was not.
_AGAIN: Any = object()


async def _joined(running: asyncio.Future[Any]) -> Any:
    """The result of work another episode is doing (its failure raised here too), or
    :data:`_AGAIN` when that episode was cancelled and this one was not: the work is then
    this episode's to do."""
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if not running.cancelled() or (task is not None and task.cancelling()):
            raise  # our own cancellation
        return _AGAIN


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    """Tell ``future``'s waiters how the work ended: its exception, or (the working episode
    was cancelled) a cancellation, which each waiter not itself cancelled takes up again."""
    if isinstance(exc, asyncio.CancelledError):
        future.cancel()
    else:
        future.set_exception(exc)
        future.exception()  # retrieved: no "never retrieved" warning without waiters


class SharedWork:
    """One evaluator's shared evaluations and turn-0 repairs.

    ``sandbox()`` gives the sandbox to run programs in; ``tested(n)`` counts the tests run.
    """

    def __init__(self, sandbox: Callable[[], Sandbox], tested: Callable[[int], None],
                 reference_times: Mapping[str, Sequence[float]] | None = None) -> None:
        self._sandbox, self._tested = sandbox, tested
        #: the references' measured times per instance id (``Test.ref_ms`` for the tests
        #: whose file gives none: the sandbox's loop rule reads them)
        self._reference_times = dict(reference_times or {})
        self._timed: dict[str, list[Test]] = {}
        self._eval_cache: OrderedDict[tuple[str, str], dict[str, TestResult]] = OrderedDict()
        self._inflight: dict[tuple[str, str], asyncio.Future[dict[str, TestResult]]] = {}
        self._suite_memo: dict[str, str] = {}
        #: turn 0's repair per (candidate, instance, run): the reply and the episode that asked
        self._first: dict[tuple[str, str, int], asyncio.Future[tuple[Completion, str]]] = {}

    def suite_key(self, instance: Instance) -> str:
        """A content hash of what decides a program's results: tests, limits, checker, kind."""
        key = self._suite_memo.get(instance.id)
        if key is None:
            enc = msgspec.json.encode([instance.tests, instance.kind, instance.entry_point,
                                       instance.time_limit, instance.memory_limit_mb, instance.checker])
            key = self._suite_memo[instance.id] = hashlib.sha256(enc).hexdigest()
        return key

    def tests_of(self, instance: Instance) -> list[Test]:
        """The instance's tests, each with its reference's measured time where its file
        gives none and the run measured one (:func:`..runner.references.check_references`)."""
        tests = self._timed.get(instance.id)
        if tests is None:
            times = self._reference_times.get(instance.id)
            tests = list(instance.tests)
            if times is not None and len(times) == len(tests):
                tests = [t if t.ref_ms is not None else msgspec.structs.replace(t, ref_ms=ms)
                         for t, ms in zip(tests, times)]
            self._timed[instance.id] = tests
        return tests

    async def evaluate(self, instance: Instance, program: str) -> tuple[dict[str, TestResult], float]:
        """Results of ``program`` on the instance's tests; each distinct program runs once.

        Keyed by content, not id: the same program on the same suite is never rerun,
        and episodes that ask for it while it is running wait for that one run
        (without this, hundreds of episodes that reach the same program together
        would each run it).
        """
        key = (self.suite_key(instance), hashlib.sha256(program.encode()).hexdigest())
        cached = self._eval_cache.get(key)
        if cached is not None:
            self._eval_cache.move_to_end(key)
            return cached, 0.0
        while (running := self._inflight.get(key)) is not None:
            joined = await _joined(running)  # its failure is ours too
            if joined is not _AGAIN:
                return joined, 0.0
        cached = self._eval_cache.get(key)
        if cached is not None:
            return cached, 0.0
        future: asyncio.Future[dict[str, TestResult]] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            t0 = time.monotonic()
            results = await self._sandbox().run(instance.program(program), self.tests_of(instance),
                                                instance.limits, checker=instance.checker)
            ms = (time.monotonic() - t0) * 1000
            self._tested(len(results))
            by_id = {r.id: r for r in results}
            if not any(r.verdict.value == "SF" for r in results):  # never cache the sandbox's failures
                self._eval_cache[key] = by_id
                if len(self._eval_cache) > _CACHE_SIZE:
                    self._eval_cache.popitem(last=False)
            future.set_result(by_id)
            return by_id, ms
        except BaseException as exc:
            _fail(future, exc)
            raise
        finally:
            del self._inflight[key]

    async def first_repair(self, spec: EpisodeSpec,
                            ask: Callable[[], Awaitable[Completion]]) -> tuple[Completion, str | None]:
        """Turn 0's unhinted repair, asked once per (candidate, instance, run) and shared by
        every protocol that starts from it: paired comparisons (PAIR-BENCH §V-B) then start
        from the same program by construction, not by an API honouring a seed. Returns the
        reply and the episode whose call it was (None: this episode's own). A failed or
        cancelled ask is not kept: the next episode asks again."""
        key = (spec.model, spec.instance_id, spec.run)
        while (known := self._first.get(key)) is not None:
            try:
                joined = await _joined(known)
            except Exception:  # noqa: BLE001 - the asking episode's failure is its own: ask again
                continue
            if joined is not _AGAIN:
                reply, owner = joined
                return reply, owner  # its own earlier attempt's, on a retry: no new call
        future: asyncio.Future[tuple[Completion, str]] = asyncio.get_running_loop().create_future()
        self._first[key] = future
        try:
            reply = await ask()
        except BaseException as exc:
            del self._first[key]  # not kept: a later episode asks again
            _fail(future, exc)
            raise
        future.set_result((reply, spec.episode_id))
        return reply, None

    def remember_first(self, record: TurnRecord) -> None:
        """A recorded turn 0 that made its own call: the repair its protocol's siblings share."""
        call = record.calls[0]
        future: asyncio.Future[tuple[Completion, str]] = asyncio.get_running_loop().create_future()
        future.set_result((Completion(text=call.text, model=call.model, usage=call.usage), record.episode_id))
        self._first.setdefault((record.model, record.instance_id, record.run), future)
