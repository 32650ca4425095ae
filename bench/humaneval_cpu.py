"""CPU time (not wall) per canonical HumanEval sample in the pool: robust on a shared host.

    python -m bench.humaneval_cpu [--workers 2] [--rounds 3]

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

from pairbench_async.sandbox.pool import SandboxPool

from .peer_humaneval import ROOT, below_cpu, canonical_jobs, own_cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache", type=Path, default=ROOT / ".data" / "peer")
    args = ap.parse_args()
    jobs = canonical_jobs(args.cache, args.workers)

    async def round_() -> tuple[float, float, float]:
        o0, b0, t0 = own_cpu(), below_cpu(), time.perf_counter()
        async with SandboxPool(workers=args.workers) as pool:
            await asyncio.gather(*(pool.run(i.program(s), i.tests, i.limits, checker=i.checker)
                                   for i, s in jobs))
        return own_cpu() - o0, below_cpu() - b0, time.perf_counter() - t0

    cpus, walls = [], []
    n = len(jobs)
    for _ in range(args.rounds):
        own, below, w = asyncio.run(round_())
        cpus.append(own + below)
        walls.append(w)
        print(f"CPU {1000 * (own + below) / n:.2f} ms/sample = evaluator {1000 * own / n:.2f} + "
              f"workers, zygotes and test children {1000 * below / n:.2f}  (wall {w:.2f} s, "
              f"{n} samples)", flush=True)
    print(f"median CPU {1000 * statistics.median(cpus) / len(jobs):.2f} ms/sample")


if __name__ == "__main__":
    main()
