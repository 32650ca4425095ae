"""The hostile battery, run twice: through one shared pool (which must keep serving
after every attack) and through the ``exec`` command, as a user would run it.

Each case asserts its verdict, and the host is checked after the whole battery:
no file written outside the scratch directory, the evaluator's files intact, no
connection reached a listening socket on 127.0.0.1, no process of a sandbox uid
survives, no zombie is left and the scratch directories are gone.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import psutil
import pytest

from pairbench_async.core.types import Limits, Program, Test, Verdict
from pairbench_async.sandbox import host as host_module
from pairbench_async.sandbox.pool import SandboxConfig, SandboxPool

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from hostile import CASES, ORDINARY, Case  # noqa: E402

WORKER = Path(importlib.import_module("pairbench_async.sandbox.worker").__file__ or "")
IS_ROOT = os.getuid() == 0
SANITY = Program(source="print(int(input()) * 2)\n")
SANITY_TESTS = [Test(id="s1", input="21\n", output="42\n")]


# What the worker's minimal root holds: the read allowlist and the device files (and
# the directories on the way to them); every other host path is absent there.
_WORKER_MODULE = importlib.import_module("pairbench_async.sandbox.worker")
IN_ROOT = tuple(os.path.realpath(p) for p in
                [*host_module.host_paths(SandboxConfig().allowed_packages)[0],
                 *_WORKER_MODULE.DEVICES])


def hidden(path: Path | str) -> bool:
    """Whether ``path`` is absent from the sandbox's minimal root (FileNotFoundError)."""
    real = os.path.realpath(path)
    return not any(real == r or real.startswith(r + "/") or r.startswith(real + "/")
                   for r in IN_ROOT)


def _visible_dir() -> Path:
    """A host directory outside the trees the sandbox hides (read-only there)."""
    candidates = [Path("/var/lib")] if IS_ROOT else []
    candidates.append(HERE)
    for base in candidates:
        if not hidden(base) and os.access(base, os.W_OK):
            return Path(tempfile.mkdtemp(prefix=".pairbench-hostile-", dir=base))
    return Path(tempfile.mkdtemp(prefix="pairbench-hostile-"))


class Host:
    """Real paths and a listening socket the hostile programs aim at."""

    def __init__(self, tmp: Path) -> None:
        # world-readable and world-writable, so that only the sandbox stands in the way
        self.visible = _visible_dir()
        self.visible.chmod(0o777)
        self.secret = self.visible / "dataset-secret.jsonl"
        self.secret.write_text("PAIRBENCH_SECRET hidden tests\n")
        self.secret.chmod(0o644)
        self.outside = self.visible / "pwned.txt"
        self.tmp_secret = tmp / "dataset-secret.jsonl"
        self.tmp_secret.write_text("PAIRBENCH_SECRET hidden tests\n")
        self.tmp_outside = tmp / "pwned.txt"
        self.worker_hash = hashlib.sha256(WORKER.read_bytes()).hexdigest()
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.udp.settimeout(0.2)
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
                self.connections += 1
                conn.close()
            except OSError:
                pass
            try:
                self.udp.recv(64)
                self.connections += 1
            except OSError:
                pass

    def close(self) -> None:
        shutil.rmtree(self.visible, ignore_errors=True)
        self._stop.set()
        self._thread.join(2)
        self.listener.close()
        self.udp.close()

    def check(self) -> None:
        assert not self.outside.exists(), "a program wrote outside its scratch directory"
        assert not self.tmp_outside.exists(), "a program wrote outside its scratch directory"
        assert not Path("/tmp/shell_out").exists(), "a program shelled out"
        assert hashlib.sha256(WORKER.read_bytes()).hexdigest() == self.worker_hash
        assert self.connections == 0, "a program reached a socket on the host"


def _source(case: Case, host: Host) -> str:
    src = case.source
    for key, value in (("{secret!r}", repr(str(host.secret))), ("{outside!r}", repr(str(host.outside))),
                       ("{tmp_secret!r}", repr(str(host.tmp_secret))),
                       ("{tmp_outside!r}", repr(str(host.tmp_outside))),
                       ("{worker!r}", repr(str(WORKER))), ("{port}", str(host.port))):
        src = src.replace(key, value)
    return src


def _tests(case: Case) -> list[Test]:
    tests = [Test(id="1", input=case.input, output=case.output)]
    if case.name == "memory_search":
        tests.append(Test(id="2", input="OTHER-INPUT-CANARY\n", output="EXPECTED-CANARY-two\n"))
    if case.name == "scratch_write_read":  # the next test must find an empty scratch dir
        tests.append(Test(id="2", input="\n", output="hi [] ['note.txt']\n"))
    return tests


def _limits(case: Case) -> Limits:
    return Limits(time_limit=case.time_limit, memory_limit_mb=case.memory_mb, wall_limit=case.wall_limit,
                  output_limit=1 << 20)


# Cases aimed at a host path: a path under a hidden tree is simply not there
# (FileNotFoundError); a visible one is refused, by Landlock (reads, writes to an
# existing file: PermissionError) or by the read-only view (new files: EROFS, OSError).
PATH_CASES = {
    "read_etc_passwd": ("/etc/passwd", "PermissionError"),
    "list_tmp": ("/tmp", "PermissionError"),
    "raw_device": ("/dev/kmsg", "PermissionError"),
    "read_secret_file": ("secret", "PermissionError"),
    "write_outside": ("outside", "OSError"),
    "read_tmp_secret": ("tmp_secret", "PermissionError"),
    "write_tmp_outside": ("tmp_outside", "OSError"),
    "tamper_worker": ("worker", "PermissionError"),
}


def _expected_error(case: Case, host: Host) -> str | None:
    if case.name not in PATH_CASES:
        return case.error
    attr, visible_error = PATH_CASES[case.name]
    path = WORKER if attr == "worker" else attr if attr.startswith("/") else getattr(host, attr)
    return "FileNotFoundError" if hidden(path) else visible_error


def _assert_case(case: Case, verdict: str, stdout: str, error: str | None,
                 expected_error: str | None = None) -> None:
    assert verdict in case.verdicts, f"{case.name}: {verdict} ({error}) not in {set(case.verdicts)}; stdout={stdout[:300]!r}"
    expected_error = expected_error or case.error
    if expected_error is not None and verdict == "RE":
        assert error == expected_error, f"{case.name}: error {error!r} != {expected_error!r}"
    for s in case.stdout_has:
        assert s in stdout, f"{case.name}: {s!r} not in {stdout[:300]!r}"
    for s in case.stdout_lacks:
        assert s not in stdout, f"{case.name}: {s!r} found in {stdout[:300]!r}"


def _sandbox_processes() -> list[psutil.Process]:
    """Live processes of this test process's sandboxes, wherever they were reparented:
    workers, zygotes and test children all carry the worker script and its JSON
    configuration in their command line (children cannot exec), and that configuration
    names the scratch directory ``pairbench-sandbox-<pool pid>-...``. Pools of other
    processes on the machine (another test run, a developer's sweep) are not ours. A
    process with a sandbox uid (as root) whose command line names no pool at all (a
    child that rewrote its argv) counts as ours."""
    mine = f"{host_module.SCRATCH_PREFIX}{os.getpid()}-"
    out = []
    for p in psutil.process_iter(["uids", "cmdline"]):
        try:
            uids, cmdline = p.info["uids"], p.info["cmdline"] or []
            if any(host_module.SCRATCH_PREFIX in arg for arg in cmdline):
                if any(mine in arg for arg in cmdline):  # a pool's process: ours?
                    out.append(p)
            elif uids and uids.real >= host_module.UID_FLOOR:
                out.append(p)
        except psutil.Error:
            pass
    return out


ALL = [c for c in CASES + ORDINARY if IS_ROOT or "root" not in c.tags]


@pytest.fixture(scope="module")
def battery(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Run every case through one pool; after each, the pool must still serve."""
    tmp = tmp_path_factory.mktemp("hostile")
    host = Host(tmp)
    os.environ["OPENAI_API_KEY"] = "sk-canary-must-not-leak"
    os.environ["PAIRBENCH_SECRET"] = "PAIRBENCH_SECRET"

    async def run() -> dict[str, object]:
        out: dict[str, object] = {}
        async with SandboxPool(SandboxConfig(workers=2)) as pool:
            base = pool._base
            for case in ALL:
                results = await pool.run(Program(source=_source(case, host)), _tests(case), _limits(case))
                sanity = await pool.run(SANITY, SANITY_TESTS)
                out[case.name] = (results, sanity[0].verdict)
            out["__stats__"] = pool.statistics()
            out["__report__"] = pool.confinement()
        out["__base__"] = base
        return out

    try:
        results = asyncio.run(run())
    finally:
        os.environ.pop("OPENAI_API_KEY", None)
        os.environ.pop("PAIRBENCH_SECRET", None)
    results["__host__"] = host
    yield results
    host.close()


def test_full_confinement_is_on(battery: dict[str, object]) -> None:
    report = battery["__report__"]
    assert report["seccomp"] and report["landlock"] and report["netns"] and report["tmpfs"], report
    if IS_ROOT:
        assert report["setuid"]
    assert not report["threading"], "the worker must not import threading"


@pytest.mark.parametrize("case", ALL, ids=[c.name for c in ALL])
def test_case_through_pool(battery: dict[str, object], case: Case) -> None:
    results, sanity = battery[case.name]
    first = results[0]
    _assert_case(case, first.verdict.value, first.stdout, first.error,
                 _expected_error(case, battery["__host__"]))
    assert sanity is Verdict.AC, f"the pool stopped serving after {case.name}"
    if case.name == "scratch_write_read":
        assert results[1].verdict is Verdict.AC, f"scratch not emptied: {results[1].stdout!r}"
    if case.name == "memory_search":
        assert "found []" in results[1].stdout


def test_host_unharmed(battery: dict[str, object]) -> None:
    host = battery["__host__"]
    host.check()
    assert not _sandbox_processes(), "a sandboxed process survived"
    me = psutil.Process()
    zombies = [c for c in me.children(recursive=True) if c.status() == psutil.STATUS_ZOMBIE]
    assert not zombies
    assert not Path(battery["__base__"]).exists(), "scratch directories left behind"
    stats = battery["__stats__"]
    assert stats.worker_restarts == 0 and stats.sandbox_faults == 0, stats


def _exec(case: Case, host: Host, tmp: Path) -> list[dict[str, object]]:
    prog = tmp / f"{case.name}.py"
    prog.write_text(_source(case, host))
    tests = tmp / f"{case.name}.jsonl"
    tests.write_text("".join(json.dumps({"id": t.id, "input": t.input, "output": t.output}) + "\n"
                             for t in _tests(case)))
    cmd = [sys.executable, "-m", "pairbench_async", "exec", str(prog), "--tests", str(tests),
           "--time-limit", str(case.time_limit), "--memory-limit", str(case.memory_mb),
           "--output-limit", str(1 << 20), "--workers", "1", "--require-full-confinement"]
    if case.wall_limit:
        cmd += ["--wall-limit", str(case.wall_limit)]
    env = dict(os.environ, OPENAI_API_KEY="sk-canary-must-not-leak", PAIRBENCH_SECRET="PAIRBENCH_SECRET")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.fixture(scope="module")
def exec_host(tmp_path_factory: pytest.TempPathFactory) -> Host:
    host = Host(tmp_path_factory.mktemp("exec-host"))
    yield host
    host.check()
    host.close()


@pytest.mark.parametrize("case", ALL, ids=[c.name for c in ALL])
def test_case_through_exec_command(case: Case, exec_host: Host, tmp_path: Path) -> None:
    rows = _exec(case, exec_host, tmp_path)
    row = rows[0]
    _assert_case(case, row["verdict"], row["stdout"], row.get("error"), _expected_error(case, exec_host))
    exec_host.check()
