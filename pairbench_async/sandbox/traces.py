"""The reference-trace cache: executed lines of the reference, per hidden test, on disk.

Failure signatures need, for every failing test, the set of reference lines the
test executes. Tracing costs a sandbox run under ``sys.settrace``, so each
(reference, test) pair is traced once and kept:

* one JSON file per reference, named by a hash of the reference source, its kind
  and entry point, mapping a hash of each test's input (stdin, or args/kwargs) to
  its sorted line list. Changing the reference changes the file; changing a test
  changes its key. Either way the stale entry is simply never read again;
* files are replaced atomically (temporary file in the same directory, fsync,
  rename), so concurrent writers, in one process or many, never leave a torn file;
  two writers racing on one reference both write complete, equally valid files,
  and at worst one's extra entries are recomputed later;
* a corrupt or unreadable file counts as empty (it is recomputed and rewritten).

The default location is ``$XDG_CACHE_HOME/pairbench_async/traces`` (``~/.cache/...``).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import msgspec

from ..core.types import Instance, Limits, Program, Test, TestResult

__all__ = ["TraceCache", "default_cache_dir"]

_log = logging.getLogger("pairbench_async.sandbox")

_FILE = msgspec.json.Decoder(dict[str, list[int]])
_ENC = msgspec.json.Encoder()


class _Runner(Protocol):
    async def run(self, program: Program, tests: Sequence[Test], limits: Limits = ..., *,
                  trace: bool = ...) -> list[TestResult]: ...


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pairbench_async" / "traces"


def _reference_key(instance: Instance) -> str:
    h = hashlib.sha256()
    for part in (instance.kind, instance.entry_point or "", instance.reference):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _test_key(test: Test) -> str:
    if test.kind == "call":
        payload = _ENC.encode([test.args or [], test.kwargs or {}])
    else:
        payload = (test.input or "").encode()
    return hashlib.sha256(payload).hexdigest()[:24]


class TraceCache:
    """Reference traces per (instance, test), computed once through a sandbox pool."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        #: sandbox jobs this cache has started (for tests and progress lines)
        self.sandbox_runs = 0
        #: the cache's folder could not be written (traces are then computed every run)
        self.write_failed = False
        self._locks: dict[str, asyncio.Lock] = {}

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def _load(self, key: str) -> dict[str, list[int]]:
        try:
            return _FILE.decode(self._path(key).read_bytes())
        except (OSError, msgspec.DecodeError):
            return {}

    def _store(self, key: str, entries: dict[str, list[int]]) -> None:
        """Keep ``entries`` on disk; a cache that cannot be written (read-only, full) is
        only a cache: the traces are used all the same, and computed again next time."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key}.", dir=self.root)
        except OSError as exc:
            self._unwritable(exc)
            return
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_ENC.encode(entries))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self._path(key))
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)
            self._unwritable(exc)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _unwritable(self, exc: OSError) -> None:
        if not self.write_failed:  # said once per cache
            _log.warning("reference traces are not cached: %s (%s)", self.root, exc.strerror or exc)
        self.write_failed = True

    def cached(self, instance: Instance) -> dict[str, tuple[int, ...]] | None:
        """The traces of every test if all are on disk, else None (no sandbox run)."""
        entries = self._load(_reference_key(instance))
        out: dict[str, tuple[int, ...]] = {}
        for test in instance.tests:
            lines = entries.get(_test_key(test))
            if lines is None:
                return None
            out[test.id] = tuple(lines)
        return out

    async def traces(self, pool: _Runner, instance: Instance) -> dict[str, tuple[int, ...]]:
        """Test id -> executed reference lines, tracing only what the cache lacks.

        A test on which the reference produced no trace (it crashed or timed out)
        maps to an empty tuple and is not cached, so it is retried next time.
        """
        key = _reference_key(instance)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            entries = self._load(key)
            missing = [t for t in instance.tests if _test_key(t) not in entries]
            if missing:
                self.sandbox_runs += 1
                results = await pool.run(
                    instance.program(instance.reference), missing,
                    Limits(time_limit=instance.time_limit, memory_limit_mb=instance.memory_limit_mb),
                    trace=True,
                )
                fresh = {_test_key(t): r.lines for t, r in zip(missing, results, strict=True)
                         if r.lines is not None}
                if fresh:
                    entries = {**self._load(key), **entries, **fresh}
                    await asyncio.to_thread(self._store, key, entries)
        return {t.id: tuple(entries.get(_test_key(t), ())) for t in instance.tests}
