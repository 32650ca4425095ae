"""``python -m pairbench_async exec``: one program, one tests file, JSON Lines out.

The tests file is read and validated whole before the sandbox starts, so a
malformed line is reported (file, line, field) without running anything.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import msgspec

from ..core.errors import ConfigError
from ..core.types import Checker, Kind, Limits, Program, Test, TestResult, Verdict
from ..datasets.files import read_tests
from .args import (
    add_loop_rule_flags,
    add_sandbox_flags,
    loop_rule,
    non_negative_float,
    positive_float,
    positive_int,
)

__all__ = ["add_exec_parser", "exec_command"]

def add_exec_parser(sub: Any) -> None:
    ex = sub.add_parser("exec", help="run one program on a tests file in the sandbox",
                        description="Run PROGRAM on every test of TESTS (JSON Lines) in the "
                        "sandbox; print one JSON object per test, in test order.")
    ex.add_argument("program", metavar="PROGRAM", help="Python source file")
    ex.add_argument("--tests", required=True, metavar="TESTS.jsonl",
                    help='stdio {"id","input","output"} or call {"id","args","kwargs","expected"}')
    ex.add_argument("--time-limit", type=positive_float, default=2.0, metavar="SECONDS",
                    help="CPU seconds per test, for a test without its own time_limit (a test's "
                         "time_limit field wins, as in SandboxPool.run; default 2)")
    ex.add_argument("--wall-limit", type=positive_float, default=None, metavar="SECONDS",
                    help="wall-clock seconds per test (default 3 x time limit + 1)")
    ex.add_argument("--memory-limit", type=positive_int, default=256, metavar="MB",
                    help="memory budget in MB (default 256)")
    ex.add_argument("--output-limit", type=positive_int, default=8 * 1024 * 1024, metavar="BYTES",
                    help="stdout bytes kept; more is OLE (default 8 MiB)")
    ex.add_argument("--entry", metavar="NAME", help="entry point for function-call tests")
    ex.add_argument("--trace", action="store_true",
                    help="record the executed lines of the program (reference traces)")
    ex.add_argument("--checker", choices=("tokens", "exact"), default="tokens",
                    help="output comparison (default: tokens, numbers within 1e-8)")
    ex.add_argument("--float-tol", type=non_negative_float, default=1e-8, metavar="TOL",
                    help="absolute and relative tolerance for numeric tokens (default 1e-8)")
    add_loop_rule_flags(ex)
    add_sandbox_flags(ex)


def _cut_short(tests: list[Test], results: list[TestResult], limits: Limits) -> list[str]:
    """The ids of the TLEs that stopped well before their own CPU and wall limits: the loop
    rule's bound stopped them, not the limit the user gave, and the output must say so."""
    ids = []
    for test, result in zip(tests, results, strict=True):
        cpu_s = test.time_limit or limits.time_limit
        wall_s = limits.wall_limit or 3 * cpu_s + 1
        if (result.verdict is Verdict.TLE and result.cpu_ms < 900 * cpu_s
                and result.wall_ms < 900 * wall_s):
            ids.append(result.id)
    return ids


def _row(result: TestResult, trace: bool) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": result.id,
        "verdict": result.verdict.value,
        "stdout": result.stdout,
        "cpu_ms": round(result.cpu_ms, 3),
        "wall_ms": round(result.wall_ms, 3),
        "memory_kb": result.memory_kb,
    }
    if result.error is not None:
        row["error"] = result.error
    if result.mismatch is not None:
        row["mismatch"] = result.mismatch
    if result.timeout is not None:
        row["timeout"] = result.timeout
    if result.stderr:
        row["stderr"] = result.stderr
    if result.value is not msgspec.UNSET:
        row["value"] = result.value
    if trace:
        row["lines"] = result.lines
    return row


async def exec_command(args: argparse.Namespace) -> int:
    from ..sandbox.config import SandboxConfig
    from .args import make_command_sandbox

    try:
        with open(args.program, encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{args.program}: cannot read program: {exc}") from exc
    tests = read_tests(args.tests)
    kind: Kind = tests[0].kind
    if kind == "call" and not args.entry:
        raise ConfigError(f"{args.tests}: function-call tests need --entry NAME")
    program = Program(source=source, kind=kind, entry_point=args.entry)
    limits = Limits(time_limit=args.time_limit, memory_limit_mb=args.memory_limit,
                    wall_limit=args.wall_limit, output_limit=args.output_limit)
    checker = Checker(mode=args.checker, abs_tol=args.float_tol, rel_tol=args.float_tol)
    config = SandboxConfig(workers=args.workers, confine=not args.no_confine,
                           require_full=args.require_full_confinement, **loop_rule(vars(args)))
    sandbox = make_command_sandbox(args, config)
    try:
        await sandbox.start()
        results = await sandbox.run(program, tests, limits, checker=checker, trace=args.trace)
    finally:
        await sandbox.aclose()
    encoder = msgspec.json.Encoder()
    out = bytearray()
    for result in results:
        encoder.encode_into(_row(result, args.trace), out, len(out))
        out += b"\n"
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    cut = _cut_short(tests, results, limits)
    if cut:
        shown = ", ".join(cut[:10]) + (f" and {len(cut) - 10} more" if len(cut) > 10 else "")
        print(f"exec: {len(cut)} TLE test(s) were stopped by the loop rule, below their own "
              f"limit ({shown}): after a timeout, later tests run under "
              f"max({config.loop_floor:g} s ({min(config.loop_floor, config.loop_floor_shared):g} s "
              "after another test in its child), "
              f"{config.loop_factor} x the slowest finished test), or their ref_ms bound; "
              "--loop-factor 0 runs every test to its own limit", file=sys.stderr)
    return 0
