"""Run folders that survive what happens around a run (issue 25, part A), each case through
the real command line in a subprocess: one writer per folder (a lock), resume from the
manifest alone, ``--retry-errors`` after an outage, write faults named (a full tmpfs and a
read-only one), names for models and their recorded endpoints, a status from the first
second, and ``-q`` / ``-vv``."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.fault_server import FaultServer

ROOT = Path(__file__).resolve().parents[2]
PY = [sys.executable, "-m", "pairbench_async"]


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PY, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, **(env or {})})


def start(*args: str, log: Path) -> subprocess.Popen[str]:
    """The CLI in the background, its stdout and stderr in ``log`` (no pipe to fill or leak)."""
    with log.open("w") as f:
        return subprocess.Popen([*PY, *args], stdout=f, stderr=subprocess.STDOUT, text=True, cwd=ROOT)


async def acli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *PY, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
        env={**os.environ, **(env or {})})
    out, err = await asyncio.wait_for(proc.communicate(), 300)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]


def metrics(folder: Path) -> dict:
    proc = cli("report", str(folder), "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["models"]


def wait_for(predicate, timeout: float = 120.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def lock_holder(folder: Path) -> dict:
    try:
        return json.loads((folder / ".lock").read_text() or "{}")
    except (OSError, ValueError):
        return {}


def episodes_done(folder: Path) -> int:
    try:
        return sum(1 for r in records(folder) if r["kind"] == "episode")
    except (OSError, ValueError):
        return 0


# ------------------------------------------------------------------ 1. one writer per folder


@pytest.mark.timeout(600)
def test_a_second_writer_is_refused_the_folder_reads_meanwhile_and_a_killed_holder_frees_it(tmp_path: Path) -> None:
    out = tmp_path / "run"
    slow = ["run", "--no-progress", "--candidate", "sim:0.8?latency=0.3", "--limit", "3", "--turns", "3",
            "--concurrency", "2", "--out", str(out)]
    first = start(*slow, log=tmp_path / "first.log")
    try:
        wait_for(lambda: lock_holder(out).get("pid") == first.pid, what="the first run's lock")
        t0 = time.monotonic()
        second = cli("run", "--no-progress", "--resume", "--out", str(out))
        assert second.returncode == 6, second.stderr
        assert time.monotonic() - t0 < 30  # refused at once, not after the first run
        assert f"pid {first.pid}" in second.stderr and "is being written by" in second.stderr
        assert "Traceback" not in second.stderr
        # a reader needs no lock: report while the run writes (at least one episode finished)
        wait_for(lambda: episodes_done(out) >= 1, what="a finished episode")
        during = cli("report", str(out))
        assert during.returncode == 0, during.stderr
        assert first.wait(300) == 0, (tmp_path / "first.log").read_text()
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    kinds = [r["kind"] for r in records(out)]
    assert kinds.count("episode") == 3  # the refused writer wrote nothing
    after = cli("report", str(out))
    assert after.returncode == 0 and "unfinished" in after.stdout and "sim:0.8" in after.stdout

    # SIGKILL the holder: the kernel releases the lock and the next run gets it
    killed = tmp_path / "killed"
    holder = start(*[a if a != str(out) else str(killed) for a in slow], log=tmp_path / "holder.log")
    try:
        wait_for(lambda: lock_holder(killed).get("pid") == holder.pid, what="the holder's lock")
        wait_for(lambda: (killed / "records.jsonl").is_file() and (killed / "records.jsonl").stat().st_size > 0,
                 what="a record")
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(60)
    finally:
        if holder.poll() is None:
            holder.kill()
    resumed = cli("run", "--no-progress", "--resume", "--out", str(killed))
    assert resumed.returncode == 0, resumed.stderr
    assert metrics(killed) == metrics(out)  # and it finished the run as an uninterrupted one


def test_a_sweep_folder_is_locked_as_a_whole(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    first = start("run", "--no-progress", "--candidate", "sim:0.8?latency=0.3", "--limit", "2", "--turns", "2",
                  "--sweep", "scenario-turns=2,3", "--out", str(out), log=tmp_path / "first.log")
    try:
        wait_for(lambda: lock_holder(out).get("pid") == first.pid, what="the sweep's lock")
        second = cli("run", "--no-progress", "--resume", "--out", str(out))
        assert second.returncode == 6 and f"pid {first.pid}" in second.stderr, second.stderr
        assert first.wait(300) == 0
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()


# ------------------------------------------------------------------ 2. resume from the manifest alone


def _cut(folder: Path, keep: int) -> None:
    """What a crash leaves: the first ``keep`` records and a torn line."""
    lines = (folder / "records.jsonl").read_text().splitlines(keepends=True)
    (folder / "records.jsonl").write_text("".join(lines[:keep]) + lines[keep][:40])


@pytest.mark.timeout(600)
def test_resume_from_the_manifest_alone_continues_with_the_recorded_parameters(tmp_path: Path) -> None:
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    dataset = ROOT / "fixtures" / "stdio.jsonl"
    params = ["--dataset", str(dataset), "--candidate", "sim:0.3", "fixer=sim:0.8", "--protocol", "pair", "nohint",
              "--turns", "3", "--scenario-turns", "2", "--seed", "7", "--runs", "2", "--limit", "2",
              "--prompt-style", "cot"]
    done = cli("run", "--no-progress", *params, "--out", str(whole))
    assert done.returncode == 0, done.stderr
    shutil.copytree(whole, cut)
    _cut(cut, 9)
    # every parameter differs from a default: a bare --resume must take them all from the manifest
    resumed = cli("run", "--no-progress", "--resume", "--out", str(cut))
    assert resumed.returncode == 0, resumed.stderr
    assert metrics(cut) == metrics(whole)
    # an argument given must agree; the refusal names it, as the command spells it
    wrong = cli("run", "--no-progress", "--resume", "--out", str(cut), "--turns", "4", "--candidate", "sim:0.3")
    assert wrong.returncode == 2
    assert "--turns: the run has 3, this command gives 4" in wrong.stderr
    assert "--candidate: the run has sim:0.3 fixer=sim:0.8, this command gives sim:0.3" in wrong.stderr
    agreeing = cli("run", "--no-progress", "--resume", "--out", str(cut), "--turns", "3", "--seed", "7")
    assert agreeing.returncode == 0, agreeing.stderr


@pytest.mark.timeout(600)
def test_resume_of_a_sweep_folder_from_its_manifests_alone(tmp_path: Path) -> None:
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    params = ["--candidate", "sim:0.8", "--limit", "2", "--turns", "2", "--sweep", "representatives=1,2",
              "scenario-turns=2,3"]
    assert cli("run", "--no-progress", *params, "--out", str(whole)).returncode == 0
    shutil.copytree(whole, cut)
    _cut(cut / "representatives=1_scenario-turns=3", 2)
    for never_begun in ("representatives=2_scenario-turns=2", "representatives=2_scenario-turns=3"):
        shutil.rmtree(cut / never_begun)  # the grid's last value is in no manifest's setting
    resumed = cli("run", "--no-progress", "--resume", "--out", str(cut))
    assert resumed.returncode == 0, resumed.stderr
    assert metrics(cut) == metrics(whole)
    wrong = cli("run", "--no-progress", "--resume", "--out", str(cut), "--sweep", "scenario-turns=2,3")
    assert wrong.returncode == 2 and "--sweep: the run has" in wrong.stderr


# ------------------------------------------------------------------ 3. --retry-errors after an outage


@pytest.mark.timeout(600)
async def test_retry_errors_after_an_outage_supersedes_the_errored_attempts(tmp_path: Path) -> None:
    server = FaultServer()
    await server.start()
    try:
        config = tmp_path / "models.toml"
        config.write_text("[defaults]\nmax_retries = 0\nbackoff_base = 0.01\n")
        out = tmp_path / "run"
        # the first 2 requests fail (one per episode, no retry): an outage that then ends
        spec = f"openai:coder@{server.base_url('503,k=2')}"
        code, _, err = await acli("run", "--no-progress", "--candidate", spec, "--protocol", "nohint",
                                  "--limit", "2", "--turns", "2", "--config", str(config), "--out", str(out))
        assert code == 1 and "2 episode(s) ended in error" in err, err
        # --resume alone keeps the errors, and says how to run them again
        code, stdout, err = await acli("run", "--no-progress", "--resume", "--out", str(out))
        assert code == 1
        assert "0 episodes (2 already done" in stdout and "--retry-errors" in err
        code, stdout, err = await acli("run", "--no-progress", "--resume", "--retry-errors", "--out", str(out))
        assert code == 0, err
        assert "2 errored episodes run again" in stdout
        written = records(out)
        episodes = [r for r in written if r["kind"] == "episode"]
        # append-only: the errored attempts stay in the file, the new ones supersede them
        assert [(r["status"], r.get("attempt", 0)) for r in episodes] == [("error", 0)] * 2 + [("done", 1)] * 2
        assert all(r["attempt"] == 1 for r in written if r["kind"] == "turn")
        code, stdout, err = await acli("report", str(out), "--json")
        assert code == 0, err
        report = json.loads(stdout)
        assert len(report["models"]) == 1 and report["models"][next(iter(report["models"]))]["FinalFix"] is not None
        code, _, err = await acli("export", str(out), "--format", "jsonl")
        assert code == 0, err
        exported = [json.loads(x) for x in (out / "export" / "episodes.jsonl").read_text().splitlines()]
        assert len(exported) == 2
        # nothing is left to retry
        code, stdout, _ = await acli("run", "--no-progress", "--resume", "--retry-errors", "--out", str(out))
        assert code == 0 and "0 episodes (2 already done" in stdout
    finally:
        await server.stop()


# ------------------------------------------------------------------ 4. write faults named


def _root() -> bool:
    return os.geteuid() == 0 and shutil.which("unshare") is not None and \
        subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


def _in_namespace(script: str, tmp_path: Path) -> None:
    """Run ``script`` (sh) in a mount namespace of its own: its mounts vanish with it."""
    env = {**os.environ, "PY": sys.executable, "T": str(tmp_path)}
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], capture_output=True,
                          text=True, timeout=600, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.timeout(900)
@pytest.mark.skipif(not _root(), reason="a tmpfs needs root (and unshare -m) to be mounted")
def test_a_full_disk_is_named_with_the_resume_command_and_nothing_is_lost(tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    assert cli("run", "--no-progress", "--candidate", "sim:0.8", "--limit", "6", "--out", str(whole)).returncode == 0
    disk = tmp_path / "disk"
    disk.mkdir()
    _in_namespace(f"""
        set -u
        mount -t tmpfs -o size=64k tmpfs {disk}
        "$PY" -m pairbench_async run --no-progress --candidate sim:0.8 --limit 6 --out {disk}/run \
            > "$T/out1" 2> "$T/err1"; echo $? > "$T/rc1"
        cp -a {disk}/run "$T/at-full"
        mount -o remount,size=64m {disk}
        "$PY" -m pairbench_async run --no-progress --resume --out {disk}/run > "$T/out2" 2> "$T/err2"; echo $? > "$T/rc2"
        cp -a {disk}/run "$T/resumed"
    """, tmp_path)
    err = (tmp_path / "err1").read_text()
    assert (tmp_path / "rc1").read_text().strip() == "5", err
    assert "No space left on device (ENOSPC)" in err
    assert f"pairbench run --resume --out {disk}/run" in err
    assert "Traceback" not in err and "ExceptionGroup" not in err and "BufferError" not in err
    lines = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(lines) == 1
    # what was written is valid (a torn last line at most) and reportable as it stands
    assert cli("report", str(tmp_path / "at-full")).returncode == 0
    assert (tmp_path / "rc2").read_text().strip() == "0", (tmp_path / "err2").read_text()
    assert metrics(tmp_path / "resumed") == metrics(whole)


@pytest.mark.timeout(600)
@pytest.mark.skipif(not _root(), reason="a read-only mount needs root (and unshare -m); see the chmod case")
def test_a_read_only_folder_is_named_without_a_traceback(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert cli("run", "--no-progress", "--candidate", "sim:0.8", "--limit", "1", "--turns", "1",
               "--out", str(run)).returncode == 0
    _cut(run, 1)
    ro = tmp_path / "ro"
    ro.mkdir()
    _in_namespace(f"""
        mount -t tmpfs -o ro,size=1m tmpfs {ro}
        "$PY" -m pairbench_async run --no-progress --limit 1 --out {ro}/new > "$T/out1" 2> "$T/err1"; echo $? > "$T/rc1"
        mount --bind {run} {run} && mount -o remount,bind,ro {run}
        "$PY" -m pairbench_async run --no-progress --resume --out {run} > "$T/out2" 2> "$T/err2"; echo $? > "$T/rc2"
    """, tmp_path)
    new_err = (tmp_path / "err1").read_text()
    assert (tmp_path / "rc1").read_text().strip() == "5", new_err
    assert "Read-only file system (EROFS)" in new_err and "nothing was recorded" in new_err
    assert "Traceback" not in new_err
    err = (tmp_path / "err2").read_text()
    assert (tmp_path / "rc2").read_text().strip() == "5", err
    assert "Read-only file system (EROFS)" in err and f"pairbench run --resume --out {run}" in err
    assert "Traceback" not in err
    resumed = cli("run", "--no-progress", "--resume", "--out", str(run))  # writable again
    assert resumed.returncode == 0, resumed.stderr


def test_a_folder_without_write_permission_is_named(tmp_path: Path) -> None:
    """EACCES. Root ignores file permissions, so as root the command runs without the two
    capabilities that let it (``setpriv``: no CAP_DAC_OVERRIDE, no CAP_DAC_READ_SEARCH)."""
    import shutil

    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "setpriv (util-linux) is needed to drop root's file-permission override"
        prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search",
                  "--inh-caps", "-dac_override,-dac_read_search"]
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        proc = subprocess.run([*prefix, *PY, "run", "--no-progress", "--limit", "1", "--out", str(locked / "run")],
                              capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert proc.returncode == 5 and "Permission denied (EACCES)" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr and "choose a writable --out" in proc.stderr
    finally:
        locked.chmod(0o755)


# ------------------------------------------------------------------ 5. names for models, endpoints


@pytest.mark.timeout(600)
async def test_named_models_and_a_moved_endpoint(tmp_path: Path) -> None:
    server = FaultServer()
    await server.start()
    try:
        out = tmp_path / "run"
        code, stdout, err = await acli(
            "run", "--no-progress", "--candidate", "fast=sim:0.8?latency=0.01", "openai:coder", "--protocol",
            "nohint", "--limit", "2", "--turns", "1", "--out", str(out),
            env={"OPENAI_BASE_URL": server.base_url("ok"), "OPENAI_API_KEY": "k"})
        assert code == 0, err
        rows = [line.split()[0] for line in stdout.splitlines()[2:4]]
        assert rows == ["fast", "openai:coder"]  # a spec without a name keeps its name
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["candidates"] == ["fast", "openai:coder"]
        assert manifest["specs"] == {"fast": "sim:0.8?latency=0.01"}
        assert manifest["endpoints"] == {"openai:coder": server.base_url("ok").rstrip("/")}
        ids = {r["episode_id"] for r in records(out) if r["model"] == "fast"}
        assert ids and all(i.startswith("nohint/fast/r0/") and "?" not in i for i in ids)
        _cut(out, 1)
        moved = {"OPENAI_BASE_URL": server.base_url("ok,delay=0"), "OPENAI_API_KEY": "k"}
        code, _, err = await acli("run", "--no-progress", "--resume", "--out", str(out), env=moved)
        assert code == 2 and "endpoint moved" in err and "--allow-endpoint-change" in err, err
        code, _, err = await acli("run", "--no-progress", "--resume", "--allow-endpoint-change", "--out", str(out),
                                  env=moved)
        assert code == 0, err
        assert json.loads((out / "manifest.json").read_text())["endpoints"]["openai:coder"].endswith("delay=0/v1")
    finally:
        await server.stop()


# ------------------------------------------------------------------ 6. a status from the first second; -q, -vv


@pytest.mark.timeout(300)
def test_the_status_shows_calls_in_flight_before_any_turn_ends(tmp_path: Path) -> None:
    log = tmp_path / "log"
    proc = start("run", "--candidate", "sim:0.8?latency=20", "--limit", "2", "--out", str(tmp_path / "r"), log=log)
    try:
        wait_for(lambda: "status:" in log.read_text(), timeout=60, what="a status line")
        line = next(x for x in log.read_text().splitlines() if x.startswith("status:"))
        assert line.startswith("status: episodes 0/2  calls in flight 2  retries 0"), line
        assert not (tmp_path / "r" / "records.jsonl").read_text()  # no turn has ended yet
    finally:
        proc.kill()
        proc.wait()


def test_quiet_prints_the_result_and_very_verbose_the_calls(tmp_path: Path) -> None:
    quiet = cli("run", "-q", "--limit", "1", "--candidate", "sim:0.8", "--out", str(tmp_path / "q"))
    assert quiet.returncode == 0
    assert "InitialFix" in quiet.stdout and "legend" not in quiet.stdout and "episodes (" not in quiet.stdout
    assert quiet.stderr == ""
    v = cli("run", "-v", "--no-progress", "--limit", "1", "--turns", "1", "--candidate", "sim:0.8",
            "--out", str(tmp_path / "v"))
    vv = cli("run", "-vv", "--no-progress", "--limit", "1", "--turns", "1", "--candidate", "sim:0.8",
             "--out", str(tmp_path / "vv"))
    assert v.returncode == vv.returncode == 0
    assert "call sim:0.8" not in v.stderr
    assert "DEBUG pairbench_async.runner.calls: call sim:0.8" in vv.stderr and "answered after" in vv.stderr


# ------------------------------------------------------------------ 7. the smaller items


def test_a_column_where_every_row_ties_has_no_star(tmp_path: Path) -> None:
    proc = cli("run", "--no-progress", "--limit", "2", "--turns", "2", "--candidate", "sim:0.8", "weak=sim:0.3",
               "--out", str(tmp_path / "r"))
    assert proc.returncode == 0
    header, _, *rows = proc.stdout.splitlines()[:4]
    columns = header.split()
    cells = [row.split() for row in rows]
    for k, name in enumerate(columns[1:], start=1):
        values = [c[k] for c in cells]
        if len({v.rstrip("*") for v in values}) == 1:
            assert not any(v.endswith("*") for v in values), (name, values)
        else:
            assert any(v.endswith("*") for v in values), (name, values)


def test_offline_models_are_free_and_export_defaults_to_what_is_installed(tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert cli("run", "--no-progress", "--limit", "1", "--turns", "1", "--candidate", "sim:0.8",
               "--out", str(out)).returncode == 0
    prices = tmp_path / "prices.toml"
    prices.write_text("[defaults]\nprompt_price_per_million = 1.0\ncompletion_price_per_million = 2.0\n")
    report = cli("report", str(out), "--config", str(prices))
    assert report.returncode == 0 and "partial" not in report.stdout and "no price" not in report.stdout
    export = cli("export", str(out))
    assert export.returncode == 0, export.stderr
    try:
        import pyarrow  # noqa: F401

        expect = "parquet"
    except ImportError:
        expect = "csv"
    assert f"format: {expect}" in export.stderr
    assert (out / "export" / f"metrics.{expect}").is_file()


# ------------------------------------------------------------------ 8. references checked; errored runs reported


def test_an_instance_whose_reference_fails_is_named_and_left_out(tmp_path: Path) -> None:
    lines = (ROOT / "fixtures" / "stdio.jsonl").read_text().splitlines()[:3]
    broken = json.loads(lines[1])
    broken["reference"] = "print('not the answer')\n"
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join([lines[0], json.dumps(broken), lines[2]]) + "\n")
    out = tmp_path / "r"
    proc = cli("run", "--no-progress", "--dataset", str(data), "--candidate", "sim:0.8", "--turns", "2",
               "--out", str(out), env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    assert f"skipped: {broken['id']}: its reference fails" in proc.stderr
    assert {r["instance_id"] for r in records(out)} == {json.loads(lines[0])["id"], json.loads(lines[2])["id"]}
    assert list((tmp_path / "cache" / "pairbench_async" / "references").glob("*.json"))  # cached by dataset hash
    _cut(out, 2)
    resumed = cli("run", "--no-progress", "--resume", "--out", str(out), env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert resumed.returncode == 0, resumed.stderr  # the same instances: the manifest's hash agrees
    only_broken = tmp_path / "b.jsonl"
    only_broken.write_text(json.dumps(broken) + "\n")
    refused = cli("run", "--no-progress", "--dataset", str(only_broken), "--out", str(tmp_path / "none"))
    assert refused.returncode == 2 and "every reference fails" in refused.stderr


def test_an_all_errored_run_is_reported_and_an_errored_model_keeps_its_row(tmp_path: Path) -> None:
    config = tmp_path / "m.toml"
    config.write_text("[defaults]\nmax_retries = 0\nbackoff_base = 0.01\n")
    dead = "dead=openai:x@http://127.0.0.1:9/v1"
    out = tmp_path / "all"
    run = cli("run", "--no-progress", "--candidate", dead, "--limit", "2", "--turns", "1", "--config", str(config),
              "--out", str(out))
    assert run.returncode == 1
    text = cli("report", str(out))
    assert text.returncode == 0, text.stderr
    assert "2 episode(s) ended in error, by cause:" in text.stdout
    assert any(line.startswith("dead ") for line in text.stdout.splitlines())
    data = json.loads(cli("report", str(out), "--json").stdout)
    assert data["errors"] == {"dead": 2} and data["models"] == {} and data["error_causes"][0]["count"] == 2
    mixed = tmp_path / "mixed"
    cli("run", "--no-progress", "--candidate", dead, "sim:0.8", "--limit", "2", "--turns", "1",
        "--config", str(config), "--out", str(mixed))
    report = cli("report", str(mixed))
    rows = [line.split()[0] for line in report.stdout.splitlines()[2:4]]
    assert rows == ["dead", "sim:0.8"] and "errored episodes: dead 2" in report.stdout


def test_a_named_model_finds_its_table_by_name_and_an_offline_one_is_free_by_its_spec(tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert cli("run", "--no-progress", "--candidate", "fast=sim:0.8", "--feedback", "fb=rules", "--limit", "1",
               "--turns", "1", "--out", str(out)).returncode == 0
    prices = tmp_path / "p.toml"
    prices.write_text('[models.fast]\nprompt_price_per_million = 1000.0\ncompletion_price_per_million = 1000.0\n')
    data = json.loads(cli("report", str(out), "--json", "--config", str(prices)).stdout)
    by_role = {row["role"]: row["cost"] for row in data["tokens"]}
    assert by_role["candidate"] > 0  # [models.fast] prices the model named fast
    assert by_role["feedback"] == 0.0  # fb is rules: offline, free
