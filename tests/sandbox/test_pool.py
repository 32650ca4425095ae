"""The pool's own guarantees: what reaches a worker, retries, back-pressure, call tests,
tracing, anyio compatibility."""

from __future__ import annotations

import asyncio

import anyio
import msgspec
import pytest

from pairbench_async.core.types import Checker, Limits, Program, Test, Verdict
from pairbench_async.sandbox.pool import SandboxConfig, SandboxPool
from pairbench_async.sandbox.process import Worker
from tests.waiting import running_test_child, until

ADD = Program(source="a, b = map(int, input().split())\nprint(a + b)\n")


async def test_expected_outputs_never_reach_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[bytes] = []
    original = Worker.write

    def spy(self: Worker, op: int, payload: bytes = b"") -> None:
        sent.append(payload)
        original(self, op, payload)

    monkeypatch.setattr(Worker, "write", spy)
    tests = [Test(id=str(i), input=f"{i} 1\n", output=f"{i + 1} EXPECTED-CANARY\n") for i in range(20)]
    calls = [Test(id="c", args=[1], kwargs={"b": 2}, expected="EXPECTED-CANARY")]
    async with SandboxPool(workers=2) as pool:
        await pool.run(ADD, tests)
        await pool.run(Program(source="def f(a, b):\n    return a + b\n", kind="call", entry_point="f"), calls)
    assert sent and not any(b"EXPECTED-CANARY" in p for p in sent)


async def test_dead_worker_is_replaced_and_its_tests_retried() -> None:
    slow = Program(source="import time\ntime.sleep(0.3)\nprint(int(input()) + 1)\n")
    tests = [Test(id=str(i), input=f"{i}\n", output=f"{i + 1}\n") for i in range(4)]
    async with SandboxPool(workers=1) as pool:
        task = asyncio.create_task(pool.run(slow, tests))
        await until(lambda: running_test_child(pool), what="a test child running")
        pool._workers[0].proc.kill()  # mid-test
        results = await task
        assert [r.verdict for r in results] == [Verdict.AC] * 4
        assert pool.statistics().worker_restarts == 1
        # and it still serves
        assert (await pool.run(ADD, [Test(id="x", input="1 2\n", output="3\n")]))[0].verdict is Verdict.AC


async def test_a_worker_dying_twice_gives_sandbox_faults_not_program_verdicts() -> None:
    slow = Program(source="import time\ntime.sleep(0.5)\nprint(1)\n")
    async with SandboxPool(workers=1) as pool:
        task = asyncio.create_task(pool.run(slow, [Test(id="1", input="", output="1\n")]))
        killed = None
        for _ in range(2):  # each time while the test runs (the second: its retry)
            await until(lambda gone=killed: running_test_child(pool, not_of=gone),
                        what="a test child running")
            killed = pool._workers[0].proc.pid
            pool._workers[0].proc.kill()
        (result,) = await task
        assert result.verdict is Verdict.SF and "twice" in (result.error or "")
        assert pool.statistics().sandbox_faults == 1


async def test_call_tests_compare_json_values_outside_the_child() -> None:
    src = (
        "class Liar:\n    def __eq__(self, other):\n        return True\n"
        "def f(x, scale=1):\n"
        "    if x == 'liar':\n        return Liar()\n"
        "    if x == 'gen':\n        return (i for i in range(3))\n"
        "    if x == 'mutate':\n        scale.append(1)\n        return len(scale)\n"
        "    print('noise')\n"
        "    return (x * scale, [x / 3])\n"
    )
    prog = Program(source=src, kind="call", entry_point="f")
    tests = [
        Test(id="tuple", args=[2], kwargs={"scale": 3}, expected=[6, [0.6666666666666666]]),
        Test(id="int-float", args=[3], expected=[3.0, [1.0000000001]]),
        Test(id="liar", args=["liar"], expected=42),
        Test(id="gen", args=["gen"], expected=[0, 1, 2]),
        Test(id="mutate1", args=["mutate"], kwargs={"scale": []}, expected=1),
        Test(id="mutate2", args=["mutate"], kwargs={"scale": []}, expected=1),
        Test(id="wrong", args=[1], expected=[2, [0.3333333333333333]]),
    ]
    async with SandboxPool(workers=2) as pool:
        res = {r.id: r for r in await pool.run(prog, tests, Limits(time_limit=1))}
    assert res["tuple"].verdict is Verdict.AC and res["tuple"].stdout == "noise\n"
    assert res["int-float"].verdict is Verdict.AC
    assert res["liar"].verdict is Verdict.WA
    assert res["gen"].verdict is Verdict.WA and "generator" in (res["gen"].error or "")
    assert res["mutate1"].verdict is Verdict.AC and res["mutate2"].verdict is Verdict.AC
    assert res["wrong"].verdict is Verdict.WA


async def test_trace_records_only_the_programs_own_lines() -> None:
    src = "import collections\ndef f(n):\n    if n > 1:\n        return 'big'\n    return 'small'\nprint(f(int(input())))\n"
    async with SandboxPool(workers=1) as pool:
        big, small = await pool.run(Program(source=src), [Test(id="b", input="5\n", output="big\n"),
                                                         Test(id="s", input="0\n", output="small\n")],
                                    trace=True)
    assert big.lines == [1, 2, 3, 4, 6] and small.lines == [1, 2, 3, 5, 6]


async def test_compile_errors_are_runtime_errors_of_every_test() -> None:
    async with SandboxPool(workers=1) as pool:
        results = await pool.run(Program(source="def broken(:\n"), [Test(id="1", input="", output="")] * 1)
        assert results[0].verdict is Verdict.RE and results[0].error == "SyntaxError"
        assert (await pool.run(ADD, [Test(id="x", input="1 2\n", output="3\n")]))[0].verdict is Verdict.AC


async def test_many_concurrent_jobs_respect_back_pressure() -> None:
    async with SandboxPool(SandboxConfig(workers=2, max_jobs=3)) as pool:
        jobs = [pool.run(Program(source=f"print(int(input()) + {k})\n"),
                         [Test(id=str(i), input=f"{i}\n", output=f"{i + k}\n") for i in range(5)])
                for k in range(40)]
        out = await asyncio.gather(*jobs)
    assert all(r.verdict is Verdict.AC for res in out for r in res)
    assert pool.statistics().jobs_done == 40


def test_pool_runs_under_anyio() -> None:
    async def main() -> list[Verdict]:
        async with SandboxPool(workers=1) as pool:
            return [r.verdict for r in await pool.run(ADD, [Test(id="1", input="2 2\n", output="4\n")])]

    assert anyio.run(main, backend="asyncio") == [Verdict.AC]


def test_results_are_msgspec_round_trippable() -> None:
    async def main():
        async with SandboxPool(workers=1) as pool:
            return await pool.run(ADD, [Test(id="1", input="2 2\n", output="5\n")], checker=Checker(mode="exact"))

    (r,) = asyncio.run(main())
    again = msgspec.json.decode(msgspec.json.encode(r), type=type(r))
    assert again == r and r.verdict is Verdict.WA and r.mismatch == "value"
