"""The second-round hostile battery (``hostile_round2.py``), run through one shared pool
of one worker (so that "a later program" always lands where the last one ran), a
sanity job after every case, a few cases through the ``exec`` command, and the
pre-import marker package through pools with and without it allowed.

Host-side checks after the battery: no Unix socket of the host (path, in a pytest
tmp dir, in a world-traversable /tmp dir and next to this file; abstract) received a
connection or a datagram; the planted world-writable files and directories are
unchanged (content and mtime); no SysV object or POSIX queue was created; no
marker of the pre-import package exists; no sandbox process or zombie survives.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import importlib
import importlib.util
import json
import os
import platform
import secrets
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from pairbench_async.core.types import Limits, Program, Test, TestResult, Verdict
from pairbench_async.sandbox import host as host_module
from pairbench_async.sandbox.host import UID_FLOOR
from pairbench_async.sandbox.pool import SandboxConfig, SandboxPool
from tests.waiting import soon, wait_until

HERE = Path(__file__).parent
DATA = HERE / "data"
sys.path.insert(0, str(HERE))
from hostile_round2 import (  # noqa: E402
    CASES,
    MARKER_INIT,
    MARKER_PACKAGE,
    MARKER_PROGRAMS,
    Case,
    Step,
)

IS_ROOT = os.getuid() == 0
HAVE_NUMPY = importlib.util.find_spec("numpy") is not None
SANITY = Program(source="print(int(input()) * 2)\n")
SANITY_TESTS = [Test(id="s1", input="21\n", output="42\n")]
OLD = 1_000_000_000  # the mtime planted files and directories carry (2001)
#: this run's sandbox uids: other runs (a developer's, CI's) may use the default base at
#: the same time, and their processes must not count as ours
UID_BASE = 1_910_000_000 + 64 * secrets.randbelow(100_000)
ACTIVE = [
    c
    for c in CASES
    if (HAVE_NUMPY or "numpy" not in c.tags)
    and (platform.machine() == "x86_64" or "x86_64" not in c.tags)
]


# ----------------------------------------------------------------------------- the host


def _sysvipc() -> dict[str, set[tuple[str, str]]]:
    """(key, id) of every SysV object a sandbox could have created, per kind: as root,
    created by a sandbox uid; otherwise by our own uid (a user namespace maps only it)."""
    cuid_col = {"msg": 9, "shm": 9, "sem": 6}
    out: dict[str, set[tuple[str, str]]] = {}
    for kind, col in cuid_col.items():
        try:
            rows = [
                r.split()
                for r in Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
                if r.strip()
            ]
        except OSError:
            rows = []
        out[kind] = {
            (r[0], r[1])
            for r in rows
            if (int(r[col]) >= UID_FLOOR if IS_ROOT else int(r[col]) == os.getuid())
        }
    return out


class Host:
    """Real sockets, planted files, IPC names and canaries the programs aim at."""

    def __init__(self, tmp: Path) -> None:
        self.token = secrets.token_hex(4)
        self.canary = "SECRET-INPUT-" + secrets.token_hex(24)
        self.probe = "PROBE-" + secrets.token_hex(8)
        self.ipc_key = 0x50B20000 | secrets.randbelow(0xFFFF)
        self.mq_name = f"/pb-r2-mq-{self.token}"
        self.shm_name = f"pb-r2-shm-{self.token}"
        self.cleanup: list[Path] = []

        # Directories for listening sockets: a pytest tmp dir (0700 ancestors as root, so
        # it only means something when not root), a world-traversable dir in /tmp, and a
        # world-traversable dir next to this file (outside every hidden directory).
        self.out_root = DATA / f"_host_{self.token}"
        self.out_root.mkdir(parents=True)
        self.out_root.chmod(0o755)
        self.cleanup.append(self.out_root)
        tmp_socks = Path(tempfile.mkdtemp(prefix="pb-r2-socks-", dir="/tmp"))
        tmp_socks.chmod(0o755)
        self.cleanup.append(tmp_socks)
        out_socks = self.out_root / "socks"
        out_socks.mkdir()
        out_socks.chmod(0o755)
        sock_dirs = {"pytest": tmp / "socks", "tmp": tmp_socks, "outside": out_socks}
        sock_dirs["pytest"].mkdir()

        self.sel = selectors.DefaultSelector()
        self.hits: dict[str, int] = {}
        self.sockets: list[socket.socket] = []
        self.stream_paths: dict[str, str] = {}
        self.dgram_paths: dict[str, str] = {}
        for where, d in sock_dirs.items():
            for kind, typ in (("stream", socket.SOCK_STREAM), ("dgram", socket.SOCK_DGRAM)):
                path = str(d / f"{kind}.sock")
                self._listen(f"{where}-{kind}", typ, path)
                os.chmod(path, 0o777)
                (self.stream_paths if kind == "stream" else self.dgram_paths)[where] = path
        self.abstract_stream = f"\0pb-r2-stream-{self.token}"
        self.abstract_dgram = f"\0pb-r2-dgram-{self.token}"
        self._listen("abstract-stream", socket.SOCK_STREAM, self.abstract_stream)
        self._listen("abstract-dgram", socket.SOCK_DGRAM, self.abstract_dgram)

        # World-writable directories holding a world-writable file, all dated 2001: in
        # /tmp, /var/tmp, /dev/shm and next to this file.
        self.outside_dir = self.out_root / "world"
        self.outside_dir.mkdir()
        self.world_dirs = [self.outside_dir]
        for parent in ("/tmp", "/var/tmp", "/dev/shm"):
            if os.path.isdir(parent):
                d = Path(tempfile.mkdtemp(prefix="pb-r2-world-", dir=parent))
                self.world_dirs.append(d)
                self.cleanup.append(d)
        self.tmp_world = self.world_dirs[1]
        self.planted_files: list[Path] = []
        for d in self.world_dirs:
            f = d / "planted.txt"
            f.write_text("planted\n")
            f.chmod(0o666)
            os.utime(f, (OLD, OLD))
            self.planted_files.append(f)
            d.chmod(0o777)
        for d in self.world_dirs:
            os.utime(d, (OLD, OLD))

        # Where the pre-import package tries to leave a marker.
        self.markers = [
            self.outside_dir / f"marker-{self.token}",
            self.tmp_world / f"marker-{self.token}",
            Path("/tmp") / f"pb-r2-marker-{self.token}",
        ]
        self.ipc_before = _sysvipc()

        self._stop = threading.Event()
        self.rounds = 0  # the listener's select rounds so far
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    # -- sockets -----------------------------------------------------------------

    def _listen(self, name: str, typ: int, address: str) -> None:
        s = socket.socket(socket.AF_UNIX, typ)
        s.bind(address)
        if typ == socket.SOCK_STREAM:
            s.listen(16)
        s.setblocking(False)
        self.sel.register(s, selectors.EVENT_READ, (name, typ))
        self.sockets.append(s)
        self.hits[name] = 0

    def _serve(self) -> None:
        while not self._stop.is_set():
            for key, _ in self.sel.select(0.1):
                s = key.fileobj
                name, typ = key.data
                with contextlib.suppress(OSError):
                    if typ == socket.SOCK_STREAM:
                        conn, _ = s.accept()
                        conn.close()
                    else:
                        s.recv(4096)
                    self.hits[name] += 1
            self.rounds += 1

    def caught_up(self) -> None:
        """Return once the listener has run a whole round begun after this call: every
        connection or datagram that reached a host socket before it is counted."""
        start = self.rounds
        wait_until(lambda: self.rounds >= start + 2, 10, what="the socket listener's round")

    def connections(self) -> dict[str, int]:
        self.caught_up()
        return {k: v for k, v in self.hits.items() if v}

    # -- substitution ------------------------------------------------------------

    def code(self, source: str) -> str:
        subs = {
            "@STREAM_PATHS@": repr(list(self.stream_paths.values())),
            "@DGRAM_PATHS@": repr(list(self.dgram_paths.values())),
            "@STREAM_OUT@": repr(self.stream_paths["outside"]),
            "@DGRAM_OUT@": repr(self.dgram_paths["outside"]),
            "@ABSTRACT_STREAM@": repr(self.abstract_stream),
            "@ABSTRACT_DGRAM@": repr(self.abstract_dgram),
            "@OUTSIDE_DIR@": repr(str(self.outside_dir)),
            "@TMP_DIR@": repr(str(self.tmp_world)),
            "@PLANTED_FILES@": repr([str(p) for p in self.planted_files]),
            "@PLANTED_DIRS@": repr([str(p) for p in self.world_dirs]),
            "@IPC_KEY@": str(self.ipc_key),
            "@MQ_NAME@": repr(self.mq_name),
            "@SHM_NAME@": repr(self.shm_name),
        }
        for k, v in subs.items():
            source = source.replace(k, v)
        return source

    def text(self, s: str) -> str:
        return (
            s.replace("@CANARY_REV@", self.canary[::-1])
            .replace("@PROBE_REV@", self.probe[::-1])
            .replace("@CANARY@", self.canary)
        )

    # -- checks ------------------------------------------------------------------

    def damaged_plants(self) -> list[str]:
        bad = []
        for f in self.planted_files:
            if not f.exists():
                bad.append(f"{f} is gone")
                continue
            st = f.stat()
            if f.read_text() != "planted\n":
                bad.append(f"{f} content changed")
            if int(st.st_mtime) != OLD:
                bad.append(f"{f} mtime changed to {st.st_mtime}")
        for d in self.world_dirs:
            extra = sorted(set(os.listdir(d)) - {"planted.txt"} - {m.name for m in self.markers})
            if extra:
                bad.append(f"{d} gained {extra}")
            if int(d.stat().st_mtime) != OLD:
                bad.append(f"{d} mtime changed to {d.stat().st_mtime}")
        return bad

    def restore_plants(self) -> None:
        """Put the planted files and directories back as they were (after a case hit them)."""
        for f in self.planted_files:
            if not f.exists() or f.read_text() != "planted\n":
                f.write_text("planted\n")
            f.chmod(0o666)
            os.utime(f, (OLD, OLD))
        for d in self.world_dirs:
            for name in set(os.listdir(d)) - {"planted.txt"}:
                path = d / name
                (shutil.rmtree if path.is_dir() and not path.is_symlink() else os.unlink)(path)
            os.utime(d, (OLD, OLD))

    def strays(self) -> list[str]:
        """Files a B case may have created in host directories (removed when found)."""
        found = []
        for d in (
            "/tmp",
            "/var/tmp",
            "/dev/shm",
            "/run",
            "/",
            "/root",
            "/home",
            str(self.outside_dir),
        ):
            with contextlib.suppress(OSError):
                for name in os.listdir(d):
                    if name.startswith("pb_r2_"):
                        path = os.path.join(d, name)
                        found.append(path)
                        with contextlib.suppress(OSError):
                            (
                                shutil.rmtree
                                if os.path.isdir(path) and not os.path.islink(path)
                                else os.unlink
                            )(path)
        return found

    def new_ipc(self) -> dict[str, list[tuple[str, str]]]:
        after = _sysvipc()
        return {
            k: sorted(after[k] - self.ipc_before[k]) for k in after if after[k] - self.ipc_before[k]
        }

    def remove_ipc(self, new: dict[str, list[tuple[str, str]]]) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        ctl = {"msg": libc.msgctl, "shm": libc.shmctl, "sem": libc.semctl}
        for kind, items in new.items():
            for _key, ident in items:
                ctl[kind](int(ident), 0, None)  # IPC_RMID

    def posix_leftovers(self) -> list[str]:
        libc = ctypes.CDLL(None, use_errno=True)
        left = []
        for name in (self.mq_name, self.mq_name + "-raw"):
            fd = libc.mq_open(name.encode(), os.O_RDONLY, 0, None)
            if fd >= 0:
                left.append(f"mqueue {name}")
                os.close(fd)
                libc.mq_unlink(name.encode())
        shm = Path("/dev/shm") / self.shm_name
        if shm.exists():
            left.append(str(shm))
            shm.unlink()
        return left

    def close(self) -> None:
        # Whatever tests ran (a -k selection may skip test_host_unharmed): no SysV object,
        # POSIX queue or shm file a program of this run created stays on the host.
        self.remove_ipc(self.new_ipc())
        self.posix_leftovers()
        self._stop.set()
        self._thread.join(2)
        for s in self.sockets:
            self.sel.unregister(s)
            s.close()
        self.sel.close()
        for m in self.markers:
            with contextlib.suppress(OSError):
                m.unlink()
        for p in self.cleanup:
            shutil.rmtree(p, ignore_errors=True)
        with contextlib.suppress(OSError):
            DATA.rmdir()  # only when empty


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Host:
    h = Host(tmp_path_factory.mktemp("round2"))
    yield h
    h.close()


# ----------------------------------------------------------------------------- running


def _tests(case: Case, host: Host) -> list[Test]:
    return [
        Test(id=str(i + 1), input=host.text(s.input), output=host.text(s.output))
        for i, s in enumerate(case.steps)
    ]


def _limits(case: Case) -> Limits:
    return Limits(
        time_limit=case.time_limit,
        memory_limit_mb=case.memory_mb,
        wall_limit=case.wall_limit,
        output_limit=case.output_limit,
    )


def _check_step(
    case: Case,
    i: int,
    step: Step,
    host: Host,
    verdict: str,
    stdout: str,
    error: str | None,
    stderr: str = "",
) -> None:
    where = f"{case.name} [{case.cls}] test {i + 1}"
    detail = f"stdout={stdout[:600]!r} error={error!r} stderr={stderr[-400:]!r}"
    assert verdict in step.verdicts, f"{where}: {verdict} not in {sorted(step.verdicts)}; {detail}"
    if step.error is not None and verdict == "RE":
        assert error == step.error, f"{where}: error {error!r} != {step.error!r}; {detail}"
    for s in step.stdout_has:
        assert host.text(s) in stdout, f"{where}: {s!r} not in stdout; {detail}"
    for s in step.stdout_lacks:
        assert host.text(s) not in stdout, f"{where}: {s!r} in stdout; {detail}"
    if step.stdout_exact is not None:
        assert stdout == host.text(step.stdout_exact), (
            f"{where}: stdout not exactly {step.stdout_exact!r}; {detail}"
        )
    if step.expect_each is not None:
        tokens = [t for t in stdout.split() if "=" in t]
        assert tokens, f"{where}: no outcome printed; {detail}"
        wrong = [t for t in tokens if t.rpartition("=")[2] != step.expect_each]
        assert not wrong, f"{where}: not {step.expect_each}: {wrong}"


@dataclass
class Outcome:
    results: list[TestResult] | None
    sanity: Verdict | None
    restarts: int
    faults: int
    seconds: float
    host_problems: list[str]


@pytest.fixture(scope="module")
def battery(host: Host) -> dict[str, object]:
    """Every case through a pool of one worker (one pool per group, the cases of a group
    in order on it); after each case the pool must still serve a sanity job."""
    groups: dict[str, list[Case]] = {}
    for case in ACTIVE:
        groups.setdefault(case.group, []).append(case)

    async def run_group(cases: list[Case], out: dict[str, object]) -> None:
        async with SandboxPool(SandboxConfig(workers=1, uid_base=UID_BASE)) as pool:
            out["__bases__"].append(pool._base)
            for case in cases:
                before = pool.statistics()
                damage_before = set(host.damaged_plants())
                t0 = time.monotonic()
                try:
                    results = await asyncio.wait_for(
                        pool.run(
                            Program(source=host.code(case.source)),
                            _tests(case, host),
                            _limits(case),
                        ),
                        timeout=40,
                    )
                except TimeoutError:
                    results = None
                try:
                    sanity = (await asyncio.wait_for(pool.run(SANITY, SANITY_TESTS), timeout=20))[
                        0
                    ].verdict
                except TimeoutError:
                    sanity = None
                after = pool.statistics()
                seconds = time.monotonic() - t0
                problems = [d for d in host.damaged_plants() if d not in damage_before]
                if problems:
                    host.restore_plants()
                if case.check and results is not None:
                    problems += CHECKS[case.check](host, results)
                out[case.name] = Outcome(
                    results,
                    sanity,
                    after.worker_restarts - before.worker_restarts,
                    after.sandbox_faults - before.sandbox_faults,
                    seconds,
                    problems,
                )
            out["__report__"] = pool.confinement()
            out["__tree__"] |= {c.pid for c in psutil.Process().children(recursive=True)}

    async def run() -> dict[str, object]:
        out: dict[str, object] = {"__bases__": [], "__tree__": set()}
        for cases in groups.values():
            await run_group(cases, out)
        return out

    return asyncio.run(run())


def test_full_confinement_is_on(battery: dict[str, object]) -> None:
    report = battery["__report__"]
    assert report["seccomp"] and report["landlock"] and report["netns"] and report["tmpfs"], report


@pytest.mark.parametrize("case", ACTIVE, ids=[c.name for c in ACTIVE])
def test_case_through_pool(battery: dict[str, object], host: Host, case: Case) -> None:
    o = battery[case.name]
    assert o.results is not None, f"{case.name}: the pool did not answer within 40 s"
    assert len(o.results) == len(case.steps)
    for i, (step, r) in enumerate(zip(case.steps, o.results, strict=True)):
        _check_step(case, i, step, host, r.verdict.value, r.stdout, r.error, r.stderr)
    assert o.faults == 0, (
        f"{case.name}: sandbox fault(s): {[r.error for r in o.results if r.verdict is Verdict.SF]}"
    )
    assert o.sanity is Verdict.AC, f"the pool stopped serving after {case.name}: {o.sanity}"
    assert not o.host_problems, f"{case.name}: on the host: {o.host_problems}"


def _check_hidden_listing(host: Host, results: list[TestResult]) -> list[str]:
    try:
        data = json.loads(results[0].stdout)
    except ValueError:
        return [f"unexpected output {results[0].stdout[:300]!r}"]
    extra = host_module.extra_sys_paths(host_module.package_origins(("numpy",)))
    allowed = {data["cwd"], sys.base_prefix, sys.prefix, *extra}
    allowed |= {os.path.realpath(p) for p in allowed}
    shown = {}
    for d, entries in data["listing"].items():
        if isinstance(entries, str):  # denied: shows nothing
            continue
        bases = {d, os.path.realpath(d)}
        bad = [
            e
            for e in entries
            if not any(
                a == os.path.join(b, e) or a.startswith(os.path.join(b, e) + "/")
                for a in allowed
                for b in bases
            )
        ]
        if bad:
            shown[d] = bad[:10]
    return [f"hidden directories show host entries: {shown}"] if shown else []


def _check_planted(host: Host, results: list[TestResult]) -> list[str]:
    return []  # damage to the planted files is checked after every case


def _check_no_shm(host: Host, results: list[TestResult]) -> list[str]:
    shm = Path("/dev/shm") / host.shm_name
    return [f"a program created {shm}"] if shm.exists() else []


def _check_no_posix_ipc(host: Host, results: list[TestResult]) -> list[str]:
    """The program's own report can say EACCES while the queue exists (it did on HEAD)."""
    left = host.posix_leftovers()  # and removes them
    return [f"created on the host: {left}"] if left else []


def _check_no_marker(host: Host, results: list[TestResult]) -> list[str]:
    return [f"marker {m}" for m in host.markers if m.exists()]


CHECKS = {
    "hidden_listing": _check_hidden_listing,
    "planted_intact": _check_planted,
    "no_shm_file": _check_no_shm,
    "no_posix_ipc": _check_no_posix_ipc,
    "no_marker": _check_no_marker,
}


def _mine(pool_pids: set[int], since: float = 0.0, extra: set[int] = frozenset()) -> list[str]:
    """Live sandbox processes of ours: a uid of this run's range, or the worker script in
    the command line of a worker started by one of ``pool_pids`` (its configuration
    names the pool's pid; zygotes and children are forks and carry it too), or one of
    ``extra`` (descendants seen earlier). ``since`` leaves out older processes (psutil's
    create_time is only good to a second)."""
    owners = {f'"pool_pid": {pid}' for pid in pool_pids}
    out = []
    for p in psutil.process_iter(["uids", "cmdline", "status", "create_time", "ppid"]):
        try:
            uids, cmdline = p.info["uids"], p.info["cmdline"] or []
            if p.info["create_time"] < since - 2 and p.pid not in extra:
                continue
            ours = (uids is not None and UID_BASE <= uids.real < UID_BASE + 64) or p.pid in extra
            ours = ours or any(o in arg for arg in cmdline for o in owners)
            if ours:
                out.append(
                    f"pid {p.pid} ppid {p.info['ppid']} uid {uids.real if uids else '?'} "
                    f"{p.info['status']} {' '.join(cmdline)[:100]}"
                )
        except psutil.Error:
            pass
    return out


def test_host_unharmed(battery: dict[str, object], host: Host) -> None:
    problems = []
    hits = host.connections()
    if hits:
        problems.append(f"host Unix sockets reached: {hits}")
    damaged = {
        name: o.host_problems
        for name, o in battery.items()
        if isinstance(o, Outcome) and o.host_problems
    }
    if damaged:
        problems.append(f"host damage recorded during the battery: {damaged}")
    problems += host.damaged_plants()
    strays = host.strays()
    if strays:
        problems.append(f"created outside the scratch: {strays}")
    new = host.new_ipc()
    if new:
        problems.append(f"SysV IPC objects created during the battery: {new}")
        host.remove_ipc(new)
    left = host.posix_leftovers()
    if left:
        problems.append(f"POSIX IPC left behind: {left}")
    markers = [str(m) for m in host.markers if m.exists()]
    if markers:
        problems.append(f"pre-import markers: {markers}")
    procs = _mine({os.getpid()}, extra=battery["__tree__"])
    if procs:
        problems.append(f"sandbox processes survive: {procs}")
    zombies = [
        c.pid
        for c in psutil.Process().children(recursive=True)
        if c.status() == psutil.STATUS_ZOMBIE
    ]
    if zombies:
        problems.append(f"zombies: {zombies}")
    left_bases = [b for b in battery["__bases__"] if Path(b).exists()]
    if left_bases:
        problems.append(f"scratch directories left behind: {left_bases}")
    restarted = {
        name: o.restarts for name, o in battery.items() if isinstance(o, Outcome) and o.restarts
    }
    if restarted:
        problems.append(f"worker restarted after: {restarted}")
    faults = {name: o.faults for name, o in battery.items() if isinstance(o, Outcome) and o.faults}
    if faults:
        problems.append(f"sandbox faults in: {faults}")
    assert not problems, "\n".join(problems)


def test_battery_time(battery: dict[str, object]) -> None:
    """No case may take long: a slow one is an attack on throughput (or a hang)."""
    slow = {
        n: round(o.seconds, 1)
        for n, o in battery.items()
        if isinstance(o, Outcome) and o.seconds > 15
    }
    assert not slow, slow


# ----------------------------------------------------------------------------- exec command

EXEC_CASES = [c for c in ACTIVE if "exec" in c.tags]


@pytest.mark.parametrize("case", EXEC_CASES, ids=[c.name for c in EXEC_CASES])
def test_case_through_exec_command(case: Case, host: Host, tmp_path: Path) -> None:
    hits_before = dict(host.hits)
    ipc_before = _sysvipc()
    prog = tmp_path / f"{case.name}.py"
    prog.write_text(host.code(case.source))
    tests = tmp_path / f"{case.name}.jsonl"
    tests.write_text(
        "".join(
            json.dumps({"id": t.id, "input": t.input, "output": t.output}) + "\n"
            for t in _tests(case, host)
        )
    )
    cmd = [
        sys.executable,
        "-m",
        "pairbench_async",
        "exec",
        str(prog),
        "--tests",
        str(tests),
        "--time-limit",
        str(case.time_limit),
        "--memory-limit",
        str(case.memory_mb),
        "--output-limit",
        str(case.output_limit),
        "--workers",
        "1",
        "--require-full-confinement",
    ]
    if case.wall_limit:
        cmd += ["--wall-limit", str(case.wall_limit)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rows) == len(case.steps)
    problems = []
    for i, (step, row) in enumerate(zip(case.steps, rows, strict=True)):
        try:
            _check_step(
                case,
                i,
                step,
                host,
                row["verdict"],
                row["stdout"],
                row.get("error"),
                row.get("stderr", ""),
            )
        except AssertionError as exc:
            problems.append(str(exc))
    host.caught_up()
    hits = {
        k: v - hits_before.get(k, 0) for k, v in host.hits.items() if v != hits_before.get(k, 0)
    }
    if hits:
        problems.append(f"host Unix sockets reached: {hits}")
    after = _sysvipc()
    new = {k: sorted(after[k] - ipc_before[k]) for k in after if after[k] - ipc_before[k]}
    if new:
        problems.append(f"SysV IPC objects created: {new}")
        host.remove_ipc(new)
    damage = host.damaged_plants()
    if damage:
        problems += damage
        host.restore_plants()
    assert not problems, "\n".join(problems)


# ----------------------------------------------------------------------------- H: marker package

# The pools run in a separate evaluator process: the host's sys.path gets the package's
# parent (so that importlib.util.find_spec finds it), and whatever the import leaves
# behind (pipes held open by a spawned process, say) cannot disturb this one.
MARKER_EVALUATOR = r"""
import asyncio, importlib.util, json, sys
gen, allowed, uid_base, programs = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
sys.path.insert(0, gen)
assert importlib.util.find_spec("pb_marker_pkg") is not None
from pairbench_async import Limits, Program, SandboxConfig, SandboxPool, Test

async def main():
    out = {}
    config = SandboxConfig(workers=1, uid_base=uid_base, allowed_packages=tuple(allowed))
    async with SandboxPool(config) as pool:
        for name, src in programs.items():
            res = await asyncio.wait_for(pool.run(Program(source=src), [Test(id="1", input="\n", output="ok\n")],
                                                  Limits(time_limit=2)), timeout=40)
            out[name] = [res[0].verdict.value, res[0].stdout, res[0].error]
    print(json.dumps(out), flush=True)

asyncio.run(main())
"""


@pytest.fixture(scope="module")
def marker_package(host: Host) -> Path:
    """pb_marker_pkg, generated next to this file with the host paths baked in."""
    tag = f"pb-r2-spawned-{host.token}"
    gen = DATA / f"_gen_{host.token}"
    pkg = gen / MARKER_PACKAGE
    pkg.mkdir(parents=True)
    for d in (DATA, gen, pkg):
        d.chmod(0o755)
    markers = [*map(str, host.markers), str(pkg / "marker")]
    (pkg / "__init__.py").write_text(
        MARKER_INIT.replace("@MARKERS@", repr(markers)).replace("@TAG@", repr(tag))
    )
    (pkg / "__init__.py").chmod(0o644)
    yield pkg
    shutil.rmtree(gen, ignore_errors=True)


@pytest.mark.parametrize("allowed", [False, True], ids=["not_allowed", "allowed"])
def test_preimport_marker_package(
    marker_package: Path, host: Host, allowed: bool, tmp_path: Path
) -> None:
    """Dead-branch imports of a package whose import writes markers, prints and spawns:
    AC with the exact output, and no trace on the host, whether the package is allowed
    (pre-imported, confined) or not (never imported)."""
    tag = f"pb-r2-spawned-{host.token}"
    script = tmp_path / "marker_evaluator.py"
    script.write_text(MARKER_EVALUATOR)
    since = time.time()
    packages = [MARKER_PACKAGE] if allowed else ["numpy"]
    proc = subprocess.Popen(
        [
            sys.executable,
            str(script),
            str(marker_package.parent),
            json.dumps(packages),
            str(UID_BASE + 32),
            json.dumps(MARKER_PROGRAMS),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    problems = []
    try:
        results = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        results = {}
        problems.append(f"the evaluator failed: rc={proc.returncode} {stderr[-1500:]}")
    for name, (verdict, out, error) in results.items():
        if verdict != "AC" or out != "ok\n":
            problems.append(f"{name}: {verdict} stdout={out!r} error={error!r}")
    # the evaluator has exited: its pool's processes go at once (the same 0.5 s bound as
    # ever, without its wait); a marker or an escaped process would exist already
    soon(lambda: not _mine({proc.pid}, since), within=0.5)
    problems += [f"marker {m}" for m in [*host.markers, marker_package / "marker"] if m.exists()]
    spawned = []
    for p in psutil.process_iter(["cmdline", "create_time", "uids"]):
        with contextlib.suppress(psutil.Error):
            if p.info["create_time"] >= since - 2 and tag in (p.info["cmdline"] or []):
                spawned.append(p)
                problems.append(f"spawned process {p.pid} (uid {p.info['uids'].real}) survives")
    left = _mine({proc.pid}, since)
    problems += [f"sandbox process survives: {x}" for x in left]
    # Clean up what the import left (processes this test started, by pid; markers).
    for p in spawned:
        with contextlib.suppress(psutil.Error):
            p.kill()
    for line in left:
        with contextlib.suppress(psutil.Error, ValueError):
            psutil.Process(int(line.split()[1])).kill()
    for m in [*host.markers, marker_package / "marker"]:
        with contextlib.suppress(OSError):
            m.unlink()
    assert not problems, "\n".join(problems)


# ----------------------------------------------------------------------------- X: beyond the spec


class _PeakRSS:
    """Peak resident size of this process's sandbox descendants (the worker, its
    zygote and test children: every one carries the worker's configuration, with its
    ``"pool_pid"``, in its command line), sampled every 20 ms.

    A child between fork and exec is a copy of this test process (hundreds of MB
    late in a full pytest session) and is not a sandbox process: it is left out.
    """

    def __init__(self) -> None:
        self.peak = 0
        self.who = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            for p in me.children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    if not any('"pool_pid": ' in arg for arg in p.cmdline()):
                        continue
                    rss = p.memory_info().rss
                    if rss > self.peak:
                        self.peak, self.who = rss, f"pid {p.pid} uid {p.uids().real}"
            time.sleep(0.02)

    def __enter__(self) -> _PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(2)


def test_beyond_spec_compile_bomb() -> None:
    """A 0.9 MB source (one list literal of 450,000 items, just under the 1 MiB source
    limit) costs hundreds of MB to compile. The zygote compiles it on the program's
    behalf: that memory must count against the job's 64 MB limit, not come free."""
    n = 450_000
    src = "x = [" + "1," * n + "]\nprint(len(x))\n"

    async def run() -> TestResult:
        async with SandboxPool(SandboxConfig(workers=1, uid_base=UID_BASE + 40)) as pool:
            res = await asyncio.wait_for(
                pool.run(
                    Program(source=src),
                    [Test(id="1", input="\n", output=f"{n}\n")],
                    Limits(time_limit=2, memory_limit_mb=64),
                ),
                timeout=60,
            )
            return res[0]

    with _PeakRSS() as rss:
        result = asyncio.run(run())
    assert result.verdict is not Verdict.SF, result
    assert rss.peak < 320 << 20, (
        f"a sandbox process reached {rss.peak >> 20} MB ({rss.who}) under a 64 MB "
        f"limit; verdict {result.verdict.value} {result.error}"
    )


def test_beyond_spec_forged_deep_report() -> None:
    """A call program writes its own report on fd 3 (a value nested 100,000 deep) and
    _exits before the real one: the evaluator must answer (not AC, not SF) and go on
    serving. The report is the program's to corrupt, never the pool's to crash on."""
    depth = 100_000
    sources = {
        "lists": f"import os\ndef f():\n    os.write(3, b'{{\"value\": ' + b'[' * {depth} + b']' * {depth} + b'}}')\n    os._exit(0)\n",
        "dicts": f"import os\ndef f():\n    os.write(3, b'{{\"value\": ' + b'{{\"a\": ' * {depth} + b'1' + b'}}' * {depth} + b'}}')\n    os._exit(0)\n",
        "lines": f"import os\ndef f():\n    os.write(3, b'{{\"value\": 1, \"lines\": [' + b'[' * {depth} + b']' * {depth} + b']}}')\n    os._exit(0)\n",
    }

    async def run() -> dict[str, str]:
        out = {}
        async with SandboxPool(SandboxConfig(workers=1, uid_base=UID_BASE + 44)) as pool:
            for name, src in sources.items():
                try:
                    res = await asyncio.wait_for(
                        pool.run(
                            Program(source=src, kind="call", entry_point="f"),
                            [Test(id="1", args=[], expected=[[1]])],
                            trace=name == "lines",
                        ),
                        timeout=10,
                    )
                    out[name] = res[0].verdict.value
                except TimeoutError:
                    out[name] = "no answer in 10 s"
                    return out  # the pool is stuck: the rest would only wait too
            try:
                sanity = await asyncio.wait_for(pool.run(SANITY, SANITY_TESTS), timeout=10)
                out["sanity"] = sanity[0].verdict.value
            except TimeoutError:
                out["sanity"] = "no answer in 10 s"
        return out

    out = asyncio.run(asyncio.wait_for(run(), timeout=60))
    bad = {
        k: v
        for k, v in out.items()
        if (k == "sanity" and v != "AC")
        or (k != "sanity" and v in ("AC", "SF"))
        or v.startswith("no answer")
    }
    assert not bad, out
