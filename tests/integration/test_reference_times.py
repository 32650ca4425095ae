"""A run's reference check times each reference (its own CPU time per test), and the
evaluator gives those times to the tests whose file has none, so that the sandbox's loop
rule stops a looping program at its probe instead of its own limit (issue 23)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pairbench_async.core.types import Instance, Verdict
from pairbench_async.datasets.files import read_instances
from pairbench_async.models.sim import LOOP_LINE
from pairbench_async.runner.references import check_references
from pairbench_async.runner.shared import SharedWork
from pairbench_async.sandbox.pool import SandboxPool

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _two() -> list[Instance]:
    """One call instance (own limit 1 s) and one stdio instance (own limit 2 s)."""
    call = read_instances(FIXTURES / "call.jsonl").instances[0]
    stdio = read_instances(FIXTURES / "stdio.jsonl").instances[0]
    return [call, stdio]


async def test_the_check_times_every_test_and_caches_the_times(tmp_path: Path) -> None:
    instances = _two()
    assert all(t.ref_ms is None for i in instances for t in i.tests)  # the files give none
    async with SandboxPool(workers=2) as pool:
        first = await check_references(instances, pool, cache_dir=tmp_path)
        again = await check_references(instances, pool, cache_dir=tmp_path)
    assert not first.cached and again.cached
    assert set(first.ref_ms) == {i.id for i in instances}
    for inst in instances:
        times = first.ref_ms[inst.id]
        assert len(times) == len(inst.tests)
        # the reference's own time: well under a test's ~1 ms fixed cost for these
        assert all(0 <= t < 50 for t in times), times
    assert again.ref_ms == first.ref_ms


async def test_a_looping_program_stops_at_the_probe_with_the_measured_times(tmp_path: Path) -> None:
    inst = _two()[1]  # stdio, own limit 2 s
    program = LOOP_LINE + inst.reference
    async with SandboxPool(workers=2) as pool:
        check = await check_references([inst], pool, cache_dir=tmp_path)
        timed = SharedWork(lambda: pool, lambda n: None, check.ref_ms)
        assert all(t.ref_ms is not None for t in timed.tests_of(inst))
        assert inst.tests[0].ref_ms is None  # the instance itself is left as it is
        async with asyncio.timeout(120):  # a deadline, not a measurement
            results, _ = await timed.evaluate(inst, program)
    assert {r.verdict for r in results.values()} == {Verdict.TLE}
    # the first timeout of each worker at the 0.1 s probe, not the instance's 2 s; the
    # others at 2 ms + 10 x the reference's time
    assert max(r.cpu_ms for r in results.values()) < 1000
    assert sorted(r.cpu_ms for r in results.values())[-3] < 100


async def test_without_times_the_first_timeout_is_the_own_limit() -> None:
    inst = _two()[0]  # call, own limit 1 s
    untimed = None
    async with SandboxPool(workers=1) as pool:
        untimed = SharedWork(lambda: pool, lambda n: None)
        async with asyncio.timeout(120):
            results, _ = await untimed.evaluate(inst, LOOP_LINE + inst.reference)
    assert {r.verdict for r in results.values()} == {Verdict.TLE}
    assert max(r.cpu_ms for r in results.values()) >= 0.6 * inst.limits.time_limit * 1000


def test_a_run_records_its_check_and_a_resume_uses_it(tmp_path: Path) -> None:
    """`references.json` in the run folder holds the check the run used; a resume reads it
    back instead of checking again (another machine, or a lost cache, gives the same bounds)."""
    import json
    import os
    import subprocess
    import sys

    out = tmp_path / "run"
    root = Path(__file__).resolve().parents[2]

    def run(cache: Path, *extra: str) -> None:
        env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
        subprocess.run([sys.executable, "-m", "pairbench_async", "run", "--out", str(out), "--limit", "2",
                        "--turns", "1", "--no-progress", "-q", *extra],
                       cwd=root, env=env, check=True, stdout=subprocess.DEVNULL, timeout=300)

    run(tmp_path / "cache1")
    recorded = json.loads((out / "references.json").read_text())
    assert recorded["failed"] == {} and len(recorded["ref_ms"]) == 2
    assert any((tmp_path / "cache1").rglob("*.json"))  # the first run checked (and cached)
    # a resume with an empty cache: no check runs (nothing is cached there), the folder's is used
    run(tmp_path / "cache2", "--resume")
    assert not any((tmp_path / "cache2").rglob("references/*.json"))
    assert json.loads((out / "references.json").read_text()) == recorded


def test_a_recorded_check_for_another_dataset_is_not_used(tmp_path: Path) -> None:
    from pairbench_async.runner.references import ReferenceCheck, record_check, recorded_check

    call, stdio = _two()
    check = ReferenceCheck(kept=[call], failed={stdio.id: {"001": "WA"}}, ref_ms={call.id: [0.1]})
    record_check(check, [call, stdio], tmp_path)
    again = recorded_check([call, stdio], tmp_path)
    assert again is not None and [i.id for i in again.kept] == [call.id] and again.failed == check.failed
    assert again.ref_ms == {call.id: [0.1]}
    assert recorded_check([call], tmp_path) is None  # another dataset: checked again
    (tmp_path / "references.json").write_text("{not json")
    assert recorded_check([call, stdio], tmp_path) is None
