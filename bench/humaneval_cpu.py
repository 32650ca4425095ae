"""CPU time (not wall) per canonical HumanEval sample in the pool: robust on a shared host.

    python -m bench.humaneval_cpu [--workers 2] [--rounds 3]

Each round runs the set twice, A B: with a resident child per program (the default,
``SandboxConfig(resident=True)``) and with a child per test (``resident=False``, the way
before stop 30), so the two are compared on the same host in the same minutes.

Each round starts a pool, runs the 164 canonical solutions on every hidden test of the
instances `pairbench import humaneval` wrote (bench.peer_humaneval's cache), all at once,
and closes the pool; the CPU time of this process and of everything below it (workers,
zygotes, test children, reaped as the pool closes) over the round, per sample, is what
the pool cost. Wall time is printed too, but on a loaded machine it measures the load.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from pairbench_async.sandbox.config import SandboxConfig
from pairbench_async.sandbox.pool import SandboxPool

from .peer_humaneval import ROOT, below_cpu, canonical_jobs, own_cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache", type=Path, default=ROOT / ".data" / "peer")
    args = ap.parse_args()
    jobs = canonical_jobs(args.cache, args.workers)

    async def round_(resident: bool) -> tuple[float, float, float]:
        o0, b0, t0 = own_cpu(), below_cpu(), time.perf_counter()
        async with SandboxPool(SandboxConfig(workers=args.workers, resident=resident)) as pool:
            await asyncio.gather(*(pool.run(i.program(s), i.tests, i.limits, checker=i.checker)
                                   for i, s in jobs))
        return own_cpu() - o0, below_cpu() - b0, time.perf_counter() - t0

    cpus: dict[bool, list[float]] = {True: [], False: []}
    n = len(jobs)
    for _ in range(args.rounds):
        for resident in (True, False):
            own, below, w = asyncio.run(round_(resident))
            cpus[resident].append(own + below)
            print(f"{'resident' if resident else 'alone   '} CPU {1000 * (own + below) / n:.2f} ms/sample"
                  f" = evaluator {1000 * own / n:.2f} + workers, zygotes and test children "
                  f"{1000 * below / n:.2f}  (wall {w:.2f} s, {n} samples)", flush=True)
    for resident in (True, False):
        print(f"median CPU, {'a resident child per program' if resident else 'a child per test'}: "
              f"{1000 * statistics.median(cpus[resident]) / n:.2f} ms/sample")


if __name__ == "__main__":
    main()
