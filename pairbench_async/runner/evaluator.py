"""The embeddable evaluator: run a sweep inside any asyncio event loop.

    async with Evaluator(RunConfig(candidates=["sim:0.8"], feedback="rules"),
                         out_dir="runs/demo") as ev:
        async for record in ev.run(instances):
            ...

An episode is one (instance, candidate, protocol, run) trajectory. Up to
``concurrency`` episodes run at once as tasks of this evaluator (never more tasks
than that); each awaits its model calls and sandbox jobs, so the event loop is
never blocked and back-pressure flows from the sandbox pool (``max_jobs``) and the
model clients (their own limits) up to the episodes. Records stream to
``out_dir/records.jsonl`` as they happen and to the ``async for`` consumer through
a bounded queue. No global state and no signal handlers: cancelling the task that
iterates cancels the episodes, and the record file stays valid (each record is
one complete line).

Programs run in any :class:`~..sandbox.interface.Sandbox` given as ``sandbox=``: the
embedder's own, kept open for them, such as a pool per node of a Ray
cluster (``cluster.ray_sandbox.RaySandbox``); without one, a local pool of the
evaluator's own (``sandbox=SandboxConfig(...)`` sets it up).

Models are named in the :class:`RunConfig` by spec (``openai:MODEL[@URL]``, ``sim:SKILL``,
``rules``, ``replay:PATH``) or given there as objects of the embedder's own
(:class:`~..models.interface.ModelClient`, recorded under their ``name``); ``models=``
maps a spec to a client that stands in for the one the evaluator would make from it.
Clients given either way are the embedder's to close.

With ``resume=True`` the records already in ``out_dir`` are read back: finished
episodes are skipped, unfinished ones continue after their last recorded turn,
and a run with other parameters is refused (:class:`ResumeMismatch`), as is one whose
models' endpoints moved (unless ``allow_endpoint_change``). ``retry_errors=True`` runs
the episodes whose latest attempt ended in error again, from their first turn, as the
next attempt: its records are appended and supersede the earlier ones, which stay in
the file (every reader takes each episode's latest attempt).

A run holds its folder's lock (:mod:`..runlog.lock`) from ``ev.run()`` until
:meth:`Evaluator.aclose`: a second writer is refused at once (:class:`FolderLocked`).
An operating-system error while writing the folder (a full disk, a read-only file
system...) ends the run with :class:`FolderWriteError`; every record written before it
stays valid and ``resume`` continues.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import platform
import sys
import time
import traceback
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from ..core.errors import ConfigError, FolderWriteError, ResumeMismatch, StoreError
from ..core.types import SCHEMA_VERSION, Instance, Message
from ..datasets.files import dataset_hash
from ..models.interface import ContextModel
from ..models.redact import redact
from ..models.specs import load_model_config, make_model, with_names
from ..protocol.leakage import HiddenData, ValidationPolicy, hidden_data
from ..protocol.shapes import Shape, output_shape
from ..runlog.lock import FolderLock
from ..runlog.messages import MessageLog, append_summary_call
from ..runlog.records import (
    CallRecord,
    EpisodeRecord,
    Record,
    RunManifest,
    SummaryCall,
    SweepSetting,
    TurnRecord,
    latest_attempts,
)
from ..runlog.store import (
    RecordWriter,
    check_resume,
    folder_write_error,
    read_manifest,
    read_records,
    write_manifest,
)
from ..sandbox.interface import Sandbox
from ..sandbox.lint import run_pylint
from ..sandbox.pool import SandboxConfig, SandboxPool
from ..sandbox.traces import TraceCache
from .breaker import CircuitBreaker
from .config import RunConfig, RunStatistics
from .episode import CallMeter, EpisodeEnv, EpisodeSpec, derive_seed, run_episode
from .shared import SharedWork

__all__ = ["Evaluator", "RunConfig", "RunStatistics"]

_log = logging.getLogger("pairbench_async.runner")


def _write_json(path: Path, data: object) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_bytes(msgspec.json.encode(data))
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise folder_write_error(path.parent, exc) from exc


def endpoints_of(specs: Mapping[str, str], model_config: str | None) -> dict[str, str]:
    """The effective base URL of every ``openai:`` model, by name (its ``@URL``, the model
    config's ``base_url``, ``OPENAI_BASE_URL``, or the public endpoint)."""
    from ..models.endpoint import parse_model_spec
    from ..models.specs import openai_settings

    settings = with_names(load_model_config(model_config), specs)
    out = {}
    for name, spec in specs.items():
        try:
            scheme = parse_model_spec(spec)[0]
        except ConfigError:
            continue
        if scheme == "openai":
            out[name] = openai_settings(spec, settings).base_url
    return out


_DONE = object()
#: Episodes started per event-loop iteration when a sweep begins.
_RAMP = 16


class Evaluator:
    """Run PAIR-BENCH episodes concurrently and stream their records."""

    def __init__(
        self,
        config: RunConfig | None = None,
        *,
        out_dir: str | os.PathLike[str] | None = None,
        resume: bool = False,
        sandbox: Sandbox | SandboxConfig | None = None,
        models: Mapping[str, Any] | None = None,
        trace_cache: TraceCache | None = None,
        dataset_paths: Sequence[str] = (),
        sweep: SweepSetting | None = None,
        retry_errors: bool = False,
        allow_endpoint_change: bool = False,
        dataset_options: Mapping[str, object] | None = None,
        reference_times: Mapping[str, Sequence[float]] | None = None,
    ) -> None:
        config = config or RunConfig()
        #: the spec of every model given as a string, by name (``NAME=SPEC``)
        self._specs = config.specs()
        #: the configuration with every model object (and ``NAME=SPEC``) replaced by its name
        self.config, given = config.named()
        for name, model in (models or {}).items():
            if given.setdefault(name, model) is not model:
                raise ConfigError(f"two different models are given for {name!r}")
        config.validate(models=list(given))
        self.retry_errors = retry_errors
        self.allow_endpoint_change = allow_endpoint_change
        #: how the instances were chosen (``--limit``, ``--skip-invalid``), kept in the manifest
        self._dataset_options = dict(dataset_options or {})
        self._lock: FolderLock | None = None
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.resume = resume
        #: the settings of a local pool of the evaluator's own, when not given a sandbox
        self._sandbox_config = sandbox if isinstance(sandbox, SandboxConfig) else None
        #: the sandbox every program runs in: an embedder's (kept open for them) or,
        #: when none is given, a local pool of the evaluator's own
        self._pool: Sandbox | None = None if isinstance(sandbox, SandboxConfig) else sandbox
        self._own_pool = self._pool is None
        #: an embedder's own clients by name (from the config's objects and ``models=``)
        self._given_models = given
        self._models: dict[str, Any] = {}
        self._traces = trace_cache or TraceCache()
        self._dataset_paths = list(dataset_paths)
        #: the ``--sweep`` point this run is, recorded in its manifest
        self._sweep = sweep
        self._writer: RecordWriter | None = None
        #: the tasks running the episodes of each ``run`` not finished yet
        self._producers: set[asyncio.Task[None]] = set()
        #: every message sent to a model, by content: ``out_dir/messages/``, or in memory
        #: (:attr:`messages`) without an ``out_dir``
        self._messages: MessageLog | None = None
        self._trace_memo: dict[str, Mapping[str, Sequence[int]]] = {}
        self._trace_locks: dict[str, asyncio.Lock] = {}
        self._shape_memo: dict[str, dict[str, Shape]] = {}
        self._hidden_memo: dict[str, HiddenData] = {}
        #: what the episodes share: each program's evaluation, each turn-0 repair
        self._shared = SharedWork(self._sandbox_of, self._count_tests, reference_times)
        self._summaries: dict[str, str] = {}
        self._stats = {"done": 0, "skipped": 0, "errors": 0, "turns": 0, "tests": 0, "prompt": 0,
                       "completion": 0, "total": 0, "kept_errors": 0, "retried": 0, "calls": 0,
                       "retries": 0}
        self._t0 = time.monotonic()
        self._meter = CallMeter()
        #: retries of clients already closed (their counts outlive them)
        self._retries_closed = 0
        self._entered = False
        self._stopped_models: list[str] = []

    async def __aenter__(self) -> Evaluator:
        if self._pool is None:
            self._pool = SandboxPool(self._sandbox_config)
        await self._pool.start()
        settings = with_names(load_model_config(self.config.model_config), self._specs)
        validator = [self.config.validator] if self.config.validator else []
        for name in {*self.config.candidates, self.config.feedback, *validator}:
            given = self._given_models.get(name)
            if given is not None:  # an embedder's own client: theirs to guard
                self._models[name] = given
                continue
            model = make_model(self._specs.get(name, name), settings)
            # offline models cannot be unreachable; remote ones get a circuit breaker
            self._models[name] = model if isinstance(model, ContextModel) else CircuitBreaker(model, name)
        self._entered = True
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def messages(self) -> dict[str, Message]:
        """The messages sent to the models by id (a :class:`CallRecord`'s ``messages``),
        when the evaluator writes no files; with an ``out_dir`` they are in its
        ``messages.jsonl`` (``runlog.messages.read_messages``)."""
        return dict(self._messages.memory or {}) if self._messages is not None else {}

    async def aclose(self) -> None:
        """Stop what still runs (a ``run`` whose records were not read to the end: its
        episodes are cancelled, never failed by closed models), then close what is ours."""
        running = list(self._producers)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        failure: FolderWriteError | None = None
        if self._messages is not None:
            try:
                await self._messages.aclose()  # before the records that name them
            except FolderWriteError as exc:
                failure = exc
            except OSError as exc:  # its fsync
                failure = folder_write_error(self.out_dir, exc)
        if self._writer is not None:
            writer, self._writer = self._writer, None
            try:
                await writer.aclose()
            except FolderWriteError as exc:  # said once the rest is closed too
                failure = exc
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        self._retries_closed = self._call_retries()
        for spec, model in self._models.items():
            if spec not in self._given_models:
                await model.aclose()
        self._stopped_models = self._open_breakers()
        self._models.clear()
        if self._own_pool and self._pool is not None:
            await self._pool.aclose()
        if failure is not None:
            raise failure

    def _open_breakers(self) -> list[str]:
        return sorted(m.spec for m in self._models.values() if isinstance(m, CircuitBreaker) and m.open)

    def statistics(self) -> RunStatistics:
        s = self._stats
        sandbox = self._pool.statistics() if self._pool is not None else None
        return RunStatistics(episodes_total=s["total"], episodes_done=s["done"],
                             episodes_skipped=s["skipped"], errors=s["errors"], turns=s["turns"],
                             tests_run=s["tests"], prompt_tokens=s["prompt"],
                             completion_tokens=s["completion"], elapsed_s=time.monotonic() - self._t0,
                             stopped_models=self._stopped_models or self._open_breakers(),
                             sandbox_retries=sandbox.retries if sandbox is not None else 0,
                             sandbox_nodes_lost=sandbox.nodes_lost if sandbox is not None else 0,
                             errors_kept=s["kept_errors"], retried=s["retried"], calls=self._meter.started,
                             calls_in_flight=self._meter.in_flight, call_retries=self._call_retries())

    def _call_retries(self) -> int:
        """The retries of every model client that counts them (``statistics().retries``)."""
        total = 0
        for model in self._models.values():
            stats = getattr(model, "statistics", None)
            if callable(stats):
                with contextlib.suppress(Exception):
                    total += int(getattr(stats(), "retries", 0) or 0)
        return total + self._retries_closed

    # -- services for episodes ---------------------------------------------

    def _sandbox_of(self) -> Sandbox:
        assert self._pool is not None, "the evaluator is not entered"
        return self._pool

    def _count_tests(self, n: int) -> None:
        self._stats["tests"] += n

    async def _traces_of(self, instance: Instance) -> Mapping[str, Sequence[int]]:
        memo = self._trace_memo.get(instance.id)
        if memo is not None:
            return memo
        lock = self._trace_locks.setdefault(instance.id, asyncio.Lock())
        async with lock:
            if instance.id not in self._trace_memo:
                assert self._pool is not None
                self._trace_memo[instance.id] = await self._traces.traces(self._pool, instance)
        return self._trace_memo[instance.id]

    def _shapes_of(self, instance: Instance) -> dict[str, Shape]:
        if instance.id not in self._shape_memo:
            self._shape_memo[instance.id] = {t.id: output_shape(t) for t in instance.tests}
        return self._shape_memo[instance.id]

    async def _view_of(self, instance: Instance) -> Instance:
        """The instance as the candidate sees it: with ``obfuscate``, a one-sentence problem.

        The summary is made once per instance by the feedback model (offline: the
        statement's first sentence), with seed 002's few-shot prompt (Fig. 17; the
        zero-shot one of ours with ``baselines="pairbench"``), kept in ``summaries.json``
        so that a resumed run shows the candidate the same text.
        """
        if not self.config.obfuscate:
            return instance
        summary = self._summaries.get(instance.id)
        if summary is None:
            lock = self._trace_locks.setdefault("summary:" + instance.id, asyncio.Lock())
            async with lock:
                summary = self._summaries.get(instance.id)
                if summary is None:
                    summary = await self._summarise(instance)
                    self._summaries[instance.id] = summary
                    if self.out_dir is not None:
                        _write_json(self.out_dir / "summaries.json", self._summaries)
        return msgspec.structs.replace(instance, problem=summary)

    async def _summarise(self, instance: Instance) -> str:
        from ..protocol.baselines import first_sentence, summary_messages
        from ..protocol.wbt_prompts import few_shot_summary_messages, summary_reply

        model = self._models[self.config.feedback]
        if isinstance(model, ContextModel):
            return first_sentence(instance.problem.replace("#", " "))
        paper = self.config.baselines == "paper"  # seed 002's Fig. 17 few-shot prompt, else zero-shot
        messages = few_shot_summary_messages(instance.problem) if paper else summary_messages(instance.problem)
        reply = await model.complete(messages, temperature=self.config.temperature,
                                     max_tokens=self.config.max_tokens)
        if self._messages is not None:  # the call, recorded whole as a turn's calls are
            call = CallRecord(role="feedback", model=reply.model, text=reply.text, usage=reply.usage,
                              latency_ms=reply.latency_ms, attempts=reply.attempts,
                              messages=self._messages.put(messages))
            if self.out_dir is not None:
                append_summary_call(self.out_dir, SummaryCall(instance_id=instance.id, call=call))
        return first_sentence(summary_reply(reply.text) if paper else reply.text) or instance.problem

    def _hidden_of(self, instance: Instance) -> HiddenData:
        if instance.id not in self._hidden_memo:
            self._hidden_memo[instance.id] = hidden_data(instance)
        return self._hidden_memo[instance.id]

    # -- the sweep -----------------------------------------------------------

    def manifest(self, instances: Sequence[Instance], run_id: str) -> RunManifest:
        from ..core.version import __version__

        c = self.config
        return RunManifest(
            run_id=run_id, created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            software_version=__version__, dataset=self._dataset_paths,
            dataset_hash=dataset_hash(instances), instances=len(instances), candidates=list(c.candidates),
            feedback=c.feedback, protocols=list(c.protocols), runs=c.runs, seed=c.seed, params=c.params(),
            python=sys.version.split()[0], platform=platform.platform(), sweep=self._sweep,
            schema=SCHEMA_VERSION, validator=c.validator,
            specs={n: s for n, s in self._specs.items() if n != s},
            endpoints=endpoints_of(self._specs, c.model_config),
            # `is`, not `in (None, False)`: 0 == False, and a recorded 0 (--loop-factor 0,
            # the rule off) must not read back as "not recorded"
            options={k: v for k, v in {"model_config": c.model_config, **self._dataset_options}.items()
                     if v is not None and v is not False},
        )

    def _check_endpoints(self, old: RunManifest, new: RunManifest) -> RunManifest:
        """A resume calls the endpoints the run called: a model whose base URL moved is
        refused (:class:`ResumeMismatch`) unless ``allow_endpoint_change``; then the
        manifest records the new one. Returns the manifest to keep."""
        moved = {n: (url, new.endpoints[n]) for n, url in old.endpoints.items()
                 if n in new.endpoints and new.endpoints[n] != url}
        if not moved:
            return old
        if not self.allow_endpoint_change:
            what = "; ".join(f"{n}: the records were made at {a}, this run would call {b}"
                             for n, (a, b) in moved.items())
            raise ResumeMismatch(f"cannot resume {self.out_dir}: a model's endpoint moved ({what}); "
                                 "--allow-endpoint-change continues against the new one")
        _log.warning("%s: continuing against moved endpoints: %s", self.out_dir,
                     ", ".join(f"{n} {a} -> {b}" for n, (a, b) in moved.items()))
        return msgspec.structs.replace(old, endpoints={**old.endpoints, **new.endpoints})

    def _prepare(
        self, instances: Sequence[Instance],
    ) -> tuple[str, dict[str, list[TurnRecord]], set[str], dict[str, int]]:
        """Manifest, and what earlier records say (resume): turns per episode, finished
        episodes, and the attempt each episode goes on with (0 unless retried)."""
        prior: dict[str, list[TurnRecord]] = {}
        finished: set[str] = set()
        attempts: dict[str, int] = {}
        run_id = hashlib.sha256(os.urandom(16)).hexdigest()[:12]
        if self.out_dir is None:
            self._messages = MessageLog(None)
            return run_id, prior, finished, attempts
        if self._lock is None:
            self._lock = FolderLock(self.out_dir)  # one writer: before anything is read
        old = read_manifest(self.out_dir)
        records, valid = read_records(self.out_dir)
        if old is not None or records:
            if not self.resume:
                raise StoreError(f"{self.out_dir} already holds a run; continue it (--resume; resume=True) "
                                 "or choose another folder (--out; out_dir=)")
            if old is None:
                raise StoreError(f"{self.out_dir}: records without a manifest; cannot resume")
            new = self.manifest(instances, old.run_id)
            check_resume(old, new, where=self.out_dir)
            kept = self._check_endpoints(old, new)
            if kept is not old:
                write_manifest(self.out_dir, kept)
            run_id = old.run_id
        else:
            write_manifest(self.out_dir, self.manifest(instances, run_id))
        retried = 0
        for rec in latest_attempts(records)[0]:
            attempts[rec.episode_id] = rec.attempt
            if isinstance(rec, EpisodeRecord):
                if rec.status == "error" and self.retry_errors:
                    attempts[rec.episode_id] = rec.attempt + 1
                    retried += 1
                else:
                    finished.add(rec.episode_id)
                    self._stats["kept_errors"] += rec.status == "error"
            else:
                prior.setdefault(rec.episode_id, []).append(rec)
        self._stats["retried"] = retried
        for turns in prior.values():  # every recorded turn-0 repair, a retried episode's too
            first = min(turns, key=lambda r: r.turn)
            if first.turn == 0 and first.shared_from is None and first.calls:
                self._shared.remember_first(first)
        for eid, attempt in attempts.items():
            if prior.get(eid) and prior[eid][0].attempt != attempt:
                del prior[eid]  # a retry starts the episode afresh
        for eid, turns in prior.items():
            turns.sort(key=lambda r: r.turn)
            if [r.turn for r in turns] != list(range(len(turns))):
                raise StoreError(f"{self.out_dir}: episode {eid} has non-consecutive turns")
        self._messages = MessageLog(self.out_dir)
        self._writer = RecordWriter(self.out_dir, valid_length=valid)
        summaries = self.out_dir / "summaries.json"
        if summaries.exists():
            self._summaries = msgspec.json.decode(summaries.read_bytes(), type=dict[str, str])
        return run_id, prior, finished, attempts

    def episodes(self, instances: Sequence[Instance], run_id: str) -> list[tuple[EpisodeSpec, Instance]]:
        c = self.config
        out = []
        for run in range(c.runs):
            run_seed = derive_seed(c.seed, run)
            for inst in instances:
                seed = derive_seed(run_seed, inst.id)
                for model in c.candidates:
                    for protocol in c.protocols:
                        eid = f"{protocol}/{model}/r{run}/{inst.id}"
                        out.append((EpisodeSpec(run_id=run_id, episode_id=eid, instance_id=inst.id,
                                                model=model, feedback=c.feedback, protocol=protocol,
                                                run=run, seed=seed), inst))
        return out

    async def run(self, instances: Iterable[Instance]) -> AsyncIterator[Record]:
        """Run every episode of ``instances``; yields each record as it is written."""
        if not self._entered:
            raise ConfigError("use `async with Evaluator(...) as ev:` before ev.run()")
        instances = list(instances)
        if len({i.id for i in instances}) != len(instances):
            raise ConfigError("instance ids must be unique")
        run_id, prior, finished, attempts = self._prepare(instances)
        todo = [(msgspec.structs.replace(s, attempt=attempts[s.episode_id]) if attempts.get(s.episode_id)
                 else s, i) for s, i in self.episodes(instances, run_id)]
        self._stats["total"] = len(todo)
        queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=4 * self.config.concurrency)
        env = EpisodeEnv(evaluate=self._shared.evaluate, traces=self._traces_of, shapes=self._shapes_of,
                         hidden=self._hidden_of, emit=self._emitter(queue), lint=run_pylint,
                         view=self._view_of, policy=self.config.policy(),
                         validation=ValidationPolicy(budget=self.config.hint_budget,
                                                     reading=self.config.validator_reading),  # type: ignore[arg-type]
                         temperature=self.config.temperature, max_tokens=self.config.max_tokens,
                         styles=tuple(self.config.prompt_styles), minimal_edit=self.config.minimal_edit,
                         baselines=self.config.baselines,
                         validator=self._models[self.config.validator] if self.config.validator else None,
                         first_repair=self._shared.first_repair, meter=self._meter,
                         messages=self._messages.put if self._messages is not None else None)
        pending = iter([(s, i) for s, i in todo if s.episode_id not in finished])
        self._stats["skipped"] = sum(1 for s, _ in todo if s.episode_id in finished)

        async def worker() -> None:
            for spec, inst in pending:
                try:
                    await run_episode(spec, inst, self._models[spec.model], self._models[spec.feedback],
                                      env, prior.get(spec.episode_id, ()))
                except FolderWriteError:
                    raise  # the folder cannot take records: the run ends (resume continues)
                except Exception as exc:  # a bug must cost one episode, never the sweep
                    where = traceback.extract_tb(exc.__traceback__)[-1]
                    await env.emit(EpisodeRecord(
                        run_id=spec.run_id, episode_id=spec.episode_id, instance_id=spec.instance_id,
                        model=spec.model, protocol=spec.protocol, run=spec.run, seed=spec.seed,
                        attempt=spec.attempt, status="error", turns=len(prior.get(spec.episode_id, ())),
                        error=redact(f"internal error {type(exc).__name__}: {exc} "
                                     f"({where.filename.rsplit('/', 1)[-1]}:{where.lineno})")))

        async def produce() -> None:
            try:
                async with asyncio.TaskGroup() as tg:
                    for k in range(min(self.config.concurrency, len(todo)) or 1):
                        tg.create_task(worker())
                        if k % _RAMP == _RAMP - 1:
                            # ramp up: every episode's first step would otherwise run in
                            # one loop iteration (1,024 x turn 0 = a 0.3 s stall)
                            await asyncio.sleep(0)
            except BaseExceptionGroup as group:
                # a folder that cannot be written is the run's one cause, said once
                write = group.subgroup(lambda e: isinstance(e, FolderWriteError))
                while isinstance(write, BaseExceptionGroup):
                    write = write.exceptions[0]
                if write is not None:
                    raise write from None
                raise
            finally:
                await queue.put(_DONE)

        task = asyncio.create_task(produce())
        self._producers.add(task)
        task.add_done_callback(self._producers.discard)
        try:
            while True:
                item = await queue.get()
                if item is _DONE:
                    break
                yield item
            await task
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            if self._writer is not None and self._writer.failed is None:
                await self._writer.sync()

    def _emitter(self, queue: asyncio.Queue[Any]) -> Any:
        async def emit(record: Record) -> None:
            if self._writer is not None:
                self._writer.write(record)
            if isinstance(record, TurnRecord):
                self._stats["turns"] += 1
                for call in record.calls:
                    self._stats["prompt"] += call.usage.prompt_tokens
                    self._stats["completion"] += call.usage.completion_tokens
            else:
                self._stats["done"] += 1
                self._stats["errors"] += record.status == "error"
                if record.status == "error":
                    _log.info("episode %s ended in error: %s", record.episode_id, record.error)
                if self._messages is not None:
                    await self._messages.sync()  # the messages first: records name them
                if self._writer is not None:
                    await self._writer.sync()
            await queue.put(record)

        return emit
