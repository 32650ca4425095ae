"""One writer per run folder: an ``flock`` on ``DIR/.lock`` held for the run's life.

A run (and a ``--sweep``, on its folder as well as on each setting's) holds an exclusive
``flock`` on the folder's lock file from before it reads the records until it ends. The
kernel drops the lock when the process ends, however it ends (SIGKILL included), so a
stale lock file never blocks anyone: the lock is the ``flock``, not the file. A second
writer is refused at once with :class:`FolderLocked`, naming the holder (pid, host, start
time and command, written into the lock file by the holder). Readers (``report``,
``export``, :func:`~..report.runs.load_run`) take no lock: records are appended one whole
line at a time and a torn last line is dropped when read.

The lock is re-entrant only for its holder, the asyncio task that took it (or the thread,
outside one), as when the command locks a sweep's folder before its sandbox starts and
:func:`~..runner.sweep.run_sweep` and each setting's evaluator lock it again in that task. Any other
writer, another task of the same process included (two evaluators an embedder starts
side by side), opens the lock file anew and is refused like another process: ``flock``
locks belong to an open file, and two opens conflict.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import FolderLocked, StoreError
from .store import folder_write_error

__all__ = ["LOCK", "FolderLock", "lock_folder"]

LOCK = ".lock"

#: the folders this process holds, by (device, inode) of their lock file: the one descriptor
#: whose close frees the flock, how many times its holder took it, and the holder
_held: dict[tuple[int, int], tuple[int, int, object]] = {}


def _holder_id() -> object:
    """The current asyncio task, or the current thread outside one."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        task = None
    return task if task is not None else threading.current_thread()


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        info = {}
    if not info:
        return "another process (it has not written its name yet)"
    command = f", running {info['command']}" if info.get("command") else ""
    return (f"pid {info.get('pid', '?')} on {info.get('host', '?')}, started {info.get('started', '?')}"
            f"{command}")


class FolderLock:
    """The exclusive lock of one folder; :meth:`release` (or the process's end) frees it."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.path = self.folder / LOCK
        self._key: tuple[int, int] | None = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise folder_write_error(self.folder, exc) from exc
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        held = _held.get(key)
        if held is not None and held[2] is _holder_id():  # this task holds it already
            os.close(fd)
            _held[key] = (held[0], held[1] + 1, held[2])
            self._key = key
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise FolderLocked(f"{self.folder} is being written by {_holder(self.path)}; a folder has one "
                               "writer at a time: wait for it to end (or stop it), or choose another --out "
                               "(report and export can read the folder meanwhile)") from None
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"{self.folder}: cannot lock {self.path}: {exc.strerror}") from exc
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "command": " ".join([Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python",
                                     *sys.argv[1:]])[:300]}
        with contextlib.suppress(OSError):  # who holds it is a courtesy: a full disk must not stop the lock
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode() + b"\n", 0)
        _held[key] = (fd, 1, _holder_id())
        self._key = key

    def release(self) -> None:
        key, self._key = self._key, None
        if key is None or key not in _held:
            return
        fd, count, holder = _held[key]
        if count > 1:
            _held[key] = (fd, count - 1, holder)
            return
        del _held[key]
        os.close(fd)  # closing the last descriptor of the open file releases the flock

    def __enter__(self) -> FolderLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@contextlib.contextmanager
def lock_folder(*folders: str | os.PathLike[str]) -> Iterator[list[FolderLock]]:
    """Hold the lock of every folder (in order) for the ``with`` block; :class:`FolderLocked`
    at once when another process holds one."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(FolderLock(f)) for f in folders]
