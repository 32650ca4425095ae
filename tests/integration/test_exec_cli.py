"""`python -m pairbench_async exec`: the contract of the command as a user sees it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pairbench_async", "exec", *args],
                          capture_output=True, text=True, timeout=120)


def test_prints_one_json_object_per_test_in_order(tmp_path: Path) -> None:
    prog = tmp_path / "p.py"
    prog.write_text("n = int(input())\nprint(n * n if n != 3 else 0)\n")
    tests = tmp_path / "t.jsonl"
    tests.write_text("".join(json.dumps({"id": f"t{i}", "input": f"{i}\n", "output": f"{i * i}\n"}) + "\n"
                             for i in range(50)))
    proc = run(str(prog), "--tests", str(tests), "--trace", "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [r["id"] for r in rows] == [f"t{i}" for i in range(50)]
    assert [r["verdict"] for r in rows].count("WA") == 1 and rows[3]["verdict"] == "WA"
    assert all({"id", "verdict", "stdout", "cpu_ms", "wall_ms", "lines"} <= r.keys() for r in rows)
    assert rows[0]["lines"] == [1, 2]


def test_call_tests_need_an_entry_point(tmp_path: Path) -> None:
    prog = tmp_path / "p.py"
    prog.write_text("def add(a, b):\n    return a + b\n")
    tests = tmp_path / "t.jsonl"
    tests.write_text('{"id": "1", "args": [1, 2], "expected": 3}\n{"id": "2", "args": [1, 2], "kwargs": {}, "expected": 4}\n')
    bad = run(str(prog), "--tests", str(tests))
    assert bad.returncode == 2 and "--entry" in bad.stderr
    ok = run(str(prog), "--tests", str(tests), "--entry", "add")
    assert ok.returncode == 0, ok.stderr
    assert [json.loads(x)["verdict"] for x in ok.stdout.splitlines()] == ["AC", "WA"]


def test_malformed_tests_file_names_file_line_and_field(tmp_path: Path) -> None:
    prog = tmp_path / "p.py"
    prog.write_text("print(1)\n")
    tests = tmp_path / "bad.jsonl"
    tests.write_text('{"id": "1", "input": "", "output": "1"}\n\n{"id": 2, "input": "", "output": "1"}\n')
    proc = run(str(prog), "--tests", str(tests))
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"{tests}:3" in proc.stderr and "'id'" in proc.stderr
    tests.write_text('{"id": "1", "input": "", "output": "1"}\n{"id": "1", "inp\n')
    proc = run(str(prog), "--tests", str(tests))
    assert proc.returncode == 2 and f"{tests}:2" in proc.stderr and "JSON" in proc.stderr
    # no expected output: not an AC for every program, an error naming the field
    tests.write_text('{"id": "1", "input": "", "output": "1"}\n{"id": "2", "input": "x"}\n')
    proc = run(str(prog), "--tests", str(tests))
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"{tests}:2" in proc.stderr and "'output'" in proc.stderr


def test_bad_arguments_exit_2(tmp_path: Path) -> None:
    assert run("missing.py", "--tests", "missing.jsonl").returncode == 2
    assert run("x.py", "--tests", "t.jsonl", "--time-limit", "-1").returncode == 2


def _looping(tmp_path: Path) -> tuple[Path, Path]:
    prog = tmp_path / "loop.py"
    prog.write_text("n = int(input())\nwhile n > 0:\n    pass\nprint(n)\n")
    tests = tmp_path / "t.jsonl"
    tests.write_text("".join(json.dumps({"id": str(i), "input": f"{i % 2}\n", "output": "0\n"}) + "\n"
                             for i in range(1, 5)))
    return prog, tests


def test_a_test_cut_short_by_the_loop_rule_is_said_so(tmp_path: Path) -> None:
    """After the first timeout, exec's later tests run under the loop rule's bound, far below
    --time-limit: the output says which tests that was and how to turn the rule off, and
    --loop-factor 0 runs every test to the limit given."""
    prog, tests = _looping(tmp_path)
    ruled = run(str(prog), "--tests", str(tests), "--time-limit", "0.3", "--workers", "1")
    assert ruled.returncode == 0, ruled.stderr
    rows = [json.loads(x) for x in ruled.stdout.splitlines()]
    assert [r["verdict"] for r in rows] == ["TLE", "AC", "TLE", "AC"]
    assert rows[0]["cpu_ms"] >= 290 and rows[2]["cpu_ms"] < 100  # test 3 cut by the rule
    assert "loop rule" in ruled.stderr and "3" in ruled.stderr and "--loop-factor 0" in ruled.stderr
    off = run(str(prog), "--tests", str(tests), "--time-limit", "0.3", "--workers", "1",
              "--loop-factor", "0")
    assert off.returncode == 0, off.stderr
    rows = [json.loads(x) for x in off.stdout.splitlines()]
    assert [r["verdict"] for r in rows] == ["TLE", "AC", "TLE", "AC"]
    assert rows[2]["cpu_ms"] >= 290 and "loop rule" not in off.stderr


def test_the_loop_floor_and_probe_are_settable(tmp_path: Path) -> None:
    """--loop-floor sets the bound of a test after a timeout when no test of the program has
    finished yet (max(floor, 10 x the slowest finished)), --loop-floor-shared that of a test
    after another in a resident child; --loop-probe the limit before any timeout of a test
    with ref_ms."""
    prog = tmp_path / "loop.py"
    prog.write_text("while True:\n    pass\n")
    tests = tmp_path / "t.jsonl"
    tests.write_text("".join(json.dumps({"id": str(i), "input": "", "output": "", "ref_ms": 0.01}) + "\n"
                             for i in range(1, 4)))
    got = run(str(prog), "--tests", str(tests), "--time-limit", "2", "--workers", "1",
              "--loop-probe", "0.07", "--loop-floor", "0.03", "--child-per-test")
    assert got.returncode == 0, got.stderr
    rows = [json.loads(x) for x in got.stdout.splitlines()]
    assert [r["verdict"] for r in rows] == ["TLE"] * 3
    assert 65 <= rows[0]["cpu_ms"] < 110  # the probe, 70 ms, not the 0.05 s default nor 2 s
    assert all(28 <= r["cpu_ms"] < 60 for r in rows[1:])  # floor 30 ms (+ 10 x 0.01 ms)
    # in one resident child (the default), the tests after its first have --loop-floor-shared
    got = run(str(prog), "--tests", str(tests), "--time-limit", "2", "--workers", "1",
              "--loop-probe", "0.07", "--loop-floor", "0.03", "--loop-floor-shared", "0.015")
    rows = [json.loads(x) for x in got.stdout.splitlines()]
    assert [r["verdict"] for r in rows] == ["TLE"] * 3
    assert all(14 <= r["cpu_ms"] < 28 for r in rows[1:]), rows  # 15 ms (+ 10 x 0.01 ms)
    assert run(str(prog), "--tests", str(tests), "--loop-floor", "0").returncode == 2
    assert run(str(prog), "--tests", str(tests), "--loop-floor-shared", "0").returncode == 2
