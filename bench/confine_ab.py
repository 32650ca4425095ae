"""Two builds of the native module, A/B, by the CPU time the sandbox spends per test.

    python -m bench.confine_ab OLD.so NEW.so [--rounds 5] [--tests 3000] [--programs 300]

Throughput on a machine shared with other work moves by 2x from one minute to the next;
the CPU time of the sandbox's own processes per test hardly does. Each measurement runs
in a fresh evaluator process whose pool loads the given build of ``native`` (the
worker loads it by path, so any copy of a built ``.so`` will do), and reads
``RUSAGE_CHILDREN`` after the pool is closed: user + system time of every worker,
zygote and test child, nothing of the evaluator. Builds alternate within each round
(old-new, then new-old); printed are the medians and the median of the differences
within a round (the machine drifts between rounds more than the two builds differ). Two workloads:

* ``trivial``: one program (a + b), ``--tests`` tests: the per-test cost (fork, the
  child's confinement, its seccomp filter, the program);
* ``programs``: ``--programs`` distinct programs of 2 tests each: the per-program cost
  too (a zygote per program, its confinement and its filter);
* ``looping``: a program that never ends, on ``--tests`` / 10 tests whose reference
  took 0.05 ms (``ref_ms``), one call: its first test runs to the probe (0.1 s), every
  later one to the loop rule's tight limit (2.5 ms by default): what a looping
  candidate's turn costs per test, kill latency included (the results are TLE).

Keep a build before changing C code: ``cp pairbench_async/sandbox/native*.so /tmp/old.so``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import asyncio, json, resource, sys
import pairbench_async.sandbox.pool as P
from pairbench_async import Program, SandboxPool, Test
path, kind, n_tests, n_programs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
original = P.host_paths
def host_paths(allowed):
    read, extra, _, origins = original(allowed)
    return read, extra, path, origins
P.host_paths = host_paths
SOURCE = "a, b = map(int, input().split())\nprint(a + b)\n"
if kind == "looping":
    n_tests = max(2, n_tests // 10)
tests = [Test(id=str(i), input=f"{i} {i + 1}\n", output=f"{2 * i + 1}\n") for i in range(n_tests)]
async def main():
    async with SandboxPool(workers=2, require_full=True) as pool:
        if kind == "trivial":
            results = await pool.run(Program(source=SOURCE), tests)
        elif kind == "looping":
            looped = [Test(id=str(i), input=f"{i}\n", output="", ref_ms=0.05) for i in range(n_tests)]
            results = await pool.run(Program(source="while True:\n    pass\n"), looped)
            assert all(r.verdict == "TLE" for r in results), {r.verdict for r in results}
            # the test children's CPU as the zygote measured it (their rusage does not
            # reach RUSAGE_CHILDREN reliably: a killed child's zygote reaps it, and the
            # worker's PID namespace init ends without waiting for every descendant)
            return results
        else:
            jobs = [pool.run(Program(source=f"# {k}\n" + SOURCE), tests[:2]) for k in range(n_programs)]
            results = [r for rs in await asyncio.gather(*jobs) for r in rs]
    assert all(r.passed for r in results)
    return len(results)
import time
t0 = time.perf_counter()
n = asyncio.run(main())
wall = time.perf_counter() - t0
if kind == "looping":
    later = n[1:]  # the first runs to the probe
    print(json.dumps({"n": len(n), "cpu_us": sum(r.cpu_ms for r in later) / len(later) * 1e3,
                      "wall_us_per_test": wall / len(n) * 1e6}))
else:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"n": n, "cpu_us": (ru.ru_utime + ru.ru_stime) / n * 1e6}))
"""


def measure(build: str, kind: str, args: argparse.Namespace) -> float:
    proc = subprocess.run([sys.executable, "-c", CHILD, build, kind, str(args.tests),
                           str(args.programs)], capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"{kind} with {build} failed:\n{proc.stderr[-3000:]}")
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["cpu_us"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tests", type=int, default=3000)
    ap.add_argument("--programs", type=int, default=300)
    ap.add_argument("--kinds", default="trivial,programs")
    args = ap.parse_args()
    summary = {}
    for kind in args.kinds.split(","):
        got: dict[str, list[float]] = {"old": [], "new": []}
        for i in range(args.rounds):
            for which in ("old", "new") if i % 2 == 0 else ("new", "old"):
                got[which].append(measure(getattr(args, which), kind, args))
        old, new = statistics.median(got["old"]), statistics.median(got["new"])
        # the machine drifts between rounds: the difference within a round says more
        diffs = sorted(n - o for o, n in zip(got["old"], got["new"], strict=True))
        summary[kind] = {"old_us": [round(x) for x in got["old"]],
                         "new_us": [round(x) for x in got["new"]],
                         "old_median_us": round(old), "new_median_us": round(new),
                         "paired_diff_median_us": round(statistics.median(diffs)),
                         "paired_diffs_us": [round(d) for d in diffs]}
        print(f"{kind:9} CPU per test: old {old:7.0f} us  new {new:7.0f} us  (medians); "
              f"new - old within a round: median {statistics.median(diffs):+.0f} us "
              f"(sorted {summary[kind]['paired_diffs_us']})", flush=True)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
