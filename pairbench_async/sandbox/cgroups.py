"""Control groups for the sandbox: one per worker, for memory, processes and kill-all.

A program's processes (its zygote, the test children and their threads) join the
cgroups of their worker, so the kernel counts everything they hold against one
limit: heap, the scratch tmpfs, the memory files of stdin and stdout, page cache.
The zygote sets the memory limit per test (what the cgroup holds at the fork plus
the program's budget) and reports the peak above that; ``pids.max`` bounds the
threads of a worker whatever its uid; closing the pool kills whatever a cgroup
still holds and removes it.

Where the evaluator may: as root, with cgroup v1 (``memory`` and ``pids``
hierarchies; ``freezer`` used when present) or v2 (``memory`` and ``pids``
controllers delegated to the evaluator's own cgroup). Elsewhere :meth:`CgroupTree.create`
says why not once, and the zygote counts scratch and memory-file sizes by hand.
Only this module and the pool touch cgroup files; the worker gets paths.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from collections.abc import Iterator

__all__ = ["CgroupTree", "WorkerCgroup"]

#: v1 files a zygote reads and writes, by role; v2's names are below.
_V1 = {"usage": "memory.usage_in_bytes", "limit": "memory.limit_in_bytes",
       "peak": "memory.max_usage_in_bytes", "events": "memory.oom_control",
       "stat": "memory.stat"}
_V2 = {"usage": "memory.current", "limit": "memory.max", "peak": "memory.peak",
       "events": "memory.events", "stat": "memory.stat"}


def _mounts() -> Iterator[tuple[str, str, set[str]]]:
    """(mount point, fs type, options) of every cgroup mount of this process."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields, rest = left.split(), right.split()
            if len(fields) < 5 or len(rest) < 3 or rest[0] not in ("cgroup", "cgroup2"):
                continue
            yield fields[4], rest[0], set(rest[2].split(","))


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per v1 controller (and "" for v2)."""
    out: dict[str, str] = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                out[c] = path
    return out


def _sweep_stale(parent: str, version: int) -> None:
    """Remove the cgroups of pools whose evaluator died without closing them (their
    name carries the evaluator's pid): whatever is still in them is killed first."""
    with contextlib.suppress(OSError):
        with os.scandir(parent) as entries:
            stale = list(entries)
        for entry in stale:
            name = entry.name
            if not name.startswith("pairbench-") or not entry.is_dir(follow_symlinks=False):
                continue
            pid = name.split("-")[1]
            if not pid.isdigit():
                continue
            try:
                os.kill(int(pid), 0)
                continue  # its evaluator lives
            except ProcessLookupError:
                pass
            except OSError:
                continue
            CgroupTree([entry.path], version).remove()


class WorkerCgroup:
    """The cgroups of one worker (one directory per hierarchy)."""

    def __init__(self, dirs: list[str], memory: str, version: int) -> None:
        self.dirs = dirs
        self.memory = memory
        self.version = version

    def spec(self) -> dict[str, object]:
        """What the worker is told: where its zygotes join, and the memory files."""
        names = _V1 if self.version == 1 else _V2
        spec: dict[str, object] = {"procs": [os.path.join(d, "cgroup.procs") for d in self.dirs]}
        spec.update({k: os.path.join(self.memory, v) for k, v in names.items()})
        return spec

    def pids(self) -> set[int]:
        out: set[int] = set()
        for d in self.dirs:
            with contextlib.suppress(OSError), open(os.path.join(d, "cgroup.procs")) as f:
                out.update(int(x) for x in f.read().split())
        return out

    def kill_all(self, deadline: float = 5.0) -> bool:
        """SIGKILL every process in the cgroups until none is left; True when empty.

        Nothing in them can start a process except a zygote forking a test child,
        so a few rounds suffice; the deadline only bounds a kernel that is slow to
        reap."""
        end = time.monotonic() + deadline
        while True:
            pids = self.pids()
            if not pids:
                return True
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > end:
                return False
            time.sleep(0.005)

    def remove(self) -> None:
        """Kill what is left and remove the directories (a busy one stays, harmless)."""
        self.kill_all()
        for d in self.dirs:
            with contextlib.suppress(OSError):
                os.rmdir(d)


class CgroupTree:
    """The pool's own cgroups: a directory per hierarchy beneath the evaluator's
    cgroup, holding one subdirectory per worker start."""

    def __init__(self, roots: list[str], version: int) -> None:
        #: memory first, then pids (v1), then freezer when mounted; v2: the one root
        self.roots = roots
        self.version = version

    @classmethod
    def create(cls, name: str) -> tuple[CgroupTree | None, str]:
        """The pool's cgroups, or (None, why not)."""
        if os.getuid() != 0:
            return None, "not root (no delegated cgroup)"
        try:
            mounts = list(_mounts())
            own = _own_paths()
        except OSError as exc:
            return None, f"cannot read the cgroup mounts: {exc}"
        v1 = {}
        for point, kind, opts in mounts:
            if kind == "cgroup":
                for c in ("memory", "pids", "freezer"):
                    if c in opts and c in own:
                        v1[c] = os.path.join(point, own[c].lstrip("/"))
        if "memory" in v1 and "pids" in v1:
            roots = [os.path.join(v1[c], name) for c in ("memory", "pids", "freezer") if c in v1]
            return cls._made(roots, 1)
        for point, kind, _ in mounts:
            if kind != "cgroup2" or "" not in own:
                continue
            parent = os.path.join(point, own[""].lstrip("/"))
            try:
                with open(os.path.join(parent, "cgroup.controllers")) as f:
                    have = set(f.read().split())
            except OSError:
                continue
            if {"memory", "pids"} <= have:
                return cls._made([os.path.join(parent, name)], 2)
        return None, "no cgroup hierarchy with the memory and pids controllers"

    @classmethod
    def _made(cls, roots: list[str], version: int) -> tuple[CgroupTree | None, str]:
        for r in roots:
            _sweep_stale(os.path.dirname(r), version)
        made: list[str] = []
        try:
            for r in roots:
                os.mkdir(r, 0o755)
                made.append(r)
            if version == 2:  # children get the controllers (the pool's cgroup holds no process)
                with open(os.path.join(roots[0], "cgroup.subtree_control"), "w") as f:
                    f.write("+memory +pids")
        except OSError as exc:
            for r in reversed(made):
                with contextlib.suppress(OSError):
                    os.rmdir(r)
            return None, f"cannot create the pool's cgroups: {exc}"
        return cls(roots, version), ""

    @staticmethod
    def unique_name() -> str:
        return f"pairbench-{os.getpid()}-{secrets.token_hex(4)}"

    def worker(self, label: str, pids_max: int) -> WorkerCgroup:
        """A new cgroup for one worker start: a pids limit now; memory limits are the
        zygote's, per test. OSError when it cannot be made."""
        dirs = []
        try:
            for r in self.roots:
                d = os.path.join(r, label)
                os.mkdir(d, 0o755)
                dirs.append(d)
            memory, pids_dir = dirs[0], dirs[1 if self.version == 1 else 0]
            with open(os.path.join(pids_dir, "pids.max"), "w") as f:
                f.write(str(pids_max))
            if self.version == 1:  # no swap behind the limit's back
                with contextlib.suppress(OSError), open(os.path.join(memory, "memory.swappiness"), "w") as f:
                    f.write("0")
            else:
                with contextlib.suppress(OSError), open(os.path.join(memory, "memory.swap.max"), "w") as f:
                    f.write("0")
        except OSError:
            for d in reversed(dirs):
                with contextlib.suppress(OSError):
                    os.rmdir(d)
            raise
        return WorkerCgroup(dirs, memory, self.version)

    def remove(self) -> None:
        """Remove the pool's directories (after every worker's)."""
        for r in self.roots:
            with contextlib.suppress(OSError):
                with os.scandir(r) as entries:
                    workers = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
                for path in workers:
                    WorkerCgroup([path], path, self.version).remove()
            with contextlib.suppress(OSError):
                os.rmdir(r)
