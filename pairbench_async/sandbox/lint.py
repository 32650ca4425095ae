"""pylint on a candidate program, for FeedbackEval's compiler feedback.

pylint only parses and analyses the source (it does not run it); it still runs in
its own process, with a scrubbed environment, an empty working directory and a
time limit, and never blocks the event loop. Missing pylint is a clear
:class:`ConfigError` naming the extra to install.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import tempfile

from ..core.errors import ConfigError

__all__ = ["run_pylint"]

_ARGS = ("--from-stdin", "candidate.py", "--score=n", "--persistent=n", "--disable=C,R",
         "--msg-template={line}:{column}: {msg_id}: {msg} ({symbol})")


async def run_pylint(source: str, timeout: float = 60.0) -> str:
    """pylint's messages for ``source`` (error, warning, fatal; no style or refactoring)."""
    if importlib.util.find_spec("pylint") is None:
        raise ConfigError("the compiler protocol needs pylint: pip install 'pairbench_async[compiler]'")
    with tempfile.TemporaryDirectory(prefix="pairbench-lint-") as tmp:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "pylint", *_ARGS, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=tmp,
            env={"PATH": "/usr/bin:/bin", "HOME": tmp, "PYLINTHOME": tmp, "LANG": "C.UTF-8"},
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(source.encode()), timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            proc.kill()
            await proc.wait()
            raise
    return out.decode("utf-8", "replace")
