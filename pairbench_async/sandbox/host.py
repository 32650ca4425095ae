"""The host a pool runs on: what the pool looks up there, claims and cleans.

Kept apart from the pool because none of it concerns scheduling. Looked up once
per pool: the paths a confined child may read (Landlock), where the allowed
packages live and the ``sys.path`` entries that expose them, the native
confinement module. Claimed and cleaned: a range of sandbox uids of the pool's
own (held by a lock file, so two pools on one host never share a uid) and the
scratch directories that dead evaluators left behind. Also the environment a
worker gets, and which confinement layers a worker's report says are missing.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
import secrets
import shutil
import sysconfig
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import NativeModuleMissing, SandboxError

__all__ = [
    "UID_FLOOR",
    "SCRATCH_PREFIX",
    "UID_SLOT",
    "claim_uid_range",
    "extra_sys_paths",
    "HostPaths",
    "host_paths",
    "package_origins",
    "sweep_stale_scratch",
    "uid_alive",
    "worker_env",
    "confinement_report",
]

#: Every sandbox uid (as root) is at least this; each pool takes a slot of UID_SLOT.
UID_FLOOR = 1_900_000_000
UID_SLOT = 256
_UID_SLOTS = 900_000  # the top uid stays below 2**31: APIs taking a C int (setpriority) refuse more
SCRATCH_PREFIX = "pairbench-sandbox-"


def claim_uid_range() -> tuple[int, int, str]:
    """A free slot of uids: (base, fd of its held lock file, lock path)."""
    tmp = tempfile.gettempdir()
    for _ in range(100):
        base = UID_FLOOR + UID_SLOT * secrets.randbelow(_UID_SLOTS)
        path = os.path.join(tmp, f"pairbench-uids-{base}.lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.stat(path).st_ino == os.fstat(fd).st_ino:  # not unlinked meanwhile
                return base, fd, path
        except (BlockingIOError, FileNotFoundError):
            pass
        os.close(fd)
    raise SandboxError("no free range of sandbox uids (100 tries)")


def uid_alive(uid: int) -> bool:
    """Whether any process of this host runs as ``uid`` (real, effective or saved)."""
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/status", "rb") as f:
                    for line in f:
                        if line.startswith(b"Uid:"):
                            if uid in {int(x) for x in line.split()[1:4]}:
                                return True
                            break
            except OSError:
                continue
    return False


def sweep_stale_scratch() -> None:
    """Remove the scratch directories of evaluators that died without closing their pool
    (their name carries the evaluator's pid)."""
    tmp = tempfile.gettempdir()
    with contextlib.suppress(OSError):
        for name in os.listdir(tmp):
            if not name.startswith(SCRATCH_PREFIX):
                continue
            pid = name[len(SCRATCH_PREFIX):].split("-", 1)[0]
            if not pid.isdigit():
                continue
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)
            except OSError:
                pass


def _landlock_read_paths(origins: Mapping[str, str]) -> list[str]:
    """What a child may read: the stdlib (not site-packages), shared libraries, zoneinfo."""
    paths: set[str] = set()
    for key in ("stdlib", "platstdlib"):
        root = sysconfig.get_paths().get(key)
        if root and os.path.isdir(root):
            for entry in os.listdir(root):
                if entry in ("site-packages", "dist-packages"):
                    continue
                paths.add(os.path.join(root, entry))
    dynload = os.path.join(sysconfig.get_paths()["platstdlib"], "lib-dynload")
    if os.path.isdir(dynload):
        paths.add(dynload)
    paths.update(("/lib64", "/usr/lib64"))
    multiarch = sysconfig.get_config_var("MULTIARCH")
    if multiarch:
        paths.update((f"/lib/{multiarch}", f"/usr/lib/{multiarch}"))
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir and os.path.isdir(libdir):
        paths.update(os.path.join(libdir, e) for e in os.listdir(libdir) if e.startswith("libpython"))
    paths.update(("/etc/ld.so.cache", "/usr/share/zoneinfo", "/etc/localtime"))
    for origin in origins.values():  # the allowed packages (see package_origins)
        pkg_dir = os.path.dirname(origin)
        paths.add(pkg_dir)
        libs = pkg_dir + ".libs"
        if os.path.isdir(libs):
            paths.add(libs)
    return sorted(p for p in paths if os.path.exists(p))


def package_origins(allowed_packages: Sequence[str]) -> dict[str, str]:
    """Where each allowed package's ``__init__`` (or module file) is, for the worker's
    finder: a confined process may read the package but not list site-packages."""
    out: dict[str, str] = {}
    for name in allowed_packages:
        spec = importlib.util.find_spec(name) if name.isidentifier() else None
        if spec is not None and spec.origin and os.path.isfile(spec.origin):
            out[name] = spec.origin
    return out


def extra_sys_paths(origins: Mapping[str, str]) -> list[str]:
    """site-packages directories holding an allowed package, for the worker's sys.path."""
    out: list[str] = []
    for origin in origins.values():
        parent = os.path.dirname(os.path.dirname(origin))
        if parent not in out:
            out.append(parent)
    return out


#: (Landlock read paths, extra sys.path entries, the native module's file, package origins)
HostPaths = tuple[list[str], list[str], str, dict[str, str]]


def host_paths(allowed_packages: Sequence[str]) -> HostPaths:
    """What every worker of a pool is told about the host, looked up once: the paths a
    child may read, the sys.path entries for the allowed packages, the native module's
    file and where each allowed package is."""
    origins = package_origins(allowed_packages)
    return _landlock_read_paths(origins), extra_sys_paths(origins), _confine_path(), origins


def _confine_path() -> str:
    spec = importlib.util.find_spec("pairbench_async.sandbox.native")
    if spec is None or spec.origin is None:
        raise NativeModuleMissing(
            "the native sandbox module pairbench_async.sandbox.native is not built: "
            "reinstall with `pip install -e .` (needs gcc and the Python headers)"
        )
    return spec.origin


def worker_env(scratch: str) -> dict[str, str]:
    """The whole environment of a worker: nothing of ours, above all no API key."""
    return {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": scratch,
        "TMPDIR": scratch,
        "PYTHONHASHSEED": "0",
        # numeric libraries must not start thread pools that hit the process limit
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
        "VECLIB_MAXIMUM_THREADS": "1",
    }


#: (report key, the layer's name, whether only root can have it) for each layer a pool
#: says it runs without
_LAYERS = (
    ("seccomp", "seccomp", False),
    ("landlock", "Landlock", False),
    ("netns", "network namespace", False),
    ("tmpfs", "scratch tmpfs", False),
    ("setuid", "unprivileged uid", True),
    ("pidns", "PID namespace", False),
    ("minimal_root", "minimal root", False),
    ("cgroup", "cgroups (memory counted by hand)", True),
)


def confinement_report(report: dict[str, Any]) -> list[str]:
    """The confinement layers a worker report says are missing (empty = all on); a
    layer only root can have (uids, cgroups) is missing only when root lacks it."""
    return [name for key, name, root_only in _LAYERS
            if not report.get(key) and (report.get("root") or not root_only)]
