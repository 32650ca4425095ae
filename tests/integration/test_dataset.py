"""Dataset files, validation and the reference-trace cache, on the bundled fixtures."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from pairbench_async.core.errors import DatasetError
from pairbench_async.datasets.files import (
    bundled_dataset,
    load_dataset,
    read_instances,
    write_instances,
)
from pairbench_async.protocol.shapes import output_shape
from pairbench_async.sandbox.pool import SandboxPool
from pairbench_async.sandbox.traces import TraceCache, _reference_key, _test_key

GOOD = {"id": "a", "problem": "add", "buggy": "print(1)\n", "reference": "print(2)\n",
        "tests": [{"id": "1", "input": "", "output": "2\n"}], "kind": "stdio", "time_limit": 1.0,
        "memory_limit_mb": 64}


def write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("row, line, field", [
    ({**GOOD, "time_limit": "2 seconds"}, 2, "time_limit"),
    ({k: v for k, v in GOOD.items() if k != "reference"}, 2, None),
    ({**GOOD, "tests": [{"id": "1", "input": "", "output": "2", "colour": 1}]}, 2, "tests[0]"),
    ({**GOOD, "tests": []}, 2, "tests"),
    ({**GOOD, "kind": "call"}, 2, "entry_point"),
    ({**GOOD, "tests": [{"id": "1", "args": [1], "expected": 2}]}, 2, "tests[0]"),
    ({**GOOD, "tests": [GOOD["tests"][0], GOOD["tests"][0]]}, 2, "tests[1].id"),
    ({**GOOD, "memory_limit_mb": 0}, 2, "memory_limit_mb"),
    (GOOD, 2, "id"),  # duplicate of line 1
    ('{"id": "x", "problem": ', 2, None),
])
def test_malformed_rows_name_file_line_and_field(tmp_path: Path, row: object, line: int, field: str | None) -> None:
    path = write(tmp_path / "d.jsonl", [GOOD, row, {**GOOD, "id": "c"}])
    with pytest.raises(DatasetError) as err:
        read_instances(path)
    assert err.value.path == str(path) and err.value.line == line
    if field is not None:
        assert err.value.field == field, str(err.value)
    assert f"{path}:{line}" in str(err.value)
    skipped = read_instances(path, skip_invalid=True)
    assert [i.id for i in skipped.instances] == ["a", "c"] and len(skipped.skipped) == 1


def test_round_trip_and_bundled_fixtures(tmp_path: Path) -> None:
    read = load_dataset()
    assert len(read.instances) >= 50 and not read.skipped
    assert {i.kind for i in read.instances} == {"stdio", "call"}
    out = tmp_path / "copy.jsonl"
    assert write_instances(out, read.instances) == len(read.instances)
    assert read_instances(out).instances == read.instances
    assert all(p.is_file() for p in bundled_dataset())


def test_every_expected_output_has_a_shape() -> None:
    shapes = {output_shape(t) for i in load_dataset().instances for t in i.tests}
    assert {"token", "line", "grid", "multiline"} <= shapes


class CountingPool:
    def __init__(self, pool: SandboxPool) -> None:
        self.pool, self.calls, self.tests = pool, 0, 0

    async def run(self, *args, **kwargs):
        self.calls += 1
        self.tests += len(args[1])
        return await self.pool.run(*args, **kwargs)


async def test_reference_traces_are_computed_once_then_served_from_disk(tmp_path: Path) -> None:
    instances = load_dataset().instances
    async with SandboxPool() as pool:
        counting = CountingPool(pool)
        first = TraceCache(tmp_path)
        traces = await asyncio.gather(*(first.traces(counting, i) for i in instances))
        # instances of one problem share their reference: each distinct (reference, test) once
        distinct = {(_reference_key(i), _test_key(t)) for i in instances for t in i.tests}
        assert counting.tests == len(distinct) < sum(len(i.tests) for i in instances)
        assert counting.calls <= len(instances)
        calls = counting.calls
        assert all(all(lines for lines in t.values()) for t in traces), "every reference test traced"
        # a new cache object on the same directory (another process, another run): no sandbox call
        second = TraceCache(tmp_path)
        again = await asyncio.gather(*(second.traces(counting, i) for i in instances))
        assert again == traces and counting.calls == calls and second.sandbox_runs == 0
        assert all(second.cached(i) is not None for i in instances)
        # a changed reference is traced again; a changed test only for that test
        inst = instances[0]
        changed = msgspec.structs.replace(inst, reference="\n" + inst.reference)
        shifted = await second.traces(counting, changed)
        assert counting.calls == calls + 1
        assert all(tuple(x + 1 for x in traces[0][k]) == v for k, v in shifted.items())
        new_test = msgspec.structs.replace(inst.tests[0], id="new", input=inst.tests[1].input)
        more = msgspec.structs.replace(inst, tests=[*inst.tests, new_test])
        before = counting.tests
        await second.traces(counting, more)
        assert counting.tests == before  # same input as test 2: already cached by content


async def test_concurrent_writers_leave_a_valid_file(tmp_path: Path) -> None:
    inst = load_dataset().instances[0]
    async with SandboxPool() as pool:
        caches = [TraceCache(tmp_path) for _ in range(4)]
        results = await asyncio.gather(*(c.traces(pool, inst) for c in caches))
    assert all(r == results[0] for r in results)
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and TraceCache(tmp_path).cached(inst) == results[0]


def test_validate_command_on_bundled_fixtures() -> None:
    proc = subprocess.run([sys.executable, "-m", "pairbench_async", "validate", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    assert summary["problems"] == 0 and summary["instances"] >= 50 and summary["tests_min"] >= 100
    assert 0.10 <= summary["buggy_pass_rate_min"] and summary["buggy_pass_rate_max"] <= 0.55


def test_validate_reports_a_broken_reference(tmp_path: Path) -> None:
    path = write(tmp_path / "d.jsonl", [GOOD, {**GOOD, "id": "broken", "reference": "print(3)\n"}])
    proc = subprocess.run([sys.executable, "-m", "pairbench_async", "validate", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "broken" in proc.stdout and "reference fails 1 of 1" in proc.stdout


CTX = {**GOOD, "id": "ctx", "problem": "Print the checksum of the ledger.",
       "buggy": "import ledger\nprint(ledger.total())\n",
       "reference": "import ledger\nprint(ledger.checksum(ledger.entries(), modulus=1000003))\n",
       "tests": [{"id": "1", "input": "ledger-7731-alpha\n", "output": "480015\n"}]}


@pytest.mark.parametrize("context, leaks", [
    ("apis: [ledger.entries, ledger.checksum]\nclasses: [Ledger]", False),  # project context: fine
    ("helper:\nprint(ledger.checksum(ledger.entries(), modulus=1000003))", True),  # a reference line
    ("see: x = print(ledger.checksum(ledger.entries(), modulus=1000003)) # inline", True),  # inside a line
    ("example input: ledger-7731-alpha", True),  # a hidden test's input
    ("the answer here is 480015", True),  # a hidden test's output
])
def test_a_context_that_quotes_hidden_data_is_refused(tmp_path: Path, context: str, leaks: bool) -> None:
    # The context reaches the candidate verbatim, so it is held to the hints' quote rules:
    # a dataset row whose context repeats the reference or a hidden test is malformed.
    path = write(tmp_path / "d.jsonl", [GOOD, {**CTX, "context": context}])
    if not leaks:
        assert [i.context for i in read_instances(path).instances] == ["", context]
        return
    with pytest.raises(DatasetError) as err:
        read_instances(path)
    assert err.value.line == 2 and err.value.field == "context" and "quote" in str(err.value)
