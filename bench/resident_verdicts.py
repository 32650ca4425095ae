"""How running a program's tests in one resident child changes per-test verdicts.

    python -m bench.resident_verdicts [--humaneval he.jsonl] [--feedbackeval fe.jsonl]
                                      [--workers N]

For every instance file (as `pairbench import` wrote it), runs each program the set holds
(humaneval: the reference, HumanEval's canonical solutions; feedbackeval: the instance's
erroneous program; the bundled fixtures, stdin and function-call: their buggy programs and
their references) on every hidden test through SandboxPool.run twice, with the same
limits and loop rule: once with ``SandboxConfig(resident=True)`` (the default: a
program's call tests one after another in one child, a test that ran after another and
did not pass, nor was killed at its CPU limit, run again alone) and once with
``resident=False`` (a child per test), in alternating order per set. Prints, per set, the
wall time of each and their ratio, the tests, and the tests whose verdicts differ. Each
differing test is run alone twice more: if either run gives the resident verdict, the
difference is the test's own variance (a time near its limit, a random value), not the
resident child's, and is counted as ``noise``; the rest are listed (the design's
promise: a verdict differs only by a test passing, or timing out, after its program's
earlier tests ran in the same process).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from pairbench_async.core.types import Instance, TestResult
from pairbench_async.datasets.files import read_instances
from pairbench_async.sandbox.config import SandboxConfig
from pairbench_async.sandbox.pool import SandboxPool

ROOT = Path(__file__).resolve().parent.parent


async def _run_all(programs: list[tuple[Instance, str]], workers: int,
                   resident: bool) -> tuple[list[list[TestResult]], float]:
    """Every program on its tests; the wall time of the runs (the pool's start not in it)."""
    async with SandboxPool(SandboxConfig(workers=workers, resident=resident)) as pool:
        start = time.perf_counter()
        results = await asyncio.gather(*(
            pool.run(i.program(src), i.tests, i.limits, checker=i.checker) for i, src in programs))
        return results, time.perf_counter() - start


async def measure(name: str, insts: list[Instance], source_of: str, workers: int) -> dict[str, object]:
    programs = [(i, i.reference if source_of == "reference" else i.buggy) for i in insts]
    shared, t_shared = await _run_all(programs, workers, True)
    alone, t_alone = await _run_all(programs, workers, False)
    shared2, t_shared2 = await _run_all(programs, workers, True)
    differ: list[tuple[Instance, str, int]] = []
    for (inst, src), a, b in zip(programs, shared, alone, strict=True):
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            if x.verdict is not y.verdict:
                differ.append((inst, src, k))
    listed, noise = [], 0
    if differ:
        async with SandboxPool(SandboxConfig(workers=workers, resident=False)) as pool:
            for inst, src, k in differ:
                runs = [await pool.run(inst.program(src), [inst.tests[k]], inst.limits,
                                       checker=inst.checker) for _ in range(2)]
                by_shared = shared[programs.index((inst, src))][k]
                if any(r[0].verdict is by_shared.verdict for r in runs):
                    noise += 1
                    continue
                listed.append({"instance": inst.id, "test": inst.tests[k].id,
                               "resident": by_shared.verdict.value,
                               "alone": [r[0].verdict.value for r in runs],
                               "resident_cpu_ms": round(by_shared.cpu_ms, 2)})
    tests = sum(len(r) for r in shared)
    out = {"set": name, "programs": len(programs), "tests": tests,
           "wall_resident_s": [round(t_shared, 2), round(t_shared2, 2)],
           "wall_alone_s": round(t_alone, 2),
           "alone_over_resident": round(t_alone / min(t_shared, t_shared2), 2),
           "differing_tests": len(differ), "noise": noise, "resident_differences": len(listed)}
    print(json.dumps(out), flush=True)
    for c in listed:
        print("  differs:", json.dumps(c), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--humaneval", type=Path, default=ROOT / ".data" / "peer" / "humaneval.jsonl")
    ap.add_argument("--feedbackeval", type=Path, default=ROOT / ".data" / "fe.jsonl")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    for kind in ("stdio", "call"):
        fixtures = read_instances(ROOT / "fixtures" / f"{kind}.jsonl").instances
        for source_of in ("buggy", "reference"):
            asyncio.run(measure(f"fixtures {kind} {source_of}", fixtures, source_of, args.workers))
    for path, name, source_of, hint in (
            (args.humaneval, "humaneval canonical", "reference", "python -m bench.peer_humaneval imports it"),
            (args.feedbackeval, "feedbackeval erroneous", "buggy",
             "pairbench import feedbackeval HumanEval_feedback.jsonl --humaneval HumanEval.jsonl.gz --out it")):
        if path.exists():
            asyncio.run(measure(name, read_instances(path).instances, source_of, args.workers))
        else:
            print(f"skipped: {path} ({hint})")


if __name__ == "__main__":
    main()
