"""A failure's name past the sandbox is a word of the closed vocabulary, whatever the program does.

The program chooses the name of every class it raises and can write its own result report
(fd 3), so the child reports a class's name only when the class is the builtins object of
that name, and the decoder maps the report again by name (``core.failures``).
"""

from __future__ import annotations

import asyncio

import pytest

from pairbench_async.core.failures import PROGRAM_DEFINED
from pairbench_async.core.types import Checker, Limits, Program, Test, Verdict
from pairbench_async.sandbox.jobs import Job
from pairbench_async.sandbox.pool import SandboxPool
from pairbench_async.sandbox.results import (
    compile_failure,
    decode_result,
)
from pairbench_async.sandbox.wire import FLAG_CONFINED, RESULT

CANARY = "CANARY_7731"
TEST = Test(id="t", input=f"{CANARY} 4242\n", output="0\n")

PROGRAMS = {
    # the reported bug: a class named from the hidden input
    "named-from-input": ('import sys\nraise type("_" + "_".join(sys.stdin.read().split()), '
                         "(Exception,), {})()\n", PROGRAM_DEFINED),
    # a program's own class named like a builtin is not the builtin
    "shadows-a-builtin": ("class ValueError(Exception):\n    pass\nraise ValueError(input())\n", PROGRAM_DEFINED),
    "unicode-name": ('raise type("Ωμέγα_" + input().split()[0], (Exception,), {})()\n', PROGRAM_DEFINED),
    "long-name": ('raise type("E" * 255 + input()[0], (Exception,), {})()\n', PROGRAM_DEFINED),
    "dotted-qualname": ("import json\njson.loads(input())\n", PROGRAM_DEFINED),  # json.JSONDecodeError
    # registered in builtins under its own name: the child is fooled, the decoder is not
    "planted-in-builtins": ('import builtins\nname = "_" + input().split()[0]\n'
                            "cls = type(name, (Exception,), {})\nsetattr(builtins, name, cls)\nraise cls()\n",
                            PROGRAM_DEFINED),
    # a report written by the program itself
    "forged-report": ('import os, sys\nos.write(3, b\'{"exc": "_%s"}\' % sys.stdin.read().split()[0].encode())\n'
                      "os._exit(1)\n", PROGRAM_DEFINED),
    # a stdout whose flush (after the program) raises a class of the program's named like a builtin
    "flush-raises": ("import sys\nclass Out:\n    def write(self, s):\n        return len(s)\n"
                     '    def flush(self):\n        raise type("ValueError", (Exception,), {})()\n'
                     "sys.stdout = Out()\nprint(input())\n", PROGRAM_DEFINED),
    "builtin": ("x = input()\nraise ValueError(x)\n", "ValueError"),
    "builtin-subclass-of-the-program": ("class E(KeyError):\n    pass\nraise E(input())\n", PROGRAM_DEFINED),
    "exit-code": ("import os\ninput()\nos._exit(42)\n", "non-zero exit code"),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
async def test_the_name_of_a_failure_is_never_the_programs_choice(name: str) -> None:
    source, error = PROGRAMS[name]
    async with SandboxPool(workers=1) as pool:
        (result,) = await pool.run(Program(source=source), [TEST], Limits(time_limit=2.0))
    assert (result.verdict, result.error) == (Verdict.RE, error), result
    if name == "named-from-input":  # the program's own writing (stderr) still holds it: never a name
        assert CANARY in result.stderr


async def test_compile_failures_keep_their_builtin_name() -> None:
    async with SandboxPool(workers=1) as pool:
        (result,) = await pool.run(Program(source="def broken(:\n"), [TEST])
    assert (result.verdict, result.error) == (Verdict.RE, "SyntaxError")
    assert compile_failure(TEST, f"_{CANARY}: what a worker never sends").error == PROGRAM_DEFINED
    assert compile_failure(TEST, "SourceTooLarge: the program has 9 bytes").error == "SourceTooLarge"
    assert compile_failure(TEST, "no name at all").error == "SyntaxError"


def _decoded(chan: bytes) -> str | None:
    async def job() -> Job:
        return Job(Program(source="pass\n"), [], Limits(), Checker(), False)

    head = RESULT.pack(1 << 8, FLAG_CONFINED, 1000, 2000, 1000, 900, -1, 0, 0, 0, 0, len(chan), 0)
    return decode_result(asyncio.run(job()), TEST, head + chan).error


@pytest.mark.parametrize(
    ("reported", "error"),
    [
        ("ValueError", "ValueError"),
        ("ExceptionGroup", "ExceptionGroup"),
        (PROGRAM_DEFINED, PROGRAM_DEFINED),
        (f"_{CANARY}", PROGRAM_DEFINED),
        ("json.decoder.JSONDecodeError", PROGRAM_DEFINED),
        ("Ωμέγα", PROGRAM_DEFINED),
        ("E" * 256, PROGRAM_DEFINED),
        ("SIGSEGV", PROGRAM_DEFINED),  # a signal is the decoder's to name, from the wait status
        ("corrupt result report", PROGRAM_DEFINED),
    ],
)
def test_the_decoder_maps_whatever_the_report_channel_says(reported: str, error: str) -> None:
    assert _decoded(b'{"exc": "%s"}' % reported.encode()) == error
