"""How the loop rule changes per-test verdicts, measured on real sets.

    python -m bench.loop_rule_verdicts [--humaneval he.jsonl] [--feedbackeval fe.jsonl]
                                       [--floor S] [--probe S]

For every instance file (as `pairbench import` wrote it), runs each program the set
holds (humaneval: the reference, i.e. HumanEval's canonical solutions; feedbackeval: the
instance's erroneous program) on every hidden test through SandboxPool.run with the
loop rule on (the default), then runs every test that got TLE again, alone, with the
rule off (SandboxConfig(loop_factor=0): the test's full limit). Only those tests can
differ: a test that finished under the rule finished under a limit no larger than its
own, where the full-limit run judges it the same way. Prints, per set, the tests, the
TLE tests, how many changed verdict at the full limit, and for each changed test the
CPU time it needed, its own time over its reference's, and whether it needed more than
the rule's bound, loop_floor + loop_factor x the reference's time (the rule's promise:
a verdict changes only beyond it; ``changed_against_the_promise`` counts the others).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from pairbench_async.core.types import Instance, Verdict
from pairbench_async.datasets.files import read_instances
from pairbench_async.sandbox.config import SandboxConfig
from pairbench_async.sandbox.jobs import LoopRule, tight_limit
from pairbench_async.sandbox.pool import SandboxPool

ROOT = Path(__file__).resolve().parent.parent


async def measure(name: str, insts: list[Instance], source_of: str, workers: int,
                  floor: float | None = None, probe: float | None = None) -> dict:
    tuned = {k: v for k, v in (("loop_floor", floor), ("loop_probe", probe)) if v is not None}
    config = SandboxConfig(workers=workers, **tuned)
    rule = LoopRule(config.loop_factor, config.loop_floor, config.loop_probe, config.loop_floor_shared)
    programs = [(i, i.reference if source_of == "reference" else i.buggy) for i in insts]
    t0 = time.perf_counter()
    async with SandboxPool(config) as pool:
        ruled = await asyncio.gather(*(
            pool.run(i.program(src), i.tests, i.limits, checker=i.checker) for i, src in programs))
    t_rule = time.perf_counter() - t0
    again: list[tuple[Instance, str, list[int]]] = []
    for (inst, src), results in zip(programs, ruled, strict=True):
        tle = [k for k, r in enumerate(results) if r.verdict is Verdict.TLE]
        if tle:
            again.append((inst, src, tle))
    t0 = time.perf_counter()
    async with SandboxPool(config, loop_factor=0) as pool:
        full = await asyncio.gather(*(
            pool.run(inst.program(src), [inst.tests[k] for k in ks], inst.limits,
                     checker=inst.checker) for inst, src, ks in again))
    t_full = time.perf_counter() - t0
    changed = []
    for (inst, _, ks), results in zip(again, full, strict=True):
        for k, r in zip(ks, results, strict=True):
            if r.verdict is not Verdict.TLE:
                test = inst.tests[k]
                # the rule's bound on this test (before or after a timeout of its call:
                # the smaller one, loop_floor + loop_factor x ref, is what it promises)
                bound = tight_limit(1e9, test.ref_ms, 0.0, rule) * 1000 if test.ref_ms is not None else None
                changed.append({"instance": inst.id, "test": test.id, "full": r.verdict.value,
                                "cpu_ms": round(r.cpu_ms, 1), "work_ms": r.work_ms, "ref_ms": test.ref_ms,
                                "bound_ms": None if bound is None else round(bound, 1),
                                "within_promise": bound is None or r.cpu_ms > bound,
                                "x_ref": round(r.work_ms / test.ref_ms, 1)
                                if test.ref_ms and r.work_ms is not None else None})
    tle_tests = sum(len(ks) for _, _, ks in again)
    out = {"set": name, "programs": len(programs), "tests": sum(len(r) for r in ruled),
           "tle_tests_with_rule": tle_tests, "programs_with_tle": len(again),
           "changed_at_full_limit": len(changed),
           "changed_against_the_promise": sum(not c["within_promise"] for c in changed), "changed": changed,
           "wall_rule_s": round(t_rule, 1), "wall_full_rerun_s": round(t_full, 1)}
    print(json.dumps({k: v for k, v in out.items() if k != "changed"}), flush=True)
    for c in changed:
        print("  changed:", json.dumps(c), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--humaneval", type=Path, default=ROOT / ".data" / "peer" / "humaneval.jsonl")
    ap.add_argument("--feedbackeval", type=Path, default=ROOT / ".data" / "fe.jsonl")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--floor", type=float, default=None, help="loop_floor (s; default: the pool's)")
    ap.add_argument("--probe", type=float, default=None, help="loop_probe (s; default: the pool's)")
    args = ap.parse_args()
    tuned = (args.floor, args.probe)
    if args.humaneval.exists():
        asyncio.run(measure("humaneval canonical", read_instances(args.humaneval).instances,
                            "reference", args.workers, *tuned))
    else:
        print(f"skipped: {args.humaneval} (python -m bench.peer_humaneval imports it)")
    if args.feedbackeval.exists():
        asyncio.run(measure("feedbackeval erroneous", read_instances(args.feedbackeval).instances,
                            "buggy", args.workers, *tuned))
    else:
        print(f"skipped: {args.feedbackeval} (pairbench import feedbackeval "
              "HumanEval_feedback.jsonl --humaneval HumanEval.jsonl.gz --out it)")


if __name__ == "__main__":
    main()
