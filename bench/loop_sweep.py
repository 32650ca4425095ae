"""A fixtures sweep with 5 % looping turns against the same sweep without them.

    python -m bench.loop_sweep [--loop 0.05] [--rounds 2] [--workers 2] [--limit N]

Runs `python -m pairbench_async run` on the bundled fixtures (every instance, protocol
pair, 10 hinted turns, rules feedback) with candidate sim:0.5 (A) and
sim:0.5?loop=0.05 (B), alternated A B A B, each in a fresh process and output folder,
after one untimed run that fills the reference check's cache, and prints each run's wall time, the looping turns it had (TLE on every test), and the
ratio of the medians B / A (the target: at most 1.5). Apart from its looping turns, B's
trajectory is A's (models/sim.py: a loop is gone again at the next call).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(candidate: str, workers: int, limit: int | None) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory(prefix="pb-loop-sweep-") as out:
        cmd = [sys.executable, "-m", "pairbench_async", "run", "--candidate", candidate,
               "--out", out, "--no-progress", "-q", "--workers", str(workers)]
        if limit:
            cmd += ["--limit", str(limit)]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        turns = looping = 0
        for line in Path(out, "records.jsonl").read_text().splitlines():
            rec = json.loads(line)
            if rec.get("kind") != "turn":
                continue
            turns += 1
            if set(rec.get("verdicts") or {}) == {"TLE"}:  # verdict counts: all TLE
                looping += 1
        return wall, turns, looping


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loop", type=float, default=0.05)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="only the first N instances")
    args = ap.parse_args()
    a, b = "sim:0.5", f"sim:0.5?loop={args.loop:g}"
    # one untimed run first: `pairbench run` checks (and times) the references once per
    # dataset and caches that, so without it the first timed run alone would pay for it
    run(a, args.workers, args.limit)
    walls: dict[str, list[float]] = {a: [], b: []}
    for _ in range(args.rounds):
        for cand in (a, b):
            wall, turns, looping = run(cand, args.workers, args.limit)
            walls[cand].append(wall)
            print(f"{cand:22s} {wall:7.1f} s  {turns} turns, {looping} looping", flush=True)
    ratio = statistics.median(walls[b]) / statistics.median(walls[a])
    print(f"ratio (median B / median A): {ratio:.2f}  (target <= 1.5)")


if __name__ == "__main__":
    main()
