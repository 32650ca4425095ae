"""What round 3's layers cost, each measured on its own, side by side with the step it adds to.

    python -m bench.layer_costs [--rounds N]     # as root (cgroups, namespaces)

Per program (the worker does these once before forking a program's zygote):
  fork+wait           a plain fork of a small process and its reaping (the base)
  pidns fork+wait     the same, the child the init of a fresh PID namespace
  scratch remount     umount + mount of the scratch tmpfs (a fresh one per program)
  cgroup join         a process writing itself into the memory and pids cgroups
Per test (the zygote does these around every child):
  cgroup accounting   read usage, write the limit, reset the peak, read the peak and
                      the OOM count (five file operations on held descriptors)
  scratch reset       fchmod + futimens of the scratch root
Each figure is the median of --rounds timed batches, in microseconds per operation.
The end-to-end figure stays `python -m bench.sandbox_throughput`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

from pairbench_async.sandbox import host
from pairbench_async.sandbox.cgroups import CgroupTree


def _confine():  # the native module, as the worker loads it
    import importlib.machinery
    import importlib.util

    path = host._confine_path()
    loader = importlib.machinery.ExtensionFileLoader("native", path)
    spec = importlib.util.spec_from_file_location("native", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _per_op(fn, n: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(times)


def _fork_wait() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if os.getuid() != 0:
        sys.exit("run as root: the layers measured here are root's (cgroups, namespaces)")
    confine = _confine()
    out: dict[str, float] = {}
    out["fork+wait"] = _per_op(_fork_wait, 200, args.rounds)

    # a child process does the namespace work, so that this process stays as it was
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        confine.enter_namespaces(False, True)
        init = os.fork()
        if init:
            os.waitpid(init, 0)
            os._exit(0)
        res: dict[str, float] = {}
        own = os.open("/proc/self/ns/pid", os.O_RDONLY)

        def pidns_fork() -> None:
            confine.new_pid_namespace(own)
            _fork_wait()

        res["pidns fork+wait"] = _per_op(pidns_fork, 200, args.rounds)
        scratch = tempfile.mkdtemp()
        confine.mount_tmpfs(scratch, 64, -1, -1, 0o700)

        def remount() -> None:
            confine.unmount(scratch)
            confine.mount_tmpfs(scratch, 64, -1, -1, 0o700)

        res["scratch remount"] = _per_op(remount, 200, args.rounds)
        fd = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY)

        def reset() -> None:
            os.chmod(fd, 0o700)
            os.utime(fd, ns=(0, 0))

        res["scratch reset"] = _per_op(reset, 2000, args.rounds)
        os.write(w, json.dumps(res).encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        out.update(json.loads(f.read() or "{}"))
    os.waitpid(pid, 0)

    tree, why = CgroupTree.create(CgroupTree.unique_name())
    if tree is None:
        print(f"cgroups: {why}")
    else:
        try:
            cg = tree.worker("bench", 64)
            spec = cg.spec()
            procs = [os.open(p, os.O_WRONLY) for p in spec["procs"]]

            def join() -> None:
                pid = os.fork()
                if pid == 0:
                    for fd in procs:
                        os.write(fd, b"0")
                    os._exit(0)
                os.waitpid(pid, 0)

            out["cgroup join (with its fork+wait)"] = _per_op(join, 200, args.rounds)
            usage = os.open(spec["usage"], os.O_RDONLY)
            limit = os.open(spec["limit"], os.O_RDWR)
            peak = os.open(spec["peak"], os.O_RDWR)
            events = os.open(spec["events"], os.O_RDONLY)

            def account() -> None:
                base = int(os.pread(usage, 64, 0))
                os.pwrite(limit, str(base + (256 << 20)).encode(), 0)
                os.pwrite(peak, b"0", 0)
                os.pread(peak, 64, 0)
                os.pread(events, 1024, 0)

            out["cgroup accounting"] = _per_op(account, 2000, args.rounds)
        finally:
            tree.remove()
    for name, us in out.items():
        print(f"{name:36s} {us:8.1f} us")
    print(json.dumps({k: round(v, 1) for k, v in out.items()}))


if __name__ == "__main__":
    main()
