"""Kill a real sweep with SIGKILL several times, resume it, and get the same numbers.

The uninterrupted run and the killed-and-resumed run use the same seed and the
deterministic offline models; their leaderboards must be equal and the resumed log
must hold no duplicated (episode, turn) record.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ARGS = ["--limit", "10", "--candidate", "sim:0.5", "sim:0.9", "--turns", "4", "--concurrency", "6",
        "--no-progress", "--seed", "7"]


def cli(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "pairbench_async", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def report(out: Path, env: dict[str, str]) -> dict[str, object]:
    p = subprocess.run([sys.executable, "-m", "pairbench_async", "report", str(out), "--json"],
                       capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_sigkill_then_resume_gives_identical_metrics(tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    whole = tmp_path / "whole"
    p = cli(*ARGS, "--out", str(whole), env=env)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]
    total = lines(whole / "records.jsonl")

    killed = tmp_path / "killed"
    kills = 0
    for k, threshold in enumerate((total // 6, total // 3, total // 2, (3 * total) // 4)):
        args = [*ARGS, "--out", str(killed)] + (["--resume"] if k else [])
        p = cli(*args, env=env)
        deadline = time.monotonic() + 300
        while lines(killed / "records.jsonl") < threshold and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
            kills += 1
        p.communicate(timeout=60)
    assert kills >= 3, "the sweep finished before it could be killed"
    p = cli(*ARGS, "--out", str(killed), "--resume", env=env)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]

    rows = [json.loads(x) for x in (killed / "records.jsonl").read_text().splitlines()]
    keys = Counter((r["episode_id"], r.get("turn", "end")) for r in rows)
    assert max(keys.values()) == 1, [k for k, v in keys.items() if v > 1][:5]
    assert report(killed, env) == report(whole, env)
