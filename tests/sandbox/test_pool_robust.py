"""The pool against programs that attack the evaluator itself, not the host.

A program owns its child's fd 3 (where the child writes its own report), its
stdout and its return value; none of them may hang ``pool.run``, end a worker
slot or turn into a sandbox fault. Decoding is fuzzed directly; then real
programs run through a real pool, each followed by an ordinary job on the same
pool that must pass (the pool invariant), and workers are frozen mid-job.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import json
import os
import signal
import time
from typing import Any

import msgspec
import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pairbench_async.core.types import Checker, Limits, Program, Test, TestResult, Verdict
from pairbench_async.sandbox import process as process_module
from pairbench_async.sandbox import results as results_module
from pairbench_async.sandbox.jobs import Job
from pairbench_async.sandbox.pool import SandboxConfig, SandboxPool
from pairbench_async.sandbox.results import (
    _MAX_DEPTH,
    decode_result,
)
from pairbench_async.sandbox.wire import FLAG_CONFINED, FLAG_WALL_TIMEOUT, RESULT
from tests.waiting import running_test_child, until

SANE = Program(source="a, b = map(int, input().split())\nprint(a + b)\n")
SANE_TESTS = [Test(id="sane", input="2 3\n", output="5\n")]
BOUND = 90.0  # seconds any one job may take here before the test fails instead of hanging
CORRUPT = "corrupt result report"

# -- direct decoding ----------------------------------------------------------------------

STDIO = Program(source="print(1)\n")
CALL = Program(source="def f():\n    return 1\n", kind="call", entry_point="f")
LIMITS = Limits(time_limit=1.0, memory_limit_mb=64, output_limit=4096)


@functools.cache
def _job(kind: str, trace: bool = False) -> Job:
    async def make() -> Job:  # a Job wants a running loop (for its future) only to be built
        return Job(STDIO if kind == "stdio" else CALL, [], LIMITS, Checker(), trace)

    return asyncio.run(make())


def frame(*, status: int = 0, flags: int = FLAG_CONFINED, cpu_us: int = 1000,
          wall_us: int = 2000, maxrss_kb: int = 1000, base_kb: int = 900,
          cg_peak_kb: int = -1, held_kb: int = 0, out: bytes = b"",
          err: bytes = b"", chan: bytes = b"", fault: bytes = b"",
          lens: tuple[int, int, int, int] | None = None) -> bytes:
    """A RESULT frame's payload, as a zygote sends it (``lens`` may lie)."""
    n = lens if lens is not None else (len(out), len(err), len(chan), len(fault))
    head = RESULT.pack(status, flags, cpu_us, wall_us, maxrss_kb, base_kb, cg_peak_kb, held_kb,
                        0, *n)
    return head + out + err + chan + fault


def a_test(kind: str, expected: Any = 1, output: str | None = "1\n") -> Test:
    if kind == "call":
        return Test(id="t", args=[], expected=expected)
    return Test(id="t", input="", output=output)


def decode(chan: bytes, *, kind: str = "call", expected: Any = 1, output: str | None = "1\n",
           trace: bool = False, **kw: Any) -> TestResult:
    return decode_result(_job(kind, trace), a_test(kind, expected, output), frame(chan=chan, **kw))


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, (list, dict)):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in (node.values() if isinstance(node, dict) else node))
    return deepest


def check(result: Any, payload: bytes, test: Test) -> None:
    """What every decoded result must be, whatever the bytes were."""
    assert isinstance(result, TestResult) and result.id == test.id
    assert isinstance(result.verdict, Verdict)
    if len(payload) >= RESULT.size and RESULT.unpack_from(payload)[1] & FLAG_CONFINED:
        assert result.verdict is not Verdict.SF, result
    # nothing downstream may choke on it: repr, records
    repr(result)
    again = msgspec.json.decode(msgspec.json.encode(result), type=TestResult)
    assert again.verdict is result.verdict
    if result.value is not msgspec.UNSET:
        assert _depth(result.value) <= _MAX_DEPTH
    if result.lines is not None:
        assert all(type(x) is int for x in result.lines)


class Huge:
    """An integer too long for Python's int-to-text limit, as JSON text."""

    def __init__(self, digits: int, sign: str = "") -> None:
        self.text = sign + "9" * digits


def to_json(value: Any) -> str:
    if isinstance(value, Huge):
        return value.text
    if value is None or isinstance(value, (bool, str)):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value)  # NaN and Infinity: not JSON, as a program could write
    if isinstance(value, list):
        return "[" + ",".join(to_json(v) for v in value) + "]"
    return "{" + ",".join(f"{json.dumps(k)}:{to_json(v)}" for k, v in value.items()) + "}"


SCALARS = (
    st.none() | st.booleans() | st.integers()
    | st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**30, 10**400])
    | st.builds(Huge, st.sampled_from([19, 20, 310, 4300, 4301, 5000, 50_000]),
                st.sampled_from(["", "-"]))
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20)
    | st.just({"$type": "generator"}) | st.just({"$int": "1" * 30}) | st.just({"$float": "nan"})
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=5), c, max_size=4),
    max_leaves=20,
)
REPORTS = st.fixed_dictionaries(
    {},
    optional={
        "exc": st.none() | JSON_VALUES
        | st.sampled_from(["ValueError", "MemoryError", "SystemExit", "A" * 300]),
        "value": JSON_VALUES,
        "lines": st.lists(st.integers(-3, 2**32), max_size=5) | JSON_VALUES,
        "mem": st.booleans() | JSON_VALUES,
        "unserialisable": JSON_VALUES,
    },
)
EXPECTED = (JSON_VALUES.filter(lambda v: not isinstance(v, Huge))
            | st.sampled_from([10**5000, 10**400, 1.5]))


def _nested(depth: int, open_: bytes = b"[", close: bytes = b"]") -> bytes:
    return open_ * depth + close * depth


DEEP_CHANNELS = [
    b"[" * 100_000,
    _nested(100_000),
    b'{"a":' * 100_000,
    b'{"value": ' + b"[" * 100_000 + b"}",
    b'{"value": ' + _nested(100_000) + b"}",
    b'{"exc": ' + _nested(100_000) + b"}",
    b'{"lines": ' + _nested(100_000) + b"}",
    b'{"zzz": ' + _nested(100_000) + b', "value": 1}',
    *(b'{"value": ' + _nested(d) + b"}"
      for d in (150, 200, _MAX_DEPTH - 1, _MAX_DEPTH, _MAX_DEPTH + 1, 300, 500, 900, 5000)),
    *(b'{"value": ' + b'{"a":' * d + b"1" + b"}" * d + b"}"
      for d in (_MAX_DEPTH, _MAX_DEPTH + 1, 900)),
]

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(payload=st.binary(max_size=400), kind=st.sampled_from(["stdio", "call"]),
       trace=st.booleans())
def test_decode_never_raises_on_random_payloads(payload: bytes, kind: str, trace: bool) -> None:
    test = a_test(kind)
    check(decode_result(_job(kind, trace), test, payload), payload, test)


@FUZZ
@given(
    status=st.integers(-(2**31), 2**31 - 1) | st.sampled_from([0, 1 << 8, 9, 11, 24]),
    flags=st.integers(0, 2**32 - 1)
    | st.sampled_from([FLAG_CONFINED, FLAG_CONFINED | FLAG_WALL_TIMEOUT]),
    nums=st.tuples(*[st.integers(-(2**63), 2**63 - 1) | st.integers(0, 10**7)] * 4),
    parts=st.tuples(*[st.binary(max_size=200)] * 4),
    lens=st.none() | st.tuples(*[st.integers(0, 2**32 - 1)] * 4),
    kind=st.sampled_from(["stdio", "call"]),
    trace=st.booleans(),
    output=st.none() | st.text(max_size=30),
)
def test_decode_never_raises_on_random_fields(status: int, flags: int, nums: tuple[int, ...],
                                              parts: tuple[bytes, ...], lens: Any, kind: str,
                                              trace: bool, output: str | None) -> None:
    out, err, chan, fault = parts
    payload = frame(status=status, flags=flags, cpu_us=nums[0], wall_us=nums[1], maxrss_kb=nums[2],
                    base_kb=nums[3], out=out, err=err, chan=chan, fault=fault, lens=lens)
    test = a_test(kind, output=output)
    check(decode_result(_job(kind, trace), test, payload), payload, test)


@FUZZ
@given(
    report=REPORTS | JSON_VALUES,
    kind=st.sampled_from(["stdio", "call"]),
    trace=st.booleans(),
    expected=EXPECTED,
    stdout=st.sampled_from([b"1\n", b"9" * 50_000 + b"\n", b"1.5\n", b"nan inf\n", b"\xff\xfe"]),
    output=st.sampled_from(["1\n", "9" * 50_000 + "\n", "0" + "9" * 50_000 + "\n", "1.5\n",
                            "yes\n"]),
    mangle=st.sampled_from(["", "prefix", "suffix", "truncate"]),
    status=st.sampled_from([0, 1 << 8, 9]),
)
def test_decode_never_raises_on_random_reports(report: Any, kind: str, trace: bool,
                                               expected: Any, stdout: bytes, output: str,
                                               mangle: str, status: int) -> None:
    chan = to_json(report).encode()
    if mangle == "prefix":
        chan = b"garbage" + chan
    elif mangle == "suffix":
        chan += b'{"value": 1}'
    elif mangle == "truncate":
        chan = chan[: len(chan) // 2]
    test = a_test(kind, expected, output)
    payload = frame(status=status, out=stdout, chan=chan)
    check(decode_result(_job(kind, trace), test, payload), payload, test)


@pytest.mark.parametrize("chan", DEEP_CHANNELS, ids=lambda c: f"{c[:12]!r}..{len(c)}")
@pytest.mark.parametrize("kind", ["stdio", "call"])
def test_decode_survives_deep_channels(chan: bytes, kind: str) -> None:
    test = a_test(kind)
    payload = frame(out=b"1\n", chan=chan)
    result = decode_result(_job(kind, True), test, payload)
    check(result, payload, test)
    if kind == "call" and _depth_of_text(chan) > _MAX_DEPTH:
        assert result.verdict in (Verdict.RE, Verdict.WA) and result.value is msgspec.UNSET


def _depth_of_text(chan: bytes) -> int:
    depth = deepest = 0
    for c in chan:
        depth += (c in b"[{") - (c in b"]}")
        deepest = max(deepest, depth)
    return deepest - 1  # the report object itself


def test_decode_verdicts_of_tampered_reports() -> None:
    corrupt = [b"garbage", b"\xff\x00", b"[]", b"null", b"1", b'{"exc": 5}',
               b'{"exc": "' + b"A" * 1000 + b'"}', b'{"mem": "yes"}', b'{"value": 1}{"value": 1}',
               b"[" * 100_000, b'{"value": 1', b'{"value": NaN}']
    for chan in corrupt:
        for kind in ("stdio", "call"):
            r = decode(chan, kind=kind, out=b"1\n")
            assert (r.verdict, r.error) == (Verdict.RE, CORRUPT), (chan[:30], kind, r)
    # a traced run whose lines are not a list of small ints
    for lines in (b'"x"', b"[1, -1]", b"[1, 4294967296]", b"[1.5]", b"[true]", b"{}"):
        r = decode(b'{"lines": ' + lines + b"}", kind="stdio", trace=True, out=b"1\n")
        assert (r.verdict, r.error) == (Verdict.RE, CORRUPT), lines
    # a value that cannot be compared: only the value is wrong
    for value in (b"1" * 5000, b"-" + b"1" * 4301, b"1e999", b"[1, -1e400]",
                  _nested(_MAX_DEPTH + 1), _nested(900)):
        r = decode(b'{"value": ' + value + b"}", expected=1.5)
        assert (r.verdict, r.mismatch) == (Verdict.WA, "value"), (value[:30], r)
        assert r.value is msgspec.UNSET and r.error
    # too deep for the decoder to even skip over: the whole report is corrupt
    r = decode(b'{"value": ' + _nested(100_000) + b"}", expected=1.5)
    assert (r.verdict, r.error) == (Verdict.RE, CORRUPT)
    # within range: compared as usual
    # integers past 64 bits travel as they are, up to ~3,900 digits
    for n in (2**64 - 1, 2**64, -(2**63) - 1, 10**400, -(10**4000)):
        r = decode(b'{"value": [%s]}' % str(n).encode(), expected=[n])
        assert r.verdict is Verdict.AC and r.value == [n]
    digits = "1234567890123456789012"
    assert decode(b'{"value": "%s"}' % digits.encode(), expected=digits).verdict is Verdict.AC
    # what the child's normaliser writes for a value nested deeper than it follows: kept
    value: Any = {"$error": "nesting too deep"}
    for _ in range(201):
        value = [value]
    r = decode(b'{"value": ' + json.dumps(value).encode() + b"}", expected=value)
    assert r.verdict is Verdict.AC
    # the legitimate reports still decode as before
    assert decode(b"", kind="stdio", out=b"1\n").verdict is Verdict.AC
    assert decode(b"{}", kind="stdio", out=b"1\n").verdict is Verdict.AC
    assert decode(b'{"value": 1}').verdict is Verdict.AC
    assert decode(b'{"value": null}', expected=None).verdict is Verdict.AC
    assert decode(b"{}").error == "no return value"
    r = decode(b'{"exc": "ValueError"}', status=1 << 8)
    assert (r.verdict, r.error) == (Verdict.RE, "ValueError")
    r = decode(b'{"lines": [1, 2]}', kind="stdio", trace=True, out=b"1\n")
    assert r.verdict is Verdict.AC and r.lines == [1, 2]
    r = decode(b'{"value": {"$type": "generator"}}')
    assert r.verdict is Verdict.WA and "generator" in (r.error or "")
    # the sandbox's own failure stays SF
    assert decode(b"", flags=0, fault=b"no seccomp").verdict is Verdict.SF
    # a truncated frame is corrupt, not a fault
    assert decode_result(_job("call"), Test(id="t", args=[]), frame()[:10]).verdict is Verdict.RE


def test_decode_memory_errors() -> None:
    for chan in (b'{"exc": "MemoryError"}', b'{"exc": "_ArrayMemoryError", "mem": true}',
                 b'{"exc": "OSError", "mem": true}', b'{"exc": "Boom", "mem": true}'):
        r = decode(chan, status=1 << 8)
        assert r.verdict is Verdict.MLE, chan
    r = decode(b'{"exc": "OSError", "mem": false}', status=1 << 8)
    assert (r.verdict, r.error) == (Verdict.RE, "OSError")
    r = decode(b'{"exc": "OSError"}', status=1 << 8)  # a report without the field
    assert (r.verdict, r.error) == (Verdict.RE, "OSError")


def test_decode_survives_a_comparator_that_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kw: object) -> object:
        raise RecursionError("comparator bug")

    monkeypatch.setattr(results_module, "values_equal", boom)
    monkeypatch.setattr(results_module, "compare_output", boom)
    for kind in ("stdio", "call"):
        r = decode(b'{"value": 1}' if kind == "call" else b"{}", kind=kind, out=b"1\n")
        assert (r.verdict, r.mismatch) == (Verdict.WA, "value")
        assert "RecursionError" in (r.error or "")


def test_decode_cost_stays_small() -> None:
    """The decode path runs ~1,300 times a second: a generous per-call bound."""
    job, test = _job("stdio"), Test(id="t", input="", output="1 2 3\n")
    payload = frame(out=b"1 2 3\n", chan=b"{}")
    value = [[i, i + 0.5] for i in range(100)]
    call_job, call_test = _job("call"), Test(id="t", args=[], expected=value)
    call_payload = frame(chan=b'{"value": ' + json.dumps(value).encode() + b"}")
    for j, t, p in ((job, test, payload), (call_job, call_test, call_payload)):
        assert decode_result(j, t, p).verdict is Verdict.AC
        start = time.perf_counter()
        for _ in range(2000):
            decode_result(j, t, p)
        assert (time.perf_counter() - start) / 2000 < 500e-6


# -- real programs through a real pool ----------------------------------------------------


async def run_then_sane(pool: SandboxPool, program: Program, tests: list[Test],
                        limits: Limits = Limits(time_limit=2), **kw: Any) -> list[TestResult]:
    """Run one attack, then an ordinary job on the same pool, both within BOUND."""
    results = await asyncio.wait_for(pool.run(program, tests, limits, **kw), BOUND)
    assert len(results) == len(tests)
    assert all(r.verdict is not Verdict.SF for r in results), results
    sane = await asyncio.wait_for(pool.run(SANE, SANE_TESTS), BOUND)
    assert sane[0].verdict is Verdict.AC, sane
    return results


def stdio(source: str) -> Program:
    return Program(source=source)


def call(source: str) -> Program:
    return Program(source=source, kind="call", entry_point="f")


async def test_programs_writing_their_own_report() -> None:
    corrupt = CORRUPT
    cases: list[tuple[Program, list[Test], set[Verdict], str | None, bool]] = [
        (stdio("import os\nos.write(3, b'[' * 100000)\nprint(3)\n"),
         [Test(id="deep", input="", output="3\n")], {Verdict.RE}, corrupt, False),
        (call("import os\ndef f(x):\n    os.write(3, b'[' * 100000)\n    return x\n"),
         [Test(id="deep-call", args=[1], expected=1)], {Verdict.RE}, corrupt, False),
        (stdio("import os\nos.write(3, b'\\x00\\xff garbage')\nprint(3)\n"),
         [Test(id="garbage", input="", output="3\n")], {Verdict.RE}, corrupt, False),
        (call("import os\ndef f():\n    os.write(3, b'{\"value\": 42}')\n    return 1\n"),
         [Test(id="fake-then-own", args=[], expected=42)], {Verdict.RE}, corrupt, False),
        # a well-formed forged report cannot be told from a real one: it only ever
        # misreports the program's own result
        (call("import os\ndef f():\n    os.write(3, b'{\"value\": 42}')\n    os._exit(0)\n"),
         [Test(id="forged", args=[], expected=42)], {Verdict.AC}, None, False),
        (call("import os\ndef f():\n    os.write(3, b'{\"value\": ' + b'1' * 5000 + b'}')\n"
              "    os._exit(0)\n"),
         [Test(id="huge-json", args=[], expected=1.5)], {Verdict.WA}, None, False),
        (call("import os\ndef f():\n"
              "    os.write(3, b'{\"value\": ' + b'[' * 500 + b']' * 500 + b'}')\n"
              "    os._exit(0)\n"),
         [Test(id="deep-json", args=[], expected=[])], {Verdict.WA}, None, False),
        (call("import os\ndef f():\n    os.write(3, b'{\"value\": ' + b'9' * 4301 + b'}')\n"
              "    os._exit(0)\n"),
         [Test(id="int-out-of-range", args=[], expected=1.5)], {Verdict.WA}, None, False),
        (stdio("import os\nos.write(3, b'{\"exc\": \"' + b'A' * 100000 + b'\"}')\nos._exit(0)\n"),
         [Test(id="long-exc", input="", output="")], {Verdict.RE}, corrupt, False),
        (stdio("import os\nos.write(3, b'{\"lines\": \"x\"}')\nos._exit(0)\n"),
         [Test(id="bad-lines", input="", output="")], {Verdict.RE}, corrupt, True),
        (stdio("import os\nos.write(3, b'{\"mem\": 1}')\nos._exit(0)\n"),
         [Test(id="bad-mem", input="", output="")], {Verdict.RE}, corrupt, False),
        (stdio("import os\nos.close(3)\nprint(1)\n"),
         [Test(id="closed", input="", output="1\n")], {Verdict.AC, Verdict.RE}, None, False),
    ]
    async with SandboxPool(workers=2) as pool:
        for program, tests, verdicts, error, trace in cases:
            (r,) = await run_then_sane(pool, program, tests, trace=trace)
            assert r.verdict in verdicts, (tests[0].id, r)
            if error is not None:
                assert r.error == error, (tests[0].id, r)
        assert pool.statistics().internal_errors == 0


async def test_huge_integer_tokens_on_stdout() -> None:
    digits = "9" * 50_000
    other = "8" * 50_000
    prog = stdio("print(input())\n")
    tests = [
        (Test(id="where-small", input=digits + "\n", output="1\n"), {Verdict.WA}),
        (Test(id="equal", input=digits + "\n", output=digits + "\n"), {Verdict.AC}),
        (Test(id="different", input=other + "\n", output=digits + "\n"), {Verdict.WA}),
        (Test(id="leading-zero", input="0" + digits + "\n", output=digits + "\n"),
         {Verdict.AC, Verdict.WA}),
        (Test(id="float", input=digits + "\n", output="1.5\n"), {Verdict.WA}),
        (Test(id="negative", input="-" + digits + "\n", output="-" + other + "\n"), {Verdict.WA}),
    ]
    async with SandboxPool(workers=2) as pool:
        for test, verdicts in tests:
            (r,) = await run_then_sane(pool, prog, [test])
            assert r.verdict in verdicts, (test.id, r.verdict, r.error)
        # the same tests as one job, several per chunk
        results = await run_then_sane(pool, prog, [t for t, _ in tests])
        for r, (test, verdicts) in zip(results, tests, strict=True):
            assert r.verdict in verdicts, (test.id, r.verdict, r.error)
        # a program printing it itself, where a number is expected
        (r,) = await run_then_sane(pool, stdio("print('7' * 50000)\n"),
                                   [Test(id="p", input="", output="7\n")])
        assert r.verdict is Verdict.WA


async def test_call_values_that_break_comparisons() -> None:
    cases = [
        ("def f():\n    return 10 ** 5000\n", 1.5),
        ("def f():\n    return 10 ** 400\n", 1.5),
        ("def f():\n    return -10 ** 400\n", [1.5]),
        ("def f():\n    return 1.5\n", 10**5000),
        ("def f():\n    return 1.5\n", 10**400),
        ("def f():\n    return [1.5, [2]]\n", [10**400, [2]]),
        ("def f():\n    return float('inf')\n", 10**400),
        ("def f():\n    x = []\n    for _ in range(100000):\n        x = [x]\n    return x\n", [1]),
        ("def f():\n    x = {}\n    for _ in range(100000):\n        x = {'k': x}\n"
         "    return x\n", {"k": 1}),
        ("def f():\n    x = 1\n    for _ in range(100000):\n        x = (x, 2)\n"
         "    return x\n", [[1, 2], 2]),
        ("import json\ndef f():\n    return json.loads('[' * 300 + ']' * 300)\n", []),
    ]
    async with SandboxPool(workers=2) as pool:
        for source, expected in cases:
            (r,) = await run_then_sane(pool, call(source),
                                       [Test(id="v", args=[], expected=expected)])
            assert r.verdict is Verdict.WA, (source, r.verdict, r.error)
            assert r.mismatch == "value"
            if r.value is not msgspec.UNSET:
                repr(r)
                assert _depth(r.value) <= _MAX_DEPTH
        assert pool.statistics().internal_errors == 0


async def test_memory_errors_of_every_kind_are_mle() -> None:
    sources = [
        "class Big(MemoryError):\n    pass\nraise Big('x')\n",
        f"raise OSError({errno.ENOMEM}, 'Cannot allocate memory')\n",
        "import mmap\nmmap.mmap(-1, 1 << 44)\n",
        "raise MemoryError\n",
    ]
    numpy = "import numpy\nnumpy.ones(1 << 40, dtype=numpy.uint8)\n"  # numpy's _ArrayMemoryError
    async with SandboxPool(workers=1) as pool:
        probe = await pool.run(stdio("import numpy\n"), [Test(id="probe", input="", output="")])
        if probe[0].verdict is Verdict.AC:
            sources.append(numpy)
        for source in sources:
            (r,) = await run_then_sane(pool, stdio(source), [Test(id="m", input="", output="")],
                                       Limits(time_limit=2, memory_limit_mb=128))
            assert r.verdict is Verdict.MLE, (source, r.verdict, r.error, r.stderr[-300:])
        (r,) = await run_then_sane(pool, stdio("raise OSError(5, 'io')\n"),
                                   [Test(id="io", input="", output="")])
        assert (r.verdict, r.error) == (Verdict.RE, "OSError")


# -- frozen and failing workers -------------------------------------------------------------


def _group(pool: SandboxPool) -> int:
    worker = pool._workers[0]
    assert worker is not None
    pgid = os.getpgid(worker.proc.pid)
    assert pgid == worker.proc.pid and pgid != os.getpgrp()  # the worker's own session
    return pgid


def _serving(pool: SandboxPool) -> psutil.Process:
    """The process that serves the slot's frames: the worker's init (PID 1 of its PID
    namespace, the started process's only child) when it has one, else the worker."""
    worker = pool._workers[0]
    assert worker is not None
    started = psutil.Process(worker.proc.pid)
    if worker.report.get("pidns"):
        (init,) = started.children()
        return init
    return started


async def _wait_for_worker(pool: SandboxPool) -> None:
    for _ in range(500):
        w = pool._workers[0]
        if w is not None and w.proc.returncode is None:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("no worker came back")


async def test_a_frozen_worker_group_does_not_hang_run() -> None:
    prog = stdio("import time\ntime.sleep(0.2)\nprint(int(input()) + 1)\n")
    tests = [Test(id=str(i), input=f"{i}\n", output=f"{i + 1}\n") for i in range(3)]
    limits = Limits(time_limit=0.5, wall_limit=1.0)
    async with SandboxPool(SandboxConfig(workers=1, result_grace=1.0)) as pool:
        await pool.run(SANE, SANE_TESTS)
        pgid = _group(pool)
        task = asyncio.create_task(pool.run(prog, tests, limits))
        await until(lambda: running_test_child(pool), what="a test child running")
        os.killpg(pgid, signal.SIGSTOP)  # worker, zygote and child: nothing moves
        start = time.monotonic()
        results = await asyncio.wait_for(task, 30)
        # wall + grace, a restart, and the retried tests
        assert time.monotonic() - start < 1.0 + 1.0 + 10
        assert all(r.verdict in (Verdict.AC, Verdict.SF) for r in results), results
        assert any(r.verdict is Verdict.AC for r in results)
        stats = pool.statistics()
        assert stats.worker_timeouts >= 1 and stats.worker_restarts >= 1
        assert not psutil.pid_exists(pgid) or psutil.Process(pgid).status() == psutil.STATUS_ZOMBIE
        assert (await asyncio.wait_for(pool.run(SANE, SANE_TESTS), BOUND))[0].verdict is Verdict.AC


async def test_a_frozen_worker_during_load_does_not_hang_run() -> None:
    other = stdio("print(int(input()) * 3)\n")
    async with SandboxPool(SandboxConfig(workers=1, load_grace=3.0)) as pool:
        await pool.run(SANE, SANE_TESTS)
        _serving(pool).send_signal(signal.SIGSTOP)  # the worker alone: it cannot fork a zygote
        job = pool.run(other, [Test(id="1", input="2\n", output="6\n")])
        results = await asyncio.wait_for(job, 30)
        assert results[0].verdict is Verdict.AC
        assert pool.statistics().worker_timeouts == 1
        assert (await asyncio.wait_for(pool.run(SANE, SANE_TESTS), BOUND))[0].verdict is Verdict.AC


async def test_a_frozen_zygote_does_not_hang_run() -> None:
    limits = Limits(time_limit=0.5, wall_limit=1.0)
    async with SandboxPool(SandboxConfig(workers=1, result_grace=1.0, load_grace=5.0)) as pool:
        await pool.run(SANE, SANE_TESTS, limits)  # the zygote now serves SANE with these limits
        zygotes = _serving(pool).children()
        assert zygotes
        for z in zygotes:
            z.send_signal(signal.SIGSTOP)
        tests = [Test(id=str(i), input=f"{i} 1\n", output=f"{i + 1}\n") for i in range(4)]
        start = time.monotonic()
        results = await asyncio.wait_for(pool.run(SANE, tests, limits), 30)
        assert time.monotonic() - start < 1.0 + 1.0 + 10
        assert [r.verdict for r in results] == [Verdict.AC] * 4
        assert pool.statistics().worker_timeouts == 1
        # a frozen zygote while a new program is loaded: the LOAD deadline
        zygotes = _serving(pool).children()
        for z in zygotes:
            z.send_signal(signal.SIGSTOP)
        results = await asyncio.wait_for(pool.run(SANE, tests), 30)
        assert [r.verdict for r in results] == [Verdict.AC] * 4
        assert pool.statistics().worker_timeouts == 2


async def test_an_error_while_serving_is_a_dead_worker_not_a_lost_slot(
        monkeypatch: pytest.MonkeyPatch) -> None:
    async with SandboxPool(workers=1) as pool:
        def broken(*args: object) -> TestResult:
            raise KeyError("a bug")

        monkeypatch.setattr(process_module, "decode_result", broken)
        results = await asyncio.wait_for(pool.run(SANE, SANE_TESTS * 3), BOUND)
        assert [r.verdict for r in results] == [Verdict.SF] * 3
        stats = pool.statistics()
        assert stats.internal_errors == 2 and "KeyError" in (stats.last_error or "")
        assert stats.worker_restarts == 2
        monkeypatch.undo()
        assert (await asyncio.wait_for(pool.run(SANE, SANE_TESTS), BOUND))[0].verdict is Verdict.AC


async def test_a_slot_task_that_dies_is_restarted() -> None:
    async with SandboxPool(workers=1) as pool:
        await pool.run(SANE, SANE_TESTS)
        calls = {"serve": 0, "note": 0}
        serve_chunk, note_error = pool._serve_chunk, pool._note_error

        async def failing_serve_chunk(index: int, chunk: Any) -> None:
            calls["serve"] += 1
            if calls["serve"] == 1:
                raise ValueError("bug in serving")
            await serve_chunk(index, chunk)

        def failing_note_error(message: str) -> None:  # the handler itself fails once
            calls["note"] += 1
            if calls["note"] == 1:
                raise RuntimeError("bug in the handler")
            note_error(message)

        pool._serve_chunk = failing_serve_chunk  # type: ignore[method-assign]
        pool._note_error = failing_note_error  # type: ignore[method-assign]
        first = pool._tasks[0]
        results = await asyncio.wait_for(pool.run(SANE, SANE_TESTS), BOUND)
        assert results[0].verdict is Verdict.SF  # its chunk was resolved, not lost
        assert first is not None and first.done() and pool._tasks[0] is not first
        assert (await asyncio.wait_for(pool.run(SANE, SANE_TESTS), BOUND))[0].verdict is Verdict.AC
        assert pool.statistics().internal_errors >= 1


async def test_closing_the_pool_resolves_running_jobs() -> None:
    pool = SandboxPool(workers=1)
    await pool.start()
    sleeper = stdio("import time\ntime.sleep(5)\n")
    task = asyncio.create_task(pool.run(sleeper, [Test(id="1", input="", output="")]))
    await until(lambda: running_test_child(pool), what="the test running")
    await pool.aclose()
    (r,) = await asyncio.wait_for(task, 10)
    assert r.verdict is Verdict.SF and "closed" in (r.error or "")


async def test_deadlines_do_not_fire_on_slow_but_honest_programs() -> None:
    """Tests that run up to their wall limit, and chunks whose inputs and outputs are
    far larger than a pipe, all finish with the program's own verdicts. (No loop rule: after
    the first timeout it would hold the later sleepers to its 2 ms floor of CPU, which a
    fresh child's start-up, ~2-3 ms here, reaches or not before it sleeps: TLE either way,
    'cpu' or 'wall' by a race, 3 of 8 pools 'cpu' at stop 32. The rule has its own tests.)"""
    async with SandboxPool(SandboxConfig(workers=1, result_grace=1.0, chunk=8, loop_factor=0)) as pool:
        sleeper = stdio("import time\ntime.sleep(5)\n")
        results = await asyncio.wait_for(
            pool.run(sleeper, [Test(id=str(i), input="", output="") for i in range(6)],
                     Limits(time_limit=0.5, wall_limit=0.8)), BOUND)
        assert [(r.verdict, r.timeout) for r in results] == [(Verdict.TLE, "wall")] * 6
        echo = stdio("import sys\nsys.stdout.write(sys.stdin.read())\n")
        big = "x" * (1 << 20) + "\n"
        results = await asyncio.wait_for(
            pool.run(echo, [Test(id=str(i), input=big, output=big) for i in range(16)],
                     Limits(time_limit=2, wall_limit=3)), BOUND)
        assert [r.verdict for r in results] == [Verdict.AC] * 16
        stats = pool.statistics()
        assert (stats.worker_timeouts, stats.worker_restarts, stats.sandbox_faults) == (0, 0, 0)
