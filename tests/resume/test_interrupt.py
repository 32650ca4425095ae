"""SIGINT and SIGTERM stop a sweep cleanly: exit 130, a valid record file, and a resume finishes it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pairbench_async.runlog.records import EpisodeRecord
from pairbench_async.runlog.store import read_records


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_stops_cleanly_and_resume_completes(tmp_path: Path, sig: signal.Signals) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    out = tmp_path / "run"
    args = [sys.executable, "-m", "pairbench_async", "--limit", "8", "--turns", "3", "--out", str(out),
            "--no-progress", "--candidate", "sim:0.5?latency=0.05"]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    records = out / "records.jsonl"
    deadline = time.monotonic() + 120
    while (not records.exists() or records.read_bytes().count(b"\n") < 5) and time.monotonic() < deadline:
        time.sleep(0.01)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err[-2000:]
    assert "--resume" in err
    data = records.read_bytes()
    assert data.endswith(b"\n")
    before, valid = read_records(out)
    assert valid == len(data) and before
    done = subprocess.run([*args, "--resume"], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    after, _ = read_records(out)
    ends = [r for r in after if isinstance(r, EpisodeRecord)]
    assert len(ends) == 8 and all(e.status == "done" for e in ends)  # 8 instances x 1 candidate
