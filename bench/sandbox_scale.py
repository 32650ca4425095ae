"""Sandbox throughput through Ray vs the local pool on the same cores, side by side in one run.

    python -m bench.sandbox_scale [--jobs 40] [--tests 100] [--rounds 2] [--json]

Jobs of ``--tests`` trivial stdin/stdout tests each (one actor call per job: Ray's
per-job overhead is paid per ~100 tests), all submitted at once, fully confined:
  local       SandboxPool(workers=CORES) in this process
  ray-1       RaySandbox on a cluster_utils.Cluster of 1 node with CORES CPUs
  ray-2       RaySandbox on a cluster of 2 simulated nodes with CORES/2 CPUs each
With a cluster up, local and Ray rounds alternate and each Ray round is divided by the
local round right before it (the machine is shared: neighbours' load moves both
alike); medians are printed, and the round ratios with --json. The clusters are simulated on this
machine: the same cores, so this measures Ray's overhead, not a gain from more nodes.

Safety: as root it re-runs itself inside a fresh network namespace with only loopback
(``unshare -n``); every Ray address is bound to 127.0.0.1 in any case; ``RAY_TMPDIR``
is a directory of its own, removed at the end; usage stats off; it stops the clusters
it started (never ``ray stop``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # python bench/sandbox_scale.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.netns import in_private_netns, loopback_up, netns_command
from pairbench_async.core.types import Program, Test

PROGRAM = "a, b = map(int, input().split())\nprint(a + b)\n"


def make_jobs(jobs: int, tests: int) -> list[tuple[Program, list[Test]]]:
    # a distinct program per job (a comment), as a sweep's programs are: nothing is cached
    return [(Program(source=PROGRAM + f"# {j}\n"),
             [Test(id=str(i), input=f"{i} {j}\n", output=f"{i + j}\n") for i in range(tests)])
            for j in range(jobs)]


async def throughput(sandbox: Any, jobs: list[tuple[Program, list[Test]]]) -> float:
    await sandbox.run(*jobs[0])  # warm: workers started, first program loaded
    t0 = time.perf_counter()
    results = await asyncio.gather(*(sandbox.run(p, t) for p, t in jobs))
    elapsed = time.perf_counter() - t0
    bad = sum(r.verdict.value != "AC" for rs in results for r in rs)
    if bad:
        raise SystemExit(f"{bad} tests did not pass: the benchmark is broken")
    return sum(len(t) for _, t in jobs) / elapsed


async def side_by_side(cores: int, jobs: list[tuple[Program, list[Test]]],
                       rounds: int) -> dict[str, Any]:
    """Local and Ray rounds in turn (both open, only one running), so that a neighbour's
    load falls on both alike; the ratio of each round's pair, and its median."""
    from pairbench_async.cluster.ray_sandbox import RaySandbox
    from pairbench_async.sandbox.pool import SandboxPool

    local_rates, ray_rates = [], []
    cpu: dict[str, float] = {}
    async with SandboxPool(workers=cores) as pool, RaySandbox() as sandbox:
        actors = {info.pid for info in sandbox.nodes().values()}
        for _ in range(rounds):
            local_rates.append(await throughput(pool, jobs))
            before = cpu_by_role(actors)
            ray_rates.append(await throughput(sandbox, jobs))
            for role, seconds in cpu_by_role(actors).items():
                cpu[role] = cpu.get(role, 0.0) + seconds - before.get(role, 0.0)
        info = {"nodes": len(sandbox.nodes()), "workers": sandbox.workers}
    tests = rounds * (len(jobs) + 1) * len(jobs[0][1])
    info["cpu_ms_per_1000_tests"] = {k: round(v / tests * 1e6) for k, v in sorted(cpu.items())}
    ratios = sorted(r / b for r, b in zip(ray_rates, local_rates, strict=True))
    return {"local_tests_per_s": round(statistics.median(local_rates)),
            "ray_tests_per_s": round(statistics.median(ray_rates)),
            "ratio": round(statistics.median(ratios), 3),
            "ratios": [round(r, 3) for r in ratios], **info}


def cpu_by_role(actors: set[int]) -> dict[str, float]:
    """CPU seconds so far of this process (the driver), the node actors (each hosting a
    pool's event loop), the sandbox workers under them (their test children included
    once reaped) and Ray's own daemons and idle workers: where a Ray round's time goes."""
    import psutil

    me = psutil.Process()
    out = {"driver": sum(me.cpu_times()[:2])}
    for proc in me.children(recursive=True):
        try:
            times = proc.cpu_times()
            parent = proc.ppid()
        except psutil.Error:
            continue
        if proc.pid in actors:
            role, own = "actors", times.user + times.system
        elif parent in actors:
            role, own = "sandbox", sum(times[:4])  # with the zygotes' and children's
        else:
            role, own = "ray daemons", times.user + times.system
        out[role] = out.get(role, 0.0) + own
    return out


def with_cluster(nodes: int, cpus: int, jobs: list[tuple[Program, list[Test]]],
                 rounds: int) -> dict[str, Any]:
    import ray
    from ray.cluster_utils import Cluster

    node = {"num_cpus": cpus, "node_ip_address": "127.0.0.1", "object_store_memory": 100 << 20}
    t0 = time.perf_counter()
    cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False})
    try:
        for _ in range(nodes - 1):
            cluster.add_node(**node)
        ray.init(address=cluster.address, logging_level=logging.WARNING, log_to_driver=False)
        started = time.perf_counter() - t0
        return {**asyncio.run(side_by_side(nodes * cpus, jobs, rounds)),
                "cluster_start_s": round(started, 1)}
    finally:
        ray.shutdown()
        cluster.shutdown()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--tests", type=int, default=100, help="tests per job (one actor call)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="local and Ray rounds in turn per setting; medians reported")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if os.environ.get("RAY_TMPDIR") is None or (os.geteuid() == 0 and not in_private_netns()
                                                and shutil.which("unshare")):
        return _rerun_isolated()
    if in_private_netns():
        loopback_up()
    cores = len(os.sched_getaffinity(0))
    jobs = make_jobs(args.jobs, args.tests)
    rows: list[dict[str, Any]] = []
    for name, nodes in (("ray-1", 1), ("ray-2", 2)):
        if cores % nodes:
            continue
        rows.append({"setting": name, **with_cluster(nodes, cores // nodes, jobs, args.rounds)})
    out = {"cores": cores, "jobs": args.jobs, "tests_per_job": args.tests, "netns": in_private_netns(),
           "rows": rows}
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"{args.jobs} jobs x {args.tests} trivial tests, confined, {cores} cores; "
          f"{'loopback-only network namespace' if out['netns'] else 'bound to 127.0.0.1'}")
    print(f"{'setting':8} {'nodes':>5} {'workers':>7} {'local t/s':>10} {'ray t/s':>8} {'ray/local':>9}"
          f" {'overhead/call':>13} {'cluster start':>13}")
    for r in rows:
        # the throughput Ray cost, as time per call (one call per job of --tests tests)
        per_call = args.tests / r["local_tests_per_s"] * (1 / r["ratio"] - 1) * 1000
        print(f"{r['setting']:8} {r['nodes']:>5} {r['workers']:>7} {r['local_tests_per_s']:>10} "
              f"{r['ray_tests_per_s']:>8} {r['ratio']:>9.3f} {per_call:>10.1f} ms "
              f"{r['cluster_start_s']:>11.1f} s   rounds {r['ratios']}")
    for r in rows:
        print(f"{r['setting']}: CPU ms per 1000 tests in the Ray rounds: {r['cpu_ms_per_1000_tests']}")
    return 0


def _rerun_isolated() -> int:
    """This script again, with a RAY_TMPDIR of its own and, as root, in a loopback-only netns."""
    tmp = tempfile.mkdtemp(prefix="pbray-", dir="/tmp")  # Ray's socket paths must stay short
    try:
        cmd, marker = netns_command([sys.executable, "-m", "bench.sandbox_scale", *sys.argv[1:]])
        env = {**os.environ, **marker, "RAY_TMPDIR": tmp, "RAY_USAGE_STATS_ENABLED": "0"}
        return subprocess.run(cmd, env=env, cwd=Path(__file__).resolve().parents[1]).returncode
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
