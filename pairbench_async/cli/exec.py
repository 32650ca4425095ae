"""``python -m pairbench_async exec``: one program, one tests file, JSON Lines out.

The tests file is read and validated whole before the sandbox starts, so a
malformed line is reported (file, line, field) without running anything.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import msgspec

from ..core.errors import ConfigError, DatasetError
from ..core.types import Checker, Kind, Limits, Program, Test, TestResult

__all__ = ["exec_command", "read_tests"]

_TEST = msgspec.json.Decoder(Test)


def _field_of(exc: msgspec.ValidationError) -> str | None:
    """The field a msgspec validation message points at (``... - at `$.args```)."""
    text = str(exc)
    marker = "- at `$."
    if marker in text:
        return text.split(marker, 1)[1].rstrip("`")
    return None


def read_tests(path: str) -> list[Test]:
    """Decode a JSON Lines tests file; any bad line raises :class:`DatasetError`."""
    try:
        with open(path, "rb") as f:
            raw_lines = f.read().splitlines()
    except OSError as exc:
        raise DatasetError(path, None, None, f"cannot read: {exc.strerror}") from exc
    tests: list[Test] = []
    seen: set[str] = set()
    for number, raw in enumerate(raw_lines, start=1):
        if not raw.strip():
            continue
        try:
            test = _TEST.decode(raw)
        except msgspec.ValidationError as exc:
            raise DatasetError(path, number, _field_of(exc), str(exc).split(" - at ")[0]) from exc
        except msgspec.DecodeError as exc:
            raise DatasetError(path, number, None, f"not valid JSON ({exc})") from exc
        if test.kind == "stdio" and test.input is None:
            raise DatasetError(path, number, "input", "a stdio test needs `input` (or `args` for a call test)")
        if test.kind == "stdio" and test.output is None:
            # with nothing to compare, every program would get AC
            raise DatasetError(path, number, "output", "a stdio test needs its expected `output`")
        if test.kind == "call" and test.expected is msgspec.UNSET:
            raise DatasetError(path, number, "expected", "a call test needs `expected`")
        if test.id in seen:
            raise DatasetError(path, number, "id", f"duplicate test id {test.id!r}")
        seen.add(test.id)
        tests.append(test)
    if not tests:
        raise DatasetError(path, None, None, "no tests in file")
    kinds = {t.kind for t in tests}
    if len(kinds) > 1:
        raise DatasetError(path, None, None, "mixes stdio and call tests; use one kind per file")
    return tests


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
                           require_full=args.require_full_confinement)
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
    return 0
