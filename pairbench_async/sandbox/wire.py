"""The wire protocol between the pool and its workers, as the native module declares it.

The frames, their ops, the head of a test and the block of a result cross three
programs: the pool (:mod:`.process`, :mod:`.jobs`, :mod:`.results`), the worker script
(:mod:`.worker`) and the zygote's C loop (``sandbox/confine.c``). They are declared once,
in the C file next to the structs they describe, and exported by the native module; this
module gives the pool its names for them, and the worker takes the same from the module
it loads. The sizes are checked against the structs' at import.
"""

from __future__ import annotations

import struct
from typing import Final

from . import native

__all__ = [
    "EXIT_COMPILE_CPU", "FLAG_CONFINED", "FLAG_CPU_TIMEOUT", "FLAG_OOM", "FLAG_SHARED", "FLAG_TIGHT",
    "FLAG_WALL_TIMEOUT", "HEAD_ISOLATED", "HEAD_START_TIGHT",
    "HEADER", "OP_END", "OP_FATAL", "OP_LOAD", "OP_LOADED", "OP_QUIT", "OP_READY", "OP_RESULT", "OP_TEST",
    "OP_ZDIED", "RESULT", "TEST_HEAD", "ZDIED",
]

OP_LOAD: Final[int] = native.OP_LOAD
OP_TEST: Final[int] = native.OP_TEST
OP_END: Final[int] = native.OP_END
OP_QUIT: Final[int] = native.OP_QUIT
OP_READY: Final[int] = native.OP_READY
OP_LOADED: Final[int] = native.OP_LOADED
OP_RESULT: Final[int] = native.OP_RESULT
OP_ZDIED: Final[int] = native.OP_ZDIED
OP_FATAL: Final[int] = native.OP_FATAL
#: a result's flags (``result_block.flags``)
FLAG_WALL_TIMEOUT: Final[int] = native.FLAG_WALL_TIMEOUT
FLAG_CONFINED: Final[int] = native.FLAG_CONFINED
FLAG_OOM: Final[int] = native.FLAG_OOM
FLAG_CPU_TIMEOUT: Final[int] = native.FLAG_CPU_TIMEOUT
FLAG_TIGHT: Final[int] = native.FLAG_TIGHT
#: the test ran in a resident child after another test (the pool re-runs it alone
#: unless it passed or was killed at its CPU limit)
FLAG_SHARED: Final[int] = native.FLAG_SHARED
#: a test head's flag: a test of the job already timed out (the loop rule applies)
HEAD_START_TIGHT: Final[int] = native.HEAD_START_TIGHT
#: a test head's flag: run the test in a child of its own
HEAD_ISOLATED: Final[int] = native.HEAD_ISOLATED
#: a zygote's exit status when compiling its program ran out of CPU (ZDIED's status)
EXIT_COMPILE_CPU: Final[int] = native.EXIT_COMPILE_CPU

HEADER: Final = struct.Struct(native.FRAME_HEADER_FORMAT)
TEST_HEAD: Final = struct.Struct(native.TEST_HEAD_FORMAT)
RESULT: Final = struct.Struct(native.RESULT_FORMAT)
ZDIED: Final = struct.Struct(native.ZDIED_FORMAT)

if (RESULT.size, TEST_HEAD.size) != (native.RESULT_SIZE, native.TEST_HEAD_SIZE):  # pragma: no cover
    raise ImportError(f"the native module's formats ({RESULT.size}, {TEST_HEAD.size} bytes) do not match "
                      f"its structs ({native.RESULT_SIZE}, {native.TEST_HEAD_SIZE}): rebuild it")
