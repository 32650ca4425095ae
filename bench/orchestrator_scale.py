"""Orchestrator scale: many concurrent episodes against a slow simulated model.

    python -m bench.orchestrator_scale [--episodes 1024] [--latency 1.0] [--json]
    python -m bench.orchestrator_scale --fixtures        # (b) a full offline sweep

(a) ``--episodes`` concurrent episodes of ``sim:0.7?latency=L`` (every candidate call
sleeps L seconds, jittered 0.8-1.2) on small synthetic instances (3 tests each, so
the sandbox load is light), with the ``rules`` feedback model. Reported:
  wall        time from the first episode to the last record
  ideal       the latency-bound ideal: the longest chain of candidate-call sleeps of
              any one episode (what the run would take with infinitely fast
              everything else), read from the recorded call latencies
  overhead    wall / ideal - 1 (target: <= 10 %)
  loop lag    p50 / p99 / max of a 10 ms ticker's lateness (target: p99 < 50 ms)
  peak RSS    of this process (psutil), MB
(b) ``--fixtures``: the bundled fixtures with sim:0.3 and sim:0.8 and no latency:
episodes per minute and sandbox tests per second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time

import psutil

from pairbench_async.core.types import Instance, Test
from pairbench_async.runlog.records import EpisodeRecord, TurnRecord
from pairbench_async.runner.evaluator import Evaluator, RunConfig
from pairbench_async.sandbox.traces import TraceCache

REFERENCE = "a, b = map(int, input().split())\nc = a + b\nprint(c)\n"
BUGGY = "a, b = map(int, input().split())\nc = a - b\nprint(c)\n"


def synthetic(n: int) -> list[Instance]:
    tests = [Test(id="1", input="2 3\n", output="5\n"), Test(id="2", input="4 0\n", output="4\n"),
             Test(id="3", input="1 7\n", output="8\n")]
    return [Instance(id=f"add-{i:04d}", problem="Print the sum of two integers a and b.", buggy=BUGGY,
                     reference=REFERENCE, tests=tests, kind="stdio", time_limit=1.0, memory_limit_mb=64)
            for i in range(n)]


async def ticker(lags: list[float], rss: list[int], stop: asyncio.Event) -> None:
    """Lateness of a 10 ms sleep, and this process's RSS every 10th tick."""
    period = 0.01
    proc = psutil.Process()
    while not stop.is_set():
        t = time.perf_counter()
        await asyncio.sleep(period)
        lags.append(time.perf_counter() - t - period)
        if len(lags) % 10 == 0:
            rss.append(proc.memory_info().rss)


async def scale(episodes: int, latency: float, runs: int) -> dict[str, object]:
    instances = synthetic(episodes // runs)
    config = RunConfig(candidates=[f"sim:0.7?latency={latency}"], feedback="rules", turns=4, runs=runs,
                       concurrency=episodes)
    lags: list[float] = []
    rss = [psutil.Process().memory_info().rss]
    stop = asyncio.Event()
    with tempfile.TemporaryDirectory() as tmp:
        async with Evaluator(config, out_dir=f"{tmp}/run", trace_cache=TraceCache(f"{tmp}/tc")) as ev:
            # warm the reference traces so the measurement is the sweep itself
            await ev._traces_of(instances[0])
            tick = asyncio.create_task(ticker(lags, rss, stop))
            chains: dict[str, float] = {}
            ends = 0
            t0 = time.perf_counter()
            async for rec in ev.run(instances):
                if isinstance(rec, TurnRecord):
                    chains[rec.episode_id] = chains.get(rec.episode_id, 0.0) + sum(
                        c.latency_ms for c in rec.calls if c.role == "candidate") / 1000
                elif isinstance(rec, EpisodeRecord):
                    ends += 1
            wall = time.perf_counter() - t0
            stop.set()
            await tick
            stats = ev.statistics()
    peak = max(*rss, psutil.Process().memory_info().rss)
    ideal = max(chains.values())
    lags.sort()
    return {
        "episodes": ends, "errors": stats.errors, "turns": stats.turns, "tests": stats.tests_run,
        "wall_s": round(wall, 2), "ideal_s": round(ideal, 2), "overhead": round(wall / ideal - 1, 4) if ideal > 0 else None,
        "loop_lag_ms": {"p50": round(1000 * lags[len(lags) // 2], 2),
                        "p99": round(1000 * lags[int(len(lags) * 0.99)], 2),
                        "max": round(1000 * lags[-1], 2)},
        "peak_rss_mb": round(peak / 2**20, 1),
    }


async def fixtures_sweep() -> dict[str, object]:
    from pairbench_async.datasets.files import load_dataset

    instances = load_dataset().instances
    config = RunConfig(candidates=["sim:0.3", "sim:0.8"], feedback="rules", concurrency=256)
    with tempfile.TemporaryDirectory() as tmp:
        async with Evaluator(config, out_dir=f"{tmp}/run", trace_cache=TraceCache(f"{tmp}/tc")) as ev:
            t0 = time.perf_counter()
            n = sum([isinstance(r, EpisodeRecord) async for r in ev.run(instances)])
            wall = time.perf_counter() - t0
            stats = ev.statistics()
    return {"episodes": n, "wall_s": round(wall, 1), "episodes_per_min": round(60 * n / wall, 1),
            "sandbox_tests": stats.tests_run, "sandbox_tests_per_s": round(stats.tests_run / wall, 1),
            "turns": stats.turns}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=8, help="runs per instance (episodes = instances x runs)")
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--fixtures", action="store_true", help="also run (b), the fixtures sweep")
    args = ap.parse_args()
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    out = {"scale": runner(scale(args.episodes, args.latency, args.runs))}
    if args.fixtures:
        out["fixtures"] = runner(fixtures_sweep())
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
