"""Sandbox throughput, side by side in one run: naive interpreter-per-test vs the pool.

    python -m bench.sandbox_throughput [--tests 4000] [--naive-tests 300] [--json]

For a trivial stdin/stdout program and a heavier one, on the same tests:
  naive       subprocess.run([sys.executable, prog]) per test, one at a time
  naive-par   the same with one thread per core (what a careful naive harness does)
  exec        `python -m pairbench_async exec` from its start to its end (confined)
  exec-off    the same with --no-confine
  pool        SandboxPool.run inside this process (confined), steady state
Ratios are against `naive` and `naive-par`. The naive runs use the first
--naive-tests tests (an interpreter start costs ~45 ms here, so 4,000 would take
minutes); throughput is per test either way.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pairbench_async.core.types import Limits, Program, Test
from pairbench_async.sandbox.pool import SandboxPool

TRIVIAL = "a, b = map(int, input().split())\nprint(a + b)\n"
HEAVY = (
    "import sys, heapq\n"
    "n, seed = map(int, sys.stdin.readline().split())\n"
    "x = seed\nvals = []\n"
    "for _ in range(n):\n    x = (x * 1103515245 + 12345) % 2147483648\n    vals.append(x % 1000)\n"
    "vals.sort()\nh = vals[:]\nheapq.heapify(h)\n"
    "print(sum(vals[::7]) + heapq.nsmallest(3, h)[-1])\n"
)


def heavy_answer(n: int, seed: int) -> int:
    x, vals = seed, []
    for _ in range(n):
        x = (x * 1103515245 + 12345) % 2147483648
        vals.append(x % 1000)
    vals.sort()
    return sum(vals[::7]) + sorted(vals)[2]


def make_tests(kind: str, n: int) -> list[Test]:
    if kind == "trivial":
        return [Test(id=str(i), input=f"{i} {i + 1}\n", output=f"{2 * i + 1}\n") for i in range(n)]
    return [Test(id=str(i), input=f"20000 {i}\n", output=f"{heavy_answer(20000, i)}\n") for i in range(n)]


def naive(prog: Path, tests: list[Test], parallel: int) -> float:
    def one(t: Test) -> bool:
        p = subprocess.run([sys.executable, str(prog)], input=t.input, capture_output=True, text=True,
                           timeout=30)
        return p.stdout.split() == (t.output or "").split()

    t0 = time.perf_counter()
    with ThreadPoolExecutor(parallel) as ex:
        ok = list(ex.map(one, tests))
    dt = time.perf_counter() - t0
    assert all(ok), "naive run produced wrong answers"
    return len(tests) / dt


def exec_cmd(prog: Path, tests_file: Path, n: int, confine: bool) -> float:
    cmd = [sys.executable, "-m", "pairbench_async", "exec", str(prog), "--tests", str(tests_file)]
    if not confine:
        cmd.append("--no-confine")
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    dt = time.perf_counter() - t0
    assert p.returncode == 0, p.stderr
    verdicts = [json.loads(line)["verdict"] for line in p.stdout.splitlines()]
    assert verdicts == ["AC"] * n, f"exec gave {set(verdicts)}"
    return n / dt


async def pool_rate(source: str, tests: list[Test]) -> float:
    async with SandboxPool() as pool:
        await pool.run(Program(source=source), tests[:50], Limits(time_limit=5))
        t0 = time.perf_counter()
        res = await pool.run(Program(source=source), tests, Limits(time_limit=5))
        dt = time.perf_counter() - t0
    assert all(r.passed for r in res)
    return len(tests) / dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tests", type=int, default=4000)
    ap.add_argument("--heavy-tests", type=int, default=400)
    ap.add_argument("--naive-tests", type=int, default=300)
    ap.add_argument("--json", action="store_true", help="print only the JSON summary")
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    out: dict[str, object] = {"cores": cores, "python": sys.version.split()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, source, n in (("trivial", TRIVIAL, args.tests), ("heavy", HEAVY, args.heavy_tests)):
            prog = Path(tmp, f"{kind}.py")
            prog.write_text(source)
            tests = make_tests(kind, n)
            tests_file = Path(tmp, f"{kind}.jsonl")
            tests_file.write_text("".join(json.dumps({"id": t.id, "input": t.input, "output": t.output}) + "\n"
                                          for t in tests))
            sub = tests[: min(n, args.naive_tests)]
            r: dict[str, float] = {
                "tests": n,
                "naive": naive(prog, sub, 1),
                "naive-par": naive(prog, sub, cores),
                "exec": exec_cmd(prog, tests_file, n, True),
                "exec-off": exec_cmd(prog, tests_file, n, False),
                "pool": asyncio.run(pool_rate(source, tests)),
            }
            r["exec/naive"] = r["exec"] / r["naive"]
            r["exec/naive-par"] = r["exec"] / r["naive-par"]
            r["confinement cost"] = 1 - r["exec"] / r["exec-off"]
            out[kind] = {k: round(v, 3) for k, v in r.items()}
    if not args.json:
        for kind in ("trivial", "heavy"):
            row = out[kind]
            assert isinstance(row, dict)
            print(f"{kind:8} tests={row['tests']:5}  naive {row['naive']:7.1f}/s  naive-par {row['naive-par']:7.1f}/s  "
                  f"exec {row['exec']:7.1f}/s  exec-off {row['exec-off']:7.1f}/s  pool {row['pool']:7.1f}/s  "
                  f"exec/naive {row['exec/naive']:5.1f}x  exec/naive-par {row['exec/naive-par']:5.1f}x")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
