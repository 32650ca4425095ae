"""A finished offline sweep on disk, for the tests that read run directories."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pairbench_async.datasets.files import load_dataset
from pairbench_async.runner.evaluator import Evaluator, RunConfig
from pairbench_async.sandbox.traces import TraceCache


def offline_sweep(base: Path, config: RunConfig, instances: int) -> Path:
    """Run ``config`` on the first ``instances`` bundled fixtures into ``base/run`` (its own
    trace cache in ``base/traces``); return the run directory."""

    async def sweep() -> None:
        async with Evaluator(config, out_dir=base / "run",
                             trace_cache=TraceCache(base / "traces")) as ev:
            async for _ in ev.run(load_dataset().instances[:instances]):
                pass

    asyncio.run(sweep())
    return base / "run"
