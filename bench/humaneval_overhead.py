"""Where a canonical HumanEval sample's time goes in the pool, per worker.

    python -m bench.humaneval_overhead [--workers 1] [--rounds 3]

Runs the 164 canonical solutions (prompt + canonical_solution) on every hidden test of
the instance `pairbench import humaneval` wrote (bench.peer_humaneval's cache), all
submitted at once, and splits the wall time of each worker between: LOAD (from the LOAD
frame to LOADED: PID namespace, scratch, zygote fork, cgroup join, confinement, compile,
pre-imports), tests (from the first TEST frame written to the last RESULT: fork,
confine, run, output, wait, per test) and the evaluator's own side (decoding and
comparing each RESULT, event loop and scheduling: the rest). Also the test children's
own CPU time (cpu_ms summed). Figures are per program (ms per worker).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from pairbench_async.sandbox import process as _process
from pairbench_async.sandbox.pool import SandboxPool

from .peer_humaneval import ROOT, canonical_jobs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache", type=Path, default=ROOT / ".data" / "peer")
    args = ap.parse_args()
    jobs = canonical_jobs(args.cache, args.workers)
    timers = {"load": 0.0, "decode": 0.0, "loads": 0}
    send_load, loaded_reply = _process.Worker.send_load, _process.Worker.loaded_reply
    decode = _process.decode_result
    sent: dict[int, float] = {}

    def timed_send_load(self, job):  # type: ignore[no-untyped-def]
        sent[id(self)] = time.perf_counter()
        return send_load(self, job)

    async def timed_loaded_reply(self, job):  # type: ignore[no-untyped-def]
        # from the LOAD frame written to LOADED read (the chunk's TEST frames are
        # written in between, without waiting)
        try:
            return await loaded_reply(self, job)
        finally:
            timers["load"] += time.perf_counter() - sent.pop(id(self))
            timers["loads"] += 1

    def timed_decode(job, test, payload):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        try:
            return decode(job, test, payload)
        finally:
            timers["decode"] += time.perf_counter() - t0

    _process.Worker.send_load = timed_send_load  # type: ignore[method-assign]
    _process.Worker.loaded_reply = timed_loaded_reply  # type: ignore[method-assign]
    _process.decode_result = timed_decode  # type: ignore[assignment]

    async def go() -> None:
        async with SandboxPool(workers=args.workers) as pool:
            await pool.run(*(lambda i, s: (i.program(s), i.tests, i.limits))(*jobs[0]))
            walls = []
            for _ in range(args.rounds):
                for k in timers:
                    timers[k] = 0
                t0 = time.perf_counter()
                results = await asyncio.gather(*(
                    pool.run(i.program(s), i.tests, i.limits, checker=i.checker) for i, s in jobs))
                wall = time.perf_counter() - t0
                walls.append(wall)
                n = len(jobs)
                tests = sum(len(r) for r in results)
                cpu = sum(x.cpu_ms for r in results for x in r) / 1000
                per_worker = wall * args.workers
                print(f"wall {wall:.3f} s ({n} programs, {tests} tests, {timers['loads']} loads, "
                      f"{args.workers} workers): per program per worker {1000 * per_worker / n:.2f} ms"
                      f" = load {1000 * timers['load'] / n:.2f}"
                      f" + tests' children CPU {1000 * cpu / n:.2f}"
                      f" + decode/compare {1000 * timers['decode'] / n:.2f}"
                      f" + rest {1000 * (per_worker - timers['load'] - cpu - timers['decode']) / n:.2f}"
                      f"  (per test: child CPU {1000 * cpu / tests:.2f} ms)", flush=True)
            print(f"median wall {statistics.median(walls):.3f} s")

    asyncio.run(go())


if __name__ == "__main__":
    main()
