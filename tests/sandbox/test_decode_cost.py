"""What one result may cost the evaluator: bounded by what a legitimate answer needs.

A program writes its own stdout (up to ``Limits.output_limit``) and its own report on
fd 3 (up to 16 MiB), both decoded in the evaluator's event loop. Each attack here runs
through a real pool in a fresh interpreter (so that ``ru_maxrss`` measures this attack
alone), several tests per job, and is followed there by an ordinary job that must
pass. Asserted, generously for a loaded 2-core machine: wall time per test, time
spent decoding one result, the longest stall of the event loop, growth of the peak
RSS, and what the results keep. Before the bounds, the first attack took ~2.5 s per
test in the event loop and 1.7 GB for 6 tests.

Run one attack by hand: ``python tests/sandbox/test_decode_cost.py NAME``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

MIB = 1 << 20
TESTS_PER_JOB = 4
WALL_PER_TEST = 0.5  # seconds; ~0.05 measured (the program's own run included)
DECODE_PER_RESULT = 0.3  # seconds; ~0.1 at most measured (8 MiB of invalid UTF-8)
LOOP_STALL = 0.5  # seconds
RSS_GROWTH_MB = 200  # ~20-90 measured (the frames themselves are 8-16 MiB each)
KEEP = 64 * 1024

LEGIT_INTS = list(range(50_000))


def _writes(value: str) -> str:
    """A call program that writes its own report: {"value": <value>}, then exits."""
    return ("import os\ndef solve(x):\n"
            f"    v = {value}\n"
            "    os.write(3, b'{\"value\": ' + v + b'}')\n"
            "    os._exit(0)\n")


def _prints(expr: str) -> str:
    """A stdio program that writes ``expr`` (bytes) to its stdout."""
    return f"import sys\nsys.stdout.buffer.write({expr})\n"


def _returns(expr: str) -> str:
    return f"def solve(x):\n    return {expr}\n"


DICTS = "b'{\"a\":{},\"b\":[{}]},'"
EMOJI = "\U0001f600".encode()

# name: (kind, source, expected (call) or output (stdio), trace)
ATTACKS: dict[str, tuple[str, str, Any, bool]] = {
    # the attacker's program: 8 MB of nested empty lists against a small expected value
    "lists": ("call", _writes("b'[' + b'[[]],' * ((8 << 20) // 5 - 10) + b'[[]]]'"), 5, False),
    # small enough for a large expected value's size bound, too many items for it
    "lists-vs-large-expected": ("call", _writes("b'[' + b'[[]],' * 800_000 + b'[[]]]'"),
                                LEGIT_INTS, False),
    "dicts": ("call", _writes(f"b'[' + {DICTS} * ((8 << 20) // 18) + b'1]'"), 5, False),
    "dicts-vs-large-expected": ("call", _writes(f"b'[' + {DICTS} * 200_000 + b'1]'"),
                                LEGIT_INTS, False),
    "long-string": ("call", _writes("b'\"' + b'x' * ((8 << 20) - 100) + b'\"'"), "x" * 10, False),
    "ints": ("call", _writes("b'[' + b'1,' * ((8 << 20) // 2 - 10) + b'1]'"), 5, False),
    # within both bounds: decoded and compared, a WA; too long to be kept
    "ints-decoded-not-kept": ("call", _returns("[1] * 100_000"), LEGIT_INTS, False),
    "long-string-decoded-not-kept": ("call", _returns("'y' * (4 << 20)"), "x" * (1 << 20), False),
    # legitimate large values: still accepted, and kept
    "legit-list": ("call", _returns("list(range(50_000))"), LEGIT_INTS, False),
    # near the worst case of the size bound: 0 written back as a 22-character float
    "legit-floats": ("call", _returns("[-5.555555555555555e-09] * 50_000"), [0] * 50_000, False),
    # forged traced lines: far more than the program has
    "traced-lines": ("call", "import os\ndef solve(x):\n"
                     "    v = b'[' + b'1, ' * ((8 << 20) // 3 - 100) + b'1]'\n"
                     "    os.write(3, b'{\"value\": 5, \"lines\": ' + v + b'}')\n"
                     "    os._exit(0)\n", 5, True),
    # stdio: the attacker's outputs
    "stdout-lines": ("stdio", _prints("b'a\\n' * ((8 << 20) // 2 - 10)"), "5\n", False),
    # invalid UTF-8 and one emoji: 8 MB become a 32 MB str (4 bytes a character)
    "stdout-invalid-utf8": ("stdio", _prints(f"b'\\xff' * ((8 << 20) - 10) + {EMOJI!r}"), "5\n",
                            False),
    "stdout-blank-lines": ("stdio", _prints("b' \\n' * ((8 << 20) // 2 - 10)"), "5\n", False),
    "stdout-one-long-line": ("stdio", _prints("b'7 ' * ((8 << 20) // 2 - 10)"), "1 2 3\n", False),
    # the right answer padded with megabytes of whitespace: accepted (cut when kept)
    "stdout-padded": ("stdio", _prints("b' ' * ((8 << 20) - 100) + b'5\\n'"), "5\n", False),
    # a legitimate large output: accepted and kept whole
    "stdout-legit": ("stdio", "print('\\n'.join(map(str, range(200_000))))\n",
                     "\n".join(map(str, range(200_000))) + "\n", False),
}


def _child(name: str) -> dict[str, Any]:
    """Run one attack through a real pool; what it cost, as JSON-able facts."""
    import asyncio
    import resource
    import time

    import msgspec

    from pairbench_async import Limits, Program, SandboxPool, Test
    from pairbench_async.sandbox import process as _process

    kind, source, answer, trace = ATTACKS[name]
    decode_times: list[float] = []
    decode = _process.decode_result

    def timed(*args: Any) -> Any:
        start = time.perf_counter()
        try:
            return decode(*args)
        finally:
            decode_times.append(time.perf_counter() - start)

    _process.decode_result = timed  # type: ignore[assignment]
    if kind == "call":
        program = Program(source=source, kind="call", entry_point="solve")
        tests = [Test(id=f"t{i}", args=[1], expected=answer) for i in range(TESTS_PER_JOB)]
    else:
        program = Program(source=source)
        tests = [Test(id=f"t{i}", input="", output=answer) for i in range(TESTS_PER_JOB)]
    sane = Program(source="a, b = map(int, input().split())\nprint(a + b)\n")
    sane_tests = [Test(id="sane", input="2 3\n", output="5\n")]
    limits = Limits(time_limit=5, memory_limit_mb=512)

    def peak_mb() -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    async def main() -> dict[str, Any]:
        async with SandboxPool(workers=2) as pool:
            await pool.run(sane, sane_tests)
            before = peak_mb()
            stall = [0.0]
            done = asyncio.Event()

            async def ticker() -> None:
                while not done.is_set():
                    start = time.perf_counter()
                    await asyncio.sleep(0.005)
                    stall[0] = max(stall[0], time.perf_counter() - start - 0.005)

            tick = asyncio.create_task(ticker())
            start = time.perf_counter()
            results = await pool.run(program, tests, limits, trace=trace)
            wall = time.perf_counter() - start
            sane_results = await pool.run(sane, sane_tests)
            done.set()
            await tick
            after = peak_mb()
        return {
            "verdicts": [r.verdict.value for r in results],
            "errors": [r.error for r in results],
            "mismatches": [r.mismatch for r in results],
            "values_kept": [r.value is not msgspec.UNSET for r in results],
            "values_equal_expected": [r.value == answer for r in results
                                      if r.value is not msgspec.UNSET],
            "stdout_kept": [len(r.stdout) for r in results],
            "lines_kept": [r.lines is not None for r in results],
            "wall_per_test": wall / len(tests),
            "decode_max": max(decode_times),
            "stall_max": stall[0],
            "rss_growth_mb": after - before,
            "sane": sane_results[0].verdict.value,
        }

    return asyncio.run(main())


def _run(name: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), name], capture_output=True,
                          text=True, timeout=110)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _assert_cheap(facts: dict[str, Any]) -> None:
    assert facts["sane"] == "AC", facts
    assert facts["wall_per_test"] < WALL_PER_TEST, facts
    assert facts["decode_max"] < DECODE_PER_RESULT, facts
    assert facts["stall_max"] < LOOP_STALL, facts
    assert facts["rss_growth_mb"] < RSS_GROWTH_MB, facts
    kind, _, answer, _ = ATTACKS[facts["name"]]
    keep = KEEP + 4 * len(answer) if kind == "stdio" else KEEP
    assert all(n <= keep for n in facts["stdout_kept"]), facts


def facts_of(name: str) -> dict[str, Any]:
    facts = _run(name)
    facts["name"] = name
    _assert_cheap(facts)
    return facts


@pytest.mark.parametrize("name", ["lists", "dicts", "long-string", "ints"])
def test_a_value_far_larger_than_the_expected_is_refused_unread(name: str) -> None:
    facts = facts_of(name)
    assert set(facts["verdicts"]) == {"WA"} and set(facts["mismatches"]) == {"value"}, facts
    assert all("too large to be the expected one" in e for e in facts["errors"]), facts
    assert not any(facts["values_kept"]), facts


@pytest.mark.parametrize("name", ["lists-vs-large-expected", "dicts-vs-large-expected"])
def test_a_value_with_far_more_items_than_the_expected_is_refused_unread(name: str) -> None:
    facts = facts_of(name)
    assert set(facts["verdicts"]) == {"WA"} and set(facts["mismatches"]) == {"value"}, facts
    assert all("too many items" in e for e in facts["errors"]), facts
    assert not any(facts["values_kept"]), facts


@pytest.mark.parametrize("name", ["ints-decoded-not-kept", "long-string-decoded-not-kept"])
def test_a_large_wrong_value_is_compared_but_not_kept(name: str) -> None:
    facts = facts_of(name)
    assert set(facts["verdicts"]) == {"WA"} and set(facts["mismatches"]) == {"value"}, facts
    assert all("not kept" in e for e in facts["errors"]), facts
    assert not any(facts["values_kept"]), facts


@pytest.mark.parametrize("name", ["legit-list", "legit-floats"])
def test_a_large_equal_value_is_still_accepted_and_kept(name: str) -> None:
    facts = facts_of(name)
    assert set(facts["verdicts"]) == {"AC"}, facts
    assert all(facts["values_kept"]) and set(facts["errors"]) == {None}, facts
    if name == "legit-list":
        assert all(facts["values_equal_expected"]), facts


def test_forged_traced_lines_are_refused_unread() -> None:
    facts = facts_of("traced-lines")
    assert set(facts["verdicts"]) == {"RE"}, facts
    assert set(facts["errors"]) == {"corrupt result report"}, facts


@pytest.mark.parametrize("name", ["stdout-lines", "stdout-invalid-utf8", "stdout-blank-lines",
                                  "stdout-one-long-line"])
def test_a_hostile_stdout_costs_c_speed_and_is_kept_cut(name: str) -> None:
    facts = facts_of(name)
    assert set(facts["verdicts"]) == {"WA"}, facts
    want = {"stdout-lines": "lines", "stdout-invalid-utf8": "value",
            "stdout-blank-lines": "lines", "stdout-one-long-line": "tokens"}[name]
    assert set(facts["mismatches"]) == {want}, facts


def test_the_right_answer_padded_with_megabytes_of_whitespace_is_still_accepted() -> None:
    facts = facts_of("stdout-padded")
    assert set(facts["verdicts"]) == {"AC"}, facts
    assert all(n == KEEP + 4 * 2 for n in facts["stdout_kept"]), facts  # cut when kept


def test_a_large_legitimate_output_is_accepted_and_kept_whole() -> None:
    facts = facts_of("stdout-legit")
    assert set(facts["verdicts"]) == {"AC"}, facts
    assert set(facts["stdout_kept"]) == {len(ATTACKS["stdout-legit"][2])}, facts


# -- the bounds themselves, on crafted frames -----------------------------------------


def _decode_frame(program_kind: str, test: Any, *, out: bytes = b"", chan: bytes = b"",
                  trace: bool = False, source: str = "def f():\n    return 1\n") -> Any:
    import asyncio

    from pairbench_async.core.types import Checker, Limits, Program
    from pairbench_async.sandbox.jobs import Job
    from pairbench_async.sandbox.results import decode_result
    from pairbench_async.sandbox.wire import FLAG_CONFINED, RESULT

    program = (Program(source=source, kind="call", entry_point="f") if program_kind == "call"
               else Program(source=source))

    async def make() -> Any:
        return Job(program, [], Limits(), Checker(), trace)

    job = asyncio.run(make())
    head = RESULT.pack(0, FLAG_CONFINED, 1000, 2000, 1000, 900, -1, 0, 0, len(out), 0, len(chan),
                        0)
    return decode_result(job, test, head + out + chan)


def test_the_size_bound_is_relative_to_the_expected_value() -> None:
    import msgspec

    from pairbench_async.core.types import Test, Verdict
    from pairbench_async.sandbox.results import _VALUE_FACTOR, _VALUE_MARGIN

    expected = "x" * 100_000
    bound = _VALUE_FACTOR * len(msgspec.json.encode(expected)) + _VALUE_MARGIN
    for length, refused in ((bound, False), (bound + 1, True)):
        raw = b'"' + b"y" * (length - 2) + b'"'
        r = _decode_frame("call", Test(id="t", args=[], expected=expected),
                          chan=b'{"value": ' + raw + b"}")
        assert (r.verdict, r.mismatch) == (Verdict.WA, "value")
        assert ("too large" in (r.error or "")) is refused, r.error
        assert ("not kept" in (r.error or "")) is (not refused), r.error
        assert r.value is msgspec.UNSET
    small = _decode_frame("call", Test(id="t", args=[], expected=[1, 2]),
                          chan=b'{"value": [1, 3]}')
    assert small.verdict is Verdict.WA and small.value == [1, 3] and small.error is None


def test_a_test_without_expected_value_keeps_the_value_whole() -> None:
    """How a reference's calls are recorded: the value is what the caller asked for."""
    import msgspec

    from pairbench_async.core.types import Test, Verdict

    value = [[i, "v" * 10] for i in range(100_000)]  # ~1.9 MB of JSON
    r = _decode_frame("call", Test(id="record", args=[]),
                      chan=b'{"value": ' + msgspec.json.encode(value) + b"}")
    assert r.verdict is Verdict.WA and r.error is None  # compared with None, as before
    assert r.value == value


def test_stdout_kept_is_bounded_by_the_expected_output() -> None:
    from pairbench_async.core.types import Test, Verdict
    from pairbench_async.sandbox.results import _KEEP_OUTPUT, _OUTPUT_FACTOR

    out = b"5" + b" " * (4 * MIB)
    r = _decode_frame("stdio", Test(id="t", input="", output="5\n"), out=out)
    assert r.verdict is Verdict.AC and len(r.stdout) == _KEEP_OUTPUT + _OUTPUT_FACTOR * 2
    r = _decode_frame("stdio", Test(id="t", input=""), out=out)  # no expected output: all of it
    assert r.verdict is Verdict.AC and r.stdout == out.decode()
    r = _decode_frame("call", Test(id="t", args=[], expected=1), out=b"\xf0\x9f\x98\x80" * MIB,
                      chan=b'{"value": 1}')
    assert r.verdict is Verdict.AC and r.stdout == "\U0001f600" * _KEEP_OUTPUT


def test_traced_lines_are_bounded_by_the_program() -> None:
    from pairbench_async.core.types import Test, Verdict

    source = "x = 1\n" * 50_000 + "def f():\n    return 1\n"
    lines = list(range(1, 50_003))
    test = Test(id="t", args=[], expected=1)
    chan = b'{"value": 1, "lines": ' + json.dumps(lines).encode() + b"}"
    r = _decode_frame("call", test, chan=chan, trace=True, source=source)
    assert r.verdict is Verdict.AC and r.lines == lines
    short = "def f():\n    return 1\n"
    r = _decode_frame("call", test, chan=chan, trace=True, source=short)
    assert (r.verdict, r.error) == (Verdict.RE, "corrupt result report")
    r = _decode_frame("call", test, chan=b'{"value": 1, "lines": [1, 2]}', trace=True, source=short)
    assert r.verdict is Verdict.AC and r.lines == [1, 2]


if __name__ == "__main__":
    print(json.dumps(_child(sys.argv[1])))
