"""The Ray cluster scenario: a 2-node ``ray.cluster_utils.Cluster`` on this machine, faults included.

Run by ``test_ray_cluster.py`` as its own process (``python scenario.py OUT.json``), inside a
fresh network namespace with only loopback (``unshare -n``, when root) and with every Ray
address bound to 127.0.0.1 in any case, with ``RAY_TMPDIR`` under the test's directory and
usage stats off. It never calls ``ray stop``: it shuts down the cluster it started and
writes down the pid (and start time) of every process it saw, so the test can check by
pid that none is left. Phases, each a fact in OUT.json:

1. the same sweep on the local pool (the reference records);
2. ``pairbench run --sandbox ray --ray-address ADDR`` on the cluster (same seed);
3. the sweep through an ``Evaluator`` with a ``RaySandbox``, the worker node removed
   (SIGKILL, no grace) mid-sweep;
4. a node that joins later gets work;
5. a node's actor frozen (SIGSTOP): the sandbox's own heartbeat gives it up;
6. a node's actor SIGKILLed mid-test: no worker, zygote or test child survives it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import msgspec  # noqa: E402
import psutil  # noqa: E402

from bench.netns import in_private_netns, loopback_up  # noqa: E402
from pairbench_async.core.types import Program, Test  # noqa: E402

DATASET = ROOT / "fixtures" / "stdio.jsonl"
INSTANCES = 6
SWEEP = ["--dataset", str(DATASET), "--limit", str(INSTANCES), "--turns", "4", "--seed", "7",
         "--candidate", "sim:0.3", "sim:0.8", "--concurrency", "16"]
NODE = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "object_store_memory": 80 * 1024 * 1024}


def normalised(out: Path) -> list[dict[str, Any]]:
    """A run's records without what may differ between two runs: timings and the run id."""
    rows = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines() if line]
    for row in rows:
        row.pop("run_id", None)
        row.pop("sandbox_ms", None)
        for call in row.get("calls", []):
            call.pop("latency_ms", None)
    return sorted(rows, key=lambda r: (r["episode_id"], r["kind"], r.get("turn", -1)))


def tree(pid: int) -> list[list[float]]:
    """[pid, start time] of a process and every descendant, for a check by pid later."""
    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return []
    out = []
    for p in procs:
        try:
            out.append([p.pid, p.create_time()])
        except psutil.Error:
            pass
    return out


def alive(entries: list[list[float]]) -> list[int]:
    left = []
    for pid, created in entries:
        try:
            p = psutil.Process(int(pid))
            if p.create_time() == created and p.status() != psutil.STATUS_ZOMBIE:
                left.append(int(pid))
        except psutil.Error:
            pass
    return left


def wait_gone(entries: list[list[float]], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := alive(entries)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def levels_below(pid: int) -> int:
    """How deep the process tree below ``pid`` goes (0: no child)."""
    try:
        children = psutil.Process(pid).children()
    except psutil.Error:
        return 0
    return max((1 + levels_below(c.pid) for c in children), default=0)


async def poll(condition: Any, seconds: float) -> bool:
    """Wait until ``condition()`` holds, at most ``seconds`` (the facts then say whether)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


AWKWARD_CALL = Program(source="def f(n):\n    return 2 ** n\n", kind="call", entry_point="f")
AWKWARD_CALL_TESTS = [Test(id="b10", args=[10], expected=1024), Test(id="b70", args=[70], expected=2**70),
                      Test(id="b70-wrong", args=[70], expected=2**80), Test(id="b70-0", args=[70], expected=0)]
AWKWARD_STDIO = [
    (Program(source="print('x')  # \ud800\n"), [Test(id="s", input="1\n", output="x\n")]),
    (Program(source="print('y')\n"), [Test(id="\udcff", input="\ud800\n", output="\ud800\n")]),
    (Program(source="print('z' * 3_000_000)\n"), [Test(id="huge", input="", output="z\n")]),
]


async def awkward(sandbox: Any) -> list[list[Any]]:
    """Verdicts of programs and tests plain msgpack cannot carry (ints beyond 64 bits, lone
    surrogates, a huge output): a Ray sandbox must give what the local pool gives."""
    runs = [(AWKWARD_CALL, AWKWARD_CALL_TESTS), *AWKWARD_STDIO]
    out = []
    for program, tests in runs:
        for r in await sandbox.run(program, tests):
            out.append([r.id.encode("utf-8", "surrogatepass").hex(), r.verdict.value, r.error,
                        repr(r.value), len(r.stdout)])
    return out


class Counting:
    """A sandbox wrapper that checks every job gets exactly one result per test, in order."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.jobs = 0
        self.tests = 0
        self.mismatched = 0
        self.faults = 0
        self.fault_errors: list[str] = []  # why, for the test's message

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def run(self, program: Program, tests: Any, *args: Any, **kw: Any) -> Any:
        results = await self.inner.run(program, tests, *args, **kw)
        self.jobs += 1
        self.tests += len(tests)
        self.mismatched += [r.id for r in results] != [t.id for t in tests]
        self.faults += sum(r.verdict.value == "SF" for r in results)
        self.fault_errors += [str(r.error) for r in results if r.verdict.value == "SF"]
        return results


async def sweep(sandbox: Any, out: Path, *, during: Any = None) -> Any:
    from pairbench_async.datasets.files import load_dataset
    from pairbench_async.runner.evaluator import Evaluator, RunConfig
    from pairbench_async.sandbox.traces import TraceCache

    instances = load_dataset([str(DATASET)]).instances[:INSTANCES]
    config = RunConfig(candidates=["sim:0.3", "sim:0.8"], turns=4, seed=7, concurrency=16)
    ev = Evaluator(config, out_dir=out, sandbox=sandbox, trace_cache=TraceCache(out / "traces"),
                   dataset_paths=[str(DATASET)])
    async with ev:
        side = asyncio.create_task(during()) if during else None
        async for _ in ev.run(instances):
            pass
        if side is not None:
            await side
    return ev.statistics()


async def cluster_phases(cluster: Any, work: Path, facts: dict[str, Any], seen: list[list[float]]) -> None:
    from pairbench_async.cluster.options import RayOptions
    from pairbench_async.cluster.ray_sandbox import RaySandbox

    options = RayOptions(heartbeat_s=0.5, heartbeat_timeout_s=3.0, discover_s=1.0, node_wait_s=60)
    sandbox = Counting(RaySandbox(options=options))
    await sandbox.start()  # serves once one node is ready; the other joins when its pool is up
    try:
        t0 = time.monotonic()
        while len(sandbox.nodes()) < 2 and time.monotonic() - t0 < 30:
            await asyncio.sleep(0.1)
        nodes = sandbox.nodes()
        facts["nodes_at_start"] = len(nodes)
        facts["worker_threading"] = [n.confinement.get("threading") for n in nodes.values()]
        facts["worker_modules"] = [n.confinement.get("modules") for n in nodes.values()]
        for info in nodes.values():
            seen.extend(tree(info.pid))
        (victim,) = cluster.worker_nodes
        victim_raylet = victim.all_processes["raylet"][0].process.pid
        victim_tree = tree(victim_raylet)
        seen.extend(victim_tree)
        victim_ids = [nid for nid, info in nodes.items() if info.pid in {p for p, _ in victim_tree}]
        facts["victim_found"] = len(victim_ids) == 1

        # the awkward programs: the same verdicts as the local pool, no node lost
        facts["awkward_ray"] = await awkward(sandbox.inner)  # uncounted: one is SF locally too
        facts["awkward_nodes_lost"] = sandbox.statistics().nodes_lost
        facts["awkward_retries"] = sandbox.statistics().retries

        async def kill_mid_sweep() -> None:
            # once the victim node has batches in flight and the sweep has run a while
            t0 = time.monotonic()
            while time.monotonic() - t0 < 30:
                if sandbox.jobs >= 4 and any(sandbox.in_flight().get(n, 0) for n in victim_ids):
                    break
                await asyncio.sleep(0.01)
            facts["victim_in_flight_at_kill"] = sum(sandbox.in_flight().get(n, 0) for n in victim_ids)
            snapshot = tree(victim_raylet)
            seen.extend(snapshot)
            facts["victim_processes_at_kill"] = len(snapshot)
            await asyncio.to_thread(cluster.remove_node, victim, False)
            facts["victim_left_after_5s"] = await asyncio.to_thread(wait_gone, snapshot, 5)

        t0 = time.monotonic()
        stats = await sweep(sandbox, work / "ray-kill", during=kill_mid_sweep)
        facts["kill_sweep_s"] = round(time.monotonic() - t0, 1)
        facts["kill_run_statistics"] = msgspec.to_builtins(stats)
        facts["kill_records_equal"] = normalised(work / "local") == normalised(work / "ray-kill")
        facts["kill_jobs"] = sandbox.jobs
        facts["kill_mismatched"] = sandbox.mismatched
        facts["kill_faults"] = sandbox.faults
        facts["kill_fault_errors"] = sandbox.fault_errors[:5]

        # 4. a node that joins later gets work
        late = cluster.add_node(**NODE)  # Ray sets signal handlers: the main thread only
        late_raylet = late.all_processes["raylet"][0].process.pid
        t0 = time.monotonic()
        late_id = None
        while time.monotonic() - t0 < 30 and late_id is None:
            await asyncio.sleep(0.2)
            pids = {p for p, _ in tree(late_raylet)}
            late_id = next((nid for nid, i in sandbox.nodes().items() if i.pid in pids), None)
        facts["late_node_joined_s"] = round(time.monotonic() - t0, 1)
        slow = Program(source="import time\nx = int(input())\ntime.sleep(0.05)\nprint(x * 2)")
        tests = [Test(id=f"t{i}", input=f"{i}\n", output=f"{2 * i}\n") for i in range(20)]
        runs = [sandbox.run(Program(source=slow.source + f"\n# {k}"), tests) for k in range(6)]
        results = await asyncio.gather(*runs)
        facts["late_all_ac"] = all(r.verdict.value == "AC" for rs in results for r in rs)

        def late_tests() -> int:
            stats = sandbox.node_statistics().get(late_id) if late_id else None
            return stats.tests_run if stats is not None else 0

        await poll(lambda: late_tests() > 0, 10)  # a heartbeat brings the counters
        per_node = sandbox.node_statistics()
        facts["late_node_tests"] = per_node[late_id].tests_run if late_id in per_node else 0
        for info in sandbox.nodes().values():
            seen.extend(tree(info.pid))

        # 5. a frozen actor (SIGSTOP): the heartbeat gives it up, its batches run elsewhere
        frozen = sandbox.nodes()[late_id].pid if late_id else None
        before = sandbox.statistics().retries
        runs = [sandbox.run(Program(source=slow.source + f"\n# f{k}"), tests) for k in range(6)]
        task = asyncio.gather(*runs)
        # frozen while it holds batches
        facts["frozen_held_batches"] = await poll(
            lambda: late_id is None or sandbox.in_flight().get(late_id, 0) > 0, 30)
        frozen_tree = tree(frozen) if frozen else []
        seen.extend(frozen_tree)
        if frozen:
            os.kill(frozen, signal.SIGSTOP)
        t0 = time.monotonic()
        results = await asyncio.wait_for(task, 60)
        facts["frozen_run_s"] = round(time.monotonic() - t0, 1)
        facts["frozen_all_ac"] = all(r.verdict.value == "AC" for rs in results for r in rs)
        facts["frozen_retries"] = sandbox.statistics().retries - before
        if frozen:
            os.kill(frozen, signal.SIGCONT)  # so that the kill the sandbox sent it lands
        facts["frozen_left_after_10s"] = await asyncio.to_thread(wait_gone, frozen_tree, 10)

        # 6. an actor SIGKILLed mid-test: nothing of its pool survives it
        hang = Program(source="import time\ninput()\ntime.sleep(1)\nprint(0)")
        one = [Test(id="h", input="1\n", output="0\n")]
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30 and not sandbox.nodes():
            await asyncio.sleep(0.2)
        target_id, target = next(iter(sandbox.nodes().items()))
        task = asyncio.ensure_future(sandbox.run(hang, one))
        # the test child is running: actor -> worker (-> its init) -> zygote -> child
        chain = 4 if target.confinement.get("pidns") else 3
        facts["killed_actor_mid_test"] = await poll(lambda: levels_below(target.pid) >= chain, 30)
        snapshot = tree(target.pid)
        seen.extend(snapshot)
        facts["killed_actor_processes"] = len(snapshot)
        os.kill(target.pid, signal.SIGKILL)
        facts["killed_actor_left_after_3s"] = await asyncio.to_thread(wait_gone, snapshot, 3)
        results = await asyncio.wait_for(task, 60)
        facts["killed_actor_result"] = [r.verdict.value for r in results]
        facts["final_statistics"] = msgspec.to_builtins(sandbox.statistics())
    finally:
        for info in sandbox.nodes().values():
            seen.extend(tree(info.pid))
        await sandbox.aclose()


def main(out_json: str) -> int:
    logging.basicConfig(level=logging.WARNING)
    facts: dict[str, Any] = {"netns": in_private_netns()}
    seen: list[list[float]] = []
    work = Path(out_json).parent
    if facts["netns"]:
        loopback_up()
    try:
        # 1. the reference: the same sweep on the local pool
        from pairbench_async.sandbox.pool import SandboxPool

        async def local() -> None:
            async with SandboxPool(workers=2) as pool:
                facts["local_worker_modules"] = pool.confinement().get("modules")
                facts["awkward_local"] = await awkward(pool)
                await sweep(pool, work / "local")

        t0 = time.monotonic()
        asyncio.run(local())
        facts["local_sweep_s"] = round(time.monotonic() - t0, 1)

        import ray
        from ray.cluster_utils import Cluster

        t0 = time.monotonic()
        cluster = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False})
        try:
            cluster.add_node(**NODE)
            facts["cluster_start_s"] = round(time.monotonic() - t0, 1)
            for node in (cluster.head_node, *cluster.worker_nodes):
                for procs in node.all_processes.values():
                    seen.extend(tree(procs[0].process.pid))
            listening = subprocess.run(["ss", "-Htlnp"], capture_output=True, text=True).stdout
            facts["listening_not_loopback"] = [
                line for line in listening.splitlines()
                if not any(a in line.split()[3] for a in ("127.0.0.1", "[::1]"))]

            # 2. the command line, same seed, on the cluster
            t0 = time.monotonic()
            cli = subprocess.run(
                [sys.executable, "-m", "pairbench_async", "run", *SWEEP, "-q", "--no-progress",
                 "--sandbox", "ray", "--ray-address", cluster.address, "--out", str(work / "ray-cli")],
                capture_output=True, text=True, cwd=ROOT, timeout=180)
            facts["cli_s"] = round(time.monotonic() - t0, 1)
            facts["cli_exit"] = cli.returncode
            facts["cli_stderr"] = cli.stderr[-2000:]
            # the same parameters as the local sweep of phase 1 (RunConfig's defaults otherwise)
            facts["cli_records_equal"] = (cli.returncode == 0 and
                                          normalised(work / "ray-cli") == normalised(work / "local"))
            facts["cli_records"] = len(normalised(work / "ray-cli")) if cli.returncode == 0 else 0

            ray.init(address=cluster.address, logging_level=logging.WARNING, log_to_driver=False)
            asyncio.run(cluster_phases(cluster, work, facts, seen))
        finally:
            for node in (cluster.head_node, *cluster.worker_nodes):
                if node is not None:
                    for procs in node.all_processes.values():
                        seen.extend(tree(procs[0].process.pid))
            seen.extend(tree(os.getpid())[1:])  # every descendant still here (Ray's workers too)
            ray.shutdown()
            cluster.shutdown()
    except BaseException as exc:
        import traceback

        facts["error"] = "".join(traceback.format_exception(exc))[-4000:]
    facts["seen_processes"] = seen
    Path(out_json).write_text(json.dumps(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
