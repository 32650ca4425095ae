"""SandboxConfig: how a sandbox pool runs programs.

A module of its own because both the pool (:mod:`.pool`, which re-exports it as
public API) and the start of each worker process (:mod:`.process`) read it, and
the worker start must not import the pool that drives it.
"""

from __future__ import annotations

import msgspec

__all__ = ["SandboxConfig"]


class SandboxConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How the pool runs programs. Defaults suit a shared evaluation machine.

    ``workers`` defaults to the number of usable cores: more workers than cores
    turn CPU-time limits into false TLEs on a loaded machine.
    """

    workers: int | None = None
    #: False runs programs with no confinement layer at all (benchmarks only).
    confine: bool = True
    #: Refuse to start when a mechanism (Landlock, namespaces, seccomp) is missing.
    require_full: bool = False
    #: Size of each worker's scratch tmpfs, the only writable place.
    scratch_mb: int = 64
    #: First unprivileged uid/gid used when started as root (one per worker). None:
    #: a range of this pool's own, drawn at random above UID_FLOOR and held by a lock
    #: file, so that two pools on one host never share a uid (the thread limit is
    #: per uid, and a process may re-prioritise others of its uid).
    uid_base: int | None = None
    #: Threads a program may run (RLIMIT_NPROC, per worker uid; only when root).
    nproc: int = 64
    #: Open files of a program. Also bounds the kernel buffers (pipes, socketpairs)
    #: a program can fill outside its memory limit: ~6 MB at 32.
    nofile: int = 32
    stack_mb: int = 64
    #: Non-stdlib packages a program may import (pre-imported, read-only).
    allowed_packages: tuple[str, ...] = ("numpy",)
    #: Tests per chunk (upper bound; a job is cut so every worker gets work).
    chunk: int = 32
    #: Larger programs are refused (RE ``SourceTooLarge``) before reaching a worker:
    #: compiling megabytes of literals takes gigabytes and seconds.
    max_source_bytes: int = 1 << 20
    #: Jobs admitted at once; further ``run`` calls wait (back-pressure).
    max_jobs: int | None = None
    #: Seconds a worker may take to start (READY) or to load a program (LOADED:
    #: compile and pre-imports); a worker that takes longer is killed and replaced.
    load_grace: float = 30.0
    #: Seconds on top of a test's wall limit within which its RESULT must follow
    #: the previous frame; a worker that misses it (frozen, wedged) is killed.
    result_grace: float = 5.0
    #: The loop rule (see SandboxPool.run): a test whose reference time ``ref_ms`` is
    #: known runs under min(own limit, max(loop_probe, loop_floor + loop_factor x ref,
    #: loop_factor x the slowest test of the call that finished)) of CPU; once a test
    #: of the call timed out, the call's later tests run under min(own limit,
    #: max(loop_floor, loop_floor + loop_factor x ref, loop_factor x that slowest
    #: test)). 0 turns the rule off (every test runs to its own limit).
    loop_factor: int = 10
    #: Seconds of CPU: the least limit the loop rule gives a test, and what it adds to
    #: loop_factor x the reference's time (a test's fixed cost up to the kill: its fork,
    #: confinement and the harness's input and output, ~0.5 ms of CPU, which ``ref_ms``
    #: does not count; 4x that for margin. The zygote kills at the limit to ~0.1 ms, so
    #: this is the whole margin).
    loop_floor: float = 0.002
    #: Seconds of CPU: loop_floor for a test that runs after another in a resident child
    #: (at most loop_floor). Its CPU is counted from its handover: no fork, confinement or
    #: exit in it, and a fixed cost of ~0.07 ms (the interpreter's state restored, its
    #: input read, its report written); ~7x that for margin.
    loop_floor_shared: float = 0.0005
    #: Seconds of CPU: the least limit of a test with a known reference time before a
    #: timeout of its call (so a program that loops from its first test spends this,
    #: not its own limit). 0.1 until the resident child's interrupt (stop 31): any value
    #: keeps the promise, since the reference's own bound is the larger where it is.
    loop_probe: float = 0.05
    #: Run a program's tests one after another in one child process (a "resident"
    #: child) rather than a fresh child each: a fork, its copy-on-write faults and its
    #: exit were most of a passing test's cost. Each test keeps its own limits, a fresh
    #: module namespace and fresh standard streams over its own input; a test after
    #: another that ends the child is run again at once in a new one (but for a kill at
    #: its CPU limit), and one that returns a wrong value is run again alone, so for a
    #: program whose tests do not depend on what earlier tests left in the process every
    #: verdict is a child per test's (docs/PROTOCOL.md, "One child for a program's
    #: tests"). False: a child per test.
    resident: bool = True
