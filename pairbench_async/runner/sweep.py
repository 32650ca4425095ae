"""Sweeps as a library call: a grid of a run's parameters, one run folder per setting.

    grid = {"turns": [6, 10], "feedback": ["rules", my_client]}
    runs = await run_sweep(RunConfig(candidates=["sim:0.8"]), grid, instances, "runs/sweep")

writes what ``run --sweep turns=6,10 feedback=...`` writes: a folder per setting, named
by :func:`~..runlog.sweep.setting_name`, each a run folder whose manifest records its
grid point (the first point is the report's main setting). An empty grid is one run in
``out_dir`` itself. ``resume=True`` continues every setting as ``--resume`` does
(``retry_errors=True`` runs errored episodes again). All settings share one sandbox: the
caller's (kept open for them) or a local pool of the sweep's own. The sweep holds the
lock of its folder (and each setting's run holds its own) while it runs, so a second
writer is refused at once. :func:`~..report.runs.load_run` reads the folder back;
:func:`~.resume.recorded_run` reads back what a folder was asked to do.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import msgspec

from ..core.errors import ConfigError
from ..core.types import Instance
from ..runlog.lock import lock_folder
from ..runlog.records import Record, SweepSetting
from ..runlog.sweep import check_layout, setting_name
from ..sandbox.interface import Sandbox
from ..sandbox.pool import SandboxConfig, SandboxPool
from ..sandbox.traces import TraceCache
from .config import RunConfig, RunStatistics, model_name
from .evaluator import Evaluator

__all__ = ["SWEEPABLE", "SettingRun", "SweepObserver", "SweepPoint", "grid_points", "plan_sweep", "run_sweep"]

#: The :class:`RunConfig` fields a grid may vary (their values decide a setting's numbers).
SWEEPABLE: Final = ("turns", "scenario_turns", "max_scenarios", "min_scenario_size", "representatives",
                    "hint_budget", "feedback", "after_deferral",
                    "evidence_reading", "validator_reading")


class SweepPoint(msgspec.Struct, frozen=True):
    """One setting of a sweep: its configuration, its folder and what its manifest records
    (``setting`` is None for the one run of an empty grid)."""

    config: RunConfig
    out_dir: Path
    setting: SweepSetting | None = None


class SettingRun(msgspec.Struct, frozen=True):
    """A setting once run: where its records are and what the run did."""

    point: SweepPoint
    statistics: RunStatistics


#: Sees each setting run: ``(point, records, evaluator)``, the records as they are
#: written (read them to the end; what is left is drained after), the evaluator for its
#: :meth:`~.evaluator.Evaluator.statistics`.
SweepObserver = Callable[[SweepPoint, AsyncIterator[Record], Evaluator], Awaitable[None]]


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of ``grid``'s values, the first axis varying slowest; ``[{}]`` for
    an empty grid. Keys must be :data:`SWEEPABLE` fields; each axis non-empty, no value twice."""
    for key, values in grid.items():
        if key not in SWEEPABLE:
            raise ConfigError(f"cannot sweep {key!r}: the sweepable fields are {', '.join(SWEEPABLE)}")
        if isinstance(values, (str, bytes)) or not values:
            raise ConfigError(f"sweep {key}: give a non-empty list of values")
        names = [model_name(v) if key == "feedback" else v for v in values]
        twice = sorted({str(v) for v in names if names.count(v) > 1})
        if twice:  # two settings would share a folder
            raise ConfigError(f"sweep {key}: {', '.join(twice)} given more than once")
    return [dict(zip(grid, combo, strict=True)) for combo in itertools.product(*grid.values())]


def plan_sweep(config: RunConfig, grid: Mapping[str, Sequence[Any]],
               out_dir: str | os.PathLike[str]) -> list[SweepPoint]:
    """The settings of a sweep, each configuration checked before anything is written."""
    root = Path(out_dir)
    points = grid_points(grid)
    if points == [{}]:
        return [SweepPoint(config=config, out_dir=root)]
    # what a setting is called and records: the CLI's spelling (``scenario-turns=3``), models by name
    spelled = [{k.replace("_", "-"): model_name(v) if k == "feedback" else v for k, v in p.items()}
               for p in points]
    plan = []
    for index, (point, shown) in enumerate(zip(points, spelled, strict=True)):
        setting_config = msgspec.structs.replace(config, **point)
        setting_config.validate()  # every spec must be one this package can make
        name = setting_name(shown, spelled)
        plan.append(SweepPoint(config=setting_config, out_dir=root / name,
                               setting=SweepSetting(name=name, index=index, values=shown)))
    return plan


async def run_sweep(
    config: RunConfig,
    grid: Mapping[str, Sequence[Any]],
    instances: Sequence[Instance],
    out_dir: str | os.PathLike[str],
    *,
    resume: bool = False,
    sandbox: Sandbox | SandboxConfig | None = None,
    dataset_paths: Sequence[str] = (),
    observe: SweepObserver | None = None,
    trace_cache: TraceCache | None = None,
    retry_errors: bool = False,
    allow_endpoint_change: bool = False,
    dataset_options: Mapping[str, object] | None = None,
    reference_times: Mapping[str, Sequence[float]] | None = None,
) -> list[SettingRun]:
    """Run every setting of ``grid`` on ``instances`` into ``out_dir``, one after another.

    ``grid`` maps :data:`SWEEPABLE` field names to lists of values (``feedback`` takes
    specs or model objects). ``sandbox``: one to run every program in (kept open), or the
    settings of a local pool made for the sweep. ``observe`` watches each setting's records
    (:data:`SweepObserver`). ``trace_cache``: where reference traces are kept (default:
    ``$XDG_CACHE_HOME/pairbench_async/traces``), one for every setting. ``retry_errors``,
    ``allow_endpoint_change``, ``dataset_options``, ``reference_times``: as
    :class:`~.evaluator.Evaluator` takes them, for every setting.
    """
    plan = plan_sweep(config, grid, out_dir)
    check_layout(Path(out_dir), sweep=bool(grid))
    if grid:  # every manifest records the whole grid: a bare resume finishes settings never begun
        dataset_options = {**(dataset_options or {}), "sweep_grid": {
            k: [v if isinstance(v, (int, str)) else model_name(v) for v in values] for k, values in grid.items()}}
    own = sandbox is None or isinstance(sandbox, SandboxConfig)
    pool: Sandbox = SandboxPool(sandbox if isinstance(sandbox, SandboxConfig) else None) if own else sandbox  # type: ignore[assignment]
    traces = trace_cache if trace_cache is not None else TraceCache()
    done: list[SettingRun] = []
    async with contextlib.AsyncExitStack() as stack:
        if grid:  # a sweep's folder is locked as a whole (each setting's run locks its own)
            stack.enter_context(lock_folder(out_dir))
        if own:
            stack.push_async_callback(pool.aclose)
            await pool.start()
        for point in plan:
            async with Evaluator(point.config, out_dir=point.out_dir, resume=resume, sandbox=pool,
                                 dataset_paths=dataset_paths, sweep=point.setting, trace_cache=traces,
                                 retry_errors=retry_errors, allow_endpoint_change=allow_endpoint_change,
                                 dataset_options=dataset_options, reference_times=reference_times) as ev:
                records = ev.run(instances)
                if observe is not None:
                    await observe(point, records, ev)
                async for _ in records:  # whatever the observer left
                    pass
            done.append(SettingRun(point=point, statistics=ev.statistics()))
    return done
